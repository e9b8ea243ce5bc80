"""Risk-coverage: F1 / precision / error rate vs coverage from turn confidence, per configuration.

Click a point to list the turns that coverage declines (the least confident ones).
"""
from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from ui import coverage, runs
from ui.errors import guard
from ui.session import current_slice, inspector_link, slice_caption
from ui.auth import require  # noqa: E402

ME = require("lead")  # the first call: gates a direct URL, the sidebar and a first visit after a restart

st.title("Risk-coverage")
st.caption("Turns are kept from the most to the least confident (undecided turns have confidence 0.5, below every decided turn, and go first). "
           "Only turns with gold labels count. Where a metric is undefined on the kept turns (precision with no "
           "predicted failure, recall with no gold failure, F1 with neither) the line has a gap, not a 0.")
slice_caption()


def _on_pick() -> None:
    hit = coverage.picked_point(st.session_state.get("rc_chart"))
    if hit:
        st.session_state["rc_cfg"], st.session_state["rc_cov_pick"] = hit


def _chart(df: pd.DataFrame, metrics: list[str], configs: list[str]) -> alt.FacetChart:
    """One panel per metric (small multiples), one colour per configuration, the legend in the pickers' order
    (``configs``); click a point to pick a coverage."""
    pick = alt.selection_point(name="pick", fields=["configuration", "coverage"], on="click")
    base = alt.Chart().encode(
        x=alt.X("coverage:Q", title="coverage (share of turns kept)", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%", tickCount=5)),
        y=alt.Y("value:Q", title=None, scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("configuration:N", scale=alt.Scale(scheme="tableau10"), sort=configs,
                        legend=alt.Legend(orient="bottom", title="configuration")),
    )
    lines = base.mark_line(interpolate="step-after", strokeWidth=2, opacity=0.85)
    points = base.mark_point(filled=True, size=16).encode(
        opacity=alt.condition(pick, alt.value(0.9), alt.value(0.15)),
        tooltip=["configuration", "metric", alt.Tooltip("coverage:Q", format=".1%"),
                 alt.Tooltip("value:Q", format=".3f"), "n_kept"],
    ).add_params(pick)
    width = max(220, 960 // max(len(metrics), 1) - 40)
    return alt.layer(lines, points, data=df).properties(height=300, width=width).facet(
        column=alt.Column("metric:N", sort=metrics, title=None, header=alt.Header(labelFontSize=14,
                                                                                 labelFontWeight="bold")))


with guard():
    ls = current_slice()
    done = runs.ensure_runs(ls)
    if not ls.has_gold:
        st.warning("This slice has no gold labels, so there is no risk to plot.")
        st.stop()
    keys = [r.key for r in done]
    c1, c2 = st.columns(2)
    chosen = c1.multiselect("Configurations", keys, default=keys, key="rc_runs")
    metrics = c2.multiselect("Metrics", list(coverage.METRICS), default=["F1", "precision", "error rate"],
                             key="rc_metrics")
    results = [r for r in done if r.key in chosen]
    if not results or not metrics:
        st.info("Choose at least one configuration and one metric.")
        st.stop()
    st.caption("S2 backend that ran: " + "; ".join(f"{r.key}: **{r.backend_shown}**" for r in results))

    df = coverage.curve_frame(ls, results, metrics)
    st.altair_chart(_chart(coverage.downsample(df), metrics, chosen), key="rc_chart", on_select=_on_pick,  # display only
                    selection_mode="pick")
    same = coverage.identical_curves(ls, results)
    if same:
        st.caption("Identical curves (drawn on top of each other): " + "; ".join(" = ".join(g) for g in same))

    st.subheader("F1 at fixed coverage")
    summ = pd.DataFrame([coverage.summary(ls, r) for r in results])
    st.dataframe(summ.style.format({k: "{:.3f}" for k in ("F1@100%", "F1@90%", "F1@80%", "AURC (error)")}
                                   | {"undecided rate": "{:.1%}"}, na_rep="n/a"), hide_index=True, key="rc_summary")
    st.caption("F1@c: F1 on the c most confident share of the turns with gold; n/a = undefined (no gold and no "
               "predicted failure kept). AURC: mean error rate over all coverages, lower is better.")

    st.subheader("Turns declined at a coverage")
    if st.session_state.get("rc_cfg") not in chosen:
        st.session_state["rc_cfg"] = chosen[0]
    cfg = st.selectbox("Configuration", chosen, key="rc_cfg")
    res = results[[r.key for r in results].index(cfg)]
    n = len(coverage.gold_arrays(ls, res)[0])
    levels = [round(k / n, 6) for k in range(1, n + 1)]
    if "rc_cov_pick" in st.session_state:  # a clicked point: snap to the nearest level
        want = st.session_state.pop("rc_cov_pick")
        st.session_state["rc_cov"] = min(levels, key=lambda x: abs(x - want))
    if st.session_state.get("rc_cov") not in levels:
        st.session_state["rc_cov"] = min(levels, key=lambda x: abs(x - 0.8))
    cov = st.select_slider("Coverage", levels, key="rc_cov", format_func=lambda x: f"{round(x * n)}/{n} ({x:.0%})")
    dec = coverage.declined(ls, res, cov, link=lambda tid: inspector_link(tid, ls, res.key))
    st.markdown(f"Keeping **{round(cov * n)} of {n}** turns; **{len(dec)}** declined "
                f"(click a point on the chart to choose a coverage).")
    st.dataframe(dec, hide_index=True, key="rc_declined",
                 column_config={"link": st.column_config.LinkColumn("inspect", display_text="open"),
                                "confidence": st.column_config.NumberColumn(format="%.3f")})
