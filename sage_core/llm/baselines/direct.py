"""Single-call direct judge: one deterministic call answers failure/clean (+ class).

The cheapest LLM-judge baseline: temperature 0, n = 1, JSON answer
``{"label": "failure"|"clean", "class": IUV|WNF|PC|UV|null}``. It states no
confidence, so its rows carry none (no selective-prediction curve).
"""
from __future__ import annotations

from sage_core.data.types import Turn
from sage_core.llm.baselines import Judgement
from sage_core.llm.baselines.prompts import DIRECT_TASK, build_messages, parse_label
from sage_core.llm.client import LLMClient
from sage_core.specs.workflow import WorkflowSpec


class DirectJudge:
    def __init__(self, client: LLMClient, mode: str, max_tokens: int = 64):
        self.client = client
        self.mode = mode
        self.max_tokens = max_tokens

    def judge(self, turn: Turn, spec: WorkflowSpec) -> Judgement:
        res = self.client.chat(build_messages(turn, spec, self.mode, DIRECT_TASK), temperature=0.0, n=1,
                               max_tokens=self.max_tokens)
        label, cls, _ = parse_label(res.texts[0])
        if label is None:
            return Judgement("undecided", usages=[res.usage],
                             rationale=f"unparsable answer: {res.texts[0][:120]!r}")
        return Judgement(label, cls, None, None, [res.usage])
