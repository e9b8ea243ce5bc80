"""Score a probe's verdicts against its gold labels: a failure turn is right when its gold class fired, a clean turn
when it is judged acceptable; undecided turns are counted apart. The probes are our own wording, written to find
gaps (development material, not a held-out measurement; docs/benchmarks.md).

    python -m sage_core evaluate --slice benchmarks/probes/llm_style_dev.jsonl \\
        --schema ../shared/data/sgd/dev/schema.json --out /tmp/v.jsonl
    python benchmarks/probes/score_probe.py benchmarks/probes/llm_style_dev.gold.json /tmp/v.jsonl
"""
from __future__ import annotations

import json
import sys
from collections import Counter


def main(gold_path: str, verdicts_path: str) -> None:
    with open(gold_path, encoding="utf-8") as f:
        gold = json.load(f)
    with open(verdicts_path, encoding="utf-8") as f:
        verdicts = [json.loads(line) for line in f]
    right, total, undecided = Counter(), Counter(), Counter()
    for v in verdicts:
        g = gold[v["turn_id"]]
        total[g] += 1
        if v["label"] == "undecided":
            undecided[g] += 1
        elif g == "acceptable":
            right[g] += v["label"] == "acceptable"
        else:
            right[g] += v["label"] == "failure" and g in (v.get("fired_classes") or [])
    print(sum(right.values()), "/", sum(total.values()), "undecided", sum(undecided.values()),
          {k: f"{right[k]}/{total[k]}" for k in total})


if __name__ == "__main__":
    main(*sys.argv[1:3])
