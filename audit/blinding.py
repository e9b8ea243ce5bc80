"""Can an annotator infer gold from what an audit shows? Same-dialogue exposure and templated replies.

An injected turn keeps its dialogue's *original* continuation: the later turns
of the same dialogue were recorded after the original reply, so their history
shows the original reply (``meta['original_agent']``) and their state before
(s_{t'-1}) may show the original tracker value of a slot the injection changed
(IUV drops a value, UV writes one). If both turns are in one audit, the later
one tells the annotator that the earlier one was edited, and how.

``exposures(turns)`` finds every such pair among the turns of an audit (it
needs the turns *with* meta: the slice's turns, not the blind payloads);
``audit.sampling`` uses ``exposes(a, b)`` to never draw an exposing
combination, and the lead's audit page reports ``exposures`` of a new sample.

``injection_modes(turns)`` says how the injected turns of a slice were written:
``build-slice --injection natural`` records ``mutation.injection = 'natural'``;
template injection records nothing, so an injected turn without it is
``template``. ``templated_reply_turns`` lists the turns whose *reply* is a
template (WNF and PC templates rewrite the agent's reply with fixed phrases a
reader can learn to recognise; IUV and UV template injections edit the state only).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from sage_core import Turn

INJECTED_CLASSES = ("IUV", "WNF", "PC", "UV")
_MISSING = object()


@dataclass(frozen=True)
class Exposure:
    """``shown_in`` (a later turn of the same dialogue) reveals that ``injected`` was edited."""

    injected: str  # turn_id of the injected turn
    shown_in: str  # turn_id of the turn whose history / state shows the original
    what: str  # "reply" (history shows the original reply) or "state" (s_{t'-1} shows the original value)
    detail: str = ""


def injected_class(turn: Turn) -> Optional[str]:
    """The class injected into ``turn`` (``meta['injected']``), or None for an untouched turn."""
    c = (turn.meta or {}).get("injected")
    return c if c in INJECTED_CLASSES else None


def _later(a: Turn, b: Turn) -> bool:
    """``b`` comes after ``a`` in the same dialogue (its history is longer)."""
    if a.dialogue_id != b.dialogue_id or a.turn_id == b.turn_id:
        return False
    ia, ib = (a.meta or {}).get("turn_index"), (b.meta or {}).get("turn_index")
    if isinstance(ia, int) and isinstance(ib, int) and ia != ib:
        return ib > ia
    return len(b.history) > len(a.history)


def _original_value(turn: Turn):
    """The value s_t held for the mutated slot before injection (None = absent), or _MISSING if unknown."""
    mut = (turn.meta or {}).get("mutation") or {}
    cls = injected_class(turn)
    if cls == "IUV" and "state_after_value" in mut:
        return mut.get("state_after_value")
    if cls == "UV" and "replaced" in mut:
        return mut.get("replaced")
    return _MISSING


def exposes(injected: Turn, other: Turn) -> list[Exposure]:
    """How ``other`` (shown in the same audit) reveals the injection into ``injected``; [] if it does not."""
    if injected_class(injected) is None or not _later(injected, other):
        return []
    out = []
    meta = injected.meta or {}
    orig = meta.get("original_agent")
    if isinstance(orig, str) and orig.strip() and orig != injected.agent:
        tail = other.history[len(injected.history):]
        if any(u.speaker == "agent" and u.text == orig for u in tail):
            out.append(Exposure(injected.turn_id, other.turn_id, "reply",
                                "the later turn's history shows the original agent reply"))
    slot = (meta.get("mutation") or {}).get("slot")
    orig_v = _original_value(injected)
    if slot and orig_v is not _MISSING:
        shown, now = other.state_before.get(slot), injected.state_after.get(slot)
        if shown != now and shown == orig_v:
            out.append(Exposure(injected.turn_id, other.turn_id, "state",
                                f"the later turn's state before holds the original value of '{slot}'"))
    return out


def exposures(turns: Iterable[Turn]) -> list[Exposure]:
    """Every (injected turn, later turn of the same dialogue) pair in ``turns`` that shows the original."""
    by_dialogue: dict[str, list[Turn]] = {}
    for t in turns:
        by_dialogue.setdefault(t.dialogue_id, []).append(t)
    out: list[Exposure] = []
    for group in by_dialogue.values():
        if len(group) < 2:
            continue
        for a in group:
            for b in group:
                out += exposes(a, b)
    return out


def exposed_turns(turns: Iterable[Turn]) -> set[str]:
    """turn_ids of injected turns some other turn in ``turns`` exposes."""
    return {e.injected for e in exposures(turns)}


def consistent_with(candidate: Turn, chosen: Sequence[Turn]) -> bool:
    """Adding ``candidate`` to ``chosen`` (same dialogue or not) creates no exposure either way."""
    return not any(exposes(candidate, c) or exposes(c, candidate) for c in chosen
                   if c.dialogue_id == candidate.dialogue_id)


# ------------------------------------------------------------ injection mode
def injection_mode(turn: Turn) -> Optional[str]:
    """'natural' or 'template' for an injected turn, None for an untouched one."""
    if injected_class(turn) is None:
        return None
    mut = (turn.meta or {}).get("mutation") or {}
    return "natural" if mut.get("injection") == "natural" else "template"


def injection_modes(turns: Iterable[Turn]) -> Counter:
    """How many injected turns each mode wrote: Counter({'natural': n, 'template': m})."""
    return Counter(m for m in (injection_mode(t) for t in turns) if m is not None)


def templated_reply_turns(turns: Iterable[Turn]) -> list[str]:
    """turn_ids whose agent reply was written from a fixed template (template-mode WNF / PC)."""
    return [t.turn_id for t in turns if injection_mode(t) == "template" and injected_class(t) in ("WNF", "PC")]


def blinding_report(turns: Sequence[Turn]) -> dict:
    """What the lead should know about a set of audited turns (slice turns, with meta)."""
    exp = exposures(turns)
    return {"n": len(turns), "injection_modes": dict(injection_modes(turns)),
            "templated_replies": templated_reply_turns(turns),
            "exposures": len(exp), "exposed_turns": sorted({e.injected for e in exp})}


__all__ = ["Exposure", "INJECTED_CLASSES", "injected_class", "exposes", "exposures", "exposed_turns",
           "consistent_with", "injection_mode", "injection_modes", "templated_reply_turns", "blinding_report"]
