"""Reference labels for agent logs that carry a task outcome (tau-bench: reward and gold actions).

These are benchmark labels, read from ``meta["reference"]`` only; nothing here
is shown to annotators or used by the evaluator.

- Dialogue level: a failure iff reward < 1.
- Decisive error step of a failed dialogue: walk the agent's consequential calls
  that took effect (a call the tool answered with an error changed nothing and is
  skipped); the first one that matches no remaining gold write action (other
  tool, or same tool with other arguments) is the decisive step. If every call
  matched but a gold write action is left over, the failure is an omission and
  the decisive step is the dialogue's last agent step. Otherwise (every gold
  action taken, none extra, and yet reward < 1: e.g. the final answer to the
  user was wrong) the decisive step is also the last step, flagged ``kind="other"``.

Limits: the reward checks the final database state, so an extra write that the
agent later undid, or gold actions taken in another order with the same final
state, are not errors for the reward but may be for this walk; gold arguments
are compared exactly (numbers as numbers, key order ignored), so an equivalent
but differently ordered list (two flights swapped) counts as a mismatch.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from sage_core.data.types import Turn


@dataclass
class DialogueReference:
    dialogue_id: str
    failed: bool
    reward: Optional[float]
    decisive_step: Optional[int]  # index of the agent step (Turn.meta["step"]["index"])
    kind: str  # "wrong_call" | "missing_action" | "other" | "none" (rewarded)
    n_steps: int


def canonical(v: Any) -> Any:
    """Arguments compared as values: numbers as floats, dict key order ignored."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, dict):
        return {k: canonical(x) for k, x in sorted(v.items())}
    if isinstance(v, list):
        return [canonical(x) for x in v]
    return v


def _call_args(turn: Turn) -> dict:
    agent = turn.agent
    i = agent.find("(")
    try:
        return json.loads(agent[i + 1:-1]) if i >= 0 and agent.endswith(")") else {}
    except ValueError:
        return {}


def dialogue_reference(turns: list[Turn], consequential: Iterable[str]) -> DialogueReference:
    """The reference labels of one dialogue's steps (in order)."""
    cons = set(consequential)
    ref = turns[0].meta.get("reference") or {}
    reward = ref.get("reward")
    failed = reward is not None and float(reward) < 1.0
    last = turns[-1].meta["step"]["index"]
    if not failed:
        return DialogueReference(turns[0].dialogue_id, False, reward, None, "none", len(turns))
    remaining = [(a["name"], canonical(a.get("kwargs") or {})) for a in ref.get("gold_actions") or []
                 if a.get("name") in cons]
    for t in turns:
        st = t.meta["step"]
        if st["kind"] != "tool_call" or st.get("tool") not in cons or st.get("is_error"):
            continue
        key = (st["tool"], canonical(_call_args(t)))
        if key in remaining:
            remaining.remove(key)
            continue
        return DialogueReference(t.dialogue_id, True, reward, st["index"], "wrong_call", len(turns))
    kind = "missing_action" if remaining else "other"
    return DialogueReference(turns[0].dialogue_id, True, reward, last, kind, len(turns))


def by_dialogue(turns: Iterable[Turn]) -> dict[str, list[Turn]]:
    out: dict[str, list[Turn]] = {}
    for t in turns:
        out.setdefault(t.dialogue_id, []).append(t)
    for v in out.values():
        v.sort(key=lambda t: t.meta["step"]["index"])
    return out


__all__ = ["DialogueReference", "dialogue_reference", "by_dialogue", "canonical"]
