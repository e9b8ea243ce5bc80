"""MultiWOZ 2.2 / 2.4 loaders on small files in the exact formats, against the real 2.2 schema."""
from __future__ import annotations

import json

import pytest

from sage_core.corpora.multiwoz.loader import SlotMapper, choose_intent, load_multiwoz22, load_multiwoz24
from sage_core.data.errors import SageInputError
from sage_core.data.slice_io import turn_from_dict, validate_against
from sage_core.specs.sgd_format import load_sgd_schema


@pytest.fixture(scope="module")
def mwoz_registry(shared_data):
    return load_sgd_schema(shared_data / "multiwoz" / "schema_2.2.json")


def _frame(service, intent="NONE", values=None, slots=None):
    return {"actions": [], "service": service, "slots": slots or [],
            "state": {"active_intent": intent, "requested_slots": [], "slot_values": values or {}}}


U0 = "I need a cheap hotel in the north please."
S1 = "What day would you like to check in, and for how many nights?"
U2 = "Book it for 3 people for 2 nights starting friday."
FRI = (U2.index("friday"), U2.index("friday") + 6)
S3 = "Booking was successful. Reference number is 00000013."


def _mw22_dialogue():
    idle = ["train", "taxi", "restaurant", "attraction"]
    return [{
        "dialogue_id": "PMUL0001.json", "services": ["hotel"],
        "turns": [
            {"turn_id": "0", "speaker": "USER", "utterance": U0,
             "frames": [_frame("hotel", "find_hotel", {"hotel-pricerange": ["cheap"], "hotel-area": ["north"]})]
             + [_frame(s) for s in idle]},
            {"turn_id": "1", "speaker": "SYSTEM", "utterance": S1,
             "frames": [{"actions": [], "service": "hotel", "slots": []}]},
            {"turn_id": "2", "speaker": "USER", "utterance": U2,
             "frames": [_frame("hotel", "book_hotel",
                               {"hotel-pricerange": ["cheap"], "hotel-area": ["north"], "hotel-bookday": ["friday"],
                                "hotel-bookpeople": ["3"], "hotel-bookstay": ["2"]})]
             + [_frame(s) for s in idle]},
            {"turn_id": "3", "speaker": "SYSTEM", "utterance": S3,
             "frames": [{"actions": [], "service": "hotel",
                         "slots": [{"slot": "hotel-ref", "start": 44, "exclusive_end": 52}]}]},
        ]}]


def _mw22_acts():
    return {"PMUL0001.json": {
        "0": {"dialog_act": {"Hotel-Inform": [["pricerange", "cheap"], ["area", "north"]]},
              "span_info": [["Hotel-Inform", "pricerange", "cheap", 9, 14], ["Hotel-Inform", "area", "north", 28, 33]]},
        "1": {"dialog_act": {"Booking-Request": [["day", "?"], ["stay", "?"]]}, "span_info": []},
        "2": {"dialog_act": {"Hotel-Inform": [["people", "3"], ["stay", "2"], ["day", "friday"]]},
              "span_info": [["Hotel-Inform", "day", "friday", FRI[0], FRI[1]]]},
        "3": {"dialog_act": {"Booking-Book": [["ref", "00000013"]], "general-reqmore": [["none", "none"]]},
              "span_info": []},
    }}


def test_slot_mapper_checks_the_schema(mwoz_registry):
    m = SlotMapper(mwoz_registry)
    assert m.map("hotel", "pricerange") == "hotel-pricerange"
    assert m.map("hotel", "price") == "hotel-pricerange"
    assert m.map("hotel", "day", in_book=True) == "hotel-bookday"
    assert m.map("hotel", "day") == "hotel-bookday"
    assert m.map("train", "day") == "train-day"
    assert m.map("train", "people", in_book=True) == "train-bookpeople"
    assert m.map("taxi", "leaveAt") == "taxi-leaveat" and m.map("taxi", "leave") == "taxi-leaveat"
    assert m.map("train", "arrive") == "train-arriveby"
    assert m.map("restaurant", "time") == "restaurant-booktime"
    assert m.map("attraction", "people") is None
    assert m.unmapped["attraction-people"] == 1
    assert choose_intent(mwoz_registry, "hotel", {"hotel-area": "north"}) == "find_hotel"
    assert choose_intent(mwoz_registry, "hotel", {"hotel-bookday": "friday"}) == "book_hotel"
    assert choose_intent(mwoz_registry, "taxi", {}) == "book_taxi"
    assert choose_intent(mwoz_registry, "police", {}) == "police"


def test_multiwoz22_with_dialog_acts(tmp_path, mwoz_registry):
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "dialogues_001.json").write_text(json.dumps(_mw22_dialogue()))
    (tmp_path / "dialog_acts.json").write_text(json.dumps(_mw22_acts()))
    turns = load_multiwoz22(tmp_path / "test", mwoz_registry)
    assert [t.turn_id for t in turns] == ["PMUL0001:1", "PMUL0001:3"]
    t1, t3 = turns
    assert t1.workflow == "hotel:find_hotel" and t3.workflow == "hotel:book_hotel"
    assert t1.state_before == {} and t1.state_after == {"hotel-pricerange": "cheap", "hotel-area": "north"}
    assert t3.state_before == t1.state_after
    assert t3.state_after["hotel-bookstay"] == "2"
    # Booking-* acts resolve to the turn's service, '?' carries no value
    assert [(a.act, a.slot, a.value) for a in t1.agent_acts] == [
        ("REQUEST", "hotel-bookday", None), ("REQUEST", "hotel-bookstay", None)]
    assert ("NOTIFY_SUCCESS", "hotel-ref", "00000013") in [(a.act, a.slot, a.value) for a in t3.agent_acts]
    uv = {u.slot: u for u in t3.user_values}
    assert set(uv) == {"hotel-bookpeople", "hotel-bookstay", "hotel-bookday"}
    assert uv["hotel-bookday"].span == FRI and U2[FRI[0]:FRI[1]] == "friday"
    validate_against([turn_from_dict(t.to_dict()) for t in turns], mwoz_registry)
    assert turns.stats.corpus == "multiwoz22" and turns.stats.turns == 2


def test_multiwoz22_without_dialog_acts(tmp_path, mwoz_registry):
    p = tmp_path / "dialogues_001.json"
    d = _mw22_dialogue()
    d[0]["turns"][2]["frames"][0]["slots"] = [{"slot": "hotel-bookday", "start": FRI[0], "exclusive_end": FRI[1],
                                              "value": "friday"}]
    p.write_text(json.dumps(d))
    turns = load_multiwoz22(p, mwoz_registry)
    assert len(turns) == 2
    assert all(t.agent_acts is None for t in turns)  # unknown acts -> left to extraction
    assert [(u.slot, u.value, u.span) for u in turns[1].user_values] == [("hotel-bookday", "friday", FRI)]


def test_multiwoz22_none_intent_is_skipped(tmp_path, mwoz_registry):
    d = _mw22_dialogue()
    d[0]["turns"][0]["frames"][0]["state"]["active_intent"] = "NONE"
    p = tmp_path / "dialogues_001.json"
    p.write_text(json.dumps(d))
    turns = load_multiwoz22(p, mwoz_registry)
    assert [t.turn_id for t in turns] == ["PMUL0001:3"]
    assert turns.stats.skipped["active intent NONE"] == 1


def _meta(hotel_semi=None, hotel_book=None, taxi_semi=None):
    semi = {"name": "not mentioned", "area": "", "parking": "", "pricerange": "", "stars": "",
            "internet": "", "type": ""}
    semi.update(hotel_semi or {})
    book = {"booked": [], "people": "", "day": "", "stay": ""}
    book.update(hotel_book or {})
    taxi = {"leaveAt": "", "destination": "", "departure": "", "arriveBy": ""}
    taxi.update(taxi_semi or {})
    return {"hotel": {"book": book, "semi": semi}, "taxi": {"book": {"booked": []}, "semi": taxi},
            "train": {"book": {"booked": [], "people": ""},
                      "semi": {"leaveAt": "", "destination": "", "day": "", "arriveBy": "", "departure": ""}}}


def _mw24_data():
    return {"MUL0001.json": {"goal": {}, "log": [
        {"text": U0, "metadata": {}, "dialog_act": {"Hotel-Inform": [["Price", "cheap"], ["Area", "north"]]},
         "span_info": [["Hotel-Inform", "Price", "cheap", 3, 3], ["Hotel-Inform", "Area", "north", 7, 7]]},
        {"text": S1, "metadata": _meta({"pricerange": "cheap", "area": "north"}),
         "dialog_act": {"Booking-Request": [["Day", "?"], ["Stay", "?"]]}, "span_info": []},
        {"text": U2, "metadata": {},
         "dialog_act": {"Hotel-Inform": [["People", "3"], ["Stay", "2"], ["Day", "friday"]]},
         "span_info": [["Hotel-Inform", "Day", "friday", 9, 9], ["Hotel-Inform", "People", "3", 3, 3]]},
        {"text": S3, "metadata": _meta({"pricerange": "cheap", "area": "north"},
                                       {"people": "3", "day": "friday", "stay": "2"}),
         "dialog_act": {"Booking-Book": [["Ref", "00000013"]]}, "span_info": []},
        {"text": "I also need a taxi leaving at 17:15.", "metadata": {},
         "dialog_act": {"Taxi-Inform": [["Leave", "17:15"]]}, "span_info": []},
        {"text": "Where are you departing from?",
         "metadata": _meta({"pricerange": "cheap", "area": "north"}, {"people": "3", "day": "friday", "stay": "2"},
                           {"leaveAt": "17:15"}),
         "dialog_act": {"Taxi-Request": [["Depart", "?"]]}, "span_info": []},
    ]}}


def test_multiwoz24_maps_onto_22_schema(tmp_path, mwoz_registry):
    p = tmp_path / "data.json"
    p.write_text(json.dumps(_mw24_data()))
    turns = load_multiwoz24(p, mwoz_registry)
    assert [t.turn_id for t in turns] == ["MUL0001:1", "MUL0001:3", "MUL0001:5"]
    t1, t3, t5 = turns
    assert t1.workflow == "hotel:find_hotel" and t3.workflow == "hotel:book_hotel" and t5.workflow == "taxi:book_taxi"
    assert t1.state_after == {"hotel-pricerange": "cheap", "hotel-area": "north"}
    assert t3.state_before == t1.state_after
    assert t3.state_after == {"hotel-pricerange": "cheap", "hotel-area": "north", "hotel-bookpeople": "3",
                              "hotel-bookday": "friday", "hotel-bookstay": "2"}
    assert t5.state_before == {} and t5.state_after == {"taxi-leaveat": "17:15"}
    assert [(a.act, a.slot) for a in t1.agent_acts] == [("REQUEST", "hotel-bookday"), ("REQUEST", "hotel-bookstay")]
    assert [(a.act, a.slot) for a in t5.agent_acts] == [("REQUEST", "taxi-departure")]
    uv1 = {u.slot: u for u in t1.user_values}
    assert U0[uv1["hotel-pricerange"].span[0]:uv1["hotel-pricerange"].span[1]] == "cheap"
    uv3 = {u.slot: u for u in t3.user_values}
    assert U2[uv3["hotel-bookday"].span[0]:uv3["hotel-bookday"].span[1]] == "friday"
    assert uv3["hotel-bookstay"].value == "2"
    assert t5.user_values[0].value == "17:15" and t5.user_values[0].span is not None
    assert [h.speaker for h in t5.history] == ["user", "agent", "user", "agent"]
    validate_against([turn_from_dict(t.to_dict()) for t in turns], mwoz_registry)


def test_multiwoz24_errors(tmp_path, mwoz_registry):
    bad = tmp_path / "data.json"
    bad.write_text('{"MUL1": {"log": [\n oops]}}')
    with pytest.raises(SageInputError) as e:
        load_multiwoz24(bad, mwoz_registry)
    assert e.value.line == 2
    bad.write_text(json.dumps({"MUL1": {"log": "x"}}))
    with pytest.raises(SageInputError, match="MUL1"):
        load_multiwoz24(bad, mwoz_registry)
    bad.write_text(json.dumps({"MUL1": {"goal": {}, "log": []}}))
    with pytest.raises(SageInputError, match="no turns"):
        load_multiwoz24(bad, mwoz_registry)


def test_multiwoz24_tolerates_missing_annotations(tmp_path, mwoz_registry):
    data = _mw24_data()
    log = data["MUL0001.json"]["log"]
    log[1]["dialog_act"] = "No Annotation"  # as in some MultiWOZ 2.1 turns
    log[2]["span_info"] = [["Hotel-Inform", "Day", "friday", "x", None]]
    p = tmp_path / "data.json"
    p.write_text(json.dumps(data))
    turns = load_multiwoz24(p, mwoz_registry)
    assert len(turns) == 3 and turns[0].agent_acts is None  # unknown, left to extraction
    uv = {u.slot: u for u in turns[1].user_values}
    assert U2[uv["hotel-bookday"].span[0]:uv["hotel-bookday"].span[1]] == "friday"  # found by search
