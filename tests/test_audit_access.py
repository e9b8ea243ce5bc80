"""Issue 10 at the library level: normalised names, accounts and the create-lead entry point,
seat leases on the database clock, the optimistic version check. SQLite and PostgreSQL."""
from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from test_db_support import db_url, make_audit, pg_url  # noqa: F401  (fixtures)

import db
from audit import assignment as asg
from db import accounts

REPO = Path(__file__).resolve().parents[1]


def test_one_person_under_any_spelling_holds_one_seat(db_url):
    make_audit(db_url, n=1)
    assert asg.next_turn_for("audit-1", "Alice", db=db_url).turn_id == "t0"
    again = asg.next_turn_for("audit-1", "  ALICE ", db=db_url)  # the same person: her own unfinished turn
    assert again.turn_id == "t0" and again.resumed
    assert asg.next_turn_for("audit-1", "bob", db=db_url).turn_id == "t0"
    assert asg.next_turn_for("audit-1", "carol", db=db_url) is None  # both seats held: Alice once, Bob once
    asg.submit_label("audit-1", "alice ", "t0", "acceptable", db=db_url)
    assert list(db.current_labels("audit-1", db=db_url)["t0"]) == ["Alice"]


def test_a_writer_clock_two_hours_ahead_cannot_take_a_live_seat(db_url, monkeypatch):
    make_audit(db_url, n=1, abandon_after_s=1800)
    asg.next_turn_for("audit-1", "alice", db=db_url)
    asg.next_turn_for("audit-1", "bob", db=db_url)
    import db.models
    import db.repository
    ahead = db.models.utcnow() + timedelta(hours=2)
    for mod in (db.models, db.repository, asg):  # every clock this process could read
        monkeypatch.setattr(mod, "utcnow", lambda: ahead, raising=False)
    assert asg.next_turn_for("audit-1", "carol", db=db_url) is None  # Alice's and Bob's claims are 0 s old
    assert asg.progress("audit-1", "carol", db=db_url).mine_remaining == 0
    with pytest.raises(db.QuotaFullError):
        asg.submit_label("audit-1", "carol", "t0", "failure", "IUV", db=db_url)


def test_a_stale_writer_is_told_and_writes_nothing(db_url):
    make_audit(db_url, n=1)
    tab1 = asg.next_turn_for("audit-1", "alice", db=db_url)
    tab2 = asg.next_turn_for("audit-1", "alice", db=db_url)
    assert tab1.version == tab2.version == 0
    rec = asg.save_draft("audit-1", "alice", "t0", "failure", "PC", "tab 1", db=db_url,
                         expected_version=tab1.version)
    with pytest.raises(asg.ChangedElsewhereError, match="changed elsewhere"):
        asg.save_draft("audit-1", "alice", "t0", "acceptable", None, "tab 2", db=db_url,
                       expected_version=tab2.version)
    with pytest.raises(asg.ChangedElsewhereError):
        asg.submit_label("audit-1", "alice", "t0", "acceptable", db=db_url, expected_version=tab2.version)
    assert asg.get_draft("audit-1", "alice", "t0", db=db_url).note == "tab 1"
    assert db.count_events("audit-1", db=db_url) == 0
    first = asg.submit_label("audit-1", "alice", "t0", "failure", "PC", db=db_url, expected_version=rec.seq)
    reopened = asg.open_turn("audit-1", "alice", "t0", db=db_url)
    assert reopened.version == first.seq and reopened.current.label == "failure"
    asg.submit_label("audit-1", "alice", "t0", "acceptable", db=db_url, expected_version=reopened.version)
    hist = db.label_history("audit-1", turn_id="t0", db=db_url)
    assert [(h.label, h.prev_label) for h in hist] == [("failure", None), ("acceptable", "failure")]


def test_accounts_passwords_and_normalised_names(db_url):
    lea = accounts.create_account(" Lea ", "long password", role="lead", db=db_url)
    assert (lea.name, lea.role) == ("Lea", "lead")
    assert accounts.authenticate("LEA", "long password", db=db_url).id == lea.id
    for name, pw in (("lea", "wrong password"), ("nobody", "long password")):
        with pytest.raises(accounts.AuthError, match="wrong name or password"):
            accounts.authenticate(name, pw, db=db_url)
    with pytest.raises(db.AuditError, match="already exists"):
        accounts.create_account("lea", "other password", db=db_url)
    with pytest.raises(db.AuditError, match="at least"):
        accounts.create_account("bob", "short", db=db_url)
    with pytest.raises(db.AuditError, match="control"):
        accounts.create_account("bob\x00", "long password", db=db_url)
    with db.read_session(db_url) as s:
        stored = s.get(db.Annotator, lea.id).password_hash
    assert stored.startswith("$argon2id$") and "long password" not in stored


def test_create_lead_entry_point(tmp_path):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    env = dict(os.environ, SAGE_LEAD_PASSWORD="lead password 1", PYTHONPATH=str(REPO))
    run = [sys.executable, "-m", "audit", "create-lead", "--name", " Lea ", "--db", url]
    out = subprocess.run(run, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "created lead 'Lea'" in out.stdout, out.stderr
    assert accounts.authenticate("lea", "lead password 1", db=url).role == "lead"
    again = subprocess.run(run[:-3] + ["LEA", "--db", url], cwd=REPO, env=env, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 2 and "already exists" in again.stderr
    env.pop("SAGE_LEAD_PASSWORD")
    no_pw = subprocess.run(run[:-3] + ["Max", "--db", url], cwd=REPO, env=env, capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
    assert no_pw.returncode != 0 and "SAGE_LEAD_PASSWORD" in (no_pw.stderr + no_pw.stdout)


def test_invitations_are_signed_one_time_and_expire(db_url):
    secret = accounts.server_secret(db=db_url)
    zoe = accounts.create_invited("Zoe", db=db_url)
    token = accounts.issue_invite(zoe.id, secret, db=db_url)
    assert accounts.invite_name(token, secret, db=db_url) == "Zoe"
    assert accounts.invite_name(token, secret, db=db_url, now=10**11) is None  # expired
    assert accounts.verify_token(token[1:], secret, db=db_url) is None  # not a session token
    assert accounts.invite_name(token[:-2] + "xx", secret, db=db_url) is None  # tampered
    assert accounts.redeem_invite(token, "zoes password", secret, db=db_url).has_password
    with pytest.raises(accounts.AuthError, match="already used"):
        accounts.redeem_invite(token, "another password", secret, db=db_url)
    assert accounts.authenticate("zoe", "zoes password", db=db_url).id == zoe.id
    with pytest.raises(db.AuditError, match="already has a password"):
        accounts.issue_invite(zoe.id, secret, db=db_url)
    accounts.clear_password("zoe", db=db_url)  # a reset by invitation
    with pytest.raises(accounts.AuthError):
        accounts.authenticate("zoe", "zoes password", db=db_url)
    fresh = accounts.issue_invite(zoe.id, secret, db=db_url)
    assert accounts.redeem_invite(fresh, "zoes new password", secret, db=db_url).name == "Zoe"
