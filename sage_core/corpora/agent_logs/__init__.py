"""Tool-calling agent logs as a corpus: OpenAI chat transcripts and tau-bench trajectories.

``load_agent_logs(fmt, logs, tools, policy=None)`` -> (turns, registry): the
conversations are read and validated (``conversation``), the tools file and
our policy YAML become one workflow per tool (``sage_core.specs.from_tools``),
and every agent step becomes a ``Turn`` (``steps``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from sage_core.data.errors import SageInputError
from .conversation import Conversation, Message, ToolCall, is_error_output, parse_conversation
from .openai_transcripts import looks_like_openai_transcripts, read_openai_transcripts
from .steps import conversation_steps, conversations_to_turns, flatten_arguments, max_array_items
from .tau_bench import looks_like_tau_trajectories, read_tau_trajectories

FORMATS = ("openai", "tau-bench")


def read_conversations(fmt: str, path: str | Path) -> list[Conversation]:
    if fmt == "openai":
        return read_openai_transcripts(path)
    if fmt == "tau-bench":
        return read_tau_trajectories(path)
    raise SageInputError(f"unknown agent-log format '{fmt}' (use one of {', '.join(FORMATS)})", field="format")


def load_agent_logs(fmt: str, logs: str | Path, tools: Optional[str | Path] = None,
                    policy: Optional[str | Path] = None):
    """(turns, registry) for a transcript / trajectory file; tools from ``tools`` or the transcripts' own ``tools``."""
    from sage_core.specs.from_tools import read_policy, read_tools, registry_from_tools

    convs = read_conversations(fmt, logs)
    if tools is not None:
        tool_list, tools_name = read_tools(tools), str(tools)
    else:
        tool_list = next((c.tools for c in convs if c.tools), None)
        tools_name = str(logs)
        if not tool_list:
            raise SageInputError("no tools: pass --tools TOOLS.json (the transcripts carry no 'tools' list)",
                                 file=str(logs), field="tools")
    pol = read_policy(policy)
    registry = registry_from_tools(tool_list, pol, file=tools_name,
                                   max_items=max(pol.max_items, max_array_items(convs)))
    return conversations_to_turns(convs, registry), registry


__all__ = ["FORMATS", "Conversation", "Message", "ToolCall", "parse_conversation", "is_error_output",
           "read_openai_transcripts", "read_tau_trajectories", "read_conversations", "load_agent_logs",
           "conversation_steps", "conversations_to_turns", "flatten_arguments", "max_array_items",
           "looks_like_openai_transcripts", "looks_like_tau_trajectories"]
