"""One turn's verdict as a few blocks of escaped HTML: header, criterion trace, stage attempts, injection
record, repair signals.

Why HTML and not widgets: the Inspector redraws this view on every Previous / Next. A styled
``st.dataframe`` (a canvas grid), one expander per criterion and an ``st.json`` tree cost the browser far
more to mount than the same content as a handful of Markdown blocks; in a real browser each Next spent
most of its time there, not in the script. Pure functions returning strings, every piece of text
escaped, so tests check the markup without a browser.
"""
from __future__ import annotations

import json
from .render import badge, code, esc, utterance_box
from .table import decision_text, trace_rows

STYLE = """
<style>
.sage-head {display:flex; flex-wrap:wrap; gap:0.5rem 2.5rem; align-items:flex-start; margin-bottom:0.4rem;}
.sage-head h3 {margin:0; padding:0;}
.sage-head .sage-cell {min-width:6rem;}
.sage-head .sage-lab {font-size:0.8rem; color:#71717a;}
.sage-head .sage-big {font-size:1.6rem; line-height:1.2;}
.sage-trace {border-collapse:collapse; width:100%; font-size:0.88rem;}
.sage-trace th, .sage-trace td {border-bottom:1px solid #e4e4e7; padding:0.25rem 0.5rem; text-align:left;
                                vertical-align:top;}
.sage-trace th {color:#52525b; font-weight:600; background:#f4f4f5;}
.sage-trace td.num {text-align:right; font-variant-numeric:tabular-nums;}
.sage-trace td.nw, .sage-trace th {white-space:nowrap;}
.sage-trace tr.fired td {background:#fee2e2;}
.sage-att {margin:0.1rem 0; font-size:0.88rem;}
.sage-att summary {cursor:pointer;}
.sage-att ul {margin:0.2rem 0 0.4rem 0;}
.sage-json {white-space:pre-wrap; word-break:break-word; background:#f4f4f5; padding:0.5rem; border-radius:4px;
            font-family:monospace; font-size:0.8rem; max-height:24rem; overflow:auto;}
</style>
"""

TRACE_COLUMNS = ("#", "class", "verdict", "decided by", "margin", "abstained", "criterion", "evidence")
TRACE_HEADINGS = {"criterion": "failure checked"}


def header_html(turn_id: str, workflow: str, dialogue_id: str, label: str, confidence: float, gold: str,
                outcome: str) -> str:
    """The turn's id, workflow and dialogue, SAGE's verdict badge, confidence, gold and outcome, in one row."""

    def cell(lab: str, body: str) -> str:
        return f'<div class="sage-cell"><div class="sage-lab">{esc(lab)}</div>{body}</div>'

    return ('<div class="sage-head">'
            f'<div class="sage-cell"><h3>{code(turn_id)}</h3>{esc(workflow)}<br>dialogue {code(dialogue_id)}</div>'
            + cell("SAGE verdict", badge(label))
            + cell("Confidence", f'<div class="sage-big">{confidence:.3f}</div>')
            + cell("Gold", esc(gold)) + cell("Outcome", esc(outcome)) + "</div>")


def trace_html(verdict) -> str:
    """The criterion trace as one table; a row whose failure is present is shaded."""
    head = "".join(f"<th>{esc(TRACE_HEADINGS.get(c, c))}</th>" for c in TRACE_COLUMNS)
    rows = []
    for r in trace_rows(verdict):
        cls = ' class="fired"' if r["verdict"] == "failure present" else ""
        cells = []
        for c in TRACE_COLUMNS:
            if c == "margin":
                cells.append(f'<td class="num">{r[c]:.3f}</td>')
            elif c == "#":
                cells.append(f'<td class="num">{r[c]}</td>')
            elif c == "criterion":
                cells.append(f"<td>{esc(r[c])}</td>")
            else:
                cells.append(f'<td class="nw">{esc(r[c])}</td>')
        rows.append(f"<tr{cls}>{''.join(cells)}</tr>")
    return f'<table class="sage-trace"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def attempts_html(verdict) -> str:
    """Per criterion, collapsed: its arguments and every stage's attempt (decision, margin, rationale, evidence)."""
    out = []
    for i, tr in enumerate(verdict.traces, start=1):
        c = tr.criterion
        summary = (f"{i}. <b>{esc(c.type.value)}</b> {esc(c.text or c.id)} &rarr; "
                   f"{esc(decision_text(tr.final.decision))} by {esc(tr.final.stage.value)}")
        items = [f"<li><b>args</b> {code(json.dumps(c.args, ensure_ascii=False, default=str))}</li>"]
        for a in tr.attempts:
            line = f"<li><b>{esc(a.stage.value)}</b>: {esc(a.decision.value)}, margin {a.margin:.3f}"
            if a.rationale:
                line += f" &mdash; {esc(a.rationale)}"
            if a.evidence:
                line += f" (evidence: {esc(a.evidence)})"
            items.append(line + "</li>")
        out.append(f'<details class="sage-att"><summary>{summary}</summary><ul>{"".join(items)}</ul></details>')
    return "".join(out)


INJECTION_KEYS = ("injected", "mutation", "original_agent")


def injection_html(meta: dict, agent: str) -> str:
    """The turn's ``meta`` (the injection record first), opened for an injected turn; the original reply
    in a box when injection replaced it. Collapsed otherwise: a tau-bench step's meta holds the benchmark's
    reference (reward, gold actions), which the lead may read here and annotators never receive."""
    if not meta:
        return ""
    injected = bool(meta.get("injected")) and meta["injected"] != "none"
    title = f"Injection record: {meta['injected']}" if injected else "Turn metadata (meta)"
    body = ""
    if "original_agent" in meta and meta["original_agent"] != agent:
        body += utterance_box("original agent reply (before injection)", esc(meta["original_agent"]))
    ordered = {k: meta[k] for k in INJECTION_KEYS if k in meta} | {k: v for k, v in meta.items()
                                                                    if k not in INJECTION_KEYS}
    # a div, not <pre>: Streamlit swaps <pre> for its own block without the class (and the line breaks)
    body += f'<div class="sage-json">{esc(json.dumps(ordered, indent=2, ensure_ascii=False, default=str))}</div>'
    opened = " open" if injected else ""
    return f'<details class="sage-att"{opened}><summary><b>{esc(title)}</b></summary>{body}</details>'


def repairs_html(verdict) -> str:
    """Each repair signal: type, criterion, message and the suggested edit."""
    items = [f"<li><b>{esc(r.type.value)}</b> {code(r.criterion_id)}: {esc(r.message)}<br>"
             f"edit {code(json.dumps(r.edit, ensure_ascii=False, default=str))}</li>" for r in verdict.repairs]
    return f"<ul>{''.join(items)}</ul>" if items else ""


__all__ = ["STYLE", "header_html", "trace_html", "attempts_html", "injection_html",
           "repairs_html", "TRACE_COLUMNS"]
