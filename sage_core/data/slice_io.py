"""Read and write our JSONL slice format, one agent turn per line.

Every problem is reported as ``SageInputError`` naming the file, the line and
the field, because slices are hand-edited and users need to find the typo.
"""
from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from sage_core.data.errors import SageInputError
from sage_core.data.limits import check_input_file, decode_utf8, iter_lines_bounded, loads_strict
from sage_core.data.types import AgentAct, Gold, Turn, UserValue, Utterance

LABELS = ("failure", "acceptable")
CLASSES = ("IUV", "WNF", "PC", "UV")
SPEAKERS = ("user", "agent", "tool")  # tool: a tool output in a tool-calling agent's history


def _scalar(v: Any, fld: str, file: str, line: int, what: str = "a string") -> str:
    """A string (or a finite number, written as text); objects, lists, booleans and NaN are refused, not coerced."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SageInputError(f"must be {what}, got {_json_type(v)}", file=file, line=line, field=fld)
    if isinstance(v, float) and not math.isfinite(v):
        raise SageInputError(f"must be {what}, got the non-finite number {v}", file=file, line=line, field=fld)
    return str(v)


def _json_type(v: Any) -> str:
    return {dict: "an object", list: "a list", bool: "a boolean", type(None): "null"}.get(type(v), type(v).__name__)


def _state(obj: Any, fld: str, file: str, line: int) -> dict[str, str]:
    if not isinstance(obj, dict):
        raise SageInputError("must be an object {slot: value}", file=file, line=line, field=fld)
    out = {}
    for k, v in obj.items():
        if isinstance(v, list):  # SGD-style alternatives: keep the first
            v = v[0] if v else ""
        out[str(k)] = "" if v is None else _scalar(v, f"{fld}.{k}", file, line, "a string value")
    return out


def _str(d: dict, key: str, file: str, line: int, required: bool = True) -> Optional[str]:
    if key not in d or d[key] is None:
        if required:
            raise SageInputError("is required", file=file, line=line, field=key)
        return None
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise SageInputError(f"must be a string, got {_json_type(v)}", file=file, line=line, field=key)
    return str(v)


def _text(d: dict, key: str, file: str, line: int) -> str:
    if key not in d or d[key] is None:
        raise SageInputError("is required", file=file, line=line, field=key)
    if not isinstance(d[key], str):
        raise SageInputError(f"must be a string, got {_json_type(d[key])}", file=file, line=line, field=key)
    return d[key]


def _confidence(d: dict, file: str, line: int, fld: str) -> float:
    c = d.get("confidence", 1.0)
    if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0.0 <= c <= 1.0:
        raise SageInputError("must be a number in [0, 1]", file=file, line=line, field=fld)
    return float(c)


def turn_from_dict(d: Any, file: str = "<input>", line: int = 1) -> Turn:
    """Validate one slice record and build a ``Turn``."""
    if not isinstance(d, dict):
        raise SageInputError("each line must be a JSON object", file=file, line=line)
    turn_id = _str(d, "turn_id", file, line)
    dialogue_id = _str(d, "dialogue_id", file, line)
    workflow = _str(d, "workflow", file, line)
    if ":" not in workflow:
        raise SageInputError(f"'{workflow}' must look like 'Service_1:Intent'", file=file, line=line, field="workflow")
    user = _text(d, "user", file, line)
    agent = _text(d, "agent", file, line)
    hist_raw = d.get("history", [])
    if not isinstance(hist_raw, list):
        raise SageInputError("must be a list of {speaker, text}", file=file, line=line, field="history")
    history = []
    for i, h in enumerate(hist_raw):
        if not isinstance(h, dict) or "text" not in h or h.get("speaker") not in SPEAKERS:
            raise SageInputError("each entry needs speaker 'user'|'agent'|'tool' and text", file=file, line=line,
                                 field=f"history[{i}]")
        if not isinstance(h["text"], str):
            raise SageInputError(f"must be a string, got {_json_type(h['text'])}", file=file, line=line,
                                 field=f"history[{i}].text")
        history.append(Utterance(h["speaker"], h["text"]))
    if "state_before" not in d:
        raise SageInputError("is required", file=file, line=line, field="state_before")
    if "state_after" not in d:
        raise SageInputError("is required", file=file, line=line, field="state_after")
    sb = _state(d["state_before"], "state_before", file, line)
    sa = _state(d["state_after"], "state_after", file, line)

    user_values = None
    if d.get("user_values") is not None:
        if not isinstance(d["user_values"], list):
            raise SageInputError("must be a list", file=file, line=line, field="user_values")
        user_values = []
        for i, uv in enumerate(d["user_values"]):
            fld = f"user_values[{i}]"
            if not isinstance(uv, dict) or "slot" not in uv or "value" not in uv:
                raise SageInputError("needs slot and value", file=file, line=line, field=fld)
            if not isinstance(uv["slot"], str) or not uv["slot"]:
                raise SageInputError(f"must be a slot name, got {_json_type(uv['slot'])}", file=file, line=line,
                                     field=f"{fld}.slot")
            value = _scalar(uv["value"], f"{fld}.value", file, line)
            span = uv.get("span")
            if span is not None:
                if (not isinstance(span, list) or len(span) != 2
                        or not all(isinstance(x, int) and not isinstance(x, bool) for x in span)
                        or not 0 <= span[0] <= span[1] <= len(user)):
                    raise SageInputError(f"span must be [l, r] with 0 <= l <= r <= {len(user)}",
                                         file=file, line=line, field=f"{fld}.span")
                span = (span[0], span[1])
            user_values.append(UserValue(uv["slot"], value, span,
                                         _confidence(uv, file, line, f"{fld}.confidence")))
    agent_acts = None
    if d.get("agent_acts") is not None:
        if not isinstance(d["agent_acts"], list):
            raise SageInputError("must be a list", file=file, line=line, field="agent_acts")
        agent_acts = []
        for i, a in enumerate(d["agent_acts"]):
            if not isinstance(a, dict) or not isinstance(a.get("act"), str):
                raise SageInputError("needs an 'act' string", file=file, line=line, field=f"agent_acts[{i}]")
            if not a["act"].strip():
                raise SageInputError("must be a non-empty act name such as REQUEST or CONFIRM", file=file,
                                     line=line, field=f"agent_acts[{i}].act")
            slot = a.get("slot")
            if slot is not None and not isinstance(slot, str):
                raise SageInputError(f"must be a slot name or null, got {_json_type(slot)}", file=file, line=line,
                                     field=f"agent_acts[{i}].slot")
            agent_acts.append(AgentAct(a["act"].strip().upper(), slot or None,
                                       None if a.get("value") is None
                                       else _scalar(a["value"], f"agent_acts[{i}].value", file, line),
                                       _confidence(a, file, line, f"agent_acts[{i}].confidence")))
    gold = None
    if d.get("gold") is not None:
        g = d["gold"]
        if not isinstance(g, dict) or g.get("label") not in LABELS:
            raise SageInputError("gold.label must be 'failure' or 'acceptable'", file=file, line=line, field="gold.label")
        cls = g.get("class")
        if cls is not None and cls not in CLASSES:
            raise SageInputError(f"gold.class must be one of {', '.join(CLASSES)} or null", file=file, line=line,
                                 field="gold.class")
        gold = Gold(g["label"], cls)
    meta = d.get("meta") or {}
    if not isinstance(meta, dict):
        raise SageInputError("must be an object", file=file, line=line, field="meta")
    return Turn(turn_id, dialogue_id, workflow, history, user, agent, sb, sa,
                user_values, agent_acts, gold, meta)


def iter_jsonl(lines: Iterable[str], name: str) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for each non-blank line; malformed JSON -> SageInputError naming the line."""
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        yield lineno, loads_strict(raw, name, lineno)


def parse_slice(stream: Iterable[str], name: str = "<input>") -> list[Turn]:
    turns: list[Turn] = []
    seen: set[str] = set()
    for lineno, d in iter_jsonl(stream, name):
        t = turn_from_dict(d, name, lineno)
        if t.turn_id in seen:
            raise SageInputError(f"duplicate turn_id '{t.turn_id}'", file=name, line=lineno, field="turn_id")
        seen.add(t.turn_id)
        t._line = lineno  # for later errors (unknown workflow/slot)
        turns.append(t)
    if not turns:
        raise SageInputError("the slice is empty: no turns found", file=name)
    return turns


def read_slice(path: str | Path) -> list[Turn]:
    """The whole slice as a list (the app, reports); ``evaluator.batch`` streams instead."""
    path = str(check_input_file(path, "slice", field="slice"))
    try:
        with open(path, encoding="utf-8") as fh:
            return parse_slice(iter_lines_bounded(fh, path), path)
    except UnicodeDecodeError:
        raise SageInputError("not UTF-8 text", file=path) from None


def read_slice_bytes(data: bytes, name: str) -> list[Turn]:
    """For uploads: same validation as files."""
    return parse_slice(iter_lines_bounded(io.StringIO(decode_utf8(data, name, "slice")), name), name)


def dumps_turn(t: Turn) -> str:
    return json.dumps(t.to_dict(), ensure_ascii=False, sort_keys=False)


def write_slice(turns: Iterable[Turn], path: str | Path) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for t in turns:
            fh.write(dumps_turn(t) + "\n")


def validate_against(turns: list[Turn], registry, file: str = "<input>") -> None:
    """Every turn's workflow must exist and every state slot must be in its schema."""
    for i, t in enumerate(turns, start=1):
        line = getattr(t, "_line", i)
        spec = registry.get(t.workflow, file=file, line=line)
        for fld, st in (("state_before", t.state_before), ("state_after", t.state_after)):
            for slot in st:
                if not spec.has_slot(slot):
                    raise SageInputError(f"slot '{slot}' is not in the schema of {t.workflow}",
                                         file=file, line=line, field=f"{fld}.{slot}")
        for j, uv in enumerate(t.user_values or []):
            if not spec.has_slot(uv.slot):
                raise SageInputError(f"slot '{uv.slot}' is not in the schema of {t.workflow}",
                                     file=file, line=line, field=f"user_values[{j}].slot")
