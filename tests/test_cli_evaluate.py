"""``python -m sage_core evaluate`` end to end, in a subprocess: verdicts, metrics, and bad input -> exit 2."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sage_core.data.slice_io import dumps_turn
from tests.test_compiler import SPEC, clean_turn

REPO = Path(__file__).resolve().parents[1]


def write_schema(path: Path) -> Path:
    svc = {"service_name": SPEC.service, "description": "restaurants",
           "slots": [{"name": s.name, "description": s.description, "is_categorical": s.is_categorical,
                      "possible_values": s.possible_values} for s in SPEC.slots.values()],
           "intents": [{"name": SPEC.intent, "description": SPEC.description, "is_transactional": True,
                        "required_slots": SPEC.required, "optional_slots": SPEC.optional}]}
    path.write_text(json.dumps([svc]))
    return path


def run_cli(*args, cwd=REPO):
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "sage_core", "evaluate", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture()
def files(tmp_path):
    schema = write_schema(tmp_path / "schema.json")
    ok = clean_turn()
    d_ok = json.loads(dumps_turn(ok))
    d_ok["gold"] = {"label": "acceptable", "class": None}
    bad = json.loads(dumps_turn(ok))
    bad["turn_id"] = "d1:3"
    del bad["state_after"]["time"]
    bad["gold"] = {"label": "failure", "class": "IUV"}
    sl = tmp_path / "slice.jsonl"
    sl.write_text(json.dumps(d_ok) + "\n" + json.dumps(bad) + "\n")
    return tmp_path, schema, sl, d_ok


def test_evaluate_writes_verdicts_and_metrics(files):
    tmp, schema, sl, _ = files
    out = tmp / "out" / "verdicts.jsonl"
    r = run_cli("--slice", sl, "--schema", schema, "--config", "no_s2", "--out", out)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(x["turn_id"], x["label"], x["fired_classes"]) for x in rows] == \
        [("d1:1", "acceptable", []), ("d1:3", "failure", ["IUV"])]
    assert rows[1]["repairs"][0]["edit"]["op"] == "record_value" and rows[0]["config"] == "no_s2"
    metrics = json.loads(r.stdout.strip().splitlines()[-1])
    assert metrics["f1"] == 1.0 and metrics["n"] == 2 and metrics["stage_shares"]["S1"] == 1.0
    assert "Traceback" not in r.stderr


def test_evaluate_sage_core_offline(files):
    tmp, schema, sl, _ = files
    out = tmp / "v.jsonl"
    r = run_cli("--slice", sl, "--schema", schema, "--s2", "offline", "--tau", "0.2", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert rows[0]["s2_backend"] == "offline: span grounding + all-MiniLM-L6-v2"
    assert json.loads(r.stdout.strip().splitlines()[-1])["recall"] == 1.0


def _assert_input_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and r.stderr.startswith("error: ")
    for n in needles:
        assert n in r.stderr, r.stderr


def test_empty_file(files):
    tmp, schema, _, _ = files
    (tmp / "empty.jsonl").write_text("")
    _assert_input_error(run_cli("--slice", tmp / "empty.jsonl", "--schema", schema, "--out", tmp / "o.jsonl"),
                        "empty.jsonl", "empty")


def test_malformed_json(files):
    tmp, schema, sl, d = files
    p = tmp / "bad.jsonl"
    p.write_text(json.dumps(d) + "\n{\"turn_id\": \"x\",\n")
    _assert_input_error(run_cli("--slice", p, "--schema", schema, "--out", tmp / "o.jsonl"),
                        "bad.jsonl", "line 2", "malformed JSON")


def test_unknown_workflow(files):
    tmp, schema, _, d = files
    p = tmp / "wf.jsonl"
    p.write_text(json.dumps(dict(d, workflow="Hotels_9:BookRoom")) + "\n")
    _assert_input_error(run_cli("--slice", p, "--schema", schema, "--out", tmp / "o.jsonl"),
                        "wf.jsonl", "line 1", "field 'workflow'", "unknown workflow 'Hotels_9:BookRoom'")


def test_slot_not_in_schema(files):
    tmp, schema, _, d = files
    p = tmp / "slot.jsonl"
    p.write_text(json.dumps(d) + "\n" + json.dumps(dict(d, turn_id="d9:1", state_after={"stars": "4"})) + "\n")
    _assert_input_error(run_cli("--slice", p, "--schema", schema, "--out", tmp / "o.jsonl"),
                        "slot.jsonl", "line 2", "state_after.stars", "not in the schema")


def test_request_of_a_slot_not_in_schema_is_a_wnf(files):
    # issue 9: an agent act naming a slot outside the workflow is behaviour to judge (WNF), not an input error
    tmp, schema, _, d = files
    p = tmp / "act.jsonl"
    p.write_text(json.dumps(dict(d, agent_acts=[{"act": "REQUEST", "slot": "party_size"}])) + "\n")
    r = run_cli("--slice", p, "--schema", schema, "--out", tmp / "o.jsonl")
    assert r.returncode == 0, r.stderr
    v = json.loads((tmp / "o.jsonl").read_text().splitlines()[0])
    assert v["label"] == "failure"
    assert any(c["criterion"]["id"].endswith(":WNF:party_size") and c["final"]["decision"] == "true"
               for c in v["criteria"]), v


def test_state_slot_not_in_schema_stays_an_input_error(files):
    tmp, schema, _, d = files
    p = tmp / "state.jsonl"
    p.write_text(json.dumps(dict(d, state_after={**d["state_after"], "party_size": "4"})) + "\n")
    _assert_input_error(run_cli("--slice", p, "--schema", schema, "--out", tmp / "o.jsonl"),
                        "state.jsonl", "line 1", "state_after.party_size", "party_size")


def test_missing_schema_file(files):
    tmp, _, sl, _ = files
    _assert_input_error(run_cli("--slice", sl, "--schema", tmp / "nope.json", "--out", tmp / "o.jsonl"),
                        "nope.json", "not found")
