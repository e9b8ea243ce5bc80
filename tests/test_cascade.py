"""Cascade: configs, traces, aggregation, determinism, metrics, and clean real SGD turns."""
from __future__ import annotations

import copy

import pytest

from sage_core.data.errors import ModelUnavailableError
from sage_core.data.types import (
    AgentAct,
    Criterion,
    CriterionTrace,
    Decision,
    FailureClass,
    Gold,
    Stage,
    TurnLabel,
    Verdict,
)
from sage_core.evaluator.aggregate import TurnConfidenceMap, aggregate
from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from sage_core.science.metrics import classification_metrics
from tests.test_compiler import REGISTRY, clean_turn, make_turn


def labelled_turns():
    ok = clean_turn()
    ok.gold = Gold("acceptable")
    iuv = clean_turn()
    iuv.turn_id = "d1:3"
    del iuv.state_after["time"]
    iuv.gold = Gold("failure", "IUV")
    uv = make_turn("Yes please.", "Shall I book it?", {"location": "San Jose"},
                   {"location": "San Jose", "restaurant_name": "Golden Dragon"}, [], [],
                   [("agent", "How about Sushi Taro?")], tid="d2:1", gold=Gold("failure", "UV"))
    para = make_turn("Two people at 7 in the evening.", "Which restaurant?", {},
                     {"time": "19:00", "number_of_seats": "2"}, None, None,
                     [("agent", "What time and for how many people?")], tid="d3:1", gold=Gold("acceptable"))
    return [ok, iuv, uv, para]


@pytest.fixture(scope="module")
def core():
    return Evaluator(REGISTRY, CascadeConfig.named("sage-core", s2_backend="offline"))


def strip_latency(d):
    d = dict(d)
    d.pop("latency_ms")
    return d


def test_determinism_two_runs_identical(core):
    turns = labelled_turns()
    a = [strip_latency(v.to_dict()) for v in core.evaluate(turns)]
    b = [strip_latency(v.to_dict()) for v in Evaluator(REGISTRY, CascadeConfig.named("sage-core")).evaluate(
        copy.deepcopy(turns))]
    assert a == b
    c = [strip_latency(core.evaluate_turn(t).to_dict()) for t in turns]  # per-turn == batched
    assert a == c


def test_labels_and_metrics(core):
    turns = labelled_turns()
    vs = core.evaluate(turns)
    assert [v.label.value for v in vs] == ["acceptable", "failure", "failure", "acceptable"]
    m = classification_metrics(vs, turns)
    assert (m["n"], m["precision"], m["recall"], m["f1"]) == (4, 1.0, 1.0, 1.0)
    assert m["per_class_recall"] == {"IUV": 1.0, "UV": 1.0}
    assert m["clean_specificity"] == 1.0
    assert m["undecided_rate"] == 0.0 and m["paid_calls_per_turn"] == 0.0
    assert abs(sum(m["stage_shares"].values()) - 1.0) < 1e-3 and m["stage_shares"]["S3"] == 0.0
    assert m["s2_backend"] == "offline: span grounding + all-MiniLM-L6-v2" and m["p50_ms"] >= 0


def test_progress_callback_and_config_recorded(core):
    calls = []
    vs = core.evaluate(labelled_turns(), progress=lambda i, n: calls.append((i, n)))
    assert calls[-1] == (4, 4) and all(v.config == "sage-core" for v in vs)


def test_leave_one_out_configs():
    turns = labelled_turns()
    no_s2 = Evaluator(REGISTRY, CascadeConfig.named("no_s2")).evaluate(turns)
    assert no_s2[0].s2_backend == "none"
    assert all(tr.final.stage in (Stage.S1, Stage.NONE) for v in no_s2 for tr in v.traces)
    assert no_s2[3].label == TurnLabel.UNDECIDED  # extracted evidence needs S2
    no_s1 = Evaluator(REGISTRY, CascadeConfig.named("no_s1")).evaluate(turns)
    assert all(len(tr.attempts) == 1 and tr.attempts[0].stage in (Stage.S2_SYMBOLIC, Stage.S2_ENCODER) for v in no_s1 for tr in v.traces)
    assert [v.label.value for v in no_s1] == ["acceptable", "failure", "failure", "acceptable"]


def test_sage_llm_without_endpoint_is_a_clear_error(monkeypatch):
    from sage_core.data.settings import get_settings
    monkeypatch.delenv("SAGE_LLM_API_KEY", raising=False)
    get_settings.cache_clear()
    try:
        ev = Evaluator(REGISTRY, CascadeConfig.named("sage-llm"))
        with pytest.raises(ModelUnavailableError, match="S3 not configured: set SAGE_LLM_BASE_URL/SAGE_LLM_API_KEY"):
            ev.evaluate(labelled_turns())
    finally:
        get_settings.cache_clear()


def test_unknown_config_name():
    with pytest.raises(ValueError, match="unknown config"):
        CascadeConfig.named("sage-max")


def _trace(decision, margin, stage=Stage.S2_SYMBOLIC):
    c = Criterion("x", FailureClass.UV, {}, "state")
    v = Verdict(decision, margin, stage)
    return CriterionTrace(c, [v], v)


def test_aggregation_rules():
    assert aggregate([]) == (TurnLabel.ACCEPTABLE, 0.95)  # no criterion: not the most confident (EMPTY_ANNOTATED)
    assert aggregate([], TurnConfidenceMap("t", empty=0.8)) == (TurnLabel.ACCEPTABLE, 0.8)
    assert aggregate([_trace(Decision.FALSE, 1.0, Stage.S1), _trace(Decision.FALSE, 0.4)]) == \
        (TurnLabel.ACCEPTABLE, 0.7)  # probability scale: (1 + min margin 0.4) / 2
    assert aggregate([_trace(Decision.TRUE, 0.7), _trace(Decision.ABSTAIN, 0.1, Stage.NONE)]) == \
        (TurnLabel.FAILURE, 0.85)
    assert aggregate([_trace(Decision.TRUE, 1.0, Stage.S1), _trace(Decision.FALSE, 0.2)]) == \
        (TurnLabel.FAILURE, 0.6)  # the smallest margin ranks the turn, whichever way it decided
    assert aggregate([_trace(Decision.FALSE, 0.9), _trace(Decision.ABSTAIN, 0.1, Stage.NONE)]) == \
        (TurnLabel.UNDECIDED, 0.5)  # below every decided turn: (1 + tau) / 2 = 0.6 at tau = 0.20


def test_a_fitted_confidence_map_is_per_label_and_increasing_in_the_margin():
    import math
    cmap = TurnConfidenceMap("t", empty=0.9, failure=(4.0, 1.0), acceptable=(6.0, -2.0))
    lab, c = aggregate([_trace(Decision.TRUE, 0.5), _trace(Decision.FALSE, 0.9)], cmap)
    assert lab == TurnLabel.FAILURE and abs(c - (0.5 + 0.5 / (1 + math.exp(-(4.0 * 0.5 + 1.0))))) < 1e-9
    lab, c = aggregate([_trace(Decision.FALSE, 0.7)], cmap)
    assert lab == TurnLabel.ACCEPTABLE and abs(c - (0.5 + 0.5 / (1 + math.exp(-(6.0 * 0.7 - 2.0))))) < 1e-9
    for label in (TurnLabel.FAILURE, TurnLabel.ACCEPTABLE):
        cs = [cmap.of_margin(label, m / 10) for m in range(2, 11)]
        assert cs == sorted(cs) and len(set(cs)) == len(cs)  # ranking within a label is the margins'
    # above a coin flip: a decided turn ranks above every undecided one (0.5), even where a plain Platt line
    # would fall below 1/2
    assert 0.5 < cmap.of_margin(TurnLabel.ACCEPTABLE, 0.2) and 1 / (1 + math.exp(-(6.0 * 0.2 - 2.0))) < 0.5
    assert aggregate([], cmap) == (TurnLabel.ACCEPTABLE, 0.9)
    assert aggregate([_trace(Decision.ABSTAIN, 0.1, Stage.NONE)], cmap) == (TurnLabel.UNDECIDED, 0.5)
    with pytest.raises(ValueError, match="slope"):
        TurnConfidenceMap("bad", empty=0.9, failure=(-1.0, 0.0))  # confidence falling with the margin
    with pytest.raises(ValueError, match="empty"):
        TurnConfidenceMap("bad", empty=1.0)  # an unchecked turn may not be certain


def test_the_fitted_map_is_for_the_offline_backend_only():
    from sage_core.evaluator.aggregate import EXTRACTED_OFFLINE, extracted_map_for
    assert extracted_map_for("offline") is EXTRACTED_OFFLINE
    nli = extracted_map_for("nli")
    assert nli.failure is None and nli.acceptable is None and nli.empty == EXTRACTED_OFFLINE.empty
    assert nli.of_margin(TurnLabel.FAILURE, 0.4) == 0.7
    # the fitted map's unchecked turns are not the most confident: a sure failure ranks above them
    assert EXTRACTED_OFFLINE.of_margin(TurnLabel.FAILURE, 1.0) > EXTRACTED_OFFLINE.empty < 1.0
    # every decided verdict (margin >= tau = 0.2) is more likely right than wrong, above the undecided 0.5
    for label in (TurnLabel.FAILURE, TurnLabel.ACCEPTABLE):
        cs = [EXTRACTED_OFFLINE.of_margin(label, m / 100) for m in range(20, 101)]
        assert min(cs) > 0.5 and cs == sorted(cs) and len(set(cs)) == len(cs)


def test_turn_without_criteria_is_acceptable(core):
    t = make_turn("Thanks!", "You're welcome.", {"location": "San Jose"}, {"location": "San Jose"}, [],
                  [AgentAct("GOODBYE")])
    v = core.evaluate_turn(t)
    # nothing was checked: acceptable, but not automatically the most confident turn (aggregate.EMPTY_ANNOTATED)
    assert v.traces == [] and v.label == TurnLabel.ACCEPTABLE and v.confidence == 0.95


def test_clean_real_sgd_turns_have_few_false_positives(shared_data, core):
    from sage_core.corpora.sgd.loader import load_sgd_dialogues
    from sage_core.specs.sgd_format import load_sgd_schema
    reg = load_sgd_schema(shared_data / "sgd" / "test" / "schema.json")
    files = sorted((shared_data / "sgd" / "test").glob("dialogues_*.json"))[:3]
    turns = list(load_sgd_dialogues(files, reg))[:600]
    vs = Evaluator(reg, CascadeConfig.named("sage-core")).evaluate(turns)
    fp = [v.turn_id for v in vs if v.label == TurnLabel.FAILURE]
    assert len(turns) >= 300 and len(fp) / len(turns) <= 0.02, fp[:10]
    # the same turns without annotations (text-only agents): extraction keeps FPs low too
    for t in turns:
        t.user_values, t.agent_acts = None, None
    vs = Evaluator(reg, CascadeConfig.named("sage-core")).evaluate(turns)
    fp = [v.turn_id for v in vs if v.label == TurnLabel.FAILURE]
    assert len(fp) / len(turns) <= 0.10, fp[:10]
