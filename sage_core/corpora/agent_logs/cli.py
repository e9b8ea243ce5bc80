"""``python -m sage_core load-agent-logs``: tool-calling logs -> a slice of agent steps + the spec to judge them by.

Then ``python -m sage_core evaluate --slice SLICE.jsonl --schema SPEC.yaml``
runs the usual cascade. The spec is written from the tools file and our policy
YAML (``sage_core.specs.from_tools``), with array slots for the longest array
any call in the logs passes.
"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path


def add_arguments(p) -> None:
    p.add_argument("--format", required=True, choices=["openai", "tau-bench"], help="log format")
    p.add_argument("--logs", required=True, help="transcripts (.json / .jsonl) or tau-bench trajectory file")
    p.add_argument("--tools", default=None,
                   help="OpenAI function-calling tools JSON (default: the transcripts' own 'tools')")
    p.add_argument("--policy", default=None, help="our tool policy YAML (consequential tools, ordering, grounding)")
    p.add_argument("--out", required=True, help="slice JSONL to write (one agent step per line)")
    p.add_argument("--spec-out", required=True, help="workflow spec YAML to write (pass it to evaluate --schema)")


def run(args) -> int:
    from sage_core.data.slice_io import write_slice
    from sage_core.specs.from_tools import write_tool_spec
    from . import load_agent_logs

    turns, registry = load_agent_logs(args.format, args.logs, args.tools, args.policy)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_slice(turns, out)
    write_tool_spec(registry, args.spec_out)
    kinds = Counter(t.meta["step"]["kind"] for t in turns)
    print(f"wrote {len(turns)} agent steps ({kinds.get('tool_call', 0)} tool calls, {kinds.get('reply', 0)} replies) "
          f"from {len({t.dialogue_id for t in turns})} conversations to {out}; spec with {len(registry)} workflows "
          f"to {args.spec_out}", file=sys.stderr)
    return 0


__all__ = ["add_arguments", "run"]
