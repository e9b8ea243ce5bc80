"""Agreement: how far the two annotators agree, and how evaluators score on their consensus.

Coordinator's page (it shows gold and verdicts): agreement coefficients with
dialogue-level bootstrap CIs, the disagreements dropped from the consensus
set, humans vs gold per class, F1 of SAGE runs and imported baselines on the
consensus (overall and excluding one class), the paired bootstrap against the
best baseline, and CSV downloads.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from audit import consensus as cons
from audit import evaluators as evaluators_mod
from audit import exports
from ui import runs
from ui.audits import audits_or_stop, upload_baselines
from ui.errors import guard
from ui.render import md
from ui.session import current_slice, slice_caption
from ui.auth import require  # noqa: E402

ME = require("lead")  # the first call: gates a direct URL, the sidebar and a first visit after a restart

st.title("Agreement")

STAT_NAMES = {"raw_agreement": "raw agreement", "cohen_kappa": "Cohen's kappa", "pabak": "PABAK",
              "gwet_ac1": "Gwet's AC1", "krippendorff_alpha": "Krippendorff's alpha"}


def _agreement_table(rep: dict) -> pd.DataFrame:
    rows = []
    for key, label in STAT_NAMES.items():
        u, w = rep["unweighted"][key], rep["weighted"][key]
        rows.append({"statistic": label, "value": u.value, "95% CI low": u.lo, "95% CI high": u.hi,
                     "n": u.n, "IPW value": w.value, "IPW CI low": w.lo, "IPW CI high": w.hi})
    return pd.DataFrame(rows)


def _report_row(rep) -> dict:
    row = {"evaluator": rep.name, "n": rep.n, "precision": rep.prf["unweighted"]["precision"],
           "recall": rep.prf["unweighted"]["recall"], "F1": rep.prf["unweighted"]["f1"],
           "F1 CI low": rep.f1_ci[1], "F1 CI high": rep.f1_ci[2], "F1 (IPW)": rep.prf["weighted"]["f1"],
           "kappa vs consensus": rep.kappa["unweighted"]}
    if rep.prf_excluding is not None:
        row[f"F1 excl. {rep.excluded_class}"] = rep.prf_excluding["unweighted"]["f1"]
        row[f"F1 excl. {rep.excluded_class} (IPW)"] = rep.prf_excluding["weighted"]["f1"]
    row["missing"] = len(rep.missing)
    return row


with guard():
    names = [a.name for a in audits_or_stop("No audit yet: create one on the Blind annotation page.")]
    c1, c2, c3 = st.columns([2, 1, 1])
    audit = c1.selectbox("Audit", names, index=len(names) - 1, key="agr_audit")
    level = c2.radio("Compare", ["label", "category"], horizontal=True, key="agr_level",
                     format_func=lambda x: {"label": "binary label", "category": "label + class"}[x])
    n_boot = int(c3.number_input("Bootstrap resamples", 200, 20000, 2000, step=200, key="agr_boot"))

    labels = cons.load_audit_labels(audit)
    pairs = labels.pairs(level)
    st.caption(f"{len(labels.turns)} sampled turns · annotators: {md(', '.join(labels.annotators)) or 'none yet'} · "
               f"{len(pairs['turn_ids'])} turns with two labels")
    if not pairs["turn_ids"]:
        st.info("No turn has two labels yet.")
        st.stop()

    st.subheader("Inter-annotator agreement")
    rep = cons.audit_agreement(labels, level=level, n_resamples=n_boot, seed=0)
    agr = _agreement_table(rep)
    kappa = rep["unweighted"]["cohen_kappa"].value
    m = st.columns(3)
    m[0].metric("Raw agreement", f"{rep['unweighted']['raw_agreement'].value:.3f}")
    m[1].metric("Cohen's kappa", f"{kappa:.3f}")
    m[2].metric("Krippendorff's alpha", f"{rep['unweighted']['krippendorff_alpha'].value:.3f}")
    st.dataframe(agr, hide_index=True, key="agr_table",
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in agr.columns if c not in ("statistic", "n")})
    st.caption("CIs: percentile bootstrap over dialogues. IPW: weighted by 1 / inclusion probability of the "
               "stratified sample.")

    consensus = cons.build_consensus(labels, level)
    st.subheader(f"Disagreements ({len(consensus.disagreements)}, dropped from the consensus set)")
    if consensus.disagreements:
        st.dataframe(pd.DataFrame([{"turn_id": d.turn_id, "dialogue": d.dialogue_id,
                                    "rater 1": f"{d.annotators[0]}: {d.values[0]}",
                                    "rater 2": f"{d.annotators[1]}: {d.values[1]}",
                                    "notes": " | ".join(n for n in d.notes if n)}
                                   for d in consensus.disagreements]), hide_index=True, key="agr_disagree")
    st.caption(f"Consensus set: {len(consensus.labels)} of {consensus.n_pairs} doubly-labelled turns.")

    st.subheader("Humans vs gold")
    hvg = pd.DataFrame(cons.human_vs_gold(labels, consensus, level))
    if hvg.empty:
        st.caption("The audit's turns carry no gold labels.")
    else:
        st.dataframe(hvg.pivot_table(index="who", columns="gold", values="agree"), key="agr_hvg",
                     column_config={c: st.column_config.NumberColumn(format="%.3f") for c in hvg["gold"].unique()})
        st.caption("Share of the turns each rater labelled where the label matches the slice's gold, per gold value "
                   "(all = every such turn with gold); consensus = the turns both annotators agree on.")
        kg = cons.human_vs_gold_kappa(labels, level)
        if kg:
            st.caption("Cohen's kappa vs gold: " + ", ".join(f"{k} {v:.3f}" for k, v in kg.items()))

    st.subheader("Evaluators on the consensus set")
    ls = current_slice()
    slice_caption()
    evaluators, classes = {}, {}
    sage_names = []
    for r in runs.runs_for(ls):
        name = r.key  # e.g. "SAGE-Core / offline"
        sage_names.append(name)
        evaluators[name] = {v.turn_id: v.label.value for v in r.verdicts}
        classes[name] = {v.turn_id: (v.fired_classes or [None])[0] for v in r.verdicts}
    if not evaluators:
        st.caption("No SAGE run on the current slice yet (run one on the home page).")
    else:
        st.caption("S2 backend that ran: " + "; ".join(f"{r.key}: **{r.backend_shown}**" for r in runs.runs_for(ls)))
    baselines = upload_baselines("Baseline verdicts (JSONL or CSV with turn_id,label)", key="agr_baselines")
    for name, ev in baselines.items():
        evaluators[name] = dict(ev.labels)
        classes[name] = {t: c[0] for t, c in ev.classes.items() if c}
    exclude = st.selectbox("Also score excluding turns of class", ["(none)", "IUV", "WNF", "PC", "UV"],
                           key="agr_exclude", disabled=level != "category",
                           help="Needs the label + class comparison: the class is the humans' agreed class.")
    exclude = None if exclude == "(none)" or level != "category" else exclude
    if not consensus.labels:
        st.caption("The consensus set is empty: no turn to score evaluators on yet.")
        evaluators = {}
    unrelated = [n for n, lab in evaluators.items() if not any(t in lab for t in consensus.labels)]
    for n in unrelated:
        evaluators.pop(n)
    if unrelated:
        st.caption("No verdict on any consensus turn (another slice?): " + ", ".join(unrelated))
    results = pd.DataFrame()
    if evaluators:
        reports = evaluators_mod.compare_evaluators(consensus, evaluators, classes=classes, exclude_class=exclude,
                                                   audit_labels=labels, n_resamples=n_boot)
        results = pd.DataFrame([_report_row(rep) for rep in reports.values()])
        st.dataframe(results, hide_index=True, key="agr_f1",
                     column_config={c: st.column_config.NumberColumn(format="%.3f")
                                    for c in results.columns if c not in ("evaluator", "n", "missing")})

    sage_names = [k for k in sage_names if k in evaluators]
    baselines = {k: v for k, v in baselines.items() if k in evaluators}
    pr = None
    if sage_names and baselines:
        pick = st.selectbox("SAGE configuration for the paired test", sage_names, key="agr_sage")
        try:
            pr = evaluators_mod.sage_vs_best_baseline(consensus, evaluators[pick],
                                                      {k: evaluators[k] for k in baselines if k in evaluators},
                                                      n_resamples=n_boot)
        except ValueError as exc:  # e.g. no consensus turn labelled by every evaluator
            st.caption(f"Paired bootstrap not possible: {md(exc)}")
            pr = None
    if sage_names and baselines and pr is not None:
        st.markdown(f"**Paired bootstrap** ({pr.n_resamples} dialogue resamples): F1({md(pick)}) - "
                    f"F1(best baseline = {md(pr.best_baseline)}, chosen in {pr.best_share:.0%} of resamples) = "
                    f"**{pr.delta:+.3f}** [{pr.lo:+.3f}, {pr.hi:+.3f}], p = {pr.p:.4f}")
    elif sage_names and not baselines:
        st.caption("Upload baseline verdicts to compare SAGE with the best baseline (paired bootstrap).")

    st.subheader("Downloads")
    d = st.columns(4)
    d[0].download_button("Annotation sheet (blind, CSV)", exports.annotation_sheet_csv(audit),
                         file_name=f"{audit}_annotation_sheet.csv", mime="text/csv", key="agr_dl_sheet")
    d[1].download_button("Per-turn results (CSV)", exports.results_csv(audit, evaluators=evaluators, level=level),
                         file_name=f"{audit}_results.csv", mime="text/csv", key="agr_dl_results")
    scores = pd.concat([agr.assign(section="agreement"), results.assign(section="evaluators")], ignore_index=True)
    d[2].download_button("Scores (CSV)", scores.to_csv(index=False), file_name=f"{audit}_scores.csv",
                         mime="text/csv", key="agr_dl_scores")
    d[3].download_button("Label history (CSV)", exports.history_csv(audit), file_name=f"{audit}_history.csv",
                         mime="text/csv", key="agr_dl_history")
