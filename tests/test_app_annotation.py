"""Blind annotation page: sign-in, audit creation, draft autosave and resume, two annotators, blindness."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from audit import assignment, sampling
from db import audit_turns, current_labels, list_audits
from sage_core.data.types import Gold, TurnVerdict
from ui.loading import load_demo

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 120
PAGE = "pages/2_Blind_annotation.py"


def _session(name: str) -> AppTest:
    """A fresh browser session opened directly on the annotation page, signed in as ``name``."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.switch_page(PAGE).run()
    assert any(t.value == "Blind annotation" for t in at.title)
    at.text_input(key="ann_name_input").set_value(name)
    at.button(key="ann_sign_in").click().run()
    assert not at.exception
    return at


def _create_audit(at: AppTest, name: str, n: int, seed: int) -> None:
    """Equal quota ``n`` per stratum (gold class), seeded."""
    at.selectbox(key="aud_design").set_value("equal quota per stratum").run()
    at.text_input(key="aud_name").set_value(name)
    at.number_input(key="aud_n").set_value(n)
    at.number_input(key="aud_seed").set_value(seed)
    at.button(key="aud_create").click().run()
    assert not at.exception and not at.error


def _shown_turn(at: AppTest) -> str:
    head = next(m.value for m in at.markdown if m.value.startswith("#### Turn"))
    return head.split("`")[1]


def _page_text(at: AppTest) -> str:
    """Everything the page writes, plus widget labels and values (not the option lists)."""
    parts = []
    for kind in ("markdown", "caption", "info", "success", "warning", "error", "title", "subheader", "toast"):
        parts += [str(e.value) for e in getattr(at, kind) if not str(e.value).startswith("<style>")]
    for w in list(at.radio) + list(at.selectbox) + list(at.text_area) + list(at.text_input):
        parts += [str(w.label), str(w.value)]
    return "\n".join(parts)


def test_two_annotators_label_the_same_turn_and_it_persists(db_url):
    alice = _session("alice")
    _create_audit(alice, "demo-audit", 2, 7)
    expected = sampling.stratified_sample(load_demo().turns, 2, seed=7)
    audits = list_audits(db_url)
    assert [a.name for a in audits] == ["demo-audit"] and audits[0].n_turns == len(expected)

    tid = _shown_turn(alice)
    assert tid in {s.turn.turn_id for s in expected.turns}
    alice.radio(key=f"ann_label::{tid}").set_value("failure").run()
    alice.selectbox(key=f"ann_class::{tid}").set_value("IUV").run()
    alice.text_area(key=f"ann_note::{tid}").set_value("party size dropped").run()
    draft = assignment.get_draft("demo-audit", "alice", tid, db=db_url)
    assert (draft.label, draft.failure_class, draft.note) == ("failure", "IUV", "party size dropped")
    alice.button(key=f"ann_submit::{tid}").click().run()
    assert not alice.exception and not alice.error
    assert _shown_turn(alice) != tid  # moved on to the next turn

    bob = _session("bob")  # second browser session, same process, same database
    assert _shown_turn(bob) == tid  # turns with one label already are handed out first
    bob.radio(key=f"ann_label::{tid}").set_value("acceptable").run()
    bob.button(key=f"ann_submit::{tid}").click().run()
    assert not bob.exception

    labels = current_labels("demo-audit", db=db_url)[tid]
    assert (labels["alice"].label, labels["alice"].failure_class, labels["alice"].note) == \
        ("failure", "IUV", "party size dropped")
    assert (labels["bob"].label, labels["bob"].failure_class) == ("acceptable", None)
    prog = assignment.progress("demo-audit", "bob", db=db_url)
    assert prog.labels_submitted == 2 and prog.turns_complete == 1


def test_paper_protocol_is_the_default_design(db_url):
    at = _session("gina")
    at.text_input(key="aud_name").set_value("paper-audit")
    at.number_input(key="aud_total").set_value(12)
    at.number_input(key="aud_seed").set_value(4)
    at.button(key="aud_create").click().run()
    assert not at.exception and not at.error
    expected = sampling.paper_protocol(load_demo().turns, n=12, seed=4)
    stored = audit_turns("paper-audit", db=db_url)
    assert [t.turn_id for t in stored] == [s.turn.turn_id for s in expected.turns]
    assert [t.inclusion_prob for t in stored] == pytest.approx([s.inclusion_prob for s in expected.turns])
    assert any(f"'paper-audit' with {len(expected)} turns" in m.value for m in at.success)


def test_draft_is_restored_when_the_annotator_comes_back(db_url):
    first = _session("carol")
    _create_audit(first, "resume-audit", 1, 3)
    tid = _shown_turn(first)
    first.radio(key=f"ann_label::{tid}").set_value("failure").run()
    first.text_area(key=f"ann_note::{tid}").set_value("check the date").run()

    again = _session("carol")  # a new session: nothing but the database remembers the draft
    assert _shown_turn(again) == tid
    assert again.radio(key=f"ann_label::{tid}").value == "failure"
    assert again.text_area(key=f"ann_note::{tid}").value == "check the date"
    assert any("Resumed your autosaved draft" in c.value for c in again.caption)
    assert not again.warning and not again.exception  # no widget default / session-state conflict
    assert assignment.progress("resume-audit", "carol", db=db_url).mine_submitted == 0


def test_page_shows_no_gold_and_no_verdict(db_url):
    ls = load_demo()
    at = _session("dave")
    _create_audit(at, "blind-audit", 2, 1)
    for _ in range(3):
        tid = _shown_turn(at)
        text = _page_text(at).lower()
        for banned in ("gold", "verdict", "confidence", "margin", "fired", "criterion", "sage-core", "s1", "s2",
                       "true positive", "false positive"):
            assert banned not in text, (banned, tid)
        gold = ls.by_id[tid].gold
        if gold.failure_class:  # the class may only appear among the options of the class picker
            assert f" {gold.failure_class.lower()} " not in f" {text} ".replace("\n", " ")
        at.radio(key=f"ann_label::{tid}").set_value("acceptable").run()
        at.button(key=f"ann_submit::{tid}").click().run()
    for key, value in at.session_state.items():
        assert not isinstance(value, (Gold, TurnVerdict)), key
        if dataclasses.is_dataclass(value):
            assert "gold" not in repr(value).lower(), key


def test_bad_audit_request_is_an_error(db_url):
    at = _session("erin")
    at.button(key="aud_create").click().run()  # no name
    assert not at.exception
    assert any("name" in e.value for e in at.error)


def test_interleaved_sessions_respect_the_two_label_quota(db_url):
    """A and B hold the same turn at once; a third annotator is never handed it."""
    a = _session("ann-a")
    _create_audit(a, "quota-audit", 1, 11)
    tid = _shown_turn(a)
    b = _session("ann-b")
    assert _shown_turn(b) == tid  # both seats of this turn are now held
    c = _session("ann-c")
    assert _shown_turn(c) != tid
    # both submit in the opposite order of claiming
    b.radio(key=f"ann_label::{tid}").set_value("acceptable").run()
    a.radio(key=f"ann_label::{tid}").set_value("failure").run()
    b.button(key=f"ann_submit::{tid}").click().run()
    a.button(key=f"ann_submit::{tid}").click().run()
    assert not a.exception and not b.exception and not a.error and not b.error
    labels = current_labels("quota-audit", db=db_url)[tid]
    assert {k: v.label for k, v in labels.items()} == {"ann-a": "failure", "ann-b": "acceptable"}
    # C tries to label the full turn anyway (e.g. a stale tab): refused with st.error, nothing written
    audit_id = list_audits(db_url)[0].id
    c.session_state["ann_item"] = assignment.QueueItem(audit_id, tid, "", {}, None, False)
    c.run()
    c.radio(key=f"ann_label::{tid}").set_value("failure").run()
    c.button(key=f"ann_submit::{tid}").click().run()
    assert not c.exception
    assert any("already has 2 labels" in e.value for e in c.error)
    assert set(current_labels("quota-audit", db=db_url)[tid]) == {"ann-a", "ann-b"}


def test_annotation_only_server_serves_no_other_page(db_url, monkeypatch):
    monkeypatch.setenv("SAGE_ANNOTATION_ONLY", "1")
    for page in ("pages/0_Home.py", "pages/1_Inspector.py", "pages/3_Agreement.py", "pages/4_Risk_coverage.py"):
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
        assert [t.value for t in at.title] == ["Blind annotation"]  # the default page
        try:
            at.switch_page(page).run()
        except ValueError:
            continue  # not a registered page
        assert [t.value for t in at.title] == ["Blind annotation"], page
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    at.text_input(key="ann_name_input").set_value("frank")
    at.button(key="ann_sign_in").click().run()
    assert not at.exception
    assert not [e for e in at.expander if "Create an audit" in e.label]  # coordinators only
    assert any("ask the coordinator" in i.value for i in at.info)
