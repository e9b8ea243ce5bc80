"""Agreement: how far the two annotators agree, and how evaluators score on their consensus.

Coordinator's page (it shows gold and verdicts): agreement coefficients with
dialogue-level bootstrap CIs, Cohen's kappa per annotator pair (never one kappa
pooled over pairs) and, with more than two annotators, Fleiss' kappa and
Krippendorff's alpha, the disagreements dropped from the consensus
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
from db import adjudications, get_audit
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


def _agreement_table(rep: dict, drop: tuple = ()) -> pd.DataFrame:
    rows = []
    for key, label in STAT_NAMES.items():
        if key in drop:
            continue
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


def _design_caption(audit: str) -> None:
    """How blind the audit is by construction (recorded when it was created)."""
    d = get_audit(audit).design
    rule = (d.get("dialogue_rule") or {}).get("max_per_dialogue", "no limit")
    parts = [f"turns per dialogue: at most {rule}" if rule != "no limit" and rule is not None
             else "turns per dialogue: no limit"]
    if "exposures" in d:
        parts.append(f"{d['exposures']} turns exposing another's injection at creation")
    if d.get("injection_modes"):
        parts.append("injection: " + ", ".join(f"{k} {v}" for k, v in sorted(d["injection_modes"].items())))
    if d.get("templated_replies"):
        parts.append(f"**{d['templated_replies']} templated replies** (recognisable: see the README)")
    st.caption("Blinding by design · " + " · ".join(parts))


with guard():
    names = [a.name for a in audits_or_stop("No audit yet: create one on the Blind annotation page.")]
    c1, c2, c3 = st.columns([2, 1, 1])
    audit = c1.selectbox("Audit", names, index=len(names) - 1, key="agr_audit")
    level = c2.radio("Compare", ["label", "category"], horizontal=True, key="agr_level",
                     format_func=lambda x: {"label": "binary label", "category": "label + class"}[x])
    n_boot = int(c3.number_input("Bootstrap resamples", 200, 20000, 2000, step=200, key="agr_boot"))

    _design_caption(audit)
    labels = cons.load_audit_labels(audit)
    pairs = labels.pairs(level)
    unsure = labels.unsure_count()
    st.caption(f"{len(labels.turns)} sampled turns · annotators: {md(', '.join(labels.annotators)) or 'none yet'} · "
               f"{len(pairs['turn_ids'])} turns with two labels · {unsure['labels']} unsure labels"
               + (f" ({pairs['n_unsure']} doubly-labelled turns left out of the coefficients)"
                  if pairs["n_unsure"] else ""))
    if not pairs["turn_ids"]:
        st.info("No turn has two labels yet." if not pairs["n_unsure"] else
                "No turn has two labels other than unsure yet.")
        st.stop()

    st.subheader("Inter-annotator agreement")
    rep = cons.audit_agreement(labels, level=level, n_resamples=n_boot, seed=0)
    pair_rows = cons.pairwise_agreement(labels, level, n_resamples=n_boot)
    many = len(labels.annotators) > 2
    # seats (first vs second label of a turn) pool every annotator pair once there are more than two
    # annotators: no Cohen's kappa on them then, only per pair
    agr = _agreement_table(rep, drop=("cohen_kappa",) if many else ())
    m = st.columns(3)
    m[0].metric("Raw agreement", f"{rep['unweighted']['raw_agreement'].value:.3f}")
    if many:
        multi = cons.multi_rater_agreement(labels, level)
        m[1].metric("Fleiss' kappa", f"{multi['fleiss_kappa']:.3f}",
                    help=f"{multi['fleiss_units']} turns with {multi['fleiss_ratings']} labels each")
        m[2].metric("Krippendorff's alpha", f"{multi['krippendorff_alpha']:.3f}",
                    help=f"all {len(labels.annotators)} annotators, {multi['alpha_units']} turns with >= 2 labels")
        st.info(f"{len(labels.annotators)} annotators: Cohen's kappa is reported per pair below, never pooled; "
                f"Fleiss' kappa uses the {multi['fleiss_units']} turns with {multi['fleiss_ratings']} labels "
                "each, Krippendorff's alpha every labelled turn.", icon=":material/groups:")
    else:
        kappa = pair_rows[0]["cohen_kappa"] if pair_rows else rep["unweighted"]["cohen_kappa"].value
        m[1].metric("Cohen's kappa", f"{kappa:.3f}")
        m[2].metric("Krippendorff's alpha", f"{rep['unweighted']['krippendorff_alpha'].value:.3f}")
    st.dataframe(agr, hide_index=True, key="agr_table",
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in agr.columns if c not in ("statistic", "n")})
    st.caption("CIs: percentile bootstrap over dialogues. IPW: weighted by 1 / inclusion probability of the "
               "stratified sample." + (" Two-rater coefficients compare the first and second label of each "
                                       "turn (seats), whoever gave them." if many else ""))
    if unsure["labels"]:
        st.caption("Unsure counts as a missing label in every coefficient: they use the turns both raters "
                   "labelled acceptable or failure. A turn with an unsure label goes to adjudication.")
    st.markdown("**Per failure class** (binary for each class: does the label carry it? Several classes per "
                "turn are allowed; the label + class comparison above needs the same set)")
    pc = pd.DataFrame(cons.per_class_agreement(labels))
    pc = pc.rename(columns={"class": "class", "n": "turns", "a_yes": "rater 1 yes", "b_yes": "rater 2 yes",
                            "both_yes": "both yes", "agreement": "raw agreement", "cohen_kappa": "Cohen's kappa",
                            "krippendorff_alpha": "Krippendorff's alpha"})
    if many:  # seats pool annotator pairs: no Cohen's kappa on them
        pc = pc.drop(columns=["Cohen's kappa"])
    st.dataframe(pc, hide_index=True, key="agr_per_class",
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in ("raw agreement", "Cohen's kappa", "Krippendorff's alpha") if c in pc})
    st.markdown("**Per annotator pair** (turns both annotators labelled)")
    st.dataframe(pd.DataFrame([{"annotator A": r["a"], "annotator B": r["b"], "turns": r["n"],
                                "raw agreement": r["raw_agreement"], "Cohen's kappa": r["cohen_kappa"],
                                "95% CI low": r["kappa_lo"], "95% CI high": r["kappa_hi"]}
                               for r in pair_rows]), hide_index=True, key="agr_pairs",
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in ("raw agreement", "Cohen's kappa", "95% CI low", "95% CI high")})

    consensus = cons.build_consensus(labels, level, adjudications(audit))  # the lead's resolutions included
    st.subheader(f"Disagreements ({len(consensus.disagreements)}; {len(consensus.adjudicated)} resolved by the "
                 "lead, the rest dropped from the consensus set)")
    if consensus.disagreements:
        st.dataframe(pd.DataFrame([{"turn_id": d.turn_id, "dialogue": d.dialogue_id,
                                    "rater 1": f"{d.annotators[0]}: {d.values[0]}",
                                    "rater 2": f"{d.annotators[1]}: {d.values[1]}",
                                    **({"more raters": "; ".join(f"{a}: {v}" for a, v in
                                                                 zip(d.annotators[2:], d.values[2:]))}
                                       if many else {}),
                                    "resolved": consensus.adjudicated.get(d.turn_id, ""),
                                    "notes": " | ".join(n for n in d.notes if n)}
                                   for d in consensus.disagreements]), hide_index=True, key="agr_disagree")
        st.page_link("pages/6_Adjudication.py", label="Resolve disagreements", icon=":material/gavel:")
    st.caption(f"Consensus set: {len(consensus.labels)} of {consensus.n_pairs} doubly-labelled turns"
               + (f" ({len(consensus.adjudicated)} by the lead's resolution)." if consensus.adjudicated else "."))

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
    d[2].download_button("Scores (CSV)", exports.dataframe_csv(scores), file_name=f"{audit}_scores.csv",
                         mime="text/csv", key="agr_dl_scores")
    d[3].download_button("Label history (CSV)", exports.history_csv(audit), file_name=f"{audit}_history.csv",
                         mime="text/csv", key="agr_dl_history")
    d = st.columns(4)
    d[0].download_button("Annotation sheet (blind, JSONL)", exports.annotation_sheet_jsonl(audit),
                         file_name=f"{audit}_annotation_sheet.jsonl", mime="application/jsonl", key="agr_dl_sheet_j")
    d[1].download_button("Per-turn results (JSONL)", exports.results_jsonl(audit, evaluators=evaluators, level=level),
                         file_name=f"{audit}_results.jsonl", mime="application/jsonl", key="agr_dl_results_j")
    d[2].download_button("Label history (JSONL)", exports.history_jsonl(audit), file_name=f"{audit}_history.jsonl",
                         mime="application/jsonl", key="agr_dl_history_j")
    d[3].download_button("Audit bundle (JSONL)", exports.audit_bundle_jsonl(audit),
                         file_name=f"{audit}_bundle.jsonl", mime="application/jsonl", key="agr_dl_bundle",
                         help="Everything (turns with gold, labels and their history, resolutions, guidelines): "
                              "import it on another server (Adjudication page) to continue the audit there.")
