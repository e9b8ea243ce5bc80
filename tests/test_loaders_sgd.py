"""SGD loader on the real test-split dialogues, plus SGD-X remapping."""
from __future__ import annotations

import json

import pytest

from sage_core.corpora.sgd.loader import load_sgd_dialogues, remap_turns, sgdx_slot_map
from sage_core.data.errors import SageInputError
from sage_core.data.slice_io import turn_from_dict, validate_against
from sage_core.data.types import StateDiff
from sage_core.specs.sgd_format import load_sgd_schema


@pytest.fixture(scope="module")
def sgd_registry(sgd_schema_path):
    return load_sgd_schema(sgd_schema_path)


@pytest.fixture(scope="module")
def sgd_turns(shared_data, sgd_registry):
    return load_sgd_dialogues(shared_data / "sgd" / "test", sgd_registry)


@pytest.fixture(scope="module")
def raw_001(shared_data):
    with open(shared_data / "sgd" / "test" / "dialogues_001.json") as fh:
        return {d["dialogue_id"]: d for d in json.load(fh)}


def test_counts_match_raw_system_turns(shared_data, sgd_turns):
    n_system = n_none = 0
    for f in sorted((shared_data / "sgd" / "test").glob("dialogues_*.json")):
        for d in json.load(open(f)):
            prev = None
            for t in d["turns"]:
                if t["speaker"] == "SYSTEM":
                    n_system += 1
                    svc = t["frames"][0]["service"]
                    ufr = next(fr for fr in prev["frames"] if fr["service"] == svc)
                    n_none += ufr["state"]["active_intent"] == "NONE"
                else:
                    prev = t
    assert len(sgd_turns) == n_system - n_none
    assert sgd_turns.stats.skipped["active intent NONE"] == n_none > 0
    assert sgd_turns.stats.files == 11
    assert len({t.turn_id for t in sgd_turns}) == len(sgd_turns)


def test_known_first_turn(sgd_turns):
    t = next(t for t in sgd_turns if t.turn_id == "1_00000:1")
    assert t.workflow == "Restaurants_2:ReserveRestaurant"
    assert t.history == []
    assert t.user.startswith("Hi, could you get me a restaurant booking on the 8th")
    assert t.state_before == {}
    assert t.state_after == {"date": "the 8th"}
    assert [(a.act, a.slot) for a in t.agent_acts] == [
        ("REQUEST", "time"), ("REQUEST", "restaurant_name"), ("REQUEST", "location")]
    uv = t.user_values[0]
    assert (uv.slot, uv.value) == ("date", "the 8th") and t.user[uv.span[0]:uv.span[1]] == "the 8th"
    assert t.gold is None and t.meta["corpus"] == "sgd" and t.meta["file"] == "dialogues_001.json"
    nxt = next(x for x in sgd_turns if x.turn_id == "1_00000:3")
    assert nxt.state_before == t.state_after
    assert [h.speaker for h in nxt.history] == ["user", "agent"]


def test_spans_and_values_consistent(sgd_turns):
    n_spans = 0
    for t in sgd_turns:
        for uv in t.user_values:
            if uv.span is not None:
                n_spans += 1
                assert t.user[uv.span[0]:uv.span[1]] == uv.value
    assert n_spans > 1000


def test_states_chain_within_service(sgd_turns):
    """s_{t-1} of a turn is the s_t of the previous system turn when the service is the same."""
    prev = None
    checked = 0
    for t in sgd_turns:
        if prev is not None and prev.dialogue_id == t.dialogue_id:
            pi, ti = int(prev.turn_id.split(":")[1]), int(t.turn_id.split(":")[1])
            if ti == pi + 2 and prev.workflow.split(":")[0] == t.workflow.split(":")[0]:
                assert t.state_before == prev.state_after, t.turn_id
                checked += 1
        prev = t
    assert checked > 4000


def test_unchanged_slots_are_not_diffs(sgd_turns, raw_001):
    """A slot whose previous surface form is still among SGD's alternatives is not written."""
    checked = 0
    for t in sgd_turns:
        if t.meta["file"] != "dialogues_001.json":
            continue
        idx = int(t.turn_id.split(":")[1])
        user_turn = raw_001[t.dialogue_id]["turns"][idx - 1]
        svc = t.workflow.split(":")[0]
        raw = next(fr for fr in user_turn["frames"] if fr["service"] == svc)["state"]["slot_values"]
        diff = StateDiff.between(t.state_before, t.state_after)
        for slot, old in t.state_before.items():
            if slot in raw and old in raw[slot]:
                assert not diff.writes(slot), (t.turn_id, slot)
                checked += 1
        for slot, val in t.state_after.items():
            assert val in raw[slot]
    assert checked > 500


def test_round_trip_through_slice_format(sgd_turns, sgd_registry):
    sample = sgd_turns[:300]
    again = [turn_from_dict(t.to_dict()) for t in sample]
    assert [a.to_dict() for a in again] == [t.to_dict() for t in sample]
    validate_against(again, sgd_registry)


def _write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(json.dumps(obj) if not isinstance(obj, str) else obj)
    return p


def _tiny_dialogue(slot="date"):
    return [{"dialogue_id": "x_1", "services": ["Restaurants_2"], "turns": [
        {"speaker": "USER", "utterance": "book on the 8th", "frames": [{
            "service": "Restaurants_2", "slots": [], "actions": [],
            "state": {"active_intent": "ReserveRestaurant", "requested_slots": [],
                      "slot_values": {slot: ["the 8th"]}}}]},
        {"speaker": "SYSTEM", "utterance": "What time?", "frames": [{
            "service": "Restaurants_2", "slots": [],
            "actions": [{"act": "REQUEST", "slot": "time", "values": []}]}]}]}]


def test_unknown_slot_names_file_dialogue_and_field(tmp_path, sgd_registry):
    p = _write(tmp_path, "dialogues_001.json", _tiny_dialogue("bogus_slot"))
    with pytest.raises(SageInputError) as e:
        load_sgd_dialogues(p, sgd_registry)
    msg = str(e.value)
    assert "dialogues_001.json" in msg and "x_1" in msg and "bogus_slot" in msg
    assert e.value.field == "state_after.bogus_slot"


def test_malformed_and_empty_inputs(tmp_path, sgd_registry):
    bad = _write(tmp_path, "bad.json", '[{"dialogue_id": "a",\n "turns": [}]')
    with pytest.raises(SageInputError) as e:
        load_sgd_dialogues(bad, sgd_registry)
    assert e.value.line == 2 and e.value.file == str(bad)
    empty = _write(tmp_path, "empty.json", [])
    with pytest.raises(SageInputError, match="no turns"):
        load_sgd_dialogues(empty, sgd_registry)
    with pytest.raises(SageInputError, match="not found"):
        load_sgd_dialogues(tmp_path / "missing.json", sgd_registry)
    ok = load_sgd_dialogues(_write(tmp_path, "ok.json", _tiny_dialogue()), sgd_registry)
    assert len(ok) == 1 and ok[0].state_after == {"date": "the 8th"}


@pytest.mark.parametrize("variant", ["v1", "v2", "v3", "v4", "v5"])
def test_sgdx_variant_remap(shared_data, sgd_registry, sgd_turns, variant):
    vreg = load_sgd_schema(shared_data / "sgd" / "sgd_x" / variant / "schema.json")
    assert len(vreg) == len(sgd_registry)
    mapping = sgdx_slot_map(sgd_registry, vreg)
    assert set(mapping) == set(sgd_registry.services())
    assert mapping.services["Restaurants_2"] == "Restaurants_2" + variant[1]
    # bijective per service and not the identity (SGD-X renames slots)
    for svc, m in mapping.items():
        assert len(set(m.values())) == len(m)
    assert any(o != v for m in mapping.values() for o, v in m.items())
    for spec in sgd_registry:  # the alignment carries each intent's required slots over
        vspec = vreg.get(f"{mapping.services[spec.service]}:{mapping.intents[(spec.service, spec.intent)]}")
        assert [mapping[spec.service][s] for s in spec.required] == vspec.required
    sample = sgd_turns[:500]
    remapped = remap_turns(sample, mapping, vreg)
    validate_against(remapped, vreg)
    for a, b in zip(sample, remapped):
        svc = a.workflow.split(":")[0]
        assert b.workflow.split(":")[0] == mapping.services[svc]
        assert list(b.state_after.values()) == list(a.state_after.values())
        assert set(b.state_after) == {mapping[svc][s] for s in a.state_after}
        assert b.user == a.user
    assert sample[0].workflow == "Restaurants_2:ReserveRestaurant"  # originals untouched


def test_sgdx_turns_evaluate_like_the_originals(shared_data, sgd_registry, sgd_turns):
    """Remapped turns are judged the same way; an ignored user value is caught under both schemas."""
    import copy

    from sage_core.evaluator import cascade

    sample = [t for t in sgd_turns if t.meta["file"] == "dialogues_002.json"][:200]
    broken = copy.deepcopy(next(t for t in sample if t.user_values and t.user_values[0].slot in t.state_after
                                and t.user_values[0].slot not in t.state_before))
    broken.turn_id += ":iuv"
    del broken.state_after[broken.user_values[0].slot]  # the tracker ignored what the user said
    turns = sample + [broken]
    cfg = cascade.CascadeConfig.named("no_s2")
    base = cascade.Evaluator(sgd_registry, cfg).evaluate(turns)
    assert "IUV" in base[-1].fired_classes
    vreg = load_sgd_schema(shared_data / "sgd" / "sgd_x" / "v3" / "schema.json")
    remapped = remap_turns(turns, sgdx_slot_map(sgd_registry, vreg), vreg)
    var = cascade.Evaluator(vreg, cfg).evaluate(remapped)
    assert [v.label for v in var] == [v.label for v in base]
    assert [v.fired_classes for v in var] == [v.fired_classes for v in base]
