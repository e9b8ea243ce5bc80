"""Bad inputs end in exit 2 with the file and the line or field, never a traceback (issue 12).

Each CLI case runs ``sage_core.cli.main`` in-process: an exception escaping it is
exactly the traceback a user would see.
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from sage_core.cli import main
from sage_core.data.errors import SageInputError
from sage_core.data.slice_io import parse_slice

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "data" / "demo" / "schema.json"
SLICE = REPO / "data" / "demo" / "demo_slice.jsonl"
DEEP = "[" * 200_000 + "]" * 200_000


def cli(*argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main([str(a) for a in argv])
    return rc, err.getvalue()


def assert_input_error(rc: int, err: str, *names: str) -> None:
    assert rc == 2, err
    assert err.startswith("error: ") and "Traceback" not in err
    for n in names:
        assert n in err, (n, err)


def first_turn() -> dict:
    return json.loads(SLICE.read_text().splitlines()[0])


@pytest.fixture()
def adir(tmp_path):
    d = tmp_path / "adir"
    d.mkdir()
    return d


# --- the 14 CLI cases of issue 12 ----------------------------------------------------
@pytest.mark.parametrize("flag", ["--slice", "--schema", "--out"])
def test_evaluate_directory_arguments(tmp_path, adir, flag):
    args = {"--slice": SLICE, "--schema": SCHEMA, "--out": tmp_path / "v.jsonl"}
    args[flag] = adir
    rc, err = cli("evaluate", *[x for kv in args.items() for x in kv], "--config", "no_s2")
    assert_input_error(rc, err, str(adir), "directory")


def test_report_baselines_directory(adir):
    rc, err = cli("report", "--slice", SLICE, "--schema", SCHEMA, "--baselines", adir, "--configs", "no_s2",
                  "--n-resamples", 10)
    assert_input_error(rc, err, str(adir), "directory")


def test_load_outputs_directory(tmp_path, adir, shared_data):
    rc, err = cli("load-outputs", "--outputs", adir, "--schema", shared_data / "multiwoz" / "schema_2.2.json",
                  "--out", tmp_path / "o.jsonl")
    assert_input_error(rc, err, str(adir), "directory")


@pytest.mark.parametrize("flag", ["--schema", "--out"])
def test_build_slice_directory_arguments(tmp_path, adir, flag, shared_data):
    test = shared_data / "sgd" / "test"
    args = {"--schema": test / "schema.json", "--out": tmp_path / "s.jsonl"}
    args[flag] = adir
    rc, err = cli("build-slice", "--dialogues", test / "dialogues_001.json", "--n", 10,
                  *[x for kv in args.items() for x in kv])
    assert_input_error(rc, err, str(adir), "directory")


def test_out_that_cannot_be_created(tmp_path):
    afile = tmp_path / "afile.txt"
    afile.write_text("x")
    out = afile / "sub" / "v.jsonl"
    rc, err = cli("evaluate", "--slice", SLICE, "--schema", SCHEMA, "--out", out, "--config", "no_s2")
    assert_input_error(rc, err, str(out), "cannot create")


def test_binary_schema(tmp_path):
    binary = tmp_path / "schema.json"
    binary.write_bytes(bytes(range(256)) * 4)
    rc, err = cli("evaluate", "--slice", SLICE, "--schema", binary, "--out", tmp_path / "v.jsonl")
    assert_input_error(rc, err, str(binary))


def test_deep_json_in_evaluate(tmp_path):
    deep = tmp_path / "deep.jsonl"
    deep.write_text(first_turn().__repr__()[:0] + json.dumps(first_turn()) + "\n" + DEEP + "\n")
    rc, err = cli("evaluate", "--slice", deep, "--schema", SCHEMA, "--out", tmp_path / "v.jsonl")
    assert_input_error(rc, err, str(deep), "line 2", "nested")


def test_deep_json_in_build_slice(tmp_path, shared_data):
    deep = tmp_path / "dialogues_001.json"
    deep.write_text(DEEP)
    rc, err = cli("build-slice", "--dialogues", deep, "--schema", shared_data / "sgd" / "test" / "schema.json",
                  "--out", tmp_path / "s.jsonl", "--n", 10)
    assert_input_error(rc, err, str(deep), "nested")


def test_deep_json_in_load_outputs(tmp_path, shared_data):
    deep = tmp_path / "outputs.json"
    deep.write_text(DEEP)
    rc, err = cli("load-outputs", "--outputs", deep, "--schema", shared_data / "multiwoz" / "schema_2.2.json",
                  "--out", tmp_path / "o.jsonl")
    assert_input_error(rc, err, str(deep), "nested")


@pytest.mark.parametrize("slot", [{"a": 1}, ["a"]])
def test_act_slot_not_a_string(tmp_path, slot):
    d = first_turn()
    d["agent_acts"] = [{"act": "REQUEST", "slot": slot}]
    sl = tmp_path / "s.jsonl"
    sl.write_text(json.dumps(d) + "\n")
    rc, err = cli("evaluate", "--slice", sl, "--schema", SCHEMA, "--out", tmp_path / "v.jsonl", "--config", "no_s2")
    assert_input_error(rc, err, str(sl), "line 1", "agent_acts[0].slot")


@pytest.mark.parametrize("where,bad", [("utterance", {"x": 1}), ("frames", "notalist"), ("speaker", 3)])
def test_sgd_turn_wrong_field_types(tmp_path, shared_data, where, bad):
    test = shared_data / "sgd" / "test"
    dialogues = json.loads((test / "dialogues_001.json").read_text())[:2]
    dialogues[1]["turns"][0][where] = bad
    f = tmp_path / "dialogues_001.json"
    f.write_text(json.dumps(dialogues))
    rc, err = cli("build-slice", "--dialogues", f, "--schema", test / "schema.json", "--out", tmp_path / "s.jsonl",
                  "--n", 10)
    assert_input_error(rc, err, str(f), where)


@pytest.mark.parametrize("dialogues", [
    [{"dialogue_id": "x", "services": ["hotel"],
      "turns": [{"speaker": "USER", "utterance": "hi", "frames": [{"service": "hotel", "state": 5}]}]}],
    [{"dialogue_id": "x", "services": ["hotel"], "turns": {"speaker": "USER"}}],
    ["not a dialogue"],
])
def test_malformed_multiwoz22(tmp_path, shared_data, dialogues):
    d = tmp_path / "mw"
    d.mkdir()
    (d / "dialogues_001.json").write_text(json.dumps(dialogues))
    rc, err = cli("build-slice", "--corpus", "multiwoz22", "--dialogues", d,
                  "--schema", shared_data / "multiwoz" / "schema_2.2.json", "--out", tmp_path / "s.jsonl", "--n", 10)
    assert_input_error(rc, err, str(d / "dialogues_001.json"))


def test_report_zero_resamples():
    rc, err = cli("report", "--slice", SLICE, "--schema", SCHEMA, "--configs", "no_s2", "--n-resamples", 0)
    assert_input_error(rc, err, "n-resamples")


def test_report_out_dir_is_a_file(tmp_path):
    afile = tmp_path / "afile.txt"
    afile.write_text("x")
    rc, err = cli("report", "--slice", SLICE, "--schema", SCHEMA, "--configs", "no_s2", "--n-resamples", 10,
                  "--out-dir", afile)
    assert_input_error(rc, err, str(afile), "directory")


def test_dev_zero_as_slice(tmp_path):
    rc, err = cli("evaluate", "--slice", "/dev/zero", "--schema", SCHEMA, "--out", tmp_path / "v.jsonl")
    assert_input_error(rc, err, "/dev/zero", "regular file")


# --- silent coercions are rejected ---------------------------------------------------
def _parse(d: dict):
    return parse_slice(io.StringIO(json.dumps(d) + "\n"), "s.jsonl")


def _mutations():
    def hist_obj(d):
        d["history"] = [{"speaker": "user", "text": {"a": 1}}]

    def value_dict(d):
        d["user_values"] = [{"slot": "city", "value": {"v": "x"}}]

    def empty_act(d):
        d["agent_acts"] = [{"act": ""}]

    def bool_span(d):
        d["user_values"] = [{"slot": "city", "value": "San Jose", "span": [True, 3]}]

    def act_value_list(d):
        d["agent_acts"] = [{"act": "INFORM", "slot": "city", "value": ["a"]}]

    def user_number(d):
        d["user"] = 12

    def turn_id_bool(d):
        d["turn_id"] = True

    def uv_slot_dict(d):
        d["user_values"] = [{"slot": {"a": 1}, "value": "x"}]

    return {"history text as object": (hist_obj, "history[0].text"),
            "value as dict": (value_dict, "user_values[0].value"),
            "empty act": (empty_act, "agent_acts[0].act"),
            "boolean span": (bool_span, "user_values[0].span"),
            "act value as list": (act_value_list, "agent_acts[0].value"),
            "user text as number": (user_number, "user"),
            "turn_id as bool": (turn_id_bool, "turn_id"),
            "user value slot as dict": (uv_slot_dict, "user_values[0].slot")}


@pytest.mark.parametrize("case", list(_mutations()))
def test_wrong_types_are_rejected_not_coerced(case):
    mutate, field = _mutations()[case]
    d = first_turn()
    mutate(d)
    with pytest.raises(SageInputError) as e:
        _parse(d)
    assert e.value.field == field and e.value.line == 1 and e.value.file == "s.jsonl"


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_rejected(token):
    text = json.dumps(first_turn())
    text = text.replace('"state_after": {', '"state_after": {"party_size": ' + token + ", ", 1)
    with pytest.raises(SageInputError) as e:
        parse_slice(io.StringIO(text + "\n"), "s.jsonl")
    assert e.value.line == 1 and "finite" in str(e.value)


def test_state_value_must_be_scalar_text():
    d = first_turn()
    d["state_after"]["city"] = {"v": 1}
    with pytest.raises(SageInputError) as e:
        _parse(d)
    assert e.value.field == "state_after.city"
    d["state_after"]["city"] = True
    with pytest.raises(SageInputError) as e:
        _parse(d)
    assert e.value.field == "state_after.city"
