"""Report: numbers in the tables match the statistics, sections and plots are written."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sage_core.data.errors import SageInputError
from sage_core.data.types import AgentAct, Gold, Turn, UserValue
from sage_core.data.verdict_io import EvaluatorVerdicts
from sage_core.science.report.cli import write_outputs
from sage_core.science.report.compute import (
    build_report,
    has_annotations,
    pareto_front,
    sgdx_stats,
    strip_annotations,
)
from sage_core.science.report.render import render
from sage_core.science.statistics import holm_bonferroni, paired_bootstrap, prf

REPO = Path(__file__).resolve().parents[1]
CLASSES = ["IUV", "WNF", "PC", "UV"]


def turns(n=60):
    out = []
    for i in range(n):
        fail = i % 2 == 0
        out.append(Turn(f"d{i // 3}:{i}", f"d{i // 3}", "S_1:I", [], "u", "a", {}, {},
                        gold=Gold("failure" if fail else "acceptable", CLASSES[(i // 2) % 4] if fail else None)))
    return out


def verdicts(name, ts, flip, rng, conf=True, cost=0.0, stages=None):
    labels, confs = {}, {}
    for i, t in enumerate(ts):
        g = t.gold.label
        wrong = i in flip
        labels[t.turn_id] = ("acceptable" if g == "failure" else "failure") if wrong else g
        confs[t.turn_id] = float(rng.uniform(0, 0.5) if wrong else rng.uniform(0.5, 1.0))
    ev = EvaluatorVerdicts(name, labels, confs if conf else None,
                           cost_usd={t.turn_id: cost for t in ts}, latency_ms={t.turn_id: 10.0 + i for i, t in
                                                                                enumerate(ts)},
                           paid_calls={t.turn_id: int(cost > 0) for t in ts})
    if stages:
        ev.stages = {t.turn_id: list(stages) for t in ts}
    return ev


@pytest.fixture
def setup():
    rng = np.random.default_rng(0)
    ts = turns()
    sage = {"sage-core": verdicts("sage-core", ts, {0, 7}, rng, stages=["S1", "S1", "S2-symbolic"]),
            "no_s1": verdicts("no_s1", ts, {0, 7, 9, 12, 30}, rng, stages=["S2-symbolic", "none"]),
            "no_s2": verdicts("no_s2", ts, {0, 7, 8, 10}, rng, stages=["S1", "none"])}
    base = {"geval": verdicts("geval", ts, set(range(0, 60, 5)), rng, cost=0.002),
            "direct": verdicts("direct", ts, set(range(1, 60, 4)), rng, conf=False, cost=0.001)}
    return ts, sage, base


def test_tables_match_statistics(setup):
    ts, sage, base = setup
    d = build_report(ts, sage, base, n_resamples=500)
    y = np.array([t.gold.label == "failure" for t in ts], int)
    ids = [t.turn_id for t in ts]
    for k in ("sage-core", "geval", "direct"):
        ev = sage.get(k) or base[k]
        m = prf(y, ev.predicted(ids))
        assert d.evaluators[k]["f1"] == pytest.approx(m["f1"])
        assert d.evaluators[k]["f1_lo"] <= m["f1"] <= d.evaluators[k]["f1_hi"]
    assert set(d.evaluators) == {"sage-core", "geval", "direct"}  # ablation configs are not in Table 1
    # pairwise deltas and Holm
    ps = {k: paired_bootstrap(y, sage["sage-core"].predicted(ids), {k: base[k].predicted(ids)}, 500).p
          for k in base}
    assert [d.pairwise[k]["p_holm"] for k in base] == pytest.approx(holm_bonferroni([ps[k] for k in base]))
    best = max(base, key=lambda k: d.evaluators[k]["f1"])
    assert d.paired["best_baseline"] == best
    assert d.paired["delta"] == pytest.approx(d.evaluators["sage-core"]["f1"] - d.evaluators[best]["f1"])
    assert d.paired["delta"] > 0 and d.paired["lo"] > 0
    # per-class recall: sage misses turn 0 (an IUV failure) only
    assert d.evaluators["sage-core"]["per_class_recall"]["WNF"] == 1.0
    assert d.evaluators["sage-core"]["per_class_recall"]["IUV"] == pytest.approx(7 / 8)
    # cost per 1k turns and p50 latency
    assert d.evaluators["geval"]["cost_per_1k"] == pytest.approx(2.0)
    assert d.evaluators["direct"]["p50_latency_ms"] == pytest.approx(float(np.median(10.0 + np.arange(60))))


def test_ablation_routing_selective(setup):
    ts, sage, base = setup
    d = build_report(ts, sage, base, n_resamples=300)
    rows = {a["row"]: a for a in d.ablation}
    assert list(rows) == ["full", "no_S1", "no_S2", "no_S3"]
    assert rows["no_S3"]["f1"] == rows["full"]["f1"] and "no_S3 = full" in rows["no_S3"]["note"]
    assert rows["no_S1"]["delta"] < 0
    r = d.routing["sage-core"]
    assert r["shares"]["S1"] == pytest.approx(2 / 3) and r["shares"]["S2-symbolic"] == pytest.approx(1 / 3)
    assert r["criteria_per_turn"] == 3
    assert d.routing["no_s1"]["shares"]["none"] == pytest.approx(0.5)
    # selective: the two errors have the lowest confidence, so F1@90 % is perfect
    s = d.selective["sage-core"]
    assert s["f1_at"]["100"] == pytest.approx(d.evaluators["sage-core"]["f1"])
    assert s["f1_at"]["90"] == 1.0
    assert "direct" not in d.selective  # no confidence
    # calibration: equals the ECE of the same correctness/confidence vectors, bins cover every turn
    from sage_core.science.calibration import expected_calibration_error
    ids = [t.turn_id for t in ts]
    ev = sage["sage-core"]
    ok = [int(ev.labels[i] == t.gold.label) for i, t in zip(ids, ts)]
    assert s["ece"] == pytest.approx(expected_calibration_error(ok, ev.confidences(ids)))
    assert sum(b["n"] for b in s["reliability"]) == len(ts) and s["ece"] > 0


def test_sgdx_invariance():
    ts = turns(6)
    mk = lambda labs: EvaluatorVerdicts("s", {t.turn_id: l for t, l in zip(ts, labs)})  # noqa: E731
    F, A = "failure", "acceptable"
    per = {"v1": mk([F, A, F, A, F, A]), "v2": mk([F, A, F, A, F, A]), "v3": mk([F, A, A, A, F, F])}
    s = sgdx_stats(per, ts)
    assert s["invariant_share"] == pytest.approx(4 / 6)
    assert s["f1"]["v1"] == 1.0
    f3 = prf([1, 0, 1, 0, 1, 0], [1, 0, 0, 0, 1, 1])["f1"]
    assert s["mean_f1"] == pytest.approx((2 + f3) / 3)
    assert s["sigma_f1"] == pytest.approx(np.std([1, 1, f3]))


def test_sgdx_text_only_column():
    ts = turns(6)
    mk = lambda labs: EvaluatorVerdicts("sage-core", {t.turn_id: l for t, l in zip(ts, labs)},  # noqa: E731
                                        {t.turn_id: 1.0 for t in ts})
    F, A = "failure", "acceptable"
    gold = [F, A, F, A, F, A]
    sage = {"sage-core": mk(gold)}
    ann = {"v1": mk(gold), "v2": mk(gold)}
    txt = {"v1": mk(gold), "v2": mk([F, A, A, A, F, A])}
    d = build_report(ts, sage, {}, n_resamples=50, sgdx=ann, sgdx_text_only=txt)
    assert d.sgdx["mean_f1"] == 1.0 and d.sgdx["text_only"]["f1"]["v2"] == pytest.approx(0.8)
    assert d.sgdx["text_only"]["invariant_share"] == pytest.approx(5 / 6)
    md = render(d, "sage-core", [])
    assert "| v2 | 1.000 | 0.800 |" in md and "F1 (text-only)" in md


def test_render_and_outputs(setup, tmp_path):
    ts, sage, base = setup
    d = build_report(ts, sage, base, n_resamples=300, s2_backend="offline (test)", cluster_by_dialogue=True)
    md = render(d, "sage-core", list(base), "demo.jsonl")
    for section in ("Table 1", "Per-tier ablation", "Routing anatomy", "Selective evaluation",
                    "Cost and latency", "offline (test)", "strongest baseline", "whole dialogues"):
        assert section in md
    files = write_outputs(d, md, ts, {**sage, **base}, tmp_path)
    names = {f.name for f in files}
    assert {"report.md", "report.json", "pareto.png", "risk_coverage.png", "reliability_sage-core.png"} <= names
    assert "reliability_direct.png" not in names  # no confidence, no reliability diagram
    assert (tmp_path / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| ECE |" in md
    back = json.loads((tmp_path / "report.json").read_text())
    assert back["evaluators"]["geval"]["f1"] == pytest.approx(d.evaluators["geval"]["f1"])
    assert "![pareto](pareto.png)" in (tmp_path / "report.md").read_text()


def test_pareto_front():
    pts = {"a": (0.0, 0.9), "b": (1.0, 0.95), "c": (2.0, 0.8), "d": (0.0, 0.85)}
    assert pareto_front(pts) == ["a", "b"]


def test_errors(setup):
    ts, sage, base = setup
    with pytest.raises(SageInputError, match="clash"):
        build_report(ts, sage, {"no_s1": base["geval"]}, n_resamples=10)
    ts[3].gold = None
    with pytest.raises(SageInputError, match="gold"):
        build_report(ts, sage, base, n_resamples=10)


def _run_cli(args):
    import os
    import subprocess
    import sys
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", SAGE_LLM_API_KEY="",
               SAGE_LLM_BASE_URL="https://api.openai.com/v1")
    return subprocess.run([sys.executable, "-m", "sage_core", "report", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


def test_cli_bad_baseline_fails_fast(tmp_path):
    slice_ = REPO / "data" / "demo" / "demo_slice.jsonl"
    bad = tmp_path / "verdicts_x.jsonl"
    bad.write_text('{"turn_id": "rest-001-t1", "label": "maybe"}\n')
    r = _run_cli(["--slice", str(slice_), "--schema", str(REPO / "data" / "demo" / "schema.json"),
                  "--baselines", str(bad)])
    assert r.returncode == 2 and "line 1" in r.stderr and "label" in r.stderr and "Traceback" not in r.stderr


def test_cli_end_to_end_on_sgd_with_sgdx(shared_data, sgd_schema_path, tmp_path):
    from sage_core.data.slice_io import write_slice
    from sage_core.science.slice_builder import build_slice, load_turns
    turns, reg = load_turns("sgd", str(shared_data / "sgd" / "test" / "dialogues_001.json"), str(sgd_schema_path))
    sl, _ = build_slice(turns, reg, n=40, rate=0.5, seed=0)
    write_slice(sl, tmp_path / "slice.jsonl")
    base = tmp_path / "verdicts_judge.jsonl"
    # a baseline that calls everything a failure: recall 1, precision 0.5
    base.write_text("".join(json.dumps({"turn_id": t.turn_id, "label": "failure", "evaluator": "always-fail",
                                        "cost_usd": 0.001, "latency_ms": 500}) + "\n" for t in sl))
    out = tmp_path / "rep"
    r = _run_cli(["--slice", str(tmp_path / "slice.jsonl"), "--schema", str(sgd_schema_path),
                  "--baselines", str(base), "--sgdx-dir", str(shared_data / "sgd" / "sgd_x"),
                  "--n-resamples", "500", "--out-dir", str(out)])
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads((out / "report.json").read_text())
    assert data["evaluators"]["always-fail"]["f1"] == pytest.approx(2 / 3)
    assert data["evaluators"]["always-fail"]["cost_per_1k"] == pytest.approx(1.0)
    assert set(data["routing"]) == {"sage-core", "no_s1", "no_s2"}
    assert [a["row"] for a in data["ablation"]] == ["full", "no_S1", "no_S2", "no_S3"]
    assert sorted(data["sgdx"]["f1"]) == ["v1", "v2", "v3", "v4", "v5"]
    assert 0 <= data["sgdx"]["invariant_share"] <= 1
    assert data["s2_backend"]
    sage_f1 = data["evaluators"]["sage-core"]["f1"]
    assert data["paired"]["delta"] == pytest.approx(sage_f1 - 2 / 3)
    from sage_core.data.verdict_io import read_evaluator_verdicts
    v = read_evaluator_verdicts(out / "verdicts_sage-core.jsonl")
    assert len(v) == 40
    for f in ("report.md", "pareto.png", "risk_coverage.png"):
        assert (out / f).stat().st_size > 0
    assert "Table 1" in r.stdout and "SGD-X robustness" in r.stdout
    # the slice carries annotations, so Table 1b (text-only re-run) is always there
    assert "Table 1b: text-only" in r.stdout and "sage-core (text-only)" in r.stdout
    to = data["text_only"]
    assert to["name"] == "sage-core (text-only)" and 0 <= to["stats"]["f1"] <= 1
    assert to["pairwise"]["always-fail"]["delta"] == pytest.approx(to["stats"]["f1"] - 2 / 3)
    assert to["vs_annotated"]["delta"] == pytest.approx(to["stats"]["f1"] - sage_f1)
    assert len(read_evaluator_verdicts(out / "verdicts_sage-core_text-only.jsonl")) == 40
    assert sorted(data["sgdx"]["text_only"]["f1"]) == ["v1", "v2", "v3", "v4", "v5"]
    assert "F1 (text-only)" in r.stdout


def test_ablation_p_values_are_holm_adjusted(setup):
    ts, sage, base = setup
    d = build_report(ts, sage, base, n_resamples=300)
    tested = [a for a in d.ablation if "p" in a]
    assert [a["config"] for a in tested] == ["no_s1", "no_s2"]
    assert [a["p_holm"] for a in tested] == pytest.approx(holm_bonferroni([a["p"] for a in tested]))
    assert "p / p (Holm)" in render(d, "sage-core", list(base))


def test_text_only_table(setup):
    ts, sage, base = setup
    rng = np.random.default_rng(1)
    text = verdicts("sage-core", ts, {0, 7, 11, 14, 22}, rng, stages=["S2-symbolic", "S2-encoder", "none"])  # 3 more errors
    d = build_report(ts, sage, base, n_resamples=400, text_only=text)
    to = d.text_only
    assert to["name"] == "sage-core (text-only)"  # renamed: it would clash with the annotated row
    y = np.array([t.gold.label == "failure" for t in ts], int)
    ids = [t.turn_id for t in ts]
    pt = np.array(text.predicted(ids))
    m = prf(y, pt)
    assert to["stats"]["f1"] == pytest.approx(m["f1"]) and to["stats"]["f1_lo"] <= m["f1"] <= to["stats"]["f1_hi"]
    assert to["stats"]["precision"] == pytest.approx(m["precision"])
    # same per-class recall definition as Table 1: turn 0 (IUV), 14 (PC), 22 (UV) are failures missed
    assert to["stats"]["per_class_recall"]["IUV"] == pytest.approx(7 / 8)
    assert to["stats"]["per_class_recall"]["WNF"] == 1.0
    ps = {k: paired_bootstrap(y, pt, {k: base[k].predicted(ids)}, 400).p for k in base}
    assert [to["pairwise"][k]["p_holm"] for k in base] == pytest.approx(holm_bonferroni([ps[k] for k in base]))
    for k in base:
        assert to["pairwise"][k]["delta"] == pytest.approx(m["f1"] - d.evaluators[k]["f1"])
    assert to["vs_annotated"]["delta"] == pytest.approx(m["f1"] - d.evaluators["sage-core"]["f1"])
    assert to["changed_verdicts"] == 3
    assert to["routing"]["shares"]["none"] == pytest.approx(1 / 3)
    assert to["paired"]["best_baseline"] in base
    # Table 1 itself is unchanged by the text-only run
    assert set(d.evaluators) == {"sage-core", "geval", "direct"}
    md = render(d, "sage-core", list(base))
    assert "Table 1b: text-only setting" in md and "consistency check" in md
    assert "| sage-core (text-only) |" in md and "| sage-core (annotated) |" in md
    t1 = md.split("## Table 1b")[0]
    assert "(text-only)" not in t1
    back = json.loads(json.dumps(dataclasses_asdict(d), default=str))
    assert back["text_only"]["stats"]["f1"] == pytest.approx(m["f1"])


def dataclasses_asdict(d):
    from dataclasses import asdict
    return asdict(d)


def test_no_text_only_section_without_it(setup):
    ts, sage, base = setup
    d = build_report(ts, sage, base, n_resamples=100)
    assert d.text_only is None and "Table 1b" not in render(d, "sage-core", list(base))
    d = build_report(ts, sage, base, n_resamples=100, annotations_stripped=True)
    md = render(d, "sage-core", list(base))
    assert "Table 1b" not in md and "Annotations stripped" in md


def test_strip_and_has_annotations():
    t = Turn("d:1", "d", "S_1:I", [], "at 7 pm", "What city?", {}, {"time": "19:00"},
             user_values=[UserValue("time", "7 pm", (3, 7))], agent_acts=[AgentAct("REQUEST", "city")],
             gold=Gold("acceptable", None), meta={"x": 1})
    assert has_annotations([t]) and not has_annotations(strip_annotations([t]))
    (s,) = strip_annotations([t])
    assert s.user_values is None and s.agent_acts is None
    assert t.user_values and t.agent_acts  # the original is untouched
    assert (s.turn_id, s.user, s.agent, s.state_after, s.gold, s.meta) == (t.turn_id, t.user, t.agent,
                                                                          t.state_after, t.gold, t.meta)


def test_cli_strip_annotations(tmp_path):
    slice_ = REPO / "data" / "demo" / "demo_slice.jsonl"
    schema = REPO / "data" / "demo" / "schema.json"
    r = _run_cli(["--slice", str(slice_), "--schema", str(schema), "--configs", "sage-core",
                  "--n-resamples", "200", "--strip-annotations", "--out-dir", str(tmp_path)])
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Annotations stripped" in r.stdout and "Table 1b" not in r.stdout
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["annotations_stripped"] is True and data["text_only"] is None
    assert not (tmp_path / "verdicts_sage-core_text-only.jsonl").exists()
