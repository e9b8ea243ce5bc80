"""Home: load a slice (demo, path, upload), run SAGE configurations, see headline metrics.

Opens on the embedded demo slice; the other pages (inspector, blind
annotation, agreement, risk-coverage) work on whatever is loaded here.
"""
from __future__ import annotations

from collections import Counter

import pandas as pd
import streamlit as st

from ui import loading, runs, verdict_summary
from ui.errors import guard
from ui.render import md
from ui.session import current_slice, data_roots, set_slice
from ui.auth import require  # noqa: E402

ME = require("lead")  # the first call: gates a direct URL, the sidebar and a first visit after a restart

st.title("SAGE Studio")
st.caption("State-grounded, abstention-aware evaluation of task-oriented dialogue agents, turn by turn.")


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _load_section() -> None:
    st.subheader("1. Slice")
    source = st.radio("Source", ["Demo slice", "Path on disk", "Upload"], horizontal=True, key="load_source")
    if source == "Demo slice":
        if st.button("Load the demo slice", key="load_demo"):
            set_slice(loading.load_demo())
        return
    kind_label = st.selectbox("Format", list(loading.KINDS), key="load_kind")
    kind = loading.KINDS[kind_label]
    if source == "Path on disk":
        path = st.text_input("Slice file or corpus folder", key="load_path",
                             placeholder="e.g. ../shared/data/sgd/test")
        schema = st.text_input("Schema (schema.json or workflow YAML; optional for corpora that ship one)",
                               key="load_schema_path")
        if st.button("Load", key="load_path_btn"):
            with st.spinner("Loading..."):
                set_slice(loading.load_path(kind, path, schema, roots=data_roots()))
        return
    files = st.file_uploader("Slice / dialogue files", accept_multiple_files=True, key="load_files",
                             type=["jsonl", "json", "csv", "txt"])
    schema_file = st.file_uploader("Schema (schema.json or workflow YAML)", key="load_schema_file",
                                   type=["json", "yaml", "yml"])
    if st.button("Load upload", key="load_upload_btn"):
        with st.spinner("Loading..."):
            payload = [(f.name, f.getvalue()) for f in files or []]
            schema = (schema_file.name, schema_file.getvalue()) if schema_file else None
            set_slice(loading.load_upload(kind, payload, schema))


def _summary(ls) -> None:
    gold = [t for t in ls.turns if t.gold is not None]
    fails = sum(1 for t in gold if t.gold.label == "failure")
    c = st.columns(4)
    c[0].metric("Turns", len(ls.turns))
    c[1].metric("Dialogues", ls.n_dialogues)
    c[2].metric("Workflows", len(ls.registry))
    c[3].metric("Gold failures", f"{fails} / {len(gold)}" if gold else "no gold")
    st.caption(f"Loaded: **{md(ls.name)}** ({ls.kind}), content hash `{ls.content_hash}`")
    for note in ls.notes:
        st.caption(note)


def _run_section(ls) -> None:
    st.subheader("2. Evaluate")
    c1, c2 = st.columns(2)
    cfg_label = c1.selectbox("Configuration", list(runs.CONFIGS), key="run_config",
                             help="SAGE-Core = compiler + S1 + S2 (no paid calls); SAGE-LLM adds S3 (LLM) on "
                                  "abstentions; no_S1 / no_S2 leave one stage out.")
    be_label = c2.selectbox("S2 backend", list(runs.BACKENDS), key="run_backend")
    if runs.CONFIGS[cfg_label] == "sage-llm" and not runs.llm_configured():
        c1.caption("No LLM endpoint configured: SAGE-LLM cannot run (see below when you press Run).")
    b1, b2 = st.columns(2)
    todo, batch = [], False
    if b1.button("Run", type="primary", key="run_one"):
        todo = [runs.CONFIGS[cfg_label]]
    if b2.button("Run all four configurations", key="run_all"):
        todo, batch = list(runs.CONFIGS.values()), True
    backend = runs.BACKENDS[be_label]
    for cfg in todo:
        if runs.cached(ls, cfg, backend):
            continue
        if cfg == "sage-llm" and not runs.llm_configured():
            if batch:  # the user asked for "everything": skipping the one that cannot run is expected
                st.info("**SAGE-LLM skipped**: no LLM endpoint is configured. " + runs.LLM_HOWTO,
                        icon=":material/info:")
            else:  # an explicit choice that cannot be honoured
                st.error("**SAGE-LLM cannot run**: no LLM endpoint is configured. " + runs.LLM_HOWTO)
            continue
        bar = st.progress(0.0, text=f"{runs.CONFIG_LABELS[cfg]}: starting")

        def tick(i: int, n: int, bar=bar, cfg=cfg) -> None:
            bar.progress(min(1.0, i / max(n, 1)), text=f"{runs.CONFIG_LABELS[cfg]}: {i}/{n} turns")

        with guard():  # one configuration failing (e.g. an unreachable endpoint) does not stop the others
            try:
                res = runs.run(ls, cfg, backend, progress=tick)
            except BaseException:
                bar.empty()
                raise
            bar.progress(1.0, text=f"{res.label}: done in {res.seconds:.1f} s")


def _no_gold_summary(run) -> None:
    """Without gold: what the run flags, which classes, how much is undecided and why."""
    s = verdict_summary.summary(run.verdicts)
    st.markdown(f"**{run.key}** on a slice without gold labels (no precision or recall: what the run says)")
    c = st.columns(3)
    c[0].metric("Flag rate", f"{s['flag_rate']:.1%}", help=f"{s['labels'].get('failure', 0)} of {s['n']} turns "
                "judged failure")
    c[1].metric("Undecided", f"{s['undecided_share']:.1%}",
                help="No criterion failed and at least one abstained: scored as acceptable at full coverage.")
    c[2].metric("Acceptable", f"{s['acceptable_share']:.1%}")
    c1, c2 = st.columns(2)
    c1.markdown("**Failure classes** (flagged turns firing each class)")
    if s["classes"]:
        c1.dataframe(pd.DataFrame([{"class": k, "turns": v, "share of flagged": v / max(1, s['labels'].get('failure', 0))}
                                   for k, v in sorted(s["classes"].items())]), hide_index=True, key="home_classes",
                     column_config={"share of flagged": st.column_config.NumberColumn(format="percent")})
    else:
        c1.caption("No turn flagged.")
    c2.markdown("**Why turns are undecided** (undecided turns with an abstained criterion for the reason)")
    if s["reasons"]:
        c2.dataframe(pd.DataFrame([{"reason": k, "turns": v} for k, v in s["reasons"].most_common()]),
                     hide_index=True, key="home_reasons")
    else:
        c2.caption("No undecided turn.")


def _results_section(ls) -> None:
    done = runs.runs_for(ls)
    if not done:
        st.info("No run yet on this slice: choose a configuration and press **Run**.")
        return
    st.subheader("3. Results")
    last = done[-1]
    st.info("S2 backend that actually ran: " + "; ".join(f"{r.label}: **{r.backend_shown}**" for r in done))
    rows = []
    for r in done:
        row = {"configuration": r.label}
        m = r.metrics
        if m:
            row.update({"F1": m.get("f1"), "precision": m.get("precision"), "recall": m.get("recall"),
                        "specificity (clean)": m.get("clean_specificity"), "undecided rate": m.get("undecided_rate")})
        row.update({"S2 backend that ran": r.backend_ran, "S2 requested": r.backend_requested,
                    "turns": len(r.verdicts), "wall time (s)": round(r.seconds, 2),
                    "ms / turn": round(1000 * r.seconds / max(len(r.verdicts), 1), 2),
                    "paid calls": sum(v.paid_calls for v in r.verdicts),
                    "cost (USD)": round(sum(v.cost_usd for v in r.verdicts), 4)})
        rows.append(row)
    chosen = runs.cached(ls, runs.CONFIGS[st.session_state.get("run_config", "SAGE-Core")],
                         runs.BACKENDS[st.session_state.get("run_backend", next(iter(runs.BACKENDS)))])
    focus = chosen or last
    if focus.metrics:
        m = focus.metrics
        st.markdown(f"**Headline metrics: {focus.key}** (against the slice's gold labels; failure = positive "
                    "class, undecided scored as acceptable)")
        c = st.columns(5)
        c[0].metric("F1", _fmt(m["f1"]))
        c[1].metric("Precision", _fmt(m["precision"]))
        c[2].metric("Recall", _fmt(m["recall"]))
        c[3].metric("Specificity on clean turns", _fmt(m.get("clean_specificity")),
                    help="Share of gold-clean turns judged acceptable (undecided counts as acceptable).")
        c[4].metric("Undecided turns", f"{m.get('undecided_rate', 0.0):.1%}",
                    help="No criterion fired and at least one abstained; scored as acceptable here.")
        c1, c2 = st.columns(2)
        per_class = m.get("per_class_recall") or {}
        if per_class:
            n_cls = Counter(t.gold.failure_class for t in ls.turns
                            if t.gold is not None and t.gold.label == "failure" and t.gold.failure_class)
            c1.markdown("**Recall per gold class** (share of the class's gold failures flagged as failure)")
            c1.dataframe(pd.DataFrame([{"gold class": k, "gold failures": n_cls.get(k, 0), "recall": v}
                                       for k, v in per_class.items()]), hide_index=True,
                         column_config={"recall": st.column_config.NumberColumn(format="%.3f")})
        if "stage_shares" in m:
            c2.markdown(f"**Share of criteria decided per stage** ({m.get('n_criteria', 0)} criteria)")
            c2.dataframe(pd.DataFrame([{"stage": k, "share of criteria": 100 * v}
                                       for k, v in m["stage_shares"].items()]), hide_index=True,
                         column_config={"share of criteria": st.column_config.NumberColumn(format="%.1f %%")})
    else:
        _no_gold_summary(focus)
    st.markdown("**All runs on this slice**")
    st.dataframe(pd.DataFrame(rows), hide_index=True,
                 column_config={k: st.column_config.NumberColumn(format="%.3f")
                                for k in ("precision", "recall", "F1", "specificity (clean)")}
                 | {"undecided rate": st.column_config.NumberColumn(format="percent"),
                    "cost (USD)": st.column_config.NumberColumn(format="$%.4f")})
    st.caption("Wall time includes loading the S2 model on the first run of a backend in this server process.")
    st.page_link("pages/1_Inspector.py", label="Inspect turns", icon=":material/search:")


with guard():
    _load_section()
ls = current_slice()
_summary(ls)
with guard():
    _run_section(ls)
_results_section(ls)
