"""Natural failure injection: failures built from real agent utterances and real values.

Template injection (``inject``) writes WNF requests and PC confirmations from a
handful of sentence templates, so a text extractor can learn the templates
instead of the task. Here every injected reply is a real agent utterance taken
from *another* dialogue of the same corpus split, and every injected value is a
real value of that slot from another dialogue:

- WNF: the reply becomes a real agent turn whose acts are exactly one
  value-less REQUEST of a slot that is not in Next(W, s_{t-1}) here (same
  service, so the slot is the same schema slot).
- PC: the reply becomes a real agent turn of the same workflow whose acts
  include CONFIRM or NOTIFY_SUCCESS (and nothing but CONFIRM / NOTIFY_SUCCESS /
  INFORM), where a required slot is still missing here; its CONFIRM acts
  restate none of the missing slots (it goes ahead without them).
- UV: s_t gets a value that slot takes in another dialogue of the split and
  that nothing in history + u_t + a_t supports.
- IUV: as in template mode (a value the user really gave in u_t is dropped
  from s_t); the user text is already real.

The injector decides "is this value supported?" with its own normaliser
(``inject.norm_text`` / ``inject.appears``), never the evaluator's, so the
evaluator is not graded against its own reading of the text. Candidates are
sorted before every seeded choice: the same seed gives the same slice.
"""
from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from sage_core.science.inject import (CLASSES, _copy, _finish, _same, appears, choose_wnf_slot, inject_iuv,
                                     pc_missing, uv_slot_order, wnf_candidates)
from sage_core.data.types import AgentAct, Turn
from sage_core.specs.workflow import WorkflowSpec

INJECTION_MODES = ("natural", "template")
CONFIRMING_ACTS = frozenset({"CONFIRM", "NOTIFY_SUCCESS"})
_PC_SOURCE_ACTS = CONFIRMING_ACTS | {"INFORM"}


@dataclass(frozen=True)
class SourceUtterance:
    """A real agent reply that can be transplanted into another dialogue."""

    turn_id: str
    dialogue_id: str
    text: str
    acts: tuple[tuple[str, Optional[str], Optional[str]], ...]  # (act, slot, value)

    def agent_acts(self) -> list[AgentAct]:
        return [AgentAct(a, s, v) for a, s, v in self.acts]


def _service(workflow: str) -> str:
    return workflow.split(":", 1)[0]


class NaturalPool:
    """Real agent utterances and slot values of one corpus split, indexed for injection.

    ``requests[(service, slot)]``: replies whose acts are exactly one REQUEST of
    ``slot`` without a value; ``confirmations[workflow]``: replies of that
    workflow that confirm or announce success; ``values[(service, slot)]``:
    value -> dialogues whose tracker state holds it. Built from annotated
    turns (``agent_acts`` present); turns without acts contribute values only.
    """

    def __init__(self, turns: Iterable[Turn] = ()):
        req: dict[tuple[str, str], list[SourceUtterance]] = defaultdict(list)
        conf: dict[str, list[SourceUtterance]] = defaultdict(list)
        vals: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for t in turns:
            svc = _service(t.workflow)
            for st in (t.state_before, t.state_after):
                for s, v in st.items():
                    if v and v.strip() and v.lower() != "dontcare":
                        vals[(svc, s)][v].add(t.dialogue_id)
            acts = t.agent_acts or []
            if not acts or not t.agent.strip():
                continue
            src = SourceUtterance(t.turn_id, t.dialogue_id, t.agent, tuple((a.act, a.slot, a.value) for a in acts))
            kinds = {a.act for a in acts}
            if kinds == {"REQUEST"} and len({a.slot for a in acts}) == 1 and acts[0].slot \
                    and all(a.value in (None, "") for a in acts):
                req[(svc, acts[0].slot)].append(src)
            elif kinds & CONFIRMING_ACTS and kinds <= _PC_SOURCE_ACTS:
                conf[t.workflow].append(src)
        self.requests = {k: sorted(v, key=lambda u: u.turn_id) for k, v in req.items()}
        self.confirmations = {k: sorted(v, key=lambda u: u.turn_id) for k, v in conf.items()}
        self.values = {k: {v: frozenset(d) for v, d in sorted(m.items())} for k, m in vals.items()}

    def requests_for(self, service: str, slot: str, exclude_dialogue: str) -> list[SourceUtterance]:
        return [u for u in self.requests.get((service, slot), []) if u.dialogue_id != exclude_dialogue]

    def confirmations_for(self, workflow: str, exclude_dialogue: str) -> list[SourceUtterance]:
        return [u for u in self.confirmations.get(workflow, []) if u.dialogue_id != exclude_dialogue]

    def values_for(self, service: str, slot: str, exclude_dialogue: str) -> list[str]:
        """Values of the slot held in some other dialogue (sorted)."""
        return [v for v, ds in self.values.get((service, slot), {}).items() if ds - {exclude_dialogue}]


def inject_wnf_natural(turn: Turn, spec: WorkflowSpec, rng: random.Random,
                       pool: NaturalPool) -> Optional[Turn]:
    """WNF: the reply becomes another dialogue's real request for a slot outside Next(W, s_{t-1})."""
    cands = [(s, why) for s, why in wnf_candidates(turn, spec)
             if pool.requests_for(spec.service, s, turn.dialogue_id)]
    if not cands:
        return None
    slot, why = choose_wnf_slot(cands, rng)
    src = rng.choice(pool.requests_for(spec.service, slot, turn.dialogue_id))
    t = _copy(turn)
    t.agent = src.text
    t.agent_acts = src.agent_acts()
    return _finish(t, "WNF", {"slot": slot, "reason": why, "legal_next": sorted(spec.legal_next(turn.state_before)),
                              "injection": "natural", "source_turn": src.turn_id})


def inject_pc_natural(turn: Turn, spec: WorkflowSpec, rng: random.Random,
                      pool: NaturalPool) -> Optional[Turn]:
    """PC: the reply becomes another dialogue's real confirmation / success notice of the same workflow
    while a required slot is still missing here."""
    if turn.user_values is None:
        return None  # without annotated user values we cannot tell what the agent knows
    missing = pc_missing(turn, spec)
    if not missing:
        return None
    # a confirmation that restates a value for a missing slot would tell the agent that value; keep the ones
    # that, like a real premature commitment, go ahead without it
    srcs = [u for u in pool.confirmations_for(turn.workflow, turn.dialogue_id)
            if not {s for a, s, _ in u.acts if a == "CONFIRM"} & set(missing)]
    if not srcs:
        return None
    src = rng.choice(srcs)
    t = _copy(turn)
    t.agent = src.text
    t.agent_acts = src.agent_acts()
    kinds = sorted({a for a, _, _ in src.acts} & CONFIRMING_ACTS)
    return _finish(t, "PC", {"missing": missing, "acts": kinds, "injection": "natural",
                             "source_turn": src.turn_id})


def inject_uv_natural(turn: Turn, spec: WorkflowSpec, rng: random.Random,
                      pool: NaturalPool) -> Optional[Turn]:
    """UV: s_t gets a value the slot holds in another dialogue and nothing in this one supports."""
    ctx_all, order = uv_slot_order(turn, spec, rng)
    for slot in order:
        ss = spec.slots[slot]
        default = spec.optional.get(slot)  # an intent's default value is supported by the schema itself
        ok = [v for v in pool.values_for(spec.service, slot, turn.dialogue_id)
              if v.lower() not in ("true", "false") and not _same(v, default)
              and not appears(v, ctx_all, ss.value_type)]
        if ok:
            value = rng.choice(ok)
            t = _copy(turn)
            old = t.state_after.get(slot)
            t.state_after[slot] = value
            return _finish(t, "UV", {"slot": slot, "value": value, "source": "other dialogue",
                                     "replaced": old, "injection": "natural"})
    return None


def inject_iuv_natural(turn: Turn, spec: WorkflowSpec, rng: random.Random,
                       pool: NaturalPool) -> Optional[Turn]:
    """IUV: a value the user really gave in u_t is dropped from s_t (the template injector; its text is real)."""
    out = inject_iuv(turn, spec, rng)
    if out is not None:
        out.meta["mutation"] = dict(out.meta["mutation"], injection="natural")
    return out


NATURAL_INJECTORS: dict[str, Callable[..., Optional[Turn]]] = {
    "IUV": inject_iuv_natural, "WNF": inject_wnf_natural, "PC": inject_pc_natural, "UV": inject_uv_natural}


def inject_natural(turn: Turn, cls: str, spec: WorkflowSpec, rng: random.Random,
                   pool: NaturalPool) -> Optional[Turn]:
    """Inject failure class ``cls`` into a copy of ``turn`` from real data; None if not applicable."""
    if cls not in NATURAL_INJECTORS:
        raise ValueError(f"unknown failure class '{cls}' (use {', '.join(CLASSES)})")
    return NATURAL_INJECTORS[cls](turn, spec, rng, pool)


__all__ = ["INJECTION_MODES", "NaturalPool", "SourceUtterance", "NATURAL_INJECTORS", "inject_natural",
           "inject_wnf_natural", "inject_pc_natural", "inject_uv_natural", "inject_iuv_natural"]
