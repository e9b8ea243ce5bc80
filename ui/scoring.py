"""Score evaluators (SAGE runs, imported baselines) against the human consensus set.

The consensus and its weights come from ``audit.consensus``; metrics from
``audit.weights.weighted_prf`` (IPW and plain) and the paired bootstrap from
``sage_core.statistics``. This module only lines the predictions up with the
consensus turns and applies the "exclude one class" view.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pandas as pd

from audit.weights import weighted_prf
from sage_core.statistics import paired_bootstrap
from sage_core.verdict_io import EvaluatorVerdicts


@dataclass
class Target:
    """The consensus turns an evaluator is scored on."""

    turn_ids: list[str]
    y_true: list[int]
    weights: list[float]
    clusters: list[str]


def target(consensus, classes: dict[str, Optional[str]], exclude: Optional[str] = None) -> Target:
    """Consensus turns (audit order), optionally without those whose class is ``exclude``.

    ``classes``: turn_id -> class used for exclusion (consensus category, else gold class).
    """
    tids = [t for t in consensus.labels if not (exclude and classes.get(t) == exclude)]
    return Target(tids, [consensus.binary[t] for t in tids], [consensus.weights.get(t, 1.0) for t in tids],
                  [consensus.clusters.get(t, t) for t in tids])


def exclusion_classes(consensus, audit_turns) -> dict[str, Optional[str]]:
    """The class of each consensus turn: the agreed failure class if the humans gave one, else gold's."""
    gold = {t.turn_id: t.gold_class for t in audit_turns}
    out = {}
    for tid, v in consensus.labels.items():
        out[tid] = v if v in ("IUV", "WNF", "PC", "UV") else gold.get(tid)
    return out


def coverage_gap(ev: EvaluatorVerdicts, tids: list[str]) -> list[str]:
    return [t for t in tids if t not in ev.labels]


def f1_rows(evaluators: dict[str, EvaluatorVerdicts], tgt: Target, view: str) -> list[dict]:
    """One row per evaluator with plain and IPW-weighted precision / recall / F1."""
    rows = []
    for name, ev in evaluators.items():
        missing = coverage_gap(ev, tgt.turn_ids)
        if missing:
            rows.append({"evaluator": name, "view": view, "n": len(tgt.turn_ids),
                         "note": f"no verdict for {len(missing)} consensus turns (e.g. {missing[0]})"})
            continue
        pred = ev.predicted(tgt.turn_ids)
        un = weighted_prf(tgt.y_true, pred)
        w = weighted_prf(tgt.y_true, pred, tgt.weights)
        rows.append({"evaluator": name, "view": view, "n": len(tgt.turn_ids),
                     "precision": un["precision"], "recall": un["recall"], "F1": un["f1"],
                     "F1 (IPW)": w["f1"], "tp": int(un["tp"]), "fp": int(un["fp"]), "fn": int(un["fn"]),
                     "note": ""})
    return rows


def sage_vs_baselines(sage: EvaluatorVerdicts, baselines: dict[str, EvaluatorVerdicts], tgt: Target,
                      n_resamples: int = 10_000, seed: int = 0):
    """Paired dialogue bootstrap of F1(SAGE) - F1(best baseline, re-selected per resample)."""
    usable = {k: v for k, v in baselines.items() if not coverage_gap(v, tgt.turn_ids)}
    if not usable or coverage_gap(sage, tgt.turn_ids) or not tgt.turn_ids:
        return None
    return paired_bootstrap(tgt.y_true, sage.predicted(tgt.turn_ids),
                            {k: v.predicted(tgt.turn_ids) for k, v in usable.items()},
                            n_resamples=n_resamples, seed=seed, clusters=tgt.clusters)


def annotation_sheet(labels, consensus) -> pd.DataFrame:
    """Every sampled turn with each annotator's current label and note, the consensus and gold."""
    rows = []
    for t in labels.turns:
        row = {"turn_id": t.turn_id, "dialogue_id": t.dialogue_id, "stratum": t.stratum,
               "inclusion_prob": t.inclusion_prob}
        for name in labels.annotators:
            r = labels.by_annotator[name].get(t.turn_id)
            row[f"{name}: label"] = r.label if r else ""
            row[f"{name}: class"] = (r.failure_class or "") if r else ""
            row[f"{name}: note"] = r.note if r else ""
        row["consensus"] = consensus.labels.get(t.turn_id, "")
        row["gold label"] = t.gold_label or ""
        row["gold class"] = t.gold_class or ""
        rows.append(row)
    return pd.DataFrame(rows)
