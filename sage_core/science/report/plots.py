"""The report's two PNG plots (cost-quality Pareto front, risk-coverage), matplotlib only."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from sage_core.data.verdict_io import EvaluatorVerdicts
from sage_core.science.report.compute import ReportData, gold_vector, pareto_front
from sage_core.science.calibration import ReliabilityBin, plot_reliability
from sage_core.science.selective import selective_curve


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


def plot_reliabilities(data: ReportData, out_dir: Path) -> list[Path]:
    """One reliability diagram per evaluator with confidence (``reliability_<name>.png``)."""
    out = []
    sels = dict(data.selective)
    if data.text_only and data.text_only.get("selective"):
        sels[data.text_only["name"]] = data.text_only["selective"]
    for name, sel in sels.items():
        bins = [ReliabilityBin(**b) for b in sel.get("reliability") or []]
        if bins:
            safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
            out.append(plot_reliability(bins, out_dir / f"reliability_{safe}.png", title=f"{name}: turn confidence",
                                        ece=sel.get("ece")))
    return out
