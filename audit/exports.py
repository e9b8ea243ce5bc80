"""Exports of an audit: the blind annotation sheet, the results table, the label history (CSV and JSONL),
and the whole audit as one JSONL bundle that another server imports to continue it.

The annotation sheet is for labelling outside the app, so it is blind: no
gold, no stratum (strata are failure classes), no inclusion probability, no
evaluator verdicts. The results and history files are for analysis and carry
everything. Each function returns the text (for a download button) and
writes it to ``path`` when given.

CSV cells are safe to open in a spreadsheet: a text cell starting with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return (or a ``'``, so the rule can be
undone) gets a leading ``'`` (``neutralise``); ``unneutralise`` removes it when
a sheet is read back (``import_sheet_csv``). JSONL is written as is.

Labels are ``acceptable``, ``failure`` or ``unsure``; a failure's classes are
written in their stored canonical form, one cell/string joined by "," in
``CLASSES`` order ("IUV,UV"). Imports accept that form, any order of it, and (JSONL)
a list ``["UV", "IUV"]``; they are validated and stored canonically.

``audit_bundle_jsonl`` / ``import_audit_bundle``: the audit (design, strata,
turns with gold, guidelines and workflow specs), every label event (drafts,
submissions with old -> new, skips; annotator names, sequence numbers, times)
and the lead's adjudications; importing it into an empty database gives the
same labels, history and queue state (the seats are rebuilt from the events).
``import_sheet_csv`` reads a filled annotation sheet back as one annotator's labels.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Mapping, Optional

from sqlmodel import select

from db.repository import AuditRef, adjudication_history, adjudications, audit_turns, label_history
from db.session import DB

from .consensus import build_consensus, load_audit_labels

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
BUNDLE_FORMAT = "sage-audit-bundle"
BUNDLE_VERSION = 1


def neutralise(value):
    """A text cell a spreadsheet would run as a formula gets a leading ``'``; other values are unchanged."""
    if isinstance(value, str) and value and (value[0] in FORMULA_PREFIXES or value[0] == "'"):
        return "'" + value
    return value


def unneutralise(value):
    """Undo ``neutralise`` on a cell read back from an exported CSV."""
    if isinstance(value, str) and value.startswith("'"):
        return value[1:]
    return value


def dataframe_csv(df) -> str:
    """A pandas DataFrame as CSV with every text cell neutralised (for pages' own tables)."""
    out = df.copy()
    for c in out.columns:
        out[c] = out[c].map(neutralise)  # only str values change
    out.columns = [neutralise(str(c)) for c in out.columns]
    return out.to_csv(index=False)


def _jsonl(rows: list[dict], path) -> str:
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True, default=str) + "\n" for r in rows)
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text

SHEET_COLUMNS = ["turn_id", "dialogue_id", "turn_index", "workflow", "history", "user", "agent",
                 "state_before", "state_after", "label", "failure_class", "note"]
HISTORY_COLUMNS = ["created_at", "annotator", "turn_id", "seq", "kind", "prev_label", "prev_class",
                   "label", "failure_class", "note"]


def _csv(header: list[str], rows: list[list], path) -> str:
    buf = io.StringIO()
    # every text cell quoted: a bare CR inside a note would otherwise be written unquoted (QUOTE_MINIMAL
    # only quotes the line terminator "\n") and split the row in a reader
    w = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
    w.writerow([neutralise(h) for h in header])
    w.writerows([[neutralise(v) for v in r] for r in rows])
    text = buf.getvalue()
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def _history_text(payload: dict) -> str:
    return "\n".join(f"{h.get('speaker')}: {h.get('text')}" for h in payload.get("history") or [])


def _sheet_rows(audit: AuditRef, db: DB) -> list[list]:
    rows = []
    for t in audit_turns(audit, db=db):
        p = t.payload
        rows.append([t.turn_id, t.dialogue_id, t.turn_index, p.get("workflow", ""), _history_text(p),
                     p.get("user", ""), p.get("agent", ""),
                     json.dumps(p.get("state_before", {}), ensure_ascii=False, sort_keys=True),
                     json.dumps(p.get("state_after", {}), ensure_ascii=False, sort_keys=True), "", "", ""])
    return rows


def annotation_sheet_csv(audit: AuditRef, db: DB = None, path=None) -> str:
    """One row per audited turn in queue order, with empty label / failure_class / note columns."""
    return _csv(SHEET_COLUMNS, _sheet_rows(audit, db), path)


def annotation_sheet_jsonl(audit: AuditRef, db: DB = None, path=None) -> str:
    """The blind sheet as JSONL: one object per turn, history and states as JSON (still no gold, no meta)."""
    rows = []
    for t in audit_turns(audit, db=db):
        p = t.payload
        rows.append({"turn_id": t.turn_id, "dialogue_id": t.dialogue_id, "turn_index": t.turn_index,
                     "workflow": p.get("workflow", ""), "history": p.get("history") or [],
                     "user": p.get("user", ""), "agent": p.get("agent", ""),
                     "state_before": p.get("state_before") or {}, "state_after": p.get("state_after") or {},
                     "label": None, "failure_class": None, "note": ""})
    return _jsonl(rows, path)


def _results(audit: AuditRef, db: DB, evaluators, level: str) -> tuple[list[str], list[list]]:
    labels = load_audit_labels(audit, db=db)
    adj = adjudications(audit, db=db)
    cons = build_consensus(labels, level, adj)
    disagreed = {d.turn_id for d in cons.disagreements}
    from .evaluators import split_verdicts
    evaluators = {n: split_verdicts(e)[0] for n, e in (evaluators or {}).items()}
    header = ["turn_id", "dialogue_id", "turn_index", "corpus", "stratum", "inclusion_prob", "weight",
              "gold_label", "gold_class"]
    for k in (1, 2):
        header += [f"rater{k}", f"rater{k}_label", f"rater{k}_class", f"rater{k}_note"]
    header += ["consensus", "consensus_status", "adjudication_reason"] + [f"evaluator:{n}" for n in evaluators]
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
        status = ("adjudicated" if t.turn_id in cons.adjudicated else "agreed" if t.turn_id in cons.labels
                  else "disagreed" if t.turn_id in disagreed else "incomplete")
        row += [cons.labels.get(t.turn_id, ""), status, cons.reasons.get(t.turn_id, "")]
        row += [getattr(ev.get(t.turn_id, ""), "value", ev.get(t.turn_id, "")) for ev in evaluators.values()]
        rows.append(row)
    return header, rows


def results_csv(audit: AuditRef, db: DB = None, evaluators: Optional[Mapping[str, Mapping[str, str]]] = None,
                level: str = "category", path=None) -> str:
    """Per turn: design (stratum, pi, weight), gold, both raters' labels, consensus (the lead's resolution
    where a disagreement was adjudicated, ``consensus_status`` = adjudicated), evaluator labels."""
    header, rows = _results(audit, db, evaluators, level)
    return _csv(header, rows, path)


def results_jsonl(audit: AuditRef, db: DB = None, evaluators: Optional[Mapping[str, Mapping[str, str]]] = None,
                  level: str = "category", path=None) -> str:
    """The results table as JSONL (one object per turn, the CSV's columns as keys)."""
    header, rows = _results(audit, db, evaluators, level)
    return _jsonl([dict(zip(header, r)) for r in rows], path)


def _history_rows(audit: AuditRef, db: DB) -> list[list]:
    return [[r.created_at.isoformat(), r.annotator, r.turn_id, r.seq, r.kind, r.prev_label or "",
             r.prev_class or "", r.label or "", r.failure_class or "", r.note]
            for r in label_history(audit, kinds=("draft", "submit", "skip"), db=db)]


def history_csv(audit: AuditRef, db: DB = None, path=None) -> str:
    """Every draft, submission (old -> new) and skip, oldest first."""
    return _csv(HISTORY_COLUMNS, _history_rows(audit, db), path)


def history_jsonl(audit: AuditRef, db: DB = None, path=None) -> str:
    """The label history as JSONL."""
    return _jsonl([dict(zip(HISTORY_COLUMNS, r)) for r in _history_rows(audit, db)], path)


# ------------------------------------------------------------ bundle
def audit_bundle_jsonl(audit: AuditRef, db: DB = None, path=None) -> str:
    """The whole audit as JSONL records (``kind``: audit, stratum, turn, guidelines, event, adjudication).

    For the lead only: turns carry gold and strata. ``import_audit_bundle`` reads it back.
    """
    from db.repository import audit_strata, get_audit, get_guidelines
    a = get_audit(audit, db=db)
    rows: list[dict] = [{"kind": "audit", "format": BUNDLE_FORMAT, "version": BUNDLE_VERSION, "name": a.name,
                         "seed": a.seed, "labels_per_turn": a.labels_per_turn, "design": a.design,
                         "abandon_after_s": _abandon_after(a.id, db)}]
    rows += [{"kind": "stratum", "name": x.name, "population": x.population, "sampled": x.sampled,
              "inclusion_prob": x.inclusion_prob} for x in audit_strata(a.id, db=db)]
    rows += [{"kind": "turn", "turn_id": t.turn_id, "dialogue_id": t.dialogue_id, "turn_index": t.turn_index,
              "position": t.position, "corpus": t.corpus, "stratum": t.stratum,
              "inclusion_prob": t.inclusion_prob, "gold_label": t.gold_label, "gold_class": t.gold_class,
              "payload": t.payload} for t in audit_turns(a.id, db=db)]
    g = get_guidelines(a.id, db=db)
    rows.append({"kind": "guidelines", "markdown": g.markdown, "workflows": g.workflows,
                 "updated_by": g.updated_by})
    rows += [{"kind": "event", "annotator": r.annotator, "turn_id": r.turn_id, "seq": r.seq, "event": r.kind,
              "label": r.label, "failure_class": r.failure_class, "note": r.note, "prev_label": r.prev_label,
              "prev_class": r.prev_class, "created_at": r.created_at.isoformat()}
             for r in label_history(a.id, kinds=("draft", "submit", "skip"), db=db)]
    rows += [{"kind": "adjudication", "turn_id": r.turn_id, "seq": r.seq, "label": r.label,
              "failure_class": r.failure_class, "reason": r.reason, "lead": r.lead,
              "created_at": r.created_at.isoformat()} for r in adjudication_history(a.id, db=db)]
    return _jsonl(rows, path)


def _abandon_after(audit_id: int, db: DB) -> int:
    from db.models import Audit
    from db.session import read_session
    with read_session(db) as s:
        return int(s.get(Audit, audit_id).abandon_after_s)


def _parse_time(v):
    from datetime import datetime, timezone
    t = datetime.fromisoformat(str(v))
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def import_audit_bundle(text: str, db: DB = None, name: Optional[str] = None):
    """Create the bundled audit in ``db`` (optionally under another ``name``) with its events and resolutions.

    Seats are rebuilt from the events: each annotator who submitted holds a submitted seat,
    one with a later draft and no submission holds a claimed seat (first come first served,
    up to ``labels_per_turn``). Raises ``AuditError`` on a malformed bundle or an existing name.
    """
    from sqlmodel import Session

    from db.models import Adjudication, LabelEvent, Seat
    from db.repository import (AuditError, StratumInfo, annotator_row, create_audit, join_classes, resolve_audit,
                               validate_label)
    from db.session import run_write

    def _checked(r: dict, *, adjudication: bool = False) -> tuple:
        try:
            return validate_label(r.get("label"), r.get("failure_class"), draft=not adjudication,
                                  allow_unsure=not adjudication)
        except AuditError as exc:
            raise AuditError(f"bundle {r.get('kind')} of turn '{r.get('turn_id')}': "
                             f"{exc.args[0] if exc.args else exc}") from None

    recs: dict[str, list[dict]] = {}
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError as exc:
            raise AuditError(f"line {i} of the bundle is not JSON: {exc}") from None
        if not isinstance(r, dict) or "kind" not in r:
            raise AuditError(f"line {i} of the bundle has no 'kind'")
        recs.setdefault(str(r["kind"]), []).append(r)
    head = (recs.get("audit") or [None])[0]
    if head is None or head.get("format") != BUNDLE_FORMAT:
        raise AuditError("not a SAGE audit bundle (export it with 'Audit bundle (JSONL)')")
    if int(head.get("version", 0)) > BUNDLE_VERSION:
        raise AuditError(f"bundle version {head.get('version')} is newer than this server understands")
    g = (recs.get("guidelines") or [{}])[0]
    info = create_audit(name or head["name"], [dict(r) for r in recs.get("turn", [])],
                        [StratumInfo(r["name"], int(r["population"]), int(r["sampled"]), float(r["inclusion_prob"]))
                         for r in recs.get("stratum", [])],
                        seed=int(head.get("seed", 0)), design=head.get("design") or {},
                        labels_per_turn=int(head.get("labels_per_turn", 2)),
                        abandon_after_s=int(head.get("abandon_after_s", 1800)),
                        workflows=g.get("workflows") or None, guidelines=g.get("markdown") or "", db=db)

    if g.get("updated_by"):
        from db.repository import save_guidelines
        save_guidelines(info.id, g.get("markdown") or "", by=str(g["updated_by"]), db=db)

    def _fn(s: Session):
        a = resolve_audit(s, info.id)
        ids: dict[str, int] = {}
        state: dict[tuple[str, str], dict] = {}  # (turn, annotator) -> first event time, submit time, last kind
        for r in sorted(recs.get("event", []), key=lambda r: (_parse_time(r["created_at"]), r["seq"])):
            who = str(r["annotator"])
            if who not in ids:
                ids[who] = annotator_row(s, who, create=True).id
            when = _parse_time(r["created_at"])
            label, fc = _checked(r)
            s.add(LabelEvent(audit_id=a.id, turn_id=r["turn_id"], annotator_id=ids[who], seq=int(r["seq"]),
                             kind=r["event"], label=label, failure_class=fc,
                             note=r.get("note") or "", prev_label=r.get("prev_label"),
                             prev_class=join_classes(r.get("prev_class")), created_at=when))
            st = state.setdefault((r["turn_id"], who), {"first": when, "submitted": None, "last": None,
                                                        "at": when})
            st["last"], st["at"] = r["event"], when
            if r["event"] == "submit" and st["submitted"] is None:
                st["submitted"] = when
        for r in recs.get("adjudication", []):
            label, fc = _checked(r, adjudication=True)
            s.add(Adjudication(audit_id=a.id, turn_id=r["turn_id"], seq=int(r["seq"]), label=label,
                               failure_class=fc, reason=r.get("reason") or "",
                               lead=r.get("lead") or "", created_at=_parse_time(r["created_at"])))
        s.flush()
        seats: dict[str, list[Seat]] = {}
        for seat in s.exec(select(Seat).where(Seat.audit_id == a.id).order_by(Seat.seat)).all():
            seats.setdefault(seat.turn_id, []).append(seat)
        holders = sorted(((tid, who, st) for (tid, who), st in state.items()
                          if st["submitted"] is not None or st["last"] == "draft"),
                         key=lambda x: (x[2]["submitted"] is None, x[2]["first"]))
        for tid, who, st in holders:
            free = [x for x in seats.get(tid, []) if x.annotator_id is None]
            if not free:
                continue
            free[0].annotator_id = ids[who]
            free[0].claimed_at = st["at"]
            free[0].submitted_at = st["submitted"]
            s.add(free[0])
        s.flush()
    run_write(db, _fn)
    return info


def import_sheet_csv(audit: AuditRef, annotator: str, text: str, db: DB = None) -> int:
    """Submit the labels of a filled annotation sheet (CSV, as exported) as ``annotator``'s; returns how many.

    Rows without a label are left alone; cells are un-neutralised; an unknown turn or a
    bad label raises ``AuditError`` naming the row.
    """
    rows = ((i, {unneutralise(k): unneutralise(v) for k, v in row.items() if k is not None})
            for i, row in enumerate(csv.DictReader(io.StringIO(text)), start=2))
    return _import_sheet_rows(audit, annotator, rows, db)


def import_sheet_jsonl(audit: AuditRef, annotator: str, text: str, db: DB = None) -> int:
    """The same for a filled JSONL annotation sheet (``annotation_sheet_jsonl``)."""
    from db.repository import AuditError

    def rows():
        for i, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    r = json.loads(line)
                except ValueError as exc:
                    raise AuditError(f"sheet line {i} is not JSON: {exc}") from None
                if not isinstance(r, dict):
                    raise AuditError(f"sheet line {i} is not an object")
                yield i, r
    return _import_sheet_rows(audit, annotator, rows(), db)


def _import_sheet_rows(audit: AuditRef, annotator: str, rows, db: DB) -> int:
    from db.repository import AuditError

    from .assignment import submit_label
    n = 0
    for i, row in rows:
        label = (row.get("label") or "").strip()
        if not label:
            continue
        fc = row.get("failure_class")
        fc = (fc.strip() or None) if isinstance(fc, str) else fc  # "IUV,UV", "PC", a JSON list, or empty
        try:
            submit_label(audit, annotator, row.get("turn_id", ""), label, fc, row.get("note") or "", db=db)
        except AuditError as exc:
            raise AuditError(f"sheet row {i}: {exc.args[0] if exc.args else exc}") from None
        n += 1
    return n


__all__ = ["SHEET_COLUMNS", "HISTORY_COLUMNS", "FORMULA_PREFIXES", "neutralise", "unneutralise", "dataframe_csv",
           "annotation_sheet_csv", "annotation_sheet_jsonl", "results_csv", "results_jsonl", "history_csv",
           "history_jsonl", "audit_bundle_jsonl", "import_audit_bundle", "import_sheet_csv", "import_sheet_jsonl"]
