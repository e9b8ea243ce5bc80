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


TOOLS_NAMES = ("tools.json",)
POLICY_NAMES = ("tool_policy.yaml", "policy.yaml", "tool_policy.yml", "policy.yml")


def _beside(path: Path, names: tuple[str, ...]) -> Optional[Path]:
    base = path if path.is_dir() else path.parent
    return next((d / n for d in (base, base.parent) for n in names if (d / n).is_file()), None)


def load_agent_corpus(fmt: str, logs: str | Path, schema: Optional[str | Path] = None):
    """``load_corpus`` for agent logs: ``schema`` is a tools.json, our policy YAML, or a spec from ``load-agent-logs``.

    What ``schema`` does not give is looked for beside the logs: ``tools.json``, ``tool_policy.yaml`` /
    ``policy.yaml`` (our format; a tau-bench ``policy.md`` is prose and is not read).
    """
    from sage_core.corpora.common import LoadedTurns, LoadStats
    from sage_core.specs.from_tools import is_tool_spec_file, load_tool_spec

    p = Path(logs)
    if p.is_dir():
        files = sorted(x for x in p.iterdir() if x.suffix in (".json", ".jsonl") and x.name not in TOOLS_NAMES)
        if len(files) != 1:
            raise SageInputError("give one transcript or trajectory file (or a folder holding exactly one besides "
                                 "tools.json)", file=str(p))
        p = files[0]
    sp = Path(schema) if schema else None
    if sp is not None and is_tool_spec_file(sp):
        registry = load_tool_spec(sp)
        convs = read_conversations(fmt, p)
        turns = conversations_to_turns(convs, registry)
    else:
        tools = sp if sp is not None and sp.suffix == ".json" else _beside(p, TOOLS_NAMES)
        policy = sp if sp is not None and sp.suffix in (".yaml", ".yml") else _beside(p, POLICY_NAMES)
        turns, registry = load_agent_logs(fmt, p, tools, policy)
        convs = None
    stats = LoadStats(corpus=fmt, files=1, dialogues=len({t.dialogue_id for t in turns}), turns=len(turns))
    return LoadedTurns(turns, stats), registry


__all__ = ["FORMATS", "load_agent_corpus", "Conversation", "Message", "ToolCall", "parse_conversation", "is_error_output",
           "read_openai_transcripts", "read_tau_trajectories", "read_conversations", "load_agent_logs",
           "conversation_steps", "conversations_to_turns", "flatten_arguments", "max_array_items",
           "looks_like_openai_transcripts", "looks_like_tau_trajectories"]
