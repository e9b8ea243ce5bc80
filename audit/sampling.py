"""Stratified, seeded audit samples with known inclusion probabilities.

An audit over-samples rare strata (each failure class) so every class gets
enough human labels, which biases plain averages; so every drawn turn carries
its stratum and pi_h = n_h / N_h (simple random sampling without replacement
inside the stratum), and ``audit.weights`` turns them into 1 / pi weights.

Strata are named by a key function of the turn: ``gold_stratum`` (failure
class from the gold label, or ``clean``), ``labels_stratum(labels)`` (e.g. a
SAGE run's verdicts), optionally crossed with the corpus (``corpus/key``).

``paper_protocol`` is our reading of the paper's n=200 audit: n split equally
over corpora; inside a corpus, half of its quota over the failure classes
(equal shares) and half to clean turns; a stratum smaller than its share is
taken whole (pi = 1) and the rest goes to the other strata of the same corpus.
Strata given no quota are recorded with pi = 0: estimates then describe the
sampled strata only (the design records this).

Blind by construction: by default at most ONE turn per dialogue is drawn
(``max_per_dialogue=1``). A later turn of a dialogue shows the original reply
and state of an earlier injected turn in its history, so two turns of one
dialogue can give gold away (``audit.blinding``). ``max_per_dialogue=k`` allows
up to k turns per dialogue but still never draws an exposing combination;
``None`` is the old unconstrained draw (kept to measure the leak). Under the
rule, strata are filled rarest first, each by walking a seeded permutation and
skipping turns whose dialogue is full or would expose. The rule changes who can
be drawn (a clean turn sharing its dialogue with a rare failure is drawn less
often), so n_h / N_h is no longer a turn's inclusion probability: when the rule
can bind, each drawn turn's pi is estimated as the share of ``pi_draws`` seeded
draws (default 200, this one included) that contain it; strata keep the
nominal n_h / N_h and the design records ``dialogue_rule`` (with any shortfall).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from sage_core import Turn

from .blinding import consistent_with, exposures

CLEAN = "clean"


@dataclass(frozen=True)
class Stratum:
    name: str
    population: int  # N_h
    sampled: int  # n_h
    inclusion_prob: float  # n_h / N_h


@dataclass(frozen=True)
class SampledTurn:
    turn: Turn
    stratum: str
    inclusion_prob: float
    corpus: str

    @property
    def weight(self) -> float:
        return 1.0 / self.inclusion_prob


@dataclass
class Sample:
    """The drawn turns (in a seeded shuffled queue order) and the design that drew them."""

    turns: list[SampledTurn]
    strata: list[Stratum]
    seed: int
    design: dict = field(default_factory=dict)

    def inclusion_probs(self) -> dict[str, float]:
        return {s.turn.turn_id: s.inclusion_prob for s in self.turns}

    def __len__(self) -> int:
        return len(self.turns)


def corpus_of(turn: Turn) -> str:
    """The corpus a turn comes from: ``meta['corpus']`` (or ``meta['source']``), else 'default'."""
    return str(turn.meta.get("corpus") or turn.meta.get("source") or "default")


def gold_stratum(turn: Turn) -> str:
    """'IUV' / 'WNF' / 'PC' / 'UV' for gold failures ('failure' if no class), 'clean', or 'unlabelled'."""
    if turn.gold is None:
        return "unlabelled"
    if turn.gold.label == "failure":
        return turn.gold.failure_class or "failure"
    return CLEAN


def labels_stratum(labels: Mapping[str, str], classes: Optional[Mapping[str, Optional[str]]] = None
                   ) -> Callable[[Turn], str]:
    """Strata from an evaluator's labels (turn_id -> failure|acceptable|undecided) and classes."""
    def key(turn: Turn) -> str:
        lab = labels.get(turn.turn_id)
        if lab is None:
            return "unlabelled"
        if lab == "failure":
            cls = (classes or {}).get(turn.turn_id)
            return cls or "failure"
        return CLEAN if lab == "acceptable" else str(lab)
    return key


def allocate_equal(sizes: Mapping[str, int], total: int) -> dict[str, int]:
    """Split ``total`` as evenly as possible over strata, never more than a stratum holds.

    Leftovers from small strata go to the others; ties broken by name (deterministic).
    """
    alloc = {k: 0 for k in sizes}
    left = min(total, sum(sizes.values()))
    open_ = sorted(k for k, v in sizes.items() if v > 0)
    while left > 0 and open_:
        share, extra = divmod(left, len(open_))
        for i, k in enumerate(list(open_)):
            want = share + (1 if i < extra else 0)
            take = min(want, sizes[k] - alloc[k])
            alloc[k] += take
            left -= take
        open_ = [k for k in open_ if alloc[k] < sizes[k]]
    return alloc


def _constrained_draw(groups: Mapping[str, list[Turn]], q: Mapping[str, int], rng, k: int
                      ) -> tuple[dict[str, list[int]], dict[str, int]]:
    """One draw under the dialogue rule: stratum -> picked indexes, stratum -> shortfall."""
    taken: dict[str, list[Turn]] = {}  # dialogue -> turns drawn so far
    picks: dict[str, list[int]] = {}
    short: dict[str, int] = {}
    for name in sorted(groups, key=lambda g: (len(groups[g]), g)):  # rarest stratum first
        pop = groups[name]
        want = max(0, min(int(q.get(name, 0)), len(pop)))
        got: list[int] = []
        if want:
            for i in rng.permutation(len(pop)):
                t = pop[int(i)]
                mine = taken.get(t.dialogue_id, [])
                if len(mine) >= k or not consistent_with(t, mine):
                    continue
                taken.setdefault(t.dialogue_id, []).append(t)
                got.append(int(i))
                if len(got) == want:
                    break
        if len(got) < want:
            short[name] = want - len(got)
        picks[name] = sorted(got)
    return picks, short


def _rule_binds(turns: Sequence[Turn], k: int) -> bool:
    """Can the dialogue rule change a draw? (a dialogue with more than k turns, or an exposing pair)."""
    per: dict[str, int] = {}
    for t in turns:
        per[t.dialogue_id] = per.get(t.dialogue_id, 0) + 1
    if any(v > k for v in per.values()):
        return True
    return k > 1 and bool(exposures(t for t in turns if per[t.dialogue_id] > 1))


def stratified_sample(turns: Sequence[Turn], quotas: Mapping[str, int] | int,
                      key: Callable[[Turn], str] = gold_stratum, seed: int = 0,
                      by_corpus: bool = False, corpus: Callable[[Turn], str] = corpus_of,
                      design: Optional[dict] = None, max_per_dialogue: Optional[int] = 1,
                      pi_draws: int = 200) -> Sample:
    """Draw ``quotas[stratum]`` turns per stratum (an int = the same quota for every stratum).

    With ``by_corpus`` the strata are ``corpus/key``. A quota above the stratum
    size takes the whole stratum. The result is reproducible for a given seed.
    ``max_per_dialogue`` (default 1; None = no limit, the old draw): at most that
    many turns of one dialogue, never two that expose an injection (module doc).
    When the rule can change a draw, each drawn turn's inclusion probability is
    the share of ``pi_draws`` seeded draws (this one included) that contain it;
    strata keep the nominal n_h / N_h.
    """
    if max_per_dialogue is not None and int(max_per_dialogue) < 1:
        raise ValueError(f"max_per_dialogue must be at least 1 (or None), got {max_per_dialogue}")
    groups: dict[str, list[Turn]] = {}
    seen: set[str] = set()
    for t in turns:
        if t.turn_id in seen:
            raise ValueError(f"duplicate turn_id '{t.turn_id}'")
        seen.add(t.turn_id)
        name = f"{corpus(t)}/{key(t)}" if by_corpus else key(t)
        groups.setdefault(name, []).append(t)
    q = {k: int(quotas) for k in groups} if isinstance(quotas, int) else dict(quotas)
    unknown = set(q) - set(groups)
    rng = np.random.default_rng(seed)
    picked: list[SampledTurn] = []
    strata: list[Stratum] = []
    shortfall: dict[str, int] = {}
    pi_rule = ""
    unreachable = 0
    if max_per_dialogue is None:
        for name in sorted(groups):
            pop = groups[name]
            n = max(0, min(int(q.get(name, 0)), len(pop)))
            pi = n / len(pop)
            strata.append(Stratum(name, len(pop), n, pi))
            if n:
                idx = np.sort(rng.choice(len(pop), size=n, replace=False))
                picked += [SampledTurn(pop[i], name, pi, corpus(pop[i])) for i in idx]
    else:
        k = int(max_per_dialogue)
        picks, shortfall = _constrained_draw(groups, q, rng, k)
        per_turn: dict[str, float] = {}
        if pi_draws > 1 and _rule_binds(turns, k):
            counts: dict[str, int] = {}
            draws = [picks] + [_constrained_draw(groups, q, np.random.default_rng([seed, r]), k)[0]
                               for r in range(1, int(pi_draws))]
            for dr in draws:
                for name, idx in dr.items():
                    for i in idx:
                        tid = groups[name][i].turn_id
                        counts[tid] = counts.get(tid, 0) + 1
            per_turn = {tid: c / len(draws) for tid, c in counts.items()}
            pi_rule = f"per turn: share of {len(draws)} seeded draws under the rule that contain it"
            # turns of sampled strata no draw ever took: estimates describe the reachable turns only
            unreachable = sum(1 for name, pop in groups.items() if q.get(name, 0) > 0
                              for t in pop if t.turn_id not in counts)
        else:
            pi_rule = "n_h / N_h (the rule cannot change a draw here)"
        for name in sorted(groups):
            pop, idx = groups[name], picks.get(name, [])
            pi = len(idx) / len(pop)
            strata.append(Stratum(name, len(pop), len(idx), pi))
            picked += [SampledTurn(pop[i], name, per_turn.get(pop[i].turn_id, pi), corpus(pop[i])) for i in idx]
    order = rng.permutation(len(picked))  # queue order: strata interleaved, annotators stay blind
    d = dict(design or {})
    d["dialogue_rule"] = ({"max_per_dialogue": None} if max_per_dialogue is None else
                          {"max_per_dialogue": int(max_per_dialogue), "no_exposing_pairs": True,
                           "shortfall": shortfall, "inclusion_prob": pi_rule,
                           "unreachable_turns": unreachable})
    d.update({"kind": d.get("kind", "stratified"), "seed": seed, "by_corpus": by_corpus,
              "quotas": {k: int(v) for k, v in sorted(q.items())},
              "unsampled_strata": sorted(s.name for s in strata if s.sampled == 0),
              "unknown_quota_strata": sorted(unknown)})
    return Sample([picked[i] for i in order], strata, seed, d)


def paper_protocol(turns: Sequence[Turn], n: int = 200, seed: int = 0,
                   key: Callable[[Turn], str] = gold_stratum, failure_share: float = 0.5,
                   corpus: Callable[[Turn], str] = corpus_of, max_per_dialogue: Optional[int] = 1,
                   pi_draws: int = 200) -> Sample:
    """The n=200 audit: equal per-corpus quotas; per corpus half failures (equal per class), half clean."""
    by_corpus: dict[str, dict[str, int]] = {}
    for t in turns:
        c = by_corpus.setdefault(corpus(t), {})
        k = key(t)
        c[k] = c.get(k, 0) + 1
    corpus_quota = allocate_equal({c: sum(v.values()) for c, v in by_corpus.items()}, n)
    quotas: dict[str, int] = {}
    for c, sizes in by_corpus.items():
        nc = corpus_quota[c]
        fail = {k: v for k, v in sizes.items() if k not in (CLEAN, "unlabelled")}
        clean = {k: v for k, v in sizes.items() if k in (CLEAN, "unlabelled")}
        n_fail = min(int(round(nc * failure_share)), sum(fail.values()))
        n_clean = min(nc - n_fail, sum(clean.values()))
        n_fail = min(nc - n_clean, sum(fail.values()))  # clean short -> more failures
        for k, v in {**allocate_equal(fail, n_fail), **allocate_equal(clean, n_clean)}.items():
            quotas[f"{c}/{k}"] = v
    return stratified_sample(turns, quotas, key=key, seed=seed, by_corpus=True, corpus=corpus,
                             design={"kind": "paper_protocol", "n": n, "failure_share": failure_share},
                             max_per_dialogue=max_per_dialogue, pi_draws=pi_draws)


__all__ = ["Stratum", "SampledTurn", "Sample", "CLEAN", "corpus_of", "gold_stratum", "labels_stratum",
           "allocate_equal", "stratified_sample", "paper_protocol"]
