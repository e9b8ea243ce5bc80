"""Failure injectors: each changes exactly what its definition says and nothing else."""
from __future__ import annotations

import random

import pytest
from fixtures_sgd import registry  # noqa: F401  (fixture)

from sage_core.data.types import AgentAct, StateDiff, Turn, UserValue, Utterance
from sage_core.science.inject import (
    CLASSES,
    ValuePool,
    appears,
    inject,
    inject_iuv,
    inject_pc,
    inject_uv,
    inject_wnf,
    mark_clean,
    norm_text,
    pc_missing,
    turn_rng,
    wnf_candidates,
)
from sage_core.specs.sgd_format import load_sgd_schema


@pytest.fixture
def spec(registry):
    return registry.get("Restaurants_9:ReserveRestaurant")


def make_turn(**kw) -> Turn:
    user = kw.pop("user", "Book Luigi's in San Jose at 7 pm please.")
    base = dict(
        turn_id="d1:3", dialogue_id="d1", workflow="Restaurants_9:ReserveRestaurant",
        history=[Utterance("user", "I need a table for tomorrow."), Utterance("agent", "Where and when?")],
        user=user, agent="Sure, which day works for you?",
        state_before={"date": "tomorrow"},
        state_after={"date": "tomorrow", "restaurant_name": "Luigi's", "city": "San Jose", "time": "7 pm"},
        user_values=[UserValue("restaurant_name", "Luigi's", (5, 12)), UserValue("city", "San Jose", (16, 24)),
                     UserValue("time", "7 pm", (28, 32))],
        agent_acts=[AgentAct("REQUEST", "party_size")], meta={"corpus": "test"})
    base.update(kw)
    return Turn(**base)


def changed_fields(a: Turn, b: Turn) -> set[str]:
    da, db = a.to_dict(), b.to_dict()
    return {k for k in set(da) | set(db) if da.get(k) != db.get(k)}


def test_norm_and_appears():
    assert norm_text("Two People, 8th!") == " 2 people 8 "
    ctx = norm_text("Table for two at 7 pm on March 8th in San Jose")
    assert appears("2", ctx, "number")
    assert appears("19:00", ctx, "time")  # 7 pm
    assert appears("the 8th", ctx, "date")
    assert appears("San Jose", ctx)
    assert not appears("Oakland", ctx)
    assert not appears("21:45", ctx, "time")
    assert not appears("5", ctx, "number")


def test_iuv_unfilled(spec):
    t = make_turn()
    r = inject_iuv(t, spec, random.Random(0))
    slot = r.meta["mutation"]["slot"]
    assert slot in ("restaurant_name", "city", "time")
    assert slot not in r.state_after and r.meta["mutation"]["mode"] == "unfilled"
    assert {k: v for k, v in r.state_after.items()} == {k: v for k, v in t.state_after.items() if k != slot}
    assert changed_fields(t, r) == {"state_after", "gold", "meta"}
    assert (r.gold.label, r.gold.failure_class) == ("failure", "IUV")
    assert r.meta["injected"] == "IUV" and r.meta["original_agent"] == t.agent and r.meta["corpus"] == "test"
    assert t.state_after["date"] == "tomorrow" and "gold" not in t.to_dict()  # original untouched


def test_iuv_stale_keeps_old_value(spec):
    t = make_turn(user="Actually make it Friday.", state_before={"date": "tomorrow"},
                  state_after={"date": "Friday"}, user_values=[UserValue("date", "Friday", (17, 23))])
    r = inject_iuv(t, spec, random.Random(0))
    assert r.state_after == {"date": "tomorrow"} and r.meta["mutation"]["mode"] == "stale"
    # the resulting diff no longer writes the user's value
    assert not StateDiff.between(r.state_before, r.state_after).writes("date")


def test_iuv_not_applicable(spec):
    assert inject_iuv(make_turn(user_values=[]), spec, random.Random(0)) is None
    # value already held before u_t: nothing was written, nothing to drop
    t = make_turn(state_before={"city": "San Jose"}, state_after={"city": "San Jose"},
                  user_values=[UserValue("city", "San Jose")])
    assert inject_iuv(t, spec, random.Random(0)) is None


def test_wnf_requests_an_illegal_slot(spec):
    t = make_turn()
    r = inject_wnf(t, spec, random.Random(1))
    slot = r.meta["mutation"]["slot"]
    assert slot not in spec.legal_next(t.state_before)
    assert slot not in {uv.slot for uv in t.user_values}
    assert [(a.act, a.slot) for a in r.agent_acts] == [("REQUEST", slot)]
    assert r.agent.endswith("?") and r.agent != t.agent
    words = spec.describe_slot(slot).lower().split()
    assert all(w in r.agent.lower() for w in words if w not in ("the", "a"))
    assert changed_fields(t, r) == {"agent", "agent_acts", "gold", "meta"}
    assert r.meta["original_agent"] == t.agent


def test_wnf_candidates(spec):
    t = make_turn()
    cands = dict(wnf_candidates(t, spec))
    assert cands["date"] == "already filled"  # filled in s_{t-1}
    assert cands["price_range"] == "not a slot of the intent"
    assert "party_size" not in cands  # legal next
    assert "city" not in cands  # the user supplies it right now


def test_pc_confirms_with_required_slot_missing(spec):
    t = make_turn(user="Luigi's please.", state_after={"date": "tomorrow", "restaurant_name": "Luigi's"},
                  user_values=[UserValue("restaurant_name", "Luigi's", (0, 7))])
    assert pc_missing(t, spec) == ["city", "time"]
    r = inject_pc(t, spec, random.Random(0))
    assert r.meta["mutation"]["missing"] == ["city", "time"]
    assert {a.act for a in r.agent_acts} == {"CONFIRM"}
    assert {(a.slot, a.value) for a in r.agent_acts} == {("restaurant_name", "Luigi's"), ("date", "tomorrow")}
    assert "confirm" in r.agent.lower()
    assert changed_fields(t, r) == {"agent", "agent_acts", "gold", "meta"}


def test_pc_not_applicable_when_everything_is_known(spec):
    assert inject_pc(make_turn(), spec, random.Random(0)) is None  # u_t completes the required slots
    assert inject_pc(make_turn(user_values=None), spec, random.Random(0)) is None


def test_uv_writes_unsupported_value(spec):
    t = make_turn()
    pool = ValuePool([make_turn(state_after={"city": "Oakland", "restaurant_name": "Chez Panisse"})])
    r = inject_uv(t, spec, random.Random(3), pool)
    m = r.meta["mutation"]
    assert r.state_after[m["slot"]] == m["value"]
    assert m["slot"] not in {uv.slot for uv in t.user_values}
    ctx = norm_text(" ".join([u.text for u in t.history] + [t.user, t.agent]))
    assert not appears(m["value"], ctx, spec.slots[m["slot"]].value_type)
    assert m["value"] != spec.optional.get(m["slot"])  # the schema default would be supported
    assert StateDiff.between(r.state_before, r.state_after).writes(m["slot"])
    assert changed_fields(t, r) == {"state_after", "gold", "meta"}
    assert {k: v for k, v in r.state_after.items() if k != m["slot"]} == \
        {k: v for k, v in t.state_after.items() if k != m["slot"]}


def test_uv_never_picks_a_mentioned_value(registry):
    spec = registry.get("Restaurants_9:FindRestaurants")
    # price_range is the only candidate slot; every non-default value is mentioned
    t = make_turn(workflow=spec.id, user="Something cheap or moderate or pricey in San Jose.",
                  state_before={}, state_after={"city": "San Jose"},
                  user_values=[UserValue("city", "San Jose")], agent_acts=[])
    assert inject_uv(t, spec, random.Random(0), ValuePool()) is None
    t2 = make_turn(workflow=spec.id, user="Something cheap in San Jose.", state_before={},
                   state_after={"city": "San Jose"}, user_values=[UserValue("city", "San Jose")], agent_acts=[])
    for seed in range(5):
        r = inject_uv(t2, spec, random.Random(seed), ValuePool())
        assert r.state_after["price_range"] in ("moderate", "pricey")


def test_seeded_and_dispatch(spec):
    t = make_turn()
    pool = ValuePool([make_turn(state_after={"city": "Oakland"})])
    for c in CLASSES:
        a = inject(t, c, spec, turn_rng(0, t.turn_id, c), pool)
        b = inject(t, c, spec, turn_rng(0, t.turn_id, c), pool)
        assert (a is None) == (b is None)
        if a is not None:
            assert a.to_dict() == b.to_dict() and a.gold.failure_class == c
    with pytest.raises(ValueError):
        inject(t, "XYZ", spec, random.Random(0))


def test_mark_clean(spec):
    t = make_turn()
    c = mark_clean(t)
    assert (c.gold.label, c.gold.failure_class) == ("acceptable", None)
    assert changed_fields(t, c) == {"gold"}


def test_injectors_on_real_sgd(shared_data, sgd_schema_path):
    from sage_core.corpora.sgd.loader import load_sgd_dialogues
    reg = load_sgd_schema(sgd_schema_path)
    turns = list(load_sgd_dialogues(shared_data / "sgd" / "test" / "dialogues_001.json", reg))[:300]
    pool = ValuePool(turns)
    seen = {c: 0 for c in CLASSES}
    for t in turns:
        spec = reg.get(t.workflow)
        for c in CLASSES:
            r = inject(t, c, spec, turn_rng(0, t.turn_id, c), pool)
            if r is None:
                continue
            seen[c] += 1
            allowed = {"IUV": {"state_after"}, "UV": {"state_after"},
                       "WNF": {"agent", "agent_acts"}, "PC": {"agent", "agent_acts"}}[c]
            assert changed_fields(t, r) <= allowed | {"gold", "meta"}
            if c == "WNF":
                assert r.agent_acts[0].slot not in spec.legal_next(t.state_before)
            if c == "PC":
                assert pc_missing(r, spec)
            if c == "IUV":
                uvs = {u.slot: u.value for u in t.user_values}
                s = r.meta["mutation"]["slot"]
                assert r.state_after.get(s) != uvs[s]
    assert all(v > 0 for v in seen.values()), seen


def test_pc_not_applicable_when_an_accepted_offer_fills_the_slot(spec):
    # "book me that one": the tracker fills time from the agent's earlier offer, so the agent knows it
    t = make_turn(user="Yes, book that.", state_before={"date": "tomorrow", "restaurant_name": "Luigi's",
                                                        "city": "San Jose"},
                  state_after={"date": "tomorrow", "restaurant_name": "Luigi's", "city": "San Jose",
                               "time": "6:30 pm"}, user_values=[])
    assert pc_missing(t, spec) == []
    assert inject_pc(t, spec, random.Random(0)) is None


def test_wnf_skips_slots_the_tracker_cleared(spec):
    # intent switch: s_t no longer holds date, so asking for it again is legitimate
    t = make_turn(state_before={"date": "tomorrow", "party_size": "2"}, state_after={"party_size": "2"},
                  user_values=[])
    cands = dict(wnf_candidates(t, spec))
    assert "date" not in cands and cands["party_size"] == "already filled"
