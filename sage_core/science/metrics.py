"""Classification metrics of SAGE verdicts against gold: failure is the positive class.

Undecided turns count as acceptable (full coverage); the undecided rate and
stage shares are reported beside F1 so that abstention is never hidden.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from sage_core.data.types import ROUTING_STAGES, Turn, TurnVerdict
from sage_core.science.statistics import prf


def classification_metrics(verdicts: list[TurnVerdict], turns: list[Turn]) -> dict[str, Any]:
    gold = {t.turn_id: t.gold for t in turns if t.gold is not None}
    vs = [v for v in verdicts if v.turn_id in gold]
    y = np.array([gold[v.turn_id].label == "failure" for v in vs], dtype=bool)
    p = np.array([v.predicted_failure for v in vs], dtype=bool)
    counts = prf(y, p)
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    prec, rec, f1 = counts["precision"], counts["recall"], counts["f1"]
    # recall per gold failure class; clean turns are reported as specificity instead
    per_class: dict[str, dict[str, Any]] = {}
    clean_n = clean_ok = 0
    for v in vs:
        g = gold[v.turn_id]
        if g.label != "failure":
            clean_n += 1
            clean_ok += int(not v.predicted_failure)
            continue
        d = per_class.setdefault(g.failure_class or "unclassified", {"n": 0, "hit": 0})
        d["n"] += 1
        d["hit"] += int(v.predicted_failure)
    per_class_recall = {k: round(d["hit"] / d["n"], 4) for k, d in sorted(per_class.items())}
    stages = {s: 0 for s in ROUTING_STAGES}
    for v in verdicts:
        for tr in v.traces:
            stages[tr.final.stage.value] = stages.get(tr.final.stage.value, 0) + 1
    n_crit = sum(stages.values())
    lat = [v.latency_ms for v in verdicts]
    return {
        "n": len(vs), "tp": tp, "fp": fp, "fn": fn,
        "precision": round(prec, 4), "recall": round(rec, 4), "f1": round(f1, 4),
        "per_class_recall": per_class_recall,
        "clean_specificity": round(clean_ok / clean_n, 4) if clean_n else None,
        "undecided_rate": round(sum(v.label.value == "undecided" for v in verdicts) / max(len(verdicts), 1), 4),
        "stage_shares": {k: round(c / n_crit, 4) if n_crit else 0.0 for k, c in stages.items()},
        "n_criteria": n_crit,
        "p50_ms": round(float(np.median(lat)), 3) if lat else 0.0,
        "s2_backend": sorted({v.s2_backend for v in verdicts})[0] if verdicts else "",
        "paid_calls_per_turn": round(sum(v.paid_calls for v in verdicts) / max(len(verdicts), 1), 4),
        "cost_usd": round(sum(v.cost_usd for v in verdicts), 6),
    }


__all__ = ["classification_metrics"]
