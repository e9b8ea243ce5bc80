"""Adjudication: the lead resolves disagreements with a reason; consensus stored apart from raw labels."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import db
from audit import assignment as asg
from audit import consensus as cs
from audit import evaluators as ev
from audit import exports

REPO = Path(__file__).resolve().parents[1]
# turn: (alice, bob) labels; t1 and t3 disagree at the category level, t1 also at the binary level
LABELS = {"t0": (("acceptable", None), ("acceptable", None)),
          "t1": (("failure", "UV"), ("acceptable", None)),
          "t2": (("failure", "PC"), ("failure", "PC")),
          "t3": (("failure", "WNF"), ("failure", "PC"))}

AUTO_LEAD = True  # AppTests of the lead's Adjudication page run as a signed-in lead (tests/conftest.py)


@pytest.fixture
def audit(db_url):
    turns = [dict(turn_id=t, dialogue_id=f"d{i}", stratum="all", inclusion_prob=0.5,
                  payload={"turn_id": t, "user": f"user {t}", "agent": f"agent {t}", "workflow": "S_1:I"},
                  gold_label="failure", gold_class="GOLDCLASS")
             for i, t in enumerate(LABELS)]
    db.create_audit("adj", turns, [db.StratumInfo("all", 8, 4, 0.5)], db=db_url)
    for t, (a, b) in LABELS.items():
        asg.submit_label("adj", "alice", t, *a, note=f"alice on {t}", db=db_url)
        asg.submit_label("adj", "bob", t, *b, db=db_url)
    return db_url


def test_resolution_needs_a_reason_and_a_valid_label(audit):
    with pytest.raises(db.AuditError, match="reason"):
        db.adjudicate("adj", "t1", "failure", "UV", "  ", lead="lee", db=audit)
    with pytest.raises(db.AuditError):
        db.adjudicate("adj", "t1", "maybe", None, "x", lead="lee", db=audit)
    with pytest.raises(db.AuditError):
        db.adjudicate("adj", "t1", "acceptable", "UV", "x", lead="lee", db=audit)
    with pytest.raises(db.AuditError, match="not part"):
        db.adjudicate("adj", "nope", "acceptable", None, "x", lead="lee", db=audit)
    assert db.adjudications("adj", db=audit) == {}


def test_consensus_uses_resolutions_raw_labels_and_agreement_unchanged(audit):
    labels = cs.load_audit_labels("adj", db=audit)
    before = cs.audit_agreement(labels, n_resamples=200)
    raw = db.label_history("adj", db=audit)
    c0 = cs.build_consensus(labels)
    assert set(c0.labels) == {"t0", "t2"} and {d.turn_id for d in c0.unresolved} == {"t1", "t3"}

    db.adjudicate("adj", "t1", "acceptable", None, "first look", lead="lee", db=audit)
    db.adjudicate("adj", "t1", "failure", "UV", "the value is never said", lead="lee", db=audit)  # replaces
    hist = db.adjudication_history("adj", db=audit)
    assert [(r.seq, r.category) for r in hist] == [(1, "acceptable"), (2, "UV")]

    labels2, c1 = cs.load_consensus("adj", db=audit)
    assert c1.labels == {"t0": "acceptable", "t1": "UV", "t2": "PC"}
    assert c1.adjudicated == {"t1": "UV"} and c1.reasons["t1"] == "the value is never said"
    assert [d.turn_id for d in c1.unresolved] == ["t3"] and len(c1.disagreements) == 2
    assert c1.agreement_rate == pytest.approx(2 / 4)  # the resolution is not an agreement
    # raw labels and every agreement statistic are untouched
    assert db.label_history("adj", db=audit) == raw
    after = cs.audit_agreement(labels2, n_resamples=200)
    assert {k: v.value for k, v in after["unweighted"].items()} == {k: v.value for k, v in before["unweighted"].items()}
    # without resolutions: the old consensus
    assert set(cs.load_consensus("adj", db=audit, adjudicated=False)[1].labels) == {"t0", "t2"}
    # evaluators are scored on the resolved turn too
    rep = ev.compare_evaluators(c1, {"e": {"t0": "acceptable", "t1": "failure", "t2": "failure", "t3": "failure"}},
                                audit_labels=labels2, n_resamples=100)["e"]
    assert rep.n == 3
    # exports: status and reason
    rows = {r["turn_id"]: r for r in csv.DictReader(io.StringIO(exports.results_csv("adj", db=audit)))}
    assert (rows["t1"]["consensus"], rows["t1"]["consensus_status"], rows["t1"]["adjudication_reason"]) == \
        ("UV", "adjudicated", "the value is never said")
    assert rows["t3"]["consensus_status"] == "disagreed" and rows["t0"]["consensus_status"] == "agreed"


def test_adjudication_page_resolves_a_disagreement(audit):
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.switch_page("pages/6_Adjudication.py").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="adj_turn").value == "t1"
    page = "\n".join(m.value for m in at.markdown)
    assert "alice on t1" in page and "GOLDCLASS" not in page  # raters' notes yes, gold no
    assert "<b>alice</b>: failure (UV)" in page and "<b>bob</b>: acceptable" in page  # a class reads as a failure
    assert at.button(key="adj_go::t1").disabled  # no label yet
    at.radio(key="adj_label::t1").set_value("failure").run()
    at.multiselect(key="adj_class::t1").set_value(["UV"]).run()
    at.text_area(key="adj_reason::t1").set_value("nothing supports the value").run()
    at.button(key="adj_go::t1").click().run()
    assert not at.exception and not at.error
    r = db.adjudications("adj", db=audit)["t1"]
    assert (r.label, r.failure_class, r.reason, r.lead) == ("failure", "UV", "nothing supports the value", "test-lead")
    assert at.selectbox(key="adj_turn").value == "t3"  # unresolved only: t1 left the list
    # an empty reason is refused with a message, nothing stored
    at.radio(key="adj_label::t3").set_value("failure").run()
    at.button(key="adj_go::t3").click().run()
    assert any("reason" in e.value for e in at.error)
    assert "t3" not in db.adjudications("adj", db=audit)


def test_agreement_page_shows_pairs_and_fleiss_with_three_annotators(audit):
    turns = [dict(turn_id=f"u{i}", dialogue_id=f"e{i}", stratum="all", inclusion_prob=1.0, payload={})
             for i in range(4)]
    db.create_audit("three", turns, [db.StratumInfo("all", 4, 4, 1.0)], labels_per_turn=3, db=audit)
    R = {"r1": "AABA", "r2": "AABB", "r3": "ABBB"}  # tests/test_agreement_multirater.py: kappas 1/2, 1/5, 1/2
    for who, labs in R.items():
        for i, v in enumerate(labs):
            asg.submit_label("three", who, f"u{i}", *(("acceptable", None) if v == "A" else ("failure", None)),
                             db=audit)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.switch_page("pages/3_Agreement.py").run()
    at.selectbox(key="agr_audit").set_value("three").run()
    assert not at.exception and not at.error
    pairs = next(d.value for d in at.dataframe if "annotator A" in d.value.columns)
    got = {(r["annotator A"], r["annotator B"]): r["Cohen's kappa"] for _, r in pairs.iterrows()}
    assert got == {("r1", "r2"): pytest.approx(0.5), ("r1", "r3"): pytest.approx(0.2), ("r2", "r3"): pytest.approx(0.5)}
    seat = next(d.value for d in at.dataframe if "statistic" in d.value.columns)
    assert "Cohen's kappa" not in set(seat["statistic"])  # never a pooled kappa
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Fleiss' kappa"] == "0.333" and metrics["Krippendorff's alpha"] == f"{7 / 18:.3f}"


def test_annotator_notes_and_turn_ids_are_text_on_the_adjudication_page(db_url):
    # a note written to make the lead's browser fetch an image or run script, and a turn id with Markdown in it
    tid = "t`x`**b**"
    note = "see <img src=x onerror=alert(5)> **bold** ![y](http://127.0.0.1:9/z.png)"
    turn = dict(turn_id=tid, dialogue_id="d0", stratum="all", inclusion_prob=1.0,
                payload={"turn_id": tid, "user": "u", "agent": "a", "workflow": "S_1:I"})
    db.create_audit("adjx", [turn], [db.StratumInfo("all", 1, 1, 1.0)], db=db_url)
    asg.submit_label("adjx", "alice", tid, "failure", "UV", note=note, db=db_url)
    asg.submit_label("adjx", "bob", tid, "acceptable", None, db=db_url)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.switch_page("pages/6_Adjudication.py").run()
    at.selectbox(key="adj_audit").set_value("adjx").run()
    assert not at.exception and not at.error
    from markdown_it import MarkdownIt
    rendered = "".join(MarkdownIt("commonmark", {"html": True}).render(m.value) for m in at.markdown)
    assert "onerror=alert(5)&gt;" in rendered and "![y](http://127.0.0.1:9/z.png)" in rendered  # shown as text
    assert "<img" not in rendered and "<strong>bold</strong>" not in rendered and "<strong>b</strong>" not in rendered
    assert any("1 turn with two or more labels · 1 disagreement ·" in c.value for c in at.caption)
