"""Classification metrics of SAGE verdicts against gold: failure is the positive class.

Undecided turns count as acceptable (full coverage); the undecided rate and
stage shares are reported beside F1 so that abstention is never hidden.
``OnlineMetrics`` accumulates them one verdict at a time in memory that does
not grow with the slice (streaming ``evaluate``); ``classification_metrics``
is the same computation over lists. The p50 latency is read from a
log-spaced histogram (0.5 % wide bins), not a sorted list.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sage_core.data.types import ROUTING_STAGES, Turn, TurnVerdict
from sage_core.evaluator.batch import VerdictRecord
from sage_core.science.statistics import prf_from_counts

_LAT_LO, _LAT_STEP, _LAT_BINS = 1e-4, math.log(1.005), 4700  # 1e-4 ms .. ~1.6e6 ms


@dataclass
class OnlineMetrics:
    """Feed ``add`` one record per turn; ``result()`` gives the ``classification_metrics`` dict."""

    n_verdicts: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    n_gold: int = 0
    clean_n: int = 0
    clean_ok: int = 0
    undecided: int = 0
    paid_calls: int = 0
    cost_usd: float = 0.0
    per_class: dict[str, list[int]] = field(default_factory=dict)
    stages: dict[str, int] = field(default_factory=lambda: {s: 0 for s in ROUTING_STAGES})
    backends: set[str] = field(default_factory=set)
    labels: dict[str, int] = field(default_factory=dict)
    _lat: np.ndarray = field(default_factory=lambda: np.zeros(_LAT_BINS, dtype=np.int64))

    def add(self, r: VerdictRecord) -> None:
        self.n_verdicts += 1
        self.labels[r.label] = self.labels.get(r.label, 0) + 1
        self.undecided += r.label == "undecided"
        self.paid_calls += r.paid_calls
        self.cost_usd += r.cost_usd
        self.backends.add(r.s2_backend)
        for s in r.stages:
            self.stages[s] = self.stages.get(s, 0) + 1
        b = 0 if r.latency_ms <= _LAT_LO else int(math.log(r.latency_ms / _LAT_LO) / _LAT_STEP) + 1
        self._lat[min(b, _LAT_BINS - 1)] += 1
        if r.gold_label is None:
            return
        self.n_gold += 1
        pred, gold = r.label == "failure", r.gold_label == "failure"
        self.tp += pred and gold
        self.fp += pred and not gold
        self.fn += gold and not pred
        if not gold:
            self.clean_n += 1
            self.clean_ok += not pred
        else:
            d = self.per_class.setdefault(r.gold_class or "unclassified", [0, 0])
            d[0] += 1
            d[1] += pred

    def p50_ms(self) -> float:
        if not self.n_verdicts:
            return 0.0
        b = int(np.searchsorted(np.cumsum(self._lat), (self.n_verdicts + 1) // 2))
        if b == 0:
            return 0.0
        return _LAT_LO * math.exp((b - 0.5) * _LAT_STEP)

    def result(self) -> dict[str, Any]:
        n = max(self.n_verdicts, 1)
        n_crit = sum(self.stages.values())
        prec, rec, f1 = (float(x) for x in prf_from_counts(self.tp, self.fp, self.fn))
        return {
            "n": self.n_gold, "tp": self.tp, "fp": self.fp, "fn": self.fn,
            "precision": round(prec, 4), "recall": round(rec, 4), "f1": round(f1, 4),
            "per_class_recall": {k: round(h / c, 4) for k, (c, h) in sorted(self.per_class.items())},
            "clean_specificity": round(self.clean_ok / self.clean_n, 4) if self.clean_n else None,
            "undecided_rate": round(self.undecided / n, 4),
            "stage_shares": {k: round(c / n_crit, 4) if n_crit else 0.0 for k, c in self.stages.items()},
            "n_criteria": n_crit,
            "p50_ms": round(self.p50_ms(), 3),
            "s2_backend": sorted(self.backends)[0] if self.backends else "",
            "paid_calls_per_turn": round(self.paid_calls / n, 4),
            "cost_usd": round(self.cost_usd, 6),
        }



def classification_metrics(verdicts: list[TurnVerdict], turns: list[Turn]) -> dict[str, Any]:
    """Metrics of ``verdicts`` against the gold of ``turns`` (turns without gold count only in rates)."""
    by_id = {t.turn_id: t for t in turns}
    m = OnlineMetrics()
    for v in verdicts:
        t = by_id.get(v.turn_id)
        rec = VerdictRecord.of(v, t) if t is not None else VerdictRecord(
            None, None, v.label.value, tuple(tr.final.stage.value for tr in v.traces), float(v.latency_ms),
            int(v.paid_calls), float(v.cost_usd), v.s2_backend)
        m.add(rec)
    return m.result()


__all__ = ["classification_metrics", "OnlineMetrics"]
