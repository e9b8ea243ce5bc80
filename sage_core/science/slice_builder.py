"""``build-slice``: sample a balanced, failure-injected evaluation slice from a corpus.

The paper's SGD recipe: spread turns over the (service, intent) workflows, at
most ``cap_per_intent`` turns per workflow, drawn from at most
``cap_files_per_service`` dialogues per service, ``n`` turns in all, of which a
share ``rate`` receives one injected failure, the classes assigned round-robin
among the turns each class applies to. One seed drives every choice and every
candidate list is sorted before it is shuffled, so the same seed writes the
same bytes (regardless of PYTHONHASHSEED).

``injection`` chooses how failures are written: ``natural`` (real agent
utterances and real values from other dialogues of the same corpus, see
``natural_injection``; the benchmarks' default) or ``template`` (the paper's
templated requests and confirmations, kept to reproduce it). ``text_only``
strips ``user_values`` / ``agent_acts`` from the written slice. An ``n`` the
caps cannot supply is an input error that names the caps, never a silent
shortfall.
"""
from __future__ import annotations

import random
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from sage_core.data.errors import SageInputError
from sage_core.data.slice_io import write_slice
from sage_core.data.types import Turn
from sage_core.science.inject import CLASSES, ValuePool, inject, mark_clean, turn_rng
from sage_core.science.natural_injection import INJECTION_MODES, NaturalPool, inject_natural
from sage_core.science.report.compute import strip_annotations
from sage_core.specs.workflow import WorkflowRegistry


@dataclass
class SliceSummary:
    """What was sampled, for the console and the report (honest counts, shortfalls included)."""

    corpus_turns: int = 0
    schema_workflows: int = 0
    corpus_workflows: int = 0
    sampled_workflows: int = 0
    dialogues: int = 0
    n_requested: int = 0
    n: int = 0
    injected: Counter = field(default_factory=Counter)
    applicable: Counter = field(default_factory=Counter)
    per_workflow: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    injection: str = "template"
    text_only: bool = False

    def lines(self) -> list[str]:
        out = [f"corpus: {self.corpus_turns} agent turns in {self.corpus_workflows} workflows "
               f"(the schema defines {self.schema_workflows})",
               f"slice: {self.n} turns (asked {self.n_requested}) from {self.sampled_workflows} workflows "
               f"and {self.dialogues} dialogues",
               f"injection: {self.injection}" + (", text-only (user_values/agent_acts stripped)" if self.text_only
                                                 else ", annotated"),
               "injected: " + ", ".join(f"{c} {self.injected.get(c, 0)}" for c in CLASSES)
               + f" (total {sum(self.injected.values())}, clean {self.n - sum(self.injected.values())})",
               "applicable among sampled turns: " + ", ".join(f"{c} {self.applicable.get(c, 0)}" for c in CLASSES)]
        return out + [f"note: {n}" for n in self.notes]


def _turn_key(t: Turn):
    did, _, idx = t.turn_id.rpartition(":")
    return (t.dialogue_id, int(idx) if idx.isdigit() else 0, t.turn_id)


def _pick_dialogues(turns: Sequence[Turn], cap: int, rng: random.Random) -> dict[str, set[str]]:
    """service -> chosen dialogue ids: round-robin over the service's intents so rare ones are covered."""
    by_service: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for t in turns:
        svc, intent = t.workflow.split(":", 1)
        by_service[svc][intent].add(t.dialogue_id)
    chosen: dict[str, set[str]] = {}
    for svc in sorted(by_service):
        intents = by_service[svc]
        pools = {i: sorted(d) for i, d in sorted(intents.items())}
        for i in pools:
            rng.shuffle(pools[i])
        picked: list[str] = []
        while len(picked) < cap and any(pools.values()):
            for i in sorted(pools, key=lambda k: (len(intents[k]), k)):  # rarest intent first
                while pools[i] and pools[i][0] in picked:
                    pools[i].pop(0)
                if pools[i] and len(picked) < cap:
                    picked.append(pools[i].pop(0))
        chosen[svc] = set(picked)
    return chosen


def sample_turns(turns: Sequence[Turn], n: int, cap_per_intent: int, cap_files_per_service: int,
                 rng: random.Random, spare: Optional[dict[str, list[Turn]]] = None) -> list[Turn]:
    """Round-robin over workflows (one turn per workflow per pass) under both caps.

    ``spare`` (if given) receives, per workflow, the eligible turns left out.
    """
    chosen = _pick_dialogues(turns, cap_files_per_service, rng)
    by_wf: dict[str, list[Turn]] = defaultdict(list)
    for t in sorted(turns, key=_turn_key):
        if t.dialogue_id in chosen.get(t.workflow.split(":", 1)[0], ()):
            by_wf[t.workflow].append(t)
    for wf in sorted(by_wf):
        rng.shuffle(by_wf[wf])
        if spare is not None:
            spare[wf] = by_wf[wf][cap_per_intent:]
        by_wf[wf] = by_wf[wf][:cap_per_intent]
    order = sorted(by_wf)
    rng.shuffle(order)
    out: list[Turn] = []
    depth = 0
    while len(out) < n and any(len(by_wf[w]) > depth for w in order):
        for w in order:
            if len(by_wf[w]) > depth and len(out) < n:
                out.append(by_wf[w][depth])
            elif len(by_wf[w]) > depth and spare is not None:
                spare[w].insert(0, by_wf[w][depth])
        depth += 1
    if spare is not None:
        for w in order:
            spare[w][:0] = by_wf[w][depth:]
    return out


Injector = Callable[[Turn, str, object, object], Optional[Turn]]  # (turn, class, spec, rng) -> injected or None


def make_injector(injection: str, turns: Sequence[Turn]) -> Injector:
    """The injection function of a mode, with its pool of real values / utterances built from ``turns``."""
    if injection == "natural":
        npool = NaturalPool(turns)
        return lambda t, c, spec, rng: inject_natural(t, c, spec, rng, npool)
    if injection == "template":
        vpool = ValuePool(turns)
        return lambda t, c, spec, rng: inject(t, c, spec, rng, vpool)
    raise SageInputError(f"unknown injection mode '{injection}'; use {' or '.join(INJECTION_MODES)}",
                         field="injection")


def _applies(t: Turn, c: str, registry: WorkflowRegistry, seed: int, injector: Injector) -> bool:
    return injector(t, c, registry.get(t.workflow), turn_rng(seed, t.turn_id, c)) is not None


def rebalance(sampled: list[Turn], spare: dict[str, list[Turn]], registry: WorkflowRegistry,
              targets: dict[str, int], seed: int, injector: Injector) -> int:
    """Swap clean-only turns for same-workflow spare turns a scarce class applies to.

    Keeps the workflow distribution (1:1 swaps within a workflow, so the caps
    hold) while giving every class enough candidates to reach its quota (plus
    20 % slack, since one turn can take only one injection). Returns the swaps.
    """
    app = {c: {t.turn_id for t in sampled if _applies(t, c, registry, seed, injector)} for c in targets}
    need = {c: -(-targets[c] * 6 // 5) for c in targets}
    swaps = 0
    for c in sorted(targets, key=lambda k: (len(app[k]) - need[k], k)):
        if len(app[c]) >= need[c]:
            continue
        for w in sorted(spare):
            for cand in list(spare[w]):
                if len(app[c]) >= need[c]:
                    break
                if not _applies(cand, c, registry, seed, injector):
                    continue
                # a sampled turn of this workflow that no scarce class needs
                victim = next((t for t in sampled if t.workflow == w and t.turn_id not in app[c]
                               and not any(t.turn_id in app[o] and len(app[o]) <= need[o] for o in targets)),
                              None)
                if victim is None:
                    break
                sampled[sampled.index(victim)] = cand
                spare[w].remove(cand)
                for o in targets:
                    app[o].discard(victim.turn_id)
                    if o == c or _applies(cand, o, registry, seed, injector):
                        app[o].add(cand.turn_id)
                swaps += 1
    return swaps


def assign_injections(sampled: Sequence[Turn], registry: WorkflowRegistry, n_inject: int,
                      classes: Sequence[str], seed: int, rng: random.Random,
                      injector: Injector) -> tuple[dict[str, Turn], Counter]:
    """turn_id -> injected turn; classes round-robin, the scarcest class choosing first each round."""
    cands: dict[str, list[tuple[str, Turn]]] = {}
    for c in classes:
        lst = []
        for t in sampled:
            r = injector(t, c, registry.get(t.workflow), turn_rng(seed, t.turn_id, c))
            if r is not None:
                lst.append((t.turn_id, r))
        rng.shuffle(lst)
        cands[c] = lst
    applicable = Counter({c: len(v) for c, v in cands.items()})
    done: dict[str, Turn] = {}
    active = list(classes)
    while len(done) < n_inject and active:
        remaining = {c: [x for x in cands[c] if x[0] not in done] for c in active}
        round_order = sorted(active, key=lambda c: (len(remaining[c]), classes.index(c)))
        progressed = False
        for j, c in enumerate(round_order):
            if len(done) >= n_inject:
                break
            lst = [x for x in cands[c] if x[0] not in done]
            if not lst:
                active.remove(c)
                continue
            # leave turns that a scarcer class could still use to that class
            scarcer = [{x[0] for x in cands[o] if x[0] not in done} for o in round_order[:j]]
            tid, turn = next((x for x in lst if not any(x[0] in s for s in scarcer)), lst[0])
            done[tid] = turn
            progressed = True
        if not progressed:
            break
    return done, applicable


def build_slice(turns: Sequence[Turn], registry: WorkflowRegistry, n: int = 280, rate: float = 0.5,
                cap_per_intent: int = 8, cap_files_per_service: int = 12, seed: int = 0,
                classes: Sequence[str] = CLASSES, injection: str = "template",
                text_only: bool = False) -> tuple[list[Turn], SliceSummary]:
    """Sample ``n`` turns and inject failures into ``round(rate * n)`` of them."""
    if not 0 <= rate <= 1:
        raise SageInputError(f"--rate must be between 0 and 1, got {rate}", field="rate")
    if n <= 0:
        raise SageInputError(f"--n must be positive, got {n}", field="n")
    bad = [c for c in classes if c not in CLASSES]
    if bad or not classes:
        raise SageInputError(f"unknown failure class {', '.join(bad) or '(none)'}; use {','.join(CLASSES)}",
                             field="classes")
    classes = list(dict.fromkeys(classes))
    injector = make_injector(injection, turns)
    rng = random.Random(seed)
    summary = SliceSummary(corpus_turns=len(turns), schema_workflows=len(registry),
                           corpus_workflows=len({t.workflow for t in turns}), n_requested=n,
                           injection=injection, text_only=text_only)
    spare: dict[str, list[Turn]] = {}
    sampled = sample_turns(turns, n, cap_per_intent, cap_files_per_service, rng, spare)
    if len(sampled) < n:
        raise SageInputError(f"--n {n} is more than the caps allow: at most {len(sampled)} turns satisfy "
                             f"--cap-per-intent {cap_per_intent} and --cap-files-per-service {cap_files_per_service} "
                             f"on this corpus; lower --n or raise the caps", field="n")
    n_inject = round(rate * len(sampled))
    targets = {c: n_inject // len(classes) + (1 if i < n_inject % len(classes) else 0)
               for i, c in enumerate(classes)}
    swaps = rebalance(sampled, spare, registry, targets, seed, injector)
    if swaps:
        summary.notes.append(f"{swaps} clean turns swapped for same-workflow turns to balance the classes")
    injected, summary.applicable = assign_injections(sampled, registry, n_inject, classes, seed, rng, injector)
    if len(injected) < n_inject:
        summary.notes.append(f"only {len(injected)} of {n_inject} injections were applicable")
    out = [injected.get(t.turn_id) or mark_clean(t) for t in sampled]
    out.sort(key=_turn_key)
    if text_only:
        out = strip_annotations(out)
    summary.n = len(out)
    summary.injected = Counter(t.gold.failure_class for t in out if t.gold.label == "failure")
    summary.per_workflow = Counter(t.workflow for t in out)
    summary.sampled_workflows = len(summary.per_workflow)
    summary.dialogues = len({t.dialogue_id for t in out})
    return out, summary


# --- corpus loading ---------------------------------------------------------------
def load_turns(corpus: str, dialogues: str, schema: Optional[str]) -> tuple[list[Turn], WorkflowRegistry]:
    """Turns and workflows of a corpus, through the loaders package."""
    if corpus == "sgd":
        if not schema:
            raise SageInputError("--schema is required for --corpus sgd", field="schema")
        from sage_core.corpora.schemas import load_schema
        from sage_core.corpora.sgd.loader import load_sgd_dialogues
        registry = load_schema(schema)
        return list(load_sgd_dialogues(dialogues, registry)), registry
    try:
        from sage_core.corpora import load_corpus
    except ImportError:
        raise SageInputError(f"corpus '{corpus}' needs sage_core.corpora.load_corpus, "
                             "which is not available in this build") from None
    turns, registry = load_corpus(corpus, dialogues, schema)
    return list(turns), registry


def add_arguments(p) -> None:
    p.add_argument("--corpus", default="sgd", choices=["sgd", "abcd", "multiwoz22"],
                   help="corpus format of --dialogues")
    p.add_argument("--dialogues", required=True, help="dialogue folder or file")
    p.add_argument("--schema", default=None, help="schema.json (SGD/MultiWOZ 2.2); for ABCD optional")
    p.add_argument("--n", type=int, default=280, help="turns in the slice")
    p.add_argument("--rate", type=float, default=0.5, help="share of turns receiving an injected failure")
    p.add_argument("--cap-per-intent", type=int, default=8, help="max turns per (service, intent) workflow")
    p.add_argument("--cap-files-per-service", type=int, default=12, help="max dialogues per service")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--classes", default=",".join(CLASSES),
                   help="failure classes to inject, e.g. UV for the UV-only variant")
    p.add_argument("--injection", default="natural", choices=list(INJECTION_MODES),
                   help="natural: WNF/PC replies are real agent utterances and UV values real values from other "
                        "dialogues of the corpus (default); template: the paper's templated replies")
    p.add_argument("--text-only", action="store_true",
                   help="strip user_values and agent_acts from the written slice (what real logs look like)")
    p.add_argument("--out", required=True, help="output slice (JSONL)")


def run(args) -> int:
    from sage_core.data.limits import check_input_file, check_output_file

    if args.schema:
        check_input_file(args.schema, "schema", field="schema")
    check_output_file(args.out, "slice", field="out")
    classes = [c.strip().upper() for c in str(args.classes).split(",") if c.strip()]
    turns, registry = load_turns(args.corpus, args.dialogues, args.schema)
    out, summary = build_slice(turns, registry, n=args.n, rate=args.rate, cap_per_intent=args.cap_per_intent,
                               cap_files_per_service=args.cap_files_per_service, seed=args.seed, classes=classes,
                               injection=args.injection, text_only=args.text_only)
    write_slice(out, args.out)
    for line in summary.lines():
        print(line)
    print(f"wrote {args.out}")
    if summary.notes:
        sys.stdout.flush()
    return 0


__all__ = ["build_slice", "sample_turns", "assign_injections", "load_turns", "SliceSummary", "make_injector",
           "strip_annotations",
           "add_arguments", "run"]
