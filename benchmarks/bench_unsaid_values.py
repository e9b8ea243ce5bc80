"""Unsaid yes/no and "no preference" values, text-only: how often SAGE-Core flags a value the tracker wrote for a
slot nobody spoke of.

The natural-injection slices draw UV values from other dialogues and almost never write a yes/no slot or
"dontcare", so they cannot tell whether the UV check still catches those; clean turns only show the other side
(values users did give, flagged by mistake). This benchmark writes, into real turns of an SGD split, either a
yes/no value ("True" / "False") or "dontcare" for a slot of the turn's workflow that is in neither s_{t-1} nor
s_t and that the annotated user acts do not name (so, by the annotators, u_t did not speak of it), strips
``user_values`` / ``agent_acts`` and prints, per kind, the share of UV verdicts on that slot that are failure
(caught), abstention and acceptable (missed). Default split: dev (choosing); test only for reported figures.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

KINDS = ("yes/no", "dontcare")


def unsaid_slots(turn, spec) -> list[str]:
    """Slots of the workflow that u_t did not speak of (by its annotated user acts) and that neither state holds."""
    said = {u.slot for u in (turn.user_values or [])}
    return [s for s in sorted(spec.slots)
            if s not in said and s not in turn.state_before and s not in turn.state_after]


def unsaid_value_turns(turns, registry, kind: str, n: int, seed: int) -> list[tuple]:
    """Up to ``n`` (turn, slot) pairs, seeded: the turn's s_t also writes ``slot`` = a yes/no value (kind "yes/no",
    yes/no slots only) or "dontcare" (any slot). Only annotated turns with a user utterance qualify (the
    annotations say what u_t spoke of); the returned turns keep them, strip before evaluating."""
    rng = random.Random(seed)
    out = []
    for t in turns:
        if t.user_values is None or not (t.user or "").strip():
            continue
        spec = registry.get(t.workflow)
        free = unsaid_slots(t, spec)
        if kind == "yes/no":
            free = [s for s in free if spec.slots[s].value_type == "bool"]
        if not free:
            continue
        slot = rng.choice(free)
        value = rng.choice(["True", "False"]) if kind == "yes/no" else "dontcare"
        out.append((dataclasses.replace(t, state_after={**t.state_after, slot: value}), slot))
    return out if len(out) <= n else random.Random(seed + 1).sample(out, n)


def uv_outcomes(pairs, verdicts) -> Counter:
    """Per (turn, slot): the final UV decision on that slot ("true" = caught), "none" when no UV criterion judged it."""
    c: Counter = Counter()
    for (_, slot), v in zip(pairs, verdicts):
        d = [tr.final.decision.value for tr in v.traces
             if tr.criterion.type.value == "UV" and tr.criterion.args.get("slot") == slot]
        c[d[0] if d else "none"] += 1
    return c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "sgd" / "dev"))
    ap.add_argument("--n", type=int, default=1500, help="turns per kind (seeded sample)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--s2-backend", default="offline")
    args = ap.parse_args(argv)
    data = Path(args.data)
    if not data.is_dir():
        print(f"SGD split not found at {data}; nothing to measure")
        return 0
    from sage_core import CascadeConfig, Evaluator, load_schema, load_sgd_dialogues

    registry = load_schema(str(data / "schema.json"))
    turns = list(load_sgd_dialogues(str(data), registry))
    ev = Evaluator(registry, CascadeConfig.named("sage-core", s2_backend=args.s2_backend))
    print(f"unsaid values written into real turns of {data.name} (seed {args.seed}), text-only, SAGE-Core, "
          f"S2 backend {ev.s2_backend_name}")
    for kind in KINDS:
        pairs = unsaid_value_turns(turns, registry, kind, args.n, args.seed)
        vs = ev.evaluate([dataclasses.replace(t, user_values=None, agent_acts=None) for t, _ in pairs])
        c = uv_outcomes(pairs, vs)
        k = max(len(pairs), 1)
        print(f"  {kind:<9} {len(pairs):>5} turns: caught (UV failure) {c['true'] / k:.3f}, abstained "
              f"{c['abstain'] / k:.3f}, judged supported {c['false'] / k:.3f}, not judged {c['none'] / k:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
