"""One call for the results page: everything the audit says, computed the same way every time.

Bundles ``consensus``, ``agreement``, ``evaluators`` and ``dialogue_view`` so the
app does not re-implement the order of steps (load -> consensus -> scores).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from db.repository import AuditRef
from db.session import DB

from . import consensus as cs
from . import dialogue_view as dv
from . import evaluators as ev


@dataclass
class AuditAnalysis:
    labels: cs.AuditLabels
    consensus: cs.Consensus
    agreement: Optional[dict]  # {"unweighted"|"weighted": {stat: Estimate}}; None before any pair exists
    human_vs_gold: list[dict]
    evaluators: dict[str, ev.EvaluatorReport]
    paired: Optional[Any]  # sage_core.science.statistics.PairedResult of `sage` vs the best other evaluator
    dialogues: list[dv.DialogueRow]
    dialogue_agreement: dict


def analyse_audit(audit: AuditRef, evaluators: Optional[Mapping[str, Any]] = None, *, sage: Optional[str] = None,
                  level: str = "category", exclude_class: Optional[str] = None, n_resamples: int = 2000,
                  seed: int = 0, db: DB = None) -> AuditAnalysis:
    """Analyse an audit. ``evaluators``: name -> labels dict or EvaluatorVerdicts; ``sage``: which
    of them is SAGE (the paired bootstrap compares it with the best of the others)."""
    evaluators = dict(evaluators or {})
    labels, cons = cs.load_consensus(audit, level, db=db)  # the lead's resolutions included
    agreement = (cs.audit_agreement(labels, level, n_resamples=n_resamples, seed=seed)
                 if cons.n_pairs else None)
    reports = (ev.compare_evaluators(cons, evaluators, exclude_class=exclude_class, audit_labels=labels,
                                     n_resamples=n_resamples, seed=seed) if cons.labels else {})
    paired = None
    if sage is not None and cons.labels:
        if sage not in evaluators:
            raise ValueError(f"'{sage}' is not one of the evaluators {sorted(evaluators)}")
        others = {n: e for n, e in evaluators.items() if n != sage}
        if others:
            paired = ev.sage_vs_best_baseline(cons, evaluators[sage], others, n_resamples=n_resamples, seed=seed)
    rows, dagr = dv.audit_dialogue_view(labels, evaluators)
    return AuditAnalysis(labels, cons, agreement, cs.human_vs_gold(labels, cons, level), reports, paired,
                         rows, dagr)


__all__ = ["AuditAnalysis", "analyse_audit"]
