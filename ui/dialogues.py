"""Dialogue-level view for the app: first failing turn per annotator / evaluator, as HTML and frames.

The computation is ``audit.dialogue_view.audit_dialogue_view``; this only
lays it out: one row per dialogue, one column per source, each first failing
turn a link to the Inspector (``Inspector?turn=<id>``), and whether the
sources that labelled the whole dialogue agree.
"""
from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence

import pandas as pd

from audit.dialogue_view import DialogueRow

from .render import esc

STYLE = """
<style>
.sage-dlg-wrap {max-height:560px; overflow:auto; border:1px solid #e4e4e7; border-radius:6px;}
.sage-dlg {border-collapse:collapse; width:100%; font-size:0.85rem;}
.sage-dlg th {position:sticky; top:0; background:#f4f4f5; text-align:left; padding:0.3rem 0.5rem;
              border-bottom:1px solid #d4d4d8; white-space:nowrap;}
.sage-dlg td {padding:0.25rem 0.5rem; border-bottom:1px solid #f0f0f0; vertical-align:top;}
.sage-dlg td.none {color:#15803d;}
.sage-dlg td.na {color:#a1a1aa;}
.sage-dlg td.diff {background:#fef2f2;}
.sage-dlg code {font-size:0.8rem; white-space:nowrap;}
</style>
"""

def natural_key(text: str) -> list:
    """'1_00006' before '10_00013' (digit runs compare as numbers)."""
    import re

    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


NO_FAILURE = "no failure"
NOT_LABELLED = "not fully labelled"


def _same(row: DialogueRow, names: Sequence[str]) -> Optional[bool]:
    """True/False: the sources (among ``names``) that labelled the whole dialogue agree; None: fewer than two."""
    firsts = [row.first_failure.get(n) for n in names if row.complete.get(n)]
    if len(firsts) < 2:
        return None
    return len(set(firsts)) == 1


def cell(row: DialogueRow, name: str) -> tuple[str, Optional[str]]:
    """(text, turn id or None) for one source: the first failing turn, 'no failure' or 'not fully labelled'."""
    tid = row.first_failure.get(name)
    if not row.complete.get(name):
        return (f"{tid} (partial)", tid) if tid else (NOT_LABELLED, None)
    return (tid, tid) if tid else (NO_FAILURE, None)


def frame(rows: Sequence[DialogueRow], sources: Sequence[str], annotators: Sequence[str]) -> pd.DataFrame:
    """Plain table (for the CSV download and tests): one row per dialogue, one column per source."""
    out = []
    for r in rows:
        d = {"dialogue": r.dialogue_id, "audited turns": len(r.turn_ids)}
        for n in sources:
            d[n] = cell(r, n)[0]
        d["annotators agree"] = _mark(_same(r, annotators))
        d["all agree"] = _mark(_same(r, sources))
        out.append(d)
    return pd.DataFrame(out, columns=["dialogue", "audited turns", *sources, "annotators agree", "all agree"])


def _mark(v: Optional[bool]) -> str:
    return {True: "yes", False: "no", None: "-"}[v]


def table_html(rows: Sequence[DialogueRow], sources: Sequence[str], annotators: Sequence[str],
               link: Callable[[str, str], str]) -> str:
    """HTML table; ``link(turn_id, source)`` gives the Inspector URL of a turn."""
    head = "".join(f"<th>{esc(n)}</th>" for n in ["dialogue", "audited turns", *sources, "annotators agree",
                                                  "all agree"])
    body = []
    for r in rows:
        ref = _majority(r, annotators)
        tds = [f"<td><code>{esc(r.dialogue_id)}</code></td>", f"<td>{len(r.turn_ids)}</td>"]
        for n in sources:
            text, tid = cell(r, n)
            cls = "none" if text == NO_FAILURE else "na" if text == NOT_LABELLED else ""
            if ref is not _UNSET and r.complete.get(n) and r.first_failure.get(n) != ref:
                cls += " diff"
            inner = (f'<a href="{esc(link(tid, n))}" target="_self">{esc(text)}</a>' if tid else esc(text))
            tds.append(f'<td class="{cls.strip()}">{inner}</td>')
        tds.append(f"<td>{_mark(_same(r, annotators))}</td><td>{_mark(_same(r, sources))}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return (STYLE + '<div class="sage-dlg-wrap"><table class="sage-dlg"><thead><tr>' + head + "</tr></thead><tbody>"
            + "".join(body) + "</tbody></table></div>")


_UNSET = object()


def _majority(row: DialogueRow, annotators: Sequence[str]):
    """The annotators' shared first failure when every complete annotator agrees (cells that differ are shaded)."""
    firsts = [row.first_failure.get(n) for n in annotators if row.complete.get(n)]
    if len(firsts) >= 2 and len(set(firsts)) == 1:
        return firsts[0]
    return _UNSET


def pairwise_frame(agreement: Mapping[tuple[str, str], Mapping[str, float]]) -> pd.DataFrame:
    rows = [{"source A": a, "source B": b, "dialogues both labelled": int(v["n"]), "same first failure": v["agree"]}
            for (a, b), v in agreement.items()]
    return pd.DataFrame(rows, columns=["source A", "source B", "dialogues both labelled", "same first failure"])
