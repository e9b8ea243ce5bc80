"""Selective evaluation: how good are verdicts if we only keep the most confident?

The risk-coverage curve sorts turns by confidence (descending) and keeps the
top k. Ties are broken by the input order (stable sort), so the curve is a
deterministic function of the inputs. Undecided turns carry the lowest confidence (0.5) and
are therefore the first to be dropped.

Undefined points are NaN, never 0: precision with no predicted failure among
the kept turns, recall with no gold failure, F1 with neither (tp + fp + fn = 0).
At low coverage the kept set is often all-clean and all-accepted; drawing F1 = 0
there would be a misleading cliff. Charts show NaN as a gap, tables as "n/a".
The error rate is always defined.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sage_core.science.statistics import prf_from_counts


@dataclass
class CoverageRow:
    coverage: float  # n_kept / n
    f1: float  # NaN when the kept turns hold no gold and no predicted failure
    precision: float  # NaN when no kept turn is predicted a failure
    recall: float  # NaN when no kept turn is a gold failure
    error_rate: float  # share of kept turns whose prediction disagrees with gold
    n_kept: int


def _arrays(y_true, y_pred, confidence):
    yt = np.asarray(y_true).astype(np.int64)
    yp = np.asarray(y_pred).astype(np.int64)
    conf = np.asarray(confidence, dtype=float)
    if not (yt.shape == yp.shape == conf.shape) or yt.ndim != 1:
        raise ValueError("y_true, y_pred and confidence must be 1-D arrays of equal length")
    if np.isnan(conf).any():
        raise ValueError("confidence must not contain NaN")
    return yt, yp, conf


def selective_curve(y_true, y_pred, confidence) -> list[CoverageRow]:
    """One row per k = 1..n: metrics on the k most confident turns."""
    yt, yp, conf = _arrays(y_true, y_pred, confidence)
    n = yt.shape[0]
    if n == 0:
        return []
    order = np.argsort(-conf, kind="stable")
    t, p = yt[order], yp[order]
    tp = np.cumsum(t & p)
    fp = np.cumsum((1 - t) & p)
    fn = np.cumsum(t & (1 - p))
    k = np.arange(1, n + 1)
    prec, rec, f1 = prf_from_counts(tp, fp, fn, zero_division=np.nan)  # undefined ratios stay NaN
    err = (fp + fn) / k
    return [CoverageRow(float(k[i] / n), float(f1[i]), float(prec[i]), float(rec[i]), float(err[i]), int(k[i]))
            for i in range(n)]


def kept_count(n: int, coverage: float) -> int:
    """Smallest k with k/n >= coverage (at least one turn)."""
    if not 0 < coverage <= 1:
        raise ValueError("coverage must be in (0, 1]")
    return max(1, min(n, math.ceil(coverage * n - 1e-9)))


def f1_at_coverage(y_true, y_pred, confidence, coverage: float) -> float:
    """F1 on the most confident ``coverage`` share of turns (1.0 = all turns); NaN where undefined."""
    rows = selective_curve(y_true, y_pred, confidence)
    if not rows:
        return 0.0
    return rows[kept_count(len(rows), coverage) - 1].f1


def aurc(y_true, y_pred, confidence) -> float:
    """Area under the risk(error rate)-coverage curve; lower is better."""
    rows = selective_curve(y_true, y_pred, confidence)
    return float(np.mean([r.error_rate for r in rows])) if rows else 0.0


__all__ = ["CoverageRow", "selective_curve", "f1_at_coverage", "kept_count", "aurc"]
