"""A support margin m in [-1, 1] -> a failure decision at threshold tau (the S2 stages' one mapping)."""
from __future__ import annotations

from sage_core.data.types import Decision, Stage, Verdict


def decide(m: float, tau: float, rationale: str, evidence: str = "", stage: Stage = Stage.S2_SYMBOLIC) -> Verdict:
    """Map a support margin to a failure decision (TRUE = failure present): m >= tau supports (failure absent),
    m <= -tau refutes (failure present), in between abstains.

    ``stage`` says what produced the margin: a named constant (S2-symbolic) or an encoder score (S2-encoder, passed
    by the ``finish`` callbacks of pending text pairs).
    """
    m = float(max(-1.0, min(1.0, m)))
    if m >= tau:
        return Verdict(Decision.FALSE, abs(m), stage, evidence, rationale)
    if m <= -tau:
        return Verdict(Decision.TRUE, abs(m), stage, evidence, rationale)
    return Verdict(Decision.ABSTAIN, abs(m), stage, evidence, rationale + f" (|m|={abs(m):.2f} < tau={tau})")
