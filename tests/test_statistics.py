"""Statistics: bootstrap vs a slow reference, Holm, paired bootstrap, selective curve."""
from __future__ import annotations

import numpy as np
import pytest

from sage_core.science.selective import aurc, f1_at_coverage, kept_count, selective_curve
from sage_core.science.statistics import (
    bootstrap_ci,
    bootstrap_cis,
    draw_indices,
    holm_bonferroni,
    paired_bootstrap,
    prf,
)


def _f1_py(t, p):
    tp = sum(1 for a, b in zip(t, p) if a and b)
    fp = sum(1 for a, b in zip(t, p) if not a and b)
    fn = sum(1 for a, b in zip(t, p) if a and not b)
    return 0.0 if 2 * tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)


def _percentile_py(xs, q):
    xs = sorted(xs)
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def test_prf_counts():
    r = prf([1, 1, 0, 0, 1], [1, 0, 1, 0, 1])
    assert (r["tp"], r["fp"], r["fn"]) == (2, 1, 1)
    assert r["precision"] == pytest.approx(2 / 3) and r["recall"] == pytest.approx(2 / 3)
    assert r["f1"] == pytest.approx(2 / 3)
    assert prf([0, 0], [0, 0])["f1"] == 0.0  # no positives anywhere: 0, not NaN


def test_prf_rejects_non_binary():
    with pytest.raises(ValueError):
        prf([0, 2], [0, 1])


def test_bootstrap_matches_pure_python_reference():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 23)
    p = np.where(rng.random(23) < 0.7, y, 1 - y)
    point, lo, hi = bootstrap_ci(y, p, n_resamples=300, seed=5)
    idx = draw_indices(23, 300, 5)
    ref = [_f1_py([y[i] for i in row], [p[i] for i in row]) for row in idx.tolist()]
    assert point == pytest.approx(_f1_py(y.tolist(), p.tolist()))
    assert lo == pytest.approx(_percentile_py(ref, 2.5))
    assert hi == pytest.approx(_percentile_py(ref, 97.5))


def test_cluster_bootstrap_matches_reference():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1])
    p = np.array([1, 0, 0, 1, 1, 0, 1, 0, 1, 0])
    clusters = np.array(["d3", "d3", "d1", "d1", "d1", "d2", "d2", "d4", "d4", "d4"])
    point, lo, hi = bootstrap_ci(y, p, n_resamples=200, seed=1, clusters=clusters)
    names = sorted(set(clusters))  # cluster ids are indexed in sorted order
    members = {c: [i for i in range(10) if clusters[i] == c] for c in names}
    ref = []
    for row in draw_indices(len(names), 200, 1).tolist():
        ids = [i for c in row for i in members[names[c]]]
        ref.append(_f1_py([y[i] for i in ids], [p[i] for i in ids]))
    assert lo == pytest.approx(_percentile_py(ref, 2.5))
    assert hi == pytest.approx(_percentile_py(ref, 97.5))
    assert point == pytest.approx(_f1_py(y, p))


def test_bootstrap_is_seeded_and_cis_agree():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 100)
    p = np.where(rng.random(100) < 0.8, y, 1 - y)
    q = np.where(rng.random(100) < 0.6, y, 1 - y)
    a = bootstrap_ci(y, p, n_resamples=1000)
    assert a == bootstrap_ci(y, p, n_resamples=1000)
    assert a != bootstrap_ci(y, p, n_resamples=1000, seed=1)
    many = bootstrap_cis(y, {"p": p, "q": q}, n_resamples=1000)
    assert many["p"] == pytest.approx(a)
    assert a[1] <= a[0] <= a[2]
    r = bootstrap_ci(y, p, metric="recall", n_resamples=500)
    assert r[0] == pytest.approx(prf(y, p)["recall"])


def test_holm_textbook():
    assert holm_bonferroni([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_bonferroni([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm_bonferroni([]) == []


def test_paired_identical_predictions():
    y = np.array([1, 0, 1, 0, 1, 1, 0, 0])
    p = np.array([1, 0, 0, 0, 1, 1, 1, 0])
    r = paired_bootstrap(y, p, {"same": p.copy()}, n_resamples=2000)
    assert r.delta == 0.0 and r.lo == 0.0 and r.hi == 0.0
    assert r.p == 1.0
    assert r.best_baseline == "same" and r.best_share == 1.0


def test_paired_strictly_better_and_reselection():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 280)
    sage = y.copy()
    sage[:5] = 1 - sage[:5]  # 5 errors
    weak = np.where(rng.random(280) < 0.70, y, 1 - y)
    strong = np.where(rng.random(280) < 0.80, y, 1 - y)
    r = paired_bootstrap(y, sage, {"weak": weak, "strong": strong}, n_resamples=3000)
    f1 = {k: prf(y, v)["f1"] for k, v in {"sage": sage, "weak": weak, "strong": strong}.items()}
    assert r.best_baseline == "strong"
    assert r.delta == pytest.approx(f1["sage"] - f1["strong"])
    assert 0 < r.lo < r.delta < r.hi
    assert r.p < 0.01
    assert sum(r.selection_shares.values()) == pytest.approx(1.0)
    assert r.selection_shares["strong"] > r.selection_shares["weak"]


def test_paired_reselection_when_baselines_are_close():
    # two baselines of equal quality: each wins some resamples, so the max over
    # baselines is >= either one and delta CI is shifted accordingly
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, 200)
    a = np.where(rng.random(200) < 0.8, y, 1 - y)
    b = np.where(rng.random(200) < 0.8, y, 1 - y)
    r = paired_bootstrap(y, a, {"a2": a.copy(), "b": b}, n_resamples=2000)
    assert 0.05 < r.selection_shares["b"] < 0.95
    assert r.hi <= 1e-12  # sage == a2, so SAGE - max(a2, b) <= 0 in every resample


def test_selective_curve_and_ties():
    y = [1, 0, 1, 0]
    p = [1, 1, 0, 0]
    c = [0.9, 0.5, 0.5, 0.1]
    rows = selective_curve(y, p, c)
    assert [r.n_kept for r in rows] == [1, 2, 3, 4]
    assert rows[0].f1 == 1.0 and rows[0].error_rate == 0.0
    # tie at 0.5 broken by input order: index 1 (a false positive) before index 2
    assert rows[1].precision == 0.5 and rows[1].error_rate == 0.5
    assert rows[3].f1 == pytest.approx(prf(y, p)["f1"])
    assert rows[3].coverage == 1.0
    assert f1_at_coverage(y, p, c, 1.0) == pytest.approx(0.5)
    assert f1_at_coverage(y, p, c, 0.25) == 1.0
    assert kept_count(280, 0.9) == 252 and kept_count(10, 0.8) == 8
    assert aurc(y, p, c) == pytest.approx((0 + 0.5 + 2 / 3 + 0.5) / 4)


def test_selective_drops_low_confidence_errors_first():
    y = np.array([1, 1, 0, 0, 1, 0, 0, 1, 0, 1])
    p = y.copy()
    p[[2, 7]] = 1 - p[[2, 7]]
    conf = np.ones(10)
    conf[[2, 7]] = 0.0
    assert f1_at_coverage(y, p, conf, 0.8) == 1.0
    assert f1_at_coverage(y, p, conf, 1.0) < 1.0


def test_selective_undefined_points_are_nan_not_zero():
    # the two most confident turns are clean and accepted: no gold and no predicted failure
    y = [0, 0, 1, 0, 1]
    p = [0, 0, 1, 1, 0]
    c = [0.99, 0.95, 0.7, 0.6, 0.2]
    rows = selective_curve(y, p, c)
    for r in rows[:2]:
        assert np.isnan(r.f1) and np.isnan(r.precision) and np.isnan(r.recall)
        assert r.error_rate == 0.0
    assert rows[2].f1 == 1.0 and rows[2].precision == 1.0 and rows[2].recall == 1.0
    assert rows[3].precision == 0.5 and rows[3].recall == 1.0  # a false positive: precision defined
    assert np.isnan(f1_at_coverage(y, p, c, 0.4)) and f1_at_coverage(y, p, c, 1.0) == pytest.approx(0.5)
    # precision alone undefined: gold failures kept but none predicted (F1 = 0 is defined)
    rows = selective_curve([1, 0], [0, 0], [0.9, 0.8])
    assert np.isnan(rows[0].precision) and rows[0].recall == 0.0 and rows[0].f1 == 0.0
