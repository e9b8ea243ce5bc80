"""The slice every page works on, kept in ``st.session_state``.

Why a helper: any page can be opened first (deep links, AppTest), so each one
asks for the current slice and gets the embedded demo when nothing was loaded.
"""
from __future__ import annotations

import os

import streamlit as st

from .loading import LoadedSlice, load_demo
from .memory import SessionBoundCache, register

KEY = "sage_slice"


@st.cache_resource(show_spinner=False)
def _demo() -> LoadedSlice:
    return load_demo()


@st.cache_resource(show_spinner=False)
def _loaded() -> SessionBoundCache:
    """Process-wide: content hash -> slices loaded in open sessions, so deep links can name one.

    Bounded by bytes and released when the sessions that loaded or opened a slice end (``ui.memory``).
    """
    return register(SessionBoundCache("loaded slices"))


def _from_link() -> LoadedSlice | None:
    """The slice named by ``?slice=<content hash>`` (a deep link opened in a new tab is a new session)."""
    try:
        h = st.query_params.get("slice")
    except Exception:  # noqa: BLE001 - no script context (plain Python)
        return None
    return _loaded().get(h) if h else None


def current_slice() -> LoadedSlice:
    linked = _from_link()
    if linked is not None and st.session_state.get(KEY) is not linked:
        st.session_state[KEY] = linked
    if KEY not in st.session_state:
        st.session_state[KEY] = _demo()
    return st.session_state[KEY]


def peek_slice() -> LoadedSlice:
    """The current slice without storing anything in this session (for the blind annotation page)."""
    return st.session_state.get(KEY) or _demo()


def set_slice(ls: LoadedSlice) -> None:
    st.session_state[KEY] = ls
    _loaded()[ls.content_hash] = ls
    try:
        st.query_params["slice"] = ls.content_hash
    except Exception:  # noqa: BLE001 - no script context
        pass


def inspector_link(turn_id: str, ls: LoadedSlice | None = None, run_key: str | None = None) -> str:
    """Relative deep link to the Inspector for one turn, naming the slice (and run) it belongs to."""
    from urllib.parse import quote, urlencode

    ls = ls or peek_slice()
    q = {"turn": turn_id}
    if ls.content_hash in _loaded():  # the demo needs no slice parameter: a new session opens on it
        q["slice"] = ls.content_hash
    if run_key:
        q["run"] = run_key
    return "Inspector?" + urlencode(q, quote_via=quote)


def annotation_only() -> bool:
    """``SAGE_ANNOTATION_ONLY=1``: serve only the blind annotation page, without audit creation."""
    return os.environ.get("SAGE_ANNOTATION_ONLY", "").strip().lower() in ("1", "true", "yes")


def keep_slice_in_url() -> None:
    """Put ``?slice=<hash>`` in the URL whenever a loaded (non-demo) slice is current.

    Called from the entrypoint on every run: page switches clear query parameters,
    and without it a browser refresh or a copied URL would open on the demo slice.
    """
    ls = st.session_state.get(KEY)
    linked = _from_link()
    if ls is None and linked is not None:  # a new session opened from a URL naming a slice
        st.session_state[KEY] = ls = linked
    if ls is not None and ls.content_hash in _loaded() and st.query_params.get("slice") != ls.content_hash:
        st.query_params["slice"] = ls.content_hash


def slice_caption() -> None:
    """One line naming the slice a page works on (every page but Home, where it is loaded)."""
    ls = current_slice()
    st.caption(f"Slice: **{ls.name}** · {len(ls.turns)} turns, {ls.n_dialogues} dialogues · loaded on the "
               "Home page")
