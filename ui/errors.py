"""Turn bad user input into ``st.error`` instead of a traceback.

Every page body runs inside :func:`guard`; ``SageInputError`` already names
the file, line and field, ``ModelUnavailableError`` names the missing model.
Database failures (disk full, read-only or unreachable database) are shown as
one line with the database's own reason and what to check -- never the SQL,
the parameters or a traceback with server paths.
"""
from __future__ import annotations

from contextlib import contextmanager

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from sage_core import ModelUnavailableError, SageInputError


def database_reason(exc: SQLAlchemyError) -> str:
    """The driver's one-line reason ('database or disk is full'), without SQL or parameters."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def message(exc: BaseException) -> str:
    """The user-facing one-liner for an input, model or database error, escaped for Markdown.

    Error texts quote what the user typed (paths, names, turn ids); ``st.error`` renders
    Markdown, so they are escaped (``ui.render.md``) like every other user string.
    """
    from .render import md
    if isinstance(exc, ModelUnavailableError):
        return f"Model unavailable: {md(exc)}"
    if isinstance(exc, SQLAlchemyError):
        return (f"Database error: {md(database_reason(exc))}. Check SAGE_DATABASE_URL, free disk space and "
                "permissions, then try again.")
    return f"Input error: {md(exc)}"


@contextmanager
def guard():
    """Show input/model/database errors with ``st.error`` and stop the page cleanly."""
    try:
        yield
    except (SageInputError, ModelUnavailableError, SQLAlchemyError) as exc:
        st.error(message(exc))
