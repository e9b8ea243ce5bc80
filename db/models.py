"""Tables of the blind two-annotator audit (sqlmodel; SQLite and PostgreSQL).

Why this shape:

* ``LabelEvent`` is the only place labels live and it is append-only: every
  draft autosave, submission, change and skip is a new row numbered ``seq``
  per (audit, turn, annotator). The current label is *derived* (the latest
  ``submit`` row), so history is never lost and nothing is ever deleted. The
  unique ``seq`` makes two racing writers for the same key collide instead of
  both reading the same "old" label; the loser retries (see ``db.session``).
* ``Seat`` holds the two annotator places of every sampled turn. A seat is
  claimed with a compare-and-set UPDATE (``annotator_id IS NULL``), so at most
  two annotators can ever hold a turn, and ``UNIQUE(audit, turn, annotator)``
  stops one person from taking both seats (NULLs are distinct in SQLite and
  PostgreSQL). Skipping releases the seat; the skip itself is logged as an event.
* ``AuditTurn`` keeps the stratum and inclusion probability of every sampled
  turn (for inverse-probability weighting) and a *blind* copy of the turn
  (no gold, no meta); gold lives in separate columns that annotators never see.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Optional

from sqlalchemy import Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

LABELS = ("failure", "acceptable", "unsure")
CLASSES = ("IUV", "WNF", "PC", "UV")
# A failure may carry several classes: ``failure_class`` then holds the canonical list, the classes in
# CLASSES order joined by "," ("IUV,UV"); a single class ("PC") is the one-element list, so rows written
# before multi-class labels read unchanged. ``db.repository.split_classes`` / ``join_classes`` convert.
CLASS_SEP = ","
EVENT_KINDS = ("draft", "submit", "skip")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


ROLES = ("lead", "annotator")


class Annotator(SQLModel, table=True):
    """An account: a person who labels turns (role ``annotator``) or runs audits (role ``lead``).

    ``name_key`` is the normalised name (NFKC, whitespace collapsed, casefolded), unique, so
    " Bob " and "bob" are the same person and can never hold the two seats of one turn.
    ``password_hash`` is an argon2id hash (``db.accounts``); an account without one (made by the
    programmatic queue API, e.g. scripts and tests) cannot sign in to the app.
    ``session_version`` is part of every session token: signing out bumps it, which revokes
    every token issued before.
    """

    __tablename__ = "sage_annotator"
    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True, max_length=200)
    name_key: Optional[str] = Field(default=None, index=True, unique=True, max_length=200)
    role: str = Field(default="annotator", max_length=20, sa_column_kwargs={"server_default": "annotator"})
    password_hash: Optional[str] = Field(default=None, max_length=300)
    session_version: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    created_at: datetime = Field(default_factory=utcnow)


class ServerSecret(SQLModel, table=True):
    """Server-wide secrets generated on first use (the session-token key when SAGE_SESSION_SECRET is unset)."""

    __tablename__ = "sage_server_secret"
    name: str = Field(primary_key=True, max_length=100)
    value: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)


class Audit(SQLModel, table=True):
    """One audit: a stratified sample of turns, each to be labelled twice."""

    __tablename__ = "sage_audit"
    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(unique=True, max_length=200)
    created_at: datetime = Field(default_factory=utcnow)
    seed: int = 0
    labels_per_turn: int = 2
    abandon_after_s: int = 1800  # an unsubmitted claim older than this is free again
    design_json: str = Field(default="{}", sa_column=Column(Text, nullable=False))


class AuditStratum(SQLModel, table=True):
    """A stratum of the sampling design: N_h population turns, n_h drawn, pi = n_h / N_h."""

    __tablename__ = "sage_audit_stratum"
    __table_args__ = (UniqueConstraint("audit_id", "name"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    audit_id: int = Field(foreign_key="sage_audit.id", index=True)
    name: str = Field(max_length=200)
    population: int
    sampled: int
    inclusion_prob: float


class AuditTurn(SQLModel, table=True):
    """A sampled turn: stratum, inclusion probability, blind payload, hidden gold."""

    __tablename__ = "sage_audit_turn"
    __table_args__ = (UniqueConstraint("audit_id", "turn_id"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    audit_id: int = Field(foreign_key="sage_audit.id", index=True)
    turn_id: str = Field(max_length=300)
    dialogue_id: str = Field(max_length=300)
    turn_index: int = 0  # position of the turn inside its dialogue
    position: int = 0  # queue order inside the audit (shuffled at creation)
    corpus: str = Field(default="default", max_length=200)
    stratum: str = Field(max_length=200)
    inclusion_prob: float = 1.0
    payload_json: str = Field(sa_column=Column(Text, nullable=False))  # blind Turn.to_dict()
    gold_label: Optional[str] = None
    gold_class: Optional[str] = None


class Seat(SQLModel, table=True):
    """One of the two annotator places of a sampled turn."""

    __tablename__ = "sage_seat"
    __table_args__ = (
        UniqueConstraint("audit_id", "turn_id", "seat"),
        UniqueConstraint("audit_id", "turn_id", "annotator_id"),
        Index("ix_sage_seat_annotator", "audit_id", "annotator_id"),
    )
    id: Optional[int] = Field(default=None, primary_key=True)
    audit_id: int = Field(foreign_key="sage_audit.id", index=True)
    turn_id: str = Field(max_length=300)
    seat: int  # 1 .. labels_per_turn
    annotator_id: Optional[int] = Field(default=None, foreign_key="sage_annotator.id")
    claimed_at: Optional[datetime] = None  # refreshed by every draft save (activity)
    submitted_at: Optional[datetime] = None  # set once: the label counts toward the quota


class LabelEvent(SQLModel, table=True):
    """Append-only log of drafts, submissions (old -> new) and skips."""

    __tablename__ = "sage_label_event"
    __table_args__ = (
        UniqueConstraint("audit_id", "turn_id", "annotator_id", "seq"),
        Index("ix_sage_event_key", "audit_id", "annotator_id", "turn_id"),
    )
    id: Optional[int] = Field(default=None, primary_key=True)
    audit_id: int = Field(foreign_key="sage_audit.id", index=True)
    turn_id: str = Field(max_length=300)
    annotator_id: int = Field(foreign_key="sage_annotator.id")
    seq: int  # 1, 2, ... per (audit, turn, annotator)
    kind: str = Field(max_length=10)  # draft | submit | skip
    label: Optional[str] = None  # failure | acceptable | unsure (None for an empty draft / skip)
    failure_class: Optional[str] = None  # failure only: canonical class list, e.g. "PC" or "IUV,UV"
    note: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    prev_label: Optional[str] = None  # submit only: the label this one replaces
    prev_class: Optional[str] = None
    created_at: datetime = Field(default_factory=utcnow)


class AuditGuidelines(SQLModel, table=True):
    """What annotators of one audit read: the lead's Markdown and the workflow specs of its turns.

    ``markdown`` empty = the guidelines generated from the specs (``audit.guidelines``).
    ``workflows_json`` holds the specs (schema only: slots, required, order, outcome), stored at
    creation so the annotation page needs no slice; it carries no gold, meta or verdict.
    A table of its own (not columns of ``sage_audit``) so existing databases gain it by create_all.
    """

    __tablename__ = "sage_audit_guidelines"
    id: Optional[int] = Field(default=None, primary_key=True)
    audit_id: int = Field(foreign_key="sage_audit.id", unique=True, index=True)
    markdown: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    workflows_json: str = Field(default="{}", sa_column=Column(Text, nullable=False, default="{}"))
    updated_at: datetime = Field(default_factory=utcnow)
    updated_by: str = Field(default="", max_length=200)


class Adjudication(SQLModel, table=True):
    """The lead's resolution of a disagreement: append-only, the latest row per turn is the consensus.

    Kept apart from ``LabelEvent`` so raw labels (and every agreement statistic on them)
    never change when a disagreement is resolved.
    """

    __tablename__ = "sage_adjudication"
    __table_args__ = (UniqueConstraint("audit_id", "turn_id", "seq"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    audit_id: int = Field(foreign_key="sage_audit.id", index=True)
    turn_id: str = Field(max_length=300)
    seq: int  # 1, 2, ... per (audit, turn)
    label: str = Field(max_length=20)
    failure_class: Optional[str] = None
    reason: str = Field(sa_column=Column(Text, nullable=False))
    lead: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)


__all__ = ["Annotator", "ServerSecret", "ROLES", "Audit", "AuditStratum", "AuditTurn", "Seat", "LabelEvent", "AuditGuidelines",
           "Adjudication", "LABELS", "CLASSES", "CLASS_SEP", "EVENT_KINDS", "utcnow"]
