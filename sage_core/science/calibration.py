"""Calibration of turn confidence: does a verdict given with confidence c turn out right a share c of the time?

Risk-coverage curves only use the *ranking* of confidences; calibration checks
their *values*. ``reliability_bins`` groups turns into equal-width confidence
bins (bin i holds c in [i/B, (i+1)/B), the last bin also holds c = 1) and
gives each bin's mean confidence and accuracy; ``expected_calibration_error``
is the turn-weighted mean of |accuracy - mean confidence| over non-empty bins
(Guo et al., 2017). A verdict is correct when its prediction at full coverage
(undecided scores as acceptable) equals the gold label.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from sage_core.evaluator.text.heads.features import sigmoid


@dataclass
class ReliabilityBin:
    lo: float
    hi: float
    n: int
    mean_confidence: float  # NaN when the bin is empty
    accuracy: float  # NaN when the bin is empty


def _arrays(correct, confidence) -> tuple[np.ndarray, np.ndarray]:
    ok = np.asarray(correct).astype(bool)
    conf = np.asarray(confidence, dtype=float)
    if ok.shape != conf.shape or ok.ndim != 1:
        raise ValueError("correct and confidence must be 1-D arrays of equal length")
    if np.isnan(conf).any() or (conf < 0).any() or (conf > 1).any():
        raise ValueError("confidence must lie in [0, 1] (no NaN)")
    return ok, conf


def _bin_index(conf: np.ndarray, n_bins: int) -> np.ndarray:
    return np.clip(np.floor(conf * n_bins).astype(np.int64), 0, n_bins - 1)


def reliability_bins(correct, confidence, n_bins: int = 10) -> list[ReliabilityBin]:
    """Equal-width bins over [0, 1] with their size, mean confidence and accuracy."""
    if n_bins < 1:
        raise ValueError("n_bins must be >= 1")
    ok, conf = _arrays(correct, confidence)
    idx = _bin_index(conf, n_bins)
    n = np.bincount(idx, minlength=n_bins)
    s_conf = np.bincount(idx, weights=conf, minlength=n_bins)
    s_ok = np.bincount(idx, weights=ok.astype(float), minlength=n_bins)
    out = []
    for i in range(n_bins):
        mc = s_conf[i] / n[i] if n[i] else float("nan")
        acc = s_ok[i] / n[i] if n[i] else float("nan")
        out.append(ReliabilityBin(i / n_bins, (i + 1) / n_bins, int(n[i]), float(mc), float(acc)))
    return out


def expected_calibration_error(correct, confidence, n_bins: int = 10) -> float:
    """sum_b (n_b / N) * |accuracy_b - mean confidence_b|; NaN for no turns."""
    bins = reliability_bins(correct, confidence, n_bins)
    total = sum(b.n for b in bins)
    if total == 0:
        return float("nan")
    return float(sum(b.n / total * abs(b.accuracy - b.mean_confidence) for b in bins if b.n))


def verdict_correctness(y_true, y_pred) -> np.ndarray:
    """1 where the binary prediction equals gold (undecided already scored as acceptable by the caller)."""
    yt = np.asarray(y_true).astype(np.int64)
    yp = np.asarray(y_pred).astype(np.int64)
    if yt.shape != yp.shape:
        raise ValueError("y_true and y_pred must have the same shape")
    return (yt == yp).astype(np.int64)


def fit_platt(scores, correct, floor: float = 0.0, max_iter: int = 200) -> tuple[float, float]:
    """Platt scaling (Platt, 1999): (a, b) maximising the likelihood of p = floor + (1 - floor) sigmoid(a s + b)
    against the smoothed targets (N+ + 1) / (N+ + 2) and 1 / (N- + 2), so all-correct data gives a finite fit
    (b large, p < 1). ``floor`` = 0 is Platt's map; ``floor`` = 0.5 keeps p above a coin flip, for the correctness
    of a verdict that was decided. Fisher scoring (Newton's method when floor = 0) with step halving, in float64:
    deterministic for the same rows in the same order."""
    x = np.asarray(scores, dtype=float)
    y = np.asarray(correct).astype(bool)
    if x.shape != y.shape or x.ndim != 1 or len(x) == 0:
        raise ValueError("scores and correct must be non-empty 1-D arrays of equal length")
    if not 0.0 <= floor < 1.0:
        raise ValueError("floor must lie in [0, 1)")
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def probs(a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
        q = sigmoid(a * x + b)
        return np.clip(floor + (1.0 - floor) * q, 1e-15, 1.0 - 1e-15), q

    def loglik(a: float, b: float) -> float:
        p, _ = probs(a, b)
        return float(np.sum(t * np.log(p) + (1.0 - t) * np.log(1.0 - p)))

    share = float(np.clip((t.mean() - floor) / (1.0 - floor), 1e-6, 1.0 - 1e-6))
    a, b = 0.0, float(np.log(share / (1.0 - share)))
    ll = loglik(a, b)
    for _ in range(max_iter):
        p, q = probs(a, b)
        dp = (1.0 - floor) * q * (1.0 - q)  # dp / dz
        r = (t - p) / (p * (1.0 - p)) * dp  # dL / dz
        w = dp * dp / (p * (1.0 - p)) + 1e-12  # expected information per row
        g = np.array([np.sum(r * x), np.sum(r)])
        h = np.array([[np.sum(w * x * x), np.sum(w * x)], [np.sum(w * x), np.sum(w)]]) + 1e-9 * np.eye(2)
        step = np.linalg.solve(h, g)
        scale = 1.0
        while scale > 1e-6 and loglik(a + scale * float(step[0]), b + scale * float(step[1])) < ll:
            scale *= 0.5
        a, b = a + scale * float(step[0]), b + scale * float(step[1])
        ll = loglik(a, b)
        if float(np.abs(scale * step).max()) < 1e-12:
            break
    return a, b


def plot_reliability(bins: list[ReliabilityBin], path: Path, title: str = "Turn-confidence reliability",
                     ece: Optional[float] = None) -> Path:
    """Reliability diagram: accuracy per confidence bin against the diagonal, with bin sizes."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, axn) = plt.subplots(2, 1, figsize=(5, 5.5), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    width = bins[0].hi - bins[0].lo if bins else 0.1
    full = [b for b in bins if b.n]
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfect calibration")
    ax.bar([b.lo for b in full], [b.accuracy for b in full], width=width, align="edge", alpha=0.7,
           edgecolor="black", label="accuracy")
    ax.plot([b.mean_confidence for b in full], [b.accuracy for b in full], "o", color="C3", ms=4,
            label="(mean confidence, accuracy)")
    ax.set_ylabel("accuracy of verdicts")
    ax.set_ylim(0, 1.02)
    ax.set_title(title + (f" (ECE {ece:.3f})" if ece is not None else ""))
    ax.legend(fontsize=7, loc="lower right", framealpha=0.9)
    axn.bar([b.lo for b in bins], [b.n for b in bins], width=width, align="edge", color="C0", edgecolor="black")
    axn.set_yscale("symlog")
    axn.set_ylabel("turns")
    axn.set_xlabel("turn confidence")
    axn.set_xlim(0, 1)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


__all__ = ["ReliabilityBin", "reliability_bins", "expected_calibration_error", "verdict_correctness",
           "fit_platt", "plot_reliability"]
