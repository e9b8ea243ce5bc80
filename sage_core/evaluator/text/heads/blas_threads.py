"""One BLAS thread around the heads' small matrix products, so a verdict never depends on the thread count
(and a nested limit costs nothing)."""
from __future__ import annotations

import contextlib


_CONTROLLER: list = []
_BLAS_DEPTH = [0]  # nesting of single_thread_blas(): only the outermost one talks to threadpoolctl


def single_thread_blas():
    """A context that runs numpy's BLAS on one thread: the heads' matrices are tiny, and a multi-threaded BLAS
    on a busy machine spends more time waking threads than multiplying (measured 8x slower on 2 shared cores).
    The same products, so the same numbers; without threadpoolctl (a scikit-learn dependency) it does nothing.
    Re-entrant: the cascade holds it for a whole chunk, so the per-turn calls inside cost nothing (setting and
    restoring the limit per turn was ~0.1 ms a turn)."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
            _CONTROLLER.append(ThreadpoolController())
        except Exception:  # noqa: BLE001 - optional speed-up only
            _CONTROLLER.append(None)
    c = _CONTROLLER[0]
    return _nested_limit(c) if c is not None else contextlib.nullcontext()


@contextlib.contextmanager
def _nested_limit(controller):
    outer = contextlib.nullcontext() if _BLAS_DEPTH[0] else controller.limit(limits=1, user_api="blas")
    with outer:
        _BLAS_DEPTH[0] += 1
        try:
            yield
        finally:
            _BLAS_DEPTH[0] -= 1
