"""Inter-annotator agreement with dialogue-level bootstrap CIs (numpy, vectorised).

Why several coefficients: on an audit where most turns are acceptable, raw
agreement is high while Cohen's kappa can be near zero or negative (the
"kappa paradox", e.g. table [[90, 5], [5, 0]]: p_o = 0.90, kappa = -0.0526).
PABAK and Gwet's AC1 are reported next to kappa so readers see both sides;
Krippendorff's alpha (nominal) also uses units with a missing label.

All statistics are computed from a (weighted) contingency table, so optional
per-item weights (inverse inclusion probabilities, ``audit.weights``) give
design-weighted estimates, and the bootstrap is one matrix product: each
resample draws whole DIALOGUES (clusters) with replacement, which turns into a
count per item; turns of one dialogue are not independent, so resampling turns
would make the intervals too narrow.

Inputs ``a``, ``b`` are equal-length sequences of category labels (any
hashable; ``None``/NaN = missing; pairs with a missing side are dropped for
the two-rater coefficients). ``krippendorff_alpha`` takes a raters x units
reliability matrix (Krippendorff's orientation) with ``None``/NaN for missing.

More than two raters: ``pairwise_table`` gives Cohen's kappa for every pair of
raters on the units both labelled (never one kappa pooled over pairs), and
``fleiss_kappa`` / ``fleiss_kappa_matrix`` and ``krippendorff_alpha`` give the
multi-rater coefficients.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

STATISTICS = ("raw_agreement", "cohen_kappa", "pabak", "gwet_ac1", "krippendorff_alpha")


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _categories(values: Sequence[Any], categories: Optional[Sequence[Any]]) -> list:
    if categories is not None:
        cats = list(categories)
        extra = {v for v in values if not _missing(v)} - set(cats)
        if extra:
            raise ValueError(f"labels {sorted(map(str, extra))} are not in categories {cats}")
        return cats
    return sorted({v for v in values if not _missing(v)}, key=str)


def _weights(n: int, weights) -> np.ndarray:
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"weights must have length {n}, got shape {w.shape}")
    if np.any(w < 0):
        raise ValueError("weights must be non-negative")
    return w


# ------------------------------------------------------------ two raters
def _pair_codes(a, b, categories):
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"the two label lists differ in length ({len(a)} vs {len(b)})")
    cats = _categories(a + b, categories)
    idx = {c: i for i, c in enumerate(cats)}
    ok = np.array([not (_missing(x) or _missing(y)) for x, y in zip(a, b)], dtype=bool)
    ia = np.array([idx[x] if not _missing(x) else -1 for x in a], dtype=int)
    ib = np.array([idx[y] if not _missing(y) else -1 for y in b], dtype=int)
    return ia, ib, ok, cats


def _pair_onehot(ia, ib, ok, q) -> np.ndarray:
    """n x q*q indicator of each item's (a, b) cell; all-zero rows for missing pairs."""
    m = np.zeros((len(ia), q * q))
    rows = np.nonzero(ok)[0]
    m[rows, ia[rows] * q + ib[rows]] = 1.0
    return m


def _from_tables(T: np.ndarray, stat: str) -> np.ndarray:
    """Statistic for a stack of q x q tables (shape (..., q, q)); NaN where undefined."""
    q = T.shape[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        n = T.sum(axis=(-1, -2))
        po = np.trace(T, axis1=-2, axis2=-1) / n
        if stat == "raw_agreement":
            return po
        if stat == "pabak":
            return (q * po - 1.0) / (q - 1.0) if q > 1 else np.full_like(po, np.nan)
        r = T.sum(axis=-1) / n[..., None]
        c = T.sum(axis=-2) / n[..., None]
        if stat == "cohen_kappa":
            pe = (r * c).sum(axis=-1)
        elif stat == "gwet_ac1":
            if q < 2:
                return np.full_like(po, np.nan)
            pi = (r + c) / 2.0
            pe = (pi * (1.0 - pi)).sum(axis=-1) / (q - 1.0)
        else:
            raise ValueError(f"unknown statistic '{stat}'")
        out = (po - pe) / (1.0 - pe)
        return np.where(np.isclose(pe, 1.0), np.nan, out)


def confusion_table(a, b, categories=None, weights=None) -> tuple[np.ndarray, list]:
    """(weighted) q x q table, rows = a, columns = b, and the category order."""
    ia, ib, ok, cats = _pair_codes(a, b, categories)
    w = _weights(len(ia), weights)
    return (w @ _pair_onehot(ia, ib, ok, len(cats))).reshape(len(cats), len(cats)), cats


def _pair_stat(stat, a, b, categories=None, weights=None) -> float:
    T, _ = confusion_table(a, b, categories, weights)
    return float(_from_tables(T, stat))


def raw_agreement(a, b, categories=None, weights=None) -> float:
    """p_o: share of items on which the two raters give the same label."""
    return _pair_stat("raw_agreement", a, b, categories, weights)


def cohen_kappa(a, b, categories=None, weights=None) -> float:
    """Cohen's kappa (p_o - p_e) / (1 - p_e), p_e from each rater's own marginals."""
    return _pair_stat("cohen_kappa", a, b, categories, weights)


def pabak(a, b, categories=None, weights=None) -> float:
    """Prevalence- and bias-adjusted kappa (q p_o - 1) / (q - 1); 2 p_o - 1 for two categories."""
    return _pair_stat("pabak", a, b, categories, weights)


def gwet_ac1(a, b, categories=None, weights=None) -> float:
    """Gwet's AC1: p_e = sum_k pi_k (1 - pi_k) / (q - 1), pi_k the mean of both raters' marginals."""
    return _pair_stat("gwet_ac1", a, b, categories, weights)


# ---------------------------------------------------------- Krippendorff
def _unit_coincidences(matrix, categories) -> tuple[np.ndarray, list]:
    """units x q*q coincidence contributions (n_uc n_uk - [c=k] n_uc) / (m_u - 1)."""
    rows = [list(r) for r in matrix]
    if not rows:
        raise ValueError("the reliability matrix is empty")
    n_units = len(rows[0])
    if any(len(r) != n_units for r in rows):
        raise ValueError("every rater row must have one entry per unit")
    cats = _categories([v for r in rows for v in r], categories)
    idx = {c: i for i, c in enumerate(cats)}
    q = len(cats)
    counts = np.zeros((n_units, q))
    for r in rows:
        for u, v in enumerate(r):
            if not _missing(v):
                counts[u, idx[v]] += 1
    m = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(q)[None]
    with np.errstate(invalid="ignore", divide="ignore"):
        contrib = np.where((m >= 2)[:, None, None], outer / (m - 1)[:, None, None], 0.0)
    return contrib.reshape(n_units, q * q), cats


def _alpha_from_coincidences(O: np.ndarray) -> np.ndarray:
    """Nominal alpha = 1 - (n - 1) sum_{c!=k} o_ck / sum_{c!=k} n_c n_k for stacked q x q matrices."""
    nc = O.sum(axis=-1)
    n = nc.sum(axis=-1)
    off_o = O.sum(axis=(-1, -2)) - np.trace(O, axis1=-2, axis2=-1)
    off_e = n ** 2 - (nc ** 2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = 1.0 - (n - 1.0) * off_o / off_e
    return np.where(off_e > 0, out, np.nan)


def krippendorff_alpha(matrix, categories=None, weights=None) -> float:
    """Krippendorff's alpha, nominal metric; ``matrix`` is raters x units, None/NaN = missing.

    Units with fewer than two labels are not pairable and drop out, as in
    Krippendorff (2011). ``weights`` (one per unit) give a design-weighted alpha.
    """
    C, cats = _unit_coincidences(matrix, categories)
    w = _weights(C.shape[0], weights)
    q = len(cats)
    return float(_alpha_from_coincidences((w @ C).reshape(q, q)))


# ------------------------------------------------------------------ Fleiss
def fleiss_kappa(counts) -> float:
    """Fleiss' kappa from an items x categories table of rating counts (every row sums to the same m >= 2).

    P_i = (sum_j n_ij^2 - m) / (m (m - 1)), P = mean P_i, p_j = sum_i n_ij / (N m),
    P_e = sum_j p_j^2, kappa = (P - P_e) / (1 - P_e) (Fleiss 1971). NaN when P_e = 1.
    """
    n = np.asarray(counts, dtype=float)
    if n.ndim != 2 or n.shape[0] == 0:
        raise ValueError("give an items x categories table with at least one item")
    m = n.sum(axis=1)
    if not np.allclose(m, m[0]) or m[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings on every item")
    m = m[0]
    p_i = ((n ** 2).sum(axis=1) - m) / (m * (m - 1))
    p_j = n.sum(axis=0) / n.sum()
    pe = float((p_j ** 2).sum())
    if math.isclose(pe, 1.0):
        return math.nan
    return float((p_i.mean() - pe) / (1 - pe))


def rating_counts(matrix, categories=None, m: Optional[int] = None) -> tuple[np.ndarray, list, list[int]]:
    """From a raters x units matrix (None = missing): the units x categories count table of the units
    with exactly ``m`` ratings (default: the most common number >= 2), the categories and the unit indexes."""
    rows = [list(r) for r in matrix]
    if not rows:
        raise ValueError("the reliability matrix is empty")
    cats = _categories([v for r in rows for v in r], categories)
    idx = {c: i for i, c in enumerate(cats)}
    n_units = len(rows[0])
    counts = np.zeros((n_units, len(cats)))
    for r in rows:
        if len(r) != n_units:
            raise ValueError("every rater row must have one entry per unit")
        for u, v in enumerate(r):
            if not _missing(v):
                counts[u, idx[v]] += 1
    k = counts.sum(axis=1).astype(int)
    if m is None:
        vals, freq = np.unique(k[k >= 2], return_counts=True)
        if not len(vals):
            return np.zeros((0, len(cats))), cats, []
        m = int(vals[np.lexsort((-vals, -freq))][0])  # most common; ties -> more ratings
    keep = [int(u) for u in np.nonzero(k == m)[0]]
    return counts[keep], cats, keep


def fleiss_kappa_matrix(matrix, categories=None, m: Optional[int] = None) -> tuple[float, int, int]:
    """Fleiss' kappa on the units of a raters x units matrix rated exactly ``m`` times: (kappa, units, m)."""
    counts, _, keep = rating_counts(matrix, categories, m)
    if not keep:
        return math.nan, 0, int(m or 0)
    return fleiss_kappa(counts), len(keep), int(counts[0].sum())


def pairwise_table(matrix, names: Sequence[str], categories=None, clusters: Optional[Sequence[Any]] = None,
                   n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05) -> list[dict]:
    """Cohen's kappa and raw agreement for every pair of raters, on the units both rated.

    One row per pair (never pooled): ``{"a", "b", "n", "raw_agreement", "cohen_kappa"}``, plus
    ``kappa_lo`` / ``kappa_hi`` (bootstrap over ``clusters``, one id per unit) when clusters are given;
    pairs with no common unit are listed with n = 0 and NaN statistics.
    """
    rows = [list(r) for r in matrix]
    if len(rows) != len(names):
        raise ValueError("one name per rater row")
    cats = _categories([v for r in rows for v in r], categories)
    out = []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            units = [u for u, (x, y) in enumerate(zip(rows[i], rows[j])) if not (_missing(x) or _missing(y))]
            row = {"a": names[i], "b": names[j], "n": len(units), "raw_agreement": math.nan,
                   "cohen_kappa": math.nan}
            if clusters is not None:
                row.update(kappa_lo=math.nan, kappa_hi=math.nan)
            if units:
                a, b = [rows[i][u] for u in units], [rows[j][u] for u in units]
                row.update(raw_agreement=raw_agreement(a, b, cats), cohen_kappa=cohen_kappa(a, b, cats))
                if clusters is not None:
                    est = pair_statistic_ci("cohen_kappa", a, b, [clusters[u] for u in units], categories=cats,
                                            n_resamples=n_resamples, seed=seed, alpha=alpha)
                    row.update(kappa_lo=est.lo, kappa_hi=est.hi)
            out.append(row)
    return out


# -------------------------------------------------------------- bootstrap
def cluster_resample_weights(clusters: Sequence[Any], n_resamples: int = 10_000, seed: int = 0
                             ) -> np.ndarray:
    """n_resamples x n_items: how often each item's cluster was drawn (clusters with replacement)."""
    _, cid = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
    k = int(cid.max()) + 1 if len(cid) else 0
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(k, np.full(k, 1.0 / k), size=n_resamples)
    return counts[:, cid].astype(float)


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a percentile bootstrap interval."""

    value: float
    lo: float
    hi: float
    n: int  # items (pairs or units) that entered the estimate

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.value, self.lo, self.hi)


def _interval(samples: np.ndarray, alpha: float) -> tuple[float, float]:
    s = samples[~np.isnan(samples)]
    if s.size == 0:
        return (math.nan, math.nan)
    return (float(np.quantile(s, alpha / 2)), float(np.quantile(s, 1 - alpha / 2)))


def _bootstrap(design: np.ndarray, fold: Callable[[np.ndarray], np.ndarray], q: int, clusters,
               weights, n_resamples: int, seed: int, alpha: float) -> tuple[float, float, float]:
    w = _weights(design.shape[0], weights)
    point = float(fold((w @ design).reshape(q, q)))
    if clusters is None:
        raise ValueError("give clusters (the dialogue id of every item) for the dialogue-level bootstrap")
    clusters = list(clusters)
    if len(clusters) != design.shape[0]:
        raise ValueError(f"clusters must have length {design.shape[0]}, got {len(clusters)}")
    W = cluster_resample_weights(clusters, n_resamples, seed) * w[None, :]
    samples = fold((W @ design).reshape(n_resamples, q, q))
    lo, hi = _interval(samples, alpha)
    return point, lo, hi


def pair_statistic_ci(stat: str, a, b, clusters, categories=None, weights=None,
                      n_resamples: int = 10_000, seed: int = 0, alpha: float = 0.05) -> Estimate:
    """``stat`` in raw_agreement / cohen_kappa / pabak / gwet_ac1 with a dialogue-bootstrap CI."""
    ia, ib, ok, cats = _pair_codes(a, b, categories)
    q = len(cats)
    point, lo, hi = _bootstrap(_pair_onehot(ia, ib, ok, q), lambda T: _from_tables(T, stat), q,
                               clusters, weights, n_resamples, seed, alpha)
    return Estimate(point, lo, hi, int(ok.sum()))


def raw_agreement_ci(a, b, clusters, **kw) -> Estimate:
    return pair_statistic_ci("raw_agreement", a, b, clusters, **kw)


def cohen_kappa_ci(a, b, clusters, **kw) -> Estimate:
    return pair_statistic_ci("cohen_kappa", a, b, clusters, **kw)


def pabak_ci(a, b, clusters, **kw) -> Estimate:
    return pair_statistic_ci("pabak", a, b, clusters, **kw)


def gwet_ac1_ci(a, b, clusters, **kw) -> Estimate:
    return pair_statistic_ci("gwet_ac1", a, b, clusters, **kw)


def krippendorff_alpha_ci(matrix, clusters, categories=None, weights=None, n_resamples: int = 10_000,
                          seed: int = 0, alpha: float = 0.05) -> Estimate:
    """Krippendorff's alpha with a bootstrap over clusters of units (one cluster id per unit)."""
    C, cats = _unit_coincidences(matrix, categories)
    q = len(cats)
    point, lo, hi = _bootstrap(C, _alpha_from_coincidences, q, clusters, weights,
                               n_resamples, seed, alpha)
    pairable = int((C.sum(axis=1) > 0).sum())
    return Estimate(point, lo, hi, pairable)


def agreement_report(a, b, clusters, categories=None, weights=None, n_resamples: int = 10_000,
                     seed: int = 0, alpha: float = 0.05) -> dict[str, Estimate]:
    """All five coefficients for two raters, each with its dialogue-level bootstrap CI.

    The same seed gives every coefficient the same resamples, so they are comparable.
    Krippendorff's alpha also uses items where only one rater answered (they
    are unpairable and drop out, but they do not remove the other rater's pairs).
    """
    kw = dict(categories=categories, weights=weights, n_resamples=n_resamples, seed=seed, alpha=alpha)
    out = {s: pair_statistic_ci(s, a, b, clusters, **kw) for s in STATISTICS[:4]}
    out["krippendorff_alpha"] = krippendorff_alpha_ci([list(a), list(b)], clusters, **kw)
    return out


__all__ = ["STATISTICS", "Estimate", "confusion_table", "raw_agreement", "cohen_kappa", "pabak",
           "gwet_ac1", "krippendorff_alpha", "fleiss_kappa", "rating_counts", "fleiss_kappa_matrix",
           "pairwise_table", "cluster_resample_weights", "pair_statistic_ci",
           "raw_agreement_ci", "cohen_kappa_ci", "pabak_ci", "gwet_ac1_ci", "krippendorff_alpha_ci",
           "agreement_report"]
