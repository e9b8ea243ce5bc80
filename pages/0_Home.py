"""Home: load a slice (demo, path, upload), run SAGE configurations, see headline metrics.

Opens on the embedded demo slice; the other pages (inspector, blind
annotation, agreement, risk-coverage) work on whatever is loaded here.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import loading, runs
from ui.errors import guard
from ui.session import current_slice, set_slice

st.title("SAGE Studio")
st.caption("State-grounded, abstention-aware evaluation of task-oriented dialogue agents, turn by turn.")


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
                set_slice(loading.load_path(kind, path, schema))
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
    st.caption(f"Loaded: **{ls.name}** ({ls.kind}), content hash `{ls.content_hash}`")
    for note in ls.notes:
        st.caption(note)


def _run_section(ls) -> None:
    st.subheader("2. Evaluate")
    c1, c2 = st.columns(2)
    cfg_label = c1.selectbox("Configuration", list(runs.CONFIGS), key="run_config")
    be_label = c2.selectbox("S2 backend", list(runs.BACKENDS), key="run_backend")
    b1, b2 = st.columns(2)
    todo = []
    if b1.button("Run", type="primary", key="run_one"):
        todo = [runs.CONFIGS[cfg_label]]
    if b2.button("Run all four configurations", key="run_all"):
        todo = list(runs.CONFIGS.values())
    backend = runs.BACKENDS[be_label]
    for cfg in todo:
        if runs.cached(ls, cfg, backend):
            continue
        bar = st.progress(0.0, text=f"{runs.CONFIG_LABELS[cfg]}: starting")

        def tick(i: int, n: int, bar=bar, cfg=cfg) -> None:
            bar.progress(min(1.0, i / max(n, 1)), text=f"{runs.CONFIG_LABELS[cfg]}: {i}/{n} turns")

        with guard():  # one configuration failing (e.g. no LLM endpoint) does not stop the others
            try:
                res = runs.run(ls, cfg, backend, progress=tick)
            except BaseException:
                bar.empty()
                raise
            bar.progress(1.0, text=f"{res.label}: done in {res.seconds:.1f} s")


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
        row = {"configuration": r.label, "S2 backend requested": r.backend_requested,
               "S2 backend that ran": r.backend_ran, "turns": len(r.verdicts), "seconds": round(r.seconds, 2),
               "paid calls": sum(v.paid_calls for v in r.verdicts),
               "cost (USD)": round(sum(v.cost_usd for v in r.verdicts), 4)}
        m = r.metrics
        if m:
            row.update({"precision": m.get("precision"), "recall": m.get("recall"), "F1": m.get("f1"),
                        "undecided rate": m.get("undecided_rate")})
        rows.append(row)
    chosen = runs.cached(ls, runs.CONFIGS[st.session_state.get("run_config", "SAGE-Core")],
                         runs.BACKENDS[st.session_state.get("run_backend", next(iter(runs.BACKENDS)))])
    focus = chosen or last
    if focus.metrics:
        m = focus.metrics
        st.markdown(f"**Headline metrics: {focus.key}** (against the slice's gold labels)")
        c = st.columns(4)
        c[0].metric("F1", f"{m['f1']:.3f}")
        c[1].metric("Precision", f"{m['precision']:.3f}")
        c[2].metric("Recall", f"{m['recall']:.3f}")
        c[3].metric("Undecided", f"{m.get('undecided_rate', 0.0):.1%}")
        extra = {k: m[k] for k in ("per_class_recall", "stage_shares") if k in m}
        if extra:
            c1, c2 = st.columns(2)
            if "per_class_recall" in extra:
                c1.markdown("**Recall per gold class**")
                c1.dataframe(pd.DataFrame([extra["per_class_recall"]]), hide_index=True)
            if "stage_shares" in extra:
                c2.markdown("**Share of criteria decided per stage**")
                c2.dataframe(pd.DataFrame([extra["stage_shares"]]), hide_index=True)
    else:
        st.caption("This slice has no gold labels: no headline metrics.")
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.page_link("pages/1_Inspector.py", label="Inspect turns", icon=":material/search:")


with guard():
    _load_section()
ls = current_slice()
_summary(ls)
with guard():
    _run_section(ls)
_results_section(ls)
