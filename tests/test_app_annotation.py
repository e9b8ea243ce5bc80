"""Blind annotation page: sign-in, audit creation, draft autosave and resume, two annotators, blindness,
revisions with their history, the "changed elsewhere" check between two tabs.

People sign in with an account (name + password, ``db.accounts``); the lead creates audits.
"""
from __future__ import annotations

import dataclasses
import html
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from audit import assignment, sampling
from db import accounts, audit_turns, current_labels, label_history, list_audits
from sage_core.data.types import Gold, TurnVerdict
from ui.loading import load_demo

AUTO_LEAD = False  # these tests sign in through the form
REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 120
PAGE = "pages/2_Blind_annotation.py"
PW = "a long enough password"


def _session(name: str, role: str = "annotator") -> AppTest:
    """A fresh browser session opened directly on the annotation page, signed in as ``name``.

    A server annotators sign in to has a lead (else a local browser gets the first-run form)."""
    if accounts.count_leads() == 0:
        accounts.create_account("the lead", PW, role="lead")
    try:
        accounts.create_account(name, PW, role=role)
    except accounts.AuditError:
        pass  # the account exists already (a second session of the same person)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.switch_page(PAGE).run()
    assert [t.value for t in at.title] == ["Sign in to SAGE Studio"]
    at.text_input(key="auth_name").set_value(name)
    at.text_input(key="auth_password").set_value(PW)
    at.button(key="auth_sign_in").click().run()
    assert not at.exception and not at.error
    assert any(t.value == "Blind annotation" for t in at.title)
    return at


def _lead(name: str = "lea") -> AppTest:
    return _session(name, role="lead")


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
    return html.unescape(head.split("<code>")[1].split("</code>")[0])  # shown escaped in a <code> element


def _page_text(at: AppTest) -> str:
    """Everything the page writes, plus widget labels and values (not the option lists)."""
    parts = []
    for kind in ("markdown", "caption", "info", "success", "warning", "error", "title", "subheader", "toast"):
        parts += [str(e.value) for e in getattr(at, kind) if not str(e.value).startswith("<style>")]
    for w in list(at.radio) + list(at.selectbox) + list(at.text_area) + list(at.text_input):
        parts += [str(w.label), str(w.value)]
    return "\n".join(parts)


def test_two_annotators_label_the_same_turn_and_it_persists(db_url):
    _create_audit(_lead(), "demo-audit", 2, 7)
    alice = _session("alice")
    expected = sampling.stratified_sample(load_demo().turns, 2, seed=7)
    audits = list_audits(db_url)
    assert [a.name for a in audits] == ["demo-audit"] and audits[0].n_turns == len(expected)

    tid = _shown_turn(alice)
    assert tid in {s.turn.turn_id for s in expected.turns}
    alice.radio(key=f"ann_label::{tid}").set_value("failure").run()
    alice.checkbox(key=f"ann_class_IUV::{tid}").check().run()
    alice.text_area(key=f"ann_note::{tid}").set_value("party size dropped").run()
    draft = assignment.get_draft("demo-audit", "alice", tid, db=db_url)
    assert (draft.label, draft.failure_class, draft.note) == ("failure", "IUV", "party size dropped")
    alice.button(key="ann_submit").click().run()
    assert not alice.exception and not alice.error
    assert _shown_turn(alice) != tid  # moved on to the next turn

    bob = _session("bob")  # second browser session, same process, same database
    assert _shown_turn(bob) == tid  # turns with one label already are handed out first
    bob.radio(key=f"ann_label::{tid}").set_value("acceptable").run()
    bob.button(key="ann_submit").click().run()
    assert not bob.exception

    labels = current_labels("demo-audit", db=db_url)[tid]
    assert (labels["alice"].label, labels["alice"].failure_class, labels["alice"].note) == \
        ("failure", "IUV", "party size dropped")
    assert (labels["bob"].label, labels["bob"].failure_class) == ("acceptable", None)
    prog = assignment.progress("demo-audit", "bob", db=db_url)
    assert prog.labels_submitted == 2 and prog.turns_complete == 1


def test_paper_protocol_is_the_default_design(db_url):
    at = _lead("gina")
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


def test_an_audit_larger_than_the_slice_says_how_many_were_asked_for(db_url):
    at = _lead("hugo")
    assert at.number_input(key="aud_total").value == min(200, len(load_demo().turns))  # the slice's size at most
    at.text_input(key="aud_name").set_value("big-audit")
    at.number_input(key="aud_total").set_value(500)
    at.button(key="aud_create").click().run()
    assert not at.exception and not at.error
    n = len(audit_turns("big-audit", db=db_url))
    assert n < 500 and any(f"with {n} turns. 500 were asked for" in m.value for m in at.success)
    # the dialogue rule's cost is counted against what each stratum holds, and said as a count of turns
    short = sampling.paper_protocol(load_demo().turns, n=500, seed=0).design["dialogue_rule"]["shortfall"]
    msg = next(m.value for m in at.success if "500 were asked for" in m.value)
    assert short and all(f"{k} {v} fewer" in msg for k, v in short.items()) and " -" not in msg


def test_draft_is_restored_when_the_annotator_comes_back(db_url):
    _create_audit(_lead(), "resume-audit", 1, 3)
    first = _session("carol")
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
    _create_audit(_lead(), "blind-audit", 2, 1)
    at = _session("dave")
    for _ in range(3):
        tid = _shown_turn(at)
        text = _page_text(at).lower()
        for banned in ("gold", "verdict", "confidence", "margin", "fired", "criterion", "sage-core", "s1", "s2",
                       "true positive", "false positive"):
            assert banned not in text, (banned, tid)
        assert sum(m.value.count("**Workflow**") for m in at.markdown) == 1  # named once, by the context panel
        gold = ls.by_id[tid].gold
        if gold.failure_class:  # the class may only appear among the options of the class picker
            assert f" {gold.failure_class.lower()} " not in f" {text} ".replace("\n", " ")
        at.radio(key=f"ann_label::{tid}").set_value("acceptable").run()
        at.button(key="ann_submit").click().run()
    for key, value in at.session_state.items():
        assert not isinstance(value, (Gold, TurnVerdict)), key
        if dataclasses.is_dataclass(value):
            assert "gold" not in repr(value).lower(), key


def test_bad_audit_request_is_an_error(db_url):
    at = _lead("erin")
    at.button(key="aud_create").click().run()  # no name
    assert not at.exception
    assert any("name" in e.value for e in at.error)


def test_interleaved_sessions_respect_the_two_label_quota(db_url):
    """A and B hold the same turn at once; a third annotator is never handed it."""
    _create_audit(_lead(), "quota-audit", 1, 11)
    a = _session("ann-a")
    tid = _shown_turn(a)
    b = _session("ann-b")
    assert _shown_turn(b) == tid  # both seats of this turn are now held
    c = _session("ann-c")
    assert _shown_turn(c) != tid
    # both submit in the opposite order of claiming
    b.radio(key=f"ann_label::{tid}").set_value("acceptable").run()
    a.radio(key=f"ann_label::{tid}").set_value("failure").run()
    b.button(key="ann_submit").click().run()
    a.button(key="ann_submit").click().run()
    assert not a.exception and not b.exception and not a.error and not b.error
    labels = current_labels("quota-audit", db=db_url)[tid]
    assert {k: v.label for k, v in labels.items()} == {"ann-a": "failure", "ann-b": "acceptable"}
    # C tries to label the full turn anyway (e.g. a stale tab): refused with st.error, nothing written
    audit_id = list_audits(db_url)[0].id
    c.session_state["ann_item"] = assignment.QueueItem(audit_id, tid, "", {}, None, False)
    c.run()
    c.radio(key=f"ann_label::{tid}").set_value("failure").run()
    c.button(key="ann_submit").click().run()
    assert not c.exception
    assert any("already has 2 labels" in e.value for e in c.error)
    assert set(current_labels("quota-audit", db=db_url)[tid]) == {"ann-a", "ann-b"}


def test_annotation_only_server_serves_no_other_page(db_url, monkeypatch):
    monkeypatch.setenv("SAGE_ANNOTATION_ONLY", "1")
    for page in ("pages/0_Home.py", "pages/1_Inspector.py", "pages/3_Agreement.py", "pages/4_Risk_coverage.py"):
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
        assert [t.value for t in at.title] == ["Sign in to SAGE Studio"]  # the annotation page asks who you are
        try:
            at.switch_page(page).run()
        except ValueError:
            continue  # not a registered page
        assert [t.value for t in at.title] in (["Sign in to SAGE Studio"], []), page
    at = _lead("frank")  # even the lead gets no audit creation on an annotation-only server
    assert not at.exception
    assert not [e for e in at.expander if "Create an audit" in e.label]
    assert any("ask the audit lead" in i.value for i in at.info)


def test_annotators_cannot_create_audits(db_url):
    at = _session("gus")
    assert not [e for e in at.expander if "Create an audit" in e.label]
    assert any("ask the audit lead" in i.value for i in at.info)


def test_a_revised_label_keeps_both_versions(db_url):
    _create_audit(_lead(), "revise-audit", 1, 2)
    at = _session("hana")
    tid = _shown_turn(at)
    at.radio(key=f"ann_label::{tid}").set_value("acceptable").run()
    at.button(key="ann_submit").click().run()
    assert _shown_turn(at) != tid
    at.button(key="ann_prev").click().run()  # "previous": my last submitted label, opened for review
    assert _shown_turn(at) == tid and at.radio(key=f"ann_label::{tid}").value == "acceptable"
    at.radio(key=f"ann_label::{tid}").set_value("failure").run()
    at.checkbox(key=f"ann_class_PC::{tid}").check().run()
    at.text_area(key=f"ann_note::{tid}").set_value("![x](http://host/y) confirms too early").run()
    at.button(key="ann_submit").click().run()
    assert not at.exception and not at.error
    versions = label_history("revise-audit", turn_id=tid, annotator="hana", db=db_url)
    assert [(v.label, v.failure_class, v.prev_label) for v in versions] == \
        [("acceptable", None, None), ("failure", "PC", "acceptable")]
    assert current_labels("revise-audit", db=db_url)[tid]["hana"].label == "failure"
    at.button(key="ann_prev").click().run()
    table = next(t.value for t in at.table if "label" in t.value.columns)  # "Your versions of this label"
    assert list(table["label"]) == ["acceptable", "failure"] and list(table.index) == [1, 2]
    assert list(table["note"]) == ["", "\\!\\[x\\](http://host/y) confirms too early"]  # Markdown-escaped


def test_second_tab_gets_changed_elsewhere_not_a_silent_overwrite(db_url):
    _create_audit(_lead(), "tabs-audit", 1, 5)
    tab1 = _session("ivan")
    tid = _shown_turn(tab1)
    tab2 = _session("ivan")  # the same person, a second tab: handed the same unfinished turn
    assert _shown_turn(tab2) == tid
    tab1.radio(key=f"ann_label::{tid}").set_value("failure").run()
    tab1.text_area(key=f"ann_note::{tid}").set_value("from tab 1").run()
    tab2.radio(key=f"ann_label::{tid}").set_value("acceptable").run()  # stale tab
    assert not tab2.exception
    assert any("changed elsewhere" in e.value for e in tab2.error)
    draft = assignment.get_draft("tabs-audit", "ivan", tid, db=db_url)
    assert (draft.label, draft.note) == ("failure", "from tab 1")  # tab 2 wrote nothing
    tab2.button(key="ann_submit").click().run()  # submitting from the stale tab is refused too
    assert "ivan" not in current_labels("tabs-audit", db=db_url).get(tid, {})
    tab2.button(key="ann_reload").click().run()
    assert not tab2.error
    assert tab2.radio(key=f"ann_label::{tid}").value == "failure"
    assert tab2.text_area(key=f"ann_note::{tid}").value == "from tab 1"
    tab2.button(key="ann_submit").click().run()  # now current: accepted
    assert current_labels("tabs-audit", db=db_url)[tid]["ivan"].label == "failure"


def test_unsure_and_two_classes_through_the_page(db_url):
    """The form's third label and its class checkboxes: 'unsure' is stored without classes; two ticked
    classes are stored as the canonical list, restored on review, and the boxes are off for non-failures."""
    _create_audit(_lead(), "multi-audit", 1, 3)
    at = _session("jun")
    tid = _shown_turn(at)
    assert at.radio(key=f"ann_label::{tid}").options == ["acceptable", "failure", "unsure"]
    assert at.checkbox(key=f"ann_class_IUV::{tid}").disabled  # no label yet: classes are off
    at.radio(key=f"ann_label::{tid}").set_value("failure").run()
    at.checkbox(key=f"ann_class_UV::{tid}").check().run()
    at.checkbox(key=f"ann_class_IUV::{tid}").check().run()
    draft = assignment.get_draft("multi-audit", "jun", tid, db=db_url)
    assert (draft.label, draft.failure_class) == ("failure", "IUV,UV")  # CLASSES order, whatever the clicks
    at.radio(key=f"ann_label::{tid}").set_value("unsure").run()  # the ticks stay but are not a class any more
    assert at.checkbox(key=f"ann_class_IUV::{tid}").disabled
    at.button(key="ann_submit").click().run()
    assert not at.exception and not at.error
    cur = current_labels("multi-audit", db=db_url)[tid]["jun"]
    assert (cur.label, cur.failure_class) == ("unsure", None)

    at.button(key="ann_prev").click().run()  # revise: failure with two classes
    assert _shown_turn(at) == tid and at.radio(key=f"ann_label::{tid}").value == "unsure"
    at.radio(key=f"ann_label::{tid}").set_value("failure").run()
    at.checkbox(key=f"ann_class_UV::{tid}").check().run()
    at.checkbox(key=f"ann_class_WNF::{tid}").check().run()
    at.button(key="ann_submit").click().run()
    assert not at.exception and not at.error
    versions = label_history("multi-audit", turn_id=tid, annotator="jun", db=db_url)
    assert [(v.label, v.failure_class, v.prev_label) for v in versions] == \
        [("unsure", None, None), ("failure", "WNF,UV", "unsure")]
    at.button(key="ann_prev").click().run()  # the stored list comes back as ticked boxes
    assert [at.checkbox(key=f"ann_class_{c}::{tid}").value for c in ("IUV", "WNF", "PC", "UV")] == \
        [False, True, False, True]
    assert any("failure · WNF, UV" in i.value for i in at.info)
