"""Streaming and parallel ``evaluate``: same verdicts in the same order for 1 and 2 worker processes,
online metrics equal to the list metrics, no partial output on failure."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sage_core import CascadeConfig, Evaluator, SageInputError, classification_metrics, load_workflows, read_slice
from sage_core.evaluator.batch import evaluate_to_file
from sage_core.science.metrics import OnlineMetrics

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo"
SCHEMA = str(DEMO / "schema.json")
REGISTRY = load_workflows(SCHEMA)


def comparable(line: str) -> dict:
    """A verdict without its wall-clock latency (the only field that may differ between runs)."""
    d = json.loads(line)
    d.pop("latency_ms")
    return d


def replicated_slice(path: Path, copies: int) -> Path:
    """The demo slice ``copies`` times with new turn ids; odd copies text-only (annotations stripped),
    so S2's encoder runs on extracted evidence."""
    rows = [json.loads(x) for x in (DEMO / "demo_slice.jsonl").read_text().splitlines()]
    with open(path, "w") as fh:
        for k in range(copies):
            for r in rows:
                r = dict(r, turn_id=f"{r['turn_id']}#{k}", dialogue_id=f"{r['dialogue_id']}#{k}")
                if k % 2:
                    r.pop("user_values", None)
                    r.pop("agent_acts", None)
                fh.write(json.dumps(r) + "\n")
    return path


@pytest.fixture(scope="module")
def big_slice(tmp_path_factory):
    return replicated_slice(tmp_path_factory.mktemp("batch") / "slice.jsonl", 8)  # 320 turns, 2 chunks


def test_one_and_two_workers_give_the_same_verdicts_in_the_same_order(big_slice, tmp_path):
    cfg = CascadeConfig.named("sage-core", s2_backend="offline")
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    m1, m2 = OnlineMetrics(), OnlineMetrics()
    r1 = evaluate_to_file([str(big_slice)], REGISTRY, one, cfg, workers=1, on_record=m1.add)
    r2 = evaluate_to_file([str(big_slice)], REGISTRY, two, cfg, workers=2, on_record=m2.add)
    a, b = one.read_text().splitlines(), two.read_text().splitlines()
    assert r1.n == r2.n == len(a) == 320
    assert [comparable(x) for x in a] == [comparable(x) for x in b]
    assert [json.loads(x)["turn_id"] for x in a] == [t.turn_id for t in read_slice(big_slice)]
    r1m, r2m = m1.result(), m2.result()
    r1m.pop("p50_ms"), r2m.pop("p50_ms")
    assert r1m == r2m and r1m["n"] == 320
    # the streamed run agrees with the in-memory evaluator and the list metrics
    turns = read_slice(big_slice)
    ref = Evaluator(REGISTRY, cfg).evaluate(turns)
    assert [comparable(json.dumps(v.to_dict())) for v in ref] == [comparable(x) for x in a]
    expect = classification_metrics(ref, turns)
    expect.pop("p50_ms")
    assert r1m == expect


def test_online_p50_is_within_one_bin_of_the_median():
    import numpy as np

    from sage_core.evaluator.batch import VerdictRecord

    m = OnlineMetrics()
    lat = np.random.default_rng(0).lognormal(0.0, 1.0, 1001)
    for x in lat:
        m.add(VerdictRecord(None, None, "acceptable", (), float(x), 0, 0.0, "offline"))
    assert m.p50_ms() == pytest.approx(float(np.median(lat)), rel=0.006)


def test_bad_line_fails_before_any_output_and_leaves_no_file(tmp_path):
    rows = (DEMO / "demo_slice.jsonl").read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(rows[:5] + ['{"turn_id": "x"}'] + rows[5:]) + "\n")
    out = tmp_path / "v.jsonl"
    with pytest.raises(SageInputError) as e:
        evaluate_to_file([str(bad)], REGISTRY, out, CascadeConfig.named("no_s2"), workers=1)
    assert e.value.line == 6 and e.value.file == str(bad)
    assert not out.exists() and not (tmp_path / "v.jsonl.partial").exists()


def test_duplicate_turn_id_is_found_by_the_streaming_check(tmp_path):
    rows = (DEMO / "demo_slice.jsonl").read_text().splitlines()
    dup = tmp_path / "dup.jsonl"
    dup.write_text("\n".join(rows + rows[:1]) + "\n")
    with pytest.raises(SageInputError) as e:
        evaluate_to_file([str(dup)], REGISTRY, tmp_path / "v.jsonl", CascadeConfig.named("no_s2"))
    assert e.value.line == len(rows) + 1 and e.value.field == "turn_id"
