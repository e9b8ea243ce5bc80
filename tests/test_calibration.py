"""Calibration: ECE and reliability bins on cases computed by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sage_core.science.calibration import (expected_calibration_error, fit_platt, plot_reliability,
                                           reliability_bins, verdict_correctness)


def test_perfectly_calibrated_bins_give_zero():
    # bin [0.2, 0.3): 5 turns at 0.2, 1 right -> acc 0.2; bin [0.8, 0.9): 5 turns at 0.8, 4 right -> 0.8
    conf = [0.2] * 5 + [0.8] * 5
    ok = [1, 0, 0, 0, 0] + [1, 1, 1, 1, 0]
    assert expected_calibration_error(ok, conf, n_bins=10) == pytest.approx(0.0)


def test_hand_computed_ece():
    # 4 turns at 0.95, 3 right: |0.75 - 0.95| = 0.20, weight 4/10
    # 6 turns at 0.55, 3 right: |0.50 - 0.55| = 0.05, weight 6/10
    conf = [0.95] * 4 + [0.55] * 6
    ok = [1, 1, 1, 0] + [1, 1, 1, 0, 0, 0]
    assert expected_calibration_error(ok, conf) == pytest.approx(0.4 * 0.20 + 0.6 * 0.05)


def test_overconfident_single_bin():
    # all at confidence 1.0 (the last bin holds 1.0), half right -> ECE 0.5
    assert expected_calibration_error([1, 0, 1, 0], [1.0, 1.0, 1.0, 1.0]) == pytest.approx(0.5)


def test_bins_edges_sizes_and_means():
    bins = reliability_bins([1, 0, 1, 1], [0.0, 0.1, 0.19, 1.0], n_bins=5)
    assert [(b.lo, b.hi) for b in bins] == [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.0)]
    assert [b.n for b in bins] == [3, 0, 0, 0, 1]
    assert bins[0].mean_confidence == pytest.approx((0.0 + 0.1 + 0.19) / 3)
    assert bins[0].accuracy == pytest.approx(2 / 3)
    assert math.isnan(bins[1].accuracy) and math.isnan(bins[1].mean_confidence)
    assert bins[4].accuracy == 1.0 and bins[4].mean_confidence == 1.0
    # ECE with these bins: 3/4 * |2/3 - 0.0966..| + 1/4 * 0
    assert expected_calibration_error([1, 0, 1, 1], [0.0, 0.1, 0.19, 1.0], n_bins=5) == \
        pytest.approx(0.75 * abs(2 / 3 - 0.29 / 3))


def test_bad_input_and_empty():
    with pytest.raises(ValueError):
        expected_calibration_error([1, 0], [0.5])
    with pytest.raises(ValueError):
        expected_calibration_error([1], [1.2])
    with pytest.raises(ValueError):
        expected_calibration_error([1], [float("nan")])
    assert math.isnan(expected_calibration_error([], []))


def test_correctness_and_plot(tmp_path):
    ok = verdict_correctness([1, 0, 1, 0], [1, 1, 0, 0])
    assert ok.tolist() == [1, 0, 0, 1]
    bins = reliability_bins(ok, np.array([0.9, 0.9, 0.6, 0.6]))
    p = plot_reliability(bins, tmp_path / "rel.png", ece=expected_calibration_error(ok, [0.9, 0.9, 0.6, 0.6]))
    assert p.exists() and p.stat().st_size > 1000


def test_platt_fit_recovers_a_known_logistic_and_calibrates():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 20_000)
    y = rng.random(20_000) < 1 / (1 + np.exp(-(5.0 * x - 1.0)))
    a, b = fit_platt(x, y)
    assert a == pytest.approx(5.0, abs=0.3) and b == pytest.approx(-1.0, abs=0.1)
    conf = 1 / (1 + np.exp(-(a * x + b)))
    assert expected_calibration_error(y, conf) < 0.02 < expected_calibration_error(y, (1 + x) / 2)
    assert fit_platt(x, y) == (a, b)  # deterministic


def test_platt_fit_of_all_correct_rows_is_finite_and_below_certainty():
    a, b = fit_platt([0.2, 0.5, 0.9, 1.0], [1, 1, 1, 1])
    p = 1 / (1 + np.exp(-(a * 1.0 + b)))
    assert np.isfinite(a) and np.isfinite(b) and 0.5 < p < 1.0  # target (N+ + 1) / (N+ + 2) = 5 / 6
    with pytest.raises(ValueError):
        fit_platt([], [])


def test_platt_fit_above_a_coin_flip_recovers_its_model_and_never_goes_below_the_floor():
    rng = np.random.default_rng(1)
    x = rng.uniform(0.2, 1, 20_000)
    y = rng.random(20_000) < 0.5 + 0.5 / (1 + np.exp(-(6.0 * x - 2.0)))
    a, b = fit_platt(x, y, floor=0.5)
    assert a == pytest.approx(6.0, abs=0.8) and b == pytest.approx(-2.0, abs=0.5)
    plain = fit_platt(x, y)
    p_plain = 1 / (1 + np.exp(-(plain[0] * 0.0 + plain[1])))
    p_floor = 0.5 + 0.5 / (1 + np.exp(-(a * 0.0 + b)))
    assert p_floor > 0.5 and p_plain < p_floor  # extrapolated below the data, only the plain line nears a coin flip
    with pytest.raises(ValueError):
        fit_platt(x, y, floor=1.0)
