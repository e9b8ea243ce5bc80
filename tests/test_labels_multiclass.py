"""Labels acceptable / failure / unsure, several failure classes per failure (issue 10, part 4).

Stored form: ``failure_class`` holds the canonical class list ("IUV,UV", CLASSES order); unsure is a
missing label in every agreement coefficient and sends its turn to adjudication; per-class agreement
is Cohen's kappa on a yes/no per class. Hand-computed cases below.
"""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import db
from audit import assignment as asg
from audit import consensus as cs
from audit import exports

REPO = Path(__file__).resolve().parents[1]
AUTO_LEAD = True  # the Adjudication AppTest runs as a signed-in lead (tests/conftest.py)


def _audit(url, name, labels, gold=("failure", "IUV")):
    """An audit whose turns get (alice, bob) labels; a label is (label, classes) or None (not labelled)."""
    turns = [dict(turn_id=t, dialogue_id=f"d{i}", stratum="all", inclusion_prob=1.0,
                  payload={"turn_id": t, "user": f"user {t}", "agent": f"agent {t}", "workflow": "S_1:I"},
                  gold_label=gold[0], gold_class=gold[1])
             for i, t in enumerate(labels)]
    db.create_audit(name, turns, [db.StratumInfo("all", len(turns), len(turns), 1.0)], db=url)
    for t, pair in labels.items():
        for who, lab in zip(("alice", "bob"), pair):
            if lab is not None:
                asg.submit_label(name, who, t, lab[0], lab[1], db=url)


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("label, classes, expected", [
    ("unsure", None, ("unsure", None)),
    ("unsure", "", ("unsure", None)),
    ("failure", "PC", ("failure", "PC")),  # an old single-class value reads unchanged
    ("failure", "UV,IUV", ("failure", "IUV,UV")),  # canonical: CLASSES order
    ("failure", " UV , IUV ", ("failure", "IUV,UV")),
    ("failure", ["UV", "WNF", "IUV"], ("failure", "IUV,WNF,UV")),
    ("failure", None, ("failure", None)),
    ("acceptable", [], ("acceptable", None)),
])
def test_valid_labels_are_canonical(label, classes, expected):
    assert db.validate_label(label, classes) == expected


@pytest.mark.parametrize("label, classes, match", [
    ("unsure", "UV", "no failure class"),
    ("acceptable", ["IUV", "UV"], "no failure class"),
    ("failure", "IUV,IUV", "twice"),
    ("failure", ["UV", "UV"], "twice"),
    ("failure", "IUV,XX", "XX"),
    ("failure", "iuv", "iuv"),
    ("maybe", None, "label must be one of"),
])
def test_invalid_labels_are_refused(label, classes, match):
    with pytest.raises(db.AuditError, match=match):
        db.validate_label(label, classes)


def test_category_of_a_class_set_and_old_rows():
    assert db.category("failure", "UV,IUV") == "IUV,UV"
    assert db.category("failure", "PC") == "PC"
    assert db.category("failure", None) == "failure"
    assert db.category("unsure", None) == "unsure"
    assert db.split_classes("IUV,UV") == ("IUV", "UV") and db.join_classes(["UV", "IUV"]) == "IUV,UV"


def test_lead_resolution_may_have_two_classes_but_is_never_unsure(db_url):
    _audit(db_url, "adj2", {"t0": (("failure", "IUV"), ("unsure", None))})
    with pytest.raises(db.AuditError, match="label must be one of"):
        db.adjudicate("adj2", "t0", "unsure", None, "can't tell", lead="lee", db=db_url)
    r = db.adjudicate("adj2", "t0", "failure", ["UV", "IUV"], "both", lead="lee", db=db_url)
    assert (r.label, r.failure_class, r.category) == ("failure", "IUV,UV", "IUV,UV")


# ------------------------------------------------------------------ round trip
def test_round_trip_draft_submit_history_exports_and_imports(db_url, tmp_path):
    _audit(db_url, "rt", {"t0": (None, None), "t1": (None, None)})
    d = asg.save_draft("rt", "alice", "t0", "failure", ["UV", "IUV"], "=1+1 both", db=db_url)
    assert asg.get_draft("rt", "alice", "t0", db=db_url).failure_class == "IUV,UV"
    asg.submit_label("rt", "alice", "t0", "failure", "UV,IUV", "=1+1 both", db=db_url, expected_version=d.seq)
    with pytest.raises(asg.ChangedElsewhereError):  # the version check still holds for class lists
        asg.save_draft("rt", "alice", "t0", "failure", "PC", db=db_url, expected_version=d.seq)
    asg.submit_label("rt", "alice", "t0", "unsure", None, db=db_url)
    asg.submit_label("rt", "bob", "t0", "failure", ["WNF", "PC"], db=db_url)
    hist = db.label_history("rt", turn_id="t0", db=db_url)
    assert [(r.annotator, r.label, r.failure_class, r.prev_label, r.prev_class) for r in hist] == [
        ("alice", "failure", "IUV,UV", None, None), ("alice", "unsure", None, "failure", "IUV,UV"),
        ("bob", "failure", "WNF,PC", None, None)]

    rows = list(csv.DictReader(io.StringIO(exports.history_csv("rt", db=db_url))))
    sub = [(r["annotator"], r["kind"], r["label"], r["failure_class"], r["prev_class"]) for r in rows
           if r["kind"] == "submit"]
    assert sub == [("alice", "submit", "failure", "IUV,UV", ""), ("alice", "submit", "unsure", "", "IUV,UV"),
                   ("bob", "submit", "failure", "WNF,PC", "")]
    assert {r["note"] for r in rows} >= {"'=1+1 both"}  # formula neutralising stays
    res = {r["turn_id"]: r for r in csv.DictReader(io.StringIO(exports.results_csv("rt", db=db_url)))}
    assert res["t0"]["consensus_status"] == "disagreed"  # unsure vs failure
    assert {res["t0"]["rater1_class"], res["t0"]["rater2_class"]} == {"", "WNF,PC"}
    jl = [json.loads(x) for x in exports.history_jsonl("rt", db=db_url).splitlines()]
    assert [x["failure_class"] for x in jl if x["kind"] == "submit"] == ["IUV,UV", "", "WNF,PC"]

    # bundle -> another server: same history, class lists and all
    other = f"sqlite:///{tmp_path / 'other.db'}"
    db.adjudicate("rt", "t0", "failure", ["PC", "IUV"], "both are there", lead="lee", db=db_url)
    exports.import_audit_bundle(exports.audit_bundle_jsonl("rt", db=db_url), db=other)
    key = [(r.annotator, r.seq, r.kind, r.label, r.failure_class, r.prev_class, r.note)
           for r in db.label_history("rt", kinds=("draft", "submit"), db=db_url)]
    assert [(r.annotator, r.seq, r.kind, r.label, r.failure_class, r.prev_class, r.note)
            for r in db.label_history("rt", kinds=("draft", "submit"), db=other)] == key
    assert db.adjudications("rt", db=other)["t0"].failure_class == "IUV,PC"

    # a bundle with a bad class list is refused, naming the turn
    bad = exports.audit_bundle_jsonl("rt", db=db_url).replace('"WNF,PC"', '"WNF,WNF"')
    with pytest.raises(db.AuditError, match="t0.*twice"):
        exports.import_audit_bundle(bad, db=f"sqlite:///{tmp_path / 'third.db'}")

    # filled sheets: a CSV cell "UV,IUV" and a JSONL list both land canonical
    sheet = "turn_id,label,failure_class,note\nt1,failure,\"UV,IUV\",\n"
    assert exports.import_sheet_csv("rt", "carol", sheet, db=db_url) == 1
    assert db.current_labels("rt", db=db_url)["t1"]["carol"].failure_class == "IUV,UV"
    js = json.dumps({"turn_id": "t1", "label": "failure", "failure_class": ["PC", "WNF"]}) + "\n"
    assert exports.import_sheet_jsonl("rt", "dan", js, db=db_url) == 1
    assert db.current_labels("rt", db=db_url)["t1"]["dan"].failure_class == "WNF,PC"
    with pytest.raises(db.AuditError, match="sheet row 2"):
        exports.import_sheet_csv("rt", "erin", "turn_id,label,failure_class\nt1,unsure,UV\n", db=db_url)


# ------------------------------------------------------------------ statistics
A, F, U = ("acceptable", None), ("failure", None), ("unsure", None)


def test_unsure_is_missing_in_agreement_and_goes_to_adjudication(db_url):
    # label level without the unsure turns: a = A F F A, b = A F A A -> p_o = 3/4,
    # p_e = (2/4)(3/4) + (2/4)(1/4) = 1/2, kappa = 1/2. Krippendorff's alpha on the same four units:
    # o_AA = 4, o_FF = 2, o_AF = o_FA = 1, n = 8, n_A = 5, n_F = 3:
    # D_o = 2/8, D_e = 2*5*3 / (8*7) = 30/56, alpha = 1 - (2/8)/(30/56) = 8/15.
    # (With unsure as a third category, kappa would be 1/4 on six turns.)
    _audit(db_url, "uns", {"t0": (A, A), "t1": (F, F), "t2": (F, A), "t3": (A, A),
                           "t4": (U, F), "t5": (A, U), "t6": (U, U)})
    labels = cs.load_audit_labels("uns", db=db_url)
    p = labels.pairs("label")
    assert p["turn_ids"] == ["t0", "t1", "t2", "t3"] and p["n_unsure"] == 3
    assert labels.unsure_count() == {"labels": 4, "turns": 3}
    rep = cs.audit_agreement(labels, level="label", n_resamples=50)["unweighted"]
    assert rep["cohen_kappa"].value == pytest.approx(0.5) and rep["cohen_kappa"].n == 4
    assert rep["raw_agreement"].value == pytest.approx(0.75)
    assert rep["krippendorff_alpha"].value == pytest.approx(8 / 15)
    pw = cs.pairwise_agreement(labels, "label")
    assert (pw[0]["n"], pw[0]["cohen_kappa"]) == (4, pytest.approx(0.5))
    # consensus: every turn with an unsure label (even both unsure) is a disagreement
    c = cs.build_consensus(labels, "label")
    assert c.labels == {"t0": "acceptable", "t1": "failure", "t3": "acceptable"}
    assert [d.turn_id for d in c.disagreements] == ["t2", "t4", "t5", "t6"]
    assert c.disagreements[3].values == ("unsure", "unsure")
    db.adjudicate("uns", "t6", "acceptable", None, "reads fine", lead="lee", db=db_url)
    _, c2 = cs.load_consensus("uns", level="label", db=db_url)
    assert c2.labels["t6"] == "acceptable" and c2.binary["t6"] == 0
    # gold comparisons skip unsure labels (gold is failure everywhere here)
    hvg = {(r["who"], r["gold"]): r for r in cs.human_vs_gold(labels, None, "label")}
    assert (hvg[("alice", "all")]["n"], hvg[("alice", "all")]["agree"]) == (5, pytest.approx(2 / 5))  # t1, t2
    assert (hvg[("bob", "all")]["n"], hvg[("bob", "all")]["agree"]) == (5, pytest.approx(2 / 5))  # t1, t4
    assert cs.is_failure("unsure") is False


def test_per_class_kappa_and_set_level_category(db_url):
    # per class, on t0..t3 (t4 has an unsure label):
    #   IUV: a = y y n n, b = y y n n -> kappa 1
    #   UV:  a = y n n n, b = n n y n -> p_o = 1/2, p_e = (1/4)(1/4) + (3/4)(3/4) = 5/8,
    #        kappa = (1/2 - 5/8) / (3/8) = -1/3; alpha: o_nn = 4, o_yn + o_ny = 4, n = 8, n_y = 2,
    #        D_o = 1/2, D_e = 2*2*6 / 56 = 3/7, alpha = 1 - 7/6 = -1/6
    #   WNF, PC: "no" everywhere -> kappa undefined (NaN)
    _audit(db_url, "pc", {"t0": (("failure", ["IUV", "UV"]), ("failure", "IUV")),
                          "t1": (("failure", "IUV"), ("failure", "IUV")),
                          "t2": (A, ("failure", "UV")), "t3": (A, A), "t4": (("failure", "PC"), U)})
    labels = cs.load_audit_labels("pc", db=db_url)
    rows = {r["class"]: r for r in cs.per_class_agreement(labels)}
    assert rows["IUV"]["cohen_kappa"] == pytest.approx(1.0) and rows["IUV"]["both_yes"] == 2
    assert (rows["UV"]["n"], rows["UV"]["a_yes"], rows["UV"]["b_yes"], rows["UV"]["both_yes"]) == (4, 1, 1, 0)
    assert rows["UV"]["agreement"] == pytest.approx(0.5)
    assert rows["UV"]["cohen_kappa"] == pytest.approx(-1 / 3)
    assert rows["UV"]["krippendorff_alpha"] == pytest.approx(-1 / 6)
    assert math.isnan(rows["WNF"]["cohen_kappa"]) and rows["PC"]["a_yes"] == 0
    # category level: the class set must match exactly
    c = cs.build_consensus(labels, "category")
    assert c.labels == {"t1": "IUV", "t3": "acceptable"}
    assert [(d.turn_id, d.values) for d in c.disagreements][0] == ("t0", ("IUV,UV", "IUV"))
    db.adjudicate("pc", "t0", "failure", ["UV", "IUV"], "both values", lead="lee", db=db_url)
    assert cs.load_consensus("pc", db=db_url)[1].labels["t0"] == "IUV,UV"


def test_adjudication_page_resolves_with_two_classes(db_url):
    _audit(db_url, "adjp", {"t0": (U, ("failure", "UV")), "t1": (A, A)})
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.switch_page("pages/6_Adjudication.py").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="adj_turn").value == "t0"  # the unsure turn is up for adjudication
    assert at.radio(key="adj_label::t0").options == ["acceptable", "failure"]
    at.radio(key="adj_label::t0").set_value("failure").run()
    at.multiselect(key="adj_class::t0").set_value(["UV", "IUV"]).run()
    at.text_area(key="adj_reason::t0").set_value("ignores the date and invents a time").run()
    at.button(key="adj_go::t0").click().run()
    assert not at.exception and not at.error
    r = db.adjudications("adjp", db=db_url)["t0"]
    assert (r.label, r.failure_class, r.lead) == ("failure", "IUV,UV", "test-lead")
    # another session, all disagreements: the stored list comes back as the selection
    again = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    again.switch_page("pages/6_Adjudication.py").run()
    again.toggle(key="adj_open").set_value(False).run()
    assert again.selectbox(key="adj_turn").value == "t0"
    assert again.multiselect(key="adj_class::t0").value == ["IUV", "UV"]


def test_agreement_page_shows_unsure_count_and_per_class_kappa(db_url):
    _audit(db_url, "agp", {"t0": (("failure", ["IUV", "UV"]), ("failure", "IUV")),
                           "t1": (("failure", "IUV"), ("failure", "IUV")),
                           "t2": (A, ("failure", "UV")), "t3": (A, A), "t4": (("failure", "PC"), U)})
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.switch_page("pages/3_Agreement.py").run()
    at.selectbox(key="agr_audit").set_value("agp").run()
    assert not at.exception and not at.error
    assert any("1 unsure labels (1 doubly-labelled turns left out" in c.value for c in at.caption)
    pc = next(d.value for d in at.dataframe if "rater 1 yes" in d.value.columns).set_index("class")
    assert pc.loc["UV", "Cohen's kappa"] == pytest.approx(-1 / 3) and pc.loc["IUV", "Cohen's kappa"] == 1.0


def test_dialogue_view_counts_unsure_as_not_labelled(db_url):
    from audit.dialogue_view import audit_dialogue_view
    _audit(db_url, "dv", {"t0": (U, F), "t1": (A, A)})
    rows, _ = audit_dialogue_view(cs.load_audit_labels("dv", db=db_url))
    r0 = next(r for r in rows if r.turn_ids == ["t0"])
    assert r0.complete == {"alice": False, "bob": True} and r0.first_failure == {"alice": None, "bob": "t0"}


def test_shortcut_script_binds_the_new_keys_and_has_no_tag_inside():
    """The browser test (tests/browser/test_browser_access.py) drives the keys; here the constant itself:
    u, 0 (clear), 1-4 (toggle the checkbox inputs), and no '<tag' inside the script body, which made
    st.html drop the listener (the page then had no shortcuts at all)."""
    import re

    from ui.shortcuts import SCRIPT
    body = SCRIPT.split("<script>", 1)[1].rsplit("</script>", 1)[0]
    assert not re.search(r"</?[A-Za-z]", body)
    assert 'k === "u"' in body and "clearClasses()" in body and "input.click()" in body
    assert 'var CLASSES = ["IUV", "WNF", "PC", "UV"]' in body


def test_evaluator_category_against_a_human_class_set():
    from audit.evaluators import _evaluator_category
    assert _evaluator_category("failure", ["PC", "UV", "IUV"], "IUV,UV") == "IUV,UV"  # covers the set
    assert _evaluator_category("failure", ["IUV"], "IUV,UV") == "IUV"  # misses UV: its own set
    assert _evaluator_category("failure", ["UV", "IUV"], "PC") == "IUV,UV"
    assert _evaluator_category("failure", ["UV"], "UV") == "UV"  # single classes as before
    assert _evaluator_category("acceptable", None, "IUV,UV") == "acceptable"
