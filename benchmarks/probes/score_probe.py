"""Score a probe's verdicts against its gold labels: a failure turn is right when its gold class fired, a clean turn
when it is judged acceptable; undecided turns are counted apart. The probes are our own wording, written to find
gaps (development material, not a held-out measurement; docs/benchmarks.md).

    python -m sage_core evaluate --slice benchmarks/probes/llm_style_dev.jsonl \
        --schema ../shared/data/sgd/dev/schema.json --out /tmp/v.jsonl
    python benchmarks/probes/score_probe.py benchmarks/probes/llm_style_dev.gold.json /tmp/v.jsonl
"""
import json, sys
gold = json.load(open(sys.argv[1])); V = [json.loads(l) for l in open(sys.argv[2])]
from collections import Counter
right = Counter(); tot = Counter(); und = Counter()
for v in V:
    g = gold[v['turn_id']]; fc = v.get('fired_classes') or []
    tot[g] += 1
    if v['label'] == 'undecided': und[g] += 1; continue
    ok = v['label'] == 'acceptable' if g == 'acceptable' else (v['label'] == 'failure' and g in fc)
    right[g] += ok
print(sum(right.values()), '/', sum(tot.values()), 'undecided', sum(und.values()), {k: f"{right[k]}/{tot[k]}" for k in tot})
