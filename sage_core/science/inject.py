"""Seeded failure injectors: turn a clean agent turn into a labelled IUV/WNF/PC/UV failure.

Each injector mutates the reply and/or the tracker state exactly as the
failure's definition in ARCHITECTURE.md requires, leaves every other field
untouched, and returns ``None`` when the failure cannot be produced on that
turn (so a slice builder can pick another turn). Injected turns carry
``gold = failure/<class>`` and ``meta.injected / original_agent / mutation``;
``mark_clean`` labels an untouched turn acceptable.

Randomness comes only from the ``random.Random`` passed in, and candidates are
always sorted before a choice, so the same seed gives the same slice.
"""
from __future__ import annotations

import copy
import random
import re
from collections import defaultdict
from typing import Callable, Iterable, Optional

from sage_core.data.types import AgentAct, Gold, Turn
from sage_core.specs.workflow import WorkflowSpec

CLASSES = ("IUV", "WNF", "PC", "UV")

# --- normalisation for "does this value appear anywhere?" -------------------------
_NUM_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
_NUM_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "first": "1", "second": "2", "third": "3",
                   "fourth": "4", "fifth": "5", "sixth": "6", "seventh": "7", "eighth": "8", "ninth": "9",
                   "tenth": "10", "noon": "12", "midnight": "12", "half": "30", "quarter": "15"})
# The injector keeps its own normaliser and stop words on purpose: injected data must not be
# built with the evaluator's text code, or a detector could be measuring itself.
_STOP = {"the", "and", "for", "with", "from", "that", "this", "any", "are", "can", "you", "your", "have",
         "will", "would", "like", "please", "street", "road", "avenue", "city", "place", "hotel", "restaurant",
         "bar", "inn", "house", "center", "centre", "park", "new", "san", "los", "las", "del", "de", "la"}
_TOKEN = re.compile(r"[a-z0-9]+")


def norm_text(text: str) -> str:
    """Lowercase, number words -> digits, '12th' -> '12', punctuation -> spaces."""
    toks = []
    for tok in _TOKEN.findall(str(text).lower()):
        tok = _NUM_WORDS.get(tok, tok)
        m = re.fullmatch(r"(\d+)(st|nd|rd|th|am|pm|s)", tok)
        if m:
            toks.append(m.group(1))
            if m.group(2) in ("am", "pm"):
                toks.append(m.group(2))
            continue
        toks.append(tok)
    return " " + " ".join(toks) + " "


def _hour_forms(value: str) -> set[str]:
    """Both clock forms of a time value ('19:15' -> {'19', '7'}), so '7 pm' counts as support."""
    m = re.match(r"\s*(\d{1,2})(?::(\d{2}))?", value)
    if not m:
        return set()
    h = int(m.group(1))
    forms = {str(h)}
    if h > 12:
        forms.add(str(h - 12))
    elif h < 12 and "pm" in value.lower():
        forms.add(str(h + 12))
    return forms


def appears(value: str, corpus_norm: str, value_type: str = "text") -> bool:
    """Could ``value`` be read off the (normalised) text? Errs on the side of 'yes'.

    Whole normalised value, any content token (>= 4 chars, not a stopword), or for
    numbers/times/dates any of their numerals counts as an appearance.
    """
    nv = norm_text(value).strip()
    if not nv:
        return True
    if f" {nv} " in corpus_norm:
        return True
    toks = nv.split()
    if any(len(t) >= 4 and t not in _STOP and f" {t} " in corpus_norm for t in toks):
        return True
    if value_type in ("time", "number", "date") or all(t.isdigit() for t in toks):
        nums = {t for t in toks if t.isdigit()} | (_hour_forms(value) if value_type == "time" else set())
        nums = {str(int(x)) for x in nums}
        if value_type == "time":
            nums -= {"0", "00"}
        if any(f" {x} " in corpus_norm for x in nums):
            return True
    return False


def _same(a: Optional[str], b: Optional[str]) -> bool:
    return a is not None and b is not None and norm_text(a) == norm_text(b)


# --- value pool for UV -----------------------------------------------------------
class ValuePool:
    """Values each (service, slot) takes anywhere in a corpus: plausible but unsupported UV values."""

    def __init__(self, turns: Iterable[Turn] = ()):
        vals: dict[tuple[str, str], set[str]] = defaultdict(set)
        for t in turns:
            svc = t.workflow.split(":", 1)[0]
            for st in (t.state_before, t.state_after):
                for s, v in st.items():
                    if v and v.lower() != "dontcare":
                        vals[(svc, s)].add(v)
        self.values = {k: sorted(v) for k, v in vals.items()}

    def get(self, service: str, slot: str) -> list[str]:
        return self.values.get((service, slot), [])


_MONTHS = ("January February March April May June July August September October November December").split()


def _typed_values(value_type: str, rng: random.Random) -> list[str]:
    """A few random well-formed values of a type (shuffled; caller filters the supported ones)."""
    if value_type == "time":
        out = [f"{h}:{m:02d}" for h in range(8, 23) for m in (0, 15, 30, 45)]
    elif value_type == "number":
        out = [str(i) for i in range(1, 10)]
    elif value_type == "date":
        out = [f"{mo} {d}" for mo in _MONTHS for d in (3, 9, 14, 17, 22, 26)]
    else:
        return []
    rng.shuffle(out)
    return out[:40]


# --- helpers ---------------------------------------------------------------------------
def _context(turn: Turn) -> str:
    return norm_text(" ".join([u.text for u in turn.history] + [turn.user]))


def _finish(turn: Turn, cls: str, mutation: dict) -> Turn:
    turn.gold = Gold("failure", cls)
    turn.meta = dict(turn.meta, injected=cls, mutation=mutation)
    return turn


def _copy(turn: Turn) -> Turn:
    t = copy.deepcopy(turn)
    t.meta = dict(t.meta, original_agent=turn.agent)
    return t


def _desc(spec: WorkflowSpec, slot: str) -> str:
    d = spec.describe_slot(slot).strip().rstrip(".")
    return d[:1].lower() + d[1:] if d else slot.replace("_", " ")


_REQUEST_TEMPLATES = ("Could you tell me the {d}?", "What is the {d}?", "May I have the {d}, please?",
                      "Can you let me know the {d}?")
_YESNO_TEMPLATES = ("Could you tell me {d}?", "Can you let me know {d}?")


def request_text(spec: WorkflowSpec, slot: str, rng: random.Random) -> str:
    """A natural request for ``slot`` built from its schema description."""
    d = _desc(spec, slot)
    first = d.split(" ", 1)[0]
    if first in ("whether", "if"):
        return rng.choice(_YESNO_TEMPLATES).format(d=d)
    if first in ("the", "a", "an"):
        d = d.split(" ", 1)[1] if " " in d else d
    return rng.choice(_REQUEST_TEMPLATES).format(d=d)


# --- the four injectors ----------------------------------------------------------------
def inject_iuv(turn: Turn, spec: WorkflowSpec, rng: random.Random, pool: Optional[ValuePool] = None) -> Optional[Turn]:
    """IUV: a value the user gave in u_t and s_t took is dropped from s_t (unfilled or stale)."""
    cands = []
    for uv in turn.user_values or []:
        now = turn.state_after.get(uv.slot)
        before = turn.state_before.get(uv.slot)
        # s_t must hold v and have written it in this turn (else there is nothing to drop)
        if now is None or not _same(now, uv.value) or (before is not None and _same(before, now)):
            continue
        if uv.value.lower() == "dontcare":
            continue
        cands.append(uv)
    if not cands:
        return None
    spanned = [u for u in cands if u.span is not None]  # values read off u_t are the clearest IUVs
    uv = rng.choice(sorted(spanned or cands, key=lambda u: (u.slot, u.value)))
    t = _copy(turn)
    before = turn.state_before.get(uv.slot)
    if before is not None and before.strip():
        t.state_after[uv.slot] = before
        mode = "stale"
    else:
        del t.state_after[uv.slot]
        mode = "unfilled"
    return _finish(t, "IUV", {"slot": uv.slot, "value": uv.value, "mode": mode,
                              "state_after_value": turn.state_after.get(uv.slot),
                              "kept_value": before if mode == "stale" else None})


def wnf_candidates(turn: Turn, spec: WorkflowSpec) -> list[tuple[str, str]]:
    """(slot, why) pairs an agent must not request: not in Next(W, s_{t-1}).

    Slots the user mentions in u_t are left out: re-asking those is a
    legitimate re-confirmation when the tracker missed them.
    """
    legal = spec.legal_next(turn.state_before)
    supplied = {uv.slot for uv in (turn.user_values or [])}
    out = []
    intent = set(spec.intent_slots)
    for s in sorted(spec.slots):
        if s in legal or s in supplied or s in turn.state_after and s not in turn.state_before:
            continue
        if s in intent:
            # still held in s_t: a slot the tracker cleared (intent switch, reset) may be asked again
            if spec.filled(turn.state_before, s) and spec.filled(turn.state_after, s):
                out.append((s, "already filled"))
        elif not spec.filled(turn.state_before, s):
            out.append((s, "not a slot of the intent"))
    return out


def choose_wnf_slot(cands: list[tuple[str, str]], rng: random.Random) -> tuple[str, str]:
    """One (slot, why) of ``wnf_candidates``: re-asking a known slot is the classic WNF, so an already filled
    slot is preferred half of the time when there is one (template and natural injection alike)."""
    filled = [c for c in cands if c[1] == "already filled"]
    group = filled if filled and (len(filled) == len(cands) or rng.random() < 0.5) else \
        [c for c in cands if c[1] != "already filled"]
    return rng.choice(group)


def inject_wnf(turn: Turn, spec: WorkflowSpec, rng: random.Random, pool: Optional[ValuePool] = None) -> Optional[Turn]:
    """WNF: the reply becomes a request for a slot outside Next(W, s_{t-1})."""
    cands = wnf_candidates(turn, spec)
    if not cands:
        return None
    slot, why = choose_wnf_slot(cands, rng)
    t = _copy(turn)
    t.agent = request_text(spec, slot, rng)
    t.agent_acts = [AgentAct("REQUEST", slot)]
    return _finish(t, "WNF", {"slot": slot, "reason": why, "legal_next": sorted(spec.legal_next(turn.state_before))})


def pc_missing(turn: Turn, spec: WorkflowSpec) -> list[str]:
    """Required slots the agent cannot know: empty in s_{t-1}, not given in u_t, and empty in s_t.

    s_t counts because a user accepting an offer ("book me that bus") fills
    slots from the agent's own earlier turn without a user value in u_t.
    """
    known = dict(turn.state_before)
    for uv in turn.user_values or []:
        known[uv.slot] = uv.value
    return [s for s in spec.missing_for_outcome(known) if not spec.filled(turn.state_after, s)]


def inject_pc(turn: Turn, spec: WorkflowSpec, rng: random.Random, pool: Optional[ValuePool] = None) -> Optional[Turn]:
    """PC: the reply becomes a confirmation although a required slot is still unknown."""
    if turn.user_values is None:
        return None  # without annotated user values we cannot tell what the agent knows
    missing = pc_missing(turn, spec)
    if not missing:
        return None
    known = dict(turn.state_before)
    known.update({uv.slot: uv.value for uv in turn.user_values})
    filled = [(s, v) for s, v in known.items() if spec.filled(known, s) and v.lower() != "dontcare"]
    if not filled:
        return None
    filled = sorted(filled, key=lambda sv: (spec.intent_slots.index(sv[0]) if sv[0] in spec.intent_slots
                                            else len(spec.slots), sv[0]))
    parts = [f"{s.replace('_', ' ')}: {v}" for s, v in filled]
    what = spec.intent.replace("_", " ")
    what = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", what).lower()
    lead = rng.choice(("Please confirm the following details", "Let me confirm", "To confirm"))
    t = _copy(turn)
    t.agent = f"{lead} for your {what} request - " + ", ".join(parts) + ". Shall I go ahead?"
    t.agent_acts = [AgentAct("CONFIRM", s, v) for s, v in filled]
    return _finish(t, "PC", {"missing": missing, "confirmed": [s for s, _ in filled]})


def uv_slot_order(turn: Turn, spec: WorkflowSpec, rng: random.Random) -> tuple[str, list[str]]:
    """UV candidates (both injection modes): the normalised text a value must not appear in, and the
    non-boolean intent slots the user did not supply, empty ones first, each group shuffled."""
    ctx_all = _context(turn) + norm_text(turn.agent) + norm_text(
        " ".join(list(turn.state_before.values()) + list(turn.state_after.values())))
    supplied = {uv.slot for uv in (turn.user_values or [])}
    slots = [s for s in spec.intent_slots if s not in supplied and spec.slots[s].value_type != "bool"]
    empty = sorted(s for s in slots if not spec.filled(turn.state_after, s))
    kept = sorted(s for s in slots if spec.filled(turn.state_after, s))
    rng.shuffle(empty)
    rng.shuffle(kept)
    return ctx_all, empty + kept


def inject_uv(turn: Turn, spec: WorkflowSpec, rng: random.Random, pool: Optional[ValuePool] = None) -> Optional[Turn]:
    """UV: s_t gets a value of the right type that nothing in history + u_t supports."""
    ctx_all, order = uv_slot_order(turn, spec, rng)
    for slot in order:
        ss = spec.slots[slot]
        sources = []
        default = spec.optional.get(slot)  # an intent's default value is supported by the schema itself
        if ss.possible_values:
            sources.append(("schema", [v for v in ss.possible_values
                                       if v.lower() != "dontcare" and not _same(v, default)]))
        if pool is not None:
            sources.append(("other dialogue", pool.get(spec.service, slot)))
        sources.append(("typed", _typed_values(ss.value_type, rng)))
        for src, vals in sources:
            ok = [v for v in vals if v.lower() not in ("true", "false") and not _same(v, default)
                  and not appears(v, ctx_all, ss.value_type)]
            if ok:
                value = rng.choice(sorted(ok) if src != "typed" else ok)
                t = _copy(turn)
                old = t.state_after.get(slot)
                t.state_after[slot] = value
                return _finish(t, "UV", {"slot": slot, "value": value, "source": src, "replaced": old})
    return None


INJECTORS: dict[str, Callable[..., Optional[Turn]]] = {
    "IUV": inject_iuv, "WNF": inject_wnf, "PC": inject_pc, "UV": inject_uv}


def inject(turn: Turn, cls: str, spec: WorkflowSpec, rng: random.Random,
           pool: Optional[ValuePool] = None) -> Optional[Turn]:
    """Inject failure class ``cls`` into a copy of ``turn``; None if not applicable."""
    if cls not in INJECTORS:
        raise ValueError(f"unknown failure class '{cls}' (use {', '.join(CLASSES)})")
    return INJECTORS[cls](turn, spec, rng, pool)


def mark_clean(turn: Turn) -> Turn:
    """A copy of an uninjected turn labelled acceptable."""
    t = copy.deepcopy(turn)
    t.gold = Gold("acceptable", None)
    return t


def turn_rng(seed: int, turn_id: str, cls: str) -> random.Random:
    """Per (seed, turn, class) generator: an injection does not depend on what was sampled before."""
    return random.Random(f"{seed}|{turn_id}|{cls}")


__all__ = ["CLASSES", "INJECTORS", "ValuePool", "inject", "inject_iuv", "inject_wnf", "inject_pc",
           "inject_uv", "mark_clean", "turn_rng", "norm_text", "appears", "wnf_candidates", "pc_missing"]
