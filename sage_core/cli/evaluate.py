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
from collections import Counter
from pathlib import Path

from sage_core.data.errors import SageInputError
from sage_core.data.settings import get_settings
from sage_core.data.types import ROUTING_STAGES


def add_arguments(p) -> None:
    p.add_argument("--slice", required=True, help="slice JSONL (one agent turn per line)")
    p.add_argument("--schema", required=True, help="SGD-format schema.json or our workflows YAML/JSON")
    p.add_argument("--config", default="sage-core", choices=["sage-core", "sage-llm", "no_s1", "no_s2"],
                   help="cascade configuration (default sage-core: S1+S2, zero paid calls)")
    p.add_argument("--s2", default=None, choices=["offline", "nli"],
                   help="S2 backend (default: SAGE_S2_BACKEND or offline)")
    p.add_argument("--tau", type=float, default=None, help="S2 abstention threshold on |margin| (default 0.2)")
    p.add_argument("--out", required=True, help="verdicts JSONL to write")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _progress(n: int, quiet: bool):
    if quiet or n < 50 or not sys.stderr.isatty():
        return None, None
    from tqdm import tqdm
    bar = tqdm(total=n, unit="turn", file=sys.stderr, desc="evaluate")

    def update(i: int, total: int) -> None:
        bar.update(i - bar.n)
    return update, bar


def run(args) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from sage_core.corpora.schemas import load_schema
    from sage_core.data.slice_io import read_slice, validate_against

    if args.tau is not None and not 0 <= args.tau < 1:
        raise SageInputError(f"--tau must be in [0, 1), got {args.tau}", field="tau")
    registry = load_schema(args.schema)
    turns = read_slice(args.slice)
    validate_against(turns, registry, file=args.slice)

    from sage_core.evaluator.cascade import CascadeConfig, Evaluator
    from sage_core.evaluator.compile import validate_turn
    for t in turns:  # unknown act / user-value slots -> file/line/field before any model loads
        try:
            validate_turn(t, registry.get(t.workflow))
        except SageInputError as e:
            raise SageInputError(e.detail, file=args.slice, line=getattr(t, "_line", None), field=e.field) from None
    settings = get_settings()  # the entry point reads the environment; the library gets plain arguments
    cfg = CascadeConfig.from_settings(args.config, settings, s2_backend=args.s2, tau=args.tau)
    ev = Evaluator.from_settings(registry, cfg, settings)
    update, bar = _progress(len(turns), args.quiet)
    try:
        verdicts = ev.evaluate(turns, progress=update)
    finally:
        if bar is not None:
            bar.close()
    out = Path(args.out)
    if out.parent and not out.parent.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        for v in verdicts:
            fh.write(json.dumps(v.to_dict(), ensure_ascii=False) + "\n")
    labels: dict[str, int] = {}
    for v in verdicts:
        labels[v.label.value] = labels.get(v.label.value, 0) + 1
    stages = Counter(tr.final.stage.value for v in verdicts for tr in v.traces)
    n_crit = sum(stages.values())
    routing = ", ".join(f"{s} {stages.get(s, 0) / n_crit:.1%}" for s in ROUTING_STAGES) if n_crit else "no criteria"
    print(f"wrote {len(verdicts)} verdicts to {out} (config {cfg.name}, S2 {ev.s2_backend_name}; "
          + ", ".join(f"{k} {n}" for k, n in sorted(labels.items())) + f"; routing of {n_crit} criteria: {routing})",
          file=sys.stderr)
    if any(t.gold is not None for t in turns):
        from sage_core.science.metrics import classification_metrics
        m = classification_metrics(verdicts, turns)
        m["config"] = cfg.name
        print(json.dumps(m))
    return 0


__all__ = ["add_arguments", "run"]
