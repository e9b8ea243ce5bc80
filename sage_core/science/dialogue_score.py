"""Dialogue-level scores from step verdicts (issue 11: dialogue AUROC "with the score taken from the turn confidences").

A dialogue is predicted failed iff one of its steps is labelled failure. For
ranking, ``noisy_or_score`` treats every failing step as an independent possible
cause of the dialogue's failure:

    score = 1 - prod_{failing steps i} (1 - pi * p_i),    p_i = confidence_i

- ``p_i`` is the step's failure probability: a turn's confidence is on the probability
  scale (``evaluator.aggregate``: a probability that the verdict is right), so for a failing step it is
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

**Steps that cannot change the outcome.** Where the outcome is a record (tau-bench's
reward compares the final database state), a failing step that cannot change that
record (a reply, a lookup, a write the tool rejected) is a weaker cause than a write
that took effect or a request the agent left undone. ``effects`` marks the steps that
can (``outcome_effects``: a consequential call the tool did not reject, or a step
whose failing criteria include a dropped request); the others get the smaller prior
``PI_NO_EFFECT``. Chosen on the development half of the tau-bench file (tasks 0-11)
from {0.5, 0.25, 0.1, 0.05, 0}; the other half is reported apart (docs/benchmarks.md).
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

DEFAULT_PI = 0.5
PI_NO_EFFECT = 0.25  # prior of a failing step that cannot change the outcome record (chosen on tasks 0-11)


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


def noisy_or_score(verdicts: Iterable[Any], pi: float = DEFAULT_PI, effects: Optional[Iterable[bool]] = None,
                   pi_no_effect: float = PI_NO_EFFECT) -> float:
    """The dialogue score above, in [0, 1); 0.0 for a dialogue without a failing step. With ``effects`` (one bool
    per verdict), a failing step without effect on the outcome counts with ``pi_no_effect`` instead of ``pi``."""
    if not 0.0 < pi < 1.0:
        raise ValueError("pi must be in (0, 1): at 1 a single certain failing step saturates the score")
    if not 0.0 <= pi_no_effect <= pi:
        raise ValueError("pi_no_effect must be in [0, pi]: a step that cannot change the outcome is no likelier "
                         "a cause than one that can")
    verdicts = list(verdicts)
    flags = [True] * len(verdicts) if effects is None else list(effects)
    if len(flags) != len(verdicts):
        raise ValueError(f"effects has {len(flags)} entries for {len(verdicts)} verdicts")
    keep = 1.0
    for v, eff in zip(verdicts, flags):
        if _label(v) == "failure":
            keep *= 1.0 - (pi if eff else pi_no_effect) * step_failure_probability(v)
    return 1.0 - keep


def outcome_effects(turns: Iterable[Any], verdicts: Iterable[Any], consequential: Iterable[str]) -> list[bool]:
    """Per step of a tool-calling dialogue: can it change the outcome record? A consequential call the tool did
    not reject (``meta["step"]``: kind, tool, is_error), or a step with a failing dropped-request criterion (the
    write the user asked for is missing from the record)."""
    cons = set(consequential)
    out = []
    for t, v in zip(turns, verdicts):
        st = (getattr(t, "meta", None) or {}).get("step") or {}
        write = st.get("kind") == "tool_call" and st.get("tool") in cons and not st.get("is_error")
        dropped = any(tr.final.decision.value == "true" and tr.criterion.args.get("rule") == "dropped_request"
                      for tr in getattr(v, "traces", None) or [])
        out.append(bool(write or dropped))
    return out


def max_step_score(verdicts: Iterable[Any]) -> float:
    """The earlier score (kept for comparison): the maximum over steps of their failure probability."""
    return max((step_failure_probability(v) for v in verdicts), default=0.0)


__all__ = ["noisy_or_score", "outcome_effects", "max_step_score", "step_failure_probability", "DEFAULT_PI",
           "PI_NO_EFFECT"]
