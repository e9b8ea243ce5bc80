"""CSV exports of an audit: the blind annotation sheet, the results table, the label history.

The annotation sheet is for labelling outside the app, so it is blind: no
gold, no stratum (strata are failure classes), no inclusion probability, no
evaluator verdicts. The results and history files are for analysis and carry
everything. Each function returns the CSV text (for a download button) and
writes it to ``path`` when given.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Mapping, Optional

from db.repository import AuditRef, audit_turns, label_history
from db.session import DB

from .consensus import build_consensus, load_audit_labels

SHEET_COLUMNS = ["turn_id", "dialogue_id", "turn_index", "workflow", "history", "user", "agent",
                 "state_before", "state_after", "label", "failure_class", "note"]
HISTORY_COLUMNS = ["created_at", "annotator", "turn_id", "seq", "kind", "prev_label", "prev_class",
                   "label", "failure_class", "note"]


def _csv(header: list[str], rows: list[list], path) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    text = buf.getvalue()
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def _history_text(payload: dict) -> str:
    return "\n".join(f"{h.get('speaker')}: {h.get('text')}" for h in payload.get("history") or [])


def annotation_sheet_csv(audit: AuditRef, db: DB = None, path=None) -> str:
    """One row per audited turn in queue order, with empty label / failure_class / note columns."""
    rows = []
    for t in audit_turns(audit, db=db):
        p = t.payload
        rows.append([t.turn_id, t.dialogue_id, t.turn_index, p.get("workflow", ""), _history_text(p),
                     p.get("user", ""), p.get("agent", ""),
                     json.dumps(p.get("state_before", {}), ensure_ascii=False, sort_keys=True),
                     json.dumps(p.get("state_after", {}), ensure_ascii=False, sort_keys=True), "", "", ""])
    return _csv(SHEET_COLUMNS, rows, path)


def results_csv(audit: AuditRef, db: DB = None, evaluators: Optional[Mapping[str, Mapping[str, str]]] = None,
                level: str = "category", path=None) -> str:
    """Per turn: design (stratum, pi, weight), gold, both raters' labels, consensus, evaluator labels."""
    labels = load_audit_labels(audit, db=db)
    cons = build_consensus(labels, level)
    disagreed = {d.turn_id for d in cons.disagreements}
    from .evaluators import split_verdicts
    evaluators = {n: split_verdicts(e)[0] for n, e in (evaluators or {}).items()}
    header = ["turn_id", "dialogue_id", "turn_index", "corpus", "stratum", "inclusion_prob", "weight",
              "gold_label", "gold_class"]
    for k in (1, 2):
        header += [f"rater{k}", f"rater{k}_label", f"rater{k}_class", f"rater{k}_note"]
    header += ["consensus", "consensus_status"] + [f"evaluator:{n}" for n in evaluators]
    rows = []
    for t in labels.turns:
        row = [t.turn_id, t.dialogue_id, t.turn_index, t.corpus, t.stratum, t.inclusion_prob, t.weight,
               t.gold_label or "", t.gold_class or ""]
        who = labels.raters.get(t.turn_id, [])
        for k in range(2):
            if k < len(who):
                r = labels.by_annotator[who[k]][t.turn_id]
                row += [who[k], r.label or "", r.failure_class or "", r.note]
            else:
                row += ["", "", "", ""]
        status = ("agreed" if t.turn_id in cons.labels else "disagreed" if t.turn_id in disagreed
                  else "incomplete")
        row += [cons.labels.get(t.turn_id, ""), status]
        row += [getattr(ev.get(t.turn_id, ""), "value", ev.get(t.turn_id, "")) for ev in evaluators.values()]
        rows.append(row)
    return _csv(header, rows, path)


def history_csv(audit: AuditRef, db: DB = None, path=None) -> str:
    """Every draft, submission (old -> new) and skip, oldest first."""
    rows = [[r.created_at.isoformat(), r.annotator, r.turn_id, r.seq, r.kind, r.prev_label or "",
             r.prev_class or "", r.label or "", r.failure_class or "", r.note]
            for r in label_history(audit, kinds=("draft", "submit", "skip"), db=db)]
    return _csv(HISTORY_COLUMNS, rows, path)


__all__ = ["SHEET_COLUMNS", "HISTORY_COLUMNS", "annotation_sheet_csv", "results_csv", "history_csv"]
