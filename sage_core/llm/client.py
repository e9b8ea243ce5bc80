"""One chat client for S3 and the LLM-judge baselines, with exact cost accounting.

Wraps the official ``openai`` package against any OpenAI-compatible endpoint.
Every answer is cached on disk (keyed by model, endpoint, messages and sampling
parameters) so reruns are reproducible and free; cost is computed from the
token usage the server RETURNS and a per-model price table, so reported costs
are what the method costs, not estimates. Cached hits are 0 paid calls but keep
the original token usage and cost (the method's cost), flagged ``cached``.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import re
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional, Union

from sage_core.data.errors import ModelUnavailableError, SageInputError

# USD per million tokens (input, output); public list prices.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
}
KEY_ENV = "SAGE_LLM_API_KEY"
URL_ENV = "SAGE_LLM_BASE_URL"
PRICE_FILE_ENV = "SAGE_LLM_PRICE_FILE"
CACHE_FORMAT = 1

_warned_models: set[str] = set()
_warn_lock = threading.Lock()


@dataclass
class LLMUsage:
    """Token usage and cost of one ``chat`` call.

    ``cost_usd`` is the price of the returned tokens (None when the model has no
    price); ``cached`` calls were served from disk, cost nothing this run
    (``paid_calls`` = 0, ``billed_usd`` = 0) and report the original tokens.
    ``latency_ms`` is this call's wall time; ``original_latency_ms`` the API's.
    """

    prompt_tokens: int
    completion_tokens: int
    cost_usd: Optional[float]
    cached: bool
    latency_ms: float
    model: str
    original_latency_ms: float = 0.0
    requests: int = 1  # HTTP requests made (servers that ignore n>1 need several)

    @property
    def paid_calls(self) -> int:
        return 0 if self.cached else 1

    @property
    def billed_usd(self) -> Optional[float]:
        return 0.0 if self.cached else self.cost_usd

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class LLMResult:
    texts: list[str]
    usage: LLMUsage


PriceTable = dict[str, tuple[float, float]]


def load_price_file(path: Union[str, Path]) -> PriceTable:
    """JSON ``{"model": {"input": usd_per_mtok, "output": usd_per_mtok}}`` (or ``[in, out]``)."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except FileNotFoundError:
        raise SageInputError("price file not found", file=path) from None
    except json.JSONDecodeError as e:
        raise SageInputError(f"malformed JSON: {e.msg}", file=path, line=e.lineno) from None
    return normalise_prices(raw, path)


def normalise_prices(raw, source: str = "<prices>") -> PriceTable:
    if not isinstance(raw, dict):
        raise SageInputError("prices must be an object {model: {input, output}}", file=source)
    out: PriceTable = {}
    for model, p in raw.items():
        try:
            if isinstance(p, dict):
                pin, pout = float(p["input"]), float(p["output"])
            else:
                pin, pout = (float(x) for x in p)
        except (KeyError, TypeError, ValueError):
            raise SageInputError("needs numeric 'input' and 'output' USD per million tokens",
                                 file=source, field=str(model)) from None
        if pin < 0 or pout < 0:
            raise SageInputError("prices must be non-negative", file=source, field=str(model))
        out[str(model)] = (pin, pout)
    return out


def price_for(model: str, prices: PriceTable) -> Optional[tuple[float, float]]:
    """Exact name, else a dated snapshot of a known name (gpt-4.1-2025-04-14 -> gpt-4.1)."""
    if model in prices:
        return prices[model]
    snapshots = [name for name in prices
                 if model.startswith(name + "-") and model[len(name) + 1:][:1].isdigit()]
    return prices[max(snapshots, key=len)] if snapshots else None


def compute_cost(model: str, prompt_tokens: int, completion_tokens: int, prices: PriceTable) -> Optional[float]:
    p = price_for(model, prices)
    if p is None:
        with _warn_lock:
            if model not in _warned_models:
                _warned_models.add(model)
                warnings.warn(f"no price for LLM model '{model}': cost reported as unknown; "
                              f"add it with a price file ({PRICE_FILE_ENV} or --prices)", stacklevel=3)
        return None
    return (prompt_tokens * p[0] + completion_tokens * p[1]) / 1_000_000


def cache_key(model: str, base_url: str, messages: list[dict], temperature: float, n: int,
              max_tokens: int, seed: Optional[int]) -> str:
    payload = json.dumps({"v": CACHE_FORMAT, "model": model, "base_url": base_url.rstrip("/"),
                          "messages": messages, "temperature": float(temperature), "n": int(n),
                          "max_tokens": int(max_tokens), "seed": seed},
                         sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


_JSON_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", flags=re.S)


def strip_json_fence(text: Optional[str]) -> str:
    """The answer text, stripped, without a surrounding ```json ... ``` (or bare ```) fence."""
    raw = (text or "").strip()
    fence = _JSON_FENCE.fullmatch(raw)
    return fence.group(1) if fence else raw


def parse_json_answer(text: Optional[str]) -> tuple[Any, Optional[str]]:
    """``(obj, None)`` for a (possibly fenced) JSON answer, ``(None, "not JSON")`` when it does not parse.

    ``obj`` is whatever the JSON holds (not necessarily an object); callers check its type.
    """
    try:
        return json.loads(strip_json_fence(text)), None
    except json.JSONDecodeError:
        return None, "not JSON"


class LLMClient:
    """Chat completions over an OpenAI-compatible endpoint; see module docstring."""

    def __init__(self, model: str, base_url: str, api_key: Optional[str], cache_dir: Optional[Union[str, Path]],
                 prices: Optional[Union[PriceTable, dict]] = None, timeout_s: float = 60.0,
                 max_retries: int = 4, backoff_s: float = 0.5, max_backoff_s: float = 20.0):
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.cache_dir = Path(cache_dir) / "llm" if cache_dir else None
        table = dict(DEFAULT_PRICES)
        if prices:
            table.update(normalise_prices(prices))
        self.prices = table
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._client = None
        self._client_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Any, model: Optional[str] = None, *, strong: bool = False,
                      base_url: Optional[str] = None,
                      api_key: Optional[str] = None, cache_dir: Optional[str] = None,
                      prices: Optional[Union[PriceTable, str, Path]] = None, **kw) -> "LLMClient":
        """Client configured from a ``Settings`` object (the entry point read it); explicit arguments win."""
        s = settings
        table = dict(DEFAULT_PRICES)
        price_file = getattr(s, "llm_price_file", None)
        if price_file:
            table.update(load_price_file(price_file))
        if isinstance(prices, (str, Path)):
            table.update(load_price_file(prices))
        elif prices:
            table.update(normalise_prices(prices))
        return cls(model or (s.llm_strong_model if strong else s.llm_model),
                   base_url or s.llm_base_url,
                   api_key if api_key is not None else s.llm_api_key,
                   s.cache_dir if cache_dir is None else cache_dir,
                   prices=table, timeout_s=kw.pop("timeout_s", s.llm_timeout_s), **kw)

    # --- transport ---------------------------------------------------------
    def _openai(self):
        if not self.api_key:
            raise ModelUnavailableError(
                f"no API key for the LLM endpoint {self.base_url}: set {KEY_ENV} (any non-empty value "
                f"for local servers that ignore keys) and {URL_ENV} for a non-OpenAI endpoint")
        with self._client_lock:
            if self._client is None:
                from openai import OpenAI
                self._client = OpenAI(base_url=self.base_url, api_key=self.api_key,
                                      timeout=self.timeout_s, max_retries=0)
            return self._client

    def _unavailable(self, what: str) -> ModelUnavailableError:
        return ModelUnavailableError(f"LLM endpoint {self.base_url} (model '{self.model}'): {what} "
                                     f"(configure with {URL_ENV}, {KEY_ENV}, SAGE_LLM_MODEL)")

    def _request(self, messages: list[dict], temperature: float, n: int, max_tokens: int,
                 seed: Optional[int]):
        import openai
        client = self._openai()
        kwargs = dict(model=self.model, messages=messages, temperature=temperature, n=n, max_tokens=max_tokens)
        if seed is not None:
            kwargs["seed"] = seed
        attempt = 0
        while True:
            try:
                return client.chat.completions.create(**kwargs)
            except openai.APIConnectionError as e:  # includes timeouts
                if isinstance(e, openai.APITimeoutError) and attempt < self.max_retries:
                    wait = self._backoff(attempt, None)
                else:
                    kind = "timed out" if isinstance(e, openai.APITimeoutError) else "cannot connect"
                    raise self._unavailable(f"{kind} ({e.__class__.__name__}: {e})") from None
            except openai.APIStatusError as e:
                status = e.status_code
                if (status == 429 or status >= 500) and attempt < self.max_retries:
                    wait = self._backoff(attempt, e.response.headers.get("retry-after"))
                elif status in (401, 403):
                    raise self._unavailable(f"authentication failed (HTTP {status}); check {KEY_ENV}") from None
                elif status == 404:
                    raise self._unavailable(f"not found (HTTP 404): wrong base URL or unknown model") from None
                elif status == 429 or status >= 500:
                    raise self._unavailable(f"HTTP {status} after {attempt + 1} attempts") from None
                else:
                    raise self._unavailable(f"request rejected (HTTP {status}): {e.message}") from None
            attempt += 1
            time.sleep(wait)

    def _backoff(self, attempt: int, retry_after: Optional[str]) -> float:
        if retry_after:
            try:
                return min(float(retry_after), self.max_backoff_s)
            except ValueError:
                pass
        base = self.backoff_s * (2 ** attempt)
        return min(base * (1 + 0.25 * random.random()), self.max_backoff_s)

    # --- cache -------------------------------------------------------------
    def _cache_path(self, key: str) -> Optional[Path]:
        return None if self.cache_dir is None else self.cache_dir / key[:2] / f"{key}.json"

    def _cache_read(self, key: str) -> Optional[dict]:
        path = self._cache_path(key)
        if path is None or not path.is_file():
            return None
        try:
            with open(path, encoding="utf-8") as fh:
                d = json.load(fh)
            if d.get("format") == CACHE_FORMAT and isinstance(d.get("texts"), list):
                return d
        except (OSError, json.JSONDecodeError):
            pass
        return None  # unreadable entries are simply recomputed

    def _cache_write(self, key: str, entry: dict) -> None:
        path = self._cache_path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(entry, fh, ensure_ascii=False)
        os.replace(tmp, path)  # atomic: concurrent workers never see half a file

    # --- API ---------------------------------------------------------------
    def chat(self, messages: list[dict], temperature: float = 0.0, n: int = 1, max_tokens: int = 512,
             seed: Optional[int] = None) -> LLMResult:
        """``n`` completions for ``messages``; cached by all request parameters."""
        if n < 1:
            raise ValueError("n must be >= 1")
        t0 = time.perf_counter()
        key = cache_key(self.model, self.base_url, messages, temperature, n, max_tokens, seed)
        hit = self._cache_read(key)
        if hit is not None:
            cost = compute_cost(self.model, hit["prompt_tokens"], hit["completion_tokens"], self.prices)
            usage = LLMUsage(hit["prompt_tokens"], hit["completion_tokens"], cost, True,
                             (time.perf_counter() - t0) * 1000, hit.get("model", self.model),
                             original_latency_ms=hit.get("latency_ms", 0.0), requests=0)
            return LLMResult(list(hit["texts"]), usage)
        texts: list[str] = []
        prompt_tokens = completion_tokens = requests = 0
        returned_model = self.model
        while len(texts) < n and requests < n:  # servers that ignore n>1 get asked again
            resp = self._request(messages, temperature, n - len(texts), max_tokens, seed)
            requests += 1
            got = [(c.message.content or "") for c in sorted(resp.choices, key=lambda c: c.index)]
            if not got:
                raise self._unavailable("the endpoint returned no choices")
            texts.extend(got[: n - len(texts)])
            if resp.usage is None:
                raise self._unavailable("the endpoint returned no token usage; cost cannot be accounted")
            prompt_tokens += int(resp.usage.prompt_tokens or 0)
            completion_tokens += int(resp.usage.completion_tokens or 0)
            returned_model = resp.model or returned_model
        latency_ms = (time.perf_counter() - t0) * 1000
        cost = compute_cost(self.model, prompt_tokens, completion_tokens, self.prices)
        self._cache_write(key, {"format": CACHE_FORMAT, "texts": texts, "prompt_tokens": prompt_tokens,
                                "completion_tokens": completion_tokens, "model": returned_model,
                                "latency_ms": latency_ms, "created": time.time()})
        return LLMResult(texts, LLMUsage(prompt_tokens, completion_tokens, cost, False, latency_ms,
                                         returned_model, original_latency_ms=latency_ms, requests=requests))

    def describe(self) -> str:
        return f"{self.model} @ {self.base_url}"
