"""Queue policy: two seats per turn, first-come first-served, skips return, progress counts."""
from __future__ import annotations

import time

import pytest
from test_db_support import db_url, make_audit, pg_url  # noqa: F401  (fixtures)

import db
from audit import assignment as asg
from db import QuotaFullError


def _label_all(url, who, audit="audit-1"):
    done = []
    while (it := asg.next_turn_for(audit, who, db=url)) is not None:
        asg.submit_label(audit, who, it.turn_id, "acceptable", db=url)
        done.append(it.turn_id)
    return done


def test_third_annotator_never_gets_a_turn_with_two_labels(db_url):
    make_audit(db_url, n=4)
    assert sorted(_label_all(db_url, "alice")) == ["t0", "t1", "t2", "t3"]
    assert sorted(_label_all(db_url, "bob")) == ["t0", "t1", "t2", "t3"]
    assert asg.next_turn_for("audit-1", "carol", db=db_url) is None
    with pytest.raises(QuotaFullError):
        asg.submit_label("audit-1", "carol", "t2", "failure", "PC", db=db_url)
    p = asg.progress("audit-1", "carol", db=db_url)
    assert (p.labels_submitted, p.turns_complete, p.mine_remaining) == (8, 4, 0)
    assert p.per_annotator == {"alice": 4, "bob": 4} and p.fraction == 1.0
    assert all(len(v) == 2 for v in db.current_labels("audit-1", db=db_url).values())


def test_two_open_claims_keep_a_third_annotator_out(db_url):
    make_audit(db_url, n=1)
    assert asg.next_turn_for("audit-1", "alice", db=db_url).turn_id == "t0"
    assert asg.next_turn_for("audit-1", "bob", db=db_url).turn_id == "t0"
    assert asg.next_turn_for("audit-1", "carol", db=db_url) is None


def test_skipped_turn_returns_to_the_queue(db_url):
    make_audit(db_url, n=3)
    first = asg.next_turn_for("audit-1", "alice", db=db_url)
    assert first.turn_id == "t0"
    asg.save_draft("audit-1", "alice", "t0", "failure", None, "not sure", db=db_url)
    asg.skip_turn("audit-1", "alice", "t0", db=db_url)
    assert asg.progress("audit-1", "alice", db=db_url).labels_submitted == 0  # skip counts for nothing
    # the seat is free again: bob and carol can both take t0
    assert asg.next_turn_for("audit-1", "bob", db=db_url).turn_id == "t0"
    assert asg.next_turn_for("audit-1", "carol", db=db_url).turn_id == "t0"
    asg.skip_turn("audit-1", "carol", "t0", db=db_url)
    # alice continues with the others first; the skipped turn comes back last, draft restored
    seen = []
    while (it := asg.next_turn_for("audit-1", "alice", db=db_url)) is not None:
        seen.append(it.turn_id)
        if it.turn_id == "t0":
            assert it.draft is not None and it.draft.note == "not sure"
        asg.submit_label("audit-1", "alice", it.turn_id, "acceptable", db=db_url)
    assert seen == ["t1", "t2", "t0"]


def test_own_unfinished_turn_comes_first(db_url):
    make_audit(db_url, n=3)
    a = asg.next_turn_for("audit-1", "alice", db=db_url)
    b = asg.next_turn_for("audit-1", "alice", db=db_url)
    assert a.turn_id == b.turn_id and b.resumed and not a.resumed
    p = asg.progress("audit-1", "alice", db=db_url)
    assert (p.mine_in_progress, p.mine_submitted, p.mine_remaining) == (1, 0, 3)


def test_pairs_are_completed_before_new_turns_are_opened(db_url):
    make_audit(db_url, n=3)
    asg.submit_label("audit-1", "alice", "t2", "failure", "UV", db=db_url)
    assert asg.next_turn_for("audit-1", "bob", db=db_url).turn_id == "t2"


def test_abandoned_claim_returns_to_the_queue(db_url):
    make_audit(db_url, n=1, abandon_after_s=1)
    asg.next_turn_for("audit-1", "alice", db=db_url)
    asg.next_turn_for("audit-1", "bob", db=db_url)
    assert asg.next_turn_for("audit-1", "carol", db=db_url) is None
    time.sleep(1.3)
    assert asg.next_turn_for("audit-1", "carol", db=db_url).turn_id == "t0"
    asg.submit_label("audit-1", "carol", "t0", "acceptable", db=db_url)
    labels = db.current_labels("audit-1", db=db_url)["t0"]
    assert list(labels) == ["carol"]


def test_progress_counts(db_url):
    make_audit(db_url, n=4)
    asg.submit_label("audit-1", "alice", "t0", "acceptable", db=db_url)
    asg.submit_label("audit-1", "bob", "t0", "failure", "IUV", db=db_url)
    asg.submit_label("audit-1", "alice", "t1", "acceptable", db=db_url)
    asg.submit_label("audit-1", "alice", "t1", "failure", "WNF", db=db_url)  # a change, not a new label
    p = asg.progress("audit-1", "bob", db=db_url)
    assert (p.n_turns, p.labels_needed, p.labels_submitted) == (4, 8, 3)
    assert (p.turns_complete, p.turns_partial, p.turns_untouched) == (1, 1, 2)
    assert p.per_annotator == {"alice": 2, "bob": 1}
    assert (p.mine_submitted, p.mine_remaining) == (1, 3)
    assert asg.annotator_labels("audit-1", "alice", db=db_url)["t1"].failure_class == "WNF"


def test_open_turn_shows_own_current_label_and_pending_change(db_url):
    make_audit(db_url, n=2)
    asg.submit_label("audit-1", "alice", "t1", "failure", "UV", db=db_url)
    asg.save_draft("audit-1", "alice", "t1", "acceptable", None, "rethinking", db=db_url)
    it = asg.open_turn("audit-1", "alice", "t1", db=db_url)
    assert it.current.failure_class == "UV" and it.draft.note == "rethinking"
    assert "gold_label" not in it.payload and it.payload["agent"] == "reply 1"
    assert asg.open_turn("audit-1", "nobody", "t1", db=db_url).current is None
