"""Turn bad user input into ``st.error`` instead of a traceback.

Every page body runs inside :func:`guard`; ``SageInputError`` already names
the file, line and field, ``ModelUnavailableError`` names the missing model.
"""
from __future__ import annotations

from contextlib import contextmanager

import streamlit as st

from sage_core import ModelUnavailableError, SageInputError


def message(exc: BaseException) -> str:
    """The user-facing one-liner for an input or model error."""
    if isinstance(exc, ModelUnavailableError):
        return f"Model unavailable: {exc}"
    return f"Input error: {exc}"


@contextmanager
def guard():
    """Show input/model errors with ``st.error`` and stop the page cleanly."""
    try:
        yield
    except (SageInputError, ModelUnavailableError) as exc:
        st.error(message(exc))
