"""Shared fixtures for the audit database tests: a fresh SQLite file or PostgreSQL database.

PostgreSQL tests need ``SAGE_TEST_POSTGRES_URL`` (``eval "$(scripts/start_postgres.sh)"``);
each test gets its own freshly created database, dropped afterwards.
"""
from __future__ import annotations

import os
import uuid

import pytest

PG_ENV = "SAGE_TEST_POSTGRES_URL"
PG_SKIP = (f"{PG_ENV} is not set: start a server with "
           f"'eval \"$(scripts/start_postgres.sh)\"' to run the PostgreSQL tests")


def _fresh_pg_database(base_url: str):
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    name = "sage_t_" + uuid.uuid4().hex[:12]
    admin = create_engine(base_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(base_url).set(database=name).render_as_string(hide_password=False)
    return admin, name, url


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'audit.db'}"


@pytest.fixture
def pg_url():
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip(PG_SKIP)
    from sqlalchemy import text

    from db.session import dispose_all
    admin, name, url = _fresh_pg_database(base)
    yield url
    dispose_all()
    with admin.connect() as c:
        c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """Run the test on SQLite and on PostgreSQL (skipped when no server is configured)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'audit.db'}"
    else:
        yield request.getfixturevalue("pg_url")


def make_audit(url, n=6, name="audit-1", labels_per_turn=2, abandon_after_s=1800, dialogues=2):
    """A small audit of ``n`` turns over ``dialogues`` dialogues, one stratum, pi = 0.5."""
    from db import StratumInfo, create_audit
    turns = [dict(turn_id=f"t{i}", dialogue_id=f"d{i % dialogues}", turn_index=i // dialogues,
                  position=i, stratum="all", inclusion_prob=0.5,
                  payload={"turn_id": f"t{i}", "agent": f"reply {i}"},
                  gold_label="failure" if i % 2 else "acceptable", gold_class="IUV" if i % 2 else None)
             for i in range(n)]
    return create_audit(name, turns, [StratumInfo("all", 2 * n, n, 0.5)], labels_per_turn=labels_per_turn,
                        abandon_after_s=abandon_after_s, db=url)
