"""``python -m sage_core baseline``: run an LLM-judge baseline over a slice.

Writes evaluator-verdict JSONL (one row per turn) and prints what the
comparison needs: cost per 1k turns from the returned token usage and the
price table, p50 latency per turn, and paid vs cached calls. The endpoint comes
from ``SAGE_LLM_BASE_URL`` / ``SAGE_LLM_API_KEY`` (or ``--base-url``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sage_core.corpora.schemas import load_schema
from sage_core.data.errors import SageInputError
from sage_core.data.settings import get_settings
from sage_core.data.slice_io import read_slice, validate_against
from sage_core.llm.baselines import METHODS
from sage_core.llm.baselines.frugal import DEFAULT_ESCALATE_BELOW
from sage_core.llm.baselines.prompts import MODES
from sage_core.llm.baselines.runner import execute, summarise
from sage_core.llm.client import LLMClient, price_for


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", required=True, choices=METHODS, help="judge: G-Eval, FrugalGPT cascade, direct")
    p.add_argument("--mode", required=True, choices=MODES,
                   help="transcript = history + user + reply; state = plus s_t-1, s_t and required slots")
    p.add_argument("--slice", required=True, help="slice JSONL to judge")
    p.add_argument("--schema", required=True, help="schema.json (SGD format) or workflow spec YAML")
    p.add_argument("--out", required=True, help="evaluator verdict JSONL to write")
    p.add_argument("--dev", help="labelled dev slice (G-Eval fits its threshold there to maximise F1)")
    p.add_argument("--model", help="judge model (geval/direct: default SAGE_LLM_STRONG_MODEL; "
                                   "frugal: the cheap model, default SAGE_LLM_MODEL)")
    p.add_argument("--strong-model", help="frugal: model escalated to (default SAGE_LLM_STRONG_MODEL)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default SAGE_LLM_BASE_URL)")
    p.add_argument("--prices", help='JSON price file {"model": {"input": usd_per_mtok, "output": usd_per_mtok}}')
    p.add_argument("--cache-dir", help="answer cache (default SAGE_CACHE_DIR)")
    p.add_argument("--no-cache", action="store_true", help="always call the endpoint")
    p.add_argument("--samples", type=int, help="geval: samples per turn (default 6); frugal: cheap samples (2)")
    p.add_argument("--threshold", type=float, help="geval: fixed failure threshold on the 1-5 mean (skips fitting)")
    p.add_argument("--escalate-below", type=float, default=DEFAULT_ESCALATE_BELOW,
                   help="frugal: escalate when the cheap model's confidence is below this")
    p.add_argument("--seed", type=int, help="sampling seed sent to the endpoint")
    p.add_argument("--workers", type=int, default=1, help="concurrent requests")


def _load(path: str, registry):
    turns = read_slice(path)
    validate_against(turns, registry, path)
    return turns


def _money(x) -> str:
    return "unknown (a model has no price; pass --prices)" if x is None else f"${x:.4f}"


def run(args: argparse.Namespace) -> int:
    if args.samples is not None and args.samples < 1:
        raise SageInputError("must be >= 1", field="--samples")
    if args.workers < 1:
        raise SageInputError("must be >= 1", field="--workers")
    registry = load_schema(args.schema)
    turns = _load(args.slice, registry)
    dev = _load(args.dev, registry) if args.dev else None
    s = get_settings()
    common = dict(base_url=args.base_url, prices=args.prices, cache_dir="" if args.no_cache else args.cache_dir)
    if args.method == "frugal":
        clients = (LLMClient.from_settings(s, args.model or s.llm_model, **common),
                   LLMClient.from_settings(s, args.strong_model or s.llm_strong_model, **common))
    else:
        clients = LLMClient.from_settings(s, args.model or s.llm_strong_model, **common)
    opts = {"seed": args.seed}
    if args.method == "geval":
        opts.update(n=args.samples, threshold=args.threshold)
    elif args.method == "frugal":
        opts.update(samples=args.samples, escalate_below=args.escalate_below)
    if dev is not None and args.method != "geval":
        print(f"note: --dev is only used by geval (threshold fitting); ignored for {args.method}", file=sys.stderr)
        dev = None

    def progress(i: int, n: int) -> None:
        if sys.stderr.isatty():
            print(f"\r{i}/{n} turns", end="" if i < n else "\n", file=sys.stderr, flush=True)

    result = execute(args.method, args.mode, turns, registry, clients, dev, workers=args.workers,
                     progress=progress, **opts)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        for row in result.rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    summ = summarise(result.rows)
    models = clients if isinstance(clients, tuple) else (clients,)
    print(f"{args.method}-{args.mode}: {summ['n']} turns, {summ['failures']} failure, "
          f"{summ['undecided']} undecided -> {out}")
    for c in models:
        p = price_for(c.model, c.prices)
        print(f"model: {c.describe()} (" + (f"${p[0]:g}/${p[1]:g} per Mtok in/out" if p else "no price") + ")")
    print(f"cost per 1k turns: {_money(summ['cost_per_1k_turns'])} (total {_money(summ['cost_usd'])}, "
          "from returned token usage)")
    print(f"p50 latency: {summ['p50_latency_ms']:.1f} ms per turn")
    print(f"calls: {summ['llm_calls']} ({summ['paid_calls']} paid, {summ['cached_calls']} from cache)")
    if args.method == "frugal":
        print(f"escalated: {summ['escalated']} of {summ['n']} turns to {models[1].model} "
              f"(cheap confidence < {args.escalate_below:g})")
    if args.method == "geval":
        if result.dev_f1 is not None:
            dev_s = summarise(result.dev_rows)
            print(f"threshold: {result.threshold:.4f} (fitted on {len(result.dev_rows)} dev turns, dev F1 "
                  f"{result.dev_f1:.3f}, dev cost {_money(dev_s['cost_usd'])})")
        else:
            print(f"threshold: {result.threshold:.4f} ({'given' if args.threshold is not None else 'default'})")
    return 0
