"""Storage guarantees of the audit: drafts survive reloads, history keeps every version,
writes are durable and retried on lock, and the database URL comes from settings."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from sqlalchemy import text
from test_db_support import db_url, make_audit, pg_url, sqlite_url  # noqa: F401  (fixtures)

import db
from audit import assignment as asg
from db import AuditError, label_history, sign_in
from db.session import dispose_all, make_engine, run_write

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_reload_mid_annotation_keeps_the_draft(db_url):
    make_audit(db_url)
    first = make_engine(db_url)
    item = asg.next_turn_for("audit-1", "alice", db=first)
    asg.save_draft("audit-1", "alice", item.turn_id, "failure", "WNF", "asks for the date twice", db=first)
    first.dispose()
    dispose_all()  # the page reloads: nothing cached survives

    second = make_engine(db_url)
    again = asg.next_turn_for("audit-1", "alice", db=second)
    assert again.turn_id == item.turn_id and again.resumed
    assert (again.draft.label, again.draft.failure_class, again.draft.note) == \
        ("failure", "WNF", "asks for the date twice")
    assert asg.get_draft("audit-1", "alice", item.turn_id, db=second).note == "asks for the date twice"
    second.dispose()


def test_changed_label_history_shows_both_versions(db_url):
    make_audit(db_url)
    item = asg.next_turn_for("audit-1", "alice", db=db_url)
    asg.submit_label("audit-1", "alice", item.turn_id, "failure", "IUV", db=db_url)
    asg.submit_label("audit-1", "alice", item.turn_id, "acceptable", note="on reflection fine", db=db_url)
    hist = label_history("audit-1", turn_id=item.turn_id, db=db_url)
    assert [(h.label, h.failure_class) for h in hist] == [("failure", "IUV"), ("acceptable", None)]
    assert (hist[1].prev_label, hist[1].prev_class) == ("failure", "IUV")
    assert hist[0].prev_label is None and hist[0].seq < hist[1].seq
    assert all(h.annotator == "alice" for h in hist) and hist[0].created_at <= hist[1].created_at
    cur = db.current_labels("audit-1", db=db_url)[item.turn_id]["alice"]
    assert cur.label == "acceptable" and cur.note == "on reflection fine"
    # a submit after a draft makes the draft stale (no longer restored)
    asg.save_draft("audit-1", "alice", item.turn_id, "failure", "PC", db=db_url)
    asg.submit_label("audit-1", "alice", item.turn_id, "failure", "PC", db=db_url)
    assert asg.get_draft("audit-1", "alice", item.turn_id, db=db_url) is None
    assert len(label_history("audit-1", turn_id=item.turn_id, db=db_url)) == 3
    full = label_history("audit-1", turn_id=item.turn_id, kinds=("draft", "submit", "skip"), db=db_url)
    assert [h.kind for h in full] == ["submit", "submit", "draft", "submit"]


def test_sign_in_creates_once(db_url):
    a = sign_in("  Alice  ", db=db_url)
    b = sign_in("Alice", db=db_url)
    assert a.id == b.id and a.name == "Alice"
    assert [x.name for x in db.list_annotators(db=db_url)] == ["Alice"]
    with pytest.raises(AuditError):
        sign_in("   ", db=db_url)


def test_labels_are_validated(sqlite_url):
    make_audit(sqlite_url)
    with pytest.raises(AuditError, match="label"):
        asg.submit_label("audit-1", "alice", "t0", "maybe", db=sqlite_url)
    with pytest.raises(AuditError, match="class"):
        asg.submit_label("audit-1", "alice", "t0", "failure", "XYZ", db=sqlite_url)
    with pytest.raises(AuditError, match="acceptable"):
        asg.submit_label("audit-1", "alice", "t0", "acceptable", "UV", db=sqlite_url)
    with pytest.raises(AuditError, match="not part"):
        asg.submit_label("audit-1", "alice", "nope", "acceptable", db=sqlite_url)
    with pytest.raises(AuditError, match="no audit"):
        asg.next_turn_for("missing", "alice", db=sqlite_url)
    assert db.count_events("audit-1", db=sqlite_url) == 0


def test_strata_and_inclusion_probabilities_are_stored(db_url):
    make_audit(db_url, n=4)
    (st,) = db.audit_strata("audit-1", db=db_url)
    assert (st.population, st.sampled, st.inclusion_prob) == (8, 4, 0.5)
    turns = db.audit_turns("audit-1", db=db_url)
    assert [t.turn_id for t in turns] == ["t0", "t1", "t2", "t3"]
    assert all(t.weight == 2.0 for t in turns) and turns[1].gold_class == "IUV"
    with pytest.raises(AuditError, match="already exists"):
        make_audit(db_url, n=4)


def test_sqlite_runs_in_wal_mode_with_busy_timeout(sqlite_url):
    eng = make_engine(sqlite_url, busy_timeout_ms=1234)
    with eng.connect() as c:
        assert c.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert c.exec_driver_sql("PRAGMA busy_timeout").scalar() == 1234
        assert c.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    eng.dispose()


def test_database_is_locked_is_retried_with_backoff(sqlite_url):
    db.init_db(sqlite_url)
    eng = make_engine(sqlite_url, busy_timeout_ms=20)  # give up quickly: our retry must cure it
    path = sqlite_url.removeprefix("sqlite:///")
    blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN EXCLUSIVE")
    threading.Timer(0.4, blocker.commit).start()
    retries = []
    t0 = time.monotonic()
    run_write(eng, lambda s: s.exec(text("INSERT INTO sage_annotator (name, created_at) "
                                         "VALUES ('locked-out', '2026-01-01 00:00:00')")),
              on_retry=lambda n, e: retries.append(str(getattr(e, "orig", e))))
    assert time.monotonic() - t0 >= 0.3
    assert retries and all("locked" in r for r in retries)
    assert [a.name for a in db.list_annotators(db=eng)] == ["locked-out"]
    blocker.close()
    eng.dispose()


def test_a_crash_right_after_submit_loses_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'crash.db'}"
    make_audit(url)
    code = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(REPO)!r})
        from audit import assignment as asg
        it = asg.next_turn_for("audit-1", "alice", db={url!r})
        asg.submit_label("audit-1", "alice", it.turn_id, "failure", "UV", db={url!r})
        asg.save_draft("audit-1", "alice", "t1", "failure", None, "half-typed", db={url!r})
        os._exit(9)  # no clean shutdown, no engine dispose, no WAL checkpoint
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    dispose_all()
    labels = db.current_labels("audit-1", db=url)
    assert labels["t0"]["alice"].failure_class == "UV"
    assert asg.get_draft("audit-1", "alice", "t1", db=url).note == "half-typed"


def test_database_url_comes_from_settings(tmp_path, monkeypatch):
    from sage_core.data.settings import get_settings
    url = f"sqlite:///{tmp_path / 'from_env.db'}"
    monkeypatch.setenv("SAGE_DATABASE_URL", url)
    get_settings.cache_clear()
    try:
        sign_in("env-user")  # no db= : settings decide
        assert (tmp_path / "from_env.db").exists()
        assert [a.name for a in db.list_annotators(db=url)] == ["env-user"]
    finally:
        get_settings.cache_clear()
        dispose_all()


def test_there_is_no_delete_api():
    import audit
    import db.repository
    public = [n for m in (db, db.repository, asg, audit) for n in dir(m) if not n.startswith("_")]
    assert not [n for n in public if n.lower().startswith(("delete", "remove", "drop", "purge", "clear"))]


def test_two_annotators_in_threads_of_one_app_process_both_land(db_url):
    """Streamlit serves sessions from threads of one process sharing the cached engine."""
    make_audit(db_url, n=60, name="threads")
    errors = []

    def work(who):
        try:
            while (it := asg.next_turn_for("threads", who, db=db_url)) is not None:
                asg.save_draft("threads", who, it.turn_id, "failure", None, "typing", db=db_url)
                asg.submit_label("threads", who, it.turn_id, "failure", "PC", db=db_url)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=work, args=(w,)) for w in ("alice", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors
    labels = db.current_labels("threads", db=db_url)
    assert len(labels) == 60 and all(set(v) == {"alice", "bob"} for v in labels.values())
    assert db.count_events("threads", "draft", db=db_url) == 120


def test_a_writer_killed_mid_transaction_leaves_no_trace_and_no_lock(tmp_path):
    url = f"sqlite:///{tmp_path / 'kill.db'}"
    make_audit(url)
    code = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(REPO)!r})
        from db.session import run_write
        from sqlalchemy import text
        def fn(s):
            s.exec(text("INSERT INTO sage_annotator (name, created_at) VALUES ('ghost', '2026-01-01')"))
            s.flush()
            os._exit(7)  # dies holding the write lock, before commit
        run_write({url!r}, fn)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 7, proc.stderr
    dispose_all()
    asg.submit_label("audit-1", "bob", "t0", "acceptable", db=url)  # the lock died with the process
    assert [a.name for a in db.list_annotators(db=url)] == ["bob"]


def test_sqlite_write_transactions_take_the_write_lock_up_front(sqlite_url):
    """BEGIN IMMEDIATE: a writer that first reads cannot be overtaken and then fail to upgrade."""
    db.init_db(sqlite_url)
    path = sqlite_url.removeprefix("sqlite:///")
    seen = []

    def fn(s):
        s.exec(text("SELECT count(*) FROM sage_annotator")).all()  # only a read so far
        other = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            seen.append("other got the lock")
        except sqlite3.OperationalError as exc:
            seen.append(str(exc))
        finally:
            other.close()

    run_write(sqlite_url, fn)
    assert seen == ["database is locked"]
    with db.read_session(sqlite_url) as s:  # readers are never blocked (WAL)
        assert s.exec(text("SELECT count(*) FROM sage_annotator")).one()[0] == 0
