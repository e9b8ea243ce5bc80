"""Time windows a user states for a trip ("after 8 am and before 9 pm", "I don't want to fly before 11 AM", "the
morning flights"): the bounds, in minutes after midnight, and whether they bind the departure or the arrival. Read
by the tool-step checks that compare a call's chosen options with the options a search returned; no corpus
wording here, only English time expressions."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from sage_core.evaluator.text.lexicon import NEGATION

_CLOCK = r"(?:(?P<h{n}>\d{{1,2}})(?::(?P<m{n}>\d{{2}}))?\s*(?P<ap{n}>[ap])\.?\s?m\b\.?|(?P<named{n}>noon|midday|midnight))"
# "after 8 am", "no later than 9:30 pm", "not before noon", "between 8 am and 2 pm"
_BOUND = re.compile(r"\b(?P<op>no\s+later\s+than|not\s+later\s+than|no\s+earlier\s+than|not\s+earlier\s+than|"
                    r"later\s+than|earlier\s+than|after|before)\s+" + _CLOCK.format(n=1), re.I)
_BETWEEN = re.compile(r"\bbetween\s+" + _CLOCK.format(n=1) + r"\s+and\s+" + _CLOCK.format(n=2), re.I)
# parts of the day: morning until noon, afternoon noon to 6 pm, evening from 5 pm (the words alone, not "good morning")
_PARTS = {"morning": (0.0, 720.0), "afternoon": (720.0, 1080.0), "evening": (1020.0, 1440.0)}
_PART = re.compile(r"\b(?<!good\s)(?P<part>morning|afternoon|evening)\b", re.I)
# the arrival is bound when the sentence speaks of arriving, else the departure
_ARRIVAL = re.compile(r"\b(arriv\w*|land\w*|get\s+there|get\s+in|be\s+there)\b", re.I)
_LATER_OPS = {"after", "later than", "no earlier than", "not earlier than"}
_NEGATED_OPS = {"no later than": "before", "not later than": "before", "no earlier than": "after",
                "not earlier than": "after"}


@dataclass(frozen=True)
class TimeWindow:
    """[start, end] in minutes after midnight (inclusive), bound on the departure or the arrival; the sentence
    that states it."""
    start: float
    end: float
    arrival: bool
    sentence: str

    def holds(self, minutes: Optional[float]) -> Optional[bool]:
        """Whether a clock time (minutes, possibly past 1440 on the next day) falls in the window; None unknown."""
        if minutes is None:
            return None
        m = minutes % 1440.0
        return self.start <= m <= self.end

    def describe(self) -> str:
        def clock(x: float) -> str:
            return f"{int(x) // 60:02d}:{int(x) % 60:02d}"
        side = "arrival" if self.arrival else "departure"
        return f"{side} {clock(self.start)}-{clock(min(self.end, 1439.0))}"


def _minutes(m: re.Match, n: int) -> Optional[float]:
    named = m.group(f"named{n}")
    if named:
        return 0.0 if named.lower() == "midnight" else 720.0
    h, mm, ap = int(m.group(f"h{n}")), int(m.group(f"m{n}") or 0), m.group(f"ap{n}").lower()
    if not 1 <= h <= 12 or mm > 59:
        return None
    return float((h % 12 + (12 if ap == "p" else 0)) * 60 + mm)


def _negated_before(sentence: str, at: int, window: int = 4) -> bool:
    """A negation among the few words before ``at`` ("I don't want to fly before 11 AM")."""
    words = re.findall(r"[\w']+", sentence[:at].replace("\u2019", "'"))[-window:]
    return bool(NEGATION.search(" ".join(words))) or any(w.lower().endswith("n't") for w in words)


def stated_window(sentence: str) -> Optional[TimeWindow]:
    """The window one sentence states, its bounds intersected; None when it states none (or an empty one)."""
    lo, hi, found = 0.0, 1440.0, False
    for m in _BETWEEN.finditer(sentence):
        a, b = _minutes(m, 1), _minutes(m, 2)
        if a is not None and b is not None and a < b:
            lo, hi, found = max(lo, a), min(hi, b), True
    for m in _BOUND.finditer(sentence):
        t = _minutes(m, 1)
        if t is None:
            continue
        op = " ".join(m.group("op").lower().split())
        later = op in _LATER_OPS or _NEGATED_OPS.get(op) == "after"
        if op not in _NEGATED_OPS and _negated_before(sentence, m.start()):
            later = not later  # "not before 11 am" is after 11 am
        lo, hi, found = (max(lo, t), hi, True) if later else (lo, min(hi, t), True)
    for m in _PART.finditer(sentence):
        if not _negated_before(sentence, m.start()):
            a, b = _PARTS[m.group("part").lower()]
            lo, hi, found = max(lo, a), min(hi, b), True
    if not found or lo > hi:
        return None
    return TimeWindow(lo, hi, bool(_ARRIVAL.search(sentence)), sentence.strip())
