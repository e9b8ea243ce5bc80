"""How well does text-only extraction recover the annotated evidence? Precision and recall per act and per slot.

The evaluator compiles WNF from REQUEST acts, PC from CONFIRM / NOTIFY_SUCCESS
acts and IUV from user values; on real logs these come from the text. Here the
annotated ``agent_acts`` / ``user_values`` of real turns are the gold, and the
evidence the evaluator extracts from the same turn with the annotations
stripped is the prediction:

- acts, per act type, turn level: does the reply carry the act at all;
  ``CONFIRM|NOTIFY_SUCCESS`` counts a turn that commits in either way (what PC uses);
- requested slots: (REQUEST, slot) pairs per turn, micro-averaged and per slot name;
- user values: (slot, value) pairs per turn, a value matching when
  ``values_match`` (normalisation-aware) says so; also per slot name.

The extraction function is passed in (``evidence_fn(turn, spec) -> (user_values,
agent_acts)``), so the same measurement runs on whatever extractor the
evaluator uses.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from sage_core.data.types import AgentAct, Turn, UserValue
from sage_core.science.statistics import prf_from_counts
from sage_core.specs.workflow import WorkflowRegistry

EvidenceFn = Callable[[Turn, object], tuple[list[UserValue], list[AgentAct]]]
ValueMatch = Callable[[str, str, str], bool]
COMMIT = "CONFIRM|NOTIFY_SUCCESS"
COMMIT_ACTS = frozenset({"CONFIRM", "NOTIFY_SUCCESS"})


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def _prf(self) -> tuple[float, float, float]:
        p, r, f = prf_from_counts(self.tp, self.fp, self.fn, zero_division=float("nan"))  # undefined -> NaN
        return float(p), float(r), float(f)

    @property
    def precision(self) -> float:
        return self._prf()[0]

    @property
    def recall(self) -> float:
        return self._prf()[1]

    @property
    def f1(self) -> float:
        return self._prf()[2]

    @property
    def support(self) -> int:
        return self.tp + self.fn

    def add(self, gold: set, pred: set) -> None:
        self.tp += len(gold & pred)
        self.fp += len(pred - gold)
        self.fn += len(gold - pred)

    def as_dict(self) -> dict:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": self.precision, "recall": self.recall,
                "f1": self.f1}


@dataclass
class ExtractionScores:
    turns: int = 0
    acts: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    requests: Counts = field(default_factory=Counts)
    request_slots: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    values: Counts = field(default_factory=Counts)
    value_slots: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    values_slot_only: Counts = field(default_factory=Counts)

    def as_dict(self) -> dict:
        return {"turns": self.turns, "acts": {k: v.as_dict() for k, v in sorted(self.acts.items())},
                "requests": self.requests.as_dict(),
                "request_slots": {k: v.as_dict() for k, v in sorted(self.request_slots.items())},
                "values": self.values.as_dict(), "values_slot_only": self.values_slot_only.as_dict(),
                "value_slots": {k: v.as_dict() for k, v in sorted(self.value_slots.items())}}


def _act_kinds(acts: Iterable[AgentAct]) -> set[str]:
    kinds = {a.act for a in acts}
    if kinds & COMMIT_ACTS:
        kinds.add(COMMIT)
    return kinds


def _requests(acts: Iterable[AgentAct]) -> set[str]:
    return {a.slot for a in acts if a.act == "REQUEST" and a.slot}


def _match_values(gold: list[UserValue], pred: list[UserValue], spec, match: ValueMatch
                  ) -> tuple[set, set]:
    """Gold and predicted (slot, index) items, a prediction taking the gold item whose value it matches."""
    g_items = {(u.slot, i) for i, u in enumerate(gold)}
    p_items = set()
    used: set[int] = set()
    for j, p in enumerate(pred):
        vtype = spec.slots[p.slot].value_type if p.slot in spec.slots else "text"
        hit = next((i for i, g in enumerate(gold) if i not in used and g.slot == p.slot
                    and match(g.value, p.value, vtype)), None)
        if hit is None:
            p_items.add((p.slot, f"p{j}"))
        else:
            used.add(hit)
            p_items.add((p.slot, hit))
    return g_items, p_items


def measure_extraction(turns: Iterable[Turn], registry: WorkflowRegistry, evidence_fn: EvidenceFn,
                       value_match: ValueMatch, act_filter: Optional[Callable[[str], bool]] = None
                       ) -> ExtractionScores:
    """Score ``evidence_fn`` on annotation-stripped copies of annotated turns against their annotations.

    Turns without ``agent_acts`` are skipped for acts, without ``user_values`` for values.
    """
    sc = ExtractionScores()
    for t in turns:
        spec = registry.get(t.workflow)
        bare = dataclasses.replace(t, user_values=None, agent_acts=None)
        uvs, acts = evidence_fn(bare, spec)
        sc.turns += 1
        if t.agent_acts is not None:
            gk, pk = _act_kinds(t.agent_acts), _act_kinds(acts)
            for k in gk | pk:
                if act_filter is None or act_filter(k):
                    sc.acts[k].add(gk & {k}, pk & {k})
            gr, pr = _requests(t.agent_acts), _requests(acts)
            sc.requests.add(gr, pr)
            for s in gr | pr:
                sc.request_slots[s].add(gr & {s}, pr & {s})
        if t.user_values is not None:
            g, p = _match_values(list(t.user_values), list(uvs), spec, value_match)
            sc.values.add(g, p)
            sc.values_slot_only.add({u.slot for u in t.user_values}, {u.slot for u in uvs})
            for s in {x[0] for x in g | p}:
                sc.value_slots[s].add({x for x in g if x[0] == s}, {x for x in p if x[0] == s})
    return sc


__all__ = ["Counts", "ExtractionScores", "measure_extraction", "COMMIT", "COMMIT_ACTS"]
