"""The slice every page works on, kept in ``st.session_state``.

Why a helper: any page can be opened first (deep links, AppTest), so each one
asks for the current slice and gets the embedded demo when nothing was loaded.
"""
from __future__ import annotations

import os

import streamlit as st

from .loading import LoadedSlice, load_demo

KEY = "sage_slice"


@st.cache_resource(show_spinner=False)
def _demo() -> LoadedSlice:
    return load_demo()


def current_slice() -> LoadedSlice:
    if KEY not in st.session_state:
        st.session_state[KEY] = _demo()
    return st.session_state[KEY]


def peek_slice() -> LoadedSlice:
    """The current slice without storing anything in this session (for the blind annotation page)."""
    return st.session_state.get(KEY) or _demo()


def set_slice(ls: LoadedSlice) -> None:
    st.session_state[KEY] = ls


def annotation_only() -> bool:
    """``SAGE_ANNOTATION_ONLY=1``: serve only the blind annotation page, without audit creation."""
    return os.environ.get("SAGE_ANNOTATION_ONLY", "").strip().lower() in ("1", "true", "yes")
