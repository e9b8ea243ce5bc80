"""Engines and transactions that survive concurrent annotators.

SQLite: WAL journal (readers never block the writer), ``synchronous=FULL``
(a committed label survives a crash or power loss), a busy timeout, foreign
keys on, and write transactions opened with ``BEGIN IMMEDIATE`` so two
writers queue on the lock instead of failing when a reader upgrades.
Whatever still fails with "database is locked" (or, on PostgreSQL, a
serialization failure / deadlock / unique-key race) is retried by
``run_write`` with bounded exponential backoff and jitter.

The database is chosen by, in order: an explicit ``Engine``, an explicit URL,
``sage_core.data.settings.get_settings().database_url`` (env ``SAGE_DATABASE_URL``).
PostgreSQL URLs look like ``postgresql+psycopg://user@127.0.0.1:54329/sage``.
"""
from __future__ import annotations

import logging
import random
import threading
import time
import weakref
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, TypeVar, Union

from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlmodel import Session, SQLModel, create_engine

from . import models  # noqa: F401  (registers the tables on SQLModel.metadata)

log = logging.getLogger(__name__)
T = TypeVar("T")
DB = Union[str, Engine, None]

DEFAULT_BUSY_TIMEOUT_MS = 5000
RETRY_ATTEMPTS = 10
RETRY_BASE_S = 0.02
RETRY_MAX_S = 1.0
INTEGRITY_ATTEMPTS = 4  # a unique-key race resolves on the next read; more means a real conflict

_engines: dict[str, Engine] = {}
_engines_lock = threading.Lock()
_initialised: "weakref.WeakSet[Engine]" = weakref.WeakSet()  # engines whose tables exist


def database_url(url: Optional[str] = None) -> str:
    if url:
        return url
    from sage_core import get_settings
    return get_settings().database_url


def make_engine(url: Optional[str] = None, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
                echo: bool = False) -> Engine:
    """A new engine for ``url`` with the SQLite pragmas / PostgreSQL pool settings above."""
    url = database_url(url)
    u = make_url(url)
    if u.get_backend_name() == "sqlite":
        if u.database in (None, "", ":memory:"):
            raise ValueError("use a file-backed SQLite database (sqlite:///path.db): "
                             "an in-memory one is not shared between sessions or processes")
        engine = create_engine(url, echo=echo,
                               connect_args={"timeout": busy_timeout_ms / 1000.0,
                                             "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn, _record):  # pragma: no cover - exercised via every test
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (below)
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn):
            mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
            conn.exec_driver_sql(f"BEGIN {mode}")
    else:
        engine = create_engine(url, echo=echo, pool_pre_ping=True)
    return engine


def get_engine(db: DB = None) -> Engine:
    """The shared engine for ``db`` (Engine, URL or settings), tables created on first use."""
    if isinstance(db, Engine):
        engine = db
    else:
        url = database_url(db)
        with _engines_lock:
            engine = _engines.get(url)
            if engine is None:
                engine = _engines[url] = make_engine(url)
    if engine not in _initialised:
        init_db(engine)
    return engine


def init_db(db: DB = None) -> Engine:
    """Create the tables if they do not exist (idempotent, retried on lock)."""
    if not isinstance(db, Engine):
        return get_engine(db)  # the cached engine for this URL, initialised once
    engine = db

    def _create() -> None:
        SQLModel.metadata.create_all(engine)

    for attempt in range(RETRY_ATTEMPTS):
        try:
            _create()
            break
        except (OperationalError, IntegrityError, DBAPIError) as exc:
            # concurrent create_all on PostgreSQL can race on the type/table catalog
            if attempt == RETRY_ATTEMPTS - 1 or not (is_retryable(exc) or isinstance(exc, IntegrityError)):
                raise
            time.sleep(_delay(attempt))
    _initialised.add(engine)
    return engine


def dispose_all() -> None:
    """Close every cached engine (tests, and after fork in worker processes)."""
    with _engines_lock:
        for e in _engines.values():
            e.dispose()
        _engines.clear()
        _initialised.clear()


def is_retryable(exc: BaseException) -> bool:
    """Lock / busy / serialization / deadlock errors that a retry can cure."""
    orig = getattr(exc, "orig", exc)
    code = getattr(orig, "sqlstate", None) or getattr(getattr(orig, "diag", None), "sqlstate", None)
    if code in ("40001", "40P01", "55P03"):
        return True
    msg = str(orig).lower()
    return "database is locked" in msg or "database is busy" in msg or "database table is locked" in msg


def _delay(attempt: int) -> float:
    return min(RETRY_MAX_S, RETRY_BASE_S * (2 ** attempt)) * (0.5 + random.random() / 2)


def run_write(db: DB, fn: Callable[[Session], T], *, attempts: int = RETRY_ATTEMPTS,
              on_retry: Optional[Callable[[int, BaseException], None]] = None) -> T:
    """Run ``fn(session)`` in one write transaction; commit, or retry the whole of it.

    ``fn`` must be safe to re-run (it re-reads what it needs). Retries on lock
    and serialization errors (bounded exponential backoff) and, a few times, on
    unique-key races (two writers took the same ``seq``/name at once).
    """
    engine = get_engine(db)
    writer = engine.execution_options(sqlite_begin="IMMEDIATE")
    integrity_left = INTEGRITY_ATTEMPTS
    for attempt in range(attempts):
        session = Session(writer, expire_on_commit=False)
        try:
            result = fn(session)
            session.commit()
            return result
        except IntegrityError as exc:
            session.rollback()
            integrity_left -= 1
            if integrity_left <= 0 or attempt == attempts - 1:
                raise
            err: BaseException = exc
        except (OperationalError, DBAPIError) as exc:
            session.rollback()
            if not is_retryable(exc) or attempt == attempts - 1:
                raise
            err = exc
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()
        if on_retry is not None:
            on_retry(attempt + 1, err)
        log.debug("retrying write after %s (attempt %d)", err, attempt + 1)
        time.sleep(_delay(attempt))
    raise RuntimeError("unreachable")  # pragma: no cover


def db_now(session: Session):
    """The database server's current time (timezone-aware UTC), never the writer's clock.

    Seat leases compare claim times written with this clock, so a writer whose own clock
    is hours off can neither take over a live seat nor keep a dead one. SQLite is embedded:
    its clock is the host's (``strftime('%f')`` keeps milliseconds); PostgreSQL: ``now()``
    of the server, converted to UTC.
    """
    from datetime import datetime, timezone

    from sqlalchemy import text
    if session.get_bind().dialect.name == "sqlite":
        v = session.execute(text("SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')")).scalar_one()
        return datetime.strptime(v, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)
    v = session.execute(text("SELECT (now() AT TIME ZONE 'UTC')")).scalar_one()
    return v.replace(tzinfo=timezone.utc) if v.tzinfo is None else v.astimezone(timezone.utc)


@contextmanager
def read_session(db: DB = None) -> Iterator[Session]:
    """A short read-only session (a consistent snapshot in WAL mode)."""
    session = Session(get_engine(db), expire_on_commit=False)
    try:
        yield session
    finally:
        session.rollback()
        session.close()


__all__ = ["make_engine", "get_engine", "init_db", "run_write", "read_session", "is_retryable",
           "dispose_all", "database_url", "DB", "db_now"]
