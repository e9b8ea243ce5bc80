"""Dialogue-level scores from step verdicts (issue 11: dialogue AUROC "with the score taken from the turn confidences").

A dialogue is predicted failed iff one of its steps is labelled failure. For
ranking, ``noisy_or_score`` treats every failing step as an independent possible
cause of the dialogue's failure:

    score = 1 - prod_{failing steps i} (1 - pi * p_i),    p_i = confidence_i

- ``p_i`` is the step's failure probability: a turn's confidence is on the probability
  scale (``evaluator.aggregate``: (1 + min margin) / 2), so for a failing step it is
  the probability that the step does fail;
- ``pi`` is the chance that a step failure costs the dialogue its outcome. It is
  a prior, not fitted: 0.5 says "a policy breach is as likely to break the outcome
  as not". It has to be below 1, otherwise one S1 failure (confidence 1.0)
  saturates the score and every flagged dialogue ties, which is what made the
  max over steps uninformative (S1 decides most failing steps at confidence 1);
- acceptable and undecided steps add nothing: an acceptable step is no candidate
  cause, and the evaluator scores undecided as acceptable at full coverage.

Unlike the max, the score grows with every further failing step (several
independent breaches make a failed outcome likelier); with equal confidences it
orders dialogues exactly as the number of failing steps does, for any ``pi``.
"""
from __future__ import annotations

from typing import Any, Iterable

DEFAULT_PI = 0.5


def _label(v: Any) -> str:
    lab = getattr(v, "label", None)
    if lab is None and isinstance(v, dict):
        lab = v.get("label")
    return getattr(lab, "value", lab)


def _confidence(v: Any) -> float:
    c = getattr(v, "confidence", None)
    if c is None and isinstance(v, dict):
        c = v.get("confidence")
    return float(c or 0.0)


def step_failure_probability(v: Any) -> float:
    """c for a failing step, 1 - c for an acceptable one, 0.5 for an undecided one (c: the verdict's
    probability-scale confidence)."""
    lab, c = _label(v), max(0.0, min(1.0, _confidence(v)))
    if lab == "failure":
        return c
    if lab == "acceptable":
        return 1.0 - c
    return 0.5


def noisy_or_score(verdicts: Iterable[Any], pi: float = DEFAULT_PI) -> float:
    """The dialogue score above, in [0, 1); 0.0 for a dialogue without a failing step."""
    if not 0.0 < pi < 1.0:
        raise ValueError("pi must be in (0, 1): at 1 a single certain failing step saturates the score")
    keep = 1.0
    for v in verdicts:
        if _label(v) == "failure":
            keep *= 1.0 - pi * step_failure_probability(v)
    return 1.0 - keep


def max_step_score(verdicts: Iterable[Any]) -> float:
    """The earlier score (kept for comparison): the maximum over steps of their failure probability."""
    return max((step_failure_probability(v) for v in verdicts), default=0.0)


__all__ = ["noisy_or_score", "max_step_score", "step_failure_probability", "DEFAULT_PI"]
