"""FrugalGPT-style cascade judge: a cheap model decides unless it is unsure.

The cheap model (default gpt-4.1-mini) is sampled twice (one request, n=2)
with the shared prompt asking for label + stated confidence. Its confidence is
logprob-free: mean stated confidence times the share of samples agreeing with
the majority label. Below ``escalate_below`` (or on an unparsable sample) the
turn is escalated to the strong model (default gpt-4.1, temperature 0), whose
answer is final. Escalations are what make the method cost more than the cheap
model alone, so they are recorded per row.
"""
from __future__ import annotations

from collections import Counter
from typing import Optional

from sage_core.data.types import Turn
from sage_core.llm.baselines import Judgement
from sage_core.llm.baselines.prompts import CONFIDENCE_TASK, build_messages, parse_label
from sage_core.llm.client import LLMClient
from sage_core.specs.workflow import WorkflowSpec

DEFAULT_ESCALATE_BELOW = 0.8


class FrugalJudge:
    def __init__(self, cheap: LLMClient, strong: LLMClient, mode: str, escalate_below: float = DEFAULT_ESCALATE_BELOW,
                 samples: int = 2, temperature: float = 1.0, max_tokens: int = 96, seed: Optional[int] = None):
        self.cheap = cheap
        self.strong = strong
        self.mode = mode
        self.escalate_below = escalate_below
        self.samples = samples
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed

    def cheap_vote(self, messages: list[dict]):
        res = self.cheap.chat(messages, temperature=self.temperature, n=self.samples,
                              max_tokens=self.max_tokens, seed=self.seed)
        parsed = [parse_label(t, want_confidence=True) for t in res.texts]
        ok = [p for p in parsed if p[0] is not None]
        if len(ok) < len(parsed) or not ok:
            return None, None, 0.0, res.usage
        votes = Counter(p[0] for p in ok)
        label, k = votes.most_common(1)[0]
        if len(votes) > 1 and votes.most_common(2)[1][1] == k:  # a tie: no majority
            label = ok[0][0]
        agree = k / len(ok)
        stated = sum(p[2] for p in ok if p[0] == label) / k
        classes = Counter(p[1] for p in ok if p[0] == label and p[1])
        cls = classes.most_common(1)[0][0] if classes else None
        return label, cls, agree * stated, res.usage

    def judge(self, turn: Turn, spec: WorkflowSpec) -> Judgement:
        messages = build_messages(turn, spec, self.mode, CONFIDENCE_TASK)
        label, cls, conf, usage = self.cheap_vote(messages)
        extra = {"cheap_model": self.cheap.model, "cheap_label": label, "cheap_confidence": round(conf, 6)}
        if label is not None and conf >= self.escalate_below:
            return Judgement(label, cls, conf, conf, [usage], {**extra, "escalated": False,
                                                                 "decided_by": self.cheap.model})
        res = self.strong.chat(messages, temperature=0.0, n=1, max_tokens=self.max_tokens, seed=self.seed)
        s_label, s_cls, s_conf = parse_label(res.texts[0], want_confidence=False)
        extra.update(escalated=True, decided_by=self.strong.model)
        if s_label is None:
            return Judgement("undecided", None, 0.0, None, [usage, res.usage], extra,
                             f"unparsable strong-model answer: {res.texts[0][:120]!r}")
        s_conf = 1.0 if s_conf is None else s_conf  # the final model's word stands
        return Judgement(s_label, s_cls, s_conf, s_conf, [usage, res.usage], extra)
