"""``evaluate --engine ray``: Ray Data reads sharded JSONL, an actor pool evaluates, the driver writes shards.

Pipeline: ``ray.data.read_text(files)`` (one row per line, streamed) ->
``map_batches(SageBatchEvaluator, ...)``: an actor class that builds the
evaluator (workflows + one encoder) once per actor and turns a batch of raw
lines into verdict lines -> the driver consumes the stream in input order
(``preserve_order``) and writes one verdict shard per input file
(``<stem>.verdicts.jsonl``), aggregating metrics online. Lines are validated
on the driver first (``evaluator.batch.validate_slice``: file, line, field,
exit 2) so workers never see bad input.

Cluster: pass ``address`` (the CLI: ``--ray-address`` or ``RAY_ADDRESS``, e.g. ``ray://head:10001``);
the package travels to the workers as a runtime-env ``py_modules`` entry, and
the input files must be readable by the workers (shared filesystem or object
store paths). Without an address a local instance is started on 127.0.0.1
with ``num_cpus`` CPUs and shut down afterwards.
"""
from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

from sage_core.data.errors import SageInputError
from sage_core.evaluator.batch import CHUNK_TURNS, BatchResult, VerdictRecord, make_evaluator, parse_line, validate_slice
from sage_core.evaluator.cascade import CascadeConfig
from sage_core.specs.workflow import WorkflowRegistry

SAGE_CORE_DIR = Path(__file__).resolve().parents[1]


@contextmanager
def ray_session(address: Optional[str] = None, num_cpus: Optional[int] = None) -> Iterator[None]:
    """Connect to the cluster at ``address``, else start a local instance on 127.0.0.1; shut down after.

    With no address, RAY_ADDRESS must not point elsewhere: the entry point resolves it (``--ray-address``).
    """
    try:
        import ray
    except ImportError:
        raise SageInputError("the ray engine needs Ray: pip install 'ray[data]' (pinned in requirements.txt)",
                             field="engine") from None
    if ray.is_initialized():  # the caller manages Ray (a notebook, a test fixture)
        yield
        return
    runtime_env = {"py_modules": [str(SAGE_CORE_DIR)],
                   "env_vars": {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}}
    if address:
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus or os.cpu_count(), _node_ip_address="127.0.0.1", include_dashboard=False,
                 runtime_env=runtime_env, log_to_driver=False, configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()


class SageBatchEvaluator:
    """Ray Data actor: the evaluator is built once per actor, then maps batches of raw slice lines."""

    def __init__(self, registry: WorkflowRegistry, config: CascadeConfig, settings: Any = None):
        self.ev = make_evaluator(registry, config, settings)

    def __call__(self, batch: dict) -> dict:
        import numpy as np

        rows = [(str(p), str(t)) for p, t in zip(batch["path"], batch["text"]) if str(t).strip()]
        turns = [parse_line(text, path, 0) for path, text in rows]
        verdicts = self.ev.evaluate(turns)
        return {"path": np.array([p for p, _ in rows], dtype=object),
                "verdict": np.array([json.dumps(v.to_dict(), ensure_ascii=False) for v in verdicts], dtype=object),
                "record": np.array([json.dumps(VerdictRecord.of(v, t).__dict__) for v, t in zip(verdicts, turns)],
                                   dtype=object)}


def _record(text: str) -> VerdictRecord:
    d = json.loads(text)
    d["stages"] = tuple(d["stages"])
    return VerdictRecord(**d)


def shard_name(path: str) -> str:
    return Path(path).name.removesuffix(".jsonl") + ".verdicts.jsonl"


def evaluate_with_ray(paths: Sequence[str], registry: WorkflowRegistry, out_dir: str | Path, config: CascadeConfig, *,
                      settings: Any = None, address: Optional[str] = None,
                      num_cpus: Optional[int] = None, actors: Optional[int] = None, batch_size: int = CHUNK_TURNS,
                      on_record: Optional[Callable[[VerdictRecord], None]] = None,
                      progress: Optional[Callable[[int, int], None]] = None) -> BatchResult:
    """Evaluate ``paths`` on Ray; one verdict shard per input file in ``out_dir`` (same order as the input)."""
    names = [shard_name(p) for p in paths]
    if len(set(names)) != len(names):
        raise SageInputError("two input files share a name; shards are named after their input file",
                             file=", ".join(paths), field="slice")
    total = validate_slice(paths, registry)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    result = BatchResult(0)
    with ray_session(address, num_cpus):
        import ray

        ctx = ray.data.DataContext.get_current()
        ctx.execution_options.preserve_order = True
        ctx.enable_progress_bars = False
        n_actors = actors or max(1, int(ray.available_resources().get("CPU", 1)))
        # reads take no CPU slot: the actors hold one each, and a read waiting for a slot would starve them
        ds = ray.data.read_text(list(paths), include_paths=True, drop_empty_lines=True, num_cpus=0)
        ds = ds.map_batches(SageBatchEvaluator, fn_constructor_args=(registry, config, settings), batch_size=batch_size,
                            batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=n_actors), num_cpus=1)
        handles: dict[str, object] = {}
        try:
            for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
                for path, line, rec in zip(batch["path"], batch["verdict"], batch["record"]):
                    name = shard_name(str(path))
                    fh = handles.get(name)
                    if fh is None:
                        fh = handles[name] = open(out_dir / (name + ".partial"), "w", encoding="utf-8",
                                                  newline="\n")
                    fh.write(str(line) + "\n")
                    r = _record(str(rec))
                    result.labels[r.label] = result.labels.get(r.label, 0) + 1
                    result.s2_backends.add(r.s2_backend)
                    result.has_gold |= r.gold_label is not None
                    if on_record:
                        on_record(r)
                result.n += len(batch["verdict"])
                if progress:
                    progress(result.n, total)
        except BaseException:
            for name, fh in handles.items():
                fh.close()
                (out_dir / (name + ".partial")).unlink(missing_ok=True)
            raise
        for fh in handles.values():
            fh.close()
    for name in handles:
        os.replace(out_dir / (name + ".partial"), out_dir / name)
    return result


__all__ = ["SageBatchEvaluator", "evaluate_with_ray", "ray_session", "shard_name"]
