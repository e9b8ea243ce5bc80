"""Agent steps: a tool-calling ``Conversation`` -> one ``Turn`` per step SAGE judges.

An agent step is each assistant message to the user and each tool call
(parallel calls are one step each, in order). For a step:

- ``user`` is u_t, the latest user message before it; ``history`` holds every
  earlier user message, assistant message, tool call (``[call] name {...}``) and
  tool output (speaker ``tool``, text ``[name] output``), the system prompt excluded;
- ``agent`` is the reply text, or the call rendered as ``name({...})``;
- the state is the agent's committed arguments: for a call, s_{t-1} = {} and
  s_t = the call's arguments flattened to paths (``passengers[0].first_name``),
  so Delta_t is exactly this call's arguments; a reply commits nothing (empty pair);
- ``meta["step"]`` says what the step is (kind, tool, call id, message index,
  the tool's answer and whether it is an error; ``position``, ``calls_in_message`` and ``with_reply``
  say what else the same assistant message did: other calls, a reply to the user); ``meta["reference"]`` (tau-bench:
  reward, gold actions, instruction) is reference data for benchmarks only.

Arguments the tool schema does not define cannot be slots; they are listed in
``meta["step"]["unknown_args"]`` (the evaluator flags them) instead of failing the load.
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Optional

from sage_core.data.errors import SageInputError
from sage_core.data.types import Turn, Utterance
from sage_core.specs.workflow import WorkflowRegistry
from .conversation import Conversation, ToolCall

REPLY_INTENT = "reply"  # mirrors sage_core.specs.from_tools.REPLY_INTENT


def flatten_arguments(value: Any, prefix: str = "") -> dict[str, str]:
    """JSON arguments -> {path: string value}; ``[{"a": 1}]`` under ``x`` -> ``{"x[0].a": "1"}``."""
    out: dict[str, str] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out.update(flatten_arguments(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.update(flatten_arguments(v, f"{prefix}[{i}]"))
    elif prefix:
        out[prefix] = scalar_text(value)
    return out


def scalar_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def render_call(call: ToolCall) -> str:
    return f"{call.name}({json.dumps(call.arguments, ensure_ascii=False)})"


def tool_output_text(call_name: str, output: str) -> str:
    """How a tool output reads in the history: ``[name] output``."""
    return f"[{call_name}] {output}"


def max_array_items(convs: Iterable[Conversation]) -> int:
    """The longest array argument in any call (spec generation must cover it)."""
    best = 0

    def walk(v: Any) -> None:
        nonlocal best
        if isinstance(v, list):
            best = max(best, len(v))
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
    for c in convs:
        for call in c.tool_calls:
            walk(call.arguments)
    return best


def service_of(registry: WorkflowRegistry) -> str:
    svcs = registry.services()
    if len(svcs) != 1:
        raise SageInputError(f"a tool registry has one service, got {svcs}", field="tools")
    return svcs[0]


def conversation_steps(conv: Conversation, registry: WorkflowRegistry) -> list[Turn]:
    """Every agent step of ``conv`` as a ``Turn`` judged by the tool workflows in ``registry``."""
    service = service_of(registry)
    history: list[Utterance] = []  # chronological, u_t included; a step's history leaves u_t out
    user = ""
    user_index: Optional[int] = None
    user_utt: Optional[Utterance] = None
    turns: list[Turn] = []
    meta_base = {"corpus": "agent_logs", "format": conv.meta.get("format", "openai")}
    if "reference" in conv.meta:
        meta_base["reference"] = conv.meta["reference"]
    extra = {k: v for k, v in conv.meta.items() if k not in ("format", "reference")}
    if extra:
        meta_base["conversation"] = extra
    calls_by_result = {c.result_index: c for c in conv.tool_calls if c.result_index is not None}

    def add(kind: str, agent: str, workflow: str, state_after: dict[str, str], step: dict[str, Any]) -> None:
        n = len(turns)
        pos = next((i for i, h in enumerate(history) if h is user_utt), len(history))
        # u_t_position: where u_t sat among the history entries (what came before / after the user's words)
        step = {"kind": kind, "index": n, "user_message_index": user_index, "u_t_position": pos, **step}
        turns.append(Turn(turn_id=f"{conv.id}-s{n:03d}", dialogue_id=conv.id, workflow=workflow,
                          history=[h for h in history if h is not user_utt], user=user, agent=agent, state_before={},
                          state_after=state_after, meta={**meta_base, "turn_index": n, "step": step}))

    for m in conv.messages:
        if m.role == "system":
            continue
        if m.role == "user":
            user, user_index = m.content, m.index
            user_utt = Utterance("user", m.content)
            history.append(user_utt)
            continue
        if m.role == "tool":
            call = calls_by_result.get(m.index)
            history.append(Utterance("tool", tool_output_text(call.name if call else (m.name or "tool"), m.content)))
            continue
        # assistant
        if m.content.strip():
            add("reply", m.content, f"{service}:{REPLY_INTENT}", {}, {"message_index": m.index,
                                                                       "calls_in_message": len(m.tool_calls)})
            history.append(Utterance("agent", m.content))
        for call in m.tool_calls:
            wid = f"{service}:{call.name}"
            if wid not in registry:
                raise SageInputError(f"conversation '{conv.id}', message {m.index}: tool '{call.name}' is not in the "
                                     "tools file", file=conv.source, field=f"messages[{m.index}].tool_calls[{call.position}]")
            spec = registry.get(wid)
            flat = flatten_arguments(call.arguments)
            state = {k: v for k, v in flat.items() if k in spec.slots}
            unknown = sorted(k for k in flat if k not in spec.slots)
            add("tool_call", render_call(call), wid, state,
                {"message_index": m.index, "tool": call.name, "call_id": call.id, "position": call.position,
                 "parallel": len(m.tool_calls) > 1, "calls_in_message": len(m.tool_calls),
                 "with_reply": bool(m.content.strip()), "result": call.result, "is_error": call.is_error,
                 "unknown_args": unknown})
            history.append(Utterance("agent", f"[call] {render_call(call)}"))
    if not turns:
        raise SageInputError(f"conversation '{conv.id}': no assistant message or tool call to judge",
                             file=conv.source, field="messages")
    turns[-1].meta["step"]["last"] = True
    return turns


def conversations_to_turns(convs: Iterable[Conversation], registry: WorkflowRegistry) -> list[Turn]:
    out: list[Turn] = []
    for c in convs:
        out.extend(conversation_steps(c, registry))
    return out


__all__ = ["conversation_steps", "conversations_to_turns", "flatten_arguments", "render_call",
           "tool_output_text", "max_array_items", "scalar_text"]
