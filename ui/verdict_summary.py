"""What a run says about a slice without gold: flag rate, class breakdown, undecided share and why.

Pure functions over ``TurnVerdict`` lists (no streamlit), shown on Home when the
slice has no gold labels. Why a turn is undecided comes from the verdicts as
they are: an undecided turn has no failing criterion and at least one criterion
every stage abstained on; the reason is the rationale of the last stage that
abstained on it with one (e.g. S2-symbolic's "no user text in u_t or history to
ground the value in"), with quoted values and the margin note removed so equal
reasons group. Verdict files are unchanged.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_MARGIN = re.compile(r"\s*\(\|m\|[^)]*\)")
GENERIC = "every stage abstained"


def abstention_reason(trace) -> str:
    """One abstained criterion's reason: its class and the last informative stage rationale."""
    reason = ""
    for a in reversed(trace.attempts):
        if a.decision.value == "abstain" and a.rationale and a.rationale != GENERIC:
            reason = a.rationale
            break
    reason = _MARGIN.sub("", reason)
    reason = _QUOTED.sub("…", reason).strip() or "no stage gave a reason"
    return f"{trace.criterion.type.value}: {reason}"


def undecided_reasons(verdicts: Iterable) -> Counter:
    """reason -> number of undecided turns with at least one abstained criterion for that reason."""
    out: Counter = Counter()
    for v in verdicts:
        if v.label.value != "undecided":
            continue
        out.update({abstention_reason(tr) for tr in v.traces if tr.final.decision.value == "abstain"})
    return out


def summary(verdicts) -> dict:
    """``n``, ``flag_rate`` (share labelled failure), ``undecided_share``, ``acceptable_share``,
    ``classes`` (class -> failure turns firing it), ``reasons`` (undecided_reasons)."""
    verdicts = list(verdicts)
    n = len(verdicts)
    labels = Counter(v.label.value for v in verdicts)
    classes: Counter = Counter()
    for v in verdicts:
        if v.label.value == "failure":
            classes.update(v.fired_classes)
    share = (lambda k: labels.get(k, 0) / n) if n else (lambda k: 0.0)
    return {"n": n, "flag_rate": share("failure"), "undecided_share": share("undecided"),
            "acceptable_share": share("acceptable"), "labels": dict(labels), "classes": dict(classes),
            "reasons": undecided_reasons(verdicts)}


__all__ = ["abstention_reason", "undecided_reasons", "summary"]
