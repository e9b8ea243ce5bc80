"""The evaluator's bounded memos: least recently *used* goes first, and the bound holds."""
import pytest

from sage_core.evaluator.lru import LruDict


def test_least_recently_used_entry_is_dropped_first():
    m = LruDict(2)
    m.put("a", 1)
    m.put("b", 2)
    assert m.get("a") == 1  # "a" is now the most recent
    m.put("c", 3)
    assert "b" not in m and m.get("a") == 1 and m.get("c") == 3 and len(m) == 2
    assert m.get("missing") is None
    assert m.put("a", 10) == 10 and m.get("a") == 10 and len(m) == 2  # replacing does not grow it
    m.put("d", 4)  # "c" was used before "a" was replaced
    assert "c" not in m and "a" in m


def test_bound_must_be_positive():
    with pytest.raises(ValueError):
        LruDict(0)
