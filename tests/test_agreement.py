"""Agreement coefficients against hand-computed textbook cases, and the dialogue bootstrap."""
from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from audit import agreement as ag

N = None
# [[90, 5], [5, 0]]: 90 both acceptable, 5 A-only failure, 5 B-only failure, 0 both failure
A_PARADOX = ["ok"] * 90 + ["fail"] * 5 + ["ok"] * 5
B_PARADOX = ["ok"] * 90 + ["ok"] * 5 + ["fail"] * 5

# Krippendorff (2011) "Computing Krippendorff's alpha-reliability", nominal example with
# missing values: 4 observers x 12 units, alpha = 0.743
KRIPP_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


def test_kappa_paradox_low_kappa_high_raw_agreement():
    T, cats = ag.confusion_table(A_PARADOX, B_PARADOX, categories=["ok", "fail"])
    assert T.tolist() == [[90, 5], [5, 0]]
    # p_o = 0.90; p_e = 0.95^2 + 0.05^2 = 0.905; kappa = (0.90 - 0.905) / 0.095 = -1/19
    assert ag.raw_agreement(A_PARADOX, B_PARADOX) == pytest.approx(0.90, abs=1e-12)
    assert ag.cohen_kappa(A_PARADOX, B_PARADOX) == pytest.approx(-1 / 19, abs=1e-9)
    assert ag.cohen_kappa(A_PARADOX, B_PARADOX) == pytest.approx(-0.0526315789, abs=1e-9)
    assert ag.cohen_kappa(A_PARADOX, B_PARADOX) == pytest.approx(cohen_kappa_score(A_PARADOX, B_PARADOX),
                                                                  abs=1e-9)


def test_pabak_is_two_po_minus_one():
    assert ag.pabak(A_PARADOX, B_PARADOX) == pytest.approx(2 * 0.90 - 1, abs=1e-12)
    a = ["x", "y", "y", "x", "x"]
    b = ["x", "y", "x", "x", "y"]
    assert ag.pabak(a, b) == pytest.approx(2 * (3 / 5) - 1, abs=1e-12)
    # q categories: (q p_o - 1) / (q - 1)
    assert ag.pabak(a, b, categories=["x", "y", "z"]) == pytest.approx((3 * 0.6 - 1) / 2, abs=1e-12)


def test_gwet_ac1_hand_case():
    # pi_ok = (95 + 95) / 200 = 0.95, pi_fail = 0.05; p_e = 2 * 0.95 * 0.05 / (2 - 1) = 0.095
    # AC1 = (0.90 - 0.095) / (1 - 0.095) = 0.805 / 0.905 = 161 / 181
    assert ag.gwet_ac1(A_PARADOX, B_PARADOX) == pytest.approx(161 / 181, abs=1e-9)
    # three categories, 4 items: a = x x y z, b = x y y z -> p_o = 3/4
    # pi = (x: 3/8, y: 3/8, z: 2/8); p_e = (3/8*5/8 + 3/8*5/8 + 2/8*6/8) / 2 = 42/128
    a, b = ["x", "x", "y", "z"], ["x", "y", "y", "z"]
    pe = 42 / 128
    assert ag.gwet_ac1(a, b) == pytest.approx((0.75 - pe) / (1 - pe), abs=1e-12)


def test_krippendorff_alpha_with_missing_values_textbook_example():
    alpha = ag.krippendorff_alpha(KRIPP_2011)
    assert round(alpha, 3) == 0.743
    # NaN works as missing too (numeric matrix)
    num = np.array([[np.nan if v is None else v for v in row] for row in KRIPP_2011], dtype=float)
    assert ag.krippendorff_alpha(num.tolist()) == pytest.approx(alpha, abs=1e-12)


def test_krippendorff_two_raters_hand_case_and_missing():
    # a = x x y y, b = x y y y (no missing): o_xx = 2, o_xy = o_yx = 1, o_yy = 4, n = 8
    # n_x = 3, n_y = 5; alpha = 1 - (n-1) * 2 / (2 * 3 * 5) = 1 - 7 * 2 / 30
    a, b = ["x", "x", "y", "y"], ["x", "y", "y", "y"]
    assert ag.krippendorff_alpha([a, b]) == pytest.approx(1 - 14 / 30, abs=1e-12)
    # a unit labelled by one rater only is not pairable: same alpha
    assert ag.krippendorff_alpha([a + ["x"], b + [None]]) == pytest.approx(1 - 14 / 30, abs=1e-12)
    # perfect agreement
    assert ag.krippendorff_alpha([["x", "y", "y"], ["x", "y", "y"]]) == pytest.approx(1.0)


def test_kappa_matches_sklearn_on_random_multiclass_data():
    rng = np.random.default_rng(3)
    cats = ["acceptable", "IUV", "WNF", "PC", "UV"]
    for _ in range(20):
        a = rng.choice(cats, size=150, p=[0.6, 0.1, 0.1, 0.1, 0.1])
        b = np.where(rng.random(150) < 0.7, a, rng.choice(cats, size=150))
        assert ag.cohen_kappa(a.tolist(), b.tolist()) == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)


def test_missing_pairs_are_dropped_for_two_rater_coefficients():
    a = ["x", "y", None, "x", float("nan")]
    b = ["x", "x", "y", None, "y"]
    assert ag.raw_agreement(a, b) == pytest.approx(0.5)
    assert ag.cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(["x", "y"], ["x", "x"]))


def test_integer_weights_equal_duplicated_items():
    rng = np.random.default_rng(7)
    a = rng.choice(["f", "a", "u"], size=40).tolist()
    b = [x if rng.random() < 0.6 else "a" for x in a]
    w = rng.integers(1, 4, size=40)
    da = [x for x, k in zip(a, w) for _ in range(k)]
    db_ = [x for x, k in zip(b, w) for _ in range(k)]
    for f in (ag.raw_agreement, ag.cohen_kappa, ag.pabak, ag.gwet_ac1):
        assert f(a, b, weights=w) == pytest.approx(f(da, db_), abs=1e-12)
    assert ag.krippendorff_alpha([a, b], weights=w) == pytest.approx(ag.krippendorff_alpha([da, db_]),
                                                                      abs=1e-12)


def test_cluster_resample_weights_draw_whole_dialogues():
    clusters = ["d1", "d1", "d2", "d3", "d3", "d3"]
    W = ag.cluster_resample_weights(clusters, n_resamples=500, seed=1)
    assert W.shape == (500, 6)
    assert np.all(W[:, 0] == W[:, 1]) and np.all(W[:, 3] == W[:, 5])
    # 3 dialogues drawn per resample: per-dialogue counts sum to 3
    assert np.all(W[:, 0] + W[:, 2] + W[:, 3] == 3)
    assert np.array_equal(W, ag.cluster_resample_weights(clusters, n_resamples=500, seed=1))


def test_dialogue_bootstrap_is_seeded_and_wider_than_turn_bootstrap():
    rng = np.random.default_rng(0)
    a, b, dlg = [], [], []
    for d in range(40):  # dialogues are homogeneous: the raters agree on all or none of a dialogue
        agree = rng.random() < 0.7
        for t in range(5):
            x = rng.choice(["f", "a"])
            a.append(x)
            b.append(x if agree else ("a" if x == "f" else "f"))
            dlg.append(f"d{d}")
    by_dialogue = ag.cohen_kappa_ci(a, b, dlg, n_resamples=3000, seed=5)
    again = ag.cohen_kappa_ci(a, b, dlg, n_resamples=3000, seed=5)
    by_turn = ag.cohen_kappa_ci(a, b, list(range(len(a))), n_resamples=3000, seed=5)
    assert by_dialogue == again
    assert by_dialogue.value == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)
    assert by_dialogue.lo < by_dialogue.value < by_dialogue.hi
    assert (by_dialogue.hi - by_dialogue.lo) > 1.5 * (by_turn.hi - by_turn.lo)


def test_agreement_report_has_all_five_with_cis():
    clusters = [i // 4 for i in range(100)]
    rep = ag.agreement_report(A_PARADOX, B_PARADOX, clusters, n_resamples=1000, seed=0)
    assert set(rep) == set(ag.STATISTICS)
    assert rep["raw_agreement"].value == pytest.approx(0.9)
    assert rep["cohen_kappa"].value == pytest.approx(-1 / 19, abs=1e-9)
    assert rep["pabak"].value == pytest.approx(0.8)
    for est in rep.values():
        assert est.lo <= est.value <= est.hi and est.n == 100
    with pytest.raises(ValueError, match="clusters"):
        ag.cohen_kappa_ci(A_PARADOX, B_PARADOX, None)


def test_undefined_kappa_is_nan_not_an_error():
    assert math.isnan(ag.cohen_kappa(["a", "a"], ["a", "a"]))
    assert ag.raw_agreement(["a", "a"], ["a", "a"]) == 1.0
