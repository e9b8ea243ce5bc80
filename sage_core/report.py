"""``report``: the paper's comparison tables for one labelled slice, as Markdown and PNG plots.

Runs the SAGE configurations itself (so routing, latency and the S2 backend
are measured, not copied), reads every other evaluator from verdict files, and
writes: Table 1 (F1 with 95 % bootstrap CI, paired Delta-F1 vs the strongest
baseline, Holm-adjusted p), the per-tier ablation, routing anatomy, selective
evaluation, cost/latency, SGD-X robustness, plus ``report.json`` with every
number and two plots (cost-quality Pareto, risk-coverage).

Two settings. When the slice carries ``user_values`` / ``agent_acts``
annotations, Table 1 is computed on them; on an injected slice the injectors
and the evaluator follow the same written contract, so that row is a
consistency check. The report then adds Table 1b: the primary SAGE config
re-run on the same turns with the annotations stripped (text-only: the
compiler must extract the evidence), with the same columns and paired tests.
``--strip-annotations`` makes the whole report text-only instead.
"""
from __future__ import annotations

import dataclasses
import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .errors import ModelUnavailableError, SageInputError
from .selective import aurc, f1_at_coverage, selective_curve
from .statistics import bootstrap_cis, holm_bonferroni, paired_bootstrap, prf
from .types import Turn
from .verdict_io import EvaluatorVerdicts, from_turn_verdicts, read_evaluator_verdicts

CLASSES = ("IUV", "WNF", "PC", "UV")
COVERAGES = (1.0, 0.9, 0.8)
SAGE_CONFIGS = ("sage-core", "sage-llm", "no_s1", "no_s2")
ABLATION_ROWS = (("full", "sage-core"), ("no_S1", "no_s1"), ("no_S2", "no_s2"), ("no_S3", "sage-core"))


def _f(x: Optional[float], nd: int = 3) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def _ci(t: tuple[float, float, float]) -> str:
    return f"{t[0]:.3f} [{t[1]:.3f}, {t[2]:.3f}]"


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


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
    shares = {s: (stages.count(s) / n if n else 0.0) for s in ("S1", "S2", "S3", "none")}
    return {"criteria": n, "criteria_per_turn": n / len(ids) if ids else 0.0, "shares": shares,
            "paid_calls_per_turn": float(np.mean([ev.paid_calls.get(i, 0) for i in ids])) if ids else 0.0}


def selective_stats(turns, ev: EvaluatorVerdicts) -> Optional[dict]:
    ids = [t.turn_id for t in turns]
    conf = ev.confidences(ids)
    if conf is None:
        return None
    y = gold_vector(turns)
    p = np.array(ev.predicted(ids))
    return {"f1_at": {f"{int(c * 100)}": f1_at_coverage(y, p, conf, c) for c in COVERAGES},
            "aurc": aurc(y, p, conf),
            "undecided_rate": float(np.mean([ev.labels[i] == "undecided" for i in ids]))}


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


# --- Markdown ------------------------------------------------------------------------
def render(data: ReportData, sage_name: str, baseline_names: Sequence[str], slice_name: str = "") -> str:
    L = [f"# SAGE evaluation report{(' — ' + slice_name) if slice_name else ''}", "",
         f"{data.n} turns; F1 of the failure class with 95 % percentile bootstrap CIs; "
         f"undecided verdicts score as acceptable at full coverage.", ""]
    if data.s2_backend:
        L += [f"S2 backend that ran: **{data.s2_backend}**", ""]
    ev = data.evaluators
    pw = data.pairwise
    L += ["## Table 1: evaluator comparison", ""]
    rows = []
    for k in [sage_name] + [b for b in ev if b != sage_name]:
        e = ev[k]
        d = pw.get(k)
        rows.append([k, _ci((e["f1"], e["f1_lo"], e["f1_hi"])), _f(e["precision"]), _f(e["recall"]),
                     *[_f(e["per_class_recall"][c], 2) for c in CLASSES],
                     f"{d['delta']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]" if d else "—",
                     _p(d["p"]) if d else "—", _p(d["p_holm"]) if d else "—"])
    L += [_table(["evaluator", "F1 [95% CI]", "P", "R", *[f"R_{c}" for c in CLASSES],
                  f"ΔF1 ({sage_name} − row)", "p", "p (Holm)"], rows), ""]
    if data.paired:
        pr = data.paired
        shares = ", ".join(f"{k} {v:.0%}" for k, v in pr["selection_shares"].items())
        L += [f"**{sage_name} vs the strongest baseline** (re-selected inside each of {pr['n_resamples']} "
              f"resamples): ΔF1 = {pr['delta']:+.3f} [{pr['lo']:+.3f}, {pr['hi']:+.3f}], two-sided p = "
              f"{_p(pr['p'])}; strongest on the full slice: {pr['best_baseline']}; selected as strongest in: "
              f"{shares}.", ""]
    else:
        L += ["No baseline verdict files were given (--baselines), so there is no paired test.", ""]
    if data.annotations_stripped:
        L += ["Annotations stripped (--strip-annotations): every SAGE run saw the text and the states only, "
              "and the compiler extracted user values and agent acts itself (the text-only setting).", ""]
    elif data.text_only:
        L += _render_text_only(data, sage_name)
    if data.ablation:
        L += ["## Per-tier ablation", ""]
        rows = [[a["row"], a["config"], _ci((a["f1"], a["f1_lo"], a["f1_hi"])), _f(a["precision"]),
                 _f(a["recall"]), _f(a["undecided_rate"]),
                 "—" if a.get("delta") is None else f"{a['delta']:+.3f}",
                 "—" if a.get("delta") is None else f"{_p(a['p'])} / {_p(a['p_holm'])}", a.get("note", "")]
                for a in data.ablation]
        L += [_table(["tier", "config", "F1 [95% CI]", "P", "R", "undecided", "ΔF1 vs full", "p / p (Holm)",
                      "note"], rows), ""]
    if data.routing:
        L += ["## Routing anatomy", "", "Share of criteria whose final verdict came from each stage "
              "('none' = every stage abstained).", ""]
        rows = [[k, r["criteria"], _f(r["criteria_per_turn"], 2), *[f"{r['shares'][s]:.1%}" for s in
                                                                     ("S1", "S2", "S3", "none")],
                 _f(r["paid_calls_per_turn"], 3)] for k, r in data.routing.items()]
        L += [_table(["config", "criteria", "criteria/turn", "S1", "S2", "S3", "undecided", "paid calls/turn"],
                     rows), ""]
    L += ["## Selective evaluation", "", "Turns sorted by confidence (descending, ties in slice order); "
          "F1 on the kept share. Evaluators without confidence are left out.", ""]
    rows = [[k, *[_f(s["f1_at"][str(int(c * 100))]) for c in COVERAGES], _f(s["aurc"]), _f(s["undecided_rate"])]
            for k, s in data.selective.items()]
    L += [_table(["evaluator", "F1@100%", "F1@90%", "F1@80%", "AURC", "undecided"], rows) if rows
          else "No evaluator reported confidence.", ""]
    L += ["## Cost and latency", ""]
    rows = [[k, "—" if e["cost_per_1k"] is None else f"${e['cost_per_1k']:.4f}",
             _f(e["p50_latency_ms"], 1), _f(e["paid_calls_per_turn"], 3)] for k, e in ev.items()]
    L += [_table(["evaluator", "cost / 1k turns (USD)", "p50 latency (ms/turn)", "paid calls/turn"], rows), ""]
    if data.sgdx:
        s = data.sgdx
        L += ["## SGD-X robustness", "", f"{sage_name} re-run with the slice remapped to each variant schema "
              "(utterances unchanged).", ""]
        st = s.get("text_only")
        if st:
            L += [_table(["variant", "F1 (annotated)", "F1 (text-only)"],
                         [[v, _f(f), _f(st["f1"].get(v))] for v, f in s["f1"].items()]), ""]
        else:
            L += [_table(["variant", "F1"], [[v, _f(f)] for v, f in s["f1"].items()]), ""]
        L += [f"Mean F1 {_f(s['mean_f1'])}, σ {_f(s['sigma_f1'])} (population, over {len(s['f1'])} variants); "
              f"verdict invariant across all variants for {s['invariant_share']:.1%} of turns.", ""]
        if st:
            L += [f"Text-only (annotations stripped, so the compiler extracts evidence against the renamed "
                  f"slots and descriptions): mean F1 {_f(st['mean_f1'])}, σ {_f(st['sigma_f1'])}; verdict "
                  f"invariant across all variants for {st['invariant_share']:.1%} of turns.", ""]
    if data.notes:
        L += ["## Notes", ""] + [f"- {n}" for n in data.notes] + [""]
    return "\n".join(L)


def _render_text_only(data: ReportData, sage_name: str) -> list[str]:
    to = data.text_only
    ev, e = data.evaluators, to["stats"]
    L = ["## Table 1b: text-only setting (annotations stripped)", "",
         f"Table 1 scores {sage_name} with the slice's annotated `user_values` / `agent_acts`. On an injected "
         "slice the injectors and the evaluator follow the same written contract, so that row is a consistency "
         f"check. Here {sage_name} is re-run on the same turns without those annotations: the compiler extracts "
         "user values and agent acts from the text (a real extraction measurement). Baseline verdicts are the "
         "same as in Table 1.", ""]
    a = ev[sage_name]
    va = to["vs_annotated"]
    pw = to["pairwise"]
    rows = [[to["name"], _ci((e["f1"], e["f1_lo"], e["f1_hi"])), _f(e["precision"]), _f(e["recall"]),
             *[_f(e["per_class_recall"][c], 2) for c in CLASSES], "—", "—", "—"],
            [f"{sage_name} (annotated)", _ci((a["f1"], a["f1_lo"], a["f1_hi"])), _f(a["precision"]),
             _f(a["recall"]), *[_f(a["per_class_recall"][c], 2) for c in CLASSES],
             f"{va['delta']:+.3f} [{va['lo']:+.3f}, {va['hi']:+.3f}]", _p(va["p"]), "n/a"]]
    for k in pw:
        b, d = ev[k], pw[k]
        rows.append([k, _ci((b["f1"], b["f1_lo"], b["f1_hi"])), _f(b["precision"]), _f(b["recall"]),
                     *[_f(b["per_class_recall"][c], 2) for c in CLASSES],
                     f"{d['delta']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]", _p(d["p"]), _p(d["p_holm"])])
    L += [_table(["evaluator", "F1 [95% CI]", "P", "R", *[f"R_{c}" for c in CLASSES],
                  f"ΔF1 ({to['name']} − row)", "p", "p (Holm)"], rows), ""]
    r = to["routing"]
    line = (f"{to['changed_verdicts']} of {data.n} turn verdicts differ from the annotated run; text-only routing: "
            f"{r['criteria']} criteria ({r['criteria_per_turn']:.2f}/turn), "
            + ", ".join(f"{s} {r['shares'][s]:.1%}" for s in ("S1", "S2", "S3", "none"))
            + f"; undecided turns {e['undecided_rate']:.1%}.")
    sel = to.get("selective")
    if sel:
        line += " F1@" + ", F1@".join(f"{c}% {_f(v)}" for c, v in sel["f1_at"].items()) + "."
    L += [line + " Holm adjusts over the baselines (as in Table 1); the annotated comparison is outside that family.",
          ""]
    if to["paired"]:
        pr = to["paired"]
        L += [f"**{to['name']} vs the strongest baseline** (re-selected inside each resample): "
              f"ΔF1 = {pr['delta']:+.3f} [{pr['lo']:+.3f}, {pr['hi']:+.3f}], two-sided p = {_p(pr['p'])}; "
              f"strongest on the full slice: {pr['best_baseline']}.", ""]
    return L


# --- plots -----------------------------------------------------------------------------
def pareto_front(points: dict[str, tuple[float, float]]) -> list[str]:
    """Names not dominated in (lower cost, higher F1)."""
    out = []
    for k, (c, f) in points.items():
        if not any((c2 <= c and f2 >= f) and (c2 < c or f2 > f) for k2, (c2, f2) in points.items() if k2 != k):
            out.append(k)
    return sorted(out, key=lambda k: points[k][0])


def plot_pareto(data: ReportData, path: Path) -> Optional[Path]:
    pts = {k: (e["cost_per_1k"], e["f1"]) for k, e in data.evaluators.items() if e["cost_per_1k"] is not None}
    if not pts:
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    front = pareto_front(pts)
    floor = min([c for c, _ in pts.values() if c > 0] or [1e-4]) / 10
    fig, ax = plt.subplots(figsize=(6, 4))
    for k, (c, f) in pts.items():
        e = data.evaluators[k]
        ax.errorbar(max(c, floor), f, yerr=[[f - e["f1_lo"]], [e["f1_hi"] - f]], fmt="o" if k in front else "s",
                    capsize=3, label=k)
    fx = [max(pts[k][0], floor) for k in front]
    ax.plot(fx, [pts[k][1] for k in front], "k--", lw=1, label="Pareto front")
    ax.set_xscale("log")
    ax.set_xlabel(f"cost per 1k turns (USD, log; free evaluators drawn at {floor:.0e})")
    ax.set_ylabel("F1 (95% CI)")
    ax.set_title("Cost-quality")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_risk_coverage(turns, evs: dict[str, EvaluatorVerdicts], path: Path) -> Optional[Path]:
    ids = [t.turn_id for t in turns]
    y = gold_vector(turns)
    curves = {}
    for k, ev in evs.items():
        conf = ev.confidences(ids)
        if conf is not None:
            curves[k] = selective_curve(y, ev.predicted(ids), conf)
    if not curves:
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for k, rows in curves.items():
        ax.plot([r.coverage for r in rows], [r.error_rate for r in rows], label=k)
    ax.set_xlabel("coverage (share of most confident turns kept)")
    ax.set_ylabel("error rate on kept turns")
    ax.set_title("Risk-coverage")
    ax.set_xlim(0, 1)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


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


def write_outputs(data: ReportData, markdown: str, turns, evs: dict[str, EvaluatorVerdicts],
                  out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    pareto = plot_pareto(data, out_dir / "pareto.png")
    rc = plot_risk_coverage(turns, evs, out_dir / "risk_coverage.png")
    plots = [p for p in (pareto, rc) if p]
    if plots:
        markdown += "\n## Plots\n\n" + "\n".join(f"![{p.stem}]({p.name})" for p in plots) + "\n"
    (out_dir / "report.md").write_text(markdown, encoding="utf-8")
    (out_dir / "report.json").write_text(json.dumps(asdict(data), indent=1, default=str), encoding="utf-8")
    written += [out_dir / "report.md", out_dir / "report.json"] + plots
    return written


def run_sage(turns, registry, config: str, s2_backend: str, progress: Optional[Callable] = None):
    """Run one SAGE config; returns (TurnVerdicts, backend name, wall seconds)."""
    from .cascade import CascadeConfig, Evaluator
    ev = Evaluator(registry, CascadeConfig.named(config, s2_backend=s2_backend))
    t0 = time.perf_counter()
    vs = ev.evaluate(turns, progress=progress)
    return vs, ev.s2_backend_name, time.perf_counter() - t0


def sgdx_variants(sgdx_dir: str) -> list[Path]:
    root = Path(sgdx_dir)
    found = sorted(p for p in root.glob("v*/schema.json"))
    if not found:
        raise SageInputError("no SGD-X variant schemas (v*/schema.json) in this folder", file=str(root))
    return found


def add_arguments(p) -> None:
    p.add_argument("--slice", required=True, help="labelled slice JSONL (gold on every turn)")
    p.add_argument("--schema", required=True, help="schema.json or workflow spec the slice uses")
    p.add_argument("--baselines", nargs="*", default=[], help="evaluator verdict files (JSONL/CSV)")
    p.add_argument("--configs", default="sage-core,no_s1,no_s2",
                   help="SAGE configs to run (sage-core first; sage-llm is added when an LLM endpoint is set)")
    p.add_argument("--s2-backend", default=None, help="offline | nli (default: SAGE_S2_BACKEND)")
    p.add_argument("--sgdx-dir", default=None, help="folder with SGD-X v1..v5/schema.json")
    p.add_argument("--n-resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cluster-by-dialogue", action="store_true", help="bootstrap whole dialogues")
    p.add_argument("--strip-annotations", action="store_true",
                   help="drop user_values/agent_acts from every turn: the whole report is text-only")
    p.add_argument("--no-text-only", action="store_true",
                   help="skip Table 1b (the primary config re-run without annotations)")
    p.add_argument("--out-dir", default=None, help="write report.md, report.json, PNG plots and SAGE verdicts here")


def run(args) -> int:
    from .settings import get_settings
    from .slice_io import read_slice, validate_against
    from .workflow import load_workflows

    settings = get_settings()
    backend = args.s2_backend or settings.s2_backend
    try:  # accepts ABCD ontologies too (ABCD-UV slices)
        from .loaders import load_registry_for_slice
        registry = load_registry_for_slice(args.schema)
    except ImportError:
        registry = load_workflows(args.schema)
    turns = read_slice(args.slice)
    validate_against(turns, registry, args.slice)
    gold_vector(turns)
    strip = bool(getattr(args, "strip_annotations", False))
    annotated = has_annotations(turns)
    if strip:
        turns = strip_annotations(turns)
    want_text_only = annotated and not strip and not getattr(args, "no_text_only", False)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in configs if c not in SAGE_CONFIGS]
    if unknown or not configs:
        raise SageInputError(f"unknown config(s) {', '.join(unknown) or '(none)'}; use {', '.join(SAGE_CONFIGS)}",
                             field="configs")
    notes = []
    if strip and annotated:
        notes.append("--strip-annotations: user_values/agent_acts removed before every SAGE run.")
    elif not annotated:
        notes.append("The slice carries no user_values/agent_acts annotations: every run is already text-only.")
    # an endpoint counts as configured with a key, or with a non-default (e.g. local) base URL
    llm_configured = bool(settings.llm_api_key) or "api.openai.com" not in settings.llm_base_url
    if llm_configured and "sage-llm" not in configs:
        configs.append("sage-llm")
    elif not llm_configured and "sage-llm" in configs:
        configs.remove("sage-llm")
        notes.append("sage-llm skipped: no LLM endpoint configured (SAGE_LLM_API_KEY).")
    primary = configs[0]
    # read every input before the (slow) SAGE runs, so a bad file fails fast
    baselines = {}
    ids = {t.turn_id for t in turns}
    for path in args.baselines:
        ev = read_evaluator_verdicts(path)
        missing = sorted(ids - set(ev.labels))
        if missing:
            raise SageInputError(f"no verdict for {len(missing)} slice turns (first: '{missing[0]}')",
                                 file=path, field="turn_id")
        if ev.name in baselines or ev.name in configs:
            raise SageInputError(f"evaluator name '{ev.name}' is used twice", file=path, field="evaluator")
        baselines[ev.name] = ev
    variants = {}  # SGD-X: remap up front so a schema mismatch fails before any evaluation
    if args.sgdx_dir:
        from .loaders.sgd import remap_turns, sgdx_slot_map
        from .workflow import load_sgd_schema
        for schema_path in sgdx_variants(args.sgdx_dir):
            vreg = load_sgd_schema(schema_path)
            vturns = remap_turns(turns, sgdx_slot_map(registry, vreg), vreg)
            variants[schema_path.parent.name] = (vreg, strip_annotations(vturns) if strip else vturns)
    sage, verdicts, backend_name = {}, {}, None
    for cfg in configs:
        try:
            vs, bname, secs = run_sage(turns, registry, cfg, backend)
        except ModelUnavailableError as e:
            if cfg == primary:
                raise
            notes.append(f"{cfg} skipped: {e}")
            continue
        verdicts[cfg] = vs
        sage[cfg] = from_turn_verdicts(cfg, vs)
        backend_name = backend_name or bname
        notes.append(f"{cfg}: {len(turns)} turns in {secs:.2f} s ({1000 * secs / len(turns):.1f} ms/turn"
                     + (", includes model loading)." if len(sage) == 1 else ")."))
    text_only = None
    if want_text_only:
        vs, _, secs = run_sage(strip_annotations(turns), registry, primary, backend)
        name = primary + TEXT_ONLY_SUFFIX
        verdicts[primary + "_text-only"] = vs
        text_only = dataclasses.replace(from_turn_verdicts(primary, vs), name=name)
        notes.append(f"{name}: {len(turns)} turns in {secs:.2f} s ({1000 * secs / len(turns):.1f} ms/turn).")
    sgdx, sgdx_text = None, None
    if variants:
        sgdx, sgdx_text = {}, ({} if text_only is not None else None)
        for name, (vreg, vturns) in variants.items():
            vs, _, _ = run_sage(vturns, vreg, primary, backend)
            sgdx[name] = from_turn_verdicts(primary, vs)
            if sgdx_text is not None:
                vs, _, _ = run_sage(strip_annotations(vturns), vreg, primary, backend)
                sgdx_text[name] = from_turn_verdicts(primary, vs)
    data = build_report(turns, sage, baselines, primary=primary, sgdx=sgdx, s2_backend=backend_name,
                        n_resamples=args.n_resamples, seed=args.seed,
                        cluster_by_dialogue=args.cluster_by_dialogue, notes=notes, text_only=text_only,
                        annotations_stripped=strip, sgdx_text_only=sgdx_text)
    md = render(data, primary, list(baselines), Path(args.slice).name)
    print(md)
    if args.out_dir:
        out = Path(args.out_dir)
        files = write_outputs(data, md, turns, {**{k: v for k, v in sage.items()}, **baselines}, out)
        for cfg, vs in verdicts.items():
            p = out / f"verdicts_{cfg}.jsonl"
            with open(p, "w", encoding="utf-8", newline="\n") as fh:
                for v in vs:
                    fh.write(json.dumps(v.to_dict()) + "\n")
            files.append(p)
        print("wrote " + ", ".join(str(f) for f in files))
    return 0


__all__ = ["build_report", "render", "write_outputs", "ReportData", "pareto_front", "per_class_recall",
           "routing_stats", "sgdx_stats", "text_only_section", "has_annotations", "strip_annotations",
           "add_arguments", "run"]
