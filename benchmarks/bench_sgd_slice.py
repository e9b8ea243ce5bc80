"""SGD slice benchmark: build an injected SGD slice, run SAGE-Core offline, print figures vs targets.

Builds the 280-turn slice from ../shared/data/sgd/test (rate 0.5, seed 0; ``--injection natural``,
the default: WNF/PC replies are real agent utterances and UV values real values from other test
dialogues; ``--injection template`` reproduces the paper's templated slice),
evaluates it twice with the offline S2 backend (the second run is the warm
figure), and prints F1 with a 95 % CI, per-class recall, routing shares,
ms/turn and whole-slice seconds, each target with a PASS/FAIL mark. It never
asserts: machines differ. ``--show-errors`` lists the misjudged turns with the
criteria that fired or stayed silent, to tell evaluator faults from injector faults.

``--seeds 0,1,2,3,4`` builds one slice per seed instead and prints, for the
annotated slice (a consistency check: injectors and evaluator share the written
contract) and for the same slice with ``user_values``/``agent_acts`` stripped
(text-only: the compiler must extract the evidence), each seed's F1 and
per-class recall and their mean ± sd (sample sd, ddof=1) over the seeds, then the
calibration of turn confidence over all seeds' turns (ECE, reliability bins;
``--plot-dir`` writes the reliability plots) and warm ms/turn. With ``--sgdx-dir``
it also re-runs every seed's text-only slice remapped to each SGD-X variant schema
and prints each variant's F1 over the seeds and the spread across variants (the
report's SGD-X section does the same for one slice, where one turn moves F1 by ~0.4
points).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from sage_core import (  # noqa: E402
    ROUTING_STAGES,
    SageInputError,
    bootstrap_ci,
    build_slice,
    load_turns,
    per_class_recall,
    prf,
)
from sage_core.science.calibration import (expected_calibration_error, plot_reliability, reliability_bins,  # noqa: E402
                                           verdict_correctness)


def mark(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def describe(t, v) -> str:
    lines = [f"  {t.turn_id} {t.workflow} gold={t.gold.label}/{t.gold.failure_class} pred={v.label.value}"
             f" conf={v.confidence:.2f} mutation={t.meta.get('mutation')}",
             f"    U: {t.user}", f"    A: {t.agent}",
             f"    acts: {[(a.act, a.slot, a.value) for a in (t.agent_acts or [])]}",
             f"    s_t-1: {t.state_before}", f"    s_t:   {t.state_after}",
             f"    user_values: {[(u.slot, u.value) for u in (t.user_values or [])]}"]
    for tr in v.traces:
        f = tr.final
        lines.append(f"    {tr.criterion.id}: {f.decision.value} @{f.stage.value} m={f.margin:.2f} {f.rationale[:120]}")
    return "\n".join(lines)


from sage_core.science.report.compute import strip_annotations as strip  # noqa: E402


def score(sl, vs) -> dict:
    y = np.array([1 if t.gold.label == "failure" else 0 for t in sl])
    p = np.array([1 if v.predicted_failure else 0 for v in vs])
    m = prf(y, p)
    return {"f1": m["f1"], "precision": m["precision"], "recall": m["recall"], "fp": m["fp"], "fn": m["fn"],
            "rec": per_class_recall(sl, p), "undecided": sum(v.label.value == "undecided" for v in vs)}


def _msd(xs) -> str:
    xs = [x for x in xs if x is not None]
    if not xs:
        return "—"
    sd = float(np.std(xs, ddof=1)) if len(xs) > 1 else 0.0
    return f"{np.mean(xs):.3f} ± {sd:.3f}"


def multi_seed(turns, registry, seeds, args, variants=()) -> int:
    """One slice per seed; annotated and text-only figures per seed, then mean ± sd."""
    from sage_core import CascadeConfig, Evaluator
    ev = Evaluator(registry, CascadeConfig.named("sage-core", s2_backend=args.s2_backend))
    classes = args.classes.split(",")
    res: dict[str, list[dict]] = {"annotated": [], "text-only": []}
    calib: dict[str, tuple[list, list]] = {"annotated": ([], []), "text-only": ([], [])}
    timing: dict[str, list[float]] = {"annotated": [], "text-only": []}
    empty: dict[str, list[int]] = {"annotated": [], "text-only": []}  # correctness of turns without criteria
    print(f"{len(seeds)} slices (n={args.n}, rate 0.5, seeds {','.join(map(str, seeds))}, injection "
          f"{args.injection}, split {Path(args.data).name}); SAGE-Core, S2 backend {args.s2_backend}")
    print(f"{'seed':>4} {'variant':<10} {'F1':>6} {'P':>6} {'R':>6} {'fp':>4} {'fn':>4} {'und':>4}  "
          + " ".join(f"{'R_' + c:>6}" for c in ("IUV", "WNF", "PC", "UV")))
    for seed in seeds:
        sl, summary = build_slice(turns, registry, n=args.n, rate=0.5, seed=seed, classes=classes,
                                  injection=args.injection)
        for variant, ts in (("annotated", sl), ("text-only", strip(sl))):
            vs = ev.evaluate(ts)
            t0 = time.perf_counter()
            vs = ev.evaluate(ts)  # warm: the same evaluator's second pass
            timing[variant].append(1000 * (time.perf_counter() - t0) / len(ts))
            r = score(ts, vs)
            res[variant].append(r)
            y = [1 if t.gold.label == "failure" else 0 for t in ts]
            calib[variant][0].extend(verdict_correctness(y, [1 if v.predicted_failure else 0 for v in vs]))
            calib[variant][1].extend(v.confidence for v in vs)
            empty[variant].extend(c for c, v in zip(calib[variant][0][-len(vs):], vs) if not v.traces)
            print(f"{seed:>4} {variant:<10} {r['f1']:6.3f} {r['precision']:6.3f} {r['recall']:6.3f} "
                  f"{r['fp']:>4} {r['fn']:>4} {r['undecided']:>4}  "
                  + " ".join(f"{'—' if x is None else f'{x:.3f}':>6}" for x in r["rec"].values()))
    for variant, cs in empty.items():
        if cs:
            print(f"turns without a compiled criterion, {variant}: {len(cs)}, accuracy {sum(cs) / len(cs):.3f} "
                  f"(their confidence: aggregate.EMPTY_{'ANNOTATED' if variant == 'annotated' else 'EXTRACTED'})")
    print(f"\nS2 backend: {ev.s2_backend_name}")
    print("mean ± sd over seeds (sample sd):")
    for variant, rs in res.items():
        print(f"  {variant:<10} F1 {_msd([r['f1'] for r in rs])}  P {_msd([r['precision'] for r in rs])}  "
              f"R {_msd([r['recall'] for r in rs])}  "
              + ", ".join(f"R_{c} {_msd([r['rec'][c] for r in rs])}" for c in ("IUV", "WNF", "PC", "UV")))
    print(f"\ncalibration of turn confidence over all {len(seeds)} slices (10 equal-width bins; correct = "
          f"prediction at full coverage equals gold):")
    for variant, (ok, conf) in calib.items():
        ece = expected_calibration_error(ok, conf)
        bins = reliability_bins(ok, conf)
        print(f"  {variant:<10} ECE {ece:.3f} over {len(ok)} turns; bins (range: n, mean conf, accuracy): "
              + "; ".join(f"[{b.lo:.1f},{b.hi:.1f}): {b.n}, {b.mean_confidence:.3f}, {b.accuracy:.3f}"
                          for b in bins if b.n))
        if args.plot_dir:
            p = plot_reliability(bins, Path(args.plot_dir) / f"reliability_{args.injection}_{variant}.png",
                                 title=f"SGD {Path(args.data).name}, {args.injection}, {variant}", ece=ece)
            print(f"  wrote {p}")
    print("warm ms/turn (second pass of one evaluator, mean over seeds): "
          + ", ".join(f"{k} {np.mean(v):.2f}" for k, v in timing.items()))
    if variants:
        sgdx_over_seeds(turns, registry, seeds, args, variants, [r["f1"] for r in res["text-only"]])
    return 0


def sgdx_schemas(sgdx_dir: str, registry) -> list[tuple[str, object, dict]]:
    """(variant name, its registry, slot map from the original schema) per SGD-X variant; read before any evaluation
    so that a missing folder or a schema of other services fails first."""
    from sage_core.corpora.schemas import load_schema
    from sage_core.corpora.sgd.loader import sgdx_slot_map
    from sage_core.science.report.compute import sgdx_variants
    out = []
    for path in sgdx_variants(sgdx_dir):
        vreg = load_schema(path)
        out.append((path.parent.name, vreg, sgdx_slot_map(registry, vreg)))
    return out


def sgdx_over_seeds(turns, registry, seeds, args, variants, original_f1: list) -> None:
    """Text-only F1 of every seed's slice remapped to each SGD-X variant (``sgdx_schemas``): per variant mean ± sd
    over the seeds, and the spread across variants (population sd, as the report's SGD-X section) of the
    per-variant means and of each seed's five figures."""
    from sage_core import CascadeConfig, Evaluator
    from sage_core.corpora.sgd.loader import remap_turns
    slices = [build_slice(turns, registry, n=args.n, rate=0.5, seed=seed, classes=args.classes.split(","),
                          injection=args.injection)[0] for seed in seeds]
    f1: dict[str, list[float]] = {}
    for name, vreg, smap in variants:
        ev = Evaluator(vreg, CascadeConfig.named("sage-core", s2_backend=args.s2_backend))
        f1[name] = [score(ts, ev.evaluate(ts))["f1"] for ts in (strip(remap_turns(sl, smap, vreg)) for sl in slices)]
    print(f"\nSGD-X, text-only, the same {len(seeds)} slices remapped to each variant schema:")
    print(f"  original  F1 {_msd(original_f1)}")
    for name, xs in f1.items():
        print(f"  {name:<9} F1 {_msd(xs)}  (seeds: {', '.join(f'{x:.3f}' for x in xs)})")
    means = np.array([np.mean(xs) for xs in f1.values()])
    per_seed = np.array(list(f1.values())).std(axis=0, ddof=0)
    print(f"  variants: mean F1 {means.mean():.3f}; σ across variants of the per-variant means {means.std(ddof=0):.3f}; "
          f"σ across variants within one slice {per_seed.mean():.3f} on average "
          f"(per seed {', '.join(f'{x:.3f}' for x in per_seed)})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "sgd" / "test"))
    ap.add_argument("--n", type=int, default=280)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", default=None,
                    help="comma-separated seeds (e.g. 0,1,2,3,4): per-seed and mean ± sd figures, "
                         "annotated and text-only")
    ap.add_argument("--classes", default="IUV,WNF,PC,UV")
    ap.add_argument("--injection", default="natural", choices=["natural", "template"],
                    help="natural (real replies/values from other dialogues; default) or template (the paper's)")
    ap.add_argument("--plot-dir", default=None, help="write reliability plots here (multi-seed mode)")
    ap.add_argument("--sgdx-dir", default=None,
                    help="folder with SGD-X v1..v5/schema.json: text-only F1 per variant over the seeds (multi-seed "
                         "mode)")
    ap.add_argument("--s2-backend", default="offline")
    ap.add_argument("--show-errors", action="store_true")
    ap.add_argument("--strip-annotations", action="store_true",
                    help="drop user_values/agent_acts so the compiler must extract evidence (harder)")
    args = ap.parse_args(argv)
    data = Path(args.data)
    if not data.is_dir():
        print(f"SGD test split not found at {data}; nothing to benchmark")
        return 0
    from sage_core import CascadeConfig, Evaluator

    t0 = time.perf_counter()
    turns, registry = load_turns("sgd", str(data), str(data / "schema.json"))
    try:
        if args.seeds:
            seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
            return multi_seed(turns, registry, seeds, args,
                              sgdx_schemas(args.sgdx_dir, registry) if args.sgdx_dir else ())
        sl, summary = build_slice(turns, registry, n=args.n, rate=0.5, seed=args.seed,
                                  classes=args.classes.split(","), injection=args.injection)
    except SageInputError as e:  # e.g. --n beyond the caps of a smaller split
        print(f"error: {e}", file=sys.stderr)
        return 2
    t_build = time.perf_counter() - t0
    for line in summary.lines():
        print(line)
    print(f"slice built in {t_build:.2f} s")
    if args.strip_annotations:
        sl = strip(sl)
        print("annotations stripped: evidence is extracted from text")

    ev = Evaluator(registry, CascadeConfig.named("sage-core", s2_backend=args.s2_backend))
    t1 = time.perf_counter()
    ev.evaluate(sl)
    cold = time.perf_counter() - t1
    t2 = time.perf_counter()
    vs = ev.evaluate(sl)
    warm = time.perf_counter() - t2
    # a new Evaluator in the same process: models already in memory, none of the first one's caches
    ev2 = Evaluator(registry, CascadeConfig.named("sage-core", s2_backend=args.s2_backend))
    t3 = time.perf_counter()
    ev2.evaluate(sl)
    fresh = time.perf_counter() - t3

    y = np.array([1 if t.gold.label == "failure" else 0 for t in sl])
    p = np.array([1 if v.predicted_failure else 0 for v in vs])
    f1, lo, hi = bootstrap_ci(y, p, n_resamples=10_000, seed=0)
    m = prf(y, p)
    rec = per_class_recall(sl, p)
    stages = Counter(tr.final.stage.value for v in vs for tr in v.traces)
    n_crit = sum(stages.values())
    undecided = sum(v.label.value == "undecided" for v in vs)

    empty = [int(yy == pp) for yy, pp, v in zip(y, p, vs) if not v.traces]
    if empty:
        print(f"turns without a compiled criterion: {len(empty)}, accuracy {sum(empty) / len(empty):.3f} "
              "(their confidence: aggregate.EMPTY_ANNOTATED or EMPTY_EXTRACTED)")
    print(f"\nS2 backend: {ev.s2_backend_name}")
    print(f"F1 {f1:.3f} [95% CI {lo:.3f}, {hi:.3f}]  P {m['precision']:.3f}  R {m['recall']:.3f}  "
          f"(tp {m['tp']}, fp {m['fp']}, fn {m['fn']}); undecided turns {undecided}")
    print("per-class recall: " + ", ".join(f"{c} {'—' if r is None else f'{r:.3f}'}" for c, r in rec.items()))
    print(f"routing ({n_crit} criteria, {n_crit / len(sl):.2f}/turn): "
          + ", ".join(f"{s} {stages.get(s, 0) / max(n_crit, 1):.1%}" for s in ROUTING_STAGES))
    print(f"time: cold {cold:.2f} s, warm {warm:.2f} s for {len(sl)} turns ({1000 * warm / len(sl):.2f} ms/turn warm); "
          f"new evaluator in the warm process {fresh:.2f} s ({1000 * fresh / len(sl):.2f} ms/turn)")
    print(f"[{mark(f1 >= 0.90)}] F1 >= 0.90 (got {f1:.3f})")
    iuv = rec.get("IUV")
    print(f"[{mark(iuv is not None and iuv >= 0.80)}] IUV recall >= 0.80 (got {'—' if iuv is None else f'{iuv:.3f}'})")
    print(f"[{mark(warm < 2.0)}] whole slice < 2 s warm (got {warm:.2f} s)")
    if args.show_errors:
        wrong = [(t, v) for t, v, a, b in zip(sl, vs, y, p) if a != b]
        print(f"\n{len(wrong)} misjudged turns:")
        for t, v in wrong:
            print(describe(t, v))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
