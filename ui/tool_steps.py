"""HTML for a tool-calling agent's step in the Inspector: the call and its arguments as the state diff,
tool outputs in the history collapsed (``<details>``), so long JSON answers do not bury the dialogue.

Pure functions returning escaped HTML (tests check the markup without a browser). Only what the turn
itself carries is shown; the benchmark reference in ``meta["reference"]`` never is.
"""
from __future__ import annotations

import json
import re
from typing import Optional, Sequence

from sage_core import Turn, Utterance
from ui.render import esc

CALL_RE = re.compile(r"^\[call\] (\w+)\((.*)\)\s*$", re.S)
OUTPUT_RE = re.compile(r"^\[(\w+)\] (.*)$", re.S)
STYLE = """
<style>
.sage-tool {margin:0.15rem 0; font-size:0.88rem;}
.sage-tool summary {cursor:pointer; color:#3f3f46;}
.sage-tool .sage-pre {white-space:pre-wrap; font-family:monospace; word-break:break-word; max-height:18rem;
                      overflow:auto; background:#f4f4f5;
                      padding:0.4rem; border-radius:4px; font-size:0.8rem;}
.sage-call {color:#1e3a8a; font-family:monospace; font-size:0.85rem;}
.sage-err {color:#b91c1c; font-weight:600;}
.sage-scroll {max-height:30rem; overflow-y:auto; display:flex; flex-direction:column-reverse;}
</style>
"""


def step(turn: Turn) -> Optional[dict]:
    """The loader's step record (``meta["step"]``) of a tool-calling agent's turn, else None."""
    st = (turn.meta or {}).get("step")
    return st if isinstance(st, dict) and st.get("kind") in ("reply", "tool_call") else None


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=1, ensure_ascii=False)
    except (ValueError, TypeError):
        return text


def _output_block(name: str, text: str, error: bool) -> str:
    head = f'<b>[{esc(name)}]</b> ' + ('<span class="sage-err">error</span> ' if error else "") + \
        f'output ({len(text)} chars)'
    return (f'<details class="sage-tool"><summary>{head}</summary>'
            f'<div class="sage-pre">{esc(_pretty(text))}</div></details>')


def history_html(history: Sequence[Utterance]) -> str:
    """User and agent messages in full; tool calls as one line; tool outputs collapsed.

    Long histories scroll inside a box that opens at its end (the steps just before this one).
    """
    if not history:
        return '<div class="sage-hist"><em>(start of the dialogue)</em></div>'
    out = []
    for u in history:
        if u.speaker == "tool":
            m = OUTPUT_RE.match(u.text)
            name, body = (m.group(1), m.group(2)) if m else ("tool", u.text)
            err = body.strip().lower().startswith("error")
            out.append(_output_block(name, body, err))
            continue
        m = CALL_RE.match(u.text) if u.speaker == "agent" else None
        if m:
            out.append(f'<div class="sage-hist sage-call">&rarr; {esc(m.group(1))}({esc(m.group(2))})</div>')
        else:
            out.append(f'<div class="sage-hist"><b>{esc(u.speaker)}:</b> {esc(u.text)}</div>')
    return '<div class="sage-scroll"><div>' + "".join(out) + "</div></div>"


def call_html(turn: Turn) -> str:
    """The agent's step: the tool called (with the answer it got, collapsed) or the reply to the user."""
    st = step(turn) or {}
    if st.get("kind") != "tool_call":
        return '<div class="sage-hist"><b>reply to the user</b> (commits no arguments)</div>'
    parts = [f'<div class="sage-call"><b>{esc(st.get("tool", ""))}</b>(...)'
             + (" &middot; parallel call" if st.get("parallel") else "") + "</div>"]
    if st.get("unknown_args"):
        parts.append(f'<div class="sage-err">arguments not in the tool schema: {esc(", ".join(st["unknown_args"]))}</div>')
    if st.get("result") is not None:
        parts.append(_output_block(st.get("tool", "tool"), str(st["result"]), bool(st.get("is_error"))))
    return "".join(parts)


def flags_html(verdict) -> str:
    """The criteria that found a failure at this step, one line each (class, argument, deciding stage, why)."""
    fired = [tr for tr in verdict.traces if tr.final.decision.value == "true"]
    if not fired:
        return ""
    rows = []
    for tr in fired:
        c = tr.criterion
        what = c.args.get("slot") or ""
        rows.append(f'<li><b>{esc(c.type.value)}</b> <code>{esc(what)}</code> ({esc(tr.final.stage.value)}): '
                    f'{esc(tr.final.rationale)}</li>')
    return ('<div class="sage-box"><div class="sage-who">failures found at this step</div><ul>'
            + "".join(rows) + "</ul></div>")


__all__ = ["STYLE", "step", "history_html", "call_html", "flags_html"]
