"""Data model shared by every SAGE stage: turns in, criteria and verdicts out.

Plain dataclasses (not pydantic) keep the hot path cheap; validation of
user-supplied input happens once, in ``slice_io``, with file/line/field errors.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, Optional


class FailureClass(str, Enum):
    """The four failure classes a criterion can test for."""

    IUV = "IUV"  # ignored user value
    WNF = "WNF"  # wrong next field
    PC = "PC"  # premature confirmation
    UV = "UV"  # unsupported value


class Decision(str, Enum):
    """A verifier's answer to 'does this failure hold?'."""

    TRUE = "true"  # the failure is present
    FALSE = "false"  # the failure is absent
    ABSTAIN = "abstain"


class Stage(str, Enum):
    """Where in the cascade a criterion was decided."""

    S1 = "S1"  # symbolic rules over diff and schema (annotated evidence)
    S2 = "S2"  # the S2 tier of a cascade config; its verdicts carry one of the two stages below
    S2_SYMBOLIC = "S2-symbolic"  # S2's model-free checks: typed equality, exact span match, named margins
    S2_ENCODER = "S2-encoder"  # S2's model decisions: MiniLM paraphrase score or NLI margin
    S3 = "S3"  # focused single-criterion LLM
    NONE = "none"  # every stage abstained


# Where criteria are decided, in cascade order: the routing table's columns (reports, Home, Inspector).
ROUTING_STAGES = ("S1", "S2-symbolic", "S2-encoder", "S3", "none")


class TurnLabel(str, Enum):
    FAILURE = "failure"
    ACCEPTABLE = "acceptable"
    UNDECIDED = "undecided"


@dataclass
class Utterance:
    speaker: str  # "user" | "agent"
    text: str


@dataclass
class UserValue:
    """A value the user supplied in u_t; span is [l, r) into the user text."""

    slot: str
    value: str
    span: Optional[tuple[int, int]] = None
    confidence: float = 1.0  # 1.0 = annotated; <1 = extracted by the compiler


@dataclass
class AgentAct:
    act: str  # REQUEST, CONFIRM, NOTIFY_SUCCESS, INFORM, OFFER, ...
    slot: Optional[str] = None
    value: Optional[str] = None
    confidence: float = 1.0  # 1.0 = annotated; <1 = extracted from the reply
    # who extracted it: "" (annotated), "rule" (keyword cues) or "head" (a learned head: confidence is a
    # calibrated probability, and the S2 decision on it is S2-encoder's)
    source: str = ""


@dataclass
class Gold:
    label: str  # "failure" | "acceptable"
    failure_class: Optional[str] = None  # IUV | WNF | PC | UV | None


@dataclass
class Turn:
    """One agent turn t with everything SAGE needs to judge it."""

    turn_id: str
    dialogue_id: str
    workflow: str  # "Service_1:Intent"
    history: list[Utterance]
    user: str
    agent: str
    state_before: dict[str, str]
    state_after: dict[str, str]
    user_values: Optional[list[UserValue]] = None
    agent_acts: Optional[list[AgentAct]] = None
    gold: Optional[Gold] = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "turn_id": self.turn_id,
            "dialogue_id": self.dialogue_id,
            "workflow": self.workflow,
            "history": [{"speaker": u.speaker, "text": u.text} for u in self.history],
            "user": self.user,
            "agent": self.agent,
            "state_before": dict(self.state_before),
            "state_after": dict(self.state_after),
        }
        if self.user_values is not None:
            d["user_values"] = [
                {k: v for k, v in (("slot", uv.slot), ("value", uv.value),
                                   ("span", list(uv.span) if uv.span else None),
                                   ("confidence", uv.confidence if uv.confidence < 1.0 else None))
                 if v is not None}
                for uv in self.user_values
            ]
        if self.agent_acts is not None:
            d["agent_acts"] = [
                {k: v for k, v in (("act", a.act), ("slot", a.slot), ("value", a.value),
                                   ("confidence", a.confidence if a.confidence < 1.0 else None))
                 if v is not None}
                for a in self.agent_acts
            ]
        if self.gold is not None:
            d["gold"] = {"label": self.gold.label, "class": self.gold.failure_class}
        if self.meta:
            d["meta"] = dict(self.meta)
        return d


@dataclass
class StateDiff:
    """Delta_t: slots whose value changed between s_{t-1} and s_t."""

    written: dict[str, str]  # slot -> new value (added or changed)
    removed: dict[str, str]  # slot -> old value that disappeared
    previous: dict[str, str]  # slot -> old value for changed slots

    @classmethod
    def between(cls, before: dict[str, str], after: dict[str, str]) -> "StateDiff":
        written = {s: v for s, v in after.items() if before.get(s) != v}
        removed = {s: v for s, v in before.items() if s not in after}
        previous = {s: before[s] for s in written if s in before}
        return cls(written=written, removed=removed, previous=previous)

    def writes(self, slot: str) -> bool:
        return slot in self.written


@dataclass
class Criterion:
    """An atomic, checkable claim 'failure of class `type` holds here'."""

    id: str  # stable within a turn, e.g. "t12:UV:restaurant_name"
    type: FailureClass
    args: dict[str, Any]
    evidence: str  # "user" | "agent" | "state"
    span: Optional[tuple[int, int]] = None  # [l, r) into the evidence text
    text: str = ""  # human-readable statement of the criterion

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type.value,
            "args": self.args,
            "evidence": self.evidence,
            "span": list(self.span) if self.span else None,
            "text": self.text,
        }


@dataclass
class Verdict:
    """One verifier's answer for one criterion."""

    decision: Decision
    margin: float  # |m| confidence of the decision; 1.0 for symbolic rules
    stage: Stage
    evidence: str = ""
    rationale: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision.value,
            "margin": round(float(self.margin), 6),
            "stage": self.stage.value,
            "evidence": self.evidence,
            "rationale": self.rationale,
        }


@dataclass
class CriterionTrace:
    """A criterion with every stage's answer, in cascade order."""

    criterion: Criterion
    attempts: list[Verdict]  # one per stage tried (abstentions included)
    final: Verdict

    def to_dict(self) -> dict[str, Any]:
        return {
            "criterion": self.criterion.to_dict(),
            "attempts": [a.to_dict() for a in self.attempts],
            "final": self.final.to_dict(),
        }


@dataclass
class RepairSignal:
    """A structured edit that would fix one fired criterion."""

    criterion_id: str
    type: FailureClass
    edit: dict[str, Any]
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"criterion_id": self.criterion_id, "type": self.type.value,
                "edit": self.edit, "message": self.message}


@dataclass
class TurnVerdict:
    turn_id: str
    dialogue_id: str
    label: TurnLabel
    confidence: float  # min decision margin over criteria; 1.0 if no criteria
    traces: list[CriterionTrace]
    repairs: list[RepairSignal]
    config: str
    s2_backend: str
    latency_ms: float = 0.0
    paid_calls: int = 0
    cost_usd: float = 0.0

    @property
    def predicted_failure(self) -> bool:
        """Binary prediction at full coverage: undecided scores as acceptable."""
        return self.label == TurnLabel.FAILURE

    @property
    def fired_classes(self) -> list[str]:
        return sorted({t.criterion.type.value for t in self.traces
                       if t.final.decision == Decision.TRUE})

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn_id": self.turn_id,
            "dialogue_id": self.dialogue_id,
            "label": self.label.value,
            "confidence": round(float(self.confidence), 6),
            "fired_classes": self.fired_classes,
            "criteria": [t.to_dict() for t in self.traces],
            "repairs": [r.to_dict() for r in self.repairs],
            "config": self.config,
            "s2_backend": self.s2_backend,
            "latency_ms": round(self.latency_ms, 3),
            "paid_calls": self.paid_calls,
            "cost_usd": self.cost_usd,
        }


__all__ = [name for name in dir() if not name.startswith("_")] + ["asdict"]
