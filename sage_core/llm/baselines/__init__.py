"""LLM-judge baselines (G-Eval, FrugalGPT, direct) that SAGE is compared against.

Each judge turns one ``Turn`` into a ``Judgement``; ``runner.run_baseline``
turns judgements into evaluator-verdict rows (see ARCHITECTURE.md "verdict
files"), with cost and latency from the calls' returned token usage.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from sage_core.llm.client import LLMUsage

METHODS = ("geval", "frugal", "direct")


@dataclass
class Judgement:
    """One judge's answer for one turn, with every LLM call it took."""

    label: str  # failure | acceptable | undecided (unparsable answers)
    cls: Optional[str] = None  # IUV | WNF | PC | UV | None
    confidence: Optional[float] = None  # in [0, 1]; None when the method has none
    score: Optional[float] = None  # method-specific raw score (G-Eval mean 1-5)
    usages: list[LLMUsage] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # method-specific fields for the row
    rationale: str = ""


__all__ = ["METHODS", "Judgement"]
