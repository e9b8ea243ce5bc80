"""Dialogue-level view: where does each annotator / evaluator say a dialogue first goes wrong?

Turn-level scores hide whether two judges locate the *same* breakdown. For each
dialogue we take its audited turns in order and report, per source (each
annotator, each evaluator), the first turn it labels a failure (None = none of
the audited turns failed), then how often two sources pick the same turn.
Only dialogues that a source labelled completely (every audited turn) count
for it; the audit samples turns, so "first" means first among audited turns.
An ``unsure`` label counts as not labelled (as in every agreement statistic).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Mapping, Optional

from .consensus import UNSURE, AuditLabels, is_failure
from .evaluators import split_verdicts, to_binary


@dataclass(frozen=True)
class DialogueRow:
    dialogue_id: str
    turn_ids: list[str]  # audited turns, in dialogue order
    first_failure: dict[str, Optional[str]]  # source -> first failing turn_id (None: no failure)
    complete: dict[str, bool]  # source -> labelled every audited turn of this dialogue


def first_failures(order: Mapping[str, tuple[str, int]], sources: Mapping[str, Mapping[str, int]]
                   ) -> list[DialogueRow]:
    """``order``: turn_id -> (dialogue_id, turn_index); ``sources``: name -> turn_id -> 0/1 failure."""
    by_dlg: dict[str, list[tuple[int, str]]] = {}
    for tid, (dlg, idx) in order.items():
        by_dlg.setdefault(dlg, []).append((idx, tid))
    rows = []
    for dlg in sorted(by_dlg):
        tids = [t for _, t in sorted(by_dlg[dlg])]
        first, complete = {}, {}
        for name, lab in sources.items():
            complete[name] = all(t in lab for t in tids)
            first[name] = next((t for t in tids if lab.get(t) == 1), None)
        rows.append(DialogueRow(dlg, tids, first, complete))
    return rows


def first_failure_agreement(rows: list[DialogueRow]) -> dict[tuple[str, str], dict[str, float]]:
    """For every pair of sources: dialogues both labelled completely (n) and the share with the same first failure."""
    names = sorted({n for r in rows for n in r.first_failure})
    out = {}
    for a, b in combinations(names, 2):
        both = [r for r in rows if r.complete.get(a) and r.complete.get(b)]
        same = sum(r.first_failure[a] == r.first_failure[b] for r in both)
        out[(a, b)] = {"n": len(both), "agree": same / len(both) if both else float("nan")}
    return out


def audit_dialogue_view(labels: AuditLabels, evaluators: Optional[Mapping[str, Mapping[str, str]]] = None
                        ) -> tuple[list[DialogueRow], dict[tuple[str, str], dict[str, float]]]:
    """Rows and pairwise agreement for an audit's annotators plus the given evaluators."""
    order = {t.turn_id: (t.dialogue_id, t.turn_index) for t in labels.turns}
    sources: dict[str, dict[str, int]] = {
        n: {t: int(is_failure(r.label)) for t, r in by.items() if r.label != UNSURE}
        for n, by in labels.by_annotator.items()}
    for n, e in (evaluators or {}).items():
        sources[n] = {t: v for t, v in to_binary(split_verdicts(e)[0], n).items() if t in order}
    rows = first_failures(order, sources)
    return rows, first_failure_agreement(rows)


__all__ = ["DialogueRow", "first_failures", "first_failure_agreement", "audit_dialogue_view"]
