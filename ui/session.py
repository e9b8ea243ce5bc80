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
    """Process-wide: (account id, content hash) -> slices loaded in open sessions, so deep links can name one.

    Keyed by the account that loaded the slice: a ``?slice=`` hash alone never opens
    another person's slice, only the same account's (e.g. in a new tab).
    Bounded by bytes and released when the sessions that loaded or opened a slice end (``ui.memory``).
    """
    return register(SessionBoundCache("loaded slices"))


def _owner() -> int | None:
    from .auth import KEY
    ident = st.session_state.get(KEY) if _has_context() else None
    return getattr(ident, "id", None)


def _has_context() -> bool:
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        return get_script_run_ctx() is not None
    except Exception:  # noqa: BLE001
        return False


def _from_link() -> LoadedSlice | None:
    """The slice named by ``?slice=<content hash>`` if this account loaded it (a new tab is a new session)."""
    try:
        h = st.query_params.get("slice")
    except Exception:  # noqa: BLE001 - no script context (plain Python)
        return None
    owner = _owner()
    return _loaded().get((owner, h)) if h and owner is not None else None


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
    _loaded()[(_owner(), ls.content_hash)] = ls
    try:
        st.query_params["slice"] = ls.content_hash
    except Exception:  # noqa: BLE001 - no script context
        pass


def inspector_link(turn_id: str, ls: LoadedSlice | None = None, run_key: str | None = None) -> str:
    """Relative deep link to the Inspector for one turn, naming the slice (and run) it belongs to."""
    from urllib.parse import quote, urlencode

    ls = ls or peek_slice()
    q = {"turn": turn_id}
    if (_owner(), ls.content_hash) in _loaded():  # the demo needs no slice parameter: a new session opens on it
        q["slice"] = ls.content_hash
    if run_key:
        q["run"] = run_key
    return "Inspector?" + urlencode(q, quote_via=quote)


def data_roots() -> list:
    """Folders whose files the lead may load by path: ``SAGE_DATA_ROOTS`` (``os.pathsep``-separated),
    default the working directory and ``../shared/data``. Read here, by the app's entry layer."""
    from pathlib import Path
    raw = os.environ.get("SAGE_DATA_ROOTS", "")
    roots = [p for p in raw.split(os.pathsep) if p.strip()] or [os.getcwd(), os.path.join("..", "shared", "data")]
    return [Path(p).expanduser().resolve() for p in roots]


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
    if ls is not None and (_owner(), ls.content_hash) in _loaded() and st.query_params.get("slice") != ls.content_hash:
        st.query_params["slice"] = ls.content_hash


def slice_caption() -> None:
    """One line naming the slice a page works on (every page but Home, where it is loaded)."""
    ls = current_slice()
    from .render import md
    st.caption(f"Slice: **{md(ls.name)}** · {len(ls.turns)} turns, {ls.n_dialogues} dialogues · loaded on the "
               "Home page")
