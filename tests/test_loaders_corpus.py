"""load_corpus / detect_kind across every corpus kind, with default schema lookup and input errors."""
from __future__ import annotations

import json

import pytest
from test_loaders_multiwoz import _mw22_dialogue, _mw24_data

from sage_core.corpora import detect_kind, load_corpus
from sage_core.data.errors import SageInputError
from sage_core.data.slice_io import write_slice


def test_detect_kind_on_real_files(shared_data):
    assert detect_kind(shared_data / "sgd" / "test") == "sgd"
    assert detect_kind(shared_data / "sgd" / "test" / "dialogues_003.json") == "sgd"
    assert detect_kind(shared_data / "abcd" / "abcd_sample.json") == "abcd"
    assert detect_kind(shared_data / "multiwoz" / "system_outputs" / "soloist.json") == "mwoz-outputs"


def test_detect_kind_on_written_files(tmp_path):
    (tmp_path / "dialogues_001.json").write_text(json.dumps(_mw22_dialogue()))
    assert detect_kind(tmp_path / "dialogues_001.json") == "multiwoz22"
    assert detect_kind(tmp_path) == "multiwoz22"
    (tmp_path / "data.json").write_text(json.dumps(_mw24_data()))
    assert detect_kind(tmp_path / "data.json") == "multiwoz24"
    (tmp_path / "x.jsonl").write_text("{}\n")
    assert detect_kind(tmp_path / "x.jsonl") == "slice"
    (tmp_path / "odd.json").write_text(json.dumps({"a": 1}))
    with pytest.raises(SageInputError, match="cannot tell"):
        detect_kind(tmp_path / "odd.json")


def test_load_corpus_defaults_find_schemas(shared_data):
    turns, reg = load_corpus("sgd", shared_data / "sgd" / "test" / "dialogues_011.json")
    assert len(turns) > 100 and turns[0].workflow in reg
    assert turns.stats.files == 1
    turns, reg = load_corpus(None, shared_data / "abcd" / "abcd_sample.json")
    assert len(reg) == 55 and turns.stats.dialogues == 3
    turns, reg = load_corpus("mwoz-outputs", shared_data / "multiwoz" / "system_outputs" / "pptod.json")
    assert "hotel:book_hotel" in reg and turns.stats.dialogues == 1000


def test_load_corpus_multiwoz_and_slice(tmp_path, shared_data):
    schema = shared_data / "multiwoz" / "schema_2.2.json"
    (tmp_path / "dialogues_001.json").write_text(json.dumps(_mw22_dialogue()))
    turns, reg = load_corpus("multiwoz22", tmp_path, schema)
    assert [t.workflow for t in turns] == ["hotel:find_hotel", "hotel:book_hotel"]
    (tmp_path / "data.json").write_text(json.dumps(_mw24_data()))
    turns24, _ = load_corpus(None, tmp_path / "data.json", schema)
    assert len(turns24) == 3
    # round trip through our slice format, validated against the same schema
    write_slice(turns24, tmp_path / "s.jsonl")
    again, _ = load_corpus("slice", tmp_path / "s.jsonl", schema)
    assert [t.to_dict() for t in again] == [t.to_dict() for t in turns24]
    with pytest.raises(SageInputError, match="needs a schema"):
        load_corpus("slice", tmp_path / "s.jsonl")


def test_abcd_slice_uses_ontology_as_schema(tmp_path, shared_data):
    turns, _ = load_corpus("abcd", shared_data / "abcd" / "abcd_sample.json")
    write_slice(turns, tmp_path / "abcd.jsonl")
    again, reg = load_corpus("slice", tmp_path / "abcd.jsonl", shared_data / "abcd" / "ontology.json")
    assert len(again) == len(turns)
    spec = reg.get(again[0].workflow)
    assert spec.legal_next({}) == {"customer_name", "account_id"}


def test_load_corpus_input_errors(tmp_path, shared_data):
    schema = shared_data / "sgd" / "test" / "schema.json"
    bad = tmp_path / "dialogues_001.json"
    bad.write_text('[\n{"dialogue_id": "x",\n "turns": [1,]}]')
    with pytest.raises(SageInputError) as e:
        load_corpus("sgd", bad, schema)
    assert e.value.line == 3 and "malformed JSON" in str(e.value)
    bad.write_text(json.dumps([{"dialogue_id": "x", "services": [], "turns": []}]))
    with pytest.raises(SageInputError, match="no turns"):
        load_corpus("sgd", bad, schema)
    with pytest.raises(SageInputError, match="unknown corpus kind"):
        load_corpus("nope", bad, schema)
    with pytest.raises(SageInputError, match="needs a schema"):
        load_corpus("sgd", bad)  # no schema.json beside it in tmp_path
