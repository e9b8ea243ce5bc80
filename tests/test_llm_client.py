"""LLMClient against the real local server: exact cost, cache, retries, errors."""
from __future__ import annotations

import json
import socket
import warnings

import pytest

from sage_core.data.errors import ModelUnavailableError, SageInputError
from sage_core.llm.client import DEFAULT_PRICES, LLMClient, compute_cost, load_price_file, price_for
from tests.llm_server import LLMServer, count_tokens, llm_server  # noqa: F401 (fixture)

MSGS = [{"role": "system", "content": "You are a judge."},
        {"role": "user", "content": "Is the sky green today ?"}]


def client(srv, tmp_path, model="gpt-4.1-mini", **kw):
    return LLMClient(model, srv.base_url, "test-key", tmp_path / "cache", backoff_s=0.01, **kw)


def test_usage_and_cost_are_exact(llm_server, tmp_path):
    llm_server.add_rule(r"sky green", "no it is blue")
    res = client(llm_server, tmp_path).chat(MSGS, n=1)
    assert res.texts == ["no it is blue"]
    u = res.usage
    assert (u.prompt_tokens, u.completion_tokens) == (4 + 6, 4)
    assert u.cost_usd == pytest.approx((10 * 0.40 + 4 * 1.60) / 1e6, rel=1e-12)
    assert not u.cached and u.paid_calls == 1 and u.model == "gpt-4.1-mini"
    assert llm_server.requests[0].temperature == 0.0 and llm_server.requests[0].max_tokens == 512


def test_strong_model_price_and_n_samples(llm_server, tmp_path):
    llm_server.add_rule(r"sky", ["a b", "c d e"])
    res = client(llm_server, tmp_path, model="gpt-4.1").chat(MSGS, n=3, temperature=1.0)
    assert res.texts == ["a b", "c d e", "a b"]
    assert res.usage.completion_tokens == 7
    assert res.usage.cost_usd == pytest.approx((10 * 2.0 + 7 * 8.0) / 1e6, rel=1e-12)


def test_cache_hit_makes_no_request_and_keeps_original_usage(llm_server, tmp_path):
    llm_server.add_rule(r"sky", "blue")
    c = client(llm_server, tmp_path)
    first = c.chat(MSGS, seed=7)
    second = client(llm_server, tmp_path).chat(MSGS, seed=7)  # fresh client, same cache dir
    assert llm_server.count() == 1
    assert second.texts == first.texts
    assert second.usage.cached and second.usage.paid_calls == 0 and second.usage.billed_usd == 0.0
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == \
        (first.usage.prompt_tokens, first.usage.completion_tokens)
    assert second.usage.cost_usd == first.usage.cost_usd
    # any change of a keyed parameter misses the cache
    c.chat(MSGS, seed=8)
    c.chat(MSGS, seed=7, temperature=0.5)
    assert llm_server.count() == 3


def test_no_cache_dir_always_calls(llm_server, tmp_path):
    llm_server.add_rule(r"sky", "blue")
    c = LLMClient("gpt-4.1-mini", llm_server.base_url, "k", None)
    c.chat(MSGS)
    c.chat(MSGS)
    assert llm_server.count() == 2


def test_retry_on_500_then_success(llm_server, tmp_path):
    llm_server.add_rule(r"sky", "blue")
    llm_server.fail_next(500)
    llm_server.fail_next(429, retry_after=0)
    res = client(llm_server, tmp_path).chat(MSGS)
    assert res.texts == ["blue"]
    assert llm_server.attempts == 3 and llm_server.count() == 1


def test_retries_are_bounded(llm_server, tmp_path):
    llm_server.add_rule(r"sky", "blue")
    llm_server.fail_next(503, times=10)
    with pytest.raises(ModelUnavailableError, match="HTTP 503 after 3 attempts"):
        client(llm_server, tmp_path, max_retries=2).chat(MSGS)
    assert llm_server.attempts == 3


def test_closed_port_raises_model_unavailable(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = LLMClient("gpt-4.1", f"http://127.0.0.1:{port}/v1", "k", tmp_path)
    with pytest.raises(ModelUnavailableError) as e:
        c.chat(MSGS)
    assert f"127.0.0.1:{port}" in str(e.value) and "SAGE_LLM_BASE_URL" in str(e.value)


def test_missing_key_and_bad_key(llm_server, tmp_path):
    with pytest.raises(ModelUnavailableError, match="SAGE_LLM_API_KEY"):
        LLMClient("gpt-4.1", llm_server.base_url, None, tmp_path).chat(MSGS)
    with LLMServer(default="x", api_key="right") as srv:
        with pytest.raises(ModelUnavailableError, match="authentication failed"):
            LLMClient("gpt-4.1", srv.base_url, "wrong", tmp_path).chat(MSGS)
        assert LLMClient("gpt-4.1", srv.base_url, "right", tmp_path).chat(MSGS).texts == ["x"]


def test_server_ignoring_n_is_asked_again(tmp_path):
    with LLMServer(rules=[(r"sky", ["one", "two"])], max_n=1) as srv:
        res = client(srv, tmp_path).chat(MSGS, n=2, temperature=0.7)
        assert res.texts == ["one", "two"]
        assert srv.count() == 2 and res.usage.requests == 2
        assert res.usage.prompt_tokens == 20  # both requests' prompts are paid


def test_unknown_model_cost_is_none_with_warning(llm_server, tmp_path):
    llm_server.add_rule(r"sky", "blue")
    with pytest.warns(UserWarning, match="no price for LLM model 'llama-local-test'"):
        res = client(llm_server, tmp_path, model="llama-local-test").chat(MSGS)
    assert res.usage.cost_usd is None and res.usage.prompt_tokens == 10


def test_price_overrides_and_file(llm_server, tmp_path):
    llm_server.add_rule(r"sky", "blue")
    pf = tmp_path / "prices.json"
    pf.write_text(json.dumps({"llama-local": {"input": 1.0, "output": 2.0}, "gpt-4.1": [3, 9]}))
    table = load_price_file(pf)
    res = client(llm_server, tmp_path, model="llama-local", prices=table).chat(MSGS)
    assert res.usage.cost_usd == pytest.approx((10 * 1.0 + 1 * 2.0) / 1e6)
    assert table["gpt-4.1"] == (3.0, 9.0)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"m": {"input": "x"}}))
    with pytest.raises(SageInputError, match="bad.json"):
        load_price_file(bad)


def test_snapshot_names_use_their_base_price():
    assert price_for("gpt-4.1-2025-04-14", DEFAULT_PRICES) == (2.0, 8.0)
    assert price_for("gpt-4.1-mini-2025-04-14", DEFAULT_PRICES) == (0.4, 1.6)
    assert price_for("gpt-4.1-nano", DEFAULT_PRICES) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert compute_cost("gpt-4.1-nano", 10, 10, DEFAULT_PRICES) is None


def test_server_token_counter_is_whitespace():
    assert count_tokens("  a  b\nc ") == 3


def test_timeouts_are_retried_then_unavailable(tmp_path):
    with LLMServer(default="late", delay_s=1.0) as srv:
        c = LLMClient("gpt-4.1", srv.base_url, "k", tmp_path, timeout_s=0.2, max_retries=1, backoff_s=0.01)
        with pytest.raises(ModelUnavailableError, match="timed out"):
            c.chat(MSGS)
        assert srv.attempts == 2  # one try + one bounded retry


def test_concurrent_calls_share_one_client(llm_server, tmp_path):
    from concurrent.futures import ThreadPoolExecutor
    llm_server.add_rule(r"q(\d+)", lambda req: "a" + req.prompt.split("q")[-1])
    c = client(llm_server, tmp_path)
    msgs = [[{"role": "user", "content": f"q{i}"}] for i in range(12)]
    with ThreadPoolExecutor(4) as ex:
        texts = [r.texts[0] for r in ex.map(c.chat, msgs)]
    assert texts == [f"a{i}" for i in range(12)] and llm_server.count() == 12
