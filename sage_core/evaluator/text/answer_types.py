"""Answer types: what kind of value a question asks for ("who" -> a person, "how many" -> a count) and what kind
of value a slot holds, read from the slot's own name and description; and which end of a trip or booking a
question and a slot are about (origin or destination, pick-up or drop-off, check-in or check-out).

The slot head's listwise stage uses their agreement as features (``heads.RANK_FEATURES``, ``AnswerFit``): on services the
encoder never saw, "To whom?" is a weak embedding match for "recipient name: name of the recipient", but it asks
for a person and only one slot of the schema holds one. The kinds are coarse and schema-driven (no slot of any
corpus is listed); the words were written from the training and dev schemas' slot names and descriptions, and
the weight the features get is fitted on the training split like the rest of the head (``science.heads.train``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

# the units a length of time is counted in ("how many nights")
_TIME_UNITS = r"(?:days|nights|weeks|months|years|hours|minutes)"
# question phrases -> the kinds of value they ask for ("when" asks for a date or a time)
QUESTION_KINDS: tuple[tuple[re.Pattern, frozenset], ...] = tuple((re.compile(p, re.I), frozenset(k)) for p, k in (
    # "how many days / nights ...?" asks for a length of time, not a count of things (dev: "How many days should I make
    # the reservation for?" read as a count ruled out the stay length and favoured the number of rooms)
    (r"\bhow many\b(?!\s+" + _TIME_UNITS + r"\b)", {"COUNT"}),
    (r"\bhow many\s+" + _TIME_UNITS + r"\b", {"DURATION"}),
    (r"\bhow much\b(?!\s+(?:time|longer)\b)", {"AMOUNT"}),
    (r"\bhow long\b|\bhow much (?:time|longer)\b", {"DURATION", "COUNT"}),
    (r"\b(?:what|which|at what)\s+(?:time|hour)s?\b", {"TIME"}),
    (r"\b(?:what|which)\s+(?:date|day)s?\b", {"DATE"}),
    (r"\bwhen\b", {"DATE", "TIME"}),
    (r"\bwhere\b|\b(?:what|which)\s+(?:city|cities|location|area|address|place|airport|station|country|state|"
     r"neighbou?rhood)\b", {"PLACE"}),
    (r"\b(?:who|whom|whose)\b", {"PERSON"}),
    # "any particular type of food?", "a specific kind of cuisine?" ask for a kind as "what kind" does (train: of 134
    # agent questions with "<kind word> of" and no "what / which" before it, 133 request a slot; dev 68 of 71)
    (r"\b(?:what|which)\s+(?:kind|type|sort|category|class|genre|style)s?\b|"
     r"\b(?:kind|type|sort|category|genre|style)s?\s+of\b", {"TYPE"}),
))
# a question can name the kind it asks for as the noun of "what is the / your ..." or after a word of preference ("What
# is the arrival day?", "What's your pick-up location?", "Do you have any preferred city?", "your planned date"), not
# only right after its wh-word. Train + dev request units (questions) that the patterns above name no kind in: these
# name one in 840, of which 3 request no slot holding it ("And what is your departure date?" annotated as the origin
# city); "the amount of" is no sum ("What is the amount of bedrooms you'll need?" asks for a count), and "which is a
# ..." is left out (a relative clause: "..., which is a Place of Worship?")
_KIND_NOUNS = (("DATE", r"dates?|days?"), ("TIME", r"times?|hours?"),
               ("AMOUNT", r"budget|price|cost|fare|rent|amount(?!\s+of\b)"),
               ("PLACE", r"city|cities|locations?|areas?|address(?:es)?|places?|airports?|stations?|country|countries|"
                         r"state|neighbou?rhoods?|destination|origin"))
_NAMED_AS_COPULA = r"\b(?:what|which)(?:'s|\s+(?:is|are|was|were|will be|would be|should be))\s+(?:the|your)\s+" \
                   r"(?:[\w-]+\s+){0,3}?"
_NAMED_AS_PREFERENCE = r"\b(?:any|a|your|the)\s+(?:preferred|particular|specific|favou?rite|desired|intended|planned|" \
                       r"expected)\s+(?:[\w-]+\s+){0,2}?"
QUESTION_KINDS += tuple((re.compile(lead + r"(?:" + nouns + r")\b", re.I), frozenset({kind}))
                        for lead in (_NAMED_AS_COPULA, _NAMED_AS_PREFERENCE) for kind, nouns in _KIND_NOUNS)
# answer kinds whose question needs its noun to say which slot ("How many?" of travellers, rooms or days)
QUANTITY_KINDS = frozenset({"COUNT", "AMOUNT", "DURATION"})
# slot wording -> the kind of value the slot holds
SLOT_KINDS: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(p), k) for p, k in (
    (r"\b(?:date|day)\b", "DATE"),
    (r"\b(?:time|hour)\b", "TIME"),
    (r"\bnumber of\b|\bcount\b|\bhow many\b|^num\b", "COUNT"),
    (r"\b(?:length|duration|how long|nights|number of days)\b", "DURATION"),
    (r"\b(?:amount|price|cost|fare|money|balance|budget|fee|rent)\b", "AMOUNT"),
    (r"\b(?:city|town|location|address|area|region|destination|origin|place|where|venue|airport|station|country|"
     r"street)\b",
     "PLACE"),
    (r"\b(?:recipient|receiver|contact|person|payee|who|whom|doctor|dentist|stylist|therapist|artist|singer|actor|"
     r"actors|director|author)\b", "PERSON"),
))
# a slot named "... type" holds a type, whatever the words before it say ("recipient_account_type")
TYPE_HEADS = frozenset({"type", "kind", "category", "class", "genre", "subcategory", "style"})
TYPE_WORDS = re.compile(r"\b(?:type|kind|category|class|genre)\b")
# a description's head phrase: what comes before its first preposition or clause word ("Number of travelers" of
# "Number of travelers for journey"; "The amount of money" of "The amount of money held in a bank account")
_HEAD_END = re.compile(r"\b(?:for|in|at|to|on|from|which|that|who|whom|where|when|held|with|by|if|whether)\b.*$")
# numbers that are identifiers: no kind a wh-question asks for (not a count, nor a person: "contact number")
_IDENTIFIER = re.compile(r"\b(?:phone|contact|account|reference|confirmation|card) number\b")
# yes/no slots hold no value kind a wh-question asks for
_YES_NO_DESC = re.compile(r"^\s*(?:boolean|whether|flag)\b")
_YES_NO_NAME = frozenset({"is", "has", "arrives", "offers", "serves", "allows"})


def _kinds(text: str) -> set[str]:
    if _IDENTIFIER.search(text):
        return set()  # "phone number of the venue" holds an identifier, not a count or a place
    return {k for rx, k in SLOT_KINDS if rx.search(text)}


@lru_cache(maxsize=4096)
def slot_is_yes_no(name: str, description: str) -> bool:
    """The slot holds yes or no (its description says "boolean" / "whether" / "flag", or its name opens with "is",
    "has", ...): it answers no question asking for a kind of value."""
    words = re.sub(r"[_\-]+", " ", name or "").lower().split()
    return bool(_YES_NO_DESC.match((description or "").lower()) or (words and words[0] in _YES_NO_NAME))


@lru_cache(maxsize=4096)
def slot_kinds(name: str, description: str) -> frozenset:
    """The kinds of value a slot holds: from its name, else from the head phrase of its description; none for a
    yes/no slot or a slot whose wording names no kind (``restaurant_name``, ``cuisine``)."""
    words = re.sub(r"[_\-]+", " ", name or "").lower().split()
    desc = (description or "").lower()
    if slot_is_yes_no(name, description):
        return frozenset()
    if words and words[-1] in TYPE_HEADS:
        return frozenset({"TYPE"})
    named = _kinds(" ".join(words))
    if named:
        return frozenset(named)
    head = _HEAD_END.sub("", desc)
    if TYPE_WORDS.search(head):
        return frozenset({"TYPE"})
    return frozenset(_kinds(head) | ({"COUNT"} if re.search(r"\bsize\b", head) else set()))


def question_kinds(sentence: str) -> frozenset:
    """The kinds of value a question asks for (several for "When and where ...?"); empty when it names none
    ("Any preference?")."""
    out: set[str] = set()
    for rx, kinds in QUESTION_KINDS:
        if rx.search(sentence or ""):
            out |= kinds
    return frozenset(out)


# --- which end of a trip or a booking a question and a slot are about ----------------------------------------------
# Sibling slots (origin / destination, pick-up / drop-off, check-in / check-out, departure / return) hold the same
# kind of value; the slot head confuses them ("Where are you traveling from?" scored the destination). A question
# says its end by a trailing preposition ("... from?"), "from where" / "where to", or by verbs of one end only.
_START_WORDS = r"(?:from|origin|depart\w*|leav\w*|pick\w*|start\w*|begin\w*|outbound|onward|source|board\w*)"
_END_WORDS = r"(?:to|destination|arriv\w*|return\w*|drop\w*|end\w*|inbound|till|until)"
_TRAILING = re.compile(r"\b(from|to)\s*[?.!]*\s*$", re.I)
_START_Q = re.compile(r"\bfrom where\b|\bwhere\b[^?.!]*\bfrom\b|\b(?:leav|depart|pick(?:ing)?\s+(?:\w+\s+)?up|pickup|"
                      r"check(?:ing)?[\s-]+in\b|start|begin|board|from (?:when|what|which))", re.I)
_END_Q = re.compile(r"\bwhere to\b|\bto where\b|\b(?:going|heading|headed|travel+ing|flying|fly|go|get)\s+to\b|"
                    r"\b(?:arriv|return|drop(?:ping)?\s+(?:\w+\s+)?off|dropoff|check(?:ing)?[\s-]+out\b|till\b|until\b|"
                    r"up to (?:when|what|which))|\bdestination\b|\bwhere\b[^?.!]*\b(?:go|going|head\w*|travel+ing|"
                    r"fly\w*)\b(?![^?.!]*\bfrom\b)", re.I)
_SLOT_START = re.compile(r"\b" + _START_WORDS + r"\b|\bcheck in\b")
_SLOT_END = re.compile(r"\b" + _END_WORDS + r"\b|\bcheck out\b|\bwhere to\b")
# descriptions say "to" for purposes ("money to transfer"): only the name's own "to" / "from" counts, the
# description's strong words otherwise
_DESC_START = re.compile(r"\b(?:origin|departure|depart\w*|leaving|pick(?:ing)?[\s-]?up|start\w*|begin\w*|"
                         r"outbound|check(?:ing)?[\s-]in)\b")
_DESC_END = re.compile(r"\b(?:destination|arrival|arriv\w*|return\w*|drop(?:ping)?[\s-]?off|ending|end|inbound|"
                       r"check(?:ing)?[\s-]out)\b")


@lru_cache(maxsize=4096)
def slot_side(name: str, description: str) -> str:
    """"start", "end" or "" for a slot: from its name words, else from its description's strong words."""
    words = " ".join(re.sub(r"[_\-]+", " ", name or "").lower().split())
    s, e = bool(_SLOT_START.search(words)), bool(_SLOT_END.search(words))
    if s != e:
        return "start" if s else "end"
    if s and e:
        return ""
    desc = (description or "").lower()
    s, e = bool(_DESC_START.search(desc)), bool(_DESC_END.search(desc))
    return ("start" if s else "end") if s != e else ""


def question_side(sentence: str) -> str:
    """"start", "end" or "" for a question: a trailing "from" / "to" decides, else cues of one end only."""
    m = _TRAILING.search(sentence or "")
    if m:
        return "start" if m.group(1).lower() == "from" else "end"
    s, e = bool(_START_Q.search(sentence or "")), bool(_END_Q.search(sentence or ""))
    return ("start" if s else "end") if s != e else ""


# --- how a question fits each slot of a schema ------------------------------------------------------------------
ANSWER_FEATURES = ["answer kind agrees", "answer kind conflicts"]
SIDE_FEATURES = ["trip end agrees", "trip end conflicts"]


@dataclass(frozen=True)
class AnswerFit:
    """What a question asks for (kinds of value, an end of the trip) against what each slot of a schema holds: read
    once per (question, schema) and used both for the slot head's listwise features and for letting the slots that
    do not fit yield to those that do. A slot's end counts only when the schema has slots of both ends (a sibling to
    tell it from: "Start time of event" in a schema without an end is no trip's start)."""

    asked_kinds: frozenset
    asked_side: str
    kinds: tuple  # per slot, slot_kinds
    sides: tuple  # per slot, slot_side; all "" unless the schema has slots of both ends
    yes_no: tuple  # per slot, slot_is_yes_no

    def kind_agreement(self) -> list[tuple[float, float]]:
        """Per slot: (1, 0) when the question asks for a kind of value the slot holds, (0, 1) when it asks for kinds
        the slot does not hold, (0, 0) when either names no kind."""
        if not self.asked_kinds:
            return [(0.0, 0.0)] * len(self.kinds)
        return [(0.0, 0.0) if not k else ((1.0, 0.0) if k & self.asked_kinds else (0.0, 1.0)) for k in self.kinds]

    def side_agreement(self) -> list[tuple[float, float]]:
        """Per slot: (1, 0) when the question is about the end of the trip / booking the slot is, (0, 1) when about
        the other end, (0, 0) when either says no end."""
        if not self.asked_side:
            return [(0.0, 0.0)] * len(self.sides)
        return [(0.0, 0.0) if not h else ((1.0, 0.0) if h == self.asked_side else (0.0, 1.0)) for h in self.sides]

    def features(self) -> list[tuple[float, ...]]:
        """Per slot: answer-kind agreement, then trip-end agreement (``ANSWER_FEATURES + SIDE_FEATURES``)."""
        return [a + b for a, b in zip(self.kind_agreement(), self.side_agreement())]

    def other_end(self) -> list[bool]:
        """Per slot: it is of the other end of the trip than the question asks about."""
        return [bool(self.asked_side and h and h != self.asked_side) for h in self.sides]

    def misfits(self) -> list[bool]:
        """Per slot: the question asks for kinds of value and the slot holds none of them (a yes/no slot holds none)."""
        return [bool(self.asked_kinds) and (bool(k and not k & self.asked_kinds) or yn)
                for k, yn in zip(self.kinds, self.yes_no)]

    def ruled_out_beside(self, i: int) -> list[bool]:
        """Per slot j: the question fits slot i and not j, so j cannot be what it asks for where i can: it asks for a
        kind of value i holds and j (a yes/no slot included) does not, or about i's end of the trip and not j's.
        "What time would you like to leave?" fits leaving_time and rules out leaving_date; "How much money?" rules
        out account_type beside transfer_amount."""
        fits, misfits, ends = bool(self.kinds[i] & self.asked_kinds), self.misfits(), self.other_end()
        return [(fits and misfits[j]) or (ends[j] and not ends[i]) for j in range(len(self.kinds))]

    def kind_ties(self, i: int) -> list[bool]:
        """Per slot j: the question asks for either of two kinds ("when": a date or a time; counts, sums and durations
        left out, their noun says which), slot i holds one of them and j another, and j is not of the other end of
        the trip: the question asks for j as well as for i."""
        asked = self.asked_kinds - QUANTITY_KINDS
        ki = self.kinds[i] & asked
        if len(asked) < 2 or not ki:
            return [False] * len(self.kinds)
        ends = self.other_end()
        return [j != i and bool(k & asked) and k & asked != ki and not ends[j] for j, k in enumerate(self.kinds)]

    def exclusive_ends(self, probs: Sequence[float]) -> list[float]:
        """A question about one end of a trip asks for one of two siblings: each slot of the other end keeps its
        probability only as far as its sibling of the asked end (a slot holding the same kind of value) is not asked
        for, p * (1 - p_sibling). "Where are you traveling from?" scored the destination above the origin (0.93 /
        0.89)."""
        out = [float(p) for p in probs]
        for i, other in enumerate(self.other_end()):
            if other:
                sib = [probs[j] for j, hj in enumerate(self.sides)
                       if hj == self.asked_side and self.kinds[j] & self.kinds[i]]
                if sib:
                    out[i] = float(probs[i]) * (1.0 - max(sib))
        return out

    def exclusive_kinds(self, probs: Sequence[float]) -> list[float]:
        """A question asks for the kinds of value it names: a slot holding none of them keeps its probability only as
        far as no slot holding one is asked for, p * (1 - max p_agreeing). "What time would you like to leave?"
        scored the leaving date beside the leaving time (dev). A yes/no slot holds no kind a question asks for, so
        it yields too: "Is there any particular type of food you are looking for?" scored the vegetarian slot 0.41
        beside the cuisine (dev; services without train dialogues, requested slots P 0.959 -> 0.960, R 0.930 ->
        0.932)."""
        out = [float(p) for p in probs]
        agree = [float(probs[j]) for j, k in enumerate(self.kinds) if k & self.asked_kinds]
        if not agree:
            return out
        for i, misfit in enumerate(self.misfits()):
            if misfit:
                out[i] = float(probs[i]) * (1.0 - max(agree))
        return out

    def exclusive(self, probs: Sequence[float]) -> list[float]:
        """``exclusive_kinds`` after ``exclusive_ends``."""
        return self.exclusive_kinds(self.exclusive_ends(probs))


def answer_fit(sentence: str, slots: Sequence[tuple[str, str]]) -> AnswerFit:
    """The fit of a question with each (name, description) of a schema."""
    sides = tuple(slot_side(n, d) for n, d in slots)
    if not ("start" in sides and "end" in sides):
        sides = ("",) * len(sides)
    return AnswerFit(question_kinds(sentence), question_side(sentence), tuple(slot_kinds(n, d) for n, d in slots),
                     sides, tuple(slot_is_yes_no(n, d) for n, d in slots))


__all__ = ["ANSWER_FEATURES", "SIDE_FEATURES", "AnswerFit", "answer_fit", "question_kinds", "question_side", "slot_kinds",
           "slot_side"]
