"""Agreement page: kappa from labels stored via the audit API (checked against a hand computation),
disagreements dropped from the consensus, SAGE and an uploaded baseline scored on the consensus."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from audit import assignment, sampling
from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from ui.loading import load_demo

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 180


@pytest.fixture()
def labelled_audit(db_url):
    """12 sampled demo turns; A labels like gold, B flips one clean and one failure turn."""
    ls = load_demo()
    sample = sampling.stratified_sample(ls.turns, 3, seed=0)
    assignment.create_audit_from_sample("kappa-audit", sample, db=db_url)
    tids = [s.turn.turn_id for s in sample.turns]
    a = {t: (ls.by_id[t].gold.label, ls.by_id[t].gold.failure_class) for t in tids}
    b = dict(a)
    flip_clean = next(t for t in tids if a[t][0] == "acceptable")
    flip_fail = next(t for t in tids if a[t][0] == "failure")
    b[flip_clean] = ("failure", None)
    b[flip_fail] = ("acceptable", None)
    for who, labels in (("ann-a", a), ("ann-b", b)):
        for t in tids:
            assignment.submit_label("kappa-audit", who, t, labels[t][0], labels[t][1], db=db_url)
    return ls, tids, a, b, {flip_clean, flip_fail}


def _hand_kappa(x: list[str], y: list[str]) -> float:
    n = len(x)
    po = sum(i == j for i, j in zip(x, y)) / n
    cats = sorted(set(x) | set(y))
    pe = sum((x.count(c) / n) * (y.count(c) / n) for c in cats)
    return (po - pe) / (1 - pe)


def _hand_f1(y: list[int], p: list[int]) -> float:
    tp = sum(1 for i, j in zip(y, p) if i and j)
    fp = sum(1 for i, j in zip(y, p) if not i and j)
    fn = sum(1 for i, j in zip(y, p) if i and not j)
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0


def _by_columns(at, col):
    return next(d.value for d in at.dataframe if col in d.value.columns)


def test_kappa_disagreements_and_evaluator_f1(labelled_audit):
    ls, tids, a, b, flipped = labelled_audit
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    at.button(key="run_one").click().run()  # SAGE-Core on the demo slice
    at.switch_page("pages/3_Agreement.py").run()
    assert not at.exception and not at.error

    agr = _by_columns(at, "statistic").set_index("statistic")
    la, lb = [a[t][0] for t in tids], [b[t][0] for t in tids]
    assert agr.loc["Cohen's kappa", "value"] == pytest.approx(_hand_kappa(la, lb), abs=1e-9)
    assert agr.loc["raw agreement", "value"] == pytest.approx((len(tids) - 2) / len(tids), abs=1e-9)
    lo, hi = agr.loc["Cohen's kappa", "95% CI low"], agr.loc["Cohen's kappa", "95% CI high"]
    assert lo <= agr.loc["Cohen's kappa", "value"] <= hi

    dis = _by_columns(at, "rater 1")
    assert set(dis["turn_id"]) == flipped

    # SAGE-Core scored on the consensus set (the 10 turns both annotators agree on)
    consensus = [t for t in tids if t not in flipped]
    ev = Evaluator(ls.registry, CascadeConfig.named("sage-core", s2_backend="offline"))
    pred = {v.turn_id: int(v.predicted_failure) for v in ev.evaluate(ls.turns)}
    y = [int(a[t][0] == "failure") for t in consensus]
    f1 = _by_columns(at, "kappa vs consensus").set_index("evaluator")
    row = f1.loc["SAGE-Core / offline"]
    assert row["n"] == len(consensus)
    assert row["F1"] == pytest.approx(_hand_f1(y, [pred[t] for t in consensus]), abs=1e-9)

    # an uploaded baseline that flags everything: recall 1, precision = failure share
    csv = "turn_id,label\n" + "".join(f"{t},failure\n" for t in tids)
    at.file_uploader(key="agr_baselines").set_value([("always_fail.csv", csv.encode(), "text/csv")])
    at.run()
    assert not at.exception and not at.error
    f1 = _by_columns(at, "kappa vs consensus").set_index("evaluator")
    assert f1.loc["always_fail", "recall"] == pytest.approx(1.0)
    assert f1.loc["always_fail", "precision"] == pytest.approx(sum(y) / len(y), abs=1e-9)
    assert any("Paired bootstrap" in m.value and "always_fail" in m.value for m in at.markdown)
    labels = {d.label for d in at.get("download_button")}
    assert {"Annotation sheet (blind, CSV)", "Per-turn results (CSV)", "Scores (CSV)", "Label history (CSV)"} <= labels


def test_f1_excluding_a_class_uses_the_category_consensus(labelled_audit):
    ls, tids, a, b, flipped = labelled_audit
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    at.button(key="run_one").click().run()
    at.switch_page("pages/3_Agreement.py").run()
    at.radio(key="agr_level").set_value("category").run()
    at.selectbox(key="agr_exclude").set_value("IUV").run()
    assert not at.exception and not at.error
    ev = Evaluator(ls.registry, CascadeConfig.named("sage-core", s2_backend="offline"))
    pred = {v.turn_id: int(v.predicted_failure) for v in ev.evaluate(ls.turns)}
    cat = {t: (a[t][1] or a[t][0]) for t in tids}
    keep = [t for t in tids if t not in flipped and cat[t] != "IUV"]
    y = [int(a[t][0] == "failure") for t in keep]
    row = _by_columns(at, "kappa vs consensus").set_index("evaluator").loc["SAGE-Core / offline"]
    assert row["F1 excl. IUV"] == pytest.approx(_hand_f1(y, [pred[t] for t in keep]), abs=1e-9)


def test_malformed_baseline_file_is_an_error(labelled_audit):
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.switch_page("pages/3_Agreement.py").run()
    at.file_uploader(key="agr_baselines").set_value([("bad.csv", b"turn_id,label\nx,maybe\n", "text/csv")])
    at.run()
    assert not at.exception
    assert any("bad.csv" in e.value and "line 2" in e.value and "label" in e.value for e in at.error)
