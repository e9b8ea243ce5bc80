"""The numbers behind the report: per-evaluator statistics, paired tests, routing, selective
evaluation, text-only and SGD-X sections, gathered into one ``ReportData``."""
from __future__ import annotations

import dataclasses
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from sage_core.data.errors import SageInputError
from sage_core.data.types import ROUTING_STAGES, Turn
from sage_core.data.verdict_io import EvaluatorVerdicts
from sage_core.science.calibration import expected_calibration_error, reliability_bins, verdict_correctness
from sage_core.science.selective import aurc, f1_at_coverage
from sage_core.science.statistics import (
    bootstrap_cis,
    holm_bonferroni,
    paired_bootstrap,
    prf,
)

CLASSES = ("IUV", "WNF", "PC", "UV")
COVERAGES = (1.0, 0.9, 0.8)
SAGE_CONFIGS = ("sage-core", "sage-llm", "no_s1", "no_s2")
ABLATION_ROWS = (("full", "sage-core"), ("no_S1", "no_s1"), ("no_S2", "no_s2"), ("no_S3", "sage-core"))


def gold_vector(turns: Sequence[Turn]) -> np.ndarray:
    missing = [t.turn_id for t in turns if t.gold is None]
    if missing:
        raise SageInputError(f"{len(missing)} turns have no gold label (first: '{missing[0]}'); "
                             "the report needs a labelled slice", field="gold")
    return np.array([1 if t.gold.label == "failure" else 0 for t in turns])


def per_class_recall(turns: Sequence[Turn], pred: Sequence[int]) -> dict[str, Optional[float]]:
    """Recall of each gold failure class (a failure turn counts as found if predicted failure)."""
    out = {}
    for c in CLASSES:
        idx = [i for i, t in enumerate(turns) if t.gold and t.gold.label == "failure" and t.gold.failure_class == c]
        out[c] = float(np.mean([pred[i] for i in idx])) if idx else None
    return out


@dataclass
class ReportData:
    """Every number in the Markdown, for report.json and tests."""

    n: int
    evaluators: dict[str, dict] = field(default_factory=dict)
    paired: Optional[dict] = None
    pairwise: dict[str, dict] = field(default_factory=dict)
    ablation: list[dict] = field(default_factory=list)
    routing: dict[str, dict] = field(default_factory=dict)
    selective: dict[str, dict] = field(default_factory=dict)
    sgdx: Optional[dict] = None
    text_only: Optional[dict] = None
    annotations_stripped: bool = False
    s2_backend: Optional[str] = None
    notes: list[str] = field(default_factory=list)


# --- annotations -------------------------------------------------------------------
def has_annotations(turns: Sequence[Turn]) -> bool:
    """Does any turn carry annotated user values or agent acts (so a text-only run differs)?"""
    return any(t.user_values is not None or t.agent_acts is not None for t in turns)


def strip_annotations(turns: Sequence[Turn]) -> list[Turn]:
    """Copies without ``user_values`` / ``agent_acts``: the compiler must extract evidence from text."""
    return [dataclasses.replace(t, user_values=None, agent_acts=None) for t in turns]


TEXT_ONLY_SUFFIX = " (text-only)"


# --- sections ---------------------------------------------------------------------
def evaluator_stats(turns, evs: dict[str, EvaluatorVerdicts], n_resamples: int, seed: int,
                    clusters=None) -> dict[str, dict]:
    ids = [t.turn_id for t in turns]
    y = gold_vector(turns)
    preds = {k: np.array(ev.predicted(ids)) for k, ev in evs.items()}
    cis = bootstrap_cis(y, preds, n_resamples=n_resamples, seed=seed, clusters=clusters)
    out = {}
    for k, ev in evs.items():
        m = prf(y, preds[k])
        lat = [ev.latency_ms[i] for i in ids if i in ev.latency_ms]
        cost = [ev.cost_usd[i] for i in ids if i in ev.cost_usd]
        calls = [ev.paid_calls[i] for i in ids if i in ev.paid_calls]
        out[k] = {"f1": cis[k][0], "f1_lo": cis[k][1], "f1_hi": cis[k][2], "precision": m["precision"],
                  "recall": m["recall"], "tp": m["tp"], "fp": m["fp"], "fn": m["fn"],
                  "per_class_recall": per_class_recall(turns, preds[k]),
                  "undecided_rate": float(np.mean([ev.labels[i] == "undecided" for i in ids])),
                  "cost_per_1k": (1000 * sum(cost) / len(ids)) if len(cost) == len(ids) else None,
                  "p50_latency_ms": float(np.median(lat)) if lat else None,
                  "paid_calls_per_turn": float(np.mean(calls)) if len(calls) == len(ids) else None}
    return out


def paired_section(turns, sage: EvaluatorVerdicts, baselines: dict[str, EvaluatorVerdicts], n_resamples: int,
                   seed: int, clusters=None) -> tuple[Optional[dict], dict[str, dict]]:
    """SAGE vs the strongest baseline (re-selected per resample) and vs each baseline, Holm-adjusted."""
    if not baselines:
        return None, {}
    ids = [t.turn_id for t in turns]
    y = gold_vector(turns)
    ps = np.array(sage.predicted(ids))
    bp = {k: np.array(b.predicted(ids)) for k, b in baselines.items()}
    best = paired_bootstrap(y, ps, bp, n_resamples=n_resamples, seed=seed, clusters=clusters)
    pair = {k: paired_bootstrap(y, ps, {k: v}, n_resamples=n_resamples, seed=seed, clusters=clusters)
            for k, v in bp.items()}
    adj = holm_bonferroni([pair[k].p for k in bp])
    pairwise = {k: {"delta": pair[k].delta, "lo": pair[k].lo, "hi": pair[k].hi, "p": pair[k].p, "p_holm": a}
                for k, a in zip(bp, adj)}
    return asdict(best), pairwise


def routing_stats(ev: EvaluatorVerdicts, ids: Sequence[str]) -> dict:
    """Where criteria were decided (S1/S2/S3, or undecided) and what that cost."""
    stages = [s for i in ids for s in ev.stages.get(i, [])]
    n = len(stages)
    shares = {s: (stages.count(s) / n if n else 0.0) for s in ROUTING_STAGES}
    return {"criteria": n, "criteria_per_turn": n / len(ids) if ids else 0.0, "shares": shares,
            "paid_calls_per_turn": float(np.mean([ev.paid_calls.get(i, 0) for i in ids])) if ids else 0.0}


def selective_stats(turns, ev: EvaluatorVerdicts) -> Optional[dict]:
    ids = [t.turn_id for t in turns]
    conf = ev.confidences(ids)
    if conf is None:
        return None
    y = gold_vector(turns)
    p = np.array(ev.predicted(ids))
    ok = verdict_correctness(y, p)
    conf01 = np.clip(np.asarray(conf, dtype=float), 0.0, 1.0)
    return {"f1_at": {f"{int(c * 100)}": f1_at_coverage(y, p, conf, c) for c in COVERAGES},
            "aurc": aurc(y, p, conf),
            "undecided_rate": float(np.mean([ev.labels[i] == "undecided" for i in ids])),
            "ece": expected_calibration_error(ok, conf01),
            "reliability": [asdict(b) for b in reliability_bins(ok, conf01)]}


def text_only_section(turns, annotated: EvaluatorVerdicts, text_only: EvaluatorVerdicts,
                      baselines: dict[str, EvaluatorVerdicts], n_resamples: int, seed: int,
                      clusters=None) -> dict:
    """Table 1 for the text-only run: its row, paired tests vs the baselines (Holm) and vs the annotated run."""
    ids = [t.turn_id for t in turns]
    y = gold_vector(turns)
    name = text_only.name
    stats = evaluator_stats(turns, {name: text_only}, n_resamples, seed, clusters)[name]
    paired, pairwise = paired_section(turns, text_only, baselines, n_resamples, seed, clusters)
    pt = np.array(text_only.predicted(ids))
    pa = np.array(annotated.predicted(ids))
    vs_ann = paired_bootstrap(y, pt, {annotated.name: pa}, n_resamples=n_resamples, seed=seed, clusters=clusters)
    return {"name": name, "annotated_name": annotated.name, "stats": stats, "paired": paired,
            "pairwise": pairwise,
            "vs_annotated": {"delta": vs_ann.delta, "lo": vs_ann.lo, "hi": vs_ann.hi, "p": vs_ann.p},
            "changed_verdicts": int(sum(text_only.labels[i] != annotated.labels[i] for i in ids)),
            "routing": routing_stats(text_only, ids), "selective": selective_stats(turns, text_only)}


def sgdx_stats(per_variant: dict[str, EvaluatorVerdicts], turns) -> dict:
    """Mean/sigma of F1 over SGD-X variants and the share of turns judged alike in all of them."""
    ids = [t.turn_id for t in turns]
    y = gold_vector(turns)
    f1 = {v: prf(y, np.array(ev.predicted(ids)))["f1"] for v, ev in per_variant.items()}
    labels = np.array([[ev.labels[i] for i in ids] for ev in per_variant.values()])
    invariant = float(np.mean((labels == labels[0]).all(axis=0))) if len(per_variant) else 0.0
    vals = np.array(list(f1.values()))
    return {"f1": f1, "mean_f1": float(vals.mean()) if len(vals) else None,
            "sigma_f1": float(vals.std(ddof=0)) if len(vals) else None, "invariant_share": invariant,
            "variants": list(per_variant)}


# --- plots -----------------------------------------------------------------------------
def pareto_front(points: dict[str, tuple[float, float]]) -> list[str]:
    """Names not dominated in (lower cost, higher F1)."""
    out = []
    for k, (c, f) in points.items():
        if not any((c2 <= c and f2 >= f) and (c2 < c or f2 > f) for k2, (c2, f2) in points.items() if k2 != k):
            out.append(k)
    return sorted(out, key=lambda k: points[k][0])


# --- driver --------------------------------------------------------------------------
def build_report(turns: Sequence[Turn], sage: dict[str, EvaluatorVerdicts],
                 baselines: dict[str, EvaluatorVerdicts], *, primary: str = "sage-core",
                 sgdx: Optional[dict[str, EvaluatorVerdicts]] = None, s2_backend: Optional[str] = None,
                 n_resamples: int = 10_000, seed: int = 0, cluster_by_dialogue: bool = False,
                 notes: Sequence[str] = (), text_only: Optional[EvaluatorVerdicts] = None,
                 annotations_stripped: bool = False,
                 sgdx_text_only: Optional[dict[str, EvaluatorVerdicts]] = None) -> ReportData:
    """All sections from verdicts already computed (the CLI runs SAGE, tests pass verdicts).

    ``text_only``: the primary config's verdicts on the same turns without annotations (Table 1b);
    ``sgdx_text_only``: the same per SGD-X variant (a second F1 column in the SGD-X section).
    """
    if primary not in sage:
        raise SageInputError(f"the primary SAGE config '{primary}' was not run", field="configs")
    clash = set(sage) & set(baselines)
    if clash:
        raise SageInputError(f"baseline name(s) {', '.join(sorted(clash))} clash with SAGE configs; "
                             "set a distinct 'evaluator' field", field="evaluator")
    ids = [t.turn_id for t in turns]
    clusters = np.array([t.dialogue_id for t in turns]) if cluster_by_dialogue else None
    data = ReportData(n=len(turns), s2_backend=s2_backend, notes=list(notes),
                      annotations_stripped=annotations_stripped)
    table_evs = {primary: sage[primary], **{k: v for k, v in sage.items() if k == "sage-llm"}, **baselines}
    data.evaluators = evaluator_stats(turns, table_evs, n_resamples, seed, clusters)
    data.paired, data.pairwise = paired_section(turns, sage[primary], baselines, n_resamples, seed, clusters)
    # per-tier ablation: every SAGE config vs full
    abl_stats = evaluator_stats(turns, sage, n_resamples, seed, clusters)
    y = gold_vector(turns)
    full = np.array(sage[primary].predicted(ids))
    rows = list(ABLATION_ROWS) + ([("full + S3", "sage-llm")] if "sage-llm" in sage else [])
    for row, cfg in rows:
        if cfg not in sage:
            continue
        a = dict(abl_stats[cfg], row=row, config=cfg)
        if row == "no_S3":
            a["note"] = "S3 is off in sage-core, so no_S3 = full"
        if cfg != primary:
            pr = paired_bootstrap(y, np.array(sage[cfg].predicted(ids)), {primary: full},
                                  n_resamples=n_resamples, seed=seed, clusters=clusters)
            a["delta"], a["p"] = pr.delta, pr.p
        data.ablation.append(a)
    tested = [a for a in data.ablation if "p" in a]
    for a, adj in zip(tested, holm_bonferroni([a["p"] for a in tested])):
        a["p_holm"] = adj
    data.routing = {k: routing_stats(v, ids) for k, v in sage.items()}
    for k, ev in table_evs.items():
        s = selective_stats(turns, ev)
        if s is not None:
            data.selective[k] = s
    if sgdx:
        data.sgdx = sgdx_stats(sgdx, turns)
        if sgdx_text_only:
            data.sgdx["text_only"] = sgdx_stats(sgdx_text_only, turns)
    if text_only is not None:
        if text_only.name in table_evs or text_only.name in baselines:
            text_only = dataclasses.replace(text_only, name=primary + TEXT_ONLY_SUFFIX)
        data.text_only = text_only_section(turns, sage[primary], text_only, baselines, n_resamples, seed,
                                           clusters)
    if cluster_by_dialogue:
        data.notes.append("CIs and paired tests resample whole dialogues (cluster bootstrap).")
    return data


def run_sage(turns, registry, config: str, s2_backend: str, progress: Optional[Callable] = None,
             settings: Any = None):
    """Run one SAGE config; returns (TurnVerdicts, backend name, wall seconds).

    ``settings`` (a ``Settings`` the entry point read) supplies tau, the floor, models and the S3 endpoint;
    without it the documented defaults apply and sage-llm needs no endpoint only if nothing abstains.
    """
    from sage_core.evaluator.cascade import CascadeConfig, Evaluator
    if settings is None:
        ev = Evaluator(registry, CascadeConfig.named(config, s2_backend=s2_backend))
    else:
        ev = Evaluator.from_settings(registry, CascadeConfig.from_settings(config, settings, s2_backend=s2_backend),
                                     settings)
    t0 = time.perf_counter()
    vs = ev.evaluate(turns, progress=progress)
    return vs, ev.s2_backend_name, time.perf_counter() - t0


def sgdx_variants(sgdx_dir: str) -> list[Path]:
    root = Path(sgdx_dir)
    found = sorted(p for p in root.glob("v*/schema.json"))
    if not found:
        raise SageInputError("no SGD-X variant schemas (v*/schema.json) in this folder", file=str(root))
    return found
