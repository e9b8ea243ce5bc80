"""Sampling, weighting, consensus, evaluator scoring, dialogue view and exports, end to end."""
from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from test_db_support import sqlite_url  # noqa: F401  (fixture)

from audit import agreement as ag
from audit import assignment as asg
from audit import consensus as cs
from audit import dialogue_view as dv
from audit import evaluators as ev
from audit import exports, sampling, weights
from sage_core.data.types import Gold, Turn, Utterance
from sage_core.science.statistics import prf

GOLD_FAIL = {"t1": "IUV", "t5": "WNF", "t9": "PC", "t10": "UV"}


def _turn(i: int, corpus: str = "sgd", prefix: str = "") -> Turn:
    tid = f"{prefix}t{i}"
    cls = GOLD_FAIL.get(f"t{i}")
    hist = []
    for k in range(i % 4):
        hist += [Utterance("user", f"u{k}"), Utterance("agent", f"a{k}")]
    return Turn(tid, f"{prefix}d{i // 4}", "Svc_1:Book", hist, f"user {i}", f"agent {i}", {}, {"x": "1"},
                gold=Gold("failure", cls) if cls else Gold("acceptable"),
                meta={"corpus": corpus, "injected": cls or "none"})


# ------------------------------------------------------------------ sampling
# These designs put several turns of one dialogue in the sample; the default dialogue rule
# (one turn per dialogue, tests/test_audit_blinding.py) is switched off with max_per_dialogue=None.
def test_allocate_equal_hand_case():
    assert sampling.allocate_equal({"a": 3, "b": 50, "c": 50}, 60) == {"a": 3, "b": 29, "c": 28}
    assert sampling.allocate_equal({"a": 2, "b": 1}, 10) == {"a": 2, "b": 1}


def test_stratified_sample_quotas_probabilities_and_seed():
    turns = [_turn(i) for i in range(12)]
    s = sampling.stratified_sample(turns, {"clean": 4, "IUV": 1, "WNF": 1, "PC": 1, "UV": 5}, seed=3, max_per_dialogue=None)
    by = {x.name: x for x in s.strata}
    assert (by["clean"].population, by["clean"].sampled, by["clean"].inclusion_prob) == (8, 4, 0.5)
    assert by["UV"].sampled == 1 and by["UV"].inclusion_prob == 1.0  # quota above size: whole stratum
    assert len(s) == 8
    assert all(x.inclusion_prob == (0.5 if x.stratum == "clean" else 1.0) for x in s.turns)
    again = sampling.stratified_sample(turns, {"clean": 4, "IUV": 1, "WNF": 1, "PC": 1, "UV": 5}, seed=3, max_per_dialogue=None)
    assert [x.turn.turn_id for x in again.turns] == [x.turn.turn_id for x in s.turns]
    picks = {tuple(sorted(x.turn.turn_id for x in sampling.stratified_sample(turns, {"clean": 4}, seed=k, max_per_dialogue=None).turns))
             for k in range(10)}
    assert len(picks) > 1
    none = sampling.stratified_sample(turns, {"clean": 4}, seed=0, max_per_dialogue=None)
    assert set(none.design["unsampled_strata"]) == {"IUV", "WNF", "PC", "UV"}


def test_paper_protocol_splits_corpora_then_failures_and_clean():
    turns = []
    rng = np.random.default_rng(0)
    for corpus, n, share in (("sgd", 600, 0.2), ("abcd", 400, 0.3)):
        for i in range(n):
            cls = rng.choice(["IUV", "WNF", "PC", "UV"], p=[0.4, 0.3, 0.25, 0.05]) if rng.random() < share else None
            turns.append(Turn(f"{corpus}-{i}", f"{corpus}-d{i // 5}", "S_1:I", [], "u", "a", {}, {},
                              gold=Gold("failure", cls) if cls else Gold("acceptable"), meta={"corpus": corpus}))
    s = sampling.paper_protocol(turns, n=200, seed=1, max_per_dialogue=None)
    assert len(s) == 200
    per = {}
    for x in s.strata:
        per[x.name] = x.sampled
    assert sum(v for k, v in per.items() if k.startswith("sgd/")) == 100
    assert per["sgd/clean"] == 50 and per["abcd/clean"] == 50
    uv_sgd = next(x for x in s.strata if x.name == "sgd/UV")
    if uv_sgd.population < 13:  # a small class is taken whole, the rest goes to the other classes
        assert uv_sgd.sampled == uv_sgd.population and uv_sgd.inclusion_prob == 1.0
    for x in s.strata:
        assert x.inclusion_prob == pytest.approx(x.sampled / x.population)
    assert s.design["kind"] == "paper_protocol" and s.seed == 1


# ------------------------------------------------------------------- weights
def test_inverse_probability_weights_remove_oversampling_bias():
    # population: 100 turns of a rare stratum (80 % failures), 900 common (5 %): prevalence 0.125
    pop = [Turn(f"r{i}", f"rd{i}", "S_1:I", [], "u", "a", {}, {},
                gold=Gold("failure" if i < 80 else "acceptable"), meta={"s": "rare"}) for i in range(100)]
    pop += [Turn(f"c{i}", f"cd{i}", "S_1:I", [], "u", "a", {}, {},
                 gold=Gold("failure" if i < 45 else "acceptable"), meta={"s": "common"}) for i in range(900)]
    est_w, est_u = [], []
    for seed in range(300):
        s = sampling.stratified_sample(pop, {"rare": 40, "common": 40}, key=lambda t: t.meta["s"], seed=seed)
        y = [t.turn.gold.label == "failure" for t in s.turns]
        w = weights.ipw([t.inclusion_prob for t in s.turns])
        est_w.append(weights.weighted_mean(y, w))
        est_u.append(weights.weighted_mean(y))
        assert weights.estimated_population(w) == pytest.approx(1000)
    assert np.mean(est_w) == pytest.approx(0.125, abs=0.01)
    assert np.mean(est_u) == pytest.approx(0.425, abs=0.02)  # the unweighted mean is biased


def test_weighted_prf_hand_case_and_unweighted_matches_statistics_prf():
    y, p = [1, 1, 0, 0, 1], [1, 0, 1, 0, 1]
    w = [1, 3, 2, 1, 1]
    r = weights.weighted_prf(y, p, w)  # tp = 2, fp = 2, fn = 3
    assert (r["precision"], r["recall"], r["f1"]) == pytest.approx((0.5, 0.4, 4 / 9))
    u = weights.weighted_prf(y, p)
    ref = prf(y, p)
    assert all(u[k] == pytest.approx(ref[k]) for k in ("precision", "recall", "f1", "tp", "fp", "fn"))
    with pytest.raises(ValueError):
        weights.ipw([0.5, 0.0])


# ------------------------------------------------- the audit, end to end
@pytest.fixture
def labelled(sqlite_url):
    turns = [_turn(i) for i in range(12)]
    s = sampling.stratified_sample(turns, {"clean": 4, "IUV": 1, "WNF": 1, "PC": 1, "UV": 1}, seed=7, max_per_dialogue=None)
    asg.create_audit_from_sample("a1", s, db=sqlite_url)
    clean = sorted((x.turn.turn_id for x in s.turns if x.stratum == "clean"), key=lambda t: int(t[1:]))
    for x in s.turns:
        t = x.turn
        lab, cls = t.gold.label, t.gold.failure_class
        asg.submit_label("a1", "alice", t.turn_id, lab, cls, db=sqlite_url)
        if t.turn_id == "t1":
            asg.submit_label("a1", "bob", "t1", "failure", "WNF", note="order", db=sqlite_url)
        elif t.turn_id == clean[0]:
            asg.submit_label("a1", "bob", t.turn_id, "failure", "PC", db=sqlite_url)
        else:
            asg.submit_label("a1", "bob", t.turn_id, lab, cls, db=sqlite_url)
    return sqlite_url, clean, s


def test_consensus_keeps_agreements_and_lists_disagreements(labelled):
    url, clean, _ = labelled
    labels = cs.load_audit_labels("a1", db=url)
    c = cs.build_consensus(labels, "category")
    assert sorted(d.turn_id for d in c.disagreements) == sorted(["t1", clean[0]])
    d1 = next(d for d in c.disagreements if d.turn_id == "t1")
    assert d1.values == ("IUV", "WNF") and d1.annotators == ("alice", "bob") and d1.notes == ("", "order")
    assert c.labels == {"t5": "WNF", "t9": "PC", "t10": "UV", **{t: "acceptable" for t in clean[1:]}}
    assert c.n_pairs == 8 and c.weights[clean[1]] == 2.0 and c.weights["t5"] == 1.0
    binary = cs.build_consensus(labels, "label")
    assert "t1" in binary.labels and binary.labels["t1"] == "failure" and len(binary.disagreements) == 1


def test_audit_agreement_weighted_and_unweighted(labelled):
    url, clean, _ = labelled
    labels = cs.load_audit_labels("a1", db=url)
    rep = cs.audit_agreement(labels, "category", n_resamples=500)
    p = labels.pairs("category")
    assert rep["unweighted"]["raw_agreement"].value == pytest.approx(6 / 8)
    # weights: 4 failures x 1 + 4 clean x 2 = 12; disagreements weigh 1 (t1) + 2 (clean) -> 9 / 12
    assert rep["weighted"]["raw_agreement"].value == pytest.approx(9 / 12)
    assert rep["unweighted"]["cohen_kappa"].value == pytest.approx(cohen_kappa_score(p["a"], p["b"]), abs=1e-9)
    w = [1.0 if t in GOLD_FAIL else 2.0 for t in p["turn_ids"]]
    assert rep["weighted"]["cohen_kappa"].value == pytest.approx(ag.cohen_kappa(p["a"], p["b"], weights=w))
    assert rep["weighted"]["cohen_kappa"].value != pytest.approx(rep["unweighted"]["cohen_kappa"].value)
    assert rep["unweighted"]["krippendorff_alpha"].value == pytest.approx(ag.krippendorff_alpha([p["a"], p["b"]]))
    for part in rep.values():
        for est in part.values():
            assert est.lo <= est.value + 1e-12 and est.value <= est.hi + 1e-12


def test_human_vs_gold_per_class(labelled):
    url, clean, _ = labelled
    labels = cs.load_audit_labels("a1", db=url)
    rows = {(r["who"], r["gold"]): r for r in cs.human_vs_gold(labels, cs.build_consensus(labels))}
    assert rows[("alice", "all")]["agree"] == 1.0
    assert rows[("bob", "IUV")]["agree"] == 0.0 and rows[("bob", "WNF")]["agree"] == 1.0
    assert rows[("bob", "acceptable")]["agree"] == pytest.approx(3 / 4)
    assert rows[("bob", "all")]["agree"] == pytest.approx(6 / 8)
    assert rows[("bob", "all")]["agree_weighted"] == pytest.approx(9 / 12)
    assert rows[("consensus", "all")]["agree"] == 1.0 and rows[("consensus", "all")]["n"] == 6
    kap = cs.human_vs_gold_kappa(labels)
    assert kap["alice"] == pytest.approx(1.0)


def _sage(clean):
    return {"t1": "failure", "t5": "failure", "t9": "failure", "t10": "acceptable",
            clean[0]: "failure", clean[1]: "failure", clean[2]: "undecided", clean[3]: "acceptable"}


def test_evaluator_scored_against_consensus_weighted_and_unweighted(labelled):
    url, clean, _ = labelled
    labels = cs.load_audit_labels("a1", db=url)
    c = cs.build_consensus(labels, "category")
    r = ev.score_evaluator("sage-core", c, _sage(clean), exclude_class="UV", audit_labels=labels,
                           n_resamples=500)
    # consensus turns: t5, t9, t10 (failures, w=1) and clean[1:] (w=2); TP t5 t9, FP clean[1], FN t10
    assert r.n == 6 and r.missing == []
    u, w = r.prf["unweighted"], r.prf["weighted"]
    assert (u["precision"], u["recall"], u["f1"]) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    assert (w["precision"], w["recall"], w["f1"]) == pytest.approx((0.5, 2 / 3, 4 / 7))
    ex = r.prf_excluding["unweighted"]
    assert (ex["precision"], ex["recall"], ex["f1"]) == pytest.approx((2 / 3, 1.0, 0.8))
    assert r.agreement["unweighted"] == pytest.approx(4 / 6) and r.agreement["weighted"] == pytest.approx(6 / 9)
    assert r.confirmed_recall == {"n": 3, "unweighted": pytest.approx(2 / 3), "weighted": pytest.approx(2 / 3)}
    assert sorted(d.turn_id for d in r.disagreements) == sorted([clean[1], "t10"])
    assert r.f1_ci[0] == pytest.approx(2 / 3) and r.f1_ci[1] <= r.f1_ci[0] <= r.f1_ci[2]
    with pytest.raises(ValueError, match="label"):
        ev.score_evaluator("bad", c, {"t5": "maybe"})


def test_sage_vs_best_baseline_uses_paired_bootstrap(labelled):
    url, clean, _ = labelled
    c = cs.build_consensus(cs.load_audit_labels("a1", db=url), "category")
    sage = _sage(clean)
    weak = {t: "acceptable" for t in sage}
    mid = {**weak, "t5": "failure"}
    res = ev.sage_vs_best_baseline(c, sage, {"weak": weak, "mid": mid}, n_resamples=500)
    assert res.best_baseline == "mid"
    assert res.delta == pytest.approx(2 / 3 - 0.5)
    reports = ev.compare_evaluators(c, {"sage": sage, "weak": weak, "mid": mid}, n_resamples=200)
    assert reports["weak"].prf["unweighted"]["f1"] == 0.0 and reports["mid"].prf["unweighted"]["f1"] == 0.5


def test_first_failures_hand_case():
    order = {"a": ("d0", 0), "b": ("d0", 1), "c": ("d0", 2), "e": ("d1", 0), "f": ("d1", 1)}
    sources = {"A": {"a": 0, "b": 1, "c": 1, "e": 0, "f": 0},
               "B": {"a": 0, "b": 0, "c": 1, "e": 0, "f": 1},
               "E": {"a": 0, "b": 1, "e": 0, "f": 0}}
    rows = dv.first_failures(order, sources)
    assert [r.dialogue_id for r in rows] == ["d0", "d1"]
    assert rows[0].first_failure == {"A": "b", "B": "c", "E": "b"} and rows[0].complete["E"] is False
    assert rows[1].first_failure == {"A": None, "B": "f", "E": None}
    agr = dv.first_failure_agreement(rows)
    assert agr[("A", "B")] == {"n": 2, "agree": 0.0}
    assert agr[("A", "E")] == {"n": 1, "agree": 1.0}
    assert agr[("B", "E")] == {"n": 1, "agree": 0.0}


def test_audit_dialogue_view(labelled):
    url, clean, s = labelled
    labels = cs.load_audit_labels("a1", db=url)
    rows, agr = dv.audit_dialogue_view(labels, {"sage": _sage(clean)})
    gold_first = {}
    for x in sorted(s.turns, key=lambda x: len(x.turn.history)):
        if x.turn.gold.label == "failure":
            gold_first.setdefault(x.turn.dialogue_id, x.turn.turn_id)
    for r in rows:  # alice labels exactly the gold
        assert r.first_failure["alice"] == gold_first.get(r.dialogue_id)
        assert r.turn_ids == sorted(r.turn_ids, key=lambda t: int(t[1:]))
    assert agr[("alice", "bob")]["n"] == len(rows)


def test_exports_sheet_is_blind_results_and_history_are_complete(labelled, tmp_path):
    url, clean, _ = labelled
    asg.submit_label("a1", "alice", "t5", "acceptable", note="changed my mind", db=url)
    sheet = exports.annotation_sheet_csv("a1", db=url, path=tmp_path / "sheet.csv")
    rows = list(csv.DictReader(io.StringIO(sheet)))
    assert list(rows[0]) == exports.SHEET_COLUMNS and len(rows) == 8
    for banned in ("gold", "stratum", "inclusion", "injected", "IUV", "WNF", "clean", "sage"):
        assert banned not in sheet
    assert (tmp_path / "sheet.csv").read_text() == sheet
    assert all(r["label"] == "" for r in rows)
    t3 = next(r for r in rows if r["turn_id"] == "t9")
    assert t3["history"].startswith("user: u0\nagent: a0") and t3["agent"] == "agent 9"

    res = list(csv.DictReader(io.StringIO(exports.results_csv("a1", db=url, evaluators={"sage": _sage(clean)}))))
    by = {r["turn_id"]: r for r in res}
    assert by["t1"]["consensus_status"] == "disagreed" and by["t1"]["gold_class"] == "IUV"
    assert by["t9"]["consensus"] == "PC" and by["t9"]["evaluator:sage"] == "failure"
    assert by["t5"]["consensus_status"] == "disagreed"  # alice changed her label
    assert by[clean[1]]["weight"] == "2.0" and by[clean[1]]["stratum"] == "clean"

    hist = list(csv.DictReader(io.StringIO(exports.history_csv("a1", db=url))))
    t5 = [h for h in hist if h["turn_id"] == "t5" and h["annotator"] == "alice"]
    assert [(h["prev_label"], h["label"]) for h in t5] == [("", "failure"), ("failure", "acceptable")]
    assert len(hist) == 17


def test_annotators_get_blind_turns(sqlite_url):
    s = sampling.stratified_sample([_turn(i) for i in range(12)], 2, seed=0, max_per_dialogue=None)
    info = asg.create_audit_from_sample("blind", s, db=sqlite_url)
    item = asg.next_turn_for(info.id, "alice", db=sqlite_url)
    assert "gold" not in item.payload and "meta" not in item.payload
    assert item.payload["agent"].startswith("agent ") and item.payload["workflow"] == "Svc_1:Book"
    stored = {t.turn_id: t for t in __import__("db").audit_turns(info.id, db=sqlite_url)}
    assert stored[item.turn_id].turn_index == int(item.turn_id[1:]) % 4


def test_evaluator_verdict_files_are_accepted_with_their_classes(labelled):
    from sage_core.data.verdict_io import EvaluatorVerdicts
    url, clean, _ = labelled
    c = cs.build_consensus(cs.load_audit_labels("a1", db=url), "category")
    sage = _sage(clean)
    classes = {"t5": ["WNF"], "t9": ["IUV", "PC"], "t1": ["IUV"], clean[0]: ["UV"], clean[1]: ["UV"]}
    vf = EvaluatorVerdicts(name="sage-core", labels=sage, classes=classes)
    rep = ev.compare_evaluators(c, {"sage-core": vf}, n_resamples=100)["sage-core"]
    assert rep.prf["unweighted"]["f1"] == pytest.approx(2 / 3)
    # category level: t5 WNF ok, t9 PC among fired classes ok, t10 missed, clean[1] wrong,
    # clean[2] (undecided) and clean[3] acceptable ok -> 4 / 6
    assert rep.category_agreement["unweighted"] == pytest.approx(4 / 6)
    res = list(csv.DictReader(io.StringIO(exports.results_csv("a1", db=url, evaluators={"sage-core": vf}))))
    assert {r["turn_id"]: r["evaluator:sage-core"] for r in res}["t10"] == "acceptable"


def test_analyse_audit_bundles_everything(labelled):
    from audit.analysis import analyse_audit
    url, clean, _ = labelled
    sage = _sage(clean)
    mid = {**{t: "acceptable" for t in sage}, "t5": "failure"}
    res = analyse_audit("a1", {"sage-core": sage, "mid": mid}, sage="sage-core", exclude_class="UV",
                        n_resamples=300, db=url)
    assert res.evaluators["sage-core"].prf["weighted"]["f1"] == pytest.approx(4 / 7)
    assert res.paired.best_baseline == "mid"
    assert res.agreement["weighted"]["raw_agreement"].value == pytest.approx(9 / 12)
    assert len(res.consensus.disagreements) == 2 and res.dialogues
    with pytest.raises(ValueError, match="not one of"):
        analyse_audit("a1", {"mid": mid}, sage="sage-core", n_resamples=50, db=url)


def test_analyse_audit_before_any_label(sqlite_url):
    from audit.analysis import analyse_audit
    s = sampling.stratified_sample([_turn(i) for i in range(8)], 2, seed=0, max_per_dialogue=None)
    asg.create_audit_from_sample("empty", s, db=sqlite_url)
    res = analyse_audit("empty", {"x": {}}, db=sqlite_url)
    assert res.agreement is None and res.evaluators == {} and res.consensus.n_pairs == 0
