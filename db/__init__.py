"""Audit storage: sqlmodel tables, engines/transactions, and row access.

Public API (pages call these; nothing here imports streamlit):

    from db import get_engine, init_db, run_write, read_session     # db.session
    from db import sign_in, create_audit, list_audits, get_audit, list_annotators,
                   audit_strata, audit_turns, label_history, current_labels, count_events
    from db import get_guidelines, save_guidelines                  # per-audit Markdown + workflow specs
    from db import adjudicate, adjudications, adjudication_history  # lead's resolutions (own table)
    from db import AuditError, QuotaFullError                       # SageInputError subclasses
    from db import accounts  # create_account, authenticate, issue_token, verify_token, sign_out (db.accounts)

Every function takes ``db=`` : an ``Engine``, a URL (``sqlite:///path.db`` or
``postgresql+psycopg://user@host:port/name``) or None for
``sage_core.data.settings.get_settings().database_url`` (env ``SAGE_DATABASE_URL``).
Tables are created on first use. There is no delete API: labels are an
append-only history (``db.models.LabelEvent``); the queue logic (seats,
drafts, skips, progress) lives in ``audit.assignment``.
"""
from . import accounts  # noqa: F401,E402
from .models import Adjudication, Annotator, Audit, AuditGuidelines, AuditStratum, AuditTurn, LabelEvent, Seat  # noqa: F401
from .repository import (  # noqa: F401
                         AdjudicationRecord,
                         GuidelinesInfo,
                         adjudicate,
                         adjudication_history,
                         adjudications,
                         get_guidelines,
                         save_guidelines,
                         AnnotatorInfo,
                         AuditError,
                         AuditInfo,
                         AuditTurnInfo,
                         LabelRecord,
                         QuotaFullError,
                         StratumInfo,
                         audit_strata,
                         audit_turns,
                         category,
                         count_events,
                         create_audit,
                         current_labels,
                         get_audit,
                         label_history,
                         list_annotators,
                         list_audits,
                         join_classes,
                         sign_in,
                         split_classes,
                         validate_label,
)
from .session import dispose_all, get_engine, init_db, make_engine, read_session, run_write  # noqa: F401
