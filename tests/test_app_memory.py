"""The app's process-wide caches: bounded by bytes (LRU) and released when their sessions end."""
from __future__ import annotations

from unittest import mock

from ui.loading import load_demo
from ui.memory import SessionBoundCache


def make(cap: int, alive: set):
    return SessionBoundCache("t", max_bytes=lambda: cap, alive=lambda s: s in alive)


def put_as(cache, session, key, nbytes):
    with mock.patch("ui.memory.current_session_id", return_value=session):
        cache.put(key, f"value-{key}", nbytes)


def get_as(cache, session, key):
    with mock.patch("ui.memory.current_session_id", return_value=session):
        return cache.get(key)


def test_entries_die_with_the_last_session_that_used_them():
    alive = {"s1", "s2"}
    c = make(10_000, alive)
    put_as(c, "s1", "a", 100)
    put_as(c, "s2", "b", 100)
    assert get_as(c, "s2", "a") == "value-a"  # s2 opened a deep link to s1's slice
    alive.discard("s1")
    assert c.prune() == 0 and "a" in c and "b" in c  # s2 still uses both
    alive.discard("s2")
    assert c.prune() == 2 and len(c) == 0 and c.total_bytes == 0


def test_least_recently_used_go_first_over_the_byte_cap():
    c = make(250, {"s"})
    for k in "abc":
        put_as(c, "s", k, 100)  # 300 > 250: 'a' is evicted on insert
    assert [k for k, _ in c.items()] == ["b", "c"]
    get_as(c, "s", "b")  # touch b: c is now the oldest
    put_as(c, "s", "d", 100)
    assert [k for k, _ in c.items()] == ["b", "d"] and c.total_bytes == 200


def test_a_single_entry_larger_than_the_cap_is_kept_for_its_session():
    c = make(50, {"s"})
    put_as(c, "s", "big", 100)
    assert "big" in c


def test_loaded_slice_size_estimate_scales_with_its_json():
    demo = load_demo()
    import json

    json_bytes = sum(len(json.dumps(t.to_dict(), ensure_ascii=False).encode()) for t in demo.turns)
    assert demo.approx_bytes == 4 * json_bytes > 0


def test_a_run_listed_by_a_new_session_outlives_the_session_that_made_it():
    """A refreshed browser tab is a new session: the runs it lists are its own from then on, so they are not
    dropped when the tab's old session expires (Home said "No run yet" two minutes after a refresh)."""
    from ui import runs

    alive = {"old", "new"}
    store = make(10**9, alive)
    demo = load_demo()
    res = runs.RunResult(demo.content_hash, "sage-core", "offline", "offline", [], 0.1)
    with mock.patch("ui.runs._store", return_value=store):
        with mock.patch("ui.memory.current_session_id", return_value="old"):
            store.put((demo.content_hash, "sage-core", "offline", runs.settings_key()), res, res.approx_bytes)
        with mock.patch("ui.memory.current_session_id", return_value="new"):
            assert runs.runs_for(demo) == [res]
        alive.discard("old")
        store.prune()
        with mock.patch("ui.memory.current_session_id", return_value="new"):
            assert runs.runs_for(demo) == [res]
        alive.discard("new")
        store.prune()
        assert runs.runs_for(demo) == []
