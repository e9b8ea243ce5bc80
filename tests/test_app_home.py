"""Home page (app.py): opens on the demo slice, runs the cascade, rejects bad input with st.error."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from sage_core.science.metrics import classification_metrics
from ui.loading import DEMO_SCHEMA, load_demo

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
TIMEOUT = 180


def _texts(at) -> str:
    parts = [e.value for e in at.markdown] + [e.value for e in at.info] + [e.value for e in at.caption]
    return "\n".join(str(p) for p in parts)


def _upload(at, slice_bytes: bytes, name: str = "bad.jsonl"):
    at.radio(key="load_source").set_value("Upload").run()
    at.file_uploader(key="load_files").set_value([(name, slice_bytes, "application/json")])
    at.file_uploader(key="load_schema_file").set_value(("schema.json", DEMO_SCHEMA.read_bytes(),
                                                        "application/json"))
    at.run()
    at.button(key="load_upload_btn").click().run()
    return at


def test_opens_on_demo_and_runs_sage_core(db_url):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    demo = load_demo()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Turns"] == str(len(demo.turns))
    assert metrics["Dialogues"] == str(demo.n_dialogues)

    at.button(key="run_one").click().run()
    assert not at.exception and not at.error
    ev = Evaluator(demo.registry, CascadeConfig.named("sage-core", s2_backend="offline"))
    expected = classification_metrics(ev.evaluate(demo.turns), demo.turns)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["F1"] == f"{expected['f1']:.3f}"
    assert metrics["Precision"] == f"{expected['precision']:.3f}"
    # the backend that actually ran is always stated
    assert f"**{ev.s2_backend_name}**" in _texts(at)
    table = at.dataframe[-1].value
    assert table.loc[0, "S2 backend that ran"] == ev.s2_backend_name
    assert table.loc[0, "F1"] == pytest.approx(expected["f1"])


def test_malformed_jsonl_upload_shows_file_and_line(db_url):
    good = load_demo().turns[0].to_dict()
    data = (json.dumps(good) + "\n" + '{"turn_id": "x", "dialogue_id": \n').encode()
    at = _upload(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), data)
    assert not at.exception
    assert len(at.error) == 1
    msg = at.error[0].value
    assert "bad.jsonl" in msg and "line 2" in msg and "malformed JSON" in msg


def test_unknown_workflow_and_unknown_slot_name_the_field(db_url):
    rec = load_demo().turns[0].to_dict()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    rec_wf = dict(rec, workflow="Hotels_9:BookRoom")
    _upload(at, (json.dumps(rec_wf) + "\n").encode(), "wf.jsonl")
    assert not at.exception
    assert "unknown workflow 'Hotels_9:BookRoom'" in at.error[0].value and "field 'workflow'" in at.error[0].value

    rec_slot = dict(rec, state_after=dict(rec["state_after"], spice_level="hot"))
    at.file_uploader(key="load_files").set_value([("slot.jsonl", (json.dumps(rec_slot) + "\n").encode(),
                                                   "application/json")])
    at.run()
    at.button(key="load_upload_btn").click().run()
    assert not at.exception
    msg = at.error[0].value
    assert "slot.jsonl" in msg and "line 1" in msg and "state_after.spice_level" in msg
    # the demo slice stays loaded after a rejected upload
    assert {m.label: m.value for m in at.metric}["Turns"] == str(len(load_demo().turns))


def test_upload_of_valid_slice_replaces_the_demo(db_url):
    turns = load_demo().turns[:5]
    data = "".join(json.dumps(t.to_dict()) + "\n" for t in turns).encode()
    at = _upload(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), data, "five.jsonl")
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["Turns"] == "5"
    assert "upload: five.jsonl" in _texts(at)


def test_missing_nli_model_is_an_error_not_a_traceback(db_url, monkeypatch, tmp_path):
    monkeypatch.setenv("SAGE_NLI_MODEL_DIR", str(tmp_path / "no-such-model"))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.selectbox(key="run_backend").set_value("nli (cross-encoder NLI model)").run()
    at.button(key="run_one").click().run()
    assert not at.exception
    assert len(at.error) == 1
    assert "Model unavailable" in at.error[0].value and "no-such-model" in at.error[0].value


def test_raw_sgd_upload_and_path_load_real_dialogues(db_url, shared_data):
    from sage_core.corpora import load_corpus

    folder = shared_data / "sgd" / "test"
    dlg, schema = folder / "dialogues_001.json", folder / "schema.json"
    expected, _ = load_corpus("sgd", dlg, schema)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key="load_source").set_value("Upload").run()
    at.selectbox(key="load_kind").set_value("SGD dialogues (+ schema.json)").run()
    at.file_uploader(key="load_files").set_value([("dialogues_001.json", dlg.read_bytes(), "application/json"),
                                                  ("schema.json", schema.read_bytes(), "application/json")])
    at.run()
    at.button(key="load_upload_btn").click().run()
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["Turns"] == str(len(expected))

    at.radio(key="load_source").set_value("Path on disk").run()
    at.selectbox(key="load_kind").set_value("Auto-detect").run()
    at.text_input(key="load_path").set_value(str(dlg)).run()
    at.button(key="load_path_btn").click().run()
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["Turns"] == str(len(expected))
    assert str(dlg) in _texts(at)


def test_abcd_upload_with_its_ontology(db_url, shared_data):
    from sage_core.corpora import load_corpus

    folder = shared_data / "abcd"
    expected, _ = load_corpus("abcd", folder / "abcd_sample.json")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key="load_source").set_value("Upload").run()
    at.file_uploader(key="load_files").set_value(
        [(n, (folder / n).read_bytes(), "application/json") for n in ("abcd_sample.json", "ontology.json", "kb.json",
                                                                      "guidelines.json")])
    at.run()
    at.button(key="load_upload_btn").click().run()  # format left on auto-detect
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["Turns"] == str(len(expected))


def test_real_multiwoz_system_outputs_upload(db_url, shared_data):
    from sage_core.corpora import load_corpus

    outputs, schema = shared_data / "multiwoz" / "system_outputs" / "ubar.json", shared_data / "multiwoz" / "schema_2.2.json"
    expected, _ = load_corpus("mwoz-outputs", outputs, schema)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key="load_source").set_value("Upload").run()
    at.selectbox(key="load_kind").set_value("MultiWOZ system outputs (JSON)").run()
    at.file_uploader(key="load_files").set_value([("ubar.json", outputs.read_bytes(), "application/json")])
    at.file_uploader(key="load_schema_file").set_value(("schema_2.2.json", schema.read_bytes(), "application/json"))
    at.run()
    at.button(key="load_upload_btn").click().run()
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["Turns"] == str(len(expected))
    assert "upload: ubar.json" in _texts(at)


def test_sage_llm_runs_against_an_openai_compatible_endpoint(db_url, monkeypatch, tmp_path):
    """With an endpoint configured SAGE-LLM runs; its paid calls are the requests the server answered.

    tau is raised so that S2 abstains and the open-class criteria really go to S3.
    """
    from sage_core.data.settings import get_settings
    from tests.llm_server import LLMServer

    with LLMServer(default='{"answer": "false", "confidence": 0.9}', max_lifetime_s=120) as srv:
        monkeypatch.setenv("SAGE_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("SAGE_LLM_API_KEY", "test-key")
        monkeypatch.setenv("SAGE_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("SAGE_TAU", "0.95")
        get_settings.cache_clear()
        at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
        at.selectbox(key="run_config").set_value("SAGE-LLM").run()
        at.button(key="run_one").click().run()
        assert not at.exception and not at.error
        table = at.dataframe[-1].value.set_index("configuration")
        assert srv.count() > 0
        assert table.loc["SAGE-LLM", "paid calls"] == srv.count()
        assert {m.label for m in at.metric} >= {"F1", "Precision", "Recall"}


def test_sage_llm_without_endpoint_error_when_chosen_notice_in_a_batch(db_url, monkeypatch):
    from sage_core.data.settings import get_settings

    monkeypatch.delenv("SAGE_LLM_API_KEY", raising=False)
    get_settings.cache_clear()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.selectbox(key="run_config").set_value("SAGE-LLM").run()
    at.button(key="run_one").click().run()  # an explicit choice that cannot run: an error with the how-to
    assert not at.exception
    assert len(at.error) == 1
    assert "SAGE-LLM cannot run" in at.error[0].value
    assert "SAGE_LLM_BASE_URL" in at.error[0].value and "SAGE_LLM_API_KEY" in at.error[0].value

    at.button(key="run_all").click().run()  # a batch: SAGE-LLM skipped with a notice, the others run
    assert not at.exception and not at.error
    assert any("SAGE-LLM skipped" in i.value and "SAGE_LLM_BASE_URL" in i.value for i in at.info)
    table = at.dataframe[-1].value
    assert set(table["configuration"]) == {"SAGE-Core", "no_S1", "no_S2"}


def test_recall_per_class_and_clean_specificity(db_url):
    demo = load_demo()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.button(key="run_one").click().run()
    assert not at.exception and not at.error
    vs = {v.turn_id: v for v in Evaluator(demo.registry, CascadeConfig.named("sage-core", s2_backend="offline"))
          .evaluate(demo.turns)}
    clean = [t for t in demo.turns if t.gold.label == "acceptable"]
    spec = sum(not vs[t.turn_id].predicted_failure for t in clean) / len(clean)
    assert {m.label: m.value for m in at.metric}["Specificity on clean turns"] == f"{spec:.3f}"
    per_class = next(d.value for d in at.dataframe if "gold class" in d.value.columns).set_index("gold class")
    assert "clean" not in per_class.index and "acceptable" not in per_class.index
    for cls in ("IUV", "WNF", "PC", "UV"):
        fails = [t for t in demo.turns if t.gold.label == "failure" and t.gold.failure_class == cls]
        assert per_class.loc[cls, "gold failures"] == len(fails)
        assert per_class.loc[cls, "recall"] == pytest.approx(
            sum(vs[t.turn_id].predicted_failure for t in fails) / len(fails), abs=1e-4)


def test_empty_upload_and_slice_path_without_schema_are_named(db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("SAGE_DATA_ROOTS", os.pathsep.join([str(tmp_path), str(DEMO_SCHEMA.parent)]))
    at = _upload(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), b"", "empty.jsonl")
    assert not at.exception
    assert len(at.error) == 1 and "empty.jsonl" in at.error[0].value and "empty" in at.error[0].value

    path = tmp_path / "five.jsonl"
    path.write_text("".join(json.dumps(t.to_dict()) + "\n" for t in load_demo().turns[:5]))
    at.radio(key="load_source").set_value("Path on disk").run()
    at.text_input(key="load_path").set_value(str(path)).run()
    at.button(key="load_path_btn").click().run()
    assert not at.exception
    msg = at.error[0].value
    assert str(path) in msg and "Schema field" in msg
    at.text_input(key="load_schema_path").set_value(str(DEMO_SCHEMA)).run()
    at.button(key="load_path_btn").click().run()
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["Turns"] == "5"


def test_two_slice_files_uploaded_at_once_is_an_input_error(db_url):
    rec = load_demo().turns[0].to_dict()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key="load_source").set_value("Upload").run()  # format left on auto-detect
    at.file_uploader(key="load_files").set_value([(n, (json.dumps(rec) + "\n").encode(), "application/json")
                                                  for n in ("a.jsonl", "b.jsonl")])
    at.file_uploader(key="load_schema_file").set_value(("schema.json", DEMO_SCHEMA.read_bytes(), "application/json"))
    at.run()
    at.button(key="load_upload_btn").click().run()
    assert not at.exception
    assert len(at.error) == 1
    msg = at.error[0].value
    assert "a.jsonl" in msg and "b.jsonl" in msg and "one JSONL file" in msg and "sage_upload" not in msg
