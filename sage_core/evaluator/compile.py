"""Compile one turn into atomic, checkable criteria (IUV, WNF, PC, UV).

Deterministic and stateless: the same (turn, spec) always yields the same
criteria with the same ids, so verdicts can be diffed across runs and
configs. Each criterion names its evidence ("user" / "agent" / "state") and
a span into that text; what the verifiers decide lives elsewhere.

Two inputs a loader may set when the turn's workflow or user side is a guess:

- ``turn.meta["workflow_confidence"]`` (0-1, default 1): how sure the loader is
  that the turn acts in ``turn.workflow`` (real system outputs, where the domain
  is guessed from the state and the reply). Extracted agent requests get their
  confidence multiplied by it, so a request whose domain is uncertain falls
  below the extraction floor and no WNF is judged on it. Annotated acts are
  taken as given.
- a turn with no user text at all (``turn.user`` empty, no annotated
  ``user_values``; e.g. system outputs without user utterances): for PC, the
  values s_t holds count as known, since s_t is the only record of what u_t
  said (the agent's own belief state when it replies).
- ``turn.meta["untracked_slots"]``: slots the turn's state source never holds
  (a system whose predicted states have no booking slots). PC leaves them out
  of ``missing`` and lists them under ``untracked``; S1/S2 abstain on a PC whose
  only missing slots are untracked.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Optional

from sage_core.data.errors import SageInputError
from sage_core.data.profile import EMPTY_PROFILE, CorpusProfile
from sage_core.data.types import (
    AgentAct,
    Criterion,
    FailureClass,
    StateDiff,
    Turn,
    UserValue,
)
from sage_core.evaluator.text.agent_acts import confirmation_cue, extract_agent_acts
from sage_core.evaluator.text.lexicon import Span
from sage_core.evaluator.text.normalize import (
    compare,
    find_in_text,
    iter_dates,
    iter_times,
    normalize,
    sequence_span,
    tokens,
    tokens_with_spans,
)
from sage_core.evaluator.text.sentences import sentences
from sage_core.evaluator.text.slot_keywords import bool_keywords, names_keyword, slot_keywords
from sage_core.evaluator.text.user_values import (
    drop_values_in_asking_questions,
    extract_user_values,
)
from sage_core.specs.workflow import WorkflowSpec
from sage_core.evaluator.tools import compile_tool_step, is_tool_step

if TYPE_CHECKING:
    from sage_core.evaluator.text.heads import Heads

# Evidence (annotated or extracted) below this confidence compiles no criterion: dropped rather than guessed.
DEFAULT_EXTRACTION_FLOOR = 0.5
REQUEST_ACTS = {"REQUEST"}
CONFIRM_ACTS = {"CONFIRM", "NOTIFY_SUCCESS"}
# act-annotation slots (OFFER_INTENT, INFORM_COUNT) that are not schema slots (unless the schema has them)
PSEUDO_SLOTS = {"intent", "count"}


def _line(turn: Turn) -> Optional[int]:
    return getattr(turn, "_line", None)


def _check_slot(spec: WorkflowSpec, slot: Optional[str], fld: str, turn: Turn, allow_pseudo: bool) -> None:
    if slot is None or spec.has_slot(slot) or (allow_pseudo and slot in PSEUDO_SLOTS):
        return
    raise SageInputError(f"slot '{slot}' is not in the schema of {spec.id}", line=_line(turn), field=fld)


def _check_slots(spec: WorkflowSpec, items, fld: str, turn: Turn, allow_pseudo: bool) -> None:
    """``_check_slot`` for every user value / agent act of a list, named ``fld[i].slot``."""
    for i, x in enumerate(items):
        _check_slot(spec, x.slot, f"{fld}[{i}].slot", turn, allow_pseudo=allow_pseudo)


def info_state(turn: Turn, user_values: list[UserValue]) -> dict[str, str]:
    """What the agent knows when it replies: s_{t-1} updated with u_t's user values."""
    st = {k: v for k, v in turn.state_before.items() if v is not None and str(v).strip()}
    for uv in user_values:
        if uv.value.strip():
            st[uv.slot] = uv.value
    return st


def stated_in_reply(turn: Turn, spec: WorkflowSpec, acts: list[AgentAct],
                    profile: CorpusProfile = EMPTY_PROFILE) -> set[str]:
    """Slots whose s_t value the reply itself states (a CONFIRM act, or the value in the text).

    A value the user accepted from an earlier offer reaches s_t without a user
    value; the agent knows it exactly when its confirmation restates it.
    """
    out = {a.slot for a in acts if a.act == "CONFIRM" and a.slot and a.value}
    agent_words = tokens(turn.agent)
    for slot, v in turn.state_after.items():
        if not v or not str(v).strip() or slot not in spec.slots:
            continue
        vt = spec.slots[slot].value_type
        if vt == "bool":  # "without insurance", "with outdoor seating"
            kws = bool_keywords(spec, slot, profile)
            if names_keyword(agent_words, kws):
                out.add(slot)
        elif find_in_text(v, turn.agent, vt):
            out.add(slot)
    return out


PROPOSABLE_TYPES = {"date": iter_dates, "time": iter_times}


def proposed_in_reply(turn: Turn, spec: WorkflowSpec, missing: list[str], known: dict[str, str]) -> set[str]:
    """Missing date / time slots whose value the confirmation itself proposes ("can I schedule it on March 1st?").

    A confirmation may put forward a value the user has not given yet, for the user to accept or correct; the
    slot counts as stated when it is the only missing slot of its type and the reply says a value of that type
    that no known slot holds (so it is not a restated check-in date standing for a missing check-out date).
    """
    out: set[str] = set()
    for vt, finder in PROPOSABLE_TYPES.items():
        typed = [m for m in missing if m in spec.slots and spec.slots[m].value_type == vt]
        if len(typed) != 1:
            continue
        said = [text for _, (a, b) in finder(turn.agent) for text in [turn.agent[a:b]]]
        held = [v for k, v in known.items() if k in spec.slots and spec.slots[k].value_type == vt]
        if any(not any(compare(x, v, vt) for v in held) for x in said):
            out.add(typed[0])
    return out


def legal_state(turn: Turn) -> dict[str, str]:
    """s_{t-1} without the slots the tracker cleared on u_t (a new task restarts the form)."""
    removed = set(StateDiff.between(turn.state_before, turn.state_after).removed)
    return {k: v for k, v in turn.state_before.items() if k not in removed}


def _slot_span(text: str, spec: WorkflowSpec, slot: str, profile: CorpusProfile) -> Optional[tuple[int, int]]:
    toks = tokens_with_spans(text)
    for kw, _ in sorted(slot_keywords(spec, slot, profile), key=lambda x: -x[1]):
        span = sequence_span(toks, kw.split())
        if span:
            return span
    return None


def validate_turn(turn: Turn, spec: WorkflowSpec) -> None:
    """Every slot the states and user values name must be in the schema (else an input error naming the field).

    Agent acts are the agent's behaviour, not input structure: an act naming a slot outside the workflow is
    judged (a REQUEST of it is a WNF, since it cannot be in Next(W, s)), never rejected.
    """
    for fld, st in (("state_before", turn.state_before), ("state_after", turn.state_after)):
        for slot in st:
            _check_slot(spec, slot, f"{fld}.{slot}", turn, allow_pseudo=False)
    _check_slots(spec, turn.user_values or [], "user_values", turn, allow_pseudo=False)


def turn_evidence(turn: Turn, spec: WorkflowSpec, floor: float = DEFAULT_EXTRACTION_FLOOR,
                  profile: CorpusProfile = EMPTY_PROFILE, heads: Optional["Heads"] = None
                  ) -> tuple[list[UserValue], list[AgentAct]]:
    """Annotated user values / agent acts, or extracted ones (confidence < 1) when absent.

    ``heads``: the learned act / requested-slot heads (``evaluator.text.heads``) used for extracted agent acts;
    None extracts with the keyword rules only.
    """
    if turn.user_values is not None:
        _check_slots(spec, turn.user_values, "user_values", turn, allow_pseudo=False)
        uvs = [uv for uv in turn.user_values if uv.confidence >= floor]
    else:
        uvs = extract_user_values(turn, spec, floor, profile, heads=heads)
        if heads is not None:  # values read in a question that asks about the offer are no values
            uvs = drop_values_in_asking_questions(uvs, turn.user, heads)
    if turn.agent_acts is not None:
        acts = [a for a in turn.agent_acts if a.confidence >= floor]
    else:
        acts = extract_agent_acts(turn, spec, floor, profile, heads)
        wconf = workflow_confidence(turn)
        if wconf < 1.0:
            acts = [a if a.act not in REQUEST_ACTS else dataclasses.replace(a, confidence=round(a.confidence * wconf, 3))
                    for a in acts]
            acts = [a for a in acts if a.confidence >= floor]
    return uvs, acts


def workflow_confidence(turn: Turn) -> float:
    """``turn.meta["workflow_confidence"]`` clipped to [0, 1]; 1.0 when absent or unreadable."""
    try:
        w = float((turn.meta or {}).get("workflow_confidence", 1.0))
    except (TypeError, ValueError):
        return 1.0
    return min(1.0, max(0.0, w))


def value_check(turn: Turn, spec: WorkflowSpec, confirms: list[AgentAct], cue: Optional[tuple]) -> Optional[str]:
    """What the reply only checks: a one-sentence question, with no confirmation wording, that names a single value
    (one state value or one date / time: "Are you going on March 8th?", "Did you want to check in on March 8th?"),
    read from text (an annotated act says what it is). The agent checks one value with the user; it does not confirm
    the action, so S2 abstains on the PC instead of failing it (dev clean turns: 12 of 12 PC false alarms were such
    checks, with another slot of the action still open). Returns the slot (or "a date" / "a time") it checks."""
    if not confirms or any(a.source not in ("head", "rule") for a in confirms) or cue is not None:
        return None
    text = (turn.agent or "").strip()
    if not text.endswith("?") or len(sentences(text)) != 1:
        return None
    named: list[tuple[Span, str]] = []
    for slot, v in sorted({**turn.state_before, **turn.state_after}.items()):
        if slot in spec.slots and v and str(v).lower() not in ("true", "false", "dontcare") and len(str(v)) > 2:
            span = find_in_text(v, text, spec.slots[slot].value_type)
            if span:
                named.append((span, slot))
    named += [(sp, "a date") for _, sp in iter_dates(text)] + [(sp, "a time") for _, sp in iter_times(text)]
    merged: list[tuple[Span, str]] = []
    for span, what in sorted(named, key=lambda n: (n[0], n[1].startswith("a "), n[1])):  # a slot before "a date"
        if merged and span[0] < merged[-1][0][1]:
            continue  # the same words named twice (a state date and the date expression)
        merged.append((span, what))
    return merged[0][1] if len(merged) == 1 else None


def collects_missing(acts: list[AgentAct], confirms: list[AgentAct], cue: Optional[tuple],
                     missing: list[str]) -> list[str]:
    """The missing required slots a reply read as asking for approval (CONFIRM, from text) also asks for ("Got it.
    What time on Friday, and whose name should I put it under?"). A confirmation asks the user to approve the
    action as it stands; a reply that asks for one of its still-empty slots is collecting them, so S2 abstains on
    the PC instead of failing it. Not for a success notice ("Booked! What's your name?" did act before asking),
    nor with confirmation wording ("please confirm"), nor for annotated acts, which say what they are."""
    if cue is not None or not confirms or any(a.act != "CONFIRM" or a.source not in ("head", "rule") for a in confirms):
        return []
    return sorted({a.slot for a in acts if a.act in REQUEST_ACTS and a.slot in missing})


def compile_turn(turn: Turn, spec: WorkflowSpec, floor: float = DEFAULT_EXTRACTION_FLOOR,
                 profile: CorpusProfile = EMPTY_PROFILE, heads: Optional["Heads"] = None) -> list[Criterion]:
    """All criteria for one turn, in a fixed order: IUV, WNF, PC, UV."""
    return compile_with_evidence(turn, spec, floor, profile, heads)[0]


def compile_with_evidence(turn: Turn, spec: WorkflowSpec, floor: float = DEFAULT_EXTRACTION_FLOOR,
                          profile: CorpusProfile = EMPTY_PROFILE, heads: Optional["Heads"] = None
                          ) -> tuple[list[Criterion], list[UserValue], list[AgentAct]]:
    """``compile_turn`` plus the user values / agent acts it compiled from (for the verifiers)."""
    validate_turn(turn, spec)
    if is_tool_step(turn, spec):  # a tool-calling agent's step: its own criteria (README, "Tool-calling agents")
        return compile_tool_step(turn, spec), [], []
    uvs, acts = turn_evidence(turn, spec, floor, profile, heads)
    diff = StateDiff.between(turn.state_before, turn.state_after)
    out: list[Criterion] = []
    seen: dict[str, int] = {}

    def cid(kind: str, slot: Optional[str]) -> str:
        base = f"{turn.turn_id}:{kind}" + (f":{slot}" if slot else "")
        n = seen.get(base, 0)
        seen[base] = n + 1
        return base if n == 0 else f"{base}#{n + 1}"

    # IUV: one per distinct user value
    done: set[tuple[str, str]] = set()
    for uv in uvs:
        vt = spec.slots[uv.slot].value_type
        key = (uv.slot, normalize(uv.value, vt))
        if not uv.value.strip() or key in done:
            continue
        done.add(key)
        span = uv.span or find_in_text(uv.value, turn.user, vt)
        out.append(Criterion(
            cid("IUV", uv.slot), FailureClass.IUV,
            {"slot": uv.slot, "value": uv.value, "value_type": vt, "confidence": uv.confidence,
             "state_value": turn.state_after.get(uv.slot), "written": diff.writes(uv.slot)},
            "user", span,
            f"the user gave {uv.slot}={uv.value!r} but s_t does not hold it"))
    # WNF: one per requested slot
    # Next(W, s_{t-1}), plus what u_t's values opened (ordered groups advance when the user completes one)
    legal = spec.legal_next(legal_state(turn)) | spec.legal_next(
        {**legal_state(turn), **{uv.slot: uv.value for uv in uvs if uv.value.strip()}})
    now = {**info_state(turn, uvs), **{k: v for k, v in turn.state_after.items() if str(v).strip()}}
    open_now = sorted(spec.legal_next(now))  # what a repair should ask for instead
    user_slots = {uv.slot for uv in uvs}
    # a reply read as confirming (CONFIRM act) restates held values as questions ("Could you confirm that you want a
    # bus ticket ... going to Vancouver?"): a slot s_{t-1} already holds is being confirmed, not asked for again
    confirming = any(a.act == "CONFIRM" for a in acts)
    asked: set[str] = set()
    for a in acts:
        if a.act not in REQUEST_ACTS or not a.slot or a.slot in asked:
            continue
        # a slot outside the workflow's schema is never in Next(W, s): the request is a WNF, not an input error
        asked.add(a.slot)
        args = {"slot": a.slot, "legal": sorted(legal), "open_now": open_now, "confidence": a.confidence,
                "source": a.source, "in_schema": spec.has_slot(a.slot),
                "just_supplied": a.slot in user_slots, "filled_after": spec.filled(turn.state_after, a.slot),
                "confirms_held": confirming and spec.filled(turn.state_before, a.slot)}
        if heads is not None and a.source == "head" and a.slot not in legal and legal:
            # how surely the slot head told this slot from the best legal one (S2 abstains when barely)
            from sage_core.evaluator.text.heads import request_slots
            rival = heads.legal_rival(turn.agent, a.slot, sorted(legal), request_slots(spec))
            if rival is not None:
                args["legal_rival"], args["legal_gap"] = rival
        out.append(Criterion(
            cid("WNF", a.slot), FailureClass.WNF, args,
            "agent", _slot_span(turn.agent, spec, a.slot, profile),
            f"the agent requests {a.slot}, which is not a legal next field"))
    # PC: one per turn with a confirmation / success act
    confirms = [a for a in acts if a.act in CONFIRM_ACTS]
    if confirms:
        # a required slot s_t holds is not missing: were its value one nobody gave, that is the UV criterion's
        # failure, and a PC besides would count the same fault twice (the injectors' ``pc_missing`` agrees)
        known = info_state(turn, uvs)
        known.update({k: v for k, v in turn.state_after.items() if spec.filled(turn.state_after, k)})
        stated = stated_in_reply(turn, spec, acts, profile)
        untracked = set((turn.meta or {}).get("untracked_slots") or [])
        missing = [m for m in spec.missing_for_outcome(known) if m not in stated]
        missing = [m for m in missing if m not in proposed_in_reply(turn, spec, missing, known)]
        unknown = [m for m in missing if m in untracked]
        missing = [m for m in missing if m not in untracked]
        cue = confirmation_cue(turn.agent)
        check = value_check(turn, spec, confirms, cue)
        collecting = collects_missing(acts, confirms, cue, missing)
        out.append(Criterion(
            cid("PC", None), FailureClass.PC,
            {"missing": missing, "untracked": unknown, "acts": sorted({a.act for a in confirms}),
             **({"checks_value": check} if check and missing else {}),
             **({"asks_missing": collecting} if collecting else {}),
             "confidence": min(a.confidence for a in confirms),
             "source": "head" if all(a.source == "head" for a in confirms) else
             ("" if all(not a.source for a in confirms) else "rule"), "required": list(spec.outcome_slots or spec.required)},
            "agent", cue[2] if cue else None,
            "the agent confirms while required slots are still empty"))
    # UV: one per value written in Delta_t
    for slot in sorted(diff.written):
        value = diff.written[slot]
        if value is None or not str(value).strip():
            continue
        vt = spec.slots[slot].value_type
        out.append(Criterion(
            cid("UV", slot), FailureClass.UV,
            {"slot": slot, "value": value, "value_type": vt, "previous": diff.previous.get(slot)},
            "state", None,
            f"s_t writes {slot}={value!r}, which history and u_t do not support"))
    return out, uvs, acts


__all__ = ["compile_turn", "validate_turn", "compile_with_evidence", "turn_evidence", "info_state", "workflow_confidence", "stated_in_reply", "proposed_in_reply", "legal_state", "REQUEST_ACTS", "CONFIRM_ACTS"]
