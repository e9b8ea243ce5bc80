"""Process-wide app caches bounded by bytes and released when the sessions that use them end.

Why: the app keeps loaded slices (for deep links) and finished runs (so page
switches never re-run) across sessions. Unbounded, a 195 MB upload kept
1.1 GB after its session closed and every further slice added to it. Here each
entry has an estimated size and the sessions that used it; an entry no open
session uses is dropped, and the least recently used go first when the total
passes the cap (``SAGE_APP_CACHE_MB``, default 1024, shared by the slice and
run caches). After dropping, freed heap is handed back to the OS (glibc
``malloc_trim``) so the server's resident memory falls again.
"""
from __future__ import annotations

import ctypes
import gc
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterator, Optional

PRUNE_EVERY_S = 15.0


def cache_budget_bytes() -> int:
    try:
        mb = float(os.environ.get("SAGE_APP_CACHE_MB", "1024"))
    except ValueError:
        mb = 1024.0
    return int(max(mb, 1.0) * 1024 * 1024)


def current_session_id() -> Optional[str]:
    """The Streamlit session running this script, None outside one."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx(suppress_warning=True)
    except Exception:  # noqa: BLE001 - no Streamlit context (plain Python, tests)
        return None
    return ctx.session_id if ctx is not None else None


def session_alive(session_id: str) -> bool:
    """Whether the server still holds this session (connected, or disconnected but resumable)."""
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return True  # AppTest / bare mode: no runtime to ask; keep entries (they are still bounded)
        return Runtime.instance()._session_mgr.get_session_info(session_id) is not None  # noqa: SLF001
    except Exception:  # noqa: BLE001 - be conservative: never drop what a live session may need
        return True


def release_heap() -> None:
    """Collect garbage and return freed heap pages to the OS (glibc only; a no-op elsewhere)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


@dataclass
class _Entry:
    value: Any
    nbytes: int
    sessions: set = field(default_factory=set)
    pinned: bool = False


class SessionBoundCache:
    """A dict-like LRU bounded by estimated bytes, whose entries die with the sessions that used them."""

    def __init__(self, name: str, max_bytes: Callable[[], int] = cache_budget_bytes,
                 alive: Callable[[str], bool] = session_alive):
        self.name = name
        self._max_bytes = max_bytes
        self._alive = alive
        self._d: "OrderedDict[Hashable, _Entry]" = OrderedDict()
        self._lock = threading.RLock()

    # --- dict-like ---------------------------------------------------------------
    def put(self, key: Hashable, value: Any, nbytes: int, pinned: bool = False) -> None:
        sid = current_session_id()
        with self._lock:
            old = self._d.pop(key, None)
            e = _Entry(value, int(nbytes), set(old.sessions) if old else set(), pinned)
            if sid:
                e.sessions.add(sid)
            self._d[key] = e
            self._evict_over_cap()

    def get(self, key: Hashable, default: Any = None) -> Any:
        sid = current_session_id()
        with self._lock:
            e = self._d.get(key)
            if e is None:
                return default
            self._d.move_to_end(key)
            if sid:
                e.sessions.add(sid)
            return e.value

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._d

    def __getitem__(self, key: Hashable) -> Any:
        v = self.get(key, _MISSING)
        if v is _MISSING:
            raise KeyError(key)
        return v

    def __setitem__(self, key: Hashable, value: Any) -> None:
        self.put(key, value, estimate_bytes(value))

    def __len__(self) -> int:
        return len(self._d)

    def items(self) -> list[tuple[Hashable, Any]]:
        with self._lock:
            return [(k, e.value) for k, e in self._d.items()]

    def keys(self) -> Iterator[Hashable]:
        return iter([k for k, _ in self.items()])

    def values(self) -> list[Any]:
        return [v for _, v in self.items()]

    def clear(self) -> None:
        with self._lock:
            self._d.clear()

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return sum(e.nbytes for e in self._d.values())

    # --- release -----------------------------------------------------------------
    def _evict_over_cap(self) -> int:
        cap, dropped = self._max_bytes(), 0
        total = sum(e.nbytes for e in self._d.values())
        for k in list(self._d):
            if total <= cap:
                break
            e = self._d[k]
            if e.pinned or len(self._d) == 1:
                continue
            total -= e.nbytes
            del self._d[k]
            dropped += 1
        return dropped

    def prune(self) -> int:
        """Drop entries every session of which has ended, then the LRU ones over the cap. Returns the count."""
        with self._lock:
            dead = [k for k, e in self._d.items()
                    if not e.pinned and e.sessions and not any(self._alive(s) for s in e.sessions)]
            for k in dead:
                del self._d[k]
            for e in self._d.values():
                e.sessions = {s for s in e.sessions if self._alive(s)}
            return len(dead) + self._evict_over_cap()


_MISSING = object()
_CACHES: list[SessionBoundCache] = []
_PRUNER: Optional[threading.Thread] = None


def register(cache: SessionBoundCache) -> SessionBoundCache:
    """Track ``cache`` for the background pruner (started once per process)."""
    global _PRUNER
    _CACHES.append(cache)
    if _PRUNER is None or not _PRUNER.is_alive():
        _PRUNER = threading.Thread(target=_prune_forever, name="sage-cache-pruner", daemon=True)
        _PRUNER.start()
    return cache


def reap_expired_sessions() -> int:
    """Let Streamlit forget closed tabs' sessions whose reconnect window has passed, and shut them down; returns
    how many went.

    Streamlit keeps a closed tab's session for ``server.disconnectedSessionTTL`` (120 s) in a TTL cache that
    reports an expired session as gone but frees it only on its next write or length query, so until another
    browser connects, the expired session's ``st.session_state`` (a loaded slice: hundreds of MB) stayed
    resident after our caches had dropped their entries. A length query under Streamlit's own lock reaps it.
    Streamlit then drops the session without ``AppSession.shutdown()``, which is what releases its lazy
    ``st.dataframe`` row sources (the Inspector's and Home's tables, holding the slice's rows), media files and
    uploaded files in runtime-wide managers; so each reaped session is shut down here. Its
    ``st.session_state`` (the loaded slice) is emptied too: the runtime's send loop keeps the last session it
    flushed in a loop variable of its coroutine until another browser connects, so one dead session object
    outlives its reaping (measured: 200 MB of a 50 MB slice stayed resident through it). (A session that
    Streamlit itself expires on a write, before this runs every ``PRUNE_EVERY_S``, still skips all this.)
    Private API, like ``session_alive``: any failure leaves things as they are.
    """
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return 0
        mgr = Runtime.instance()._session_mgr  # noqa: SLF001
        cache = mgr._session_storage._cache  # noqa: SLF001
        with mgr._storage_lock:  # noqa: SLF001
            stored = dict(getattr(cache, "_data", {}))
            len(cache)  # reaps expired entries
            kept = getattr(cache, "_data", {})
            gone = [info for sid, info in stored.items() if sid not in kept]
    except Exception:  # noqa: BLE001
        return 0
    for info in gone:
        try:
            session = info.session
            if not mgr.is_active_session(session.id):  # not reconnected meanwhile
                session.shutdown()
                session._session_state.clear()  # noqa: SLF001 - see the docstring: the object may outlive this
        except Exception:  # noqa: BLE001 - one session's cleanup never stops the others
            pass
    return len(gone)


def prune_all() -> int:
    reaped = reap_expired_sessions()
    n = sum(c.prune() for c in list(_CACHES))
    if n or reaped:
        release_heap()
    return n


def _prune_forever() -> None:
    while True:
        time.sleep(PRUNE_EVERY_S)
        try:
            prune_all()
        except Exception:  # noqa: BLE001 - a pruning hiccup must never kill the server
            pass


def estimate_bytes(value: Any) -> int:
    """Rough resident size of a cached value: its ``approx_bytes`` if it has one, else 1 KiB."""
    return int(getattr(value, "approx_bytes", 1024))


__all__ = ["SessionBoundCache", "register", "prune_all", "reap_expired_sessions", "release_heap", "estimate_bytes",
           "cache_budget_bytes", "current_session_id", "session_alive"]
