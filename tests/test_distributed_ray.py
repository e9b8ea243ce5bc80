"""``evaluate --engine ray`` on a local Ray instance (2 CPUs, 127.0.0.1, shut down after): the same
verdicts as one process and as two worker processes, shard per input file, metrics identical."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the ray engine is optional at import time; requirements.txt installs it")

from sage_core import CascadeConfig  # noqa: E402
from sage_core.evaluator.batch import evaluate_to_file  # noqa: E402
from sage_core.science.metrics import OnlineMetrics  # noqa: E402
from tests.test_batch_evaluate import REGISTRY, SCHEMA, comparable, replicated_slice  # noqa: E402


def test_ray_path_gives_the_same_verdicts_as_one_and_two_workers(tmp_path):
    from sage_core.distributed import evaluate_with_ray

    whole = replicated_slice(tmp_path / "whole.jsonl", 6)  # 240 turns
    lines = whole.read_text().splitlines()
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_text("\n".join(lines[:100]) + "\n")
    (logs / "b.jsonl").write_text("\n".join(lines[100:]) + "\n\n")  # a blank line is skipped, as locally
    cfg = CascadeConfig.named("sage-core", s2_backend="offline")
    shards = [str(logs / "a.jsonl"), str(logs / "b.jsonl")]

    m_ray, m_one, m_two = OnlineMetrics(), OnlineMetrics(), OnlineMetrics()
    res = evaluate_with_ray(shards, REGISTRY, tmp_path / "out", cfg, num_cpus=2, on_record=m_ray.add)
    evaluate_to_file(shards, REGISTRY, tmp_path / "one.jsonl", cfg, workers=1, on_record=m_one.add)
    evaluate_to_file(shards, REGISTRY, tmp_path / "two.jsonl", cfg, workers=2, on_record=m_two.add)

    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.verdicts.jsonl", "b.verdicts.jsonl"]
    ray_lines = ((tmp_path / "out" / "a.verdicts.jsonl").read_text().splitlines()
                 + (tmp_path / "out" / "b.verdicts.jsonl").read_text().splitlines())
    assert len((tmp_path / "out" / "a.verdicts.jsonl").read_text().splitlines()) == 100
    one = (tmp_path / "one.jsonl").read_text().splitlines()
    two = (tmp_path / "two.jsonl").read_text().splitlines()
    assert res.n == len(one) == 240
    assert [comparable(x) for x in ray_lines] == [comparable(x) for x in one] == [comparable(x) for x in two]
    results = [m.result() for m in (m_ray, m_one, m_two)]
    for r in results:
        r.pop("p50_ms")
    assert results[0] == results[1] == results[2] and results[0]["n"] == 240


def test_cli_ray_engine_with_a_glob(tmp_path):
    import contextlib
    import io

    from sage_core.cli import main

    lines = replicated_slice(tmp_path / "whole.jsonl", 2).read_text().splitlines()
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(3):
        (logs / f"part{i}.jsonl").write_text("\n".join(lines[i::3]) + "\n")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["evaluate", "--engine", "ray", "--slice", str(logs / "*.jsonl"), "--schema", SCHEMA,
                   "--config", "no_s2", "--out", str(tmp_path / "verdicts")])
    assert rc == 0, err.getvalue()
    names = sorted(p.name for p in (tmp_path / "verdicts").iterdir())
    assert names == [f"part{i}.verdicts.jsonl" for i in range(3)]
    ids = [json.loads(x)["turn_id"] for n in names for x in (tmp_path / "verdicts" / n).read_text().splitlines()]
    assert ids == [json.loads(x)["turn_id"] for i in range(3) for x in lines[i::3]]
    metrics = json.loads(out.getvalue().strip().splitlines()[-1])
    assert metrics["n"] == len(lines) and metrics["config"] == "no_s2"
