"""Natural failures: SAGE-Core over real MultiWOZ agent outputs (PPTOD, UBAR, SOLOIST).

Loads each system-output file in ../shared/data/multiwoz/system_outputs through
``sage_core.corpora.system_outputs.loader`` (the same path as ``python -m sage_core
load-outputs``), runs SAGE-Core with the offline S2 backend, and prints per
system: turns, the failure / acceptable / undecided rates, how often each
class fired, which stage decided, and ``--examples`` flagged turns (agent text,
the fired criterion, the repair message) so a reader can judge whether they
are real agent errors.

There is no gold here and no user text in these files (``user`` is "" and
``meta.user_text_available`` is False): IUV cannot be compiled, UV abstains,
and the verdicts rest on WNF/PC over the predicted states. Figures only,
nothing is asserted. Run:
``HF_HUB_OFFLINE=1 python benchmarks/bench_natural_failures.py [--limit 200] [--examples 5] [--dump flagged.jsonl]``
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MWOZ = REPO.parent / "shared" / "data" / "multiwoz"
SYSTEMS = ("pptod", "ubar", "soloist")


def fired(v):
    """(criterion, repair message) for every criterion decided TRUE."""
    rep = {r.criterion_id: r.message for r in v.repairs}
    return [(tr, rep.get(tr.criterion.id, "")) for tr in v.traces if tr.final.decision.value == "true"]


def show(t, v) -> str:
    lines = [f"  {t.turn_id}  {t.workflow}  conf={v.confidence:.2f}",
             f"    prev agent: {t.history[-1].text if t.history else '(first turn)'}",
             f"    agent:      {t.agent}",
             f"    s_t-1: {t.state_before}",
             f"    s_t:   {t.state_after}"]
    for tr, msg in fired(v):
        f = tr.final
        lines.append(f"    FIRED {tr.criterion.type.value} @{f.stage.value} m={f.margin:.2f}: {tr.criterion.text}")
        if f.rationale:
            lines.append(f"      rationale: {f.rationale[:200]}")
        if msg:
            lines.append(f"      repair: {msg}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outputs-dir", default=str(MWOZ / "system_outputs"))
    ap.add_argument("--schema", default=str(MWOZ / "schema_2.2.json"))
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--limit", type=int, default=None, help="first N dialogues of each file (default: all)")
    ap.add_argument("--examples", type=int, default=5, help="flagged turns to print per system")
    ap.add_argument("--seed", type=int, default=0, help="seed for choosing the example turns")
    ap.add_argument("--s2-backend", default="offline")
    ap.add_argument("--dump", default=None, help="write every flagged turn (turn + verdict) to this JSONL")
    args = ap.parse_args(argv)
    out_dir, schema = Path(args.outputs_dir), Path(args.schema)
    if not out_dir.is_dir() or not schema.is_file():
        print(f"MultiWOZ system outputs or schema not found under {out_dir.parent}; nothing to benchmark")
        return 0
    import logging
    logging.disable(logging.INFO)  # the loader logs its statistics; we print our own
    from sage_core import (
        ROUTING_STAGES,
        CascadeConfig,
        Evaluator,
        load_multiwoz_schema,
        load_system_outputs,
    )

    registry = load_multiwoz_schema(schema)  # schema_2.2.json + the booking overlay (PC needs required slots)
    ev = Evaluator(registry, CascadeConfig.named("sage-core", s2_backend=args.s2_backend))
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None
    summary = []
    for name in [s.strip() for s in args.systems.split(",") if s.strip()]:
        path = out_dir / f"{name}.json"
        if not path.is_file():
            print(f"\n== {name}: {path} not found, skipped")
            continue
        t0 = time.perf_counter()
        loaded = load_system_outputs(path, registry, system=name, limit=args.limit)
        turns = list(loaded)
        t_load = time.perf_counter() - t0
        t1 = time.perf_counter()
        vs = ev.evaluate(turns)
        t_eval = time.perf_counter() - t1
        n = len(turns)
        labels = Counter(v.label.value for v in vs)
        cls_turns = Counter(c for v in vs for c in v.fired_classes)
        cls_crit = Counter(tr.criterion.type.value for v in vs for tr, _ in fired(v))
        compiled = Counter(tr.criterion.type.value for v in vs for tr in v.traces)
        stages = Counter(tr.final.stage.value for v in vs for tr in v.traces)
        n_crit = sum(stages.values())
        no_crit = sum(1 for v in vs if not v.traces)
        s = loaded.stats
        print(f"\n== {name}: {n} turns from {s.dialogues} dialogues (load {t_load:.2f} s, "
              f"SAGE-Core {t_eval:.2f} s = {1000 * t_eval / max(n, 1):.2f} ms/turn)")
        if s.skipped:
            print("   skipped: " + ", ".join(f"{k} x{c}" for k, c in s.skipped.items()))
        if s.unmapped_slots:
            print("   unmapped predicted slots (dropped): "
                  + ", ".join(f"{k} x{c}" for k, c in s.unmapped_slots.most_common(6)))
        print(f"   failure {labels['failure'] / n:.1%} ({labels['failure']}), acceptable "
              f"{labels['acceptable'] / n:.1%} ({labels['acceptable']}), undecided {labels['undecided'] / n:.1%} "
              f"({labels['undecided']}); turns with no criterion {no_crit / n:.1%}")
        print("   fired, turns: " + ", ".join(f"{c} {cls_turns.get(c, 0)}" for c in ("IUV", "WNF", "PC", "UV"))
              + "; criteria fired/compiled: "
              + ", ".join(f"{c} {cls_crit.get(c, 0)}/{compiled.get(c, 0)}" for c in ("IUV", "WNF", "PC", "UV")))
        print(f"   routing ({n_crit} criteria): " + ", ".join(
            f"{st} {stages.get(st, 0) / max(n_crit, 1):.1%}" for st in ROUTING_STAGES))
        flagged = [(t, v) for t, v in zip(turns, vs) if v.predicted_failure]
        if dump:
            for t, v in flagged:
                dump.write(json.dumps({"system": name, "turn": t.to_dict(), "verdict": v.to_dict()}) + "\n")
        picks = random.Random(args.seed).sample(flagged, min(args.examples, len(flagged)))
        if picks:
            print(f"   {len(picks)} flagged turns (random, seed {args.seed}):")
            for t, v in sorted(picks, key=lambda x: x[0].turn_id):
                print(show(t, v))
        summary.append((name, n, labels, cls_turns))
    if dump:
        dump.close()
    print(f"\nS2 backend: {ev.s2_backend_name}")
    print("| system | turns | failure | acceptable | undecided | IUV | WNF | PC | UV |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, n, labels, ct in summary:
        print(f"| {name} | {n} | {labels['failure'] / n:.1%} | {labels['acceptable'] / n:.1%} | "
              f"{labels['undecided'] / n:.1%} | " + " | ".join(str(ct.get(c, 0)) for c in ("IUV", "WNF", "PC", "UV"))
              + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
