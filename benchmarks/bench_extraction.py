"""Text-only extraction against SGD's annotations: precision and recall per act and per slot,
on SGD test and on the five SGD-X renderings of the same dialogues.

Every SGD test turn is loaded with its annotated ``agent_acts`` / ``user_values``
(the gold); the evaluator's own evidence function extracts them again from the
text with the annotations stripped (the prediction). SGD-X: the test turns are
remapped onto each variant's schema (renamed slots/intents, paraphrased
descriptions; utterances unchanged) and extracted with that schema. The split's
turns are also scored by how new their service is to the heads: services with
train dialogues, new services of a domain train has, domains train has none of.
Prints figures only (no asserts). Measurement code: ``sage_core.science.extraction_eval``.

    HF_HUB_OFFLINE=1 python benchmarks/bench_extraction.py [--split test] [--no-sgdx] [--slots 25] [--json out.json]
        [--replies-without-marks]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_core.science.extraction_eval import COMMIT, measure_extraction  # noqa: E402

# the marks this check takes out; its own pattern, not the evaluator's sentences.SENTENCE_MARK, so the input a check
# builds does not follow what the code under test reads as a mark
SENTENCE_MARKS = re.compile(r"[.!?]")
ACTS_SHOWN = ("REQUEST", "CONFIRM", "NOTIFY_SUCCESS", COMMIT, "OFFER", "INFORM", "INFORM_COUNT", "OFFER_INTENT",
              "REQ_MORE", "NOTIFY_FAILURE", "GOODBYE")


def evidence_fn(registry, heads=None):
    """The evaluator's evidence for a turn (annotated, else extracted from text at the default extraction
    floor, with the corpus profile the schema loader attached, and the learned heads as the Evaluator uses them)."""
    from sage_core.evaluator.compile import turn_evidence
    return lambda turn, spec: turn_evidence(turn, spec, profile=registry.profile, heads=heads)


def value_match():
    from sage_core.evaluator.text.normalize import values_match
    return values_match


def _f(x: float) -> str:
    return "n/a" if x != x else f"{x:.3f}"


def print_scores(title: str, sc, n_slots: int) -> None:
    print(f"\n## {title}: {sc.turns} turns")
    print(f"{'act (turn level)':<24} {'support':>7} {'P':>6} {'R':>6} {'F1':>6}")
    for k in ACTS_SHOWN:
        if k in sc.acts:
            c = sc.acts[k]
            print(f"{k:<24} {c.support:>7} {_f(c.precision):>6} {_f(c.recall):>6} {_f(c.f1):>6}")
    r, v, vs = sc.requests, sc.values, sc.values_slot_only
    print(f"{'requested slots (pairs)':<24} {r.support:>7} {_f(r.precision):>6} {_f(r.recall):>6} {_f(r.f1):>6}")
    print(f"{'user values (slot+value)':<24} {v.support:>7} {_f(v.precision):>6} {_f(v.recall):>6} {_f(v.f1):>6}")
    print(f"{'user values (slot only)':<24} {vs.support:>7} {_f(vs.precision):>6} {_f(vs.recall):>6} {_f(vs.f1):>6}")
    if n_slots:
        for name, table in (("requested slot", sc.request_slots), ("user-value slot", sc.value_slots)):
            rows = sorted(table.items(), key=lambda kv: (-kv[1].support, kv[0]))[:n_slots]
            print(f"  per {name} (top {len(rows)} by support): "
                  + "; ".join(f"{s} {c.support} P {_f(c.precision)} R {_f(c.recall)}" for s, c in rows))


def _remembered(fn, done: dict):
    """``fn`` remembering its evidence per turn id in ``done`` (the grouped figures re-score the same turns)."""
    def evidence(bare, spec):
        key = (bare.turn_id, spec.id)
        if key not in done:
            done[key] = fn(bare, spec)
        return done[key]
    return evidence


NOVELTY = ("services with train dialogues", "new services of a domain in train", "domains without train dialogues")


def novelty_groups(turns, registry, train_folder: Path) -> dict:
    """The turns split by how new their service is to the heads: {group (``NOVELTY``): (services, turns)}; empty when
    the train folder has no dialogues. A domain is a service's name without its number (``service_domain``)."""
    from sage_core.corpora.sgd.loader import service_domain, services_with_dialogues
    seen = services_with_dialogues(train_folder)
    if not seen:
        return {}
    domains = {service_domain(s) for s in seen}
    out: dict = {name: (set(), []) for name in NOVELTY}
    for t in turns:
        service = registry.get(t.workflow).service
        name = NOVELTY[0] if service in seen else NOVELTY[1] if service_domain(service) in domains else NOVELTY[2]
        out[name][0].add(service)
        out[name][1].append(t)
    return {name: (sorted(services), part) for name, (services, part) in out.items() if part}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "sgd"))
    ap.add_argument("--split", default="test", choices=["train", "dev", "test"])
    ap.add_argument("--no-sgdx", action="store_true", help="skip the five SGD-X renderings")
    ap.add_argument("--limit", type=int, default=0, help="first N turns only (0 = all)")
    ap.add_argument("--slots", type=int, default=15, help="per-slot rows to print (by support)")
    ap.add_argument("--json", default=None, help="write every figure (incl. all slots) here")
    ap.add_argument("--no-heads", action="store_true", help="keyword rules only (no learned heads)")
    ap.add_argument("--train", default=None, help="the SGD train folder whose dialogues say which services and domains "
                                                  "the heads were fitted on (default: beside the split)")
    ap.add_argument("--replies-without-marks", action="store_true",
                    help="robustness check: take every '.', '!' and '?' out of the agent replies (as a transcript or a "
                         "hurried chat writes them); the annotations stay the gold")
    args = ap.parse_args(argv)
    split = Path(args.data) / args.split
    if not split.is_dir():
        print(f"SGD {args.split} split not found at {split}; nothing to measure")
        return 0
    from sage_core import load_schema
    from sage_core.corpora.sgd.loader import load_sgd_dialogues, remap_turns, sgdx_slot_map

    registry = load_schema(str(split / "schema.json"))
    turns = list(load_sgd_dialogues(str(split), registry))
    if args.limit:
        turns = turns[:args.limit]
    if args.replies_without_marks:
        turns = [dataclasses.replace(t, agent=SENTENCE_MARKS.sub("", t.agent or "")) for t in turns]
    heads = None
    if not args.no_heads:
        from sage_core.evaluator.text.heads import load_heads
        heads = load_heads()
        t0 = time.perf_counter()
        heads.prefetch_replies([t.agent for t in turns])  # one batched encoder pass (as the Evaluator does per chunk)
        print(f"heads: {heads.path}; encoded the replies in {time.perf_counter() - t0:.1f} s")
    fn, match = evidence_fn(registry, heads), value_match()
    out = {}
    t0 = time.perf_counter()
    done: dict = {}
    sc = measure_extraction(turns, registry, _remembered(fn, done), match)
    secs = time.perf_counter() - t0
    how = ", agent replies without '.', '!', '?'" if args.replies_without_marks else ""
    print(f"SGD {args.split}{how}, text-only extraction vs annotations ({1000 * secs / max(len(turns), 1):.2f} ms/turn)")
    print_scores(f"SGD {args.split} (original schema)", sc, args.slots)
    out["original"] = sc.as_dict()
    groups = novelty_groups(turns, registry, Path(args.train) if args.train else Path(args.data) / "train")
    if groups:
        out["by_novelty"] = {}
        print(f"\n## SGD {args.split} by what the heads were fitted on (train dialogues)")
        print(f"{'services':<40} {'turns':>6} {'req P':>6} {'req R':>6} {'REQUEST R':>9} {'commit P':>8} "
              f"{'commit R':>8} {'val P':>6} {'val R':>6}")
        for name, (services, part) in groups.items():
            g = measure_extraction(part, registry, _remembered(fn, done), match)
            out["by_novelty"][name] = {"services": services, **g.as_dict()}
            c, q = g.acts.get(COMMIT), g.acts.get("REQUEST")
            print(f"{name + f' ({len(services)})':<40} {g.turns:>6} {_f(g.requests.precision):>6} "
                  f"{_f(g.requests.recall):>6} {_f(q.recall) if q else 'n/a':>9} "
                  f"{_f(c.precision) if c else 'n/a':>8} {_f(c.recall) if c else 'n/a':>8} "
                  f"{_f(g.values.precision):>6} {_f(g.values.recall):>6}")
    sgdx_root = Path(args.data) / "sgd_x"
    if not args.no_sgdx and args.split == "test" and sgdx_root.is_dir():
        summary = []
        for schema in sorted(sgdx_root.glob("v*/schema.json")):
            vreg = load_schema(str(schema))
            vturns = remap_turns(turns, sgdx_slot_map(registry, vreg), vreg)
            vsc = measure_extraction(vturns, vreg, evidence_fn(vreg, heads), match)
            name = schema.parent.name
            out[name] = vsc.as_dict()
            print_scores(f"SGD-X {name}", vsc, 0)
            summary.append((name, vsc))
        print("\n## SGD-X summary (text-only)")
        print(f"{'variant':<9} {'req P':>6} {'req R':>6} {'commit P':>8} {'commit R':>8} {'val P':>6} {'val R':>6}")
        for name, s in [("original", sc)] + summary:
            c = s.acts.get(COMMIT)
            print(f"{name:<9} {_f(s.requests.precision):>6} {_f(s.requests.recall):>6} "
                  f"{_f(c.precision) if c else 'n/a':>8} {_f(c.recall) if c else 'n/a':>8} "
                  f"{_f(s.values.precision):>6} {_f(s.values.recall):>6}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, sort_keys=True))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
