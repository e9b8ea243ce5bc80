"""Slice format: round trip and file/line/field errors for bad input."""
import io
import json

import pytest

from sage_core.data.errors import SageInputError
from sage_core.data.slice_io import dumps_turn, parse_slice, read_slice, validate_against, write_slice
from sage_core.data.types import StateDiff
from sage_core.specs.yaml_spec import load_workflow_spec

GOOD = {
    "turn_id": "d1:1", "dialogue_id": "d1", "workflow": "Pharmacy_1:Refill",
    "history": [{"speaker": "agent", "text": "Hello, how can I help?"}],
    "user": "Refill for Ana Ruiz please", "agent": "What is the prescription number?",
    "state_before": {}, "state_after": {"patient_name": "Ana Ruiz"},
    "user_values": [{"slot": "patient_name", "value": "Ana Ruiz", "span": [11, 19]}],
    "agent_acts": [{"act": "request", "slot": "rx_number"}],
    "gold": {"label": "acceptable", "class": None},
}

SPEC = """
workflows:
  - id: Pharmacy_1:Refill
    slots:
      - {name: patient_name, description: name of the patient}
      - {name: rx_number, description: prescription number, type: number}
      - {name: pickup_time, type: time}
    required: [patient_name, rx_number]
    optional: {pickup_time: "today"}
    order: [[patient_name], [rx_number], [pickup_time]]
"""


def _parse(*records, raw=None):
    text = raw if raw is not None else "\n".join(json.dumps(r) for r in records)
    return parse_slice(io.StringIO(text), "s.jsonl")


def test_round_trip_preserves_every_field(tmp_path):
    turns = _parse(GOOD)
    p = tmp_path / "out.jsonl"
    write_slice(turns, p)
    again = read_slice(p)
    assert [dumps_turn(t) for t in again] == [dumps_turn(t) for t in turns]
    t = again[0]
    assert t.user[t.user_values[0].span[0]:t.user_values[0].span[1]] == "Ana Ruiz"
    assert t.agent_acts[0].act == "REQUEST"
    assert StateDiff.between(t.state_before, t.state_after).written == {"patient_name": "Ana Ruiz"}


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d.pop("turn_id"), "turn_id"),
    (lambda d: d.update(workflow="NoColon"), "workflow"),
    (lambda d: d.update(state_after=["x"]), "state_after"),
    (lambda d: d.update(user_values=[{"slot": "patient_name", "value": "x", "span": [5, 99]}]), "user_values[0].span"),
    (lambda d: d.update(gold={"label": "bad"}), "gold.label"),
    (lambda d: d.update(history=[{"speaker": "robot", "text": "x"}]), "history[0]"),
])
def test_bad_records_name_line_and_field(mutate, field):
    bad = json.loads(json.dumps(GOOD))
    mutate(bad)
    with pytest.raises(SageInputError) as e:
        _parse(dict(GOOD, turn_id="d1:0"), bad)
    assert e.value.line == 2 and e.value.field == field
    assert "s.jsonl" in str(e.value) and "line 2" in str(e.value)


def test_malformed_json_and_empty_file():
    with pytest.raises(SageInputError, match=r"s.jsonl, line 2: malformed JSON"):
        _parse(raw=json.dumps(GOOD) + "\n{not json\n")
    with pytest.raises(SageInputError, match="empty"):
        _parse(raw="\n\n")


def test_duplicate_turn_ids_rejected():
    with pytest.raises(SageInputError, match="duplicate turn_id"):
        _parse(GOOD, GOOD)


def test_validate_against_unknown_workflow_and_slot(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    reg = load_workflow_spec(spec)
    validate_against(_parse(GOOD), reg, "s.jsonl")
    with pytest.raises(SageInputError) as e:
        validate_against(_parse(dict(GOOD, workflow="Pharmacy_1:Nope")), reg, "s.jsonl")
    assert e.value.field == "workflow" and "unknown workflow" in str(e.value)
    with pytest.raises(SageInputError) as e:
        validate_against(_parse(dict(GOOD, state_after={"colour": "red"})), reg, "s.jsonl")
    assert e.value.field == "state_after.colour"
