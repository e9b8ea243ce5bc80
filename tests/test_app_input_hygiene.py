"""The app's answer to the bad inputs of issue 12: st.error naming the upload, never a traceback or a server path."""
from __future__ import annotations

import json
import os
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.loading import DEMO_SCHEMA, DEMO_SLICE

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
TIMEOUT = 180


def _upload(slice_bytes: bytes, name: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key="load_source").set_value("Upload").run()
    at.file_uploader(key="load_files").set_value([(name, slice_bytes, "application/json")])
    at.file_uploader(key="load_schema_file").set_value(("schema.json", DEMO_SCHEMA.read_bytes(), "application/json"))
    at.run()
    at.button(key="load_upload_btn").click().run()
    return at


def _only_error(at: AppTest) -> str:
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1, [e.value for e in at.error]
    msg = at.error[0].value
    assert "Traceback" not in msg and str(REPO) not in msg and "/tmp" not in msg
    return msg


def test_deeply_nested_upload_is_an_error_not_a_traceback(db_url):
    msg = _only_error(_upload(b"[" * 200_000 + b"]" * 200_000 + b"\n", "deep.jsonl"))
    assert "deep.jsonl" in msg and "line 1" in msg and "nested" in msg


def test_act_slot_given_as_an_object_names_the_field(db_url):
    rec = json.loads(DEMO_SLICE.read_text().splitlines()[0])
    rec["agent_acts"] = [{"act": "REQUEST", "slot": {"name": "time"}}]
    msg = _only_error(_upload((json.dumps(rec) + "\n").encode(), "acts.jsonl"))
    assert "acts.jsonl" in msg and "line 1" in msg and "agent_acts\\[0\\].slot" in msg  # Markdown-escaped


def test_database_error_at_sign_in_is_an_error_without_sql(tmp_path, monkeypatch):
    from db import list_audits
    from sage_core.data.settings import get_settings

    from db import accounts

    path = tmp_path / "audit.db"
    list_audits(f"sqlite:///{path}")  # tables exist; the database then refuses writes, as a full disk does
    accounts.create_account("alice", "alices password", db=f"sqlite:///{path}")  # sign-in then writes the secret
    accounts.create_account("lea", "leas password", role="lead", db=f"sqlite:///{path}")  # no first-run form
    monkeypatch.setenv("SAGE_DATABASE_URL", f"sqlite:///file:{path}?mode=ro&uri=true")
    get_settings.cache_clear()
    try:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.session_state["sage_identity"] = None  # nobody signed in: this test signs in through the form
        at.switch_page("pages/2_Blind_annotation.py").run()
        at.text_input(key="auth_name").set_value("alice")
        at.text_input(key="auth_password").set_value("alices password")
        at.button(key="auth_sign_in").click().run()
        msg = _only_error(at)
        assert msg.startswith("Database error:") and "readonly" in msg and "INSERT" not in msg
    finally:
        get_settings.cache_clear()


def test_unreachable_database_on_the_audit_pages_is_an_error(tmp_path, monkeypatch):
    from sage_core.data.settings import get_settings

    (tmp_path / "afile").write_text("not a folder")
    monkeypatch.setenv("SAGE_DATABASE_URL", f"sqlite:///{tmp_path / 'afile' / 'audit.db'}")
    get_settings.cache_clear()
    try:
        for page in ("pages/3_Agreement.py", "pages/5_Dialogues.py"):
            at = AppTest.from_file(APP, default_timeout=TIMEOUT)
            at.switch_page(page).run()
            assert _only_error(at).startswith("Database error: unable to open database file")
    finally:
        get_settings.cache_clear()
