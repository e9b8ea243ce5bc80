"""Fit the turn-confidence map of extracted evidence (``aggregate.EXTRACTED_OFFLINE``) on SGD **dev**.

Builds the dev split's natural-injection slices (n=240, rate 0.5, seeds 0-7 by default: the slices the dev
figures in docs/benchmarks.md use), strips them to text only and evaluates them with SAGE-Core, offline S2, and
the *uncalibrated* map (a turn's label and minimum margin do not depend on the map, so the fit is not
circular). Then, per label (failure / acceptable) of the decided turns, a Platt map above a coin flip,
1/2 + 1/2 sigmoid(a m + b), of the minimum margin m against "the verdict at full coverage equals gold"
(``aggregate.TurnConfidenceMap`` says why above 1/2), and the empty-turn confidence: the share
of turns without a criterion that were acceptable, Laplace-smoothed. It prints the map as the Python to commit,
the ECE before / after in sample, and the ECE of maps fitted on one half of the seeds measured on the other.

Refuses the test split: the map is chosen on dev and measured on test once, after the commit.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_core import build_slice, load_turns  # noqa: E402
from sage_core.data.types import Decision, TurnLabel  # noqa: E402
from sage_core.evaluator.aggregate import UNDECIDED_CONFIDENCE, TurnConfidenceMap  # noqa: E402
from sage_core.science.calibration import expected_calibration_error, fit_platt  # noqa: E402
from sage_core.science.selective import aurc  # noqa: E402
from sage_core.science.report.compute import strip_annotations  # noqa: E402


def turn_rows(data: Path, seeds: list[int], n: int) -> list[dict]:
    """(seed, label, min margin, has criteria, correct) of every text-only turn of every seed's slice."""
    from sage_core import CascadeConfig, Evaluator
    turns, registry = load_turns("sgd", str(data), str(data / "schema.json"))
    plain = TurnConfidenceMap("uncalibrated", empty=0.5)
    ev = Evaluator(registry, CascadeConfig.named("sage-core", extracted_confidence=plain))
    rows = []
    for seed in seeds:
        sl, _ = build_slice(turns, registry, n=n, rate=0.5, seed=seed, classes=["IUV", "WNF", "PC", "UV"],
                            injection="natural")
        ts = strip_annotations(sl)
        for t, v in zip(ts, ev.evaluate(ts)):
            decided = [tr.final.margin for tr in v.traces if tr.final.decision != Decision.ABSTAIN]
            gold = t.gold.label == "failure"
            rows.append({"seed": seed, "label": v.label, "empty": not v.traces,
                         "margin": min(decided) if decided else None,
                         "gold": int(gold), "pred": int(bool(v.predicted_failure)),
                         "correct": gold == bool(v.predicted_failure)})
    return rows


def fit_map(rows: list[dict], name: str) -> TurnConfidenceMap:
    """Platt per label over decided turns; the smoothed acceptable share of turns without criteria."""
    params = {}
    for label in (TurnLabel.FAILURE, TurnLabel.ACCEPTABLE):
        sel = [r for r in rows if r["label"] == label and not r["empty"]]
        a, b = fit_platt([r["margin"] for r in sel], [r["correct"] for r in sel], floor=UNDECIDED_CONFIDENCE)
        params[label] = (round(a, 3), round(b, 3))
    empty = [r["correct"] for r in rows if r["empty"]]
    return TurnConfidenceMap(name, empty=round((sum(empty) + 1) / (len(empty) + 2), 3),
                             failure=params[TurnLabel.FAILURE], acceptable=params[TurnLabel.ACCEPTABLE])


def confidence(cmap: TurnConfidenceMap, r: dict) -> float:
    return cmap.turn_confidence(r["label"], None if r["empty"] else r["margin"])


def ece(rows: list[dict], cmap: TurnConfidenceMap) -> float:
    return expected_calibration_error([r["correct"] for r in rows], [confidence(cmap, r) for r in rows])


def risk_area(rows: list[dict], cmap: TurnConfidenceMap) -> float:
    """AURC: the map changes the order across labels and against turns without criteria."""
    return aurc([r["gold"] for r in rows], [r["pred"] for r in rows], [confidence(cmap, r) for r in rows])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "sgd" / "dev"))
    ap.add_argument("--seeds", default="0,1,2,3,4,5,6,7")
    ap.add_argument("--n", type=int, default=240)
    args = ap.parse_args(argv)
    data = Path(args.data)
    if data.name == "test":
        print("error: the turn-confidence map is fitted on dev (or train), never on test", file=sys.stderr)
        return 2
    if not (data / "schema.json").is_file():
        print(f"error: no SGD split at {data} (schema.json missing)", file=sys.stderr)
        return 2
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    rows = turn_rows(data, seeds, args.n)
    fitted = fit_map(rows, "extracted evidence, offline S2 (Platt per label, dev)")
    plain = TurnConfidenceMap("uncalibrated", empty=fitted.empty)  # (1 + m) / 2: what the Platt maps add
    n_empty = sum(r["empty"] for r in rows)
    n_und = sum(r["label"] == TurnLabel.UNDECIDED for r in rows)
    print(f"split {data.name}, natural slices n={args.n}, seeds {args.seeds}, text-only: {len(rows)} turns "
          f"({n_empty} without criteria, {n_und} undecided)")
    print(f"EXTRACTED_OFFLINE = TurnConfidenceMap({fitted.name!r}, empty={fitted.empty},\n"
          f"    failure={fitted.failure}, acceptable={fitted.acceptable})")
    print(f"ECE in sample: (1 + m) / 2 with the fitted empty confidence: {ece(rows, plain):.4f}; "
          f"fitted: {ece(rows, fitted):.4f}; AURC {risk_area(rows, plain):.4f} -> {risk_area(rows, fitted):.4f}")
    half = len(seeds) // 2
    if half:
        a, b = set(seeds[:half]), set(seeds[half:])
        for fit_on, measure_on in ((a, b), (b, a)):
            fit_rows = [r for r in rows if r["seed"] in fit_on]
            held = [r for r in rows if r["seed"] in measure_on]
            half_map = fit_map(fit_rows, "half")
            half_plain = TurnConfidenceMap("uncalibrated", empty=half_map.empty)
            print(f"fitted on seeds {sorted(fit_on)}, measured on {sorted(measure_on)}: ECE "
                  f"{ece(held, half_plain):.4f} (uncalibrated) -> {ece(held, half_map):.4f}; AURC "
                  f"{risk_area(held, half_plain):.4f} -> {risk_area(held, half_map):.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
