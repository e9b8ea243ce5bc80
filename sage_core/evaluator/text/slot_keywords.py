"""Which words signal a slot: own name tokens, hint words, value-type hints, description
words, each weighted by how specific it is to the slot."""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from sage_core.data.profile import EMPTY_PROFILE, CorpusProfile
from sage_core.evaluator.lru import LruDict
from sage_core.evaluator.text.lexicon import (
    DIRECTION_HINTS,
    GENERIC_BOOL_WORDS,
    NAME_HINTS,
    OPPOSITE_END,
    SLOT_NAME_FALLBACK_STOP,
    STOP,
    TYPE_HINTS,
)
from sage_core.evaluator.text.normalize import tokens, tokens_with_spans
from sage_core.specs.workflow import WorkflowSpec, description_head


@lru_cache(maxsize=4096)
def _own_tokens(slot: str) -> tuple[str, ...]:
    """Content words of a slot name; 'to'/'from' only steer direction hints, never match alone."""
    raw = tokens(slot.replace("_", " "))
    own = [t for t in raw if t not in STOP]
    return tuple(own or [t for t in raw if t not in SLOT_NAME_FALLBACK_STOP])


@lru_cache(maxsize=8192)
def _slot_words(slot: str, description: str) -> frozenset[str]:
    head = [w for w in description_head(description) if w not in ("name", "names", "title")]
    return frozenset(tokens(slot.replace("_", " "))) | frozenset(head)


def slot_words(spec: WorkflowSpec, slot: str) -> frozenset[str]:
    """The words that say what a slot holds: its name's tokens and the head of its description ("town" for
    ``flying_from``, "Town the trip starts in"; "city", "hosting" for "City hosting the event"). Role tests (a
    place, a kind, a sum, a range's end) read these, so a schema that names a slot in other words keeps the slot's
    role. "Name of ..." heads almost every text slot's description and says nothing of its role: only a slot's own
    name makes it a name slot."""
    sp = spec.slots.get(slot)
    return _slot_words(slot, sp.description if sp is not None else "")


def _desc_stems(desc: str) -> list[str]:
    """Content words of a slot description plus simple stems ("leaving" -> "leave", "arrival" -> "arrive")."""
    out = []
    for t in tokens(desc):
        if t in STOP or len(t) <= 3:
            continue
        out.append(t)
        for suf, rep in (("ing", "e"), ("ing", ""), ("al", "e"), ("ure", "")):
            if t.endswith(suf) and len(t) - len(suf) >= 3:
                out.append(t[:-len(suf)] + rep)
    return out


# Keyword tables per (schema content, profile): the extractors ask for a slot's keywords once per slot per
# sentence, and rebuilding them (every other slot's name tokens included) was a third of the warm per-turn time.
# Keyed by the slots' content, not the spec object, so a spec edited in place never reads a stale table.
_TABLES: "LruDict[dict[str, tuple[tuple[str, float], ...]]]" = LruDict(256)


def _slots_key(spec: WorkflowSpec) -> tuple:
    return tuple((n, s.description, s.value_type) for n, s in spec.slots.items())


def keyword_table(spec: WorkflowSpec, profile: CorpusProfile = EMPTY_PROFILE
                  ) -> dict[str, tuple[tuple[str, float], ...]]:
    """``slot_keywords`` of every slot of ``spec``, computed once per schema content and profile (do not mutate)."""
    key = (_slots_key(spec), profile)
    table = _TABLES.get(key)
    if table is None:
        table = _TABLES.put(key, {s: tuple(_slot_keywords(spec, s, profile)) for s in spec.slots})
    return table


def slot_keywords(spec: WorkflowSpec, slot: str, profile: CorpusProfile = EMPTY_PROFILE) -> list[tuple[str, float]]:
    """Words that signal a request for ``slot`` (see ``_slot_keywords``); cached per schema via ``keyword_table``."""
    if slot in spec.slots:
        return list(keyword_table(spec, profile)[slot])
    return _slot_keywords(spec, slot, profile)


def _slot_keywords(spec: WorkflowSpec, slot: str, profile: CorpusProfile = EMPTY_PROFILE) -> list[tuple[str, float]]:
    """Words that signal a request for ``slot``, weighted by how specific they are to it.

    Own name tokens count 1.0 when no other slot of the service shares them
    (``time`` in appointment_time) and 0.45 when shared (``appointment``);
    hint words count 0.6, value-type hints ("when", "how many") 0.4.
    A slot the corpus profile has hints for (run-together names such as
    ``train-leaveat``) takes its weights from ``profile.slot_hints`` instead,
    plus description words and their stems (0.3).
    """
    key = profile.hint_key(slot)
    if key is not None:
        return _hinted_keywords(spec, slot, profile.slot_hints[key])
    shared: dict[str, int] = {}
    for other in spec.slots:
        for t in set(_own_tokens(other)):
            shared[t] = shared.get(t, 0) + 1
    kws: dict[str, float] = {}
    raw_name = set(tokens(slot.replace("_", " ")))

    def put(k: str, w: float) -> None:
        if kws.get(k, 0.0) < w:
            kws[k] = w
    for t in _own_tokens(slot):
        w = 1.0 if shared.get(t, 0) <= 1 else 0.45
        put(t, w)
        if t.endswith("s") and len(t) > 3:
            put(t[:-1], w)
        for h in NAME_HINTS.get(t, ()):
            if any(OPPOSITE_END.get(x) in raw_name and x not in raw_name for x in h.split()):
                continue  # "check out" is no hint for check_in_date
            put(h, 0.6 if w == 1.0 else 0.4)
    first = tokens(slot.replace("_", " "))[:1]
    for h in DIRECTION_HINTS.get(first[0] if first else "", ()):
        put(h, 0.8 if " " in h else 0.5)
    vt = spec.slots[slot].value_type if slot in spec.slots else "text"
    for h in TYPE_HINTS.get(vt, ()):
        put(h, 0.4)
    desc = spec.slots[slot].description if slot in spec.slots else ""
    for t in tokens(desc):
        if t not in STOP and len(t) > 3:
            put(t, 0.3)
    return sorted(kws.items())


def _hinted_keywords(spec: WorkflowSpec, slot: str, hints: tuple[tuple[str, float], ...]) -> list[tuple[str, float]]:
    kws: dict[str, float] = {}

    def put(k: str, w: float) -> None:
        if kws.get(k, 0.0) < w:
            kws[k] = w
    for h, w in hints:
        put(h, w)
    dom = slot.split("-", 1)[0]
    put(dom, 0.45)  # the domain word is shared by every slot of the service
    desc = spec.slots[slot].description if slot in spec.slots else ""
    for t in _desc_stems(desc):
        if t != dom:
            put(t, 0.3)
    return sorted(kws.items())


# inflection endings dropped before comparing a word with a yes/no slot's keyword ("sharing" / "share" / "shared")
STEM_SUFFIXES = ("ing", "ed", "es", "s", "e")
MIN_STEM = 4  # a stem shorter than this is compared as the whole word


def stem(w: str) -> str:
    for suf in STEM_SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= MIN_STEM:
            return w[:-len(suf)]
    return w


def keyword_match(word: str, kw: str) -> bool:
    """``word`` mentions the yes/no keyword ``kw``: it starts with the keyword's first six letters ("outdoors"
    for "outdoor"), has the same stem ("sharing the cab" for shared_ride, "smoke" for smoking_allowed), or is its
    singular or plural ("a pet-friendly flat" for pets_allowed: stems of short words are the words themselves)."""
    return (word.startswith(kw[:6]) or stem(word) == stem(kw)
            or (len(word) >= 3 and len(kw) >= 3 and (word + "s" == kw or kw + "s" == word)))


def names_keyword(words: Sequence[str], kws: Sequence[str]) -> bool:
    """One of ``words`` mentions one of the yes/no keywords ``kws`` (``keyword_match``)."""
    return any(keyword_match(w, k) for k in kws for w in words)


def bool_keywords(spec: WorkflowSpec, slot: str, profile: CorpusProfile = EMPTY_PROFILE) -> list[str]:
    """Words whose mention means the user talks about a yes/no slot (outdoor, laundry, insurance...)."""
    return [k for k, w in slot_keywords(spec, slot, profile) if w >= 0.6 and len(k) > 3 and " " not in k
            and k not in GENERIC_BOOL_WORDS]


_ANY_DETERMINERS = frozenset({"the", "my", "his", "her", "their", "your", "our", "its", "them"})


def open_choice_span(text: str, spec: WorkflowSpec, slot: str, profile: CorpusProfile = EMPTY_PROFILE
                     ) -> tuple[int, int] | None:
    """Where ``text`` leaves the choice of the slot open by naming the slot after "any" ("any class ticket", "any
    price range", "to any of his accounts", "any airline"): a "no preference" said with the slot's own words, which
    no fixed phrase lists. At most one word between "any" (or "any of the / my / ...") and a keyword of the slot."""
    kws = [k for k, w in slot_keywords(spec, slot, profile) if w >= 0.45 and " " not in k and len(k) > 3]
    if not kws:
        return None
    toks = tokens_with_spans(text)
    for i, (t, a, _) in enumerate(toks):
        if t != "any":
            continue
        j = i + 1
        if j < len(toks) and toks[j][0] == "of":
            j += 1
        if j < len(toks) and toks[j][0] in _ANY_DETERMINERS:
            j += 1
        for w, _, b in toks[j:j + 2]:
            if any(keyword_match(w, k) for k in kws):
                return a, b
    return None
