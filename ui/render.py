"""HTML fragments for turns: highlighted spans, state diffs, history, badges.

Kept as pure functions returning strings (every piece of user text escaped)
so pages stay thin and tests can check the markup without a browser.
"""
from __future__ import annotations

import html
import re
from typing import Iterable, Optional, Sequence

from sage_core import StateDiff, Utterance

COLORS = {"IUV": "#fde68a", "WNF": "#bfdbfe", "PC": "#fecaca", "UV": "#ddd6fe", "value": "#bbf7d0"}
LABEL_COLORS = {"failure": "#b91c1c", "acceptable": "#15803d", "undecided": "#a16207"}

STYLE = """
<style>
.sage-box {border:1px solid #d4d4d8; border-radius:6px; padding:0.5rem 0.75rem; margin-bottom:0.5rem;
           background:#fafafa; line-height:1.7;}
.sage-who {font-size:0.75rem; text-transform:uppercase; color:#71717a; letter-spacing:0.05em;}
.sage-hist {color:#52525b; font-size:0.9rem; margin:0.1rem 0;}
.sage-wide {overflow-x:auto;}
.sage-state {border-collapse:collapse; width:100%; font-size:0.9rem;}
.sage-state th, .sage-state td {border-bottom:1px solid #e4e4e7; padding:0.2rem 0.5rem; text-align:left;}
.sage-state th {white-space:nowrap;}
.sage-state tr.written td {background:#dcfce7;}
.sage-state tr.changed td {background:#fef9c3;}
.sage-state tr.removed td {background:#fee2e2; text-decoration:line-through;}
.sage-badge {display:inline-block; padding:0.1rem 0.6rem; border-radius:999px; color:white; font-weight:600;}
mark.sage-span {border-radius:3px; padding:0 2px;}
mark.sage-span sup {font-size:0.65rem; margin-left:2px; color:#3f3f46;}
</style>
"""


_LINE_BREAKS = str.maketrans({"\n": "&#10;", "\r": "&#13;"})


def esc(text: object) -> str:
    """``text`` as HTML text or attribute value, for ``st.markdown(..., unsafe_allow_html=True)``.

    Line breaks become character references: Markdown ends an HTML block at a blank line, so a raw
    "\\n\\n" in user text would hand what follows back to Markdown (links, images the browser fetches).
    The browser still reads them as line breaks (whitespace in text, new lines under ``white-space: pre-wrap``).
    """
    return html.escape(str(text), quote=True).translate(_LINE_BREAKS)


def count(n: int, noun: str) -> str:
    """"1 turn", "2 turns": a count with its noun in the right number (regular plurals only)."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


_MD_SPECIAL = re.compile(r"([\\`*\[\]<>!#|~$])")


def md(text: object) -> str:
    """``text`` safe to put inside Markdown (``st.markdown``/``caption``/``error``...): shown literally.

    Backslash-escapes what makes images, links, HTML, code, emphasis, tables and LaTeX
    (``![x](http://host/y)`` cannot make the browser fetch) and folds newlines, so a name,
    turn id or note can never start a block of its own.
    """
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).splitlines()))


def code(text: object) -> str:
    """An inline ``<code>`` element with escaped text (for ``st.markdown(..., unsafe_allow_html=True)``).

    A Markdown code span would let a backtick in the text close it early.
    """
    return f"<code>{esc(text)}</code>"


def highlight(text: str, spans: Iterable[tuple[int, int, str, str]]) -> str:
    """Escape ``text`` and wrap each [l, r) span in a coloured <mark> with a tag.

    ``spans`` = (l, r, tag, colour_key). Overlapping spans are merged into the
    first one (tags joined), spans outside the text are ignored.
    """
    merged: list[list] = []
    for l, r, tag, color in sorted(spans, key=lambda s: (s[0], -s[1])):
        if not (0 <= l < r <= len(text)):
            continue
        if merged and l < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], r)
            if tag not in merged[-1][2]:
                merged[-1][2].append(tag)
            continue
        merged.append([l, r, [tag], color])
    out, pos = [], 0
    for l, r, tags, color in merged:
        out.append(esc(text[pos:l]))
        bg = COLORS.get(color, color)
        title = esc(", ".join(tags))
        out.append(f'<mark class="sage-span" style="background:{bg}" title="{title}">{esc(text[l:r])}'
                   f'<sup>{title}</sup></mark>')
        pos = r
    out.append(esc(text[pos:]))
    return "".join(out)


def utterance_box(who: str, body_html: str) -> str:
    return f'<div class="sage-box"><div class="sage-who">{esc(who)}</div>{body_html}</div>'


def history_html(history: Sequence[Utterance], limit: Optional[int] = None) -> str:
    items = list(history)[-limit:] if limit else list(history)
    if not items:
        return '<div class="sage-hist"><em>(start of the dialogue)</em></div>'
    return "".join(f'<div class="sage-hist"><b>{esc(u.speaker)}:</b> {esc(u.text)}</div>' for u in items)


def state_diff_html(before: dict[str, str], after: dict[str, str]) -> str:
    """Before/after table; written, changed and removed slots get their own row colour."""
    diff = StateDiff.between(before, after)
    slots = list(dict.fromkeys(list(before) + list(after)))
    if not slots:
        return "<p><em>(both states are empty)</em></p>"
    # each header on two lines of its own ("before" / "(s_t-1)"), never broken inside, so the table stays narrow
    rows = ['<div class="sage-wide"><table class="sage-state"><tr><th>slot</th><th>before<br>(s<sub>t-1</sub>)</th>'
            '<th>after<br>(s<sub>t</sub>)</th><th>change</th></tr>']
    for s in slots:
        if s in diff.removed:
            cls, what = "removed", "removed"
        elif s in diff.previous:
            cls, what = "changed", "changed"
        elif s in diff.written:
            cls, what = "written", "written"
        else:
            cls, what = "", ""
        rows.append(f'<tr class="{cls}"><td><code>{esc(s)}</code></td><td>{esc(before.get(s, ""))}</td>'
                    f'<td>{esc(after.get(s, ""))}</td><td>{what}</td></tr>')
    rows.append("</table></div>")
    return "".join(rows)


def badge(label: str, text: Optional[str] = None) -> str:
    color = LABEL_COLORS.get(label, "#52525b")
    return f'<span class="sage-badge" style="background:{color}">{esc(text or label)}</span>'
