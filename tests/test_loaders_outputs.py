"""Real MultiWOZ agent outputs (PPTOD, UBAR, SOLOIST) -> turns, and the load-outputs CLI."""
from __future__ import annotations

import json

import pytest

from sage_core.cli import main
from sage_core.corpora.system_outputs.loader import load_system_outputs
from sage_core.data.errors import SageInputError
from sage_core.data.slice_io import read_slice, validate_against
from sage_core.data.types import StateDiff
from sage_core.corpora.schemas import load_schema
from sage_core.specs.sgd_format import load_sgd_schema


@pytest.fixture(scope="module")
def mwoz_registry(shared_data):
    return load_schema(shared_data / "multiwoz" / "schema_2.2.json")


@pytest.mark.parametrize("system", ["pptod", "ubar", "soloist"])
def test_real_outputs_load(shared_data, mwoz_registry, system):
    path = shared_data / "multiwoz" / "system_outputs" / f"{system}.json"
    raw = json.load(open(path))
    turns = load_system_outputs(path, mwoz_registry)
    n_entries = sum(len(v) for v in raw.values())
    assert len(turns) + turns.stats.skipped_total == n_entries
    assert len(turns) > 0.9 * n_entries
    assert turns.stats.dialogues == len(raw) == 1000
    validate_against(turns, mwoz_registry)
    assert all(t.user == "" and t.meta["user_text_available"] is False and t.meta["system"] == system
               for t in turns)
    assert all(h.speaker == "agent" for t in turns for h in t.history)
    # consecutive system turns of one dialogue chain their states when the domain stays the same
    by_id = {t.turn_id: t for t in turns}
    chained = 0
    for t in turns:
        did, i = t.turn_id.rsplit(":", 1)
        prev = by_id.get(f"{did}:{int(i) - 1}")
        if prev is not None and prev.workflow.split(":")[0] == t.workflow.split(":")[0]:
            assert t.state_before == prev.state_after
            chained += 1
    assert chained > 0.5 * len(turns)
    first = raw[turns[0].dialogue_id][0]
    assert turns[0].agent == first["response"]
    written = sum(bool(StateDiff.between(t.state_before, t.state_after).written) for t in turns)
    assert written > 0.3 * len(turns)
    assert {t.workflow.split(":")[1].split("_")[0] for t in turns} >= {"find", "book"}


def test_known_pptod_turn(shared_data, mwoz_registry):
    turns = load_system_outputs(shared_data / "multiwoz" / "system_outputs" / "pptod.json", mwoz_registry, limit=1)
    assert turns.stats.dialogues == 1
    t = next(t for t in turns if t.turn_id == "sng0073:1")
    assert t.workflow == "taxi:book_taxi"
    assert t.state_after["taxi-leaveat"] == "17:15"  # 2.0 'leave' mapped to the 2.2 name
    assert StateDiff.between(t.state_before, t.state_after).written == {"taxi-leaveat": "17:15"}
    assert [h.text for h in t.history] == ["i can help with that . what time would you like to leave ?"]


def test_unmapped_predicted_slots_are_reported(tmp_path, mwoz_registry):
    p = tmp_path / "out.json"
    p.write_text(json.dumps({"d1": [
        {"response": "which area?", "state": {"attraction": {"type": "museum", "people": "2"}}},
        {"response": "booked.", "state": {"restaurant": {"food": "thai", "people": "2", "day": "monday"}}}]}))
    turns = load_system_outputs(p, mwoz_registry, system="toy")
    assert dict(turns.stats.unmapped_slots) == {"attraction-people": 1}
    assert turns[0].meta["unmapped_state"] == {"attraction-people": "2"}
    assert turns[0].state_after == {"attraction-type": "museum"}
    assert turns[1].workflow == "restaurant:book_restaurant"
    assert turns[1].state_after == {"restaurant-food": "thai", "restaurant-bookpeople": "2",
                                    "restaurant-bookday": "monday"}


def test_categorical_values_take_the_schema_spelling(tmp_path, mwoz_registry):
    p = tmp_path / "out.json"
    p.write_text(json.dumps({"d1": [
        {"response": "a guest house?", "state": {"hotel": {"type": "guest house", "area": "weat"}}},
        {"response": "a pool?", "state": {"attraction": {"type": "mutliple sports"}}}]}))
    turns = load_system_outputs(p, mwoz_registry)
    assert turns[0].state_after == {"hotel-type": "guesthouse", "hotel-area": "weat"}  # errors are kept
    assert turns[1].state_after == {"attraction-type": "multiple sports"}
    assert turns.stats.renamed_values == {"hotel-type: guest house -> guesthouse": 1,
                                          "attraction-type: mutliple sports -> multiple sports": 1}


def test_bad_outputs_files(tmp_path, mwoz_registry):
    p = tmp_path / "out.json"
    p.write_text("[1, 2]")
    with pytest.raises(SageInputError, match="expected a JSON object"):
        load_system_outputs(p, mwoz_registry)
    p.write_text(json.dumps({"d1": [{"response": "hi", "state": {}}]}))
    with pytest.raises(SageInputError, match="no turns"):
        load_system_outputs(p, mwoz_registry)
    p.write_text(json.dumps({"d1": [{"state": {}}]}))
    with pytest.raises(SageInputError, match="response"):
        load_system_outputs(p, mwoz_registry)


def test_cli_load_outputs(shared_data, tmp_path, capsys):
    out = tmp_path / "slice.jsonl"
    rc = main(["load-outputs", "--outputs", str(shared_data / "multiwoz" / "system_outputs" / "ubar.json"),
               "--schema", str(shared_data / "multiwoz" / "schema_2.2.json"), "--out", str(out), "--limit", "5"])
    assert rc == 0
    turns = read_slice(out)
    assert len({t.dialogue_id for t in turns}) == 5
    assert f"wrote {len(turns)} turns from 5 dialogues (ubar)" in capsys.readouterr().out
    rc = main(["load-outputs", "--outputs", str(tmp_path / "missing.json"),
               "--schema", str(shared_data / "multiwoz" / "schema_2.2.json"), "--out", str(out)])
    assert rc == 2 and "error:" in capsys.readouterr().err


# --- domain attribution from reply cues, booking overlay, untracked booking slots -----------------
def _load(tmp_path, registry, entries, name="toy"):
    p = tmp_path / "out.json"
    p.write_text(json.dumps({"d1": entries}))
    return load_system_outputs(p, registry, system=name)


def test_reply_cues_move_the_turn_to_the_new_domain(tmp_path, mwoz_registry):
    rest = {"restaurant": {"pricerange": "cheap", "area": "north", "time": "14:30", "day": "wednesday", "people": "5"}}
    turns = _load(tmp_path, mwoz_registry, [
        {"response": "i have booked you at [value_name] . your reference number is [value_reference] .", "state": rest},
        {"response": "what area would you like to stay in ?", "state": rest},
        {"response": "is there anything else ?", "state": rest}])
    assert turns[0].workflow == "restaurant:book_restaurant"
    # nothing new in the state, the reply speaks of a stay: the hotel part starts (state still empty)
    assert turns[1].workflow == "hotel:find_hotel" and turns[1].state_after == {}
    assert "workflow_confidence" not in turns[1].meta and turns[1].meta["reply_domains"] == ["hotel"]
    assert turns[2].workflow == "hotel:find_hotel"  # no cue: the previous domain carries on


def test_ambiguous_or_disagreeing_cues_make_the_workflow_uncertain(tmp_path, mwoz_registry):
    from sage_core.evaluator.cascade import CascadeConfig, Evaluator
    rest = {"restaurant": {"pricerange": "expensive", "area": "west", "time": "18:00", "day": "sunday", "people": "5"}}
    turns = _load(tmp_path, mwoz_registry, [
        {"response": "i have made those reservations and your reference number is [value_reference] .", "state": rest},
        # trip words only: train or taxi, not restaurant
        {"response": "where will you be departing from ?", "state": rest},
        # the state changes in the restaurant while the reply asks about the hotel
        {"response": "i have booked you at [value_name] . what area would you like to stay in ?",
         "state": {"restaurant": dict(rest["restaurant"], name="curry garden")}}])
    assert turns[1].workflow.startswith("restaurant:") and turns[1].meta["workflow_confidence"] == 0.5
    assert turns[1].meta["reply_domains"] == ["taxi", "train"]
    assert turns[2].workflow == "restaurant:book_restaurant" and turns[2].meta["workflow_confidence"] == 0.5
    vs = Evaluator(mwoz_registry, CascadeConfig.named("sage-core", s2_backend="offline")).evaluate(list(turns))
    assert not any("WNF" in v.fired_classes for v in vs)  # no request judged in a guessed domain


def test_booking_announcement_sets_book_intent_and_overlay(tmp_path, mwoz_registry):
    from sage_core.evaluator.cascade import CascadeConfig, Evaluator
    st = {"restaurant": {"food": "indian", "area": "centre"}}
    turns = _load(tmp_path, mwoz_registry, [
        {"response": "do you have a price range in mind ?", "state": st},
        {"response": "i have booked you at [value_name] . your reference number is [value_reference] .", "state": st},
        # later the state does hold booking slots, so the file tracks them
        {"response": "you are welcome .",
         "state": {"restaurant": dict(st["restaurant"], people="2", day="saturday", time="11:00")}}])
    assert mwoz_registry.get("restaurant:book_restaurant").required  # the loader applied the overlay
    assert turns[1].workflow == "restaurant:book_restaurant"  # no book slot, but the reply announces a booking
    v = Evaluator(mwoz_registry, CascadeConfig.named("sage-core", s2_backend="offline")).evaluate_turn(turns[1])
    assert v.fired_classes == ["PC"]


def test_untracked_booking_slots_make_pc_abstain(tmp_path, mwoz_registry):
    from sage_core.evaluator.cascade import CascadeConfig, Evaluator
    st = {"hotel": {"area": "south", "pricerange": "expensive"}}  # like SOLOIST: no booking slots ever
    turns = _load(tmp_path, mwoz_registry, [
        {"response": "what day will you be arriving ?", "state": st},
        {"response": "booking was successful . reference number is [hotel_reference] .", "state": st}])
    t = turns[1]
    assert t.workflow == "hotel:book_hotel"
    assert t.meta["untracked_slots"] == ["hotel-bookday", "hotel-bookpeople", "hotel-bookstay"]
    v = Evaluator(mwoz_registry, CascadeConfig.named("sage-core", s2_backend="offline")).evaluate_turn(t)
    assert "PC" not in v.fired_classes and v.label.value == "undecided"


def test_overlay_reaches_slice_paths_and_leaves_sgd_alone(tmp_path, shared_data, sgd_schema_path):
    from sage_core.corpora import load_registry_for_slice
    from sage_core.data.slice_io import read_slice, write_slice
    reg = load_registry_for_slice(shared_data / "multiwoz" / "schema_2.2.json")
    assert reg.get("hotel:book_hotel").required == ["hotel-bookday", "hotel-bookpeople", "hotel-bookstay"]
    sgd = load_registry_for_slice(sgd_schema_path)
    assert sgd.specs == load_sgd_schema(sgd_schema_path).specs  # not a MultiWOZ schema: unchanged
    # the loader's hints for the compiler survive a slice round trip (load-outputs -> evaluate)
    turns = _load(tmp_path, reg, [
        {"response": "i have booked it .", "state": {"restaurant": {"food": "thai", "people": "2"}}},
        {"response": "where will you be departing from ?", "state": {"restaurant": {"food": "thai", "people": "2"}}}])
    write_slice(turns, tmp_path / "s.jsonl")
    back = read_slice(tmp_path / "s.jsonl")
    assert back[1].meta["workflow_confidence"] == 0.5
    assert back[0].meta["untracked_slots"] == ["restaurant-bookday", "restaurant-booktime"]


def test_booking_of_another_domain_does_not_make_a_book_intent(tmp_path, mwoz_registry):
    turns = _load(tmp_path, mwoz_registry, [
        {"response": "i have booked you a table on [value_day] . what day would you like to travel ?",
         "state": {"train": {"destination": "cambridge", "departure": "bishops stortford"}}},
        {"response": "i have booked you on [value_id] . your reference number is [value_reference] .",
         "state": {"train": {"destination": "cambridge", "departure": "bishops stortford", "people": "2"}}}])
    assert turns[0].workflow == "train:find_train"  # the table is the restaurant's booking
    assert turns[1].workflow == "train:book_train"
