"""``python -m sage_core evaluate``: run a cascade config over a slice and write verdicts JSONL.

The slice is validated against the schema before any model loads, so a typo
in a workflow or slot name costs nothing and is reported as file/line/field
(exit 2). When the slice carries gold labels a final JSON line with the
classification metrics is printed to stdout.
"""
from __future__ import annotations

import json
import os
import sys

from sage_core.data.errors import SageInputError
from sage_core.data.settings import get_settings
from sage_core.data.types import ROUTING_STAGES


def add_arguments(p) -> None:
    p.add_argument("--slice", required=True,
                   help="slice JSONL (one agent turn per line); with --engine ray also a glob such as 'logs/*.jsonl'")
    p.add_argument("--schema", required=True, help="SGD-format schema.json or our workflows YAML/JSON")
    p.add_argument("--config", default="sage-core", choices=["sage-core", "sage-llm", "no_s1", "no_s2"],
                   help="cascade configuration (default sage-core: S1+S2, zero paid calls)")
    p.add_argument("--s2", default=None, choices=["offline", "nli"],
                   help="S2 backend (default: SAGE_S2_BACKEND or offline)")
    p.add_argument("--tau", type=float, default=None, help="S2 abstention threshold on |margin| (default 0.2)")
    p.add_argument("--out", required=True,
                   help="verdicts JSONL to write (with --engine ray: a folder that receives verdict shards)")
    p.add_argument("--workers", type=int, default=1,
                   help="local engine: worker processes, each with its own encoder (default 1: this process)")
    p.add_argument("--engine", default="local", choices=["local", "ray"],
                   help="local (streaming, --workers processes) or ray (Ray Data; RAY_ADDRESS picks a cluster)")
    p.add_argument("--ray-address", default=None,
                   help="ray engine: address of an existing Ray cluster (default: RAY_ADDRESS, else a local instance)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--heads", default=None,
                   help="learned act / requested-slot heads JSON for text-only turns (default: the committed one)")
    p.add_argument("--no-heads", action="store_true", help="text-only turns: keyword rules only, no learned heads")


def _progress(quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None, None
    from tqdm import tqdm
    bar = tqdm(unit="turn", file=sys.stderr, desc="evaluate")

    def update(i: int, total: int) -> None:
        bar.total = total
        bar.update(i - bar.n)
    return update, bar


def run(args) -> int:
    """Stream the slice through the cascade; metrics are aggregated online, never from a list of verdicts."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from sage_core.data.limits import check_input_file, check_output_dir, check_output_file
    from sage_core.evaluator.batch import evaluate_to_file, expand_slice_paths
    from sage_core.evaluator.cascade import CascadeConfig
    from sage_core.science.metrics import OnlineMetrics
    from sage_core.corpora.schemas import load_schema

    if args.tau is not None and not 0 <= args.tau < 1:
        raise SageInputError(f"--tau must be in [0, 1), got {args.tau}", field="tau")
    if args.workers < 1:
        raise SageInputError(f"--workers must be at least 1, got {args.workers}", field="workers")
    check_input_file(args.schema, "schema", field="schema")
    paths = expand_slice_paths(args.slice) if args.engine == "ray" else [args.slice]
    for p in paths:
        check_input_file(p, "slice", field="slice")
    if args.engine == "ray":
        check_output_dir(args.out, "verdict folder", field="out")
    else:
        check_output_file(args.out, "verdicts", field="out")
    registry = load_schema(args.schema)
    settings = get_settings()  # the entry point reads the environment; the library gets plain arguments
    cfg = CascadeConfig.from_settings(args.config, settings, s2_backend=args.s2, tau=args.tau)
    cfg.use_heads = not args.no_heads
    cfg.heads_path = args.heads
    if cfg.use_heads and args.heads:
        from sage_core.evaluator.text.heads import load_heads
        load_heads(args.heads)  # a missing or corrupt file fails here, naming it, before any work
    metrics = OnlineMetrics()
    update, bar = _progress(args.quiet)
    try:
        if args.engine == "ray":
            from sage_core.distributed import evaluate_with_ray

            res = evaluate_with_ray(paths, registry, args.out, cfg, settings=settings,
                                    address=args.ray_address or os.environ.get("RAY_ADDRESS") or None,
                                    on_record=metrics.add, progress=update)
        else:
            res = evaluate_to_file(paths, registry, args.out, cfg, workers=args.workers, settings=settings,
                                   progress=update, on_record=metrics.add)
    finally:
        if bar is not None:
            bar.close()
    backend = sorted(res.s2_backends)[0] if res.s2_backends else "none"
    stages, n_crit = metrics.stages, sum(metrics.stages.values())
    routing = ", ".join(f"{s} {stages.get(s, 0) / n_crit:.1%}" for s in ROUTING_STAGES) if n_crit else "no criteria"
    print(f"wrote {res.n} verdicts to {args.out} (config {cfg.name}, S2 {backend}; "
          + ", ".join(f"{k} {n}" for k, n in sorted(res.labels.items())) + f"; routing of {n_crit} criteria: {routing})",
          file=sys.stderr)
    if res.has_gold:
        m = metrics.result()
        m["config"] = cfg.name
        print(json.dumps(m))
    return 0


__all__ = ["add_arguments", "run"]
