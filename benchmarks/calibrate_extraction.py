"""How often an extracted user value is right at each rule confidence: the table behind
``sage_core.evaluator.text.user_values.EXTRACTION_PRECISION``. Reads SGD **dev** only (never test).

For every dev turn with annotated user values, the values are extracted again from the text (annotations
stripped, rule levels uncalibrated) and each extracted (slot, value) is right when the annotation holds the
slot with a value that ``values_match`` says is equal. Prints, per rule level: count, raw precision, and the
smoothed, capped figure the library uses ((k + 1) / (n + 2), at most 0.95).

    python benchmarks/calibrate_extraction.py [--data ../shared/data/sgd/dev]
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CAP = 0.95


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "sgd" / "dev"))
    a = ap.parse_args()
    from sage_core import load_corpus
    from sage_core.evaluator.text.normalize import values_match
    from sage_core.evaluator.text.user_values import EXTRACTION_PRECISION, extract_user_values

    data = Path(a.data)
    if data.name == "test":
        print("error: this calibration reads dev (or train), never test", file=sys.stderr)
        return 2
    turns, reg = load_corpus("sgd", data, data / "schema.json")
    right, seen = defaultdict(int), defaultdict(int)
    for t in turns:
        if t.user_values is None:
            continue
        spec = reg.get(t.workflow)
        bare = dataclasses.replace(t, user_values=None, agent_acts=None)
        for uv in extract_user_values(bare, spec, profile=reg.profile, calibrated=False):
            vt = spec.slots[uv.slot].value_type
            ok = any(g.slot == uv.slot and values_match(uv.value, g.value, vt) for g in t.user_values)
            seen[uv.confidence] += 1
            right[uv.confidence] += int(ok)
    print(f"{data}: extracted user values by rule level (text-only)")
    print(f"{'level':>6} {'n':>6} {'precision':>9} {'smoothed':>9} {'in library':>10}")
    for c in sorted(seen):
        k, n = right[c], seen[c]
        print(f"{c:>6} {n:>6} {k / n:>9.3f} {min(CAP, (k + 1) / (n + 2)):>9.3f} {EXTRACTION_PRECISION.get(c, c):>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
