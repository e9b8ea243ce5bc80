"""OpenAI-format chat transcripts: JSON (one object or a list) or JSONL, one conversation each.

A conversation is ``{"id", "messages": [...], "tools"?: [...], "metadata"?: {...}}``;
``messages`` follow the OpenAI chat format (roles system/user/assistant/tool,
``tool_calls`` with JSON-string arguments, tool answers by ``tool_call_id``).
``metadata`` goes to ``Conversation.meta`` (never shown to annotators).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sage_core.data.errors import SageInputError
from .conversation import Conversation, parse_conversation


def _records(path: Path) -> list[tuple[Any, int | None]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SageInputError("transcript file not found", file=str(path)) from None
    except UnicodeDecodeError:
        raise SageInputError("not UTF-8 text", file=str(path)) from None
    if not text.strip():
        raise SageInputError("empty file: no conversations", file=str(path))
    if path.suffix == ".jsonl":
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append((json.loads(line), n))
            except json.JSONDecodeError as e:
                raise SageInputError(f"malformed JSON ({e.msg} at column {e.colno})", file=str(path), line=n) from None
        return out
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise SageInputError(f"malformed JSON ({e.msg} at line {e.lineno} column {e.colno})",
                             file=str(path), line=e.lineno) from None
    if isinstance(raw, dict) and "conversations" in raw:
        raw = raw["conversations"]
    items = raw if isinstance(raw, list) else [raw]
    return [(r, None) for r in items]


def parse_openai_records(records: list[tuple[Any, int | None]], name: str) -> list[Conversation]:
    convs: list[Conversation] = []
    seen: set[str] = set()
    for k, (rec, line) in enumerate(records):
        if not isinstance(rec, dict) or "messages" not in rec:
            raise SageInputError(f"conversation #{k} must be an object with 'messages'", file=name, line=line,
                                 field="messages")
        cid = str(rec.get("id") if rec.get("id") is not None else f"conv{k}")
        if cid in seen:
            raise SageInputError(f"duplicate conversation id '{cid}'", file=name, line=line, field="id")
        seen.add(cid)
        tools = rec.get("tools")
        if tools is not None and not isinstance(tools, list):
            raise SageInputError(f"conversation '{cid}': 'tools' must be a list", file=name, line=line, field="tools")
        meta = rec.get("metadata") or {}
        if not isinstance(meta, dict):
            raise SageInputError(f"conversation '{cid}': 'metadata' must be an object", file=name, line=line,
                                 field="metadata")
        convs.append(parse_conversation(cid, rec["messages"], file=name, line=line, tools=tools,
                                        meta={"format": "openai", **meta}))
    if not convs:
        raise SageInputError("no conversations", file=name)
    return convs


def read_openai_transcripts(path: str | Path) -> list[Conversation]:
    """Every conversation in an OpenAI-format transcript file (.json or .jsonl)."""
    p = Path(path)
    return parse_openai_records(_records(p), str(p))


def looks_like_openai_transcripts(raw: Any) -> bool:
    """Shape test used by corpus detection: objects with a ``messages`` list of role/content dicts."""
    first = raw[0] if isinstance(raw, list) and raw else raw
    return (isinstance(first, dict) and isinstance(first.get("messages"), list)
            and all(isinstance(m, dict) and "role" in m for m in first["messages"][:3]))


__all__ = ["read_openai_transcripts", "parse_openai_records", "looks_like_openai_transcripts"]
