"""Who labels what next: first-come first-served seats, drafts, skips, progress.

Policy (requirement B/C of the audit issues):

* every sampled turn has two seats; ``next_turn_for`` hands an annotator their
  own unfinished turn first (with its autosaved draft), otherwise claims a free
  seat on the next turn they have not labelled, preferring turns whose other
  seat is already taken (pairs complete sooner), skipped turns last;
* a claim is a compare-and-set on the seat row, so a third annotator can never
  get a turn whose two seats are held or submitted, even under concurrency;
* nothing counts toward the quota until submitted: ``skip_turn`` releases the
  seat, and a claim left unsubmitted longer than ``Audit.abandon_after_s`` (no
  draft saves either) may be taken by someone else;
* ``submit_label`` appends a history row (old -> new); submitting again changes
  the label; nothing is ever deleted.

``annotator`` is always the sign-in name (created on first use); ``audit`` is
the audit id or name; ``db`` an Engine, a URL or None (settings).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta, timezone
from typing import Optional

from sqlalchemy import and_, or_, update
from sqlmodel import Session, select

from db.models import Annotator, AuditTurn, LabelEvent, Seat
from db.repository import (
    AuditError,
    AuditRef,
    LabelRecord,
    QuotaFullError,
    _record,
    _turn_info,
    annotator_row,
    append_event,
    latest_submit,
    resolve_audit,
    ClassesArg,
    validate_label,
)
from db.session import DB, db_now, read_session, run_write


@dataclass(frozen=True)
class QueueItem:
    """A turn handed to an annotator: blind payload plus their own draft, if any."""

    audit_id: int
    turn_id: str
    dialogue_id: str
    payload: dict  # blind: history, user, agent, states, acts; no gold, no verdicts
    draft: Optional[LabelRecord]  # the autosaved draft to restore, or None
    resumed: bool  # True when this is the annotator's own unfinished turn
    current: Optional[LabelRecord] = None  # the annotator's submitted label (``open_turn`` only)
    version: int = 0  # seq of the annotator's latest event on this turn when handed out (optimistic check)


class ChangedElsewhereError(AuditError):
    """The annotator's label on this turn changed in another tab or window since this one loaded it."""


def _check_version(s: Session, audit_id: int, turn_id: str, ann: Annotator, expected: Optional[int]) -> None:
    if expected is None:
        return
    from db.repository import next_seq
    if next_seq(s, audit_id, turn_id, ann.id) - 1 != int(expected):
        raise ChangedElsewhereError(f"your label for turn '{turn_id}' was changed elsewhere (another tab or "
                                    "window) since this page loaded it; reload the turn to see the latest "
                                    "version — nothing was overwritten")


def _version(s: Session, audit_id: int, turn_id: str, ann: Annotator) -> int:
    from db.repository import next_seq
    return next_seq(s, audit_id, turn_id, ann.id) - 1


@dataclass(frozen=True)
class Progress:
    n_turns: int
    labels_needed: int  # n_turns * labels_per_turn
    labels_submitted: int
    turns_complete: int  # every seat submitted
    turns_partial: int
    turns_untouched: int
    per_annotator: dict[str, int] = field(default_factory=dict)  # name -> turns submitted
    mine_submitted: Optional[int] = None
    mine_in_progress: Optional[int] = None
    mine_remaining: Optional[int] = None  # turns this annotator could still be given (incl. in progress)

    @property
    def fraction(self) -> float:
        return self.labels_submitted / self.labels_needed if self.labels_needed else 1.0


def blind_payload(turn) -> dict:
    """What an annotator may see of a turn: everything but gold and meta (meta can name injections)."""
    d = turn.to_dict()
    d.pop("gold", None)
    d.pop("meta", None)
    return d


def turn_index(turn) -> int:
    """Position of the turn in its dialogue: ``meta['turn_index']`` or the agent turns before it."""
    if "turn_index" in turn.meta:
        return int(turn.meta["turn_index"])
    return sum(1 for u in turn.history if u.speaker == "agent")


def create_audit_from_sample(name: str, sample, db: DB = None, labels_per_turn: int = 2,
                             abandon_after_s: int = 1800, workflows=None, guidelines: str = ""):
    """Store an ``audit.sampling.Sample`` as a new audit (strata, pi, blind payloads, seats).

    ``workflows``: the slice's ``WorkflowRegistry``; the specs of the sampled turns' workflows
    are stored with the audit for the annotators' guidelines panel (``audit.guidelines``).
    """
    from db.repository import StratumInfo, create_audit

    from .guidelines import workflows_for
    turns = [dict(turn_id=st.turn.turn_id, dialogue_id=st.turn.dialogue_id, turn_index=turn_index(st.turn),
                  position=i, corpus=st.corpus, stratum=st.stratum, inclusion_prob=st.inclusion_prob,
                  payload=blind_payload(st.turn),
                  gold_label=st.turn.gold.label if st.turn.gold else None,
                  gold_class=st.turn.gold.failure_class if st.turn.gold else None)
             for i, st in enumerate(sample.turns)]
    strata = [StratumInfo(x.name, x.population, x.sampled, x.inclusion_prob) for x in sample.strata]
    specs = workflows_for(workflows, (st.turn.workflow for st in sample.turns)) if workflows is not None else None
    return create_audit(name, turns, strata, seed=sample.seed, design=sample.design,
                        labels_per_turn=labels_per_turn, abandon_after_s=abandon_after_s,
                        workflows=specs, guidelines=guidelines, db=db)


def _audit_turn(s: Session, audit_id: int, turn_id: str) -> AuditTurn:
    row = s.exec(select(AuditTurn).where(AuditTurn.audit_id == audit_id,
                                         AuditTurn.turn_id == turn_id)).first()
    if row is None:
        raise AuditError(f"turn '{turn_id}' is not part of this audit", field="turn_id")
    return row


def _draft(s: Session, audit_id: int, turn_id: str, ann: Annotator) -> Optional[LabelRecord]:
    ev = s.exec(select(LabelEvent).where(
        LabelEvent.audit_id == audit_id, LabelEvent.turn_id == turn_id,
        LabelEvent.annotator_id == ann.id, LabelEvent.kind.in_(("draft", "submit"))
    ).order_by(LabelEvent.seq.desc())).first()  # skips keep the draft
    return _record(ev, ann.name) if ev is not None and ev.kind == "draft" else None


def _claimable(cutoff):
    """SQL condition: the seat is free, or an unsubmitted claim older than ``cutoff``."""
    return or_(Seat.annotator_id.is_(None),
               and_(Seat.submitted_at.is_(None), Seat.claimed_at < cutoff))


def _cutoff(s: Session, audit) -> object:
    """Claims older than this (database clock) are abandoned."""
    return db_now(s) - timedelta(seconds=audit.abandon_after_s)


def _older(claimed, cutoff) -> bool:
    if claimed is None:
        return False
    if claimed.tzinfo is None:  # SQLite hands timestamps back without a zone; they are UTC
        claimed = claimed.replace(tzinfo=timezone.utc)
    return claimed < cutoff


def _try_claim(s: Session, audit, turn_id: str, ann: Annotator) -> Optional[Seat]:
    """Take a free (or abandoned) seat of ``turn_id`` for ``ann``; None if both are held.

    The lease clock is the database's (``db_now``): the claim time written and the cutoff
    compared against both come from it, never from this writer's clock.
    """
    now = db_now(s)
    cutoff = now - timedelta(seconds=audit.abandon_after_s)
    seats = s.exec(select(Seat).where(Seat.audit_id == audit.id, Seat.turn_id == turn_id)
                   .order_by(Seat.annotator_id.is_not(None), Seat.seat)).all()
    for seat in seats:
        if seat.annotator_id == ann.id:
            return seat
    for seat in seats:
        if seat.annotator_id is not None and not (seat.submitted_at is None and _older(seat.claimed_at, cutoff)):
            continue
        res = s.execute(update(Seat).where(Seat.id == seat.id, _claimable(cutoff))
                        .values(annotator_id=ann.id, claimed_at=now, submitted_at=None))
        if res.rowcount == 1:
            s.flush()
            s.refresh(seat)
            return seat
    return None


def _my_seat(s: Session, audit_id: int, turn_id: str, ann: Annotator) -> Optional[Seat]:
    return s.exec(select(Seat).where(Seat.audit_id == audit_id, Seat.turn_id == turn_id,
                                     Seat.annotator_id == ann.id)).first()


def next_turn_for(audit: AuditRef, annotator: str, db: DB = None) -> Optional[QueueItem]:
    """The annotator's next turn (own unfinished draft first), or None when they are done."""
    def _fn(s: Session) -> Optional[QueueItem]:
        a = resolve_audit(s, audit)
        ann = annotator_row(s, annotator, create=True)
        own = s.exec(select(Seat).where(Seat.audit_id == a.id, Seat.annotator_id == ann.id,
                                        Seat.submitted_at.is_(None)).order_by(Seat.claimed_at, Seat.id)).first()
        if own is not None:
            s.execute(update(Seat).where(Seat.id == own.id).values(claimed_at=db_now(s)))
            t = _audit_turn(s, a.id, own.turn_id)
            return QueueItem(a.id, t.turn_id, t.dialogue_id, _turn_info(t).payload,
                             _draft(s, a.id, t.turn_id, ann), True, version=_version(s, a.id, t.turn_id, ann))
        cutoff = _cutoff(s, a)
        taken: dict[str, int] = {}
        free: set[str] = set()
        mine: set[str] = set()
        for tid, holder, claimed, submitted in s.exec(
                select(Seat.turn_id, Seat.annotator_id, Seat.claimed_at, Seat.submitted_at)
                .where(Seat.audit_id == a.id)).all():
            if holder == ann.id:
                mine.add(tid)
            elif holder is None or (submitted is None and _older(claimed, cutoff)):
                free.add(tid)
            else:
                taken[tid] = taken.get(tid, 0) + 1
        skipped: dict[str, int] = {}
        done: set[str] = set()
        for tid, kind, ev_id in s.exec(select(LabelEvent.turn_id, LabelEvent.kind, LabelEvent.id).where(
                LabelEvent.audit_id == a.id, LabelEvent.annotator_id == ann.id,
                LabelEvent.kind.in_(("submit", "skip")))).all():
            if kind == "submit":
                done.add(tid)
            else:
                skipped[tid] = max(skipped.get(tid, 0), ev_id)
        free -= mine | done
        order = s.exec(select(AuditTurn.turn_id, AuditTurn.position, AuditTurn.id)
                       .where(AuditTurn.audit_id == a.id)).all()
        cands = sorted((r for r in order if r[0] in free),
                       key=lambda r: (skipped.get(r[0], 0), -taken.get(r[0], 0), r[1], r[2]))
        for tid, _, _ in cands:
            if _try_claim(s, a, tid, ann) is not None:
                t = _audit_turn(s, a.id, tid)
                return QueueItem(a.id, t.turn_id, t.dialogue_id, _turn_info(t).payload,
                                 _draft(s, a.id, t.turn_id, ann), False, version=_version(s, a.id, t.turn_id, ann))
        return None
    return run_write(db, _fn)


def save_draft(audit: AuditRef, annotator: str, turn_id: str, label: Optional[str] = None,
               failure_class: ClassesArg = None, note: str = "", db: DB = None,
               expected_version: Optional[int] = None) -> LabelRecord:
    """Autosave an unfinished label (class, note); restored by ``next_turn_for``/``get_draft``.

    Also keeps the annotator's claim on the turn alive. Never counts toward the quota.
    ``expected_version``: the ``seq`` this writer last saw (``QueueItem.version`` or the
    returned record's ``seq``); if another tab wrote since, ``ChangedElsewhereError`` and nothing is written.
    """
    label, failure_class = validate_label(label, failure_class, draft=True)

    def _fn(s: Session) -> LabelRecord:
        a = resolve_audit(s, audit)
        ann = annotator_row(s, annotator, create=True)
        _audit_turn(s, a.id, turn_id)
        _check_version(s, a.id, turn_id, ann, expected_version)
        seat = _my_seat(s, a.id, turn_id, ann)
        if seat is None:
            _try_claim(s, a, turn_id, ann)  # best effort: the draft is kept either way
        elif seat.submitted_at is None:
            s.execute(update(Seat).where(Seat.id == seat.id).values(claimed_at=db_now(s)))
        ev = append_event(s, a.id, turn_id, ann.id, "draft", label=label, failure_class=failure_class,
                          note=note)
        return _record(ev, ann.name)
    return run_write(db, _fn)


def get_draft(audit: AuditRef, annotator: str, turn_id: str, db: DB = None) -> Optional[LabelRecord]:
    """The annotator's latest draft for the turn if it is newer than their last submission."""
    with read_session(db) as s:
        a = resolve_audit(s, audit)
        ann = annotator_row(s, annotator, create=False)
        return None if ann is None else _draft(s, a.id, turn_id, ann)


def submit_label(audit: AuditRef, annotator: str, turn_id: str, label: str,
                 failure_class: ClassesArg = None, note: str = "", db: DB = None,
                 expected_version: Optional[int] = None) -> LabelRecord:
    """Submit (or revise) the annotator's label; one transaction: history row + seat.

    ``label``: failure, acceptable or unsure; a failure may have several classes (a list, or the
    canonical comma-joined form "IUV,UV" in which it is stored; see ``db.validate_label``).

    A revision is another ``submit`` row (``prev_label``/``prev_class`` say what it replaced);
    every version stays in the history. ``expected_version`` as in ``save_draft``.

    Raises ``QuotaFullError`` if the annotator holds no seat and both seats are
    taken by others (their draft stays saved).
    """
    label, failure_class = validate_label(label, failure_class)

    def _fn(s: Session) -> LabelRecord:
        a = resolve_audit(s, audit)
        ann = annotator_row(s, annotator, create=True)
        _audit_turn(s, a.id, turn_id)
        _check_version(s, a.id, turn_id, ann, expected_version)
        seat = _try_claim(s, a, turn_id, ann)
        if seat is None:
            raise QuotaFullError(f"turn '{turn_id}' already has {a.labels_per_turn} labels "
                                 "from other annotators")
        prev = latest_submit(s, a.id, turn_id, ann.id)
        ev = append_event(s, a.id, turn_id, ann.id, "submit", label=label, failure_class=failure_class,
                          note=note, prev_label=prev.label if prev else None,
                          prev_class=prev.failure_class if prev else None)
        if seat.submitted_at is None:
            s.execute(update(Seat).where(Seat.id == seat.id, Seat.annotator_id == ann.id)
                      .values(submitted_at=ev.created_at))
        return _record(ev, ann.name)
    return run_write(db, _fn)


def skip_turn(audit: AuditRef, annotator: str, turn_id: str, db: DB = None) -> None:
    """Give the turn back: the seat is released and the turn goes to the end of this queue."""
    def _fn(s: Session) -> None:
        a = resolve_audit(s, audit)
        ann = annotator_row(s, annotator, create=True)
        _audit_turn(s, a.id, turn_id)
        seat = _my_seat(s, a.id, turn_id, ann)
        if seat is not None and seat.submitted_at is not None:
            raise AuditError("this turn is already submitted; change its label instead of skipping")
        if seat is not None:
            s.execute(update(Seat).where(Seat.id == seat.id, Seat.submitted_at.is_(None))
                      .values(annotator_id=None, claimed_at=None))
        append_event(s, a.id, turn_id, ann.id, "skip")
    run_write(db, _fn)


def open_turn(audit: AuditRef, annotator: str, turn_id: str, db: DB = None) -> QueueItem:
    """A turn the annotator already labelled (to review or change it): blind payload, draft, current label."""
    with read_session(db) as s:
        a = resolve_audit(s, audit)
        t = _audit_turn(s, a.id, turn_id)
        ann = annotator_row(s, annotator, create=False)
        if ann is None:
            return QueueItem(a.id, t.turn_id, t.dialogue_id, _turn_info(t).payload, None, False, None)
        cur = latest_submit(s, a.id, turn_id, ann.id)
        return QueueItem(a.id, t.turn_id, t.dialogue_id, _turn_info(t).payload, _draft(s, a.id, turn_id, ann),
                         False, _record(cur, ann.name) if cur is not None else None,
                         version=_version(s, a.id, turn_id, ann))


def annotator_labels(audit: AuditRef, annotator: str, db: DB = None) -> dict[str, LabelRecord]:
    """turn_id -> this annotator's current (latest submitted) label, for review/editing."""
    from db.repository import current_labels
    return {tid: by[annotator] for tid, by in current_labels(audit, db=db).items() if annotator in by}


def progress(audit: AuditRef, annotator: Optional[str] = None, db: DB = None) -> Progress:
    """Counts for the progress bar: overall, per annotator and, if given, for ``annotator``."""
    with read_session(db) as s:
        a = resolve_audit(s, audit)
        cutoff = _cutoff(s, a)
        names = dict(s.exec(select(Annotator.id, Annotator.name)).all())
        seats = s.exec(select(Seat).where(Seat.audit_id == a.id)).all()
        n_turns = len({x.turn_id for x in seats})
        by_turn: dict[str, int] = {}
        per: dict[str, int] = {}
        me = next((i for i, n in names.items() if n == annotator), None) if annotator else None
        mine_sub = mine_prog = 0
        avail: set[str] = set()
        mine_done: set[str] = set()
        for x in seats:
            if x.submitted_at is not None:
                by_turn[x.turn_id] = by_turn.get(x.turn_id, 0) + 1
                per[names[x.annotator_id]] = per.get(names[x.annotator_id], 0) + 1
            if me is not None and x.annotator_id == me:
                if x.submitted_at is None:
                    mine_prog += 1
                    avail.add(x.turn_id)
                else:
                    mine_sub += 1
                    mine_done.add(x.turn_id)
            elif x.annotator_id is None or (x.submitted_at is None and _older(x.claimed_at, cutoff)):
                avail.add(x.turn_id)
        avail -= mine_done
        complete = sum(1 for v in by_turn.values() if v >= a.labels_per_turn)
        partial = sum(1 for v in by_turn.values() if 0 < v < a.labels_per_turn)
        return Progress(
            n_turns=n_turns, labels_needed=n_turns * a.labels_per_turn,
            labels_submitted=sum(by_turn.values()), turns_complete=complete, turns_partial=partial,
            turns_untouched=n_turns - complete - partial, per_annotator=per,
            mine_submitted=mine_sub if annotator else None,
            mine_in_progress=mine_prog if annotator else None,
            mine_remaining=len(avail) if annotator else None)


__all__ = ["ChangedElsewhereError", "blind_payload", "turn_index", "create_audit_from_sample", "QueueItem", "Progress", "next_turn_for", "save_draft", "get_draft", "submit_label",
           "skip_turn", "open_turn", "annotator_labels", "progress"]
