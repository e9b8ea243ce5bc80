"""A tool-calling conversation in one normalised shape, whatever log format it came from.

OpenAI chat transcripts and tau-bench trajectories both become a
``Conversation``: messages with roles system/user/assistant/tool, tool calls
with their arguments parsed, and every tool answer linked to its call. All
structural problems (malformed JSON arguments, an answer to no call, an empty
conversation) are ``SageInputError``s naming the file, the conversation and
the message index, so a user can find the broken record.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from sage_core.data.errors import SageInputError
from sage_core.data.tool_output import is_error_output

ROLES = ("system", "developer", "user", "assistant", "tool", "function")  # function: the legacy tool answer


@dataclass
class ToolCall:
    """One call the assistant made: ``arguments`` parsed from the JSON string."""

    id: str
    name: str
    arguments: dict[str, Any]
    message_index: int
    position: int  # index among the calls of its message (parallel calls)
    result: Optional[str] = None  # the tool's answer, once linked
    result_index: Optional[int] = None
    is_error: bool = False


@dataclass
class Message:
    index: int
    role: str
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: Optional[str] = None
    name: Optional[str] = None


@dataclass
class Conversation:
    """A normalised tool-calling dialogue; ``meta`` holds what annotators must not see."""

    id: str
    messages: list[Message]
    tools: Optional[list[dict[str, Any]]] = None
    meta: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [c for m in self.messages for c in m.tool_calls]


def _content(raw: Any, where: dict) -> str:
    """Message content as text: a string, null, or OpenAI content parts [{type: text, text}]."""
    if raw is None:
        return ""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        parts = []
        for p in raw:
            if isinstance(p, dict) and isinstance(p.get("text"), str):
                parts.append(p["text"])
            elif isinstance(p, str):
                parts.append(p)
        return "\n".join(parts)
    if isinstance(raw, (dict, int, float, bool)):
        return json.dumps(raw, ensure_ascii=False)
    raise SageInputError(f"content must be text, got {type(raw).__name__}", **where)


def parse_conversation(conv_id: str, raw_messages: Any, *, file: str, line: Optional[int] = None,
                       tools: Optional[list] = None, meta: Optional[dict] = None) -> Conversation:
    """Validate and normalise one conversation's messages (OpenAI chat format)."""
    def err(msg: str, i: Optional[int] = None, fld: Optional[str] = None) -> SageInputError:
        where = f"conversation '{conv_id}'" + (f", message {i}" if i is not None else "")
        return SageInputError(f"{where}: {msg}", file=file, line=line, field=fld)

    if not isinstance(raw_messages, list):
        raise err("'messages' must be a list", fld="messages")
    if not raw_messages:
        raise err("empty conversation: no messages", fld="messages")
    messages: list[Message] = []
    calls: dict[str, ToolCall] = {}
    for i, m in enumerate(raw_messages):
        if not isinstance(m, dict):
            raise err("each message must be an object", i, f"messages[{i}]")
        role = m.get("role")
        if role not in ROLES:
            raise err(f"role must be one of {', '.join(ROLES)}, got {role!r}", i, f"messages[{i}].role")
        where = {"file": file, "line": line, "field": f"messages[{i}].content"}
        try:
            content = _content(m.get("content"), where)
        except SageInputError as e:
            raise err(e.detail, i, f"messages[{i}].content") from None
        if role == "developer":  # the newer name of the system role
            role = "system"
        msg = Message(i, role, content, name=m.get("name"))
        if role == "assistant":
            raw_calls = m.get("tool_calls") or []
            if not raw_calls and isinstance(m.get("function_call"), dict):  # legacy single function call
                raw_calls = [{"id": None, "function": m["function_call"]}]
            if not isinstance(raw_calls, list):
                raise err("tool_calls must be a list", i, f"messages[{i}].tool_calls")
            for k, tc in enumerate(raw_calls):
                fld = f"messages[{i}].tool_calls[{k}]"
                fn = tc.get("function") if isinstance(tc, dict) else None
                if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
                    raise err("a tool call needs function.name", i, fld)
                args_raw = fn.get("arguments", "{}")
                if isinstance(args_raw, str):
                    try:
                        args = json.loads(args_raw) if args_raw.strip() else {}
                    except json.JSONDecodeError as e:
                        raise err(f"malformed JSON arguments for {fn['name']} ({e.msg} at column {e.colno})",
                                  i, fld + ".function.arguments") from None
                else:
                    args = args_raw
                if not isinstance(args, dict):
                    raise err(f"arguments of {fn['name']} must be a JSON object", i, fld + ".function.arguments")
                cid = str(tc.get("id") or f"{conv_id}-m{i}-c{k}")
                call = ToolCall(cid, fn["name"], args, i, k)
                msg.tool_calls.append(call)
                calls[cid] = call  # tau-bench reuses ids across turns: the latest call with the id answers
        elif role == "function":  # legacy answer: by name, to the latest unanswered call of that function
            call = next((c for c in reversed(list(calls.values())) if c.name == m.get("name")), None)
            if call is None:
                raise err(f"function message {m.get('name')!r} answers no earlier function call", i,
                          f"messages[{i}].name")
            msg.role, msg.tool_call_id = "tool", call.id
            call.result, call.result_index = content, i
            call.is_error = is_error_output(content)
            calls.pop(call.id, None)
        elif role == "tool":
            tcid = m.get("tool_call_id")
            if not tcid:
                raise err("a tool message needs tool_call_id", i, f"messages[{i}].tool_call_id")
            call = calls.get(str(tcid))
            if call is None:
                raise err(f"tool_call_id {tcid!r} answers no earlier tool call", i, f"messages[{i}].tool_call_id")
            msg.tool_call_id = str(tcid)
            call.result, call.result_index = content, i
            call.is_error = is_error_output(content)
            calls.pop(str(tcid), None)  # each call is answered once
        messages.append(msg)
    if not any(m.role in ("user", "assistant") for m in messages):
        raise err("empty conversation: no user or assistant message", fld="messages")
    return Conversation(conv_id, messages, tools, dict(meta or {}), file)


__all__ = ["ToolCall", "Message", "Conversation", "parse_conversation", "is_error_output", "ROLES"]
