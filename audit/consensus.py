"""What the humans said: paired labels, the consensus set, agreement with each other and with gold.

The consensus set is the turns where both annotators give the same label;
disagreements are listed (for adjudication and the paper's appendix) and
dropped from every evaluator comparison, so an evaluator is only scored where
the humans themselves are sure.

Disagreements the lead resolved (``db.adjudicate``, stored apart from the raw
labels) join the consensus set with the lead's label when ``build_consensus``
is given the adjudications (``load_consensus`` does it); agreement statistics
always use the raw labels. With more than two raters per turn a turn is agreed
when all its raters agree.

``level`` chooses what "the same label" means: ``"category"`` (acceptable or
the failure's class set, compared as a whole: "IUV,UV" agrees only with
"IUV,UV"; a failure without class is the category 'failure') or ``"label"``
(binary failure / acceptable). Per-class agreement (``per_class_agreement``)
looks at each class separately: does the rater's label carry class c?

``unsure`` (decided, see README "Labels"):

* agreement statistics treat it as a missing label: pair coefficients use the
  turns both raters labelled acceptable/failure, the reliability matrix has an
  empty cell, and ``pairs`` / ``unsure_count`` say how many were left out;
* a turn with an unsure label never enters the consensus by itself: it is a
  disagreement (even when every rater said unsure) and goes to adjudication,
  where the lead resolves it as acceptable or failure (never unsure);
* comparisons with gold skip unsure labels. Rater 1 / rater 2 of a turn are its
first and second submitters (seats are anonymous, so the kappa-type
coefficients compare seats, as usual for rotating annotators); Krippendorff's
alpha uses the full annotators x turns matrix, missing cells included.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from db.models import CLASSES
from db.repository import (
    AuditRef,
    AuditTurnInfo,
    LabelRecord,
    audit_turns,
    category,
    label_history,
    split_classes,
)
from db.session import DB

from . import agreement as ag

LEVELS = ("category", "label")
UNSURE = "unsure"


def level_value(label: Optional[str], failure_class: Optional[str], level: str = "category") -> Optional[str]:
    """The value compared at ``level`` for a (label, class) pair."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}")
    if label is None:
        return None
    return category(label, failure_class) if level == "category" else label


def is_failure(value: Optional[str]) -> bool:
    """Binary view of a category or label value: anything but 'acceptable' (and 'unsure') is a failure."""
    return value is not None and value not in ("acceptable", UNSURE)


def stat_value(value: Optional[str]) -> Optional[str]:
    """The value the agreement statistics see: 'unsure' is missing (None)."""
    return None if value == UNSURE else value


@dataclass(frozen=True)
class AuditLabels:
    """All current human labels of an audit, aligned with its sampled turns."""

    turns: list[AuditTurnInfo]
    by_annotator: dict[str, dict[str, LabelRecord]]  # annotator -> turn_id -> current label
    raters: dict[str, list[str]]  # turn_id -> annotators in order of first submission

    @property
    def annotators(self) -> list[str]:
        return sorted(self.by_annotator)

    def turn(self, turn_id: str) -> AuditTurnInfo:
        return next(t for t in self.turns if t.turn_id == turn_id)

    def value(self, annotator: str, turn_id: str, level: str = "category") -> Optional[str]:
        """The rater's value at ``level`` ('unsure' included; None = not labelled)."""
        r = self.by_annotator.get(annotator, {}).get(turn_id)
        return None if r is None else level_value(r.label, r.failure_class, level)

    def unsure_count(self) -> dict[str, int]:
        """Unsure labels: ``{"labels": current unsure labels, "turns": turns with at least one}``."""
        tids = [tid for by in self.by_annotator.values() for tid, r in by.items() if r.label == UNSURE]
        return {"labels": len(tids), "turns": len(set(tids))}

    def pairs(self, level: str = "category") -> dict[str, list]:
        """Turns with two labels, neither unsure: turn_ids, rater-1 values, rater-2 values, dialogue ids,
        weights; ``n_unsure`` = doubly-labelled turns left out because a rater said unsure."""
        out = {"turn_ids": [], "a": [], "b": [], "clusters": [], "weights": [], "annotators": [], "n_unsure": 0}
        for t in self.turns:
            who = self.raters.get(t.turn_id, [])
            if len(who) < 2:
                continue
            va, vb = self.value(who[0], t.turn_id, level), self.value(who[1], t.turn_id, level)
            if UNSURE in (va, vb):
                out["n_unsure"] += 1
                continue
            out["turn_ids"].append(t.turn_id)
            out["a"].append(va)
            out["b"].append(vb)
            out["clusters"].append(t.dialogue_id)
            out["weights"].append(t.weight)
            out["annotators"].append((who[0], who[1]))
        return out

    def reliability_matrix(self, level: str = "category") -> tuple[list[str], list[list], list[AuditTurnInfo]]:
        """annotators x labelled turns (None = not labelled or unsure), for Krippendorff's alpha."""
        turns = [t for t in self.turns if self.raters.get(t.turn_id)]
        names = self.annotators
        return names, [[stat_value(self.value(n, t.turn_id, level)) for t in turns] for n in names], turns


def load_audit_labels(audit: AuditRef, db: DB = None) -> AuditLabels:
    """Read the audit's turns and every annotator's current label (latest submission)."""
    turns = audit_turns(audit, db=db)
    by: dict[str, dict[str, LabelRecord]] = {}
    raters: dict[str, list[str]] = {}
    for r in label_history(audit, db=db):  # oldest first
        cur = by.setdefault(r.annotator, {})
        if r.turn_id not in cur:
            raters.setdefault(r.turn_id, []).append(r.annotator)
        if r.turn_id not in cur or r.seq > cur[r.turn_id].seq:
            cur[r.turn_id] = r
    return AuditLabels(turns, by, raters)


# --------------------------------------------------------------- consensus
@dataclass(frozen=True)
class Disagreement:
    turn_id: str
    dialogue_id: str
    annotators: tuple[str, ...]  # two, or more when a turn has more seats
    values: tuple[Optional[str], ...]
    notes: tuple[str, ...] = ("", "")


@dataclass(frozen=True)
class Consensus:
    """Turns where both annotators agree (turn_id -> agreed value) and the dropped disagreements."""

    level: str
    labels: dict[str, str]
    disagreements: list[Disagreement]
    n_pairs: int
    weights: dict[str, float] = field(default_factory=dict)  # turn_id -> 1/pi for consensus turns
    clusters: dict[str, str] = field(default_factory=dict)  # turn_id -> dialogue_id
    adjudicated: dict[str, str] = field(default_factory=dict)  # turn_id -> the lead's value (also in labels)
    reasons: dict[str, str] = field(default_factory=dict)  # turn_id -> the lead's reason

    @property
    def unresolved(self) -> list[Disagreement]:
        """Disagreements the lead has not resolved yet (dropped from evaluator comparisons)."""
        return [d for d in self.disagreements if d.turn_id not in self.adjudicated]

    @property
    def binary(self) -> dict[str, int]:
        """turn_id -> 1 if the agreed value is a failure, else 0."""
        return {t: int(is_failure(v)) for t, v in self.labels.items()}

    @property
    def agreement_rate(self) -> float:
        """Share of doubly-labelled turns the raters agree on (adjudicated turns do not count)."""
        return (len(self.labels) - len(self.adjudicated)) / self.n_pairs if self.n_pairs else float("nan")


def build_consensus(labels: AuditLabels, level: str = "category", adjudications: Optional[dict] = None
                    ) -> Consensus:
    """Consensus set and disagreement list from an audit's labels (all raters of a turn must agree).

    ``adjudications``: turn_id -> record with ``label``, ``failure_class`` and ``reason``
    (``db.adjudications``); a resolved disagreement enters the consensus with the lead's value.
    """
    agreed: dict[str, str] = {}
    weights: dict[str, float] = {}
    clusters: dict[str, str] = {}
    dis: list[Disagreement] = []
    adj: dict[str, str] = {}
    reasons: dict[str, str] = {}
    n_pairs = 0
    for t in labels.turns:
        who = labels.raters.get(t.turn_id, [])
        if len(who) < 2:
            continue
        n_pairs += 1
        tid = t.turn_id
        vals = tuple(labels.value(n, tid, level) for n in who)
        if len(set(vals)) == 1 and UNSURE not in vals:
            agreed[tid], weights[tid], clusters[tid] = vals[0], t.weight, t.dialogue_id
            continue
        notes = tuple(labels.by_annotator[n][tid].note for n in who)
        dis.append(Disagreement(tid, t.dialogue_id, tuple(who), vals, notes))
        r = (adjudications or {}).get(tid)
        if r is not None:
            agreed[tid] = adj[tid] = level_value(r.label, r.failure_class, level)
            weights[tid], clusters[tid] = t.weight, t.dialogue_id
            reasons[tid] = getattr(r, "reason", "")
    return Consensus(level, agreed, dis, n_pairs, weights, clusters, adj, reasons)


def load_consensus(audit: AuditRef, level: str = "category", db: DB = None, adjudicated: bool = True
                   ) -> tuple[AuditLabels, Consensus]:
    """Labels and consensus of an audit, the lead's resolutions included unless ``adjudicated=False``."""
    from db.repository import adjudications
    labels = load_audit_labels(audit, db=db)
    return labels, build_consensus(labels, level, adjudications(audit, db=db) if adjudicated else None)


# ---------------------------------------------------------- several raters
def pairwise_agreement(labels: AuditLabels, level: str = "category", n_resamples: Optional[int] = None,
                       seed: int = 0) -> list[dict]:
    """Cohen's kappa and raw agreement per annotator pair, on the turns both labelled (never pooled);
    with ``n_resamples`` also a dialogue-bootstrap interval (``kappa_lo`` / ``kappa_hi``)."""
    names, matrix, turns = labels.reliability_matrix(level)
    if n_resamples is None:
        return ag.pairwise_table(matrix, names)
    return ag.pairwise_table(matrix, names, clusters=[t.dialogue_id for t in turns], n_resamples=n_resamples,
                             seed=seed)


def multi_rater_agreement(labels: AuditLabels, level: str = "category") -> dict:
    """Fleiss' kappa (turns with the usual number of labels) and Krippendorff's alpha (all turns).

    ``{"raters": k, "fleiss_kappa": float, "fleiss_units": n, "fleiss_ratings": m,
    "krippendorff_alpha": float, "alpha_units": pairable turns}``.
    """
    names, matrix, _ = labels.reliability_matrix(level)
    out = {"raters": len(names), "fleiss_kappa": float("nan"), "fleiss_units": 0, "fleiss_ratings": 0,
           "krippendorff_alpha": float("nan"), "alpha_units": 0}
    if len(names) < 2 or not matrix or not matrix[0]:
        return out
    out["fleiss_kappa"], out["fleiss_units"], out["fleiss_ratings"] = ag.fleiss_kappa_matrix(matrix)
    out["krippendorff_alpha"] = ag.krippendorff_alpha(matrix)
    out["alpha_units"] = sum(1 for u in range(len(matrix[0]))
                             if sum(row[u] is not None for row in matrix) >= 2)
    return out


def consensus_from_dicts(a: dict[str, str], b: dict[str, str], clusters: Optional[dict[str, str]] = None,
                         weights: Optional[dict[str, float]] = None, level: str = "category",
                         names: tuple[str, str] = ("A", "B")) -> Consensus:
    """The same from two plain dicts turn_id -> value (imported annotations, tests)."""
    both = [t for t in a if t in b]
    agreed = {t: a[t] for t in both if a[t] == b[t] and a[t] != UNSURE}
    dis = [Disagreement(t, (clusters or {}).get(t, t), names, (a[t], b[t])) for t in both if t not in agreed]
    return Consensus(level, agreed, dis, len(both), {t: (weights or {}).get(t, 1.0) for t in agreed},
                     {t: (clusters or {}).get(t, t) for t in agreed})


# --------------------------------------------------------------- agreement
def audit_agreement(labels: AuditLabels, level: str = "category", n_resamples: int = 10_000,
                    seed: int = 0, alpha: float = 0.05) -> dict[str, dict[str, ag.Estimate]]:
    """All five coefficients between rater 1 and rater 2, unweighted and IPW-weighted.

    Krippendorff's alpha is computed on the full annotators x turns matrix (missing
    cells allowed), bootstrapped by dialogue like the rest.
    """
    p = labels.pairs(level)
    if not p["turn_ids"]:
        raise ValueError("no turn has two labels yet" if not p["n_unsure"] else
                         f"no turn has two labels other than unsure yet ({p['n_unsure']} left out as unsure)")
    cats = sorted({v for v in p["a"] + p["b"] if v is not None})
    names, matrix, turns = labels.reliability_matrix(level)
    mcats = sorted({v for row in matrix for v in row if v is not None} | set(cats))
    out = {}
    for key, w, mw in (("unweighted", None, None),
                       ("weighted", p["weights"], [t.weight for t in turns])):
        kw = dict(n_resamples=n_resamples, seed=seed, alpha=alpha)
        rep = {s: ag.pair_statistic_ci(s, p["a"], p["b"], p["clusters"], categories=cats, weights=w, **kw)
               for s in ag.STATISTICS[:4]}
        rep["krippendorff_alpha"] = ag.krippendorff_alpha_ci(matrix, [t.dialogue_id for t in turns],
                                                             categories=mcats, weights=mw, **kw)
        out[key] = rep
    return out


def has_class(value: Optional[str], cls: str) -> Optional[bool]:
    """Does a category value carry failure class ``cls``? None for a missing or unsure value."""
    if value is None or value == UNSURE:
        return None
    return value not in ("acceptable", "failure") and cls in split_classes(value)


def per_class_agreement(labels: AuditLabels, classes=CLASSES, weighted: bool = False) -> list[dict]:
    """Agreement on each failure class separately (binary per class).

    For class c every label other than unsure becomes yes/no: does it carry c? (acceptable and a
    failure without class: no). Rows ``{"class", "n", "a_yes", "b_yes", "both_yes", "agreement",
    "cohen_kappa", "krippendorff_alpha"}``: agreement and Cohen's kappa compare rater 1 and rater 2
    on the turns both labelled acceptable/failure (as ``pairs``; with more than two annotators these
    are seats, so read Krippendorff's alpha then), alpha uses every annotator's yes/no (unsure and
    unlabelled cells missing). Kappa is NaN when undefined (both raters say no everywhere, p_e = 1).
    ``weighted``: IPW weights 1/pi for agreement and kappa (counts and alpha stay unweighted).
    """
    p = labels.pairs("category")
    names, matrix, _ = labels.reliability_matrix("category")
    w = p["weights"] if weighted else None
    yn = {True: "yes", False: "no", None: None}
    rows = []
    for c in classes:
        ya = [yn[has_class(v, c)] for v in p["a"]]
        yb = [yn[has_class(v, c)] for v in p["b"]]
        n = len(ya)
        bm = [[yn[has_class(v, c)] for v in row] for row in matrix]
        rows.append({"class": c, "n": n, "a_yes": ya.count("yes"), "b_yes": yb.count("yes"),
                     "both_yes": sum(x == y == "yes" for x, y in zip(ya, yb)),
                     "agreement": ag.raw_agreement(ya, yb, categories=["no", "yes"], weights=w) if n
                     else float("nan"),
                     "cohen_kappa": ag.cohen_kappa(ya, yb, categories=["no", "yes"], weights=w) if n
                     else float("nan"),
                     "krippendorff_alpha": ag.krippendorff_alpha(bm, categories=["no", "yes"])
                     if len(names) >= 2 and bm and bm[0] else float("nan")})
    return rows


def human_vs_gold(labels: AuditLabels, consensus: Optional[Consensus] = None, level: str = "category"
                  ) -> list[dict]:
    """Per gold value (class or 'acceptable'): how often each annotator and the consensus match gold.

    Rows: ``{"gold": value, "who": annotator | "consensus", "n": turns, "agree": share,
    "agree_weighted": IPW share}``, plus an ``"all"`` row per rater. Turns without gold are skipped.
    """
    rows = []
    gold = {t.turn_id: level_value(t.gold_label, t.gold_class, level) for t in labels.turns
            if t.gold_label is not None}
    w = {t.turn_id: t.weight for t in labels.turns}
    raters: dict[str, dict[str, str]] = {n: {tid: labels.value(n, tid, level) for tid in by
                                             if labels.value(n, tid, level) != UNSURE}
                                         for n, by in labels.by_annotator.items()}
    if consensus is not None:
        raters["consensus"] = dict(consensus.labels)
    values = sorted(set(gold.values())) + ["all"]
    for who, lab in raters.items():
        for g in values:
            tids = [t for t in lab if t in gold and (g == "all" or gold[t] == g)]
            if not tids:
                continue
            hit = np.array([lab[t] == gold[t] for t in tids], dtype=float)
            ww = np.array([w[t] for t in tids])
            rows.append({"gold": g, "who": who, "n": len(tids), "agree": float(hit.mean()),
                         "agree_weighted": float((hit * ww).sum() / ww.sum())})
    return rows


def human_vs_gold_kappa(labels: AuditLabels, level: str = "category") -> dict[str, float]:
    """Cohen's kappa of each annotator against gold, over the turns they labelled."""
    out = {}
    gold = {t.turn_id: level_value(t.gold_label, t.gold_class, level) for t in labels.turns
            if t.gold_label is not None}
    for n, by in labels.by_annotator.items():
        tids = [t for t in by if t in gold and labels.value(n, t, level) != UNSURE]
        if tids:
            out[n] = ag.cohen_kappa([labels.value(n, t, level) for t in tids], [gold[t] for t in tids])
    return out


__all__ = ["LEVELS", "UNSURE", "level_value", "is_failure", "stat_value", "has_class", "per_class_agreement", "AuditLabels", "load_audit_labels", "Disagreement",
           "Consensus", "build_consensus", "load_consensus", "pairwise_agreement", "multi_rater_agreement", "consensus_from_dicts", "audit_agreement", "human_vs_gold",
           "human_vs_gold_kappa"]
