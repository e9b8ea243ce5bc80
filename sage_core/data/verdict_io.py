"""Read any evaluator's per-turn verdicts (SAGE, LLM baselines, imported files) into one shape.

The report compares evaluators turn by turn, so every source is reduced to
``EvaluatorVerdicts``: label per turn id plus optional confidence, classes,
cost, latency and paid calls. Bad rows raise ``SageInputError`` naming the
file, the line and the field.
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from sage_core.data.errors import SageInputError
from sage_core.data.limits import MAX_VERDICT_FILE_BYTES, read_text_document
from sage_core.data.slice_io import iter_jsonl

LABELS = ("failure", "acceptable", "undecided")
CLASSES = ("IUV", "WNF", "PC", "UV")


@dataclass
class EvaluatorVerdicts:
    """One evaluator's verdicts on a slice, keyed by turn id."""

    name: str
    labels: dict[str, str]
    confidence: Optional[dict[str, float]] = None  # None when the evaluator gives none
    classes: dict[str, list[str]] = field(default_factory=dict)
    cost_usd: dict[str, float] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    paid_calls: dict[str, int] = field(default_factory=dict)
    stages: dict[str, list[str]] = field(default_factory=dict)  # SAGE only: final stage per criterion
    s2_backend: Optional[str] = None
    source: str = ""

    def __len__(self) -> int:
        return len(self.labels)

    def predicted(self, turn_ids: Iterable[str]) -> list[int]:
        """1 = failure; undecided scores as acceptable (full coverage). Missing ids raise."""
        out = []
        for tid in turn_ids:
            if tid not in self.labels:
                raise SageInputError(f"evaluator '{self.name}' has no verdict for turn '{tid}'",
                                     file=self.source or None, field="turn_id")
            out.append(1 if self.labels[tid] == "failure" else 0)
        return out

    def confidences(self, turn_ids: Iterable[str]) -> Optional[list[float]]:
        if self.confidence is None:
            return None
        return [0.0 if self.labels.get(t) == "undecided" else self.confidence.get(t, 0.0) for t in turn_ids]

    def total_cost(self) -> float:
        return float(sum(self.cost_usd.values()))


def _num(row: dict, key: str, file: str, line: int, kind=float, lo: float = 0.0,
         hi: float = math.inf) -> Optional[float]:
    v = row.get(key)
    if v is None or (isinstance(v, str) and v.strip() == ""):
        return None
    if isinstance(v, bool):
        raise SageInputError(f"must be a number, got {v!r}", file=file, line=line, field=key)
    try:
        x = kind(float(v)) if kind is int else float(v)
    except (TypeError, ValueError):
        raise SageInputError(f"must be a number, got {v!r}", file=file, line=line, field=key) from None
    if kind is int and float(v) != int(float(v)):
        raise SageInputError(f"must be a whole number, got {v!r}", file=file, line=line, field=key)
    if not (lo <= x <= hi) or (isinstance(x, float) and math.isnan(x)):
        raise SageInputError(f"must be between {lo:g} and {hi:g}, got {v!r}", file=file, line=line, field=key)
    return x


def _classes(v: Any, file: str, line: int, key: str) -> list[str]:
    if v is None or v == "":
        return []
    if isinstance(v, str):
        items = [x.strip() for x in v.replace(";", ",").replace("|", ",").split(",") if x.strip()]
    elif isinstance(v, list):
        items = [str(x) for x in v]
    else:
        raise SageInputError(f"must be a class name or a list of them, got {v!r}", file=file, line=line, field=key)
    items = [x.upper() for x in items if x.lower() not in ("none", "null")]
    for x in items:
        if x not in CLASSES:
            raise SageInputError(f"unknown failure class '{x}' (use {', '.join(CLASSES)})",
                                 file=file, line=line, field=key)
    return sorted(set(items))


def _is_turn_verdict(row: dict) -> bool:
    return "criteria" in row or "fired_classes" in row


def _add_row(ev: EvaluatorVerdicts, row: Any, file: str, line: int, names: set) -> None:
    if not isinstance(row, dict):
        raise SageInputError("each row must be an object", file=file, line=line)
    tid = row.get("turn_id")
    if tid is None or str(tid).strip() == "":
        raise SageInputError("is required", file=file, line=line, field="turn_id")
    tid = str(tid).strip()
    if tid in ev.labels:
        raise SageInputError(f"duplicate turn_id '{tid}'", file=file, line=line, field="turn_id")
    label = row.get("label")
    label = label.strip().lower() if isinstance(label, str) else label
    if label not in LABELS:
        raise SageInputError(f"must be one of {', '.join(LABELS)}, got {row.get('label')!r}",
                             file=file, line=line, field="label")
    ev.labels[tid] = label
    conf = _num(row, "confidence", file, line, float, 0.0, 1.0)
    if conf is not None:
        if ev.confidence is None:
            ev.confidence = {}
        ev.confidence[tid] = conf
    if _is_turn_verdict(row):
        cls = _classes(row.get("fired_classes"), file, line, "fired_classes")
        stages = []
        for i, c in enumerate(row.get("criteria") or []):
            fin = c.get("final") if isinstance(c, dict) else None
            if not isinstance(fin, dict) or "stage" not in fin:
                raise SageInputError("needs final.stage", file=file, line=line, field=f"criteria[{i}]")
            stages.append(str(fin["stage"]))
        ev.stages[tid] = stages
        if row.get("s2_backend") and ev.s2_backend is None:
            ev.s2_backend = str(row["s2_backend"])
        names.add(str(row.get("evaluator") or row.get("config") or ""))
    else:
        cls = _classes(row.get("class", row.get("classes")), file, line, "class")
        names.add(str(row.get("evaluator") or ""))
    if cls:
        ev.classes[tid] = cls
    for key, store, kind in (("cost_usd", ev.cost_usd, float), ("latency_ms", ev.latency_ms, float),
                             ("paid_calls", ev.paid_calls, int)):
        x = _num(row, key, file, line, kind)
        if x is not None:
            store[tid] = x


def _finish(ev: EvaluatorVerdicts, names: set, default: str, file: str) -> EvaluatorVerdicts:
    if not ev.labels:
        raise SageInputError("no verdict rows found", file=file)
    names.discard("")
    if len(names) > 1:
        raise SageInputError(f"rows name several evaluators ({', '.join(sorted(names))}); "
                             "write one file per evaluator", file=file, field="evaluator")
    ev.name = names.pop() if names else default
    if ev.confidence is not None and len(ev.confidence) != len(ev.labels):
        missing = next(t for t in ev.labels if t not in ev.confidence)
        raise SageInputError(f"confidence is given for some turns but not for '{missing}'",
                             file=file, field="confidence")
    return ev


def parse_evaluator_verdicts(text: str, name: str = "<input>", fmt: Optional[str] = None,
                             evaluator: Optional[str] = None) -> EvaluatorVerdicts:
    """Parse JSONL (one object per line) or CSV (header row) verdict text."""
    default = evaluator or Path(name).stem
    ev = EvaluatorVerdicts(name=default, labels={}, source=name)
    names: set = set()
    if fmt is None:
        first = next((ln for ln in text.splitlines() if ln.strip()), "")
        fmt = "jsonl" if first.lstrip().startswith("{") else "csv"
    if fmt == "jsonl":
        for lineno, row in iter_jsonl(text.splitlines(), name):
            _add_row(ev, row, name, lineno, names)
    elif fmt == "csv":
        reader = csv.DictReader(io.StringIO(text))
        if not reader.fieldnames or "turn_id" not in reader.fieldnames or "label" not in reader.fieldnames:
            raise SageInputError("a CSV verdict file needs a header with at least turn_id and label",
                                 file=name, line=1)
        for row in reader:
            if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
                continue
            _add_row(ev, row, name, reader.line_num, names)
    else:
        raise ValueError(f"unknown verdict format '{fmt}'")
    if evaluator:
        names = {evaluator}
    return _finish(ev, names, default, name)


def read_evaluator_verdicts(path: str | Path, evaluator: Optional[str] = None) -> EvaluatorVerdicts:
    """Read a verdict file; the evaluator's name comes from its rows, else the file name."""
    path = str(path)
    text = read_text_document(path, "verdict", max_bytes=MAX_VERDICT_FILE_BYTES)
    fmt = "csv" if path.lower().endswith(".csv") else ("jsonl" if path.lower().endswith((".jsonl", ".json")) else None)
    return parse_evaluator_verdicts(text, path, fmt, evaluator)


def from_turn_verdicts(name: str, verdicts) -> EvaluatorVerdicts:
    """SAGE's in-memory ``TurnVerdict`` list -> ``EvaluatorVerdicts`` (no file round trip)."""
    ev = EvaluatorVerdicts(name=name, labels={}, confidence={})
    for v in verdicts:
        tid = v.turn_id
        ev.labels[tid] = v.label.value if hasattr(v.label, "value") else str(v.label)
        ev.confidence[tid] = float(v.confidence)
        cls = list(v.fired_classes)
        if cls:
            ev.classes[tid] = cls
        ev.cost_usd[tid] = float(v.cost_usd)
        ev.latency_ms[tid] = float(v.latency_ms)
        ev.paid_calls[tid] = int(v.paid_calls)
        ev.stages[tid] = [t.final.stage.value for t in v.traces]
        if ev.s2_backend is None and v.s2_backend:
            ev.s2_backend = v.s2_backend
    return ev


def write_evaluator_verdicts(ev: EvaluatorVerdicts, path: str | Path) -> None:
    """Write the generic JSONL verdict format (what baselines emit)."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for tid, label in ev.labels.items():
            row: dict[str, Any] = {"turn_id": tid, "label": label, "evaluator": ev.name}
            if ev.confidence is not None and tid in ev.confidence:
                row["confidence"] = ev.confidence[tid]
            if ev.classes.get(tid):
                row["class"] = ",".join(ev.classes[tid])
            for key, store in (("cost_usd", ev.cost_usd), ("latency_ms", ev.latency_ms),
                               ("paid_calls", ev.paid_calls)):
                if tid in store:
                    row[key] = store[tid]
            fh.write(json.dumps(row) + "\n")


__all__ = ["EvaluatorVerdicts", "read_evaluator_verdicts", "parse_evaluator_verdicts",
           "from_turn_verdicts", "write_evaluator_verdicts"]
