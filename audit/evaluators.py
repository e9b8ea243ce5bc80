"""Scoring evaluators (SAGE configurations, imported baselines) against the human consensus.

Each evaluator is a dict turn_id -> 'failure' | 'acceptable' | 'undecided'
(undecided scores as acceptable, the full-coverage convention of
``TurnVerdict.predicted_failure``), optionally with classes turn_id -> class.
It is scored only on consensus turns (both humans agree), reporting, weighted
(1/pi) and unweighted: agreement and kappa with the consensus, precision /
recall / F1 of the failure class (overall and without a chosen class), recall
on human-confirmed failures (consensus failure that gold also marks as a
failure, or consensus failure alone where there is no gold), and the turns
where both humans agree and the evaluator differs.

SAGE vs the strongest baseline uses ``sage_core.science.statistics.paired_bootstrap``
(dialogue clusters, the best baseline re-selected in every resample).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

import numpy as np

from . import agreement as ag
from .consensus import AuditLabels, Consensus, is_failure, level_value
from db.repository import join_classes, split_classes
from .weights import weighted_prf

EVALUATOR_LABELS = ("failure", "acceptable", "undecided")


def to_binary(labels: Mapping[str, str], name: str = "evaluator") -> dict[str, int]:
    """turn_id -> 1 (failure) / 0 (acceptable or undecided)."""
    out = {}
    for t, v in labels.items():
        v = getattr(v, "value", v)
        if v not in EVALUATOR_LABELS:
            raise ValueError(f"{name}: label of turn '{t}' must be one of {EVALUATOR_LABELS}, got '{v}'")
        out[t] = int(v == "failure")
    return out


@dataclass(frozen=True)
class EvaluatorDisagreement:
    turn_id: str
    dialogue_id: str
    human: str  # the agreed human value
    evaluator: str  # the evaluator's label
    evaluator_class: Optional[str] = None


@dataclass(frozen=True)
class EvaluatorReport:
    name: str
    n: int  # consensus turns scored
    missing: list[str]  # consensus turns the evaluator has no label for (not scored)
    agreement: dict[str, float]  # {"unweighted", "weighted"}: binary raw agreement
    kappa: dict[str, float]  # {"unweighted", "weighted"}: binary Cohen's kappa
    prf: dict[str, dict]  # {"unweighted", "weighted"}: precision/recall/f1/... (failure = positive)
    f1_ci: tuple[float, float, float]  # unweighted F1, dialogue-bootstrap 95% CI
    confirmed_recall: dict[str, float]  # {"unweighted", "weighted", "n"}
    disagreements: list[EvaluatorDisagreement]
    excluded_class: Optional[str] = None
    prf_excluding: Optional[dict[str, dict]] = None  # same as prf, without the excluded class
    category_agreement: Optional[dict[str, float]] = None  # when classes are given (category level)
    extra: dict = field(default_factory=dict)


def _scored(consensus: Consensus, pred: dict[str, int], keep=lambda t: True):
    tids = [t for t in consensus.labels if t in pred and keep(t)]
    y = np.array([int(is_failure(consensus.labels[t])) for t in tids], dtype=int)
    p = np.array([pred[t] for t in tids], dtype=int)
    w = np.array([consensus.weights.get(t, 1.0) for t in tids])
    return tids, y, p, w


def _both_prf(y, p, w):
    return {"unweighted": weighted_prf(y, p), "weighted": weighted_prf(y, p, w)}


def _gold_failures(labels: Optional[AuditLabels]) -> Optional[dict[str, bool]]:
    if labels is None:
        return None
    g = {t.turn_id: t.gold_label == "failure" for t in labels.turns if t.gold_label is not None}
    return g or None


def _evaluator_category(label: str, cls, human: str) -> str:
    """The evaluator's category; with several fired classes it matches if every human class
    (one, or the human's class set "IUV,UV") is among them, else it is the fired set itself."""
    if label != "failure":
        return "acceptable"
    if isinstance(cls, (list, tuple, set)):
        hum = set(split_classes(human)) if human not in ("acceptable", "failure", None) else set()
        cls = human if hum and hum <= set(cls) else (join_classes(cls) if cls else None)
    return level_value("failure", cls, "category")


def split_verdicts(evaluator) -> tuple[dict, Optional[dict]]:
    """(labels, classes) from a dict turn_id -> label or a ``sage_core.data.verdict_io.EvaluatorVerdicts``."""
    if hasattr(evaluator, "labels") and not isinstance(evaluator, Mapping):
        return dict(evaluator.labels), (dict(evaluator.classes) if getattr(evaluator, "classes", None) else None)
    return dict(evaluator), None


def score_evaluator(name: str, consensus: Consensus, labels: Mapping[str, str],
                    classes: Optional[Mapping[str, object]] = None, exclude_class: Optional[str] = None,
                    audit_labels: Optional[AuditLabels] = None, n_resamples: int = 2000, seed: int = 0
                    ) -> EvaluatorReport:
    """Score one evaluator on the consensus set (see the module docstring)."""
    from sage_core import bootstrap_ci

    pred = to_binary(labels, name)
    tids, y, p, w = _scored(consensus, pred)
    missing = [t for t in consensus.labels if t not in pred]
    if not tids:
        raise ValueError(f"{name}: no labels for any consensus turn")
    lab_y = ["failure" if v else "acceptable" for v in y]
    lab_p = ["failure" if v else "acceptable" for v in p]
    cats = ["acceptable", "failure"]
    agreement = {"unweighted": ag.raw_agreement(lab_y, lab_p),
                 "weighted": ag.raw_agreement(lab_y, lab_p, weights=w)}
    kappa = {"unweighted": ag.cohen_kappa(lab_y, lab_p, categories=cats),
             "weighted": ag.cohen_kappa(lab_y, lab_p, categories=cats, weights=w)}
    clusters = [consensus.clusters.get(t, t) for t in tids]
    f1_ci = bootstrap_ci(y, p, metric="f1", n_resamples=n_resamples, seed=seed, clusters=clusters)

    gold = _gold_failures(audit_labels)
    conf = [i for i, t in enumerate(tids) if y[i] == 1 and (gold is None or gold.get(t, True))]
    ci = np.array(conf, dtype=int)
    confirmed = {"n": len(conf),
                 "unweighted": float(p[ci].mean()) if conf else float("nan"),
                 "weighted": float((p[ci] * w[ci]).sum() / w[ci].sum()) if conf else float("nan")}

    evaluator_raw = {t: getattr(v, "value", v) for t, v in labels.items()}
    dis = [EvaluatorDisagreement(t, consensus.clusters.get(t, t), consensus.labels[t], evaluator_raw[t],
                                 (classes or {}).get(t))
           for i, t in enumerate(tids) if y[i] != p[i]]

    prf_ex = None
    if exclude_class is not None:
        if consensus.level != "category":
            raise ValueError("excluding a class needs a category-level consensus")
        # a turn is left out when its agreed class set is exactly {exclude_class}; a failure that also
        # has another class ("IUV,UV" when excluding UV) stays: it is a failure of a kept class too
        _, ye, pe, we = _scored(consensus, pred, keep=lambda t: consensus.labels[t] != exclude_class)
        prf_ex = _both_prf(ye, pe, we)

    cat_agree = None
    if classes is not None and consensus.level == "category":
        ev_cat = [_evaluator_category(evaluator_raw[t], classes.get(t), consensus.labels[t]) for t in tids]
        hum = [consensus.labels[t] for t in tids]
        cat_agree = {"unweighted": ag.raw_agreement(hum, ev_cat),
                     "weighted": ag.raw_agreement(hum, ev_cat, weights=w)}
    return EvaluatorReport(name, len(tids), missing, agreement, kappa, _both_prf(y, p, w), f1_ci,
                           confirmed, dis, exclude_class, prf_ex, cat_agree)


def compare_evaluators(consensus: Consensus, evaluators: Mapping[str, Mapping[str, str]],
                       classes: Optional[Mapping[str, Mapping[str, Optional[str]]]] = None,
                       exclude_class: Optional[str] = None, audit_labels: Optional[AuditLabels] = None,
                       n_resamples: int = 2000, seed: int = 0) -> dict[str, EvaluatorReport]:
    """``score_evaluator`` for every evaluator, same seed for all.

    ``evaluators``: name -> dict turn_id -> label, or name -> ``EvaluatorVerdicts`` (from
    ``sage_core.data.verdict_io.read_evaluator_verdicts`` / ``from_turn_verdicts``; its classes are used).
    """
    out = {}
    for n, e in evaluators.items():
        lab, cls = split_verdicts(e)
        cls = (classes or {}).get(n, cls)
        out[n] = score_evaluator(n, consensus, lab, cls, exclude_class, audit_labels, n_resamples, seed)
    return out


def sage_vs_best_baseline(consensus: Consensus, sage: Mapping[str, str],
                          baselines: Mapping[str, Mapping[str, str]], n_resamples: int = 10_000,
                          seed: int = 0, metric: str = "f1"):
    """Paired dialogue bootstrap of SAGE minus the best baseline on consensus turns every one labelled.

    Returns ``sage_core.science.statistics.PairedResult`` (unweighted: the paired bootstrap has no weights).
    """
    from sage_core import paired_bootstrap

    preds = {"__sage__": to_binary(split_verdicts(sage)[0], "sage")}
    preds.update({n: to_binary(split_verdicts(b)[0], n) for n, b in baselines.items()})
    tids = [t for t in consensus.labels if all(t in p for p in preds.values())]
    if not tids:
        raise ValueError("no consensus turn is labelled by SAGE and every baseline")
    y = np.array([int(is_failure(consensus.labels[t])) for t in tids])
    return paired_bootstrap(y, np.array([preds["__sage__"][t] for t in tids]),
                            {n: np.array([preds[n][t] for t in tids]) for n in baselines},
                            n_resamples=n_resamples, seed=seed, metric=metric,
                            clusters=np.array([consensus.clusters.get(t, t) for t in tids]))


__all__ = ["EVALUATOR_LABELS", "to_binary", "EvaluatorDisagreement", "EvaluatorReport", "split_verdicts", "score_evaluator",
           "compare_evaluators", "sage_vs_best_baseline"]
