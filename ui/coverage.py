"""Risk-coverage data for the chart: curve rows, F1 at fixed coverage, declined turns.

The curve itself is ``sage_core.science.selective.selective_curve`` (turn confidence,
stable sort, undecided = 0); this module only lines SAGE runs up with gold
and lists which turns a given coverage declines, in the same order.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pandas as pd

from sage_core import aurc, f1_at_coverage, kept_count, selective_curve

from .loading import LoadedSlice
from .runs import RunResult, outcome

METRICS = {"F1": "f1", "precision": "precision", "error rate": "error_rate", "recall": "recall"}


def gold_arrays(ls: LoadedSlice, res: RunResult):
    """(turn ids, y_true, y_pred, confidence) over turns that have gold and a verdict."""
    ids, yt, yp, conf = [], [], [], []
    for t in ls.turns:
        v = res.by_id.get(t.turn_id)
        if t.gold is None or v is None:
            continue
        ids.append(t.turn_id)
        yt.append(1 if t.gold.label == "failure" else 0)
        yp.append(1 if v.predicted_failure else 0)
        conf.append(float(v.confidence))
    return ids, np.array(yt, int), np.array(yp, int), np.array(conf, float)


def curve_frame(ls: LoadedSlice, results: list[RunResult], metrics: list[str]) -> pd.DataFrame:
    """Long format: one row per (configuration, coverage point, metric)."""
    rows = []
    for res in results:
        ids, yt, yp, conf = gold_arrays(ls, res)
        for r in selective_curve(yt, yp, conf):
            for m in metrics:
                rows.append({"configuration": res.key, "coverage": round(r.coverage, 6), "metric": m,
                             "value": getattr(r, METRICS[m]), "n_kept": r.n_kept})
    return pd.DataFrame(rows, columns=["configuration", "coverage", "metric", "value", "n_kept"])


MAX_DISPLAY_POINTS = 300  # per configuration and metric: a 10k-turn curve has 10k points


def downsample(df: pd.DataFrame, max_points: int = MAX_DISPLAY_POINTS) -> pd.DataFrame:
    """Fewer points of the same curves, for display only: every value shown is an exact curve point.

    Kept per (configuration, metric): evenly spaced points, the first and last, and both ends
    of every run of undefined values (so gaps stay gaps). Tables and F1@coverage use the full curve.
    """
    if df.empty:
        return df
    keep = []
    for _, g in df.groupby(["configuration", "metric"], sort=False):
        n = len(g)
        if n <= max_points:
            keep.append(g)
            continue
        idx = set(np.linspace(0, n - 1, max_points).round().astype(int).tolist())
        nan = g["value"].isna().to_numpy()
        edges = np.flatnonzero(nan[1:] != nan[:-1])
        idx.update(edges.tolist())
        idx.update((edges + 1).tolist())
        keep.append(g.iloc[sorted(idx)])
    return pd.concat(keep)


def identical_curves(ls: LoadedSlice, results: list[RunResult]) -> list[list[str]]:
    """Groups of configurations whose curves coincide (same predictions and confidences on the gold turns)."""
    groups: dict[bytes, list[str]] = {}
    for res in results:
        ids, yt, yp, conf = gold_arrays(ls, res)
        groups.setdefault(yp.tobytes() + np.round(conf, 9).tobytes(), []).append(res.key)
    return [g for g in groups.values() if len(g) > 1]


def summary(ls: LoadedSlice, res: RunResult) -> dict[str, Any]:
    ids, yt, yp, conf = gold_arrays(ls, res)
    n = len(ids)
    undecided = sum(1 for v in res.verdicts if v.label.value == "undecided")
    row = {"configuration": res.key, "S2 backend that ran": res.backend_ran, "turns with gold": n,
           "undecided rate": undecided / max(len(res.verdicts), 1)}
    for c in (1.0, 0.9, 0.8):
        row[f"F1@{int(c * 100)}%"] = f1_at_coverage(yt, yp, conf, c) if n else float("nan")
    row["AURC (error)"] = aurc(yt, yp, conf) if n else float("nan")
    return row


def declined(ls: LoadedSlice, res: RunResult, coverage: float, link=None) -> pd.DataFrame:
    """Turns left out when only the most confident ``coverage`` share is kept.

    ``link(turn_id)``: the Inspector URL (default ``Inspector?turn=<id>``).
    """
    link = link or (lambda tid: f"Inspector?turn={tid}")
    ids, yt, yp, conf = gold_arrays(ls, res)
    cols = ["turn_id", "verdict", "confidence", "gold", "outcome", "link"]
    if not ids:
        return pd.DataFrame(columns=cols)
    order = np.argsort(-conf, kind="stable")  # selective_curve's order
    k = kept_count(len(ids), coverage)
    rows = []
    for i in order[k:]:
        tid = ids[i]
        v = res.by_id[tid]
        gold = ls.by_id[tid].gold.label
        rows.append({"turn_id": tid, "verdict": v.label.value, "confidence": round(float(v.confidence), 3),
                     "gold": gold, "outcome": outcome(v, gold), "link": link(tid)})
    return pd.DataFrame(rows, columns=cols)


def picked_point(selection: Any, param: str = "pick") -> Optional[tuple[str, float]]:
    """(configuration, coverage) of the clicked point in an ``st.altair_chart`` selection state."""
    try:
        sel = selection["selection"][param]
    except (KeyError, TypeError):
        return None
    if isinstance(sel, list):
        sel = sel[0] if sel else None
    if not sel or "coverage" not in sel or "configuration" not in sel:
        return None
    cov, cfg = sel["coverage"], sel["configuration"]
    cov = cov[0] if isinstance(cov, list) else cov
    cfg = cfg[0] if isinstance(cfg, list) else cfg
    return str(cfg), float(cov)
