"""G-Eval-style judge: chain-of-thought form filling, n samples, mean 1-5 score.

Following G-Eval, the model is given fixed evaluation steps and sampled n times
(default 6, temperature 1); the acceptability scores are averaged, which
replaces G-Eval's probability-weighted score when logprobs are unavailable.
A turn is a failure if the mean is below a threshold; the threshold is fitted
on a labelled dev split to maximise failure F1 (default 3.0 without one).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

from sage_core.data.errors import SageInputError
from sage_core.data.types import Turn
from sage_core.llm.baselines import Judgement
from sage_core.llm.baselines.prompts import GEVAL_TASK, build_messages, parse_geval
from sage_core.llm.client import LLMClient
from sage_core.science.statistics import prf
from sage_core.specs.workflow import WorkflowSpec

DEFAULT_THRESHOLD = 3.0


@dataclass
class GEvalScore:
    mean: Optional[float]  # None when no sample gave a score
    scores: list[float]
    cls: Optional[str]  # majority class among samples that named one


def f1_at(threshold: float, means: Sequence[float], gold: Sequence[bool]) -> float:
    return prf([bool(g) for g in gold], [m < threshold for m in means])["f1"]


def fit_threshold(means: Sequence[float], gold: Sequence[bool]) -> tuple[float, float]:
    """(threshold, dev F1): failure iff mean < threshold, F1 of the failure class maximised.

    Candidates are midpoints between consecutive distinct dev means (and one
    above the largest); ties go to the candidate nearest the neutral 3.0.
    """
    if not means:
        raise SageInputError("G-Eval threshold fitting needs dev turns with a parsable score")
    if not any(gold):
        raise SageInputError("G-Eval threshold fitting needs at least one gold failure in the dev split")
    u = sorted(set(float(m) for m in means))
    candidates = [(a + b) / 2 for a, b in zip(u, u[1:])] + [u[-1] + 0.5]
    best = max(candidates, key=lambda t: (round(f1_at(t, means, gold), 12), -abs(t - DEFAULT_THRESHOLD)))
    return best, f1_at(best, means, gold)


class GEvalJudge:
    def __init__(self, client: LLMClient, mode: str, n: int = 6, temperature: float = 1.0,
                 threshold: float = DEFAULT_THRESHOLD, max_tokens: int = 400, seed: Optional[int] = None):
        self.client = client
        self.mode = mode
        self.n = n
        self.temperature = temperature
        self.threshold = threshold
        self.max_tokens = max_tokens
        self.seed = seed

    def score(self, turn: Turn, spec: WorkflowSpec) -> tuple[GEvalScore, list]:
        res = self.client.chat(build_messages(turn, spec, self.mode, GEVAL_TASK), temperature=self.temperature,
                               n=self.n, max_tokens=self.max_tokens, seed=self.seed)
        parsed = [parse_geval(t) for t in res.texts]
        scores = [s for s, _ in parsed if s is not None]
        votes = Counter(c for _, c in parsed if c is not None)
        cls = votes.most_common(1)[0][0] if votes else None
        mean = sum(scores) / len(scores) if scores else None
        return GEvalScore(mean, scores, cls), [res.usage]

    def decide(self, sc: GEvalScore, usages: list) -> Judgement:
        extra = {"samples": self.n, "scores": sc.scores, "threshold": round(self.threshold, 6)}
        if sc.mean is None:
            return Judgement("undecided", None, 0.0, None, usages, extra, "no sample gave a parsable score")
        failure = sc.mean < self.threshold
        conf = min(1.0, abs(sc.mean - self.threshold) / 2.0)  # distance to the threshold, half the scale = 1
        return Judgement("failure" if failure else "acceptable", sc.cls if failure else None, conf,
                         round(sc.mean, 6), usages, extra)

    def judge(self, turn: Turn, spec: WorkflowSpec) -> Judgement:
        return self.decide(*self.score(turn, spec))
