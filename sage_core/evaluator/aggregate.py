"""Turn label from criterion verdicts: any TRUE -> failure; all FALSE -> acceptable; else undecided.

Confidence ranks turns by the **minimum margin** m over decided criteria (S1 margins are 1.0; S2-encoder
margins come from calibrated probabilities, m = p(right side) - p(wrong side)) and is reported on the
probability scale, so that it reads as "how likely this verdict is correct" (the scale of the LLM-judge
baselines' confidences, and the scale the calibration figures measure). A ``TurnConfidenceMap`` turns the
label and m into that probability:

- ``UNCALIBRATED``: ``(1 + m) / 2`` for either label. For a calibrated criterion that is the probability that
  its own decision is right. Used when acts and user values were annotated (dev showed no verdict errors to
  calibrate against: the annotated turn confidence was already within 0.03 of accuracy) and for S2 backends the
  turn map was not fitted for.
- ``EXTRACTED_OFFLINE``: evidence extracted from text, offline S2 backend. One Platt map above a coin flip,
  1/2 + 1/2 sigmoid(a m + b), per label, fitted on the **dev** split's natural-injection slices
  (``benchmarks/fit_turn_confidence.py``). A turn's verdict is right less often than its weakest criterion says
  when the failure sits in what the extractor did not read (acceptable turns), and more often when several
  criteria agree on a failure; the per-criterion margins cannot see either. Each map is increasing in m, so
  within a label the ranking (and the risk-coverage order) is that of the margins.

Undecided turns get ``UNDECIDED_CONFIDENCE`` = 0.5 (no evidence either way), below every decided turn.

A turn with **no compiled criterion** is acceptable, but nothing was checked: its confidence is the map's
``empty``, never 1.0 (it must not rank above turns whose criteria were verified). ``EMPTY_ANNOTATED`` when the
turn's agent acts and user values were annotated (the compiler saw everything the turn does; only the
annotation itself can be wrong); with extracted evidence (a failure the extractor did not see leaves no
criterion) it is the share of such turns that were in fact acceptable on the dev natural slices.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from sage_core.data.types import CriterionTrace, Decision, TurnLabel

EMPTY_ANNOTATED = 0.95
UNDECIDED_CONFIDENCE = 0.5
CONFIDENCE_DIGITS = 9  # so that float noise in a margin never reaches a verdict file


@dataclass(frozen=True)
class TurnConfidenceMap:
    """How a decided turn's label and minimum margin become a probability that the verdict is right.

    ``failure`` / ``acceptable`` are the parameters (a, b) of a Platt map above a coin flip: confidence =
    1/2 + 1/2 sigmoid(a m + b) (``science.calibration.fit_platt`` with floor 1/2); ``None`` means the uncalibrated
    (1 + m) / 2. ``empty`` is the confidence of a turn without criteria.

    Why above 1/2: a decided verdict that is more likely wrong than right would have been decided the other way.
    A plain Platt line, fitted where the margins are (2 of dev's 1,637 decided acceptable turns have m < 0.5), falls
    below 1/2 at small margins (0.33 at m = tau = 0.2 for the acceptable label) and would rank such a turn below
    the undecided ones (0.5); with the floor a decided turn stays above every undecided one.
    """
    name: str
    empty: float
    failure: tuple[float, float] | None = None
    acceptable: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.empty < 1.0:
            raise ValueError(f"{self.name}: empty-turn confidence {self.empty} must lie in (0, 1)")
        for ab in (self.failure, self.acceptable):
            if ab is not None and not ab[0] > 0:
                raise ValueError(f"{self.name}: Platt slope {ab[0]} must be > 0 (confidence rises with the margin)")

    def of_margin(self, label: TurnLabel, margin: float) -> float:
        """The confidence of a decided turn with ``label`` whose smallest margin is ``margin`` (in [-1, 1])."""
        m = max(-1.0, min(1.0, float(margin)))
        ab = self.failure if label == TurnLabel.FAILURE else self.acceptable
        if ab is None:
            p = (1.0 + m) / 2.0
        else:  # above a coin flip: see the class docstring
            p = UNDECIDED_CONFIDENCE + (1.0 - UNDECIDED_CONFIDENCE) / (1.0 + math.exp(-(ab[0] * m + ab[1])))
        return round(p, CONFIDENCE_DIGITS)

    def turn_confidence(self, label: TurnLabel, margin: Optional[float]) -> float:
        """The confidence of a turn with ``label`` and smallest decided margin ``margin`` (None: no criterion
        decided; with an acceptable label, none was compiled)."""
        if label == TurnLabel.UNDECIDED:
            return UNDECIDED_CONFIDENCE
        if margin is None:
            return float(self.empty)
        return self.of_margin(label, margin)


UNCALIBRATED = TurnConfidenceMap("uncalibrated (1 + m) / 2", empty=EMPTY_ANNOTATED)
# Fitted by benchmarks/fit_turn_confidence.py on the dev split, natural slices n=240, seeds 0-7, text-only, with the
# library of commit 53137ce (1,920 turns; 283 without criteria, accuracy 0.965; 19 undecided); refitted at 90c752e,
# whose value head moved the margins of a few UV verdicts (labels unchanged; the constants in the third decimal,
# seed-half ECE 0.017 / 0.017 as before). Dev ECE text-only:
# 0.063 with (1 + m) / 2 and the earlier empty confidence 0.85, 0.047 with the re-derived empty one, 0.002 fitted
# (in sample); fitted on seeds 0-3 and measured on 4-7 (and the reverse): 0.039 -> 0.017, 0.056 -> 0.017 (AURC
# 0.025 -> 0.014, 0.013 -> 0.007). The map belongs to that mix of failures (rate 0.5, the benchmarks'); on logs
# with fewer failures the acceptable turns are right more often than it says.
EXTRACTED_OFFLINE = TurnConfidenceMap("extracted evidence, offline S2 (Platt per label, dev)", empty=0.961,
                                      failure=(5.619, -0.535), acceptable=(7.211, -3.67))
EMPTY_EXTRACTED = EXTRACTED_OFFLINE.empty


def extracted_map_for(s2_backend: str) -> TurnConfidenceMap:
    """The map for turns whose evidence was extracted from text: fitted for the offline backend only (another
    backend's margins have another distribution); other backends keep (1 + m) / 2 with the fitted empty rate,
    which does not depend on S2 (no criterion reaches it)."""
    if s2_backend == "offline":
        return EXTRACTED_OFFLINE
    return TurnConfidenceMap(f"uncalibrated (1 + m) / 2, extracted evidence, {s2_backend} S2",
                             empty=EXTRACTED_OFFLINE.empty)


def aggregate(traces: list[CriterionTrace],
              confidence_map: TurnConfidenceMap = UNCALIBRATED) -> tuple[TurnLabel, float]:
    """(label, confidence) of a turn from its criteria's final verdicts."""
    decisions = [t.final.decision for t in traces]
    decided = [float(t.final.margin) for t in traces if t.final.decision != Decision.ABSTAIN]
    if Decision.TRUE in decisions:
        label = TurnLabel.FAILURE
    elif all(d == Decision.FALSE for d in decisions):  # also a turn without criteria
        label = TurnLabel.ACCEPTABLE
    else:
        label = TurnLabel.UNDECIDED
    return label, confidence_map.turn_confidence(label, min(decided) if decided else None)


__all__ = ["aggregate", "extracted_map_for", "TurnConfidenceMap", "UNCALIBRATED",
           "EXTRACTED_OFFLINE", "EMPTY_ANNOTATED", "EMPTY_EXTRACTED", "UNDECIDED_CONFIDENCE"]
