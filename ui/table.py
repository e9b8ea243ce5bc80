"""One row per turn (verdict, gold, classes, stages, outcome) and the inspector's filters.

Pure pandas so the filter semantics are testable without Streamlit: a false
positive is predicted failure on a gold-acceptable turn, a false negative a
gold failure the run did not flag (undecided included, as at full coverage).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from sage_core import Decision

from .loading import LoadedSlice
from .runs import RunResult, deciding_stages, outcome

ERROR_FILTERS = ("all turns", "false positives", "false negatives", "undecided", "errors (FP + FN)")


def turn_table(ls: LoadedSlice, res: RunResult) -> pd.DataFrame:
    rows = []
    for t in ls.turns:
        v = res.by_id.get(t.turn_id)
        if v is None:
            continue
        gold = t.gold.label if t.gold else None
        rows.append({
            "turn_id": t.turn_id,
            "dialogue": t.dialogue_id,
            "workflow": t.workflow,
            "verdict": v.label.value,
            "confidence": round(float(v.confidence), 3),
            "gold": gold or "none",
            "gold class": (t.gold.failure_class if t.gold else None) or "",
            "fired": ",".join(v.fired_classes),
            "criteria": len(v.traces),
            "stages": ",".join(deciding_stages(v)),
            "outcome": outcome(v, gold),
            "annotated": t.user_values is not None or t.agent_acts is not None,
        })
    return pd.DataFrame(rows, columns=["turn_id", "dialogue", "workflow", "verdict", "confidence", "gold",
                                       "gold class", "fired", "criteria", "stages", "outcome", "annotated"])


@dataclass
class Filters:
    verdicts: list[str] = field(default_factory=list)  # empty = any
    golds: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)  # gold class or a fired class
    stages: list[str] = field(default_factory=list)  # a deciding stage
    errors: str = "all turns"


def turn_table_cached(ls: LoadedSlice, res: RunResult) -> pd.DataFrame:
    """``turn_table`` once per run, kept on the ``RunResult`` itself.

    Every page load in the browser is a new Streamlit session, so a session-state cache was rebuilt
    (10k turns: ~0.2 s) on each Inspector open. The run lives in the process-wide, byte-bounded run
    store (``ui/memory.py``); its table goes when the run does. Callers never modify the frame.
    """
    hit = res.turn_table
    if hit is None or hit[0] != ls.content_hash:
        hit = (ls.content_hash, turn_table(ls, res))
        res.turn_table = hit
    return hit[1]


def apply(df: pd.DataFrame, f: Filters) -> pd.DataFrame:
    m = pd.Series(True, index=df.index)
    if f.verdicts:
        m &= df["verdict"].isin(f.verdicts)
    if f.golds:
        m &= df["gold"].isin(f.golds)
    if f.classes:
        want = set(f.classes)
        m &= df.apply(lambda r: bool(want & ({r["gold class"]} | set(filter(None, r["fired"].split(","))))),
                      axis=1)
    if f.stages:
        want_s = set(f.stages)
        m &= df["stages"].apply(lambda s: bool(want_s & set(filter(None, s.split(",")))))
    if f.errors == "false positives":
        m &= df["outcome"] == "FP"
    elif f.errors == "false negatives":
        m &= df["outcome"].isin(["FN", "undecided (FN)"])
    elif f.errors == "undecided":
        m &= df["verdict"] == "undecided"
    elif f.errors == "errors (FP + FN)":
        m &= df["outcome"].isin(["FP", "FN", "undecided (FN)"])
    return df[m].reset_index(drop=True)


def decision_text(d: Decision) -> str:
    return {Decision.TRUE: "failure present", Decision.FALSE: "failure absent",
            Decision.ABSTAIN: "abstain"}[d]


def trace_rows(v) -> list[dict]:
    """The criterion trace table's rows, one dict per criterion: who decided, with what margin, who abstained
    (plain dicts, not a DataFrame: the Inspector draws them on every Next; arguments and every stage's
    attempt are in ``turn_view.attempts_html``)."""
    rows = []
    for i, tr in enumerate(v.traces, start=1):
        c = tr.criterion
        rows.append({
            "#": i,
            "class": c.type.value,
            "verdict": decision_text(tr.final.decision),
            "decided by": tr.final.stage.value,
            "margin": round(float(tr.final.margin), 3),
            "abstained": ",".join(a.stage.value for a in tr.attempts if a.decision == Decision.ABSTAIN) or "-",
            "criterion": c.text or c.id,
            "evidence": c.evidence + (f"[{c.span[0]}:{c.span[1]}]" if c.span else ""),
        })
    return rows
