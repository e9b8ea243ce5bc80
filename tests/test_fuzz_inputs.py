"""Property test (Hypothesis): whatever the bytes, the slice reader and the corpus loaders raise
nothing but ``SageInputError`` -- and a slice they accept evaluates without an exception."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sage_core import Evaluator, CascadeConfig, SageInputError, load_workflows
from sage_core.data.slice_io import read_slice_bytes, validate_against
from sage_core.evaluator.compile import validate_turn

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo"
REGISTRY = load_workflows(DEMO / "schema.json")
BASE_TURNS = [json.loads(x) for x in (DEMO / "demo_slice.jsonl").read_text().splitlines()[:6]]
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                derandomize=True)

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                         st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)


def paths_of(obj, prefix=()):
    """Every (path) into a JSON value, for replacing one field at a time."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths_of(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths_of(v, prefix + (i,))


def replaced(obj, path, value):
    if not path:
        return value
    out = copy.deepcopy(obj)
    cur = out
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return out


@st.composite
def mutated(draw, base):
    doc = draw(st.sampled_from(base))
    paths = list(paths_of(doc))
    path = draw(st.sampled_from(paths))
    return replaced(doc, path, draw(json_values))


def read_and_evaluate(data: bytes) -> None:
    try:
        turns = read_slice_bytes(data, "fuzz.jsonl")
        validate_against(turns, REGISTRY, file="fuzz.jsonl")
        for t in turns:
            validate_turn(t, REGISTRY.get(t.workflow))
    except SageInputError:
        return
    Evaluator(REGISTRY, CascadeConfig.named("no_s2")).evaluate(turns)


@FUZZ
@given(st.binary(max_size=300))
def test_slice_reader_on_arbitrary_bytes(data):
    read_and_evaluate(data)


@FUZZ
@given(st.lists(json_values, min_size=1, max_size=3))
def test_slice_reader_on_arbitrary_json_lines(values):
    read_and_evaluate("\n".join(json.dumps(v) for v in values).encode())


@FUZZ
@given(mutated(BASE_TURNS))
def test_slice_reader_on_turns_with_one_field_replaced(turn):
    read_and_evaluate(json.dumps(turn).encode())


@pytest.fixture(scope="module")
def sgd_dialogues(shared_data):
    return json.loads((shared_data / "sgd" / "test" / "dialogues_001.json").read_text())[:2]


def test_sgd_loader_on_dialogues_with_one_field_replaced(sgd_dialogues, sgd_schema_path, tmp_path_factory):
    from sage_core import load_sgd_dialogues

    registry = load_workflows(sgd_schema_path)
    folder = tmp_path_factory.mktemp("sgd_fuzz")

    @FUZZ
    @given(mutated(sgd_dialogues))
    def check(dialogue):
        f = folder / "dialogues_001.json"
        f.write_text(json.dumps([dialogue]))
        try:
            load_sgd_dialogues(f, registry)
        except SageInputError:
            pass

    check()


def test_system_outputs_loader_on_outputs_with_one_field_replaced(shared_data, tmp_path_factory):
    from sage_core import load_system_outputs

    mw = shared_data / "multiwoz"
    registry = load_workflows(mw / "schema_2.2.json")
    raw = json.loads((mw / "system_outputs" / "pptod.json").read_text())
    base = [{k: raw[k]} for k in list(raw)[:2]]
    folder = tmp_path_factory.mktemp("outputs_fuzz")

    @FUZZ
    @given(mutated(base))
    def check(outputs):
        f = folder / "outputs.json"
        f.write_text(json.dumps(outputs))
        try:
            load_system_outputs(f, registry)
        except SageInputError:
            pass

    check()


def test_abcd_loader_on_conversations_with_one_field_replaced(shared_data, tmp_path_factory):
    from sage_core.corpora.abcd.loader import load_abcd_conversations
    from sage_core.corpora.abcd.workflows import load_abcd_workflows

    ab = shared_data / "abcd"
    registry = load_abcd_workflows(ab / "ontology.json", ab / "kb.json")
    raw = json.loads((ab / "abcd_sample.json").read_text())
    convs = raw if isinstance(raw, list) else next(iter(raw.values()))
    folder = tmp_path_factory.mktemp("abcd_fuzz")

    @FUZZ
    @given(mutated(convs[:1]))
    def check(conv):
        f = folder / "abcd.json"
        f.write_text(json.dumps([conv]))
        try:
            load_abcd_conversations(f, registry)
        except SageInputError:
            pass

    check()
