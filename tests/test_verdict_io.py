"""Verdict files from any evaluator: JSONL, CSV, SAGE TurnVerdict dicts, and their errors."""
from __future__ import annotations

import json

import pytest

from sage_core.data.errors import SageInputError
from sage_core.data.types import (
    Criterion,
    CriterionTrace,
    Decision,
    FailureClass,
    Stage,
    TurnLabel,
    TurnVerdict,
    Verdict,
)
from sage_core.data.verdict_io import (
    from_turn_verdicts,
    parse_evaluator_verdicts,
    read_evaluator_verdicts,
    write_evaluator_verdicts,
)


def _tv(tid, label, conf, stage=Stage.S1, decision=Decision.TRUE, cost=0.0, calls=0):
    crit = Criterion(f"{tid}:UV:x", FailureClass.UV, {"slot": "x"}, "state")
    v = Verdict(decision, conf, stage)
    return TurnVerdict(tid, "d1", label, conf, [CriterionTrace(crit, [v], v)], [], "sage-core",
                       "offline (test)", latency_ms=2.5, paid_calls=calls, cost_usd=cost)


def test_jsonl_generic_rows(tmp_path):
    f = tmp_path / "verdicts_geval.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in [
        {"turn_id": "t1", "label": "failure", "class": "UV", "confidence": 0.9, "evaluator": "g-eval",
         "cost_usd": 0.002, "latency_ms": 800, "paid_calls": 1},
        {"turn_id": "t2", "label": "acceptable", "confidence": 0.6, "evaluator": "g-eval",
         "cost_usd": 0.001, "latency_ms": 700, "paid_calls": 1},
    ]) + "\n\n")
    ev = read_evaluator_verdicts(f)
    assert ev.name == "g-eval"
    assert ev.labels == {"t1": "failure", "t2": "acceptable"}
    assert ev.confidence == {"t1": 0.9, "t2": 0.6}
    assert ev.classes == {"t1": ["UV"]}
    assert ev.paid_calls == {"t1": 1, "t2": 1}
    assert ev.total_cost() == pytest.approx(0.003)
    assert ev.predicted(["t2", "t1"]) == [0, 1]


def test_csv_without_optional_columns_uses_file_name(tmp_path):
    f = tmp_path / "judge.csv"
    f.write_text("turn_id,label,class\nt1,failure,IUV;WNF\nt2,undecided,\n")
    ev = read_evaluator_verdicts(f)
    assert ev.name == "judge"
    assert ev.confidence is None
    assert ev.classes["t1"] == ["IUV", "WNF"]
    assert ev.predicted(["t1", "t2"]) == [1, 0]  # undecided scores acceptable


@pytest.mark.parametrize("text,line,field", [
    ('{"turn_id": "t1", "label": "failure"}\n{"turn_id": "t2", "label": "bad"}\n', 2, "label"),
    ('{"turn_id": "t1", "label": "failure", "confidence": 1.5}\n', 1, "confidence"),
    ('{"label": "failure"}\n', 1, "turn_id"),
    ('{"turn_id": "t1", "label": "failure"}\n{"turn_id": "t1", "label": "failure"}\n', 2, "turn_id"),
    ('{"turn_id": "t1", "label": "failure", "class": "XYZ"}\n', 1, "class"),
    ('{"turn_id": "t1", "label": "failure", "paid_calls": "two"}\n', 1, "paid_calls"),
    ('{"turn_id": "t1", "label": "failure"}\n{"turn_id": "t2", "label": \n', 2, None),
])
def test_bad_jsonl_rows_name_line_and_field(text, line, field):
    with pytest.raises(SageInputError) as e:
        parse_evaluator_verdicts(text, "v.jsonl", "jsonl")
    assert e.value.file == "v.jsonl" and e.value.line == line and e.value.field == field


def test_bad_csv_row_reports_its_line():
    with pytest.raises(SageInputError) as e:
        parse_evaluator_verdicts("turn_id,label,cost_usd\nt1,failure,0.1\nt2,acceptable,-3\n", "v.csv", "csv")
    assert e.value.line == 3 and e.value.field == "cost_usd"
    with pytest.raises(SageInputError) as e:
        parse_evaluator_verdicts("id,verdict\nt1,failure\n", "v.csv", "csv")
    assert e.value.line == 1


def test_mixed_evaluators_and_missing_turns_rejected(tmp_path):
    with pytest.raises(SageInputError, match="several evaluators"):
        parse_evaluator_verdicts('{"turn_id":"a","label":"failure","evaluator":"x"}\n'
                                 '{"turn_id":"b","label":"failure","evaluator":"y"}\n', "v.jsonl")
    ev = parse_evaluator_verdicts('{"turn_id":"a","label":"failure"}\n', "v.jsonl")
    with pytest.raises(SageInputError, match="no verdict for turn 'b'"):
        ev.predicted(["a", "b"])
    with pytest.raises(SageInputError, match="not found"):
        read_evaluator_verdicts(tmp_path / "nope.jsonl")


def test_sage_turn_verdict_dicts_and_in_memory_agree(tmp_path):
    tvs = [_tv("t1", TurnLabel.FAILURE, 1.0), _tv("t2", TurnLabel.ACCEPTABLE, 0.4, Stage.S2_ENCODER, Decision.FALSE),
           _tv("t3", TurnLabel.UNDECIDED, 0.0, Stage.NONE, Decision.ABSTAIN)]
    f = tmp_path / "sage.jsonl"
    f.write_text("".join(json.dumps(v.to_dict()) + "\n" for v in tvs))
    a = read_evaluator_verdicts(f)
    b = from_turn_verdicts("sage-core", tvs)
    assert a.name == "sage-core" == b.name  # from the config field
    assert a.labels == b.labels
    assert a.confidence == b.confidence
    assert a.classes == b.classes == {"t1": ["UV"]}
    assert a.stages == b.stages == {"t1": ["S1"], "t2": ["S2-encoder"], "t3": ["none"]}
    assert a.s2_backend == b.s2_backend == "offline (test)"
    assert b.confidences(["t1", "t2", "t3"]) == [1.0, 0.4, 0.0]


def test_write_round_trip(tmp_path):
    ev = parse_evaluator_verdicts('{"turn_id":"a","label":"failure","class":"PC","confidence":0.7,'
                                  '"cost_usd":0.01,"evaluator":"e"}\n', "v.jsonl")
    write_evaluator_verdicts(ev, tmp_path / "out.jsonl")
    back = read_evaluator_verdicts(tmp_path / "out.jsonl")
    assert (back.name, back.labels, back.confidence, back.classes, back.cost_usd) == \
        (ev.name, ev.labels, ev.confidence, ev.classes, ev.cost_usd)
