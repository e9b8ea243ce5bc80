"""Extraction scoring: per-act, per-slot and value counts on hand-made turns with a fixed extractor."""
from __future__ import annotations

import math

from sage_core.science.extraction_eval import COMMIT, Counts, measure_extraction
from sage_core.data.types import AgentAct, Turn, UserValue

from fixtures_sgd import registry  # noqa: F401  (fixture)


def _turn(tid, agent, acts, uvs):
    return Turn(turn_id=tid, dialogue_id="d", workflow="Restaurants_9:ReserveRestaurant", history=[],
                user="u", agent=agent, state_before={}, state_after={}, user_values=uvs, agent_acts=acts)


PRED = {  # what the "extractor" returns per turn id
    "t1": ([UserValue("city", "san jose")], [AgentAct("REQUEST", "time", None, 0.8)]),
    "t2": ([UserValue("city", "Oakland"), UserValue("time", "7 pm")], [AgentAct("CONFIRM", None, None, 0.9)]),
    "t3": ([], []),
}


def fake_evidence(turn, spec):
    assert turn.user_values is None and turn.agent_acts is None  # the scorer strips the annotations
    return PRED[turn.turn_id]


def test_counts_per_act_slot_and_value(registry):
    turns = [
        _turn("t1", "a", [AgentAct("REQUEST", "time"), AgentAct("REQUEST", "date")], [UserValue("city", "San Jose")]),
        _turn("t2", "b", [AgentAct("NOTIFY_SUCCESS")], [UserValue("city", "San Jose"), UserValue("time", "19:00")]),
        _turn("t3", "c", [AgentAct("CONFIRM", "city", "X")], None),
    ]
    sc = measure_extraction(turns, registry, fake_evidence,
                            value_match=lambda a, b, t: a.lower() == b.lower() or {a, b} == {"19:00", "7 pm"})
    assert sc.turns == 3
    # requests: gold {time, date}, pred {time} -> tp 1, fn 1 (date)
    assert (sc.requests.tp, sc.requests.fp, sc.requests.fn) == (1, 0, 1)
    assert sc.request_slots["date"].recall == 0.0 and sc.request_slots["time"].precision == 1.0
    # acts per turn: REQUEST t1 tp; CONFIRM: pred t2 (fp), gold t3 (fn); NOTIFY_SUCCESS gold t2 (fn)
    a = sc.acts
    assert (a["REQUEST"].tp, a["REQUEST"].fp, a["REQUEST"].fn) == (1, 0, 0)
    assert (a["CONFIRM"].tp, a["CONFIRM"].fp, a["CONFIRM"].fn) == (0, 1, 1)
    assert (a["NOTIFY_SUCCESS"].tp, a["NOTIFY_SUCCESS"].fn) == (0, 1)
    # the combined commit act: t2 gold (NOTIFY_SUCCESS) and pred (CONFIRM) -> tp; t3 gold only -> fn
    assert (a[COMMIT].tp, a[COMMIT].fp, a[COMMIT].fn) == (1, 0, 1)
    # values: t1 city match; t2 city wrong (fp + fn), time match through value_match; t3 has no gold values
    assert (sc.values.tp, sc.values.fp, sc.values.fn) == (2, 1, 1)
    assert sc.value_slots["city"].precision == 0.5 and sc.value_slots["time"].recall == 1.0
    assert (sc.values_slot_only.tp, sc.values_slot_only.fp, sc.values_slot_only.fn) == (3, 0, 0)


def test_counts_undefined_ratios_are_nan():
    c = Counts()
    assert math.isnan(c.precision) and math.isnan(c.recall) and math.isnan(c.f1)
    c.add({1, 2}, {2, 3})
    assert (c.tp, c.fp, c.fn, c.precision, c.recall) == (1, 1, 1, 0.5, 0.5)
