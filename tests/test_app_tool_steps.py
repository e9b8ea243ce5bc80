"""Tool-calling agent steps in the app: the Inspector shows the call's arguments as the state diff and the
tool outputs collapsed in the history; the benchmark reference never reaches the page."""
from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from sage_core import Turn, Utterance
from ui import tool_steps

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
TIMEOUT = 180


def test_history_collapses_tool_outputs_and_escapes():
    hist = [Utterance("user", "book <b>me</b>"), Utterance("agent", '[call] get_user({"user_id": "a_1"})'),
            Utterance("tool", '[get_user] {"user_id": "a_1", "payment_methods": {}}'),
            Utterance("tool", "[book] Error: payment amount does not add up")]
    html = tool_steps.history_html(hist)
    assert "&lt;b&gt;me&lt;/b&gt;" in html and "<b>me</b>" not in html
    assert html.count("<details") == 2 and "&rarr; get_user(" in html
    assert 'class="sage-err">error' in html  # the failing output is marked
    t = Turn("d-s1", "d", "x:book", hist, "yes", 'book({"a": 1})', {}, {"a": "1"},
             meta={"step": {"kind": "tool_call", "tool": "book", "result": "Error: no", "is_error": True,
                            "unknown_args": ["zz"]}, "reference": {"reward": 0.0}})
    call = tool_steps.call_html(t)
    assert "<b>book</b>" in call and "zz" in call and "Error: no" in call and "reward" not in call
    assert tool_steps.step(Turn("x", "x", "a:b", [], "", "", {}, {})) is None


def test_inspector_on_a_tau_bench_failure(db_url, shared_data):
    d = shared_data / "tau_bench" / "airline"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key="load_source").set_value("Path on disk").run()
    at.selectbox(key="load_kind").set_value("Auto-detect").run()
    at.text_input(key="load_path").set_value(str(d / "trajectories_gpt-4o.json")).run()
    at.text_input(key="load_schema_path").set_value(str(REPO / "data" / "specs" / "tau_bench_airline.yaml")).run()
    at.button(key="load_path_btn").click().run()
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["Turns"] == "1426"
    at.button(key="run_one").click().run()
    assert not at.exception and not at.error
    at.switch_page("pages/1_Inspector.py")
    at.query_params["turn"] = "task0-trial0-s009"  # the first booking: premature (no full listing), bags invented
    at.run()
    assert not at.exception and not at.error
    md = "\n".join(m.value for m in at.markdown)
    assert "book_reservation" in md and "passengers[0].first_name" in md
    assert "<details" in md and "[get_user_details]" in md
    # the benchmark's reference (reward, gold actions, the user's goal) only in the lead's collapsed meta record
    meta_block = next(m.value for m in at.markdown if "Turn metadata (meta)" in m.value)
    assert meta_block.startswith('<details class="sage-att"><summary>') and "gold_actions" in meta_block
    rest = "\n".join(m.value for m in at.markdown if m.value != meta_block)
    assert "gold_actions" not in rest and "instruction" not in rest.lower().replace("instructions", "")


def test_audits_sample_tool_steps_blind(shared_data):
    from audit.assignment import blind_payload
    from audit.sampling import labels_stratum, paper_protocol
    from sage_core import CascadeConfig, Evaluator
    from sage_core.corpora.agent_logs import load_agent_logs

    d = shared_data / "tau_bench" / "airline"
    turns, reg = load_agent_logs("tau-bench", d / "trajectories_gpt-4o.json", d / "tools.json",
                                 REPO / "data" / "specs" / "tau_bench_airline.yaml")
    turns = [t for t in turns if t.dialogue_id.startswith(("task0-", "task3-", "task13-"))]
    vs = Evaluator(reg, CascadeConfig(name="sage-core", s2_backend="offline")).evaluate(turns)
    labels = {v.turn_id: v.label.value for v in vs}
    classes = {v.turn_id: (v.fired_classes or [None])[0] for v in vs}
    # three tasks' trajectories only: several steps per dialogue (the default draws one per dialogue)
    sample = paper_protocol(turns, n=20, seed=0, key=labels_stratum(labels, classes), max_per_dialogue=None)
    assert len(sample) == 20
    strata = {s.stratum for s in sample.turns}
    assert any(not s.endswith(("clean", "unlabelled")) for s in strata)  # SAGE-flagged steps are sampled
    for s in sample.turns:
        p = blind_payload(s.turn)
        assert "meta" not in p and "reward" not in json.dumps(p)
