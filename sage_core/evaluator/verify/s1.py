"""S1: symbolic rules over the state diff and the schema (margin 1.0, zero cost).

S1 decides only on annotated evidence (confidence 1.0) and only where the
schema admits a check; everything else abstains and moves to S2. Rules are
stated in ARCHITECTURE.md "Semantics".
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sage_core.data.profile import EMPTY_PROFILE, CorpusProfile
from sage_core.data.types import (
    AgentAct,
    Criterion,
    Decision,
    FailureClass,
    Stage,
    StateDiff,
    Turn,
    UserValue,
    Verdict,
)
from sage_core.evaluator.text.normalize import compare, is_dontcare, normalize
from sage_core.specs.workflow import WorkflowSpec
from sage_core.evaluator.tools import verify_tool_step_s1


@dataclass
class TurnContext:
    """Everything a verifier may look at for one turn, computed once."""

    turn: Turn
    spec: WorkflowSpec
    user_values: list[UserValue]
    agent_acts: list[AgentAct]
    profile: CorpusProfile = EMPTY_PROFILE  # the corpus's lexical knowledge (aliases, slot hints)
    diff: StateDiff = field(init=False)

    def __post_init__(self) -> None:
        self.diff = StateDiff.between(self.turn.state_before, self.turn.state_after)

    def user_values_for(self, slot: str) -> list[UserValue]:
        return [uv for uv in self.user_values if uv.slot == slot]


def _v(decision: Decision, rationale: str, evidence: str = "") -> Verdict:
    return Verdict(decision, 1.0 if decision != Decision.ABSTAIN else 0.0, Stage.S1, evidence, rationale)


def _abstain(why: str) -> Verdict:
    return Verdict(Decision.ABSTAIN, 0.0, Stage.S1, "", why)


def annotated(c: Criterion) -> bool:
    return float(c.args.get("confidence", 1.0)) >= 1.0


def check_iuv(c: Criterion, ctx: TurnContext) -> Verdict:
    if not annotated(c):
        return _abstain("extracted user value: S1 decides only on annotated evidence")
    slot, value, vt = c.args["slot"], c.args["value"], c.args["value_type"]
    held = ctx.turn.state_after.get(slot)
    same = compare(held, value, vt)
    if same is True:
        return _v(Decision.FALSE, f"s_t[{slot}]={held!r} matches the user's {value!r}", f"state_after.{slot}")
    if ctx.diff.writes(slot):
        return _abstain(f"s_t writes {held!r} for the user's {value!r}: paraphrase check needed")
    if same is None:
        return _abstain(f"cannot compare {held!r} with {value!r} without a reference date")
    return _v(Decision.TRUE, f"the user gave {slot}={value!r}; s_t {'holds ' + repr(held) if held else 'lacks it'}",
              f"state_after.{slot}")


def check_wnf(c: Criterion, ctx: TurnContext) -> Verdict:
    if not annotated(c):
        return _abstain("request extracted from text: S1 decides only on annotated acts")
    slot, legal = c.args["slot"], set(c.args["legal"])
    if slot not in legal:
        return _v(Decision.TRUE, f"{slot} is not in Next(W, s_(t-1)) = {sorted(legal)}", "agent")
    if c.args.get("just_supplied") and c.args.get("filled_after"):
        return _v(Decision.TRUE, f"the user just supplied {slot} and s_t holds it; asking again ignores it", "agent")
    return _v(Decision.FALSE, f"{slot} is a legal next field", "agent")


def check_pc(c: Criterion, ctx: TurnContext) -> Verdict:
    if not annotated(c):
        return _abstain("confirmation extracted from text: S1 decides only on annotated acts")
    missing = c.args["missing"]
    if missing:
        return _v(Decision.TRUE, f"confirmation while required slots {missing} are empty", "agent")
    if c.args.get("untracked"):
        return _abstain(f"required slots {c.args['untracked']} are not tracked by this state source")
    return _v(Decision.FALSE, "every required slot is filled when the agent confirms", "agent")


def check_uv(c: Criterion, ctx: TurnContext) -> Verdict:
    slot, value, vt = c.args["slot"], c.args["value"], c.args["value_type"]
    for uv in ctx.user_values_for(slot):
        if uv.confidence >= 1.0 and compare(uv.value, value, vt) is True:
            return _v(Decision.FALSE, f"{value!r} is the value the user gave for {slot} in u_t", "user")
    spec = ctx.spec.slots.get(slot)
    if spec and spec.is_categorical and spec.possible_values and not is_dontcare(value):
        allowed = {normalize(p, vt) for p in spec.possible_values}
        if normalize(value, vt) not in allowed:
            return _v(Decision.TRUE, f"{value!r} is not a possible value of categorical slot {slot}", "state")
    return _abstain("grounding in history needs S2")


CHECKS = {FailureClass.IUV: check_iuv, FailureClass.WNF: check_wnf, FailureClass.PC: check_pc,
          FailureClass.UV: check_uv}


def verify_s1(c: Criterion, ctx: TurnContext) -> Verdict:
    if c.args.get("tool_step"):
        return verify_tool_step_s1(c, ctx.turn, ctx.spec)
    return CHECKS[c.type](c, ctx)


__all__ = ["TurnContext", "verify_s1", "annotated", "CHECKS"]
