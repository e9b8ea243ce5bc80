"""Guidelines generated from the spec, stored per audit, editable by the lead; the per-turn workflow context."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_db_support import sqlite_url  # noqa: F401  (fixture)

import db
from audit import assignment, sampling
from audit import guidelines as gl
from sage_core import SlotSpec, WorkflowSpec, load_corpus

REPO = Path(__file__).resolve().parents[1]
EVIL = "![x](http://evil.example/y)"

AUTO_LEAD = True  # AppTests of the lead's Adjudication page run as a signed-in lead (tests/conftest.py)


@pytest.fixture(scope="module")
def demo():
    return load_corpus("slice", str(REPO / "data/demo/demo_slice.jsonl"), str(REPO / "data/demo/schema.json"))


def _spec() -> WorkflowSpec:
    slots = {s: SlotSpec(s, f"the {s.replace('_', ' ')}") for s in ("city", "date", "time", "party_size")}
    return WorkflowSpec("Rest_1:Book", "Rest_1", "Book", "book a table", slots, ["city", "date", "time"],
                        {"party_size": "2"}, order=[["city"], ["date", "time"]])


def test_turn_context_required_filled_and_legal_next():
    spec = _spec()
    ctx = gl.turn_context(spec, {"city": "Paris"})
    assert ctx.required == [("city", True), ("date", False), ("time", False)]
    assert ctx.optional == [("party_size", False)]
    assert ctx.legal_next == ["date", "time"]  # the explicit order: the first open group
    assert set(ctx.legal_next) == spec.legal_next({"city": "Paris"})
    assert ctx.missing_required == ["date", "time"]
    assert gl.turn_context(spec, {}).legal_next == ["city"]
    md = gl.context_markdown(ctx)
    assert "city ✔ filled" in md and "date ✘ empty" in md and "Legal next fields" in md


def test_spec_round_trip_and_generated_guidelines(demo):
    turns, reg = demo
    for spec in reg:
        back = gl.spec_from_dict(gl.spec_to_dict(spec))
        assert (back.id, back.required, back.optional, back.order, back.outcome_slots) == \
            (spec.id, spec.required, spec.optional, spec.order, spec.outcome_slots)
        assert back.legal_next({}) == spec.legal_next({})
    text = gl.default_guidelines(reg)
    for cls, (name, definition) in gl.CLASS_DEFINITIONS.items():
        assert f"**{cls} – {name}**: {definition}" in text
    first = sorted(reg, key=lambda s: s.id)[0]
    assert text.count("*Example (") == 4 and gl.md_escape(first.required[0]) in text
    assert gl.guidelines_text("", {s.id: gl.spec_to_dict(s) for s in reg}) == text
    assert gl.guidelines_text("# Ours", {}) == "# Ours"  # the lead's Markdown replaces it


def test_data_strings_are_markdown_escaped():
    slots = {EVIL: SlotSpec(EVIL, EVIL), "b": SlotSpec("b")}
    spec = WorkflowSpec(EVIL, "S", "I", "", slots, [EVIL, "b"])
    text = gl.default_guidelines([spec]) + gl.context_markdown(gl.turn_context(spec, {}))
    assert EVIL not in text and "](" not in text and "![" not in text
    assert gl.md_escape(EVIL) == r"\!\[x\]\(http\://evil\.example/y\)"


def test_guidelines_stored_with_the_audit_and_editable(sqlite_url, demo):  # noqa: F811
    turns, reg = demo
    s = sampling.stratified_sample(turns, 2, seed=1)
    assignment.create_audit_from_sample("g1", s, db=sqlite_url, workflows=reg)
    g = db.get_guidelines("g1", db=sqlite_url)
    assert set(g.workflows) == {x.turn.workflow for x in s.turns}  # only the audited workflows
    assert g.markdown == "" and g.updated_by == ""
    blob = str(g.workflows)
    for x in s.turns:  # the stored specs carry no gold, meta or turn text
        assert x.turn.agent not in blob and x.turn.turn_id not in blob
    db.save_guidelines("g1", "## Our rules\nUV only when **nothing** supports it.", by="lead", db=sqlite_url)
    g2 = db.get_guidelines("g1", db=sqlite_url)
    assert g2.markdown.startswith("## Our rules") and g2.updated_by == "lead" and g2.workflows == g.workflows
    assert gl.guidelines_text(g2.markdown, g2.workflows).startswith("## Our rules")
    db.save_guidelines("g1", "", by="lead", db=sqlite_url)
    assert "IUV – ignored user value" in gl.guidelines_text(db.get_guidelines("g1", db=sqlite_url).markdown,
                                                            g.workflows)
    assert db.get_guidelines(
        assignment.create_audit_from_sample("g0", s, db=sqlite_url).id, db=sqlite_url).workflows == {}


def test_annotation_page_shows_guidelines_and_context_without_gold(db_url, demo):
    turns, reg = demo
    s = sampling.stratified_sample(turns, 1, seed=3)
    assignment.create_audit_from_sample("g-app", s, db=db_url, workflows=reg)
    db.save_guidelines("g-app", "## Lead rules\nRead the *state before* first.", by="lead", db=db_url)
    from db import accounts
    from ui.auth import KEY, Identity

    acc = accounts.create_account("ann", "a long enough password", role="annotator", db=db_url)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.session_state[KEY] = Identity(acc.id, acc.name, "annotator")  # as a successful sign-in leaves it
    at.switch_page("pages/2_Blind_annotation.py").run()
    assert not at.exception
    head = next(m.value for m in at.markdown if m.value.startswith("#### Turn"))
    import html
    tid = html.unescape(head.split("<code>")[1].split("</code>")[0])
    turn = next(x.turn for x in s.turns if x.turn.turn_id == tid)
    md = "\n".join(m.value for m in at.markdown)
    assert "## Lead rules" in md
    ctx = gl.turn_context(reg.get(turn.workflow), turn.state_before)
    assert gl.context_markdown(ctx) in md
    assert "Required slots" in md and "Legal next fields" in md
    for leak in ("gold", "injected", "original_agent", "acceptable (", "stratum"):
        assert leak not in md


def test_lead_edits_guidelines_on_the_adjudication_page(db_url, demo):
    turns, reg = demo
    s = sampling.stratified_sample(turns, 1, seed=3)
    assignment.create_audit_from_sample("g-edit", s, db=db_url, workflows=reg)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.switch_page("pages/6_Adjudication.py").run()
    assert not at.exception and not at.error
    box = at.text_area(key="gl_text::g-edit")
    assert "IUV – ignored user value" in box.value  # starts from the generated text
    at.text_area(key="gl_text::g-edit").set_value("## House rules\nWNF only if the slot is **filled**.").run()
    at.button(key="gl_save::g-edit").click().run()
    assert not at.exception and not at.error
    g = db.get_guidelines("g-edit", db=db_url)
    assert g.markdown.startswith("## House rules") and g.updated_by == "test-lead"
    at.button(key="gl_reset::g-edit").click().run()
    assert db.get_guidelines("g-edit", db=db_url).markdown == ""
