"""Workflow specs W = (schema, required fields, legal-next ordering, outcome predicate) and
the registry that holds one spec per (service, intent)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from sage_core.data.errors import SageInputError
from sage_core.data.profile import EMPTY_PROFILE, CorpusProfile

VALUE_TYPES = ("text", "time", "date", "number", "bool", "categorical")


@dataclass
class SlotSpec:
    name: str
    description: str = ""
    is_categorical: bool = False
    possible_values: list[str] = field(default_factory=list)
    value_type: str = "text"  # one of VALUE_TYPES; drives normalisation


@dataclass
class WorkflowSpec:
    """W for one (service, intent)."""

    id: str  # "Service_1:Intent"
    service: str
    intent: str
    description: str
    slots: dict[str, SlotSpec]  # every slot of the service
    required: list[str]  # F
    optional: dict[str, str] = field(default_factory=dict)  # slot -> default
    order: Optional[list[list[str]]] = None  # legal-next groups; None = any unfilled
    outcome_slots: Optional[list[str]] = None  # O: these must be filled; None = F
    is_transactional: bool = False
    result_slots: list[str] = field(default_factory=list)
    source: str = ""
    # the slots some workflow of the service takes from the user (an SGD-format schema's intent arguments); None =
    # every slot. An agent asks the user only for these: in SGD train + dev none of 13,853 annotated agent REQUESTs
    # names another slot (a balance, a rating, an address are results), so the text extractors do not read requests
    # of them ("Which account should I check?" asks for the account type, not the balance)
    user_slots: Optional[frozenset] = None
    # required slot -> the slots the service's other intents take to find its value (an SGD-format intent whose
    # result_slots hold it: FindEvents finds the event_name BuyEventTickets needs). While the slot is empty, asking
    # for them narrows the search for it ("What kind of event?", "Any cuisine in mind?") and is legal next
    finders: dict[str, frozenset] = field(default_factory=dict)

    # --- W's relations -------------------------------------------------
    def requestable(self, slot: str) -> bool:
        """The agent may ask the user for ``slot`` at all (``user_slots``)."""
        return slot in self.slots and (self.user_slots is None or slot in self.user_slots)

    @property
    def intent_slots(self) -> list[str]:
        return list(dict.fromkeys(list(self.required) + list(self.optional)))

    def has_slot(self, slot: str) -> bool:
        return slot in self.slots

    @staticmethod
    def filled(state: dict[str, str], slot: str) -> bool:
        v = state.get(slot)
        return v is not None and str(v).strip() != ""

    def legal_next(self, state: dict[str, str]) -> set[str]:
        """Next(W, s): slots the agent may legally request in state s.

        With an explicit ``order`` the first group that still has an unfilled
        slot is legal; otherwise any unfilled required or optional slot is, and so
        is every unfilled slot that finds an empty required one (``finders``).
        """
        if self.order:
            for group in self.order:
                open_slots = {s for s in group if not self.filled(state, s)}
                if open_slots:
                    return open_slots
            return set()
        out = {s for s in self.intent_slots if not self.filled(state, s)}
        for slot, finders in self.finders.items():
            if not self.filled(state, slot):
                out.update(s for s in finders if not self.filled(state, s))
        return out

    def missing_for_outcome(self, state: dict[str, str]) -> list[str]:
        needed = self.outcome_slots if self.outcome_slots is not None else self.required
        return [s for s in needed if not self.filled(state, s)]

    def outcome(self, state: dict[str, str]) -> bool:
        """O(s): the workflow may be confirmed/committed in state s."""
        return not self.missing_for_outcome(state)

    def describe_slot(self, slot: str) -> str:
        spec = self.slots.get(slot)
        if spec and spec.description:
            return spec.description
        return slot.replace("_", " ")


class WorkflowRegistry:
    """All workflows known to one evaluation run, keyed by workflow id."""

    def __init__(self, specs: Iterable[WorkflowSpec] = (), source: str = "",
                 profile: CorpusProfile = EMPTY_PROFILE):
        self.specs: dict[str, WorkflowSpec] = {}
        self.source = source
        self.profile = profile  # the corpus's lexical knowledge; attached by sage_core.corpora
        self.format = ""  # the spec reader that built it: "sgd-schema", "spec-yaml" or "" (built in code)
        for s in specs:
            self.specs[s.id] = s

    def __len__(self) -> int:
        return len(self.specs)

    def __contains__(self, wid: str) -> bool:
        return wid in self.specs

    def __iter__(self):
        return iter(self.specs.values())

    def merge(self, other: "WorkflowRegistry") -> "WorkflowRegistry":
        out = WorkflowRegistry(list(self.specs.values()) + list(other.specs.values()),
                               source=";".join(x for x in (self.source, other.source) if x), profile=self.profile)
        out.format = self.format
        return out

    def get(self, wid: str, *, file: Optional[str] = None, line: Optional[int] = None) -> WorkflowSpec:
        if wid not in self.specs:
            known = ", ".join(sorted(self.specs)[:8])
            more = "" if len(self.specs) <= 8 else f" (and {len(self.specs) - 8} more)"
            raise SageInputError(f"unknown workflow '{wid}'; the schema defines {known}{more}",
                                 file=file, line=line, field="workflow")
        return self.specs[wid]

    def services(self) -> list[str]:
        return sorted({s.service for s in self.specs.values()})


# --- value types -----------------------------------------------------------
_BOOL_VALUES = {"true", "false"}


def infer_value_type(name: str, is_categorical: bool, possible_values: list[str], description: str = "") -> str:
    """The slot's value type from its values, then its name, then the head of its description.

    A schema may name a slot in words no name pattern knows (``ring_time`` is read, ``dining_hour`` or
    ``collection_day`` would not be by the name alone): the description's head noun ("Clock time at which ...",
    "Day the hire starts", "How many rooms ...") then decides. The name comes first, so a schema whose names say
    the type reads as before."""
    low = name.lower()
    pv = [str(v).lower() for v in possible_values]
    if pv and set(pv) <= _BOOL_VALUES | {"dontcare"}:
        return "bool"
    if pv and all(re.fullmatch(r"\d+", v) for v in pv if v != "dontcare"):
        return "number"
    if re.search(r"(^|_)(time|leaveat|arriveby|leave|arrive)($|_)", low) or low.endswith("time"):
        return "time"
    if re.search(r"(^|_)(date|day)($|_)", low) or low.endswith("date"):
        return "date" if not is_categorical else "categorical"
    # "stay" is a length ("bookstay", "stay_length") unless the name also names a place ("stay_city"); a
    # "number" the description calls a telephone is a phone number ("contact_number")
    if re.search(r"(number|num|count|seats|people|rooms)", low) or (
            "stay" in low and not re.search(r"(city|town|place|location|destination|area|address|name)", low)):
        if not is_categorical and "phone" not in low and not _PHONE_DESC.search(description or ""):
            return "number"
    if is_categorical:
        return "categorical"
    return _type_from_description(description)


# The description's head: its words up to the first preposition, relative word or verb-like joint ("Clock time |at
# which ...", "Day | the hire starts" is cut at "the"). Read only where the name says nothing.
_HEAD_END = re.compile(r"\b(of|for|at|in|on|to|from|by|with|which|that|when|where|the|a|an|is|are|was|will|"
                       r"should|must|can|or|and|out|who|whose|user|users|guest|guests)\b")
_PHONE_DESC = re.compile(r"\b(tele)?phone\b", re.I)
# "leaves at this local time", "on which day": the type named at the end, as the slot's value
_AT_THIS = re.compile(r"\b(?:at|by|on|from|until) (?:this|that|which|what) (?:\w+ )?(time|hour|date|day)\b")
_COUNT_DESC = re.compile(r"^(?:the\s+)?(?:how\s+many\b|(?:total\s+)?(?:number|count)\s+of\s+(?!the\b|a\b|an\b)"
                         r"[a-z]+s\b)")


def _plain(description: str) -> str:
    """A description lower-cased, with everything but letters, apostrophes and spaces made a space."""
    return re.sub(r"[^a-z' ]+", " ", (description or "").lower()).strip()


def description_head(description: str) -> list[str]:
    """The words of a slot description's head noun phrase, lower-cased ("Town the trip starts in" -> ["town"],
    "Clock time at which ..." -> ["clock", "time"]); empty when the head runs past four words (a sentence, not a
    noun phrase)."""
    return _head_of(_plain(description))


def _head_of(d: str) -> list[str]:
    """``description_head`` of a description already ``_plain``."""
    d = re.sub(r"^(the|a|an)\s+", "", d)
    cut = _HEAD_END.search(d)
    head = d[:cut.start()].split() if cut else d.split()
    return head if len(head) <= 4 else []


def _type_from_description(description: str) -> str:
    d = _plain(description)
    if not d:
        return "text"
    if _COUNT_DESC.match(d):  # "How many rooms", "Number of seats"; not "Number of the airport", "Contact number"
        return "number"
    at = _AT_THIS.search(d)
    if at:
        return "time" if at.group(1) in ("time", "hour") else "date"
    head = _head_of(d)
    if not head:
        return "text"
    if any(w in ("time", "hour", "clock") for w in head) and not any(w in ("duration", "zone") for w in head):
        return "time"
    if any(w in ("date", "day") for w in head):
        return "date"
    return "text"


# --- SGD-format schema -----------------------------------------------------
def require_key(obj: dict, key: str, path: str, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise SageInputError(f"missing '{key}' in {where}", file=path, field=key)
    return obj[key]
