"""Repair signals: one structured edit per fired criterion, telling the agent builder what to change."""
from __future__ import annotations

from typing import Optional

from sage_core.data.types import CriterionTrace, Decision, FailureClass, RepairSignal


def repair_for(trace: CriterionTrace) -> Optional[RepairSignal]:
    if trace.final.decision != Decision.TRUE:
        return None
    c = trace.criterion
    a = c.args
    if c.type == FailureClass.IUV:
        span = list(c.span) if c.span else None
        where = f" at span [{span[0]},{span[1]}]" if span else ""
        return RepairSignal(c.id, c.type, {"op": "record_value", "slot": a["slot"], "value": a["value"], "span": span},
                            f"record {a['value']!r}{where} into slot {a['slot']}")
    if c.type == FailureClass.WNF:
        legal = sorted(a.get("open_now", a.get("legal", [])))
        return RepairSignal(c.id, c.type, {"op": "request_instead", "requested": a["slot"], "legal": legal},
                            f"request one of the legal next slots {{{', '.join(legal)}}} instead of {a['slot']}"
                            if legal else f"do not request {a['slot']}: no slot is open; confirm or act instead")
    if c.type == FailureClass.PC:
        missing = list(a.get("missing", []))
        return RepairSignal(c.id, c.type, {"op": "fill_required", "missing": missing},
                            f"required slots {{{', '.join(missing)}}} still empty: request them before confirming"
                            if missing else "confirmation judged premature: re-check the required slots")
    if c.type == FailureClass.UV:
        return RepairSignal(c.id, c.type, {"op": "remove_or_replace", "slot": a["slot"], "value": a["value"]},
                            f"remove/replace value {a['value']!r} of slot {a['slot']}, not supported by history")
    return None


def repairs(traces: list[CriterionTrace]) -> list[RepairSignal]:
    return [r for r in (repair_for(t) for t in traces) if r is not None]


__all__ = ["repair_for", "repairs"]
