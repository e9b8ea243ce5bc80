"""Run one baseline over a slice and produce evaluator-verdict rows.

Rows follow ARCHITECTURE.md "verdict files": turn_id, label, class,
confidence (when the method has one), evaluator ``<method>-<mode>``, and the
accounting the comparison needs. ``cost_usd`` and ``latency_ms`` describe the
METHOD (price of the returned tokens; API latency, also for cache hits, so a
cached rerun reports the same numbers); ``paid_calls`` / ``cached_calls``
describe THIS run (cache hits are 0 paid calls).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Union

import numpy as np

from sage_core.data.errors import SageInputError
from sage_core.data.types import Turn
from sage_core.llm.baselines import METHODS, Judgement
from sage_core.llm.baselines.direct import DirectJudge
from sage_core.llm.baselines.frugal import DEFAULT_ESCALATE_BELOW, FrugalJudge
from sage_core.llm.baselines.geval import DEFAULT_THRESHOLD, GEvalJudge, fit_threshold
from sage_core.llm.baselines.prompts import MODES, TEMPLATE_VERSION
from sage_core.llm.client import LLMClient
from sage_core.specs.workflow import WorkflowRegistry

Clients = Union[LLMClient, tuple, list, dict]


@dataclass
class BaselineRun:
    rows: list[dict]
    dev_rows: list[dict] = field(default_factory=list)
    threshold: Optional[float] = None
    dev_f1: Optional[float] = None


def _clients(name: str, clients: Clients) -> tuple[LLMClient, Optional[LLMClient]]:
    if isinstance(clients, LLMClient):
        if name == "frugal":
            raise ValueError("frugal needs two clients: (cheap, strong)")
        return clients, None
    if isinstance(clients, dict):
        return clients["cheap"], clients.get("strong")
    first, *rest = list(clients)
    return first, (rest[0] if rest else None)


def make_judge(name: str, mode: str, clients: Clients, **options):
    if name not in METHODS:
        raise SageInputError(f"unknown baseline '{name}' (use {', '.join(METHODS)})", field="method")
    if mode not in MODES:
        raise SageInputError(f"unknown mode '{mode}' (use {' or '.join(MODES)})", field="mode")
    main, strong = _clients(name, clients)
    opts = {k: v for k, v in options.items() if v is not None}
    if name == "geval":
        return GEvalJudge(main, mode, **{k: opts[k] for k in ("n", "threshold", "seed", "temperature") if k in opts})
    if name == "frugal":
        if strong is None:
            raise ValueError("frugal needs two clients: (cheap, strong)")
        return FrugalJudge(main, strong, mode,
                           **{k: opts[k] for k in ("escalate_below", "samples", "seed") if k in opts})
    return DirectJudge(main, mode)


def to_row(turn: Turn, j: Judgement, evaluator: str) -> dict:
    costs = [u.cost_usd for u in j.usages]
    row = {
        "turn_id": turn.turn_id,
        "dialogue_id": turn.dialogue_id,
        "label": j.label,
        "class": j.cls,
        "evaluator": evaluator,
    }
    if j.confidence is not None:
        row["confidence"] = round(float(j.confidence), 6)
    if j.score is not None:
        row["score"] = j.score
    row.update({
        "cost_usd": None if any(c is None for c in costs) else sum(costs),
        "latency_ms": round(sum(u.original_latency_ms for u in j.usages), 3),
        "paid_calls": sum(u.paid_calls for u in j.usages),
        "cached_calls": sum(1 for u in j.usages if u.cached),
        "llm_calls": len(j.usages),
        "prompt_tokens": sum(u.prompt_tokens for u in j.usages),
        "completion_tokens": sum(u.completion_tokens for u in j.usages),
        "models": sorted({u.model for u in j.usages}),
        "prompt_version": TEMPLATE_VERSION,
    })
    row.update(j.extra)
    if j.rationale:
        row["rationale"] = j.rationale
    return row


def _map(fn: Callable, items: Sequence, workers: int, progress: Optional[Callable]) -> list:
    out = [None] * len(items)
    if workers <= 1:
        for i, it in enumerate(items):
            out[i] = fn(it)
            if progress:
                progress(i + 1, len(items))
        return out
    with ThreadPoolExecutor(max_workers=workers) as ex:
        futures = [ex.submit(fn, it) for it in items]
        for i, f in enumerate(futures):
            out[i] = f.result()
            if progress:
                progress(i + 1, len(items))
    return out


def execute(name: str, mode: str, turns: Sequence[Turn], registry: WorkflowRegistry, clients: Clients,
            dev_turns: Optional[Sequence[Turn]] = None, *, workers: int = 1,
            progress: Optional[Callable[[int, int], None]] = None, **options) -> BaselineRun:
    """Full run; G-Eval first scores the dev split and fits its threshold there."""
    judge = make_judge(name, mode, clients, **options)
    evaluator = f"{name}-{mode}"
    run = BaselineRun(rows=[])
    if name == "geval":
        if dev_turns and options.get("threshold") is None:
            missing = [t.turn_id for t in dev_turns if t.gold is None]
            if missing:
                raise SageInputError(f"dev turn '{missing[0]}' has no gold label; threshold fitting needs gold",
                                     field="gold")
            scored = _map(lambda t: judge.score(t, registry.get(t.workflow)), list(dev_turns), workers, None)
            means = [sc.mean for sc, _ in scored if sc.mean is not None]
            gold = [t.gold.label == "failure" for t, (sc, _) in zip(dev_turns, scored) if sc.mean is not None]
            run.threshold, run.dev_f1 = fit_threshold(means, gold)
            judge.threshold = run.threshold
            run.dev_rows = [to_row(t, judge.decide(sc, us), evaluator + "-dev")
                            for t, (sc, us) in zip(dev_turns, scored)]
        else:
            run.threshold = judge.threshold
    run.rows = _map(lambda t: to_row(t, judge.judge(t, registry.get(t.workflow)), evaluator),
                    list(turns), workers, progress)
    return run


def run_baseline(name: str, mode: str, turns: Sequence[Turn], registry: WorkflowRegistry, clients: Clients,
                 dev_turns: Optional[Sequence[Turn]] = None, **options) -> list[dict]:
    """Evaluator-verdict rows for ``turns`` (see module docstring)."""
    return execute(name, mode, turns, registry, clients, dev_turns, **options).rows


def summarise(rows: Sequence[dict]) -> dict:
    """Cost per 1k turns (None if any price is unknown), p50 latency, call counts."""
    n = len(rows)
    costs = [r["cost_usd"] for r in rows]
    known = all(c is not None for c in costs)
    total = float(sum(costs)) if known else None
    lat = [r["latency_ms"] for r in rows]
    return {
        "n": n,
        "failures": sum(r["label"] == "failure" for r in rows),
        "undecided": sum(r["label"] == "undecided" for r in rows),
        "cost_usd": total,
        "cost_per_1k_turns": (total / n * 1000) if (known and n) else None,
        "p50_latency_ms": float(np.median(lat)) if lat else None,
        "paid_calls": sum(r["paid_calls"] for r in rows),
        "cached_calls": sum(r["cached_calls"] for r in rows),
        "llm_calls": sum(r["llm_calls"] for r in rows),
        "escalated": sum(1 for r in rows if r.get("escalated")),
    }


__all__ = ["BaselineRun", "execute", "run_baseline", "summarise", "make_judge", "to_row",
           "DEFAULT_THRESHOLD", "DEFAULT_ESCALATE_BELOW"]
