"""Fleiss' kappa, Cohen's kappa per annotator pair and Krippendorff's alpha against hand-computed cases."""
from __future__ import annotations

import math

import pytest
from sklearn.metrics import cohen_kappa_score
from test_db_support import sqlite_url  # noqa: F401  (fixture)

import db
from audit import agreement as ag
from audit import assignment as asg
from audit import consensus as cs

# Fleiss (1971) as reproduced in the usual worked example: 10 subjects, 14 raters, 5 categories.
# P-bar = 0.378, P_e = 0.213, kappa = 0.210.
FLEISS_1971 = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
               [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]

# Three raters, four turns, categories A / B (our own hand case):
#   turn:  1  2  3  4
#   r1:    A  A  B  A
#   r2:    A  A  B  B
#   r3:    A  B  B  B
# Fleiss: counts (A, B) = (3,0) (2,1) (0,3) (1,2); P_i = (sum n^2 - 3) / 6 = 1, 1/3, 1, 1/3 -> P = 2/3;
#   p_A = 6/12 = p_B -> P_e = 1/2; kappa = (2/3 - 1/2) / (1/2) = 1/3.
# Cohen per pair: r1-r2 p_o = 3/4, p_e = 3/4*1/2 + 1/4*1/2 = 1/2 -> 1/2;
#   r1-r3 p_o = 1/2, p_e = 3/4*1/4 + 1/4*3/4 = 3/8 -> (1/8)/(5/8) = 1/5;  r2-r3 p_o = 3/4, p_e = 1/2 -> 1/2.
# Krippendorff (nominal): coincidences o_AA = 3 + 1 = 4 (turns 1, 2), o_BB = 3 + 1 = 4 (turns 3, 4),
#   o_AB = o_BA = 1 + 1 = 2 (turns 2, 4); n_A = n_B = 6, n = 12;
#   alpha = 1 - (n - 1) * (o_AB + o_BA) / (n^2 - n_A^2 - n_B^2) = 1 - 11 * 4 / 72 = 7/18.
R = {"r1": ["A", "A", "B", "A"], "r2": ["A", "A", "B", "B"], "r3": ["A", "B", "B", "B"]}


def test_fleiss_1971_worked_example():
    assert ag.fleiss_kappa(FLEISS_1971) == pytest.approx(0.20993, abs=1e-5)


def test_three_raters_hand_case():
    matrix = [R["r1"], R["r2"], R["r3"]]
    counts, cats, keep = ag.rating_counts(matrix)
    assert cats == ["A", "B"] and keep == [0, 1, 2, 3]
    assert counts.tolist() == [[3, 0], [2, 1], [0, 3], [1, 2]]
    assert ag.fleiss_kappa(counts) == pytest.approx(1 / 3)
    assert ag.krippendorff_alpha(matrix) == pytest.approx(7 / 18)
    rows = {(r["a"], r["b"]): r for r in ag.pairwise_table(matrix, ["r1", "r2", "r3"])}
    assert rows[("r1", "r2")]["cohen_kappa"] == pytest.approx(1 / 2)
    assert rows[("r1", "r3")]["cohen_kappa"] == pytest.approx(1 / 5)
    assert rows[("r2", "r3")]["cohen_kappa"] == pytest.approx(1 / 2)
    assert rows[("r1", "r3")]["raw_agreement"] == pytest.approx(1 / 2) and rows[("r1", "r3")]["n"] == 4
    for (a, b), r in rows.items():
        assert r["cohen_kappa"] == pytest.approx(cohen_kappa_score(R[a], R[b]))


def test_fleiss_uses_units_with_the_usual_number_of_ratings_and_rejects_uneven_rows():
    matrix = [R["r1"] + ["A", None], R["r2"] + [None, None], R["r3"] + ["B", "B"]]  # units 5, 6: < 3 ratings
    k, n_units, m = ag.fleiss_kappa_matrix(matrix)
    assert (k, n_units, m) == (pytest.approx(1 / 3), 4, 3)
    with pytest.raises(ValueError):
        ag.fleiss_kappa([[2, 0], [1, 2]])
    assert math.isnan(ag.fleiss_kappa([[3, 0], [3, 0]]))  # one category used: undefined
    rows = ag.pairwise_table([["A", None], [None, "B"]], ["x", "y"])
    assert rows[0]["n"] == 0 and math.isnan(rows[0]["cohen_kappa"])


def test_audit_with_three_raters_per_turn_reports_every_pair(sqlite_url):  # noqa: F811
    turns = [dict(turn_id=f"t{i}", dialogue_id=f"d{i}", stratum="all", inclusion_prob=1.0, payload={})
             for i in range(4)]
    db.create_audit("three", turns, [db.StratumInfo("all", 4, 4, 1.0)], labels_per_turn=3, db=sqlite_url)
    value = {"A": ("acceptable", None), "B": ("failure", "UV")}
    for who, labs in R.items():
        for i, v in enumerate(labs):
            asg.submit_label("three", who, f"t{i}", *value[v], db=sqlite_url)
    labels = cs.load_audit_labels("three", db=sqlite_url)
    pairs = {(r["a"], r["b"]): r["cohen_kappa"] for r in cs.pairwise_agreement(labels, "label")}
    assert pairs == {("r1", "r2"): pytest.approx(0.5), ("r1", "r3"): pytest.approx(0.2),
                     ("r2", "r3"): pytest.approx(0.5)}
    multi = cs.multi_rater_agreement(labels, "label")
    assert multi["raters"] == 3 and multi["fleiss_units"] == 4 and multi["fleiss_ratings"] == 3
    assert multi["fleiss_kappa"] == pytest.approx(1 / 3) and multi["krippendorff_alpha"] == pytest.approx(7 / 18)
    cons = cs.build_consensus(labels, "label")  # a turn is agreed only when all three agree
    assert set(cons.labels) == {"t0", "t2"} and {d.turn_id for d in cons.disagreements} == {"t1", "t3"}
    assert all(len(d.annotators) == 3 for d in cons.disagreements)


def test_pairwise_interval_is_the_pair_bootstrap_on_common_units():
    matrix = [R["r1"] + ["A", "B"], R["r2"] + [None, "B"], R["r3"] + ["A", None]]
    clusters = ["d0", "d0", "d1", "d2", "d3", "d3"]
    rows = {(r["a"], r["b"]): r for r in ag.pairwise_table(matrix, ["r1", "r2", "r3"], clusters=clusters,
                                                          n_resamples=300, seed=1)}
    r13 = rows[("r1", "r3")]
    a, b = R["r1"] + ["A"], R["r3"] + ["A"]  # units 0-4: r3 missed unit 5
    est = ag.pair_statistic_ci("cohen_kappa", a, b, clusters[:5], categories=["A", "B"], n_resamples=300, seed=1)
    assert r13["n"] == 5 and r13["cohen_kappa"] == pytest.approx(cohen_kappa_score(a, b))
    assert (r13["kappa_lo"], r13["kappa_hi"]) == pytest.approx((est.lo, est.hi))
    assert r13["kappa_lo"] <= r13["cohen_kappa"] <= r13["kappa_hi"]
