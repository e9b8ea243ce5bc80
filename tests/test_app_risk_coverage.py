"""Risk-coverage page: chart renders for several configurations, F1@coverage and declined turns are right."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from sage_core.science.selective import f1_at_coverage, kept_count
from ui import coverage
from ui.loading import load_demo

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 180


def _arrays(ls, verdicts):
    by = {v.turn_id: v for v in verdicts}
    yt = np.array([t.gold.label == "failure" for t in ls.turns], int)
    yp = np.array([by[t.turn_id].predicted_failure for t in ls.turns], int)
    conf = np.array([by[t.turn_id].confidence for t in ls.turns], float)
    return yt, yp, conf


@pytest.fixture(scope="module")
def page():
    import os

    from sage_core.data.settings import get_settings

    saved = os.environ.pop("SAGE_LLM_API_KEY", None)  # SAGE-LLM must be refused, not call an endpoint
    get_settings.cache_clear()
    try:
        yield _page()
    finally:
        if saved is not None:
            os.environ["SAGE_LLM_API_KEY"] = saved
        get_settings.cache_clear()


def _page():
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    at.button(key="run_all").click().run()
    assert not at.exception
    # SAGE-LLM needs an LLM endpoint; in a batch without one it is skipped with a notice (never faked)
    assert not at.error
    assert any("SAGE-LLM skipped" in i.value and "SAGE_LLM_API_KEY" in i.value for i in at.info)
    at.switch_page("pages/4_Risk_coverage.py").run()
    assert not at.exception
    return at


def test_chart_has_every_configuration(page):
    charts = page.get("vega_lite_chart")
    assert len(charts) == 1
    spec = json.loads(charts[0].proto.spec)
    assert '"pick"' in json.dumps(spec.get("params", [])) + json.dumps(spec.get("layer", []))
    data = json.dumps(spec)
    summary = page.dataframe[0].value
    runs_listed = set(page.multiselect(key="rc_runs").options)
    assert {"SAGE-Core / offline", "no_S1 / offline", "no_S2 / offline"} <= runs_listed
    assert set(summary["configuration"]) == runs_listed
    assert "coverage" in data and "configuration" in data
    # a fixed order, SAGE-Core first, whatever order the runs were made or read in; the legend follows it
    options = page.multiselect(key="rc_runs").options
    assert options[0] == "SAGE-Core / offline" and options.index("no_S1 / offline") < options.index("no_S2 / offline")
    assert page.selectbox(key="rc_cfg").value == "SAGE-Core / offline"
    assert '"sort": ' + json.dumps(list(page.multiselect(key="rc_runs").value)) in data


def test_f1_at_coverage_matches_the_library(page):
    ls = load_demo()
    summary = page.dataframe[0].value.set_index("configuration")
    for cfg, label in (("sage-core", "SAGE-Core / offline"), ("no_s2", "no_S2 / offline")):
        ev = Evaluator(ls.registry, CascadeConfig.named(cfg, s2_backend="offline"))
        vs = ev.evaluate(ls.turns)
        yt, yp, conf = _arrays(ls, vs)
        for c in (1.0, 0.9, 0.8):
            assert summary.loc[label, f"F1@{int(c * 100)}%"] == pytest.approx(f1_at_coverage(yt, yp, conf, c))
        undecided = np.mean([v.label.value == "undecided" for v in vs])
        assert summary.loc[label, "undecided rate"] == pytest.approx(undecided)


def test_declined_turns_are_the_least_confident(page):
    ls = load_demo()
    page.selectbox(key="rc_cfg").set_value("no_S2 / offline").run()
    n = len(ls.turns)
    assert len(page.select_slider(key="rc_cov").options) == n
    half = round((n // 2) / n, 6)
    page.select_slider(key="rc_cov").set_value(half).run()  # keep about half
    declined = page.dataframe[-1].value
    ev = Evaluator(ls.registry, CascadeConfig.named("no_s2", s2_backend="offline"))
    vs = {v.turn_id: v for v in ev.evaluate(ls.turns)}
    assert page.select_slider(key="rc_cov").value == half
    k = kept_count(n, half)
    assert len(declined) == n - k
    kept_min = min(vs[t.turn_id].confidence for t in ls.turns if t.turn_id not in set(declined["turn_id"]))
    assert max(declined["confidence"]) <= kept_min + 1e-9
    # undecided turns (confidence 0.5, below every decided turn) are declined first
    undecided = {t for t, v in vs.items() if v.label.value == "undecided"}
    if 0 < len(undecided) <= n - k:
        assert undecided <= set(declined["turn_id"])
    assert all(link.startswith(f"Inspector?turn={t}") and "run=no_S2" in link
               for t, link in zip(declined["turn_id"], declined["link"]))


def test_clicked_point_is_parsed_from_the_selection_state():
    sel = {"selection": {"pick": [{"configuration": "no_S2 / offline", "coverage": 0.4}]}}
    assert coverage.picked_point(sel) == ("no_S2 / offline", 0.4)
    assert coverage.picked_point({"selection": {"pick": []}}) is None
    assert coverage.picked_point({"selection": {"pick": {"configuration": ["x"], "coverage": [0.5]}}}) == ("x", 0.5)
    assert coverage.picked_point(None) is None


def test_undefined_points_are_gaps_not_zeros(page):
    """Where the library's curve is undefined (NaN) the chart data holds null, never 0."""
    ls = load_demo()
    from ui import runs

    done = {r.key: r for r in runs.runs_for(ls)}
    res = done["no_S2 / offline"]
    frame = coverage.curve_frame(ls, [res], ["F1", "precision"])
    ids, yt, yp, conf = coverage.gold_arrays(ls, res)
    from sage_core.science.selective import selective_curve

    rows = selective_curve(yt, yp, conf)
    for metric, attr in (("F1", "f1"), ("precision", "precision")):
        got = frame[frame["metric"] == metric]["value"].to_numpy()
        want = np.array([getattr(r, attr) for r in rows])
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.allclose(got[~np.isnan(got)], want[~np.isnan(want)])
