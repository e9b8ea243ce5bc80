"""Dialogues: where does each annotator and each evaluator say a dialogue first goes wrong?

Per dialogue of an audit, the first failing audited turn according to every
annotator, every SAGE configuration run in this session and every uploaded
baseline, whether they agree, and pairwise agreement on the first failing
turn. Each turn links to the Inspector. Computation: ``audit.dialogue_view``.
"""
from __future__ import annotations

import streamlit as st

from audit import consensus as cons
from audit.dialogue_view import audit_dialogue_view
from ui import dialogues, runs
from ui.audits import audits_or_stop, session_baselines, upload_baselines
from ui.errors import guard
from ui.render import md
from ui.session import current_slice, inspector_link, slice_caption
from ui.auth import require  # noqa: E402

ME = require("lead")  # the first call: gates a direct URL, the sidebar and a first visit after a restart

st.title("Dialogues")
st.caption("First failing turn per dialogue, per annotator and per evaluator. The audit samples turns, so "
           "\"first\" is the first failure among the dialogue's **audited** turns, in dialogue order; a source "
           "counts for a dialogue only if it labelled all of them (otherwise: *partial* / *not fully labelled*). "
           "Shaded cells differ from the annotators' shared answer.")
slice_caption()

with guard():
    names = [a.name for a in audits_or_stop("No audit yet: create one on the Blind annotation page.")]
    audit = st.selectbox("Audit", names, index=len(names) - 1, key="dlg_audit")
    labels = cons.load_audit_labels(audit)

    ls = current_slice()
    evaluators: dict = {r.key: {v.turn_id: v.label.value for v in r.verdicts} for r in runs.runs_for(ls)}
    sage_runs = set(evaluators)  # their links also open the run in the Inspector
    upload_baselines("Baseline verdicts (JSONL or CSV with turn_id,label); those uploaded on the "
                     "Agreement page are included", key="dlg_baselines")
    evaluators.update(session_baselines())
    audited = {t.turn_id for t in labels.turns}
    unrelated = [n for n, e in evaluators.items() if not audited & set(getattr(e, "labels", e))]
    for n in unrelated:
        evaluators.pop(n)
    if unrelated:
        st.caption("No verdict on any audited turn (another slice?), left out: " + ", ".join(unrelated))
    if not evaluators:
        st.caption("No evaluator on this audit yet: run SAGE on the home page (on the audited slice) or upload "
                   "baseline verdicts.")

    rows, pairs = audit_dialogue_view(labels, evaluators)
    rows = sorted(rows, key=lambda r: dialogues.natural_key(r.dialogue_id))
    annotators = labels.annotators
    sources = [*annotators, *evaluators]
    if not annotators:
        st.info("Nobody has labelled this audit yet.")
    n_turns = sum(len(r.turn_ids) for r in rows)
    st.caption(f"{len(rows)} dialogues, {n_turns} audited turns · annotators: {md(', '.join(annotators)) or 'none'} · "
               f"evaluators: {md(', '.join(evaluators)) or 'none'}")
    if audited - set(ls.by_id):
        st.caption(f"{len(audited - set(ls.by_id))} audited turns are not in the current slice "
                   f"({md(ls.name)}): their Inspector links will not open them.")

    st.subheader("First failing turn per dialogue")
    only = st.toggle("Only dialogues where the sources disagree", key="dlg_only_diff")
    shown = [r for r in rows if not only or dialogues._same(r, sources) is False]
    st.markdown(dialogues.table_html(shown, sources, annotators,
                                     lambda tid, src: inspector_link(tid, ls, src if src in sage_runs else None)),
                unsafe_allow_html=True)
    plain = dialogues.frame(rows, sources, annotators)
    both = [r for r in rows if dialogues._same(r, annotators) is not None]
    if both:
        st.caption(f"The annotators name the same first failing turn in "
                   f"{sum(dialogues._same(r, annotators) for r in both)} of {len(both)} dialogues they both labelled "
                   "completely.")

    st.subheader("Agreement on the first failing turn")
    pf = dialogues.pairwise_frame(pairs)
    if pf.empty:
        st.caption("Needs at least two sources.")
    else:
        st.dataframe(pf.style.format({"same first failure": "{:.1%}"}, na_rep="n/a"), hide_index=True,
                     key="dlg_pairs")
        st.caption("Same first failure: share of the dialogues both sources labelled completely where they name "
                   "the same first failing turn (both \"no failure\" counts as the same).")
    st.download_button("First failures per dialogue (CSV)", plain.to_csv(index=False),
                       file_name=f"{audit}_dialogues.csv", mime="text/csv", key="dlg_dl")
