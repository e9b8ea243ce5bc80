"""Turn label from criterion verdicts: any TRUE -> failure; all FALSE -> acceptable; else undecided.

Confidence is the minimum margin over decided criteria (S1 margins are 1.0),
0 for undecided turns and 1.0 for a turn with no criteria, so that selective
evaluation can rank turns by how sure the cascade is.
"""
from __future__ import annotations

from sage_core.data.types import CriterionTrace, Decision, TurnLabel


def aggregate(traces: list[CriterionTrace]) -> tuple[TurnLabel, float]:
    if not traces:
        return TurnLabel.ACCEPTABLE, 1.0
    decisions = [t.final.decision for t in traces]
    decided = [float(t.final.margin) for t in traces if t.final.decision != Decision.ABSTAIN]
    if Decision.TRUE in decisions:
        return TurnLabel.FAILURE, min(decided)
    if all(d == Decision.FALSE for d in decisions):
        return TurnLabel.ACCEPTABLE, min(decided)
    return TurnLabel.UNDECIDED, 0.0


__all__ = ["aggregate"]
