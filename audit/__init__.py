"""Blind two-annotator audits of evaluator verdicts: sampling, queue, statistics, exports.

Typical app flow (every function takes ``db=``: Engine, URL or None = settings)::

    from audit import sampling, assignment, consensus, evaluators, agreement, dialogue_view, exports

    # 1. design and store an audit (seeded, strata + inclusion probabilities kept; one turn per dialogue)
    sample = sampling.paper_protocol(turns, n=200, seed=0)        # or stratified_sample(turns, quotas, key=...)
    blinding.exposures([x.turn for x in sample.turns])            # [] : no turn shows another's original
    info = assignment.create_audit_from_sample("sgd-audit-1", sample, db=url, workflows=registry)
    guidelines.guidelines_text(md, specs) / guidelines.context_for(specs, payload)  # what annotators read

    # 2. annotate (annotator = sign-in name; created on first use: db.sign_in(name))
    item = assignment.next_turn_for(info.id, "alice", db=url)     # QueueItem or None; own draft first
    assignment.save_draft(info.id, "alice", item.turn_id, "failure", "IUV", "note", db=url)  # autosave
    assignment.submit_label(info.id, "alice", item.turn_id, "failure", "IUV", db=url)      # QuotaFullError
    assignment.submit_label(info.id, "bob", tid, "failure", ["UV", "IUV"], db=url)  # stored "IUV,UV"; or "unsure"
    assignment.skip_turn(info.id, "alice", item.turn_id, db=url)  # seat released, turn returns later
    assignment.progress(info.id, "alice", db=url)                 # Progress counts
    assignment.annotator_labels(info.id, "alice") / open_turn(info.id, "alice", turn_id)  # review, then submit again to change
    db.label_history(info.id, turn_id=..., db=url)                # every change, old -> new

    # 3. analyse (all at once: analysis.analyse_audit(info.id, {"sage-core": ..., "judge": ...}, sage="sage-core"))
    labels = consensus.load_audit_labels(info.id, db=url)
    cons = consensus.build_consensus(labels, level="category")    # .labels, .disagreements
    consensus.audit_agreement(labels)      # {"unweighted"|"weighted": {stat: Estimate(value, lo, hi, n)}}
    consensus.human_vs_gold(labels, cons)  # per-class rows
    evaluators.compare_evaluators(cons, {"sage-core": {...}, "llm-judge": {...}}, exclude_class="UV",
                                  audit_labels=labels)            # EvaluatorReport per evaluator
    evaluators.sage_vs_best_baseline(cons, sage_labels, baselines) # sage_core.science.statistics.PairedResult
    dialogue_view.audit_dialogue_view(labels, evaluators_dict)    # first failing turn per source
    db.adjudicate(info.id, turn_id, "failure", "UV", "reason", lead="lee")  # own table; consensus uses it
    labels, cons = consensus.load_consensus(info.id)              # resolutions included
    consensus.pairwise_agreement(labels) / multi_rater_agreement(labels)  # Cohen per pair; Fleiss, alpha
    consensus.per_class_agreement(labels)  # yes/no per class: Cohen's kappa, alpha; unsure = missing everywhere
    exports.annotation_sheet_csv(info.id) / results_csv(info.id, evaluators=...) / history_csv(info.id)
    exports.*_jsonl(...) / audit_bundle_jsonl(info.id) -> import_audit_bundle(text, db=other_url)

Nothing here imports streamlit; there is no delete API (labels are append-only).
"""
from . import (  # noqa: F401
                         agreement,
                         analysis,
                         assignment,
                         blinding,
                         consensus,
                         dialogue_view,
                         evaluators,
                         exports,
                         guidelines,
                         sampling,
                         weights,
)
from .analysis import AuditAnalysis, analyse_audit  # noqa: F401,E402
from .assignment import (  # noqa: F401
                         Progress,
                         QueueItem,
                         create_audit_from_sample,
                         get_draft,
                         next_turn_for,
                         open_turn,
                         progress,
                         save_draft,
                         skip_turn,
                         submit_label,
)
