"""Lexicon audit: fired / correct counts on a tiny hand-written SGD split."""
from __future__ import annotations

import json

from sage_core.science.lexicon_audit import (SplitData, audit_commit_cues, audit_request_hints, audit_synonyms,
                                     audit_value_phrases, categorical_taker)
from sage_core.evaluator.text.normalize import clean_text, tokens

SCHEMA = [{"service_name": "Ride_1", "slots": [
    {"name": "ride_type", "possible_values": ["Pool", "Luxury"], "is_categorical": True},
    {"name": "destination", "possible_values": [], "is_categorical": False}], "intents": []}]


def _act(act, slot="", canon=()):
    return {"act": act, "slot": slot, "values": list(canon), "canonical_values": list(canon)}


def _turn(speaker, text, acts, state=None):
    fr = {"service": "Ride_1", "actions": acts, "slots": []}
    if state is not None:
        fr["state"] = {"active_intent": "X", "requested_slots": [], "slot_values": state}
    return {"speaker": speaker, "utterance": text, "frames": [fr]}


def _split(tmp_path):
    d = tmp_path / "train"
    d.mkdir()
    (d / "schema.json").write_text(json.dumps(SCHEMA))
    turns = [
        _turn("USER", "A shared ride to SF please", [_act("INFORM", "ride_type", ["Pool"])],
              {"destination": ["SF", "San Francisco"]}),
        _turn("SYSTEM", "Where are you going? Please confirm the pool ride.", [_act("REQUEST", "destination"),
                                                                              _act("CONFIRM", "ride_type", ["Pool"])]),
        _turn("USER", "I shared my plans; a luxury one.", [_act("INFORM", "ride_type", ["Luxury"])],
              {"destination": ["SF", "South Fork"]}),
        _turn("SYSTEM", "Where is a good place? Your ride has been booked.", [_act("NOTIFY_SUCCESS")]),
    ]
    (d / "dialogues_001.json").write_text(json.dumps([{"dialogue_id": "1", "services": ["Ride_1"], "turns": turns}]))
    return SplitData([d])


def test_value_phrases_and_synonyms(tmp_path):
    data = _split(tmp_path)
    [shared_ride, shared] = audit_value_phrases(data, "A", [("pool", "shared ride"), ("pool", "shared")], tokens,
                                                categorical_taker(data))
    assert (shared_ride.fired, shared_ride.correct) == (1, 1)
    assert (shared.fired, shared.correct) == (2, 1) and shared.precision == 0.5
    [sf] = audit_synonyms(data, "S", [("san francisco", "sf")], tokens, clean_text)
    assert (sf.fired, sf.correct) == (2, 1)


def test_hints_and_cues(tmp_path):
    data = _split(tmp_path)
    [where] = audit_request_hints(data, "H", [("destination", "where")], tokens)
    assert (where.fired, where.correct) == (2, 1)  # both replies ask "where ...?", only the first requests it
    conf, succ = audit_commit_cues(data, "C", [(r"\bplease confirm\b", "CONFIRM"),
                                               (r"\bhas been booked\b", "NOTIFY_SUCCESS")])
    assert (conf.fired, conf.correct, succ.fired, succ.correct) == (1, 1, 1, 1)
    assert not conf.keep  # fewer than 3 correct firings
