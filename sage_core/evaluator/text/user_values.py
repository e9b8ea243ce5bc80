"""Values the user supplies in u_t, attributed to slots: schema values and their aliases,
typed patterns (times, dates, numbers), booleans, dontcare and cue-anchored free text."""
from __future__ import annotations

import dataclasses
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Optional

from sage_core.data.profile import EMPTY_PROFILE, CorpusProfile
from sage_core.data.types import Turn, UserValue
from sage_core.evaluator.text.agent_acts import requested_slots, states_value
from sage_core.evaluator.text.lexicon import (
    ABOUT_IT,
    AMOUNT_SLOT_WORDS,
    APPROVING_NEGATION,
    ASKING,
    COMMON_CAPS,
    FUNCTION_WORDS,
    KIND_NOUN,
    LEAD_NO,
    LEAD_PREPOSITIONS,
    LOWERCASE_NAME_STOP,
    MONEY_AMOUNT,
    MONEY_WORDS,
    NAME_ABBREVIATIONS,
    NAME_CUE,
    NEGATED_AFTER,
    NEGATION,
    NOT_A_KIND,
    NOT_A_KIND_FUNCTION,
    NOT_A_KIND_SUFFIX,
    PLACE_WORDS,
    RANGE_END_WORDS,
    REJECTED_BEFORE,
    TO_VERB_BEFORE,
    TYPE_LIKE,
    Span,
)
from sage_core.evaluator.text.normalize import (
    clean_text,
    find_dontcare,
    find_in_text,
    iter_dates,
    iter_numbers,
    iter_street_addresses,
    iter_times,
    tokens,
    tokens_with_spans,
    values_match,
    word_forms,
)
from sage_core.evaluator.text.sentences import (
    asks_about_offer,
    is_question,
    marked_question,
    previous_agent_text,
    sentence_of,
    sentence_start,
    sentences,
)
from sage_core.evaluator.text.slot_keywords import bool_keywords, slot_keywords, slot_words, stem
from sage_core.specs.workflow import WorkflowSpec

if TYPE_CHECKING:
    from sage_core.evaluator.text.heads import Heads


def capitalised_runs(text: str) -> list[tuple[str, Span]]:
    """Capitalised names in u_t ("Los Altos", "Nairobi, Kenya"), minus sentence-initial and common words."""
    runs = []
    starts = {off + len(sent) - len(sent.lstrip()) for sent, off in sentences(text)}
    busy = [sp for _, sp in iter_dates(text)] + [sp for _, sp in iter_times(text)]
    addresses = list(iter_street_addresses(text))
    for words in _run_words(text):
        while words and (words[0][0].strip(".,!?").lower() in COMMON_CAPS or
                         (words[0][1] in starts and len(words) == 1) or
                         (words[0][0].lower() in LEAD_PREPOSITIONS and len(words) > 1)):  # "In San Mateo."
            words = words[1:]
        glued = any(w.endswith(",") for w, _ in words[:-1])
        while words and words[-1][0].strip(".,!?").lower() in COMMON_CAPS | {"of", "the", "and", "&"} \
                and not (len(words) > 1 and words[-2][0].endswith(",") and words[-1][0].strip(".!?").isupper()):
            words = words[:-1]  # "Portland, OR" keeps its region code
        if not words or (glued and len(words) == 1 and words[0][1] in starts):  # "Yup, Please ..." less "Please"
            continue
        a = words[0][1]
        val = text[a:words[-1][1] + len(words[-1][0])].rstrip(".,!?")
        if any(a < y and x < a + len(val) for x, y in busy):
            continue
        addr = next(((x, y) for x, y in addresses if x <= a < y), None)
        if addr is not None:  # the whole address, house number and unit included
            if any(r[1] == addr for r in runs):
                continue
            a, val = addr[0], text[addr[0]:addr[1]]
        runs.append((val, (a, a + len(val))))
    return runs


# a name's run: capitalised words joined by spaces (and the connectives a name may hold), or ", XX" for a region code
# in either case ("Portland, OR", "Sacramento, Ca")
_RUN = re.compile(r"(?:[A-Z][\w'&.-]*)(?:,\s*(?:[A-Z]{2,3}|[A-Z][a-z])\b(?![\w'])|"
                  r",\s*[A-Z][a-z]{2,}\b(?![\w'])(?!,?\s+(?:(?:and|or|&)\s+)?[A-Z])|"
                  r"(?:\s+(?:(?:of|by|de|la|&|and)\s+)?(?:the\s+|a\s+|an\s+)?)[A-Z][\w'&.-]*)*")


def _run_words(text: str) -> list[list[tuple[str, int]]]:
    """(word, offset) lists of each capitalised run, cut after a word that ends a sentence."""
    out = []
    for m in _RUN.finditer(text):
        words, pos = [], m.start()
        for w in re.split(r"\s+", m.group(0)):
            pos = text.find(w, pos)
            words.append((w, pos))
            pos += len(w)
            stem = w.rstrip(".")
            if w.endswith(".") and len(stem.replace(".", "")) > 1 and "." not in stem \
                    and stem.lower() not in NAME_ABBREVIATIONS:
                out.append(words)
                words = []
        if words:
            out.append(words)
    return out


# the cue words before a name that ``_anchored_text_values`` reads ("in", "from", "to" ...)
_LOWER_CUE = re.compile(r"\b(?:in|near|around|from|to|towards|visiting)\s+", re.I)
LOWERCASE_NAME_MAX_WORDS = 3


def lowercase_runs(text: str) -> list[tuple[str, Span]]:
    """Names in an utterance written without capitals ("please find a therapist in oakland for me", "from sacramento,
    ca to anaheim, ca"): the words after a place or person cue, up to ``LOWERCASE_NAME_MAX_WORDS``, a punctuation mark
    or a word of ``LOWERCASE_NAME_STOP``, with a two-letter region after a comma. Empty for text with a capital letter,
    whose names ``capitalised_runs`` finds."""
    if text != text.lower():
        return []
    runs = []
    for m in _LOWER_CUE.finditer(text):
        to = m.group(0).strip() == "to"
        before = tokens(text[max(0, m.start() - 24):m.start()])[-1:]
        if to and before and before[0] in TO_VERB_BEFORE:  # "going to" names a place
            continue
        words: list[tuple[int, int, int]] = []  # (start, end of the name's part, end of the written word)
        for w in re.finditer(r"[a-z][a-z'&.-]*", text[m.end():]):
            a, b = m.end() + w.start(), m.end() + w.end()
            gap = text[(words[-1][2] if words else m.end()):a]
            word = w.group(0).rstrip(".")
            if (words and not re.fullmatch(r"\s+|,\s*", gap)) or (not words and gap) or word in LOWERCASE_NAME_STOP \
                    or (not words and to and word.endswith("ing")):  # "change it to leaving"
                break
            ends = re.fullmatch(r"[\s.!?]*", text[b:]) is not None
            if "," in gap and not (len(word) == 2 or ends):
                break  # a region joins across a comma: "sacramento, ca", "... in london, england."
            abbreviation = w.group(0).endswith(".") and word in NAME_ABBREVIATIONS  # "in st. helena"
            words.append((a, b if abbreviation else a + len(word), b))
            if "," in gap or (w.group(0).endswith(".") and not abbreviation) or len(words) == LOWERCASE_NAME_MAX_WORDS:
                break
        if words:
            a, b = words[0][0], words[-1][1]
            runs.append((text[a:b], (a, b)))
    return runs


def _capitalised_run(text: str) -> Optional[tuple[str, Span]]:
    runs = capitalised_runs(text)
    return runs[0] if len(runs) == 1 else None


@lru_cache(maxsize=16)
def alias_words(profile: CorpusProfile) -> frozenset[str]:
    """Every alias phrase of the profile, cleaned: a capitalised alias ("Musical") is a value's word, not a name."""
    return frozenset(clean_text(a) for al in profile.value_aliases.values() for a in al)


# words around a bare answer ("Yes, New York please.") and the words before a name that state a preference ("I like
# Ramen", "I prefer Drama", "I'd go for a Musical", "look it up for Atlanta"): with one slot just asked, the name
# answers it
_ANSWER_FILLERS = frozenset({"yes", "yeah", "ok", "okay", "sure", "please", "thanks", "thank", "you", "i", "think", "it",
                             "its", "is", "um", "well", "just", "the", "a", "an", "in", "at", "to"})
_PREFERENCE_CUES = frozenset({"like", "prefer", "for", "love", "fancy"})


def _anchored_text_values(text: str, spec: WorkflowSpec, slots: list[str], asked: dict[str, float],
                          profile: CorpusProfile) -> list[tuple[str, str, Span, float]]:
    """Free-text values anchored by cue words: "in Portland" (a place slot), "album Joanne", "titled Phone home"."""
    out = []
    lower = lowercase_runs(text)
    if lower:  # "to sports event" names a category, no place
        value_words = {w for sp in spec.slots.values() for pv in sp.possible_values for w in tokens(pv)}
        lower = [r for r in lower if not value_words & set(tokens(r[0]))]
    runs = capitalised_runs(text) + lower
    # a capitalised name is never a sum ("send it to Yumi" says nothing of amount_to_send)
    slots = [s for s in slots if not any(t in MONEY_WORDS + AMOUNT_SLOT_WORDS for t in slot_words(spec, s))]
    place = [s for s in slots if any(t in PLACE_WORDS for t in slot_words(spec, s))
             and not any(t in ("from", "to", "origin") for t in tokens(s.replace("_", " ")))]
    names = [s for s in slots if any(t in ("name", "title") for t in slot_words(spec, s))]
    def having(words: tuple[str, ...]) -> list[str]:
        return [s for s in slots if any(t in words for t in slot_words(spec, s))]
    cue_slots = {"from": having(("from", "origin")), "to": having(("to", "destination")),
                 "by": having(("artist", "director", "directed", "author", "singer", "composer", "writer")),
                 "watch": having(("title", "movie")), "play": having(("track", "song", "title")),
                 "person": having(("receiver", "contact", "recipient", "friend")),
                 "cast": having(("actors", "actor", "starring", "cast", "stars"))}
    aliases = alias_words(profile)
    top_asked = [s for s in slots if asked and asked.get(s) == max(asked.values())]
    for val, (a, b) in runs:
        if clean_text(val) in aliases:
            continue  # "interested in Musical performance": a categorical value's alias, not a place or name
        prev = [t for t in tokens(text[max(0, a - 30):a]) if t not in ("the", "a", "an")][-2:] or [""]
        before = prev[-1]
        target = None
        if ABOUT_IT.search(sentence_of(text, (a, b))) and sentence_of(text, (a, b)).rstrip().endswith("?"):
            continue
        if before in ("in", "near", "around") and len(place) == 1:
            target = place[0]
        elif (before in ("from",) or prev == ["out", "of"]) and len(cue_slots["from"]) == 1:  # "a flight out of X"
            target = cue_slots["from"][0]
        elif (before in ("to", "visiting", "towards") or prev[-2:] == ["going", "to"]) and len(cue_slots["to"]) == 1:
            target = cue_slots["to"][0]
        elif before in ("to", "visiting", "towards") and not cue_slots["to"] and len(place) == 1 \
                and (val, (a, b)) not in lower:  # "to include" / "to call" in lower case: a verb, no place
            target = place[0]
        elif before in ("from", "to", "with", "pay", "send") and len(cue_slots["person"]) == 1:
            target = cue_slots["person"][0]
        elif before in ("with", "starring", "featuring") and len(cue_slots["cast"]) == 1:  # "a movie with X"
            target = cue_slots["cast"][0]
        elif before == "by" and len(prev) == 2 and prev[0] in ("starred", "starring", "featured", "featuring") \
                and len(cue_slots["cast"]) == 1:
            target = cue_slots["cast"][0]
        elif before == "by" and len(prev) == 2 and (by_verb := _verb_slot(prev[0], slots, spec)):  # "directed by X"
            target = by_verb
        elif before == "by" and len(cue_slots["by"]) == 1:
            target = cue_slots["by"][0]
        elif before in ("watch", "see") and len(cue_slots["watch"]) == 1:
            target = cue_slots["watch"][0]
        elif before in ("play", "hear") and len(cue_slots["play"]) == 1:
            target = cue_slots["play"][0]
        if not target and len(top_asked) == 1:
            rest = [t for t in tokens(text) if t not in tokens(val) and t not in _ANSWER_FILLERS]
            if not rest or before in _PREFERENCE_CUES:  # "New York." / "I prefer Drama." answering the question
                target = top_asked[0]
        if target:
            out.append((target, val, (a, b), 0.9 if target in asked else 0.6))
            continue
        for slot in slots:  # "album Joanne", "artist Lady Gaga"
            own = [t for t, w in slot_keywords(spec, slot, profile) if w >= 1.0 and " " not in t]
            prev2 = tokens(text[max(0, a - 24):a])[-2:]
            if own and any(t in own for t in prev2):
                out.append((slot, val, (a, b), 0.6))
                break
    m = NAME_CUE.search(text)
    if m and len(names) == 1:
        out.append((names[0], m.group(1), (m.start(1), m.end(1)), 0.6))
    kinds = [s for s in slots if any(t in TYPE_LIKE for t in slot_words(spec, s))]
    km = next((m for m in KIND_NOUN.finditer(text) if _could_be_kind(m.group(1))), None)
    if km and len(kinds) == 1 and not is_question(text, (km.start(1), km.end(1))):  # "is it an economical place?"
        out.append((kinds[0], km.group(1), (km.start(1), km.end(1)), 0.7 if kinds[0] in asked else 0.55))
    return out


def _could_be_kind(word: str) -> bool:
    """The word before a kind noun may name the kind ("jazz music"), not a function word, verb or evaluation."""
    w = word.lower()
    return w not in NOT_A_KIND and w not in NOT_A_KIND_FUNCTION and not NOT_A_KIND_SUFFIX.match(w)


def _verb_slot(verb: str, slots: list[str], spec: WorkflowSpec) -> Optional[str]:
    """The one slot whose name shares the participle's stem ("directed" by: director; "written" by: writer); where no
    name does, the one whose description does (``filmmaker``, "Person who directed the film")."""
    stem = verb[:5] if len(verb) >= 6 else ""
    if not stem:
        return None
    hits = [s for s in slots if any(t.startswith(stem) for t in tokens(s.replace("_", " ")))]
    if not hits:
        hits = [s for s in slots if any(t.startswith(stem) for t in tokens(spec.slots[s].description or ""))]
    return hits[0] if len(hits) == 1 else None


# the word after "<word>, " ends a "Place, Region" name ("Toronto, Canada", "paris, france"): it names the place, not
# the value its word tells apart (Air Canada among the airlines; train-split clean turns: 13 IUV false alarms)
_ENDS_PLACE = re.compile(r"\b\w+,\s*$")
# two values of one slot offered as alternatives ("business or economy is fine", "both business and economy"): the
# user holds neither alone (train-split clean turns: 11 IUV false alarms where s_t says dontcare)
_ALTERNATIVES_GAP = re.compile(r"\s*(?:\w+\s+)?(?:or|and|/)\s+", re.I)


def _alternative_values(text: str, spans: dict[str, Span]) -> set[str]:
    """The values of one slot u_t names side by side as alternatives ("X or Y", "X and Y", "X class or Y class"),
    given where u_t names each of the slot's values (``spans``: value -> span)."""
    found = sorted((sp, pv) for pv, sp in spans.items())
    out: set[str] = set()
    for (a, pa), (b, pb) in zip(found, found[1:]):
        if pa != pb and a[1] <= b[0] and _ALTERNATIVES_GAP.fullmatch(text[a[1]:b[0]]):
            out.update((pa, pb))
    return out


def _distinctive_value(text: str, possible: list[str]) -> Optional[tuple[str, Span]]:
    """(value, span) when u_t names one multi-word value of the slot by the content word that sets it apart from
    values sharing its other words ("play it in my bedroom": Bedroom speaker among TV / Kitchen speaker / Bedroom
    speaker); None when no value, or more than one, is named so."""
    content = {p: [t for t in tokens(p) if t not in FUNCTION_WORDS] for p in possible if p.lower() != "dontcare"}
    hits = []
    for p, words in content.items():
        if len(words) < 2:
            continue
        others = {stem(w) for q, ws in content.items() if q != p for w in ws}
        if not any(stem(w) in others for w in words):
            continue  # not one of a family of values told apart by a word ("Place of Worship" shares nothing)
        own = {w for w in words if len(w) >= 4 and stem(w) not in others}
        forms = own | {w + "s" for w in own}  # the word or its plural, never a stem ("them" is no "Theme")
        hit = next(((a, b) for tok, a, b in tokens_with_spans(text) if tok in forms and not _ENDS_PLACE.search(text[:a])),
                   None)
        if hit:
            hits.append((p, hit))
    return hits[0] if len(hits) == 1 else None


_DIRECTION_FILLER = frozenset({"my", "her", "his", "their", "our", "your", "someone", "someones", "somebody",
                               "somebodys", "s", "the", "a", "an", "any", "of", "one", "own"})
_TO_SIDE = ("to", "destination", "recipient", "receiver", "payee", "return", "arrival", "inbound", "dropoff")


def _slot_named_after(text: str, span: Span, spec: WorkflowSpec, slots: list[str],
                      profile: CorpusProfile) -> Optional[str]:
    """The one slot a keyword of which (its own name words, weight 1) follows a "no preference" phrase within three
    words after "which / what / about / the" ("I don't mind which actors"), else None."""
    after = tokens(text[span[1]:span[1] + 40])[:4]
    if not after or after[0] not in ("which", "what", "about", "the", "any"):
        return None
    hits = {s for s in slots for k, w in slot_keywords(spec, s, profile) if w >= 1.0
            for t in after[1:] if t == k or (len(k) > 3 and t.startswith(k))}
    return next(iter(hits)) if len(hits) == 1 else None


def _range_cue(text: str, span: Span) -> Optional[str]:
    """Which end of a range the words just before a date or time name: "end" ("until", "return on"), "start"
    ("from", "leaving on"), else None."""
    cue = " ".join(tokens(text[max(0, span[0] - 16):span[0]])[-2:])
    if re.search(r"\b(until|till|through|to|back on|return on|out on)$", cue):
        return "end"
    if re.search(r"\b(from|starting|start|on|in on|leave on|leaving on)$", cue):
        return "start"
    verb = " ".join(tokens(text[max(0, span[0] - 32):span[0]])[-4:])
    if RANGE_END_VERB.search(verb):
        return "end"
    if RANGE_START_VERB.search(verb):
        return "start"
    return None


# the verb of a range's end or start just before a date or time, its object and a preposition between ("drop it off
# Monday", "bring it back on the 4th", "pick it up Saturday", "checking in on May 2nd"). Train + dev user turns, the
# date and time mentions of annotated slots that the two-word cues above do not read: end 60 of 62 on an end slot
# (the two others are annotation slips: "I will need to return March 5th" annotated as a departure), start 162 of 162
RANGE_END_VERB = re.compile(r"\b(?:back|return(?:ing)?(?:\s+(?:it|them))?|drop(?:ping)?(?:\s+(?:it|them))?\s+off|"
                            r"check(?:ing)?\s+out|bring(?:ing)?\s+(?:it|them)\s+back)(?:\s+(?:on|by|at))?$")
RANGE_START_VERB = re.compile(r"\b(?:pick(?:ing)?(?:\s+(?:it|them))?\s+up|check(?:ing)?\s+in|grab(?:bing)?\s+(?:it|them)|"
                              r"get(?:ting)?\s+(?:it|them))(?:\s+(?:on|by|at))?$")


def _direction_side(text: str, span: Span, slots: list[str], spec: WorkflowSpec) -> Optional[str]:
    """Of two or more slots that can hold the same value (account_type, recipient_account_type), the one the
    preposition before the mention points to: "to (her) X" the to-side slot, "from (my) X" the other; None when no
    such preposition is next to the mention or it does not single out one slot."""
    if len(slots) < 2:
        return None
    before = tokens(text[max(0, span[0] - 40):span[0]])[-4:]
    word = next((t for t in reversed(before) if t not in _DIRECTION_FILLER), "")
    to_side = [s for s in slots if any(t in _TO_SIDE for t in slot_words(spec, s))]
    other = [s for s in slots if s not in to_side]
    if word in ("to", "into", "towards") and len(to_side) == 1:
        return to_side[0]
    if word == "from" and len(other) == 1:
        return other[0]
    return None


def _money_values(text: str, spec: WorkflowSpec, intent: list[str], asked: dict[str, float]
                  ) -> list[tuple[str, str, Span, float]]:
    """A sum of money stated in u_t ("send 780 dollars"), for the one intent slot that holds an amount."""
    slots = [s for s in intent if spec.slots[s].value_type == "text" and not spec.slots[s].possible_values
             and any(t in AMOUNT_SLOT_WORDS for t in slot_words(spec, s))]
    if len(slots) != 1:
        return []
    for m in MONEY_AMOUNT.finditer(text):
        span = (m.start(), m.end())
        if is_question(text, span) or asks_about_offer(text, span):  # "is it 780 dollars?" asks, it gives nothing
            continue
        return [(slots[0], m.group(0).strip(), span, 0.9 if slots[0] in asked else 0.7)]
    return []


# How often an extracted value is right at each rule confidence the extractor assigns: the share of extracted
# (slot, value) pairs that the annotations hold, over every dev-split turn, text-only, smoothed as (k + 1) / (n + 2)
# and capped at 0.95 (an extracted value stays below an annotated one's 1.0). The rule levels order the rules;
# these are what the levels mean, and what an IUV margin scales by. Recomputed by
# ``python benchmarks/calibrate_extraction.py`` (the dev split only); rule levels not listed keep their value.
EXTRACTION_PRECISION = {0.55: 0.793, 0.6: 0.945, 0.7: 0.949, 0.75: 0.95, 0.8: 0.95, 0.9: 0.95}


def asked_slots(turn: Turn, spec: WorkflowSpec, profile: CorpusProfile = EMPTY_PROFILE,
                heads: Optional["Heads"] = None) -> dict[str, float]:
    """Slot -> confidence of each slot the agent's previous reply asks for: the keyword rules, and with ``heads`` the
    learned requests as the evaluator reads them in a reply (``head_agent_acts``; the rules alone miss "Departure
    city?", "Sure, what genre.", "What food do you want?"), each at its higher confidence."""
    prev = previous_agent_text(turn)
    asked = {s: c for s, c, _ in requested_slots(prev, spec, profile=profile)}
    if heads is not None and prev.strip():
        from dataclasses import replace

        from sage_core.evaluator.text.agent_acts import head_agent_acts
        before = replace(turn, agent=prev, state_after=dict(turn.state_before), user_values=None, agent_acts=None)
        for a in head_agent_acts(before, spec, heads, profile=profile):
            if a.act == "REQUEST" and a.slot in spec.slots and a.confidence > asked.get(a.slot, 0.0):
                asked[a.slot] = a.confidence
    return asked


def extract_user_values(turn: Turn, spec: WorkflowSpec, floor: float = 0.5,
                        profile: CorpusProfile = EMPTY_PROFILE, calibrated: bool = True,
                        heads: Optional["Heads"] = None) -> list[UserValue]:
    """Values the user supplies in u_t, attributed to slots (helped by what the agent just asked, ``asked_slots``);
    each value's confidence is its rule level's dev precision (``EXTRACTION_PRECISION``), or the rule level itself
    when ``calibrated`` is False (what the calibration script measures)."""
    text = turn.user
    asked = asked_slots(turn, spec, profile, heads)
    intent = spec.intent_slots
    found: dict[str, UserValue] = {}

    def add(slot: str, value: str, span: Optional[Span], conf: float) -> None:
        conf = round(min(conf, 0.95), 3)
        old = found.get(slot)
        longer = (old is not None and old.confidence == conf and span and old.span and span != old.span
                  and span[0] <= old.span[0] and old.span[1] <= span[1])  # "conditionally refundable" > "refundable"
        if conf >= floor and (old is None or old.confidence < conf or longer):
            found[slot] = UserValue(slot, value, span, conf)

    def attribute(slots: list[str], base_unique: float) -> list[tuple[str, float]]:
        if not slots:
            return []
        req = [s for s in slots if s in asked]
        if req:
            return [(s, 0.9 / len(req)) if len(req) > 1 else (s, 0.9) for s in req]
        if len(slots) == 1:
            return [(slots[0], base_unique)]
        return [(s, 0.4) for s in slots]

    # categorical values named in the schema
    by_value: dict[str, list[str]] = {}
    sharing: dict[str, list[str]] = {}  # a value -> the intent slots that can hold it
    for slot in intent:
        for pv in spec.slots[slot].possible_values:
            sharing.setdefault(pv.lower(), []).append(slot)
    for slot in intent + [s for s in spec.slots if s not in intent]:
        sp = spec.slots[slot]
        if sp.value_type in ("bool", "number") or not sp.possible_values:
            continue
        named_by_word = _distinctive_value(text, sp.possible_values) if slot in intent else None
        named = {pv: find_in_text(pv, text, "categorical") for pv in sp.possible_values if pv.lower() != "dontcare"}
        alternatives = _alternative_values(text, {pv: span for pv, span in named.items() if span})
        for pv in sp.possible_values:
            if pv.lower() == "dontcare" or pv in alternatives:
                continue
            span, base = named[pv], 0.8
            if span is None:
                for alias in profile.value_aliases.get(clean_text(pv), ()):
                    span, base = find_in_text(alias, text, "text"), 0.6
                    if span:
                        break
            if span is None and named_by_word and named_by_word[0] == pv:
                span, base = named_by_word[1], 0.6
            if span and REJECTED_BEFORE.search(text[max(0, span[0] - 24):span[0]]):
                continue  # "a flexible ticket instead of a value ticket": value is what the user does not want
            if span and not is_question(text, span):
                by_value.setdefault(pv, []).append(slot)
                side = _direction_side(text, span, sharing.get(pv.lower(), []), spec)
                if side is not None:  # "from my savings ... to her checking": the preposition picks the slot
                    if side == slot:
                        add(slot, pv, span, base if base == 0.8 else min(base, 0.7))
                    continue
                for slot_, conf in attribute([s for s in by_value[pv] if s in intent] or by_value[pv], base):
                    add(slot_, pv, span, conf if base == 0.8 else min(conf, 0.7))
    # a "none" value said as the slot's absence: "with no subtitles" for subtitle_language = None
    for slot in intent:
        sp = spec.slots[slot]
        none = next((pv for pv in sp.possible_values if clean_text(pv) == "none"), None)
        if sp.value_type != "categorical" or none is None or slot in found:
            continue
        kws = [k for k, w in slot_keywords(spec, slot, profile) if w >= 1.0 and len(k) > 3]
        m = next((m for k in kws for m in re.finditer(rf"\b(?:no|without)\s+{re.escape(k)}\w*", text, re.I)), None)
        if m and not is_question(text, m.span()):
            add(slot, none, m.span(), 0.8)
    # typed patterns
    typed = {"time": list(iter_times(text)), "date": list(iter_dates(text)), "number": list(iter_numbers(text))}
    for vt, mentions in typed.items():
        slots = [s for s in intent if spec.slots[s].value_type == vt]
        if not mentions or not slots:
            continue
        chosen = mentions[:1] if len(slots) == 1 else mentions
        if vt in ("date", "time") and len(slots) > 1:
            # a mention whose cue names its end of the range ("return on the 4th") goes first, so an uncued one
            # ("for the 1st") is not given the slot the cued one names
            chosen = sorted(chosen, key=lambda m: not _range_cue(text, m[1]))
        for _, span in chosen:
            raw = text[span[0]:span[1]]
            if vt == "number" and asks_about_offer(text, span):
                continue  # "was that for 2 tickets?" asks about the offer, it gives no value
            base = 0.6
            cands = slots
            if vt == "number":
                after = tokens(text[span[1]:span[1] + 24])[:2]
                if after and after[0] in ("of",):
                    after = after[1:]
                noun = after[0] if after else ""
                base = 0.75 if re.match(r"(people|persons|person|us|tickets?|seats?|rooms?|adults?|passengers?|"
                                        r"nights?|days?|beds?|bedrooms?|baths?|bathrooms?|guests?|stars?)$",
                                        noun) else 0.45
                # the count noun names the slot; a count noun may come from the slot's description ("Length of stay
                # in days": 12 days), any other noun only from its name ("one hotel room" is no star rating)
                min_w = 0.3 if base == 0.75 else 0.6
                named = [s for s in slots if noun and any(k.startswith(noun[:4]) for k, w in
                                                          slot_keywords(spec, s, profile) if w >= min_w)]
                if len(named) == 1:
                    cands, base = named, 0.8
            elif raw.lower() in ("today", "tonight", "tomorrow"):
                base = 0.45  # "that's all for today" is no date answer unless one was asked
            if len(cands) > 1 and vt in ("date", "time"):
                # the slot's own word just before ("my returning date will be the 13th")
                prev = tokens(text[max(0, span[0] - 32):span[0]])[-5:]
                own = [s for s in cands if any(w.startswith(t[:5]) for t in tokens(s.replace("_", " "))
                                               if len(t) > 4 and t not in ("date", "dates", "time") for w in prev)]
                cue = _range_cue(text, span)
                ends = [s for s in cands if any(t in RANGE_END_WORDS for t in slot_words(spec, s))]
                if len(own) == 1:
                    cands, base = own, 0.7
                elif cue == "end" and len(ends) == 1:
                    cands, base = ends, 0.7
                elif cue == "start":
                    starts_ = [s for s in cands if s not in ends]
                    if len(starts_) == 1:
                        cands, base = starts_, 0.6
                else:
                    cands = [s for s in cands if s not in found] or cands  # a cued mention took its slot first
            for slot, conf in attribute(cands, base):
                pv = spec.slots[slot].possible_values
                if pv and not any(values_match(raw, p, vt) for p in pv):
                    continue  # "six years back" is no year of the schema
                if slot not in found:
                    add(slot, raw, span, conf)
            if len(cands) > 1 and not any(s in asked for s in cands):
                continue  # this mention stays unattributed; a later one may carry its own cue
    # booleans: a slot keyword mentioned in a statement, or yes/no to a yes/no question about it. A "no" to a question
    # that also restates held values of other slots ("You want a shared ride for 4 to Hatcho, correct?") rejects the
    # confirmation as a whole: which value is wrong the user says next ("No, I need to go to ... instead")
    words = tokens(text)
    prev_agent = previous_agent_text(turn)

    def restates_others(slot: str) -> bool:
        return any(states_value(prev_agent, v) for s, v in (turn.state_before or {}).items() if s != slot)
    for slot in intent:
        sp = spec.slots[slot]
        if sp.value_type != "bool" or slot in found:
            continue
        kws = bool_keywords(spec, slot, profile)
        hit = None
        for tok, a, b in word_forms(text):  # "Wi-Fi" is also "wifi"
            if any(tok.startswith(k[:6]) for k in kws):
                hit = (tok, a, b)
                break
        if hit and not is_question(text, (hit[1], hit[2])) and not ASKING.search(
                sentence_of(text, (hit[1], hit[2]))[:max(0, hit[1] - sentence_start(text, hit[1]))]):
            before = LEAD_NO.sub("", text[max(sentence_start(text, hit[1]), hit[1] - 40):hit[1]])
            negated = (NEGATION.search(" ".join(tokens(before)[-4:])) and not APPROVING_NEGATION.search(before)) \
                or NEGATED_AFTER.search(text[hit[2]:hit[2] + 30])
            val = "False" if negated else "True"
            add(slot, val, (hit[1], hit[2]), 0.6)
        elif not hit and slot in asked and words:
            if words[0] in ("yes", "yeah", "yep", "sure", "definitely") or APPROVING_NEGATION.match(text.lstrip()):
                add(slot, "True", None, 0.8)  # "No problem, yes." approves
            elif words[0] in ("no", "nope", "nah") and not restates_others(slot):
                add(slot, "False", None, 0.8)
    # dontcare for the slot the agent just asked about, or for the one the user names right after it ("a comedy,
    # I don't mind which actors are in it": the actors, not the genre asked about)
    dc = find_dontcare(text)
    named_after = _slot_named_after(text, dc, spec, intent, profile) if dc else None
    if dc and named_after:
        add(named_after, "dontcare", dc, 0.8)
    elif dc and asked:
        top = [s for s, c in asked.items() if c == max(asked.values())]
        for s in top:
            add(s, "dontcare", dc, 0.8 if len(top) == 1 else 0.55)
    # a sum of money for the amount slot
    for slot, val, span, conf in _money_values(text, spec, intent, asked):
        if slot not in found:
            add(slot, val, span, conf)
    # free text anchored by cue words ("in Portland", "album Joanne", "titled Phone home")
    text_slots = [s for s in intent if spec.slots[s].value_type == "text" and not spec.slots[s].possible_values]
    for slot, val, span, conf in _anchored_text_values(text, spec, [s for s in text_slots if s not in found], asked,
                                                       profile):
        if slot not in found and val.lower() not in {uv.value.lower() for uv in found.values()}:
            add(slot, val, span, conf)
    # free text: the one text slot the agent asked for, answered with the one remaining capitalised name
    text_asked = [s for s in asked if spec.slots[s].value_type == "text" and s not in found
                  and not any(t in MONEY_WORDS for t in slot_words(spec, s))]
    if len(text_asked) == 1:
        taken = [uv.span for uv in found.values() if uv.span]
        pvs = {p.lower() for sp in spec.slots.values() for p in sp.possible_values}
        aliases = alias_words(profile)
        runs = [r for r in capitalised_runs(text) if r[0].lower() not in pvs and clean_text(r[0]) not in aliases
                and not any(r[1][0] < b and a < r[1][1] for a, b in taken)]
        if len(runs) == 1:
            add(text_asked[0], runs[0][0], runs[0][1], 0.6)
        elif text_asked[0] not in found:
            bare = _bare_answer(text, taken, pvs | aliases)
            if bare is not None:
                add(text_asked[0], bare[0], bare[1], 0.6)
    out = [found[s] for s in sorted(found, key=lambda s: (found[s].span or (10**9, 0))[0])]
    if calibrated:
        out = [dataclasses.replace(uv, confidence=EXTRACTION_PRECISION.get(uv.confidence, uv.confidence)) for uv in out]
    return out


# a bare answer to the one free-text slot asked ("London.", "long beach", "In London, England please."): the whole
# utterance is the value once a leading preposition or article and a trailing "please" / "thanks" are set aside
_BARE_LEAD = re.compile(r"^\s*(?:(?:in|at|to|from|for|on|near|around|by|with)\s+)?(?:(?:a|an|the|some)\s+)?", re.I)
_BARE_TRAIL = re.compile(r"(?:[\s,]+(?:please|thanks|thank you|then|instead|maybe|i guess|i think))*[\s.!,]*$", re.I)
BARE_ANSWER_MAX_WORDS = 4
# replies that answer no slot, beside ``COMMON_CAPS`` and ``NEGATION``: assent, thanks, leave-taking, indifference
NOT_AN_ANSWER = frozenset("""yeah yep yup ya correct exactly definitely absolutely certainly course sounds works
done same whatever dunno idk bye goodbye cheers all that's thats it's its wrong sorry again more less else
other another either neither both matter mind care problem first second last next""".split())


def _bare_answer(text: str, taken: list[Span], known_values: set[str]) -> Optional[tuple[str, Span]]:
    """(value, span) when u_t is nothing but a short answer (``BARE_ANSWER_MAX_WORDS`` words at most, no question, no
    word of ``COMMON_CAPS``: "yes", "thanks", "find", "anything" ... are no answer); None otherwise, or when the words
    are another slot's known value or overlap a value already found."""
    if "?" in text:
        return None
    a = _BARE_LEAD.match(text).end()
    b = a + len(_BARE_TRAIL.sub("", text[a:]))
    val = text[a:b].strip()
    words = [w.strip(",.!'\"").lower() for w in val.split()]
    if not words or len(words) > BARE_ANSWER_MAX_WORDS or any(not w or w in COMMON_CAPS or w in NOT_AN_ANSWER
                                                               for w in words) or NEGATION.search(val):
        return None
    if clean_text(val) in known_values or val.lower() in known_values or any(a < y and x < b for x, y in taken):
        return None
    if re.search(r"\d", val):  # numbers, dates and times are the typed rules' to read
        return None
    return val, (a, a + len(val))


# a question that asks the agent to do something carries its constraints ("Can you find a therapist for me?"): the
# informs head, which learned that "Can you find me a restaurant?" gives no value, read it as asking (dev natural IUV)
_ASKS_AGENT_TO_ACT = re.compile(r"^\W*(?:\w+[,.!]?\s+){0,3}?(?:can|could|would|will)\s+you\s+(?:please\s+)?"
                                r"(?:find|search|look|get|book|make|reserve|schedule|show|check|help|set|play|rent|"
                                r"transfer|send|buy|add)\b", re.I)


def question_at(text: str, span: tuple[int, int]) -> Optional[str]:
    """The question (with its mark) the words at ``span`` sit in; None for a statement and for a question asking the
    agent to act ("Can you find me a place with wifi?" gives a value)."""
    question = marked_question(sentence_of(text, span))  # "Is the ticket in Premium Economy." asks as "...?" does
    return question if question and not _ASKS_AGENT_TO_ACT.search(question) else None


def asking_question_at(text: str, span: tuple[int, int], heads: "Heads") -> Optional[str]:
    """The question the words at ``span`` sit in (``question_at``), when the informs head reads it as asking about
    the offer and giving no value ("Does their menu have vegetarian food?"); None otherwise and without an informs
    head."""
    if heads is None or heads.informs_mlp is None:
        return None
    question = question_at(text, span)
    return question if question and heads.question_asks(question) else None


def drop_values_in_asking_questions(uvs: list[UserValue], text: str, heads: "Heads") -> list[UserValue]:
    """Extracted values whose words sit in a question the informs head reads as asking about the offer, not giving
    a value ("Does their menu have vegetarian food?", "Is it a cheap place pricewise?"), are dropped; values read
    elsewhere, or without a span (a yes to the agent's question), stay. Without an informs head nothing changes."""
    return [uv for uv in uvs if not (uv.span and asking_question_at(text, uv.span, heads))]
