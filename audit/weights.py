"""Inverse-probability (Horvitz-Thompson) weights for estimates from a stratified audit.

A turn drawn with probability pi stands for 1/pi population turns. Totals
(true positives, agreements, ...) are estimated by weighted sums, which are
unbiased for the population totals; ratios of them (precision, recall, F1,
agreement rates) are the usual consistent ratio estimators. Every reporting
function returns both the weighted and the unweighted number, so a reader can
see how much the over-sampling of rare strata moved the estimate.
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from sage_core import prf_from_counts


def ipw(inclusion_probs: Sequence[float]) -> np.ndarray:
    """1 / pi for each item; pi must be in (0, 1]."""
    p = np.asarray(list(inclusion_probs), dtype=float)
    if p.size and (np.any(p <= 0) or np.any(p > 1) or np.any(np.isnan(p))):
        raise ValueError("inclusion probabilities must be in (0, 1]")
    return 1.0 / p


def weights_for(turn_ids: Sequence[str], inclusion_probs: Mapping[str, float]) -> np.ndarray:
    """IPW weights aligned with ``turn_ids`` (every id must have a probability)."""
    missing = [t for t in turn_ids if t not in inclusion_probs]
    if missing:
        raise ValueError(f"no inclusion probability for {missing[:5]}")
    return ipw([inclusion_probs[t] for t in turn_ids])


def estimated_population(weights: Sequence[float]) -> float:
    """Horvitz-Thompson estimate of the population size: sum of 1/pi."""
    return float(np.sum(weights))


def weighted_mean(x: Sequence[float], weights: Optional[Sequence[float]] = None) -> float:
    """Hajek (ratio) mean: sum w x / sum w; NaN for an empty input."""
    x = np.asarray(list(x), dtype=float)
    w = np.ones_like(x) if weights is None else np.asarray(list(weights), dtype=float)
    if w.sum() == 0:
        return float("nan")
    return float((w * x).sum() / w.sum())


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den > 0 else 0.0


def weighted_prf(y_true: Sequence[int], y_pred: Sequence[int], weights: Optional[Sequence[float]] = None
                 ) -> dict[str, float]:
    """Precision / recall / F1 of the failure class (1) from weighted confusion counts.

    Zero division scores 0, as in ``sage_core.science.statistics.prf``; with no weights
    the two agree exactly.
    """
    yt = np.asarray(list(y_true), dtype=int)
    yp = np.asarray(list(y_pred), dtype=int)
    w = np.ones(len(yt)) if weights is None else np.asarray(list(weights), dtype=float)
    if not (len(yt) == len(yp) == len(w)):
        raise ValueError("y_true, y_pred and weights must have the same length")
    tp = float(w[(yt == 1) & (yp == 1)].sum())
    fp = float(w[(yt == 0) & (yp == 1)].sum())
    fn = float(w[(yt == 1) & (yp == 0)].sum())
    tn = float(w[(yt == 0) & (yp == 0)].sum())
    p, r, f1 = (float(x) for x in prf_from_counts(tp, fp, fn))
    return {"precision": p, "recall": r, "f1": f1,
            "accuracy": _ratio(tp + tn, tp + tn + fp + fn), "tp": tp, "fp": fp, "fn": fn, "tn": tn}


__all__ = ["ipw", "weights_for", "estimated_population", "weighted_mean", "weighted_prf"]
