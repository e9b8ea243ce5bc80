"""Reading and writing audit rows: annotators, audits, events; no queue policy here.

Every write goes through ``db.session.run_write`` (one transaction, retried on
lock). Reads return plain frozen dataclasses, never ORM objects, so pages can
cache them and no lazy load ever hits a closed session. There is deliberately
no delete function: labels are only ever appended (see ``db.models``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Optional, Union

from sqlalchemy import func
from sqlmodel import Session, select

from sage_core import SageInputError

from .models import (
    CLASS_SEP,
    CLASSES,
    LABELS,
    Adjudication,
    Annotator,
    Audit,
    AuditGuidelines,
    AuditStratum,
    AuditTurn,
    LabelEvent,
    Seat,
    utcnow,
)
from .session import DB, read_session, run_write

AuditRef = Union[int, str]


class AuditError(SageInputError):
    """A request the audit cannot honour (unknown audit, bad label...)."""


class QuotaFullError(AuditError):
    """The turn already has its two submitted labels from other annotators."""


# ----------------------------------------------------------------- records
@dataclass(frozen=True)
class AnnotatorInfo:
    id: int
    name: str
    created_at: datetime


@dataclass(frozen=True)
class AuditInfo:
    id: int
    name: str
    created_at: datetime
    seed: int
    labels_per_turn: int
    n_turns: int
    design: dict


@dataclass(frozen=True)
class StratumInfo:
    name: str
    population: int
    sampled: int
    inclusion_prob: float


@dataclass(frozen=True)
class AuditTurnInfo:
    turn_id: str
    dialogue_id: str
    turn_index: int
    position: int
    corpus: str
    stratum: str
    inclusion_prob: float
    gold_label: Optional[str]
    gold_class: Optional[str]
    payload: dict  # blind turn (no gold, no meta)

    @property
    def weight(self) -> float:
        return 1.0 / self.inclusion_prob


@dataclass(frozen=True)
class LabelRecord:
    """One event row as seen by callers (a history row, a current label or a draft)."""

    turn_id: str
    annotator: str
    seq: int
    kind: str
    label: Optional[str]
    failure_class: Optional[str]
    note: str
    prev_label: Optional[str]
    prev_class: Optional[str]
    created_at: datetime

    @property
    def category(self) -> Optional[str]:
        return category(self.label, self.failure_class)


ClassesArg = Union[None, str, Iterable[str]]


def split_classes(failure_class: ClassesArg) -> tuple[str, ...]:
    """The classes of a stored or given class value: "IUV,UV" / "PC" / ["UV", "IUV"] / None -> tuple.

    Order and spacing of the input do not matter; the result is in ``CLASSES`` order (unknown names
    after them, sorted, so ``validate_label`` can name them). Duplicates are kept (validation refuses them).
    """
    if failure_class is None:
        return ()
    parts = failure_class.split(CLASS_SEP) if isinstance(failure_class, str) else list(failure_class)
    parts = [str(p).strip() for p in parts if p is not None and str(p).strip()]
    rank = {c: i for i, c in enumerate(CLASSES)}
    return tuple(sorted(parts, key=lambda c: (rank.get(c, len(CLASSES)), c)))


def join_classes(classes: ClassesArg) -> Optional[str]:
    """The canonical stored form of a class set: CLASSES order, joined by ","; None for no class."""
    parts = split_classes(classes)
    return CLASS_SEP.join(parts) if parts else None


def category(label: Optional[str], failure_class: ClassesArg) -> Optional[str]:
    """The nominal category used by the statistics: 'acceptable', 'unsure', 'failure' (no class) or
    the failure's canonical class list ("PC", "IUV,UV": two class sets are the same category only
    when they are equal)."""
    if label is None:
        return None
    if label == "failure":
        return join_classes(failure_class) or "failure"
    return label


def validate_label(label: Optional[str], failure_class: ClassesArg, *, draft: bool = False,
                   allow_unsure: bool = True) -> tuple[Optional[str], Optional[str]]:
    """Check a (label, classes) pair and return it with the classes in canonical form.

    Labels: ``failure``, ``acceptable``, ``unsure`` (``allow_unsure=False`` for a lead's resolution).
    Classes: ``None``, one class, a comma-joined list or an iterable of classes; only a failure may
    have classes, each must be in ``CLASSES`` and none may repeat. Drafts may leave the label empty.
    """
    classes = split_classes(failure_class)
    bad = [c for c in classes if c not in CLASSES]
    if bad:
        raise AuditError(f"class must be one of {', '.join(CLASSES)}, got '{bad[0]}'", field="failure_class")
    if len(set(classes)) != len(classes):
        dup = next(c for c in classes if classes.count(c) > 1)
        raise AuditError(f"class '{dup}' is given twice", field="failure_class")
    joined = join_classes(classes)
    labels = LABELS if allow_unsure else tuple(x for x in LABELS if x != "unsure")
    if label in ("", None):
        if draft:
            return None, joined
        raise AuditError(f"choose a label: {', '.join(repr(x) for x in labels)}", field="label")
    if label not in labels:
        raise AuditError(f"label must be one of {', '.join(labels)}, got '{label}'", field="label")
    if label != "failure" and joined is not None:
        raise AuditError(f"an {label} turn has no failure class" if label == "acceptable"
                         else f"an {label} label has no failure class", field="failure_class")
    return label, joined


# ---------------------------------------------------------------- helpers
def resolve_audit(session: Session, audit: AuditRef) -> Audit:
    if isinstance(audit, int):
        row = session.get(Audit, audit)
    else:
        row = session.exec(select(Audit).where(Audit.name == audit)).first()
    if row is None:
        raise AuditError(f"no audit '{audit}'")
    return row


def normalise_name(name: str) -> tuple[str, str]:
    """(display name, key): NFKC, whitespace stripped and collapsed; the key is also casefolded.

    " Bob ", "bob" and "BOB" share one key, so they are one person everywhere (seats, labels).
    """
    import unicodedata

    display = " ".join(unicodedata.normalize("NFKC", str(name or "")).split())
    if not display:
        raise AuditError("enter a name", field="name")
    if len(display) > 200:
        raise AuditError("a name has at most 200 characters", field="name")
    if any(unicodedata.category(ch).startswith("C") for ch in display):
        raise AuditError("a name cannot contain control characters", field="name")
    return display, display.casefold()


def annotator_row(session: Session, name: str, *, create: bool) -> Optional[Annotator]:
    """The account whose normalised name matches ``name`` (created without a password if asked)."""
    display, key = normalise_name(name)
    row = session.exec(select(Annotator).where(Annotator.name_key == key)).first()
    if row is None:  # rows written before names were normalised
        row = session.exec(select(Annotator).where(Annotator.name == display)).first()
    if row is None and create:
        row = Annotator(name=display, name_key=key)
        session.add(row)
        session.flush()  # a concurrent first sign-in with the same name -> IntegrityError -> retry
    return row


def next_seq(session: Session, audit_id: int, turn_id: str, annotator_id: int) -> int:
    cur = session.exec(select(func.max(LabelEvent.seq)).where(
        LabelEvent.audit_id == audit_id, LabelEvent.turn_id == turn_id,
        LabelEvent.annotator_id == annotator_id)).one()
    return (cur or 0) + 1


def append_event(session: Session, audit_id: int, turn_id: str, annotator_id: int, kind: str, *,
                 label: Optional[str] = None, failure_class: Optional[str] = None, note: str = "",
                 prev_label: Optional[str] = None, prev_class: Optional[str] = None) -> LabelEvent:
    ev = LabelEvent(audit_id=audit_id, turn_id=turn_id, annotator_id=annotator_id,
                    seq=next_seq(session, audit_id, turn_id, annotator_id), kind=kind, label=label,
                    failure_class=failure_class, note=note or "", prev_label=prev_label,
                    prev_class=prev_class, created_at=utcnow())
    session.add(ev)
    session.flush()
    return ev


def latest_submit(session: Session, audit_id: int, turn_id: str, annotator_id: int
                  ) -> Optional[LabelEvent]:
    return session.exec(select(LabelEvent).where(
        LabelEvent.audit_id == audit_id, LabelEvent.turn_id == turn_id,
        LabelEvent.annotator_id == annotator_id, LabelEvent.kind == "submit"
    ).order_by(LabelEvent.seq.desc())).first()


def _record(ev: LabelEvent, name: str) -> LabelRecord:
    return LabelRecord(ev.turn_id, name, ev.seq, ev.kind, ev.label, ev.failure_class, ev.note or "",
                       ev.prev_label, ev.prev_class, ev.created_at)


# ------------------------------------------------------------------ writes
def sign_in(name: str, db: DB = None) -> AnnotatorInfo:
    """Return the annotator called ``name``, creating it on first sign-in."""
    def _fn(s: Session) -> AnnotatorInfo:
        a = annotator_row(s, name, create=True)
        return AnnotatorInfo(a.id, a.name, a.created_at)
    return run_write(db, _fn)


def create_audit(name: str, turns: Iterable[dict[str, Any]], strata: Iterable[StratumInfo], *,
                 seed: int = 0, design: Optional[dict] = None, labels_per_turn: int = 2,
                 abandon_after_s: int = 1800, workflows: Optional[dict] = None,
                 guidelines: str = "", db: DB = None) -> AuditInfo:
    """Store an audit: its strata, its sampled turns and two empty seats per turn.

    ``workflows``: workflow id -> spec dict (``audit.guidelines.spec_to_dict``) for the
    annotators' guidelines panel; ``guidelines``: the lead's Markdown ("" = generated).

    ``turns``: dicts with the ``AuditTurn`` fields (turn_id, dialogue_id, turn_index,
    position, corpus, stratum, inclusion_prob, payload (dict), gold_label, gold_class).
    ``audit.assignment.create_audit_from_sample`` builds them from a ``Sample``.
    """
    turns = list(turns)
    strata = list(strata)
    if not name or not name.strip():
        raise AuditError("give the audit a name", field="name")
    if not turns:
        raise AuditError("an audit needs at least one sampled turn")
    for t in turns:
        p = float(t.get("inclusion_prob", 1.0))
        if not 0.0 < p <= 1.0:
            raise AuditError(f"inclusion probability of {t['turn_id']} must be in (0, 1], got {p}")

    def _fn(s: Session) -> AuditInfo:
        if s.exec(select(Audit).where(Audit.name == name.strip())).first() is not None:
            raise AuditError(f"an audit named '{name.strip()}' already exists", field="name")
        a = Audit(name=name.strip(), seed=seed, labels_per_turn=labels_per_turn,
                  abandon_after_s=abandon_after_s, design_json=json.dumps(design or {}, sort_keys=True))
        s.add(a)
        s.flush()
        for st in strata:
            s.add(AuditStratum(audit_id=a.id, name=st.name, population=st.population,
                               sampled=st.sampled, inclusion_prob=st.inclusion_prob))
        for i, t in enumerate(turns):
            s.add(AuditTurn(audit_id=a.id, turn_id=t["turn_id"], dialogue_id=t["dialogue_id"],
                            turn_index=int(t.get("turn_index", 0)), position=int(t.get("position", i)),
                            corpus=t.get("corpus") or "default", stratum=t.get("stratum") or "all",
                            inclusion_prob=float(t.get("inclusion_prob", 1.0)),
                            payload_json=json.dumps(t.get("payload") or {}, ensure_ascii=False),
                            gold_label=t.get("gold_label"), gold_class=t.get("gold_class")))
            for k in range(1, labels_per_turn + 1):
                s.add(Seat(audit_id=a.id, turn_id=t["turn_id"], seat=k))
        if workflows or guidelines:
            s.add(AuditGuidelines(audit_id=a.id, markdown=guidelines or "",
                                  workflows_json=json.dumps(workflows or {}, ensure_ascii=False, sort_keys=True)))
        s.flush()
        return AuditInfo(a.id, a.name, a.created_at, a.seed, a.labels_per_turn, len(turns),
                         design or {})
    return run_write(db, _fn)


# ------------------------------------------------------------------- reads
def list_audits(db: DB = None) -> list[AuditInfo]:
    with read_session(db) as s:
        counts = dict(s.exec(select(AuditTurn.audit_id, func.count()).group_by(AuditTurn.audit_id)).all())
        return [AuditInfo(a.id, a.name, a.created_at, a.seed, a.labels_per_turn, counts.get(a.id, 0),
                          json.loads(a.design_json or "{}"))
                for a in s.exec(select(Audit).order_by(Audit.id)).all()]


def get_audit(audit: AuditRef, db: DB = None) -> AuditInfo:
    with read_session(db) as s:
        a = resolve_audit(s, audit)
        n = s.exec(select(func.count()).select_from(AuditTurn).where(AuditTurn.audit_id == a.id)).one()
        return AuditInfo(a.id, a.name, a.created_at, a.seed, a.labels_per_turn, n,
                         json.loads(a.design_json or "{}"))


def list_annotators(db: DB = None) -> list[AnnotatorInfo]:
    with read_session(db) as s:
        return [AnnotatorInfo(a.id, a.name, a.created_at)
                for a in s.exec(select(Annotator).order_by(Annotator.name)).all()]


def audit_strata(audit: AuditRef, db: DB = None) -> list[StratumInfo]:
    with read_session(db) as s:
        a = resolve_audit(s, audit)
        return [StratumInfo(r.name, r.population, r.sampled, r.inclusion_prob)
                for r in s.exec(select(AuditStratum).where(AuditStratum.audit_id == a.id)
                                .order_by(AuditStratum.name)).all()]


def _turn_info(r: AuditTurn) -> AuditTurnInfo:
    return AuditTurnInfo(r.turn_id, r.dialogue_id, r.turn_index, r.position, r.corpus, r.stratum,
                         r.inclusion_prob, r.gold_label, r.gold_class, json.loads(r.payload_json))


def audit_turns(audit: AuditRef, db: DB = None) -> list[AuditTurnInfo]:
    """Sampled turns in queue order, with strata, inclusion probabilities and (hidden) gold."""
    with read_session(db) as s:
        a = resolve_audit(s, audit)
        return [_turn_info(r) for r in s.exec(select(AuditTurn).where(AuditTurn.audit_id == a.id)
                                              .order_by(AuditTurn.position, AuditTurn.id)).all()]


def label_history(audit: AuditRef, *, turn_id: Optional[str] = None, annotator: Optional[str] = None,
                  kinds: tuple[str, ...] = ("submit",), db: DB = None) -> list[LabelRecord]:
    """Every label change (default: submissions; add 'draft'/'skip' for the full log), oldest first."""
    with read_session(db) as s:
        a = resolve_audit(s, audit)
        q = (select(LabelEvent, Annotator.name).join(Annotator, Annotator.id == LabelEvent.annotator_id)
             .where(LabelEvent.audit_id == a.id, LabelEvent.kind.in_(kinds)))
        if turn_id is not None:
            q = q.where(LabelEvent.turn_id == turn_id)
        if annotator is not None:
            q = q.where(Annotator.name == annotator)
        rows = s.exec(q.order_by(LabelEvent.created_at, LabelEvent.id)).all()
        return [_record(ev, name) for ev, name in rows]


def current_labels(audit: AuditRef, db: DB = None) -> dict[str, dict[str, LabelRecord]]:
    """turn_id -> annotator name -> latest submitted label (derived from the history)."""
    out: dict[str, dict[str, LabelRecord]] = {}
    for r in label_history(audit, db=db):  # oldest first: later rows overwrite
        cur = out.setdefault(r.turn_id, {}).get(r.annotator)
        if cur is None or r.seq > cur.seq:
            out[r.turn_id][r.annotator] = r
    return out


def count_events(audit: AuditRef, kind: str = "submit", db: DB = None) -> int:
    with read_session(db) as s:
        a = resolve_audit(s, audit)
        return s.exec(select(func.count()).select_from(LabelEvent).where(
            LabelEvent.audit_id == a.id, LabelEvent.kind == kind)).one()


# ------------------------------------------------------------- guidelines
@dataclass(frozen=True)
class GuidelinesInfo:
    markdown: str  # the lead's text; "" = use the guidelines generated from the specs
    workflows: dict  # workflow id -> spec dict
    updated_at: Optional[datetime]
    updated_by: str


def get_guidelines(audit: AuditRef, db: DB = None) -> GuidelinesInfo:
    """The audit's guidelines row (empty when none was stored)."""
    with read_session(db) as s:
        a = resolve_audit(s, audit)
        g = s.exec(select(AuditGuidelines).where(AuditGuidelines.audit_id == a.id)).first()
        if g is None:
            return GuidelinesInfo("", {}, None, "")
        return GuidelinesInfo(g.markdown or "", json.loads(g.workflows_json or "{}"), g.updated_at,
                              g.updated_by or "")


MAX_GUIDELINES_CHARS = 100_000


def save_guidelines(audit: AuditRef, markdown: str, *, by: str = "", workflows: Optional[dict] = None,
                    db: DB = None) -> GuidelinesInfo:
    """Set the lead's Markdown for the audit ("" restores the generated text); optionally the specs."""
    markdown = markdown or ""
    if len(markdown) > MAX_GUIDELINES_CHARS:
        raise AuditError(f"guidelines are limited to {MAX_GUIDELINES_CHARS} characters", field="guidelines")

    def _fn(s: Session) -> GuidelinesInfo:
        a = resolve_audit(s, audit)
        g = s.exec(select(AuditGuidelines).where(AuditGuidelines.audit_id == a.id)).first()
        if g is None:
            g = AuditGuidelines(audit_id=a.id)
            s.add(g)
        g.markdown = markdown
        if workflows is not None:
            g.workflows_json = json.dumps(workflows, ensure_ascii=False, sort_keys=True)
        g.updated_at, g.updated_by = utcnow(), (by or "")[:200]
        s.flush()
        return GuidelinesInfo(g.markdown, json.loads(g.workflows_json or "{}"), g.updated_at, g.updated_by)
    return run_write(db, _fn)


# ------------------------------------------------------------ adjudication
@dataclass(frozen=True)
class AdjudicationRecord:
    turn_id: str
    seq: int
    label: str
    failure_class: Optional[str]
    reason: str
    lead: str
    created_at: datetime

    @property
    def category(self) -> Optional[str]:
        return category(self.label, self.failure_class)


def adjudicate(audit: AuditRef, turn_id: str, label: str, failure_class: ClassesArg, reason: str, *,
               lead: str, db: DB = None) -> AdjudicationRecord:
    """Record the lead's resolution of a turn (a new row; the latest one counts). A reason is required.

    ``label`` is ``failure`` or ``acceptable`` (a resolution is never ``unsure``); a failure may have
    several classes (``["IUV", "UV"]`` or ``"IUV,UV"``), stored in canonical form."""
    label, failure_class = validate_label(label, failure_class, allow_unsure=False)
    reason = (reason or "").strip()
    if not reason:
        raise AuditError("give a reason for the resolution", field="reason")
    if not (lead or "").strip():
        raise AuditError("the resolution needs the lead's name", field="lead")

    def _fn(s: Session) -> AdjudicationRecord:
        a = resolve_audit(s, audit)
        if s.exec(select(AuditTurn.id).where(AuditTurn.audit_id == a.id, AuditTurn.turn_id == turn_id)).first() \
                is None:
            raise AuditError(f"turn '{turn_id}' is not part of this audit", field="turn_id")
        cur = s.exec(select(func.max(Adjudication.seq)).where(Adjudication.audit_id == a.id,
                                                              Adjudication.turn_id == turn_id)).one()
        row = Adjudication(audit_id=a.id, turn_id=turn_id, seq=(cur or 0) + 1, label=label,
                           failure_class=failure_class, reason=reason, lead=lead.strip()[:200], created_at=utcnow())
        s.add(row)
        s.flush()
        return _adj(row)
    return run_write(db, _fn)


def _adj(r: Adjudication) -> AdjudicationRecord:
    return AdjudicationRecord(r.turn_id, r.seq, r.label, r.failure_class, r.reason, r.lead, r.created_at)


def adjudication_history(audit: AuditRef, db: DB = None) -> list[AdjudicationRecord]:
    """Every resolution, oldest first."""
    with read_session(db) as s:
        a = resolve_audit(s, audit)
        return [_adj(r) for r in s.exec(select(Adjudication).where(Adjudication.audit_id == a.id)
                                        .order_by(Adjudication.turn_id, Adjudication.seq)).all()]


def adjudications(audit: AuditRef, db: DB = None) -> dict[str, AdjudicationRecord]:
    """turn_id -> the latest resolution."""
    out: dict[str, AdjudicationRecord] = {}
    for r in adjudication_history(audit, db=db):
        out[r.turn_id] = r
    return out


__all__ = ["GuidelinesInfo", "get_guidelines", "save_guidelines", "AdjudicationRecord", "adjudicate",
           "adjudication_history", "adjudications", "AuditError", "QuotaFullError", "AnnotatorInfo", "AuditInfo", "StratumInfo",
           "AuditTurnInfo", "LabelRecord", "category", "validate_label", "split_classes", "join_classes", "sign_in", "create_audit",
           "list_audits", "get_audit", "list_annotators", "audit_strata", "audit_turns",
           "label_history", "current_labels", "count_events", "resolve_audit", "annotator_row",
           "append_event", "latest_submit", "next_seq", "normalise_name"]
