"""Extract user values and agent acts from raw text when a slice carries no annotations.

Real agent logs rarely come with dialogue acts. We recover them with schema
value matching, typed patterns (times, dates, numbers) and question /
confirmation cues. Every item carries a confidence < 1.0 so that S1 never
decides on it (extracted evidence goes to S2), and items below the
extraction floor are dropped rather than guessed.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

from .normalize import (VALUE_ALIASES, clean_text, values_match, find_dontcare, find_in_text, iter_dates, iter_numbers, iter_times, tokens,
                        tokens_with_spans)
from .types import AgentAct, Turn, UserValue
from .workflow import WorkflowSpec

Span = tuple[int, int]

STOP = {"of", "the", "a", "an", "is", "has", "have", "to", "for", "in", "at", "on", "and", "or", "name",
        "number", "num", "type", "with", "allowed", "whether", "this", "that", "be", "it", "if", "are",
        "user", "which", "where", "what", "from", "by", "new", "no"}
# Generic question words that hint at a slot's value type.
TYPE_HINTS = {
    "time": ("what time", "when", "which time", "time"),
    "date": ("what date", "which day", "what day", "when", "date", "day"),
    "number": ("how many", "number of", "how much"),
}
NAME_HINTS = {  # slot-name token -> extra words people use when asking for it
    "city": ("city", "where", "location", "place"), "location": ("where", "location", "city", "area", "place"),
    "area": ("where", "area", "location"), "where": ("where", "city", "location", "place"), "destination": ("where", "destination", "going"),
    "seats": ("how many", "people", "seats", "party"), "kids": ("child", "children", "kid"), "tickets": ("how many", "tickets"),
    "passengers": ("how many", "passengers", "people"), "adults": ("how many", "people", "adults", "guests"),
    "rooms": ("how many", "rooms"), "beds": ("bedrooms", "beds", "bed rooms"), "baths": ("bathrooms", "baths"),
    "amount": ("how much", "amount"), "receiver": ("who", "whom", "contact", "recipient"),
    "contact": ("who", "whom", "contact"), "type": ("what kind", "what type", "which type", "kind of"),
    "category": ("what kind", "what type", "cuisine", "category", "type of"),
    "genre": ("genre", "what kind", "type of"), "airlines": ("airline",), "price": ("price", "budget", "cost"),
    "cuisine": ("cuisine", "food"), "stay": ("how long", "how many nights", "nights"),
    "length": ("how long", "nights", "days"), "origin": ("from where", "leaving from", "departing from", "origin"),
    "from": ("from where", "leaving from", "departing from", "where from"),
    "to": ("where to", "going to", "destination"), "intent": ("rent or buy", "buy or rent"),
    "title": ("which movie", "what movie", "title"), "track": ("song", "track"), "artist": ("artist", "singer"),
    "event": ("event",), "payment": ("account", "pay with", "payment method", "card"), "method": ("account", "card"),
    "insurance": ("insurance",), "luggage": ("luggage", "bags", "baggage"), "protection": ("trip protection", "insurance"),
    "class": ("class",), "ride": ("ride", "type of ride"), "stylist": ("stylist", "salon"),
    "therapist": ("therapist", "doctor"), "restaurant": ("restaurant",), "movie": ("movie", "film"),
    "visit": ("when", "visit"), "check": ("check in", "check out", "when"),
}
REQUEST_CUES = re.compile(
    r"\b(what|which|when|where|who|whom|how many|how much|how long|any preference|do you have a preference|"
    r"preferred|prefer|tell me|let me know|could you (?:give|provide|tell)|can you (?:give|provide|tell)|"
    r"please (?:provide|give|specify|say|tell)|i (?:will )?need (?:to know|the)|may i (?:know|have)|"
    r"can i (?:know|have|get)|would you like to (?:rent|buy)|are you looking to|do you want to (?:rent|buy))\b", re.I)
CONFIRM_CUES = [  # (regex, act, confidence)
    (r"\bplease confirm\b|\bcan you confirm\b|\bcould you confirm\b|\bto confirm\b|\blet me confirm\b|"
     r"\bconfirming\b|\bjust to verify\b|\bto verify\b|\bplease verify\b", "CONFIRM", 0.9),
    (r"\bis (?:that|this|everything) (?:correct|right|ok|okay)\b|\bdoes that sound right\b|\bcorrect\?", "CONFIRM", 0.8),
    (r"(?:^|[.!?]\s+)(?:(?:ok(?:ay)?|great|perfect|alright|so)[,.]?\s+)?(?:shall|should) i (?:go ahead and )?"
     r"(?:book|reserve|make|schedule|buy|purchase|proceed|go ahead)\b", "CONFIRM", 0.6),
    (r"\b(?:i(?: have|'ve)|we(?: have|'ve)) (?:successfully )?(?:booked|reserved|scheduled|made|purchased|"
     r"bought|sent|set up|added|confirmed)\b", "NOTIFY_SUCCESS", 0.9),
    (r"\b(?:has|have) been (?:successfully )?(?:booked|reserved|made|scheduled|confirmed|placed|sent|"
     r"purchased|processed|completed|added|set)\b|\b(?:is|are) (?:now )?(?:booked|reserved|confirmed)\b|"
     r"\bsuccessfully (?:booked|reserved|made|scheduled|purchased|sent)\b|\bbooking is (?:complete|done)\b|"
     r"\b(?:is|was) successful\b|\bnow playing\b|\bstarted playing\b", "NOTIFY_SUCCESS", 0.85),
    # MultiWOZ-style booking notices: "your reference number is [value_reference]", "reference number is : ..."
    (r"\breference (?:number|code|no\.?)\s*(?:is\b|:)|\bbooking (?:was|is|has been) (?:successful|complete|completed|"
     r"confirmed|made)\b", "NOTIFY_SUCCESS", 0.85),
]
_CONFIRM_RES = [(re.compile(p, re.I), a, c) for p, a, c in CONFIRM_CUES]
NEGATION = re.compile(r"\b(no|not|don't|dont|doesn't|doesnt|without|never|nope|isn't|isnt|aren't|arent|won't|wont|"
                      r"didn't|didnt|can't|cant)\b", re.I)
# "insurance is not necessary": the negation follows the keyword
NEGATED_AFTER = re.compile(r"^\W*(?:is|are|will be|would be)\s+not\b|^\W*(?:isn't|isnt|aren't|arent|won't be|wont be)\b",
                           re.I)
# "No, I ..." / "No. I have extra baggage": a leading no answers the previous question, it negates nothing after it
LEAD_NO = re.compile(r"^\s*(?:no|nope|nah)\s*[,.!;]\s*", re.I)
DESC_STOP = {"of", "the", "a", "an", "to", "for", "in", "at", "on", "and", "or", "is", "be", "whether", "this",
             "that", "which", "with", "by", "from", "are", "has", "have", "if", "it"}
_SENT_RE = re.compile(r"[^.!?]*[.!?]?")


def sentences(text: str) -> list[tuple[str, int]]:
    """(sentence, start offset) pairs; a question mark ends a sentence."""
    out = []
    for m in _SENT_RE.finditer(text or ""):
        s = m.group(0)
        if s.strip():
            out.append((s, m.start()))
    return out


DELEX = re.compile(r"\[[a-z]+(?:_[a-z]+)+\]")


def previous_agent_text(turn: Turn) -> str:
    for u in reversed(turn.history):
        if u.speaker == "agent":
            return u.text
    return ""


DIRECTION_HINTS = {  # slot-name prefixes that say which end of a trip a slot is
    "from": ("leaving from", "departing from", "depart from", "departure city", "from where", "where from",
             "leave from", "depart", "departing", "leaving", "starting from", "origin"),
    "origin": ("leaving from", "departing from", "depart from", "from where", "where from", "depart", "origin"),
    "to": ("where to", "headed to", "heading to", "destination", "travel to", "traveling to", "where are you going",
           "where will you go", "where do you want to go", "where would you like to go", "arrive in", "going to go"),
}
OFFER_START = re.compile(r"^\s*(?:ok(?:ay)?[,.]?\s*|sure[,.]?\s*|great[,.]?\s*)?(how about|what about|would you like to "
                         r"(?:book|reserve|buy|make|purchase|play|schedule|rent|share|try|hear|watch|go)|"
                         r"do you like|i found|i have found|i've found|there (?:is|are)|does (?:that|this)|"
                         r"is there anything|anything else|can i (?:help|assist|do)|shall i|should i|"
                         r"would you (?:want|like) me)", re.I)
YESNO_START = re.compile(r"^\s*(?:and\s+|also\s+|ok(?:ay)?[,.]?\s*)?(?:(do|does|did|will|would|should|shall|are|is|"
                         r"can|could)\s+(you|it|they|there)\b|(would) (like|want) to\b)", re.I)


def _own_tokens(slot: str) -> list[str]:
    """Content words of a slot name; 'to'/'from' only steer direction hints, never match alone."""
    raw = tokens(slot.replace("_", " "))
    own = [t for t in raw if t not in STOP]
    return own or [t for t in raw if t not in ("of", "the", "a", "an", "to", "from", "is", "has")]


REJECTED_BEFORE = re.compile(r"\b(?:instead of|rather than)\s+(?:an?\s+|the\s+)?$", re.I)
OPPOSITE_END = {"in": "out", "out": "in"}  # check_in_date vs check_out_date
TYPE_LIKE = ("type", "category", "genre", "kind", "class")
KIND_OF = re.compile(r"\b(what|which|any|a particular|specific|preferred|the)\s+(kind|type|sort|genre|category|style)s?"
                     r"\s+of\b", re.I)


# MultiWOZ-style slot names ("train-leaveat"): the hint tables above key on SGD
# slot-name tokens, and MultiWOZ names are run together ("leaveat", "bookpeople")
# or shared between the two ends of a trip ("departure" is a place here, but also
# "departure time"). Keyed on the part after "<domain>-"; each entry replaces the
# generic own-token / NAME_HINTS / DIRECTION_HINTS weights for that slot. Only
# names with a hyphen use it, and no SGD / SGD-X slot name has one.
MWOZ_HINTS: dict[str, tuple[tuple[str, float], ...]] = {
    "departure": (("departing from", 1.0), ("depart from", 1.0), ("leaving from", 1.0), ("leave from", 1.0),
                  ("departure station", 0.9), ("departure location", 0.9), ("departure point", 0.9),
                  ("starting from", 0.8), ("coming from", 0.8), ("from where", 0.8), ("where from", 0.8),
                  ("pick you up", 0.8), ("picked up", 0.8), ("pick up", 0.7), ("departing", 0.6),
                  ("departure", 0.6), ("origin", 0.6)),
    "destination": (("destination", 1.0), ("where to", 0.8), ("going to", 0.8), ("headed", 0.7), ("heading", 0.7),
                    ("travel to", 0.8), ("traveling to", 0.8), ("travelling to", 0.8), ("go to", 0.7),
                    ("where are you going", 0.9), ("where would you like to go", 0.9), ("drop you off", 0.8),
                    ("arriving at", 0.6), ("where", 0.6)),
    "leaveat": (("departure time", 1.0), ("leaving time", 1.0), ("departure or arrival", 0.9),
                ("arrival or departure", 0.9), ("leave by", 0.8), ("leave after", 0.9),
                ("depart after", 0.9), ("leave", 0.6), ("leaving", 0.6), ("depart", 0.5), ("departure", 0.6),
                ("what time", 0.5), ("when", 0.4)),
    "arriveby": (("arrival time", 1.0), ("arrive by", 1.0), ("departure or arrival", 0.9), ("arrival or departure", 0.9),
                 ("arrive", 0.6), ("arrival", 0.6), ("arriving", 0.6),
                 ("get there", 0.6), ("be there", 0.6), ("what time", 0.5), ("when", 0.4)),
    "bookday": (("what day", 0.8), ("which day", 0.8), ("day", 0.6), ("when", 0.4), ("date", 0.6)),
    "day": (("what day", 0.8), ("which day", 0.8), ("day", 0.6), ("when", 0.4), ("date", 0.6)),
    "bookpeople": (("how many people", 1.0), ("how many tickets", 1.0), ("how many guests", 1.0),
                   ("for how many", 0.9), ("people", 0.6), ("tickets", 0.6), ("guests", 0.6), ("party", 0.6),
                   ("how many", 0.5)),
    "booktime": (("what time", 0.8), ("which time", 0.8), ("time", 0.8), ("when", 0.4)),
    "bookstay": (("how many nights", 1.0), ("how many days", 0.9), ("how long", 0.8), ("nights", 0.8),
                 ("staying", 0.4)),
    "pricerange": (("price range", 1.0), ("price", 0.6), ("budget", 0.8), ("price point", 0.9)),
    "price": (("price", 0.6), ("cost", 0.6), ("how much", 0.5), ("fare", 0.6)),
    "area": (("area", 1.0), ("part of town", 1.0), ("side of town", 1.0), ("part of the city", 1.0),
             ("location", 0.6), ("where", 0.4)),
    "food": (("food", 1.0), ("cuisine", 1.0)),
    "type": (("what type", 0.6), ("what kind", 0.6), ("which type", 0.6), ("kind of", 0.6), ("type", 0.6),
             ("hotel or guesthouse", 1.0), ("guesthouse or hotel", 1.0), ("guesthouse or a hotel", 1.0),
             ("hotel or a guesthouse", 1.0), ("car type", 1.0)),
    "stars": (("stars", 1.0), ("star", 1.0), ("star rating", 1.0), ("rating", 0.6)),
    "internet": (("internet", 1.0), ("wifi", 1.0), ("wi-fi", 1.0)),
    "parking": (("parking", 1.0),),
    "name": (("name", 0.6), ("which one", 0.4)),
    "department": (("department", 1.0),),
    "trainid": (("train id", 1.0), ("which train", 0.8)),
}
# In a sentence about a time ("a preferred departure or arrival time?"), a place
# slot's weak words ("departure") do not count; its phrases ("departing from") do.
MWOZ_TIME_EXCLUDED = {"departure", "destination"}
# yes/no-shaped questions that ask for a value in MultiWOZ agents' phrasing
MWOZ_ASK = re.compile(r"\b(?:in mind|preference|particular|specific|certain)\b", re.I)


def mwoz_suffix(slot: str) -> Optional[str]:
    """``leaveat`` for ``train-leaveat``; None for names without a ``<domain>-`` prefix (SGD)."""
    if "-" not in slot:
        return None
    return slot.split("-", 1)[1].lower() or None


def _desc_stems(desc: str) -> list[str]:
    """Content words of a slot description plus simple stems ("leaving" -> "leave", "arrival" -> "arrive")."""
    out = []
    for t in tokens(desc):
        if t in STOP or len(t) <= 3 or t in ("whether", "user", "number", "name", "this", "that"):
            continue
        out.append(t)
        for suf, rep in (("ing", "e"), ("ing", ""), ("al", "e"), ("ure", "")):
            if t.endswith(suf) and len(t) - len(suf) >= 3:
                out.append(t[:-len(suf)] + rep)
    return out


def slot_keywords(spec: WorkflowSpec, slot: str) -> list[tuple[str, float]]:
    """Words that signal a request for ``slot``, weighted by how specific they are to it.

    Own name tokens count 1.0 when no other slot of the service shares them
    (``time`` in appointment_time) and 0.45 when shared (``appointment``);
    hint words count 0.6, value-type hints ("when", "how many") 0.4.
    MultiWOZ-style names (``train-leaveat``) take their weights from
    ``MWOZ_HINTS`` instead, plus description words and their stems (0.3).
    """
    suffix = mwoz_suffix(slot)
    if suffix is not None and suffix in MWOZ_HINTS:
        return _mwoz_keywords(spec, slot, suffix)
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
        if t not in STOP and len(t) > 3 and t not in ("whether", "user", "number", "name", "this", "that"):
            put(t, 0.3)
    return sorted(kws.items())


def _mwoz_keywords(spec: WorkflowSpec, slot: str, suffix: str) -> list[tuple[str, float]]:
    kws: dict[str, float] = {}

    def put(k: str, w: float) -> None:
        if kws.get(k, 0.0) < w:
            kws[k] = w
    for h, w in MWOZ_HINTS[suffix]:
        put(h, w)
    dom = slot.split("-", 1)[0]
    put(dom, 0.45)  # the domain word is shared by every slot of the service
    desc = spec.slots[slot].description if slot in spec.slots else ""
    for t in _desc_stems(desc):
        if t != dom:
            put(t, 0.3)
    return sorted(kws.items())


def bool_keywords(spec: WorkflowSpec, slot: str) -> list[str]:
    """Words whose mention means the user talks about a yes/no slot (outdoor, laundry, insurance...)."""
    return [k for k, w in slot_keywords(spec, slot) if w >= 0.6 and len(k) > 3 and " " not in k
            and k not in GENERIC_BOOL_WORDS]


GENERIC_BOOL_WORDS = {"trip", "seating", "seat", "seats", "place", "unit", "service", "options", "option", "ticket",
                      "room", "rooms", "visibility", "entry", "additional", "allowed", "good"}


def _phrase_in(phrase: str, words: list[str]) -> Optional[int]:
    p = phrase.split()
    for i in range(len(words) - len(p) + 1):
        if words[i:i + len(p)] == p:
            return i
    return None


def confirmation_cue(text: str) -> Optional[tuple[str, float, Span]]:
    """The strongest confirmation / success cue in an agent reply: (act, confidence, span)."""
    best = None
    for rx, act, conf in _CONFIRM_RES:
        m = rx.search(text or "")
        if m and (best is None or conf > best[1]):
            best = (act, conf, (m.start(), m.end()))
    return best


def _other_end(slot: str, words: list[str]) -> bool:
    """The sentence says "<word> out" where the slot is "<word>_in_..." (or the reverse), and never "<word> in"."""
    raw = tokens(slot.replace("_", " "))
    for i, t in enumerate(raw[:-1]):
        end = raw[i + 1]
        if end in OPPOSITE_END and _phrase_in(f"{t} {OPPOSITE_END[end]}", words) is not None \
                and _phrase_in(f"{t} {end}", words) is None:
            return True
    return False


def _score_sentence(sent: str, off: int, spec: WorkflowSpec, candidates: list[str], bool_only: bool
                    ) -> dict[str, tuple[float, Span]]:
    toks = tokens_with_spans(sent)
    words = [t for t, _, _ in toks]
    kind_of = KIND_OF.search(sent)
    scores: dict[str, tuple[float, Span, float]] = {}
    for slot in candidates:
        if bool_only and spec.slots[slot].value_type != "bool":
            continue
        if _other_end(slot, words):
            continue  # "when will you check out?" does not ask for check_in_date
        total, span, best_w = 0.0, None, 0.0
        if kind_of and any(t in TYPE_LIKE for t in tokens(slot.replace("_", " "))):
            total, span, best_w = 1.0, (off + kind_of.start(), off + kind_of.end()), 1.0
        desc = [t for t in tokens(spec.slots[slot].description) if t not in DESC_STOP and len(t) > 2]
        if len(desc) >= 2 and sum(t in words for t in set(desc)) >= 0.75 * len(set(desc)):
            total += 1.0  # the reply paraphrases the slot's own description
            span = span or (off, off + len(sent.rstrip()))
            best_w = max(best_w, 1.0)
        mwoz = mwoz_suffix(slot) in MWOZ_HINTS
        timed = mwoz and mwoz_suffix(slot) in MWOZ_TIME_EXCLUDED and "time" in words
        hits: list[float] = []
        for kw, w in slot_keywords(spec, slot):
            if timed and w < 0.8:
                continue
            i = _phrase_in(kw, words)
            if i is None:
                continue
            hits.append(w)
            if w > best_w:
                n = len(kw.split())
                best_w, span = w, (off + toks[i][1], off + toks[i + n - 1][2])
        if mwoz and hits:
            # MultiWOZ hint tables list overlapping phrases ("departing from", "departing"):
            # the best one decides, each further hit adds a little
            total += max(hits) + 0.1 * min(len(hits) - 1, 3)
        else:
            total += sum(hits)
        if span is not None and (best_w >= 0.6 or total >= 1.0):
            prior = 1.0 if slot in spec.intent_slots else 0.5
            scores[slot] = (min(total, 1.6) * prior, span, best_w)
    return scores


def requested_slots(text: str, spec: WorkflowSpec, state: Optional[dict[str, str]] = None
                    ) -> list[tuple[str, float, Span]]:
    """Slots the agent asks for in ``text``: request sentences (not offers or confirmations) naming the slot."""
    out: dict[str, tuple[float, Span]] = {}
    candidates = spec.intent_slots + [s for s in spec.slots if s not in spec.intent_slots]
    mwoz_spec = any(mwoz_suffix(s) in MWOZ_HINTS for s in spec.slots)
    # delexicalised placeholders ("[restaurant_name]", "[value_area]") stand for values, not for
    # words naming a slot; blank them out (same length, so spans stay valid)
    text = DELEX.sub(lambda m: " " * len(m.group(0)), text or "")
    for sent, off in sentences(text):
        # a yes/no opening asks even when the writer left off the question mark ("Do you want to add insurance")
        question = sent.rstrip().endswith("?") or bool(YESNO_START.search(sent))
        if not (question or re.search(r"\b(tell me|let me know|need|provide|specify)\b", sent, re.I)):
            continue
        if confirmation_cue(sent) or OFFER_START.search(sent):
            continue
        yesno = bool(YESNO_START.search(sent)) and not REQUEST_CUES.search(sent)
        asks = yesno and mwoz_spec and bool(MWOZ_ASK.search(sent))
        if asks:
            yesno = False  # "do you have a price range in mind ?" asks for the value
        if not yesno and not asks and not REQUEST_CUES.search(sent):
            continue
        # a sentence that names a concrete state value is an offer/confirmation, not a request
        if state and any(v and len(v) > 2 and find_in_text(v, sent) for v in state.values()
                         if v.lower() not in ("true", "false", "dontcare")):
            continue
        scores = _score_sentence(sent, off, spec, candidates, bool_only=yesno)
        if not scores:
            continue
        top = max(v[0] for v in scores.values())
        # a MultiWOZ hint phrase of weight >= 0.8 ("how many nights") is specific enough to stand
        # beside a stronger slot in a multi-slot question ("what day and time ...?")
        strong = {k: 0.8 if mwoz_suffix(k) in MWOZ_HINTS else 1.0 for k in scores}
        keep = {k: v for k, v in scores.items() if v[0] >= max(0.6, 0.75 * top)
                or (v[0] >= top - 1e-9 and v[0] >= 0.5 and v[2] >= 1.0)
                or (strong[k] < 1.0 and v[0] >= 0.6 and v[2] >= strong[k])}
        share = 1.0 if len(keep) <= 3 else 3.0 / len(keep)
        if len(keep) > 1 and all(v[2] < strong[k] for k, v in keep.items()):
            share *= 0.7  # only shared words ("date" for two date slots): ambiguous
        for slot, (sc, sp, _) in keep.items():
            conf = round(min(0.9, (0.4 + 0.35 * min(sc, 1.3)) * share), 3)
            if slot not in out or out[slot][0] < conf:
                out[slot] = (conf, sp)
    return sorted(((s, c, sp) for s, (c, sp) in out.items()), key=lambda x: x[2])


def _restates_bool(turn: Turn, spec: WorkflowSpec) -> bool:
    """The reply names a yes/no slot the state holds ("free entry: True, good for kids: True")."""
    words = tokens(turn.agent)
    for slot, v in {**turn.state_before, **turn.state_after}.items():
        if slot in spec.slots and spec.slots[slot].value_type == "bool" and str(v).lower() in ("true", "false"):
            kws = bool_keywords(spec, slot)
            if any(w.startswith(k[:6]) for k in kws for w in words):
                return True
    return False


def extract_agent_acts(turn: Turn, spec: WorkflowSpec, floor: float = 0.5) -> list[AgentAct]:
    """REQUEST and CONFIRM/NOTIFY_SUCCESS acts recovered from the agent reply."""
    acts: list[AgentAct] = []
    cue = confirmation_cue(turn.agent)
    if cue and cue[0] == "CONFIRM":
        # a confirmation restates what it confirms; "just to verify you tried the code?" names no value
        values = [v for v in {**turn.state_before, **turn.state_after}.values()
                  if v and str(v).strip() and str(v).lower() not in ("true", "false", "dontcare")]
        if not any(find_in_text(v, turn.agent) for v in values) and not _restates_bool(turn, spec):
            cue = (cue[0], min(cue[1], 0.45), cue[2])
    if cue and cue[1] >= floor:
        acts.append(AgentAct(cue[0], None, None, cue[1]))
    known = {**turn.state_before, **turn.state_after}
    for slot, conf, _ in requested_slots(turn.agent, spec, known):
        if conf >= floor:
            acts.append(AgentAct("REQUEST", slot, None, conf))
    return acts


def _sentence_of(text: str, span: Span) -> str:
    for sent, off in sentences(text):
        if off <= span[0] < off + len(sent):
            return sent
    return ""


ASKING = re.compile(r"\b(whether|wondering|if (?:they|it|there|the|this|that)|find out|know if|tell me (?:please )?if|"
                    r"let me know if|check if|"
                    r"does|do they|is there|are there|can you tell|what about)\b|^\s*(do|does|is|are|can|could|will)\b",
                    re.I)


def _sentence_start(text: str, pos: int) -> int:
    for sent, off in sentences(text):
        if off <= pos < off + len(sent):
            return off
    return 0


ABOUT_IT = re.compile(r"^\s*(?:and\s+|also\s+|so\s+)?(is|are|does|do|did|was|has|have)\s+(it|they|the|this|that|"
                      r"these|those|there)\b|\b(how|what|which)\b.*\b(is|are)\s+(it|they|the)\b", re.I)
# a question about the offer itself ("was that for 2 tickets?", "what is the price of one ticket?"); unlike
# ABOUT_IT, "are there any three star hotels?" still asks for something with the value
ABOUT_OFFER = re.compile(r"^\s*(?:and\s+|also\s+|so\s+)?(?:is|are|was|were|does|do|did)\s+(?:it|they|that|this|these|"
                         r"those)\b|\b(?:how|what)\b.*\b(?:is|are)\s+(?:it|they|the)\b|\b(?:is|was)\s+(?:that|it|this)\s*\?\s*$",
                         re.I)


def _asks_about_offer(text: str, span: Span) -> bool:
    sent = _sentence_of(text, span)
    return sent.rstrip().endswith("?") and bool(ABOUT_OFFER.search(sent)) and not re.search(
        r"\b(i|we)\s*('d|would|want|need|'m|am)\b", sent, re.I)


def _is_question(text: str, span: Span) -> bool:
    """The mention sits in a question about the offer ("is it expensive?"), so it asks rather than informs."""
    sent = _sentence_of(text, span)
    if not sent.rstrip().endswith("?") or re.search(r"\b(i|we)\s*('d|would|want|need|'m|am)\b", sent, re.I):
        return False
    return bool(ABOUT_IT.search(sent) or IF_CLAUSE.search(sent))


IF_CLAUSE = re.compile(r"\b(whether|wondering|if (?:they|it|there|the|this|that)|find out|know if|tell me (?:please )?if|"
                       r"check if|see if|let me know if)\b|\bhow\b.*\b(is|are)\s*\?\s*$", re.I)


COMMON_CAPS = set("""i i'm im i'd i'll i've yes no ok okay sure please thanks thank hi hello hey well also maybe
actually make try something somewhere someplace anything anywhere preferably a an the what how can could would
will find book search look get let it that this those these they there my me we our you your is are do does
find please great good perfect nice cool awesome alright right fine and or but so then now just only one
monday tuesday wednesday thursday friday saturday sunday today tomorrow tonight january february march april
may june july august september october november december""".split())


def capitalised_runs(text: str) -> list[tuple[str, Span]]:
    """Capitalised names in u_t ("Los Altos", "Nairobi, Kenya"), minus sentence-initial and common words."""
    runs = []
    starts = {off + len(sent) - len(sent.lstrip()) for sent, off in sentences(text)}
    busy = [sp for _, sp in iter_dates(text)] + [sp for _, sp in iter_times(text)]
    for m in re.finditer(r"(?:[A-Z][\w'&.-]*)(?:,\s*[A-Z]{2,3}\b|(?:\s+(?:(?:of|by|de|la|&|and)\s+)?(?:the\s+|a\s+|an\s+)?)[A-Z][\w'&.-]*)*", text):
        words, pos = [], m.start()
        for w in re.split(r"\s+", m.group(0)):
            pos = text.find(w, pos)
            words.append((w, pos))
            pos += len(w)
        while words and (words[0][0].strip(".,!?").lower() in COMMON_CAPS or
                         (words[0][1] in starts and len(words) == 1)):
            words = words[1:]
        while words and words[-1][0].strip(".,!?").lower() in COMMON_CAPS | {"of", "the", "and", "&"}:
            words = words[:-1]
        if not words:
            continue
        a = words[0][1]
        val = text[a:words[-1][1] + len(words[-1][0])].rstrip(".,!?")
        if any(a < y and x < a + len(val) for x, y in busy):
            continue
        runs.append((val, (a, a + len(val))))
    return runs


def _capitalised_run(text: str) -> Optional[tuple[str, Span]]:
    runs = capitalised_runs(text)
    return runs[0] if len(runs) == 1 else None


MONEY_WORDS = ("amount", "price", "cost", "fare", "total", "rating", "balance")
PLACE_WORDS = ("city", "location", "area", "where", "destination", "place")
NAME_CUE = re.compile(r"\b(?:titled|called|named|entitled|labell?ed|call it|name it|label it|title it|"
                      r"(?:title|label|name) (?:the|my) \w+)\s+['\"]?([\w'&.-]+(?:\s+[\w'&.-]+){0,4}?)"
                      r"['\"]?(?=\s*(?:[.,!?]|$|\s(?:please|at|for|on|and|by|in)\b))", re.I)


@lru_cache(maxsize=1)
def _alias_words() -> frozenset[str]:
    return frozenset(clean_text(a) for al in VALUE_ALIASES.values() for a in al)


def _anchored_text_values(text: str, spec: WorkflowSpec, slots: list[str], asked: dict[str, float]
                          ) -> list[tuple[str, str, Span, float]]:
    """Free-text values anchored by cue words: "in Portland" (a place slot), "album Joanne", "titled Phone home"."""
    out = []
    runs = capitalised_runs(text)
    place = [s for s in slots if any(t in PLACE_WORDS for t in tokens(s.replace("_", " ")))
             and not any(t in ("from", "to", "origin") for t in tokens(s.replace("_", " ")))]
    names = [s for s in slots if any(t in ("name", "title") for t in tokens(s.replace("_", " ")))]
    def having(words: tuple[str, ...]) -> list[str]:
        return [s for s in slots if any(t in words for t in tokens(s.replace("_", " ")))]
    cue_slots = {"from": having(("from", "origin")), "to": having(("to", "destination")),
                 "by": having(("artist", "directed", "starring", "cast", "author", "singer")),
                 "watch": having(("title", "movie")), "play": having(("track", "song", "title")),
                 "person": having(("receiver", "contact", "recipient", "friend"))}
    aliases = _alias_words()
    for val, (a, b) in runs:
        if clean_text(val) in aliases:
            continue  # "interested in Musical performance": a categorical value's alias, not a place or name
        prev = [t for t in tokens(text[max(0, a - 30):a]) if t not in ("the", "a", "an")][-2:] or [""]
        before = prev[-1]
        target = None
        if ABOUT_IT.search(_sentence_of(text, (a, b))) and _sentence_of(text, (a, b)).rstrip().endswith("?"):
            continue
        if before in ("in", "near", "around") and len(place) == 1:
            target = place[0]
        elif before in ("from",) and len(cue_slots["from"]) == 1:
            target = cue_slots["from"][0]
        elif (before in ("to", "visiting", "towards") or prev[-2:] == ["going", "to"]) and len(cue_slots["to"]) == 1:
            target = cue_slots["to"][0]
        elif before in ("to", "visiting", "towards") and not cue_slots["to"] and len(place) == 1:
            target = place[0]
        elif before in ("from", "to", "with", "pay", "send") and len(cue_slots["person"]) == 1:
            target = cue_slots["person"][0]
        elif before == "by" and len(cue_slots["by"]) == 1:
            target = cue_slots["by"][0]
        elif before in ("watch", "see") and len(cue_slots["watch"]) == 1:
            target = cue_slots["watch"][0]
        elif before in ("play", "hear") and len(cue_slots["play"]) == 1:
            target = cue_slots["play"][0]
        if target:
            out.append((target, val, (a, b), 0.9 if target in asked else 0.6))
            continue
        for slot in slots:  # "album Joanne", "artist Lady Gaga"
            own = [t for t, w in slot_keywords(spec, slot) if w >= 1.0 and " " not in t]
            prev2 = tokens(text[max(0, a - 24):a])[-2:]
            if own and any(t in own for t in prev2):
                out.append((slot, val, (a, b), 0.6))
                break
    m = NAME_CUE.search(text)
    if m and len(names) == 1:
        out.append((names[0], m.group(1), (m.start(1), m.end(1)), 0.6))
    kinds = [s for s in slots if any(t in TYPE_LIKE for t in tokens(s.replace("_", " ")))]
    km = next((m for m in KIND_NOUN.finditer(text) if m.group(1).lower() not in NOT_A_KIND), None)
    if km and len(kinds) == 1:
        out.append((kinds[0], km.group(1), (km.start(1), km.end(1)), 0.7 if kinds[0] in asked else 0.55))
    return out


KIND_NOUN = re.compile(r"\b([A-Za-z][\w-]+)\s+(?:(?:type|kind|genre|sort)\s+of\s+)?(?:movies?|films?|food|cuisine|"
                       r"music|songs?|events?|shows?|restaurants?|places?|tracks?)\b", re.I)
NOT_A_KIND = {"good", "nice", "great", "some", "any", "a", "the", "new", "other", "few", "more", "best", "fun",
              "interesting", "popular", "this", "that", "these", "those", "few", "online", "of", "for", "to", "see",
              "watch", "find", "like", "love", "enjoy", "want", "any", "all", "many", "local", "cool", "my", "your",
              "their", "its", "which", "what", "such", "similar", "different", "another", "one", "two", "three",
              "me", "us", "them", "you", "it", "him", "her", "regular", "watch", "any"}


def grounded_user_values(turn: Turn, spec: WorkflowSpec) -> list[UserValue]:
    """Values s_t wrote in this turn that u_t itself expresses: the tracker's reading of the user."""
    out = []
    for slot, v in turn.state_after.items():
        if not v or turn.state_before.get(slot) == v or slot not in spec.slots:
            continue
        span = find_in_text(v, turn.user, spec.slots[slot].value_type)
        if span:
            out.append(UserValue(slot, v, span, 0.7))
    return out


def extract_user_values(turn: Turn, spec: WorkflowSpec, floor: float = 0.5) -> list[UserValue]:
    """Values the user supplies in u_t, attributed to slots (helped by what the agent just asked)."""
    text = turn.user
    asked = {s: c for s, c, _ in requested_slots(previous_agent_text(turn), spec)}
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
    for slot in intent + [s for s in spec.slots if s not in intent]:
        sp = spec.slots[slot]
        if sp.value_type in ("bool", "number") or not sp.possible_values:
            continue
        for pv in sp.possible_values:
            if pv.lower() == "dontcare":
                continue
            span, base = find_in_text(pv, text, "categorical"), 0.8
            if span is None:
                for alias in VALUE_ALIASES.get(clean_text(pv), ()):
                    span, base = find_in_text(alias, text, "text"), 0.6
                    if span:
                        break
            if span and REJECTED_BEFORE.search(text[max(0, span[0] - 24):span[0]]):
                continue  # "a flexible ticket instead of a value ticket": value is what the user does not want
            if span and not _is_question(text, span):
                by_value.setdefault(pv, []).append(slot)
                for slot_, conf in attribute([s for s in by_value[pv] if s in intent] or by_value[pv], base):
                    add(slot_, pv, span, conf if base == 0.8 else min(conf, 0.7))
    # typed patterns
    typed = {"time": list(iter_times(text)), "date": list(iter_dates(text)), "number": list(iter_numbers(text))}
    for vt, mentions in typed.items():
        slots = [s for s in intent if spec.slots[s].value_type == vt]
        if not mentions or not slots:
            continue
        for _, span in mentions[:1] if len(slots) == 1 else mentions:
            raw = text[span[0]:span[1]]
            if vt == "number" and _asks_about_offer(text, span):
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
                named = [s for s in slots if noun and any(k.startswith(noun[:4]) for k, w in
                                                          slot_keywords(spec, s) if w >= 0.6)]
                if len(named) == 1:
                    cands, base = named, 0.8
            elif raw.lower() in ("today", "tonight", "tomorrow"):
                base = 0.45  # "that's all for today" is no date answer unless one was asked
            if len(cands) > 1 and vt in ("date", "time"):
                cue = " ".join(tokens(text[max(0, span[0] - 16):span[0]])[-2:])
                ends = [s for s in cands if any(t in ("end", "return", "out", "inbound", "arrival") for t in
                                               tokens(s.replace("_", " ")))]
                if re.search(r"\b(until|till|through|to|back on|return on|out on)$", cue) and len(ends) == 1:
                    cands, base = ends, 0.7
                elif re.search(r"\b(from|starting|start|on|in on|leave on|leaving on)$", cue):
                    starts_ = [s for s in cands if s not in ends]
                    if len(starts_) == 1:
                        cands, base = starts_, 0.6
            for slot, conf in attribute(cands, base):
                pv = spec.slots[slot].possible_values
                if pv and not any(values_match(raw, p, vt) for p in pv):
                    continue  # "six years back" is no year of the schema
                if slot not in found:
                    add(slot, raw, span, conf)
            if len(cands) > 1 and not any(s in asked for s in cands):
                break
    # booleans: a slot keyword mentioned in a statement, or yes/no to a yes/no question about it
    words = tokens(text)
    for slot in intent:
        sp = spec.slots[slot]
        if sp.value_type != "bool" or slot in found:
            continue
        kws = bool_keywords(spec, slot)
        hit = None
        for tok, a, b in tokens_with_spans(text):
            if any(tok.startswith(k[:6]) for k in kws):
                hit = (tok, a, b)
                break
        if hit and not _is_question(text, (hit[1], hit[2])) and not ASKING.search(
                _sentence_of(text, (hit[1], hit[2]))[:max(0, hit[1] - _sentence_start(text, hit[1]))]):
            before = LEAD_NO.sub("", text[max(_sentence_start(text, hit[1]), hit[1] - 40):hit[1]])
            negated = NEGATION.search(" ".join(tokens(before)[-4:])) or NEGATED_AFTER.search(text[hit[2]:hit[2] + 30])
            val = "False" if negated else "True"
            add(slot, val, (hit[1], hit[2]), 0.6)
        elif not hit and slot in asked and words:
            if words[0] in ("yes", "yeah", "yep", "sure", "definitely"):
                add(slot, "True", None, 0.8)
            elif words[0] in ("no", "nope", "nah"):
                add(slot, "False", None, 0.8)
    # dontcare for the slot the agent just asked about
    dc = find_dontcare(text)
    if dc and asked:
        top = [s for s, c in asked.items() if c == max(asked.values())]
        for s in top:
            add(s, "dontcare", dc, 0.8 if len(top) == 1 else 0.55)
    # free text anchored by cue words ("in Portland", "album Joanne", "titled Phone home")
    text_slots = [s for s in intent if spec.slots[s].value_type == "text" and not spec.slots[s].possible_values]
    for slot, val, span, conf in _anchored_text_values(text, spec, [s for s in text_slots if s not in found], asked):
        if slot not in found and val.lower() not in {uv.value.lower() for uv in found.values()}:
            add(slot, val, span, conf)
    # free text: the one text slot the agent asked for, answered with the one remaining capitalised name
    text_asked = [s for s in asked if spec.slots[s].value_type == "text" and s not in found
                  and not any(t in MONEY_WORDS for t in tokens(s.replace("_", " ")))]
    if len(text_asked) == 1:
        taken = [uv.span for uv in found.values() if uv.span]
        pvs = {p.lower() for sp in spec.slots.values() for p in sp.possible_values}
        aliases = _alias_words()
        runs = [r for r in capitalised_runs(text) if r[0].lower() not in pvs and clean_text(r[0]) not in aliases
                and not any(r[1][0] < b and a < r[1][1] for a, b in taken)]
        if len(runs) == 1:
            add(text_asked[0], runs[0][0], runs[0][1], 0.6)
    return [found[s] for s in sorted(found, key=lambda s: (found[s].span or (10**9, 0))[0])]


__all__ = ["extract_user_values", "bool_keywords", "grounded_user_values", "extract_agent_acts", "requested_slots", "confirmation_cue",
           "previous_agent_text", "sentences", "slot_keywords"]
