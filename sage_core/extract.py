"""Extract user values and agent acts from raw text when a slice carries no annotations.

Real agent logs rarely come with dialogue acts. We recover them with schema
value matching, typed patterns (times, dates, numbers) and question /
confirmation cues. Every item carries a confidence < 1.0 so that S1 never
decides on it (extracted evidence goes to S2), and items below the
extraction floor are dropped rather than guessed.
"""
from __future__ import annotations

import re
from typing import Optional

from .normalize import (find_dontcare, find_in_text, iter_dates, iter_numbers, iter_times, tokens,
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
    "area": ("where", "area", "location"), "where": ("where",), "destination": ("where", "destination", "going"),
    "seats": ("how many", "people", "seats", "party"), "tickets": ("how many", "tickets"),
    "passengers": ("how many", "passengers", "people"), "adults": ("how many", "people", "adults", "guests"),
    "rooms": ("how many", "rooms"), "beds": ("bedrooms", "beds", "bed rooms"), "baths": ("bathrooms", "baths"),
    "amount": ("how much", "amount"), "receiver": ("who", "whom", "contact", "recipient"),
    "contact": ("who", "whom", "contact"), "category": ("what kind", "what type", "cuisine", "category", "type of"),
    "genre": ("genre", "what kind", "type of"), "airlines": ("airline",), "price": ("price", "budget", "cost"),
    "cuisine": ("cuisine", "food"), "stay": ("how long", "how many nights", "nights"),
    "length": ("how long", "nights", "days"), "origin": ("from where", "leaving from", "departing from", "origin"),
    "from": ("from where", "leaving from", "departing from", "where from"),
    "to": ("where to", "going to", "destination"), "intent": ("rent or buy", "buy or rent"),
    "title": ("which movie", "what movie", "title"), "track": ("song", "track"), "artist": ("artist", "singer"),
    "event": ("event",), "payment": ("account", "pay with", "payment method", "card"), "method": ("account", "card"),
    "insurance": ("insurance",), "luggage": ("luggage", "bags"), "protection": ("trip protection", "insurance"),
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
    (r"\b(?:shall|should) i (?:go ahead and )?(?:book|reserve|make|schedule|buy|purchase|proceed|go ahead)\b",
     "CONFIRM", 0.6),
    (r"\b(?:i(?: have|'ve)|we(?: have|'ve)) (?:successfully )?(?:booked|reserved|scheduled|made|purchased|"
     r"bought|sent|set up|added|confirmed)\b", "NOTIFY_SUCCESS", 0.9),
    (r"\b(?:has|have) been (?:successfully )?(?:booked|reserved|made|scheduled|confirmed|placed|sent|"
     r"purchased|processed|completed|added|set)\b|\b(?:is|are) (?:now )?(?:booked|reserved|confirmed)\b|"
     r"\bsuccessfully (?:booked|reserved|made|scheduled|purchased|sent)\b|\bbooking is (?:complete|done)\b|"
     r"\b(?:is|was) successful\b|\bnow playing\b|\bstarted playing\b", "NOTIFY_SUCCESS", 0.85),
]
_CONFIRM_RES = [(re.compile(p, re.I), a, c) for p, a, c in CONFIRM_CUES]
NEGATION = re.compile(r"\b(no|not|don't|dont|doesn't|without|never|nope|isn't|aren't|won't)\b", re.I)
_SENT_RE = re.compile(r"[^.!?]*[.!?]?")


def sentences(text: str) -> list[tuple[str, int]]:
    """(sentence, start offset) pairs; a question mark ends a sentence."""
    out = []
    for m in _SENT_RE.finditer(text or ""):
        s = m.group(0)
        if s.strip():
            out.append((s, m.start()))
    return out


def previous_agent_text(turn: Turn) -> str:
    for u in reversed(turn.history):
        if u.speaker == "agent":
            return u.text
    return ""


def slot_keywords(spec: WorkflowSpec, slot: str) -> list[tuple[str, float]]:
    """Words that signal a request for ``slot``: its own name tokens (strong) and hints (weaker)."""
    own = [t for t in tokens(slot.replace("_", " ")) if t not in STOP]
    kws: dict[str, float] = {}
    for t in own:
        kws[t] = 1.0
        if t.endswith("s") and len(t) > 3:
            kws[t[:-1]] = 1.0
        for h in NAME_HINTS.get(t, ()):
            kws.setdefault(h, 0.7)
    vt = spec.slots[slot].value_type if slot in spec.slots else "text"
    for h in TYPE_HINTS.get(vt, ()):
        kws.setdefault(h, 0.5)
    return sorted(kws.items())


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


def requested_slots(text: str, spec: WorkflowSpec, state: Optional[dict[str, str]] = None
                    ) -> list[tuple[str, float, Span]]:
    """Slots the agent asks for in ``text``: question sentences with a request cue and a slot keyword."""
    out: dict[str, tuple[float, Span]] = {}
    candidates = spec.intent_slots + [s for s in spec.slots if s not in spec.intent_slots]
    for sent, off in sentences(text):
        if not (sent.rstrip().endswith("?") or re.search(r"\b(tell me|let me know|need|provide|specify)\b", sent, re.I)):
            continue
        if not REQUEST_CUES.search(sent) or confirmation_cue(sent):
            continue
        toks = tokens_with_spans(sent)
        words = [t for t, _, _ in toks]
        # a sentence that names a concrete state value is an offer/confirmation, not a request
        if state and any(v and len(v) > 2 and find_in_text(v, sent) for v in state.values()
                         if v.lower() not in ("true", "false", "dontcare")):
            continue
        scores: dict[str, tuple[float, Span]] = {}
        for slot in candidates:
            best = None
            for kw, w in slot_keywords(spec, slot):
                i = _phrase_in(kw, words)
                if i is not None and (best is None or w > best[0]):
                    n = len(kw.split())
                    best = (w, (off + toks[i][1], off + toks[i + n - 1][2]))
            if best:
                prior = 1.0 if slot in spec.intent_slots else 0.6
                scores[slot] = (best[0] * prior, best[1])
        if not scores:
            continue
        top = max(s for s, _ in scores.values())
        keep = {k: v for k, v in scores.items() if v[0] >= top - 1e-9 or v[0] >= 0.7}
        share = 1.0 if len(keep) <= 3 else 3.0 / len(keep)
        for slot, (sc, sp) in keep.items():
            conf = round(min(0.95, (0.35 + 0.5 * sc) * share), 3)
            if slot not in out or out[slot][0] < conf:
                out[slot] = (conf, sp)
    return sorted(((s, c, sp) for s, (c, sp) in out.items()), key=lambda x: x[2])


def extract_agent_acts(turn: Turn, spec: WorkflowSpec, floor: float = 0.5) -> list[AgentAct]:
    """REQUEST and CONFIRM/NOTIFY_SUCCESS acts recovered from the agent reply."""
    acts: list[AgentAct] = []
    cue = confirmation_cue(turn.agent)
    if cue and cue[1] >= floor:
        acts.append(AgentAct(cue[0], None, None, cue[1]))
    known = {**turn.state_before, **turn.state_after}
    for slot, conf, _ in requested_slots(turn.agent, spec, known):
        if conf >= floor:
            acts.append(AgentAct("REQUEST", slot, None, conf))
    return acts


def _is_question(text: str, span: Span) -> bool:
    for sent, off in sentences(text):
        if off <= span[0] < off + len(sent):
            return sent.rstrip().endswith("?")
    return False


def _capitalised_run(text: str) -> Optional[tuple[str, Span]]:
    skip = {"I", "Im", "I'm", "Yes", "No", "Ok", "Okay", "Sure", "Please", "Thanks", "Thank", "Hi", "Hello"}
    best = None
    for m in re.finditer(r"(?:[A-Z][\w'&.-]*)(?:\s+(?:of|the|de|la|&)?\s*[A-Z][\w'&.-]*)*", text):
        words = m.group(0).split()
        while words and words[0].strip(".,") in skip:
            words = words[1:]
        if not words:
            continue
        val = " ".join(words).rstrip(".,")
        start = text.find(val, m.start())
        if best is None or len(val) > len(best[0]):
            best = (val, (start, start + len(val)))
    return best


def extract_user_values(turn: Turn, spec: WorkflowSpec, floor: float = 0.5) -> list[UserValue]:
    """Values the user supplies in u_t, attributed to slots (helped by what the agent just asked)."""
    text = turn.user
    asked = {s: c for s, c, _ in requested_slots(previous_agent_text(turn), spec)}
    intent = spec.intent_slots
    found: dict[str, UserValue] = {}

    def add(slot: str, value: str, span: Optional[Span], conf: float) -> None:
        conf = round(min(conf, 0.95), 3)
        if conf >= floor and (slot not in found or found[slot].confidence < conf):
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
            span = find_in_text(pv, text, "categorical")
            if span and not _is_question(text, span):
                by_value.setdefault(pv, []).append(slot)
                for slot_, conf in attribute([s for s in by_value[pv] if s in intent] or by_value[pv], 0.8):
                    add(slot_, pv, span, conf)
    # typed patterns
    typed = {"time": list(iter_times(text)), "date": list(iter_dates(text)), "number": list(iter_numbers(text))}
    for vt, mentions in typed.items():
        slots = [s for s in intent if spec.slots[s].value_type == vt]
        if not mentions or not slots:
            continue
        for _, span in mentions[:1] if len(slots) == 1 else mentions:
            raw = text[span[0]:span[1]]
            if _is_question(text, span):
                continue
            base = 0.75
            if vt == "number":
                after = text[span[1]:span[1] + 24].lower()
                base = 0.75 if re.match(r"\s*(people|persons|person|of us|tickets?|seats?|rooms?|adults?|"
                                        r"passengers?|nights?|days?|beds?|bedrooms?|baths?|bathrooms?|guests?)",
                                        after) else 0.45
            for slot, conf in attribute(slots, base):
                if slot not in found:
                    add(slot, raw, span, conf)
            if len(slots) > 1 and not any(s in asked for s in slots):
                break
    # booleans: a slot keyword mentioned in a statement, or yes/no to a yes/no question about it
    for slot in intent:
        sp = spec.slots[slot]
        if sp.value_type != "bool" or slot in found:
            continue
        kws = [k for k, w in slot_keywords(spec, slot) if w >= 1.0 and len(k) > 3]
        words = tokens(text)
        hit = next((k for k in kws if any(w.startswith(k[:6]) for w in words)), None)
        if hit:
            idx = next(i for i, w in enumerate(words) if w.startswith(hit[:6]))
            window = " ".join(words[max(0, idx - 4):idx])
            if "?" in text and not re.search(r"\b(want|need|would like|with|prefer)\b", text, re.I):
                continue
            val = "False" if NEGATION.search(window) else "True"
            add(slot, val, None, 0.6)
        elif slot in asked and words:
            if words[0] in ("yes", "yeah", "yep", "sure"):
                add(slot, "True", None, 0.8)
            elif words[0] in ("no", "nope"):
                add(slot, "False", None, 0.8)
    # dontcare for the slot the agent just asked about
    dc = find_dontcare(text)
    if dc and asked:
        top = [s for s, c in asked.items() if c == max(asked.values())]
        for s in top:
            add(s, "dontcare", dc, 0.8 if len(top) == 1 else 0.55)
    # free text: the one text slot the agent asked for, answered with a capitalised name
    text_asked = [s for s in asked if spec.slots[s].value_type == "text" and s not in found]
    if len(text_asked) == 1:
        run = _capitalised_run(text)
        if run:
            add(text_asked[0], run[0], run[1], 0.6)
    return [found[s] for s in sorted(found, key=lambda s: (found[s].span or (10**9, 0))[0])]


__all__ = ["extract_user_values", "extract_agent_acts", "requested_slots", "confirmation_cue",
           "previous_agent_text", "sentences", "slot_keywords"]
