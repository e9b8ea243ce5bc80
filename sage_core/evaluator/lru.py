"""A dict bounded to its most recently used entries: the evaluator's per-process memos (embeddings, keyword
tables, the heads' slot matrices and act logits) must not grow with the number of turns a stream brings."""
from __future__ import annotations

from collections import OrderedDict
from typing import Generic, Hashable, Optional, TypeVar

V = TypeVar("V")


class LruDict(Generic[V]):
    """``get`` marks an entry as recently used; ``put`` adds one and drops the least recently used beyond
    ``maxsize``. A memo only: whatever it holds can be computed again, so dropping never changes a result."""

    def __init__(self, maxsize: int):
        if maxsize < 1:
            raise ValueError("maxsize must be >= 1")
        self.maxsize = maxsize
        self._d: "OrderedDict[Hashable, V]" = OrderedDict()

    def get(self, key: Hashable) -> Optional[V]:
        value = self._d.get(key)
        if value is not None:
            self._d.move_to_end(key)
        return value

    def put(self, key: Hashable, value: V) -> V:
        self._d[key] = value
        self._d.move_to_end(key)
        while len(self._d) > self.maxsize:
            self._d.popitem(last=False)
        return value

    def __contains__(self, key: Hashable) -> bool:
        return key in self._d

    def __len__(self) -> int:
        return len(self._d)

    def clear(self) -> None:
        self._d.clear()


__all__ = ["LruDict"]
