"""The most a user says they will pay ("I'm willing to pay up to $600", "my budget is $1,000", "no more than $80"):
read by the tool-step check that compares a write's charge with it. English money phrases only, no corpus wording."""
from __future__ import annotations

import re
from typing import Optional

_AMOUNT = r"\$\s?(?P<amount>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<cents>\d{1,2}))?"
# "up to $600", "no more than $80", "at most $50", "a budget of $1,000", "under $1,000", "within the $600 limit"
_LIMIT = re.compile(r"\b(?:up\s+to|no\s+more\s+than|not\s+more\s+than|at\s+most|a\s+maximum\s+of|max(?:imum)?|"
                    r"under|less\s+than|below|budget\s+(?:is|of)|budget\s+is\s+about|within(?:\s+(?:the|my|a))?)\s+"
                    + _AMOUNT, re.I)
_LIMIT_AFTER = re.compile(_AMOUNT + r"\s+(?:limit|budget|max(?:imum)?|or\s+less|at\s+most|tops)\b", re.I)
# a cap inside a condition clause ("if it is under $100, book it") is none; "if needed, up to $100" is one
_NOT_A_CAP = re.compile(r"\b(?:if|when|unless|whether)\b[^.?!,]*$", re.I)


def _value(m: re.Match) -> float:
    return float(m.group("amount").replace(",", "")) + (float("0." + m.group("cents")) if m.group("cents") else 0.0)


def stated_limit(sentence: str) -> Optional[float]:
    """The smallest cap one sentence states; None when it states none. A cap inside a condition ("if it costs more
    than $100, ...") is no cap."""
    caps = []
    for rx in (_LIMIT, _LIMIT_AFTER):
        for m in rx.finditer(sentence):
            if _NOT_A_CAP.search(sentence[:m.start()]):
                continue
            caps.append(_value(m))
    return min(caps) if caps else None
