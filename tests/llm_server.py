"""A small real OpenAI-compatible HTTP server for tests (no key, no internet here).

It serves ``POST /v1/chat/completions`` on 127.0.0.1 (free port) in the OpenAI
response format and answers from a script: rules ``(regex, answer)`` matched
against the prompt text, optionally restricted to one model. It counts requests
(per model), can fail the next N requests with a scripted status (429/500...),
and counts tokens deterministically (whitespace tokens) so cost assertions in
tests are exact. Use it as a context manager or through the ``llm_server``
fixture; it stops at exit/teardown and, as a bound, after ``max_lifetime_s``.
"""
from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional, Union

import pytest

Answer = Union[str, list, Callable[["Request"], Union[str, list]]]


def count_tokens(text: str) -> int:
    """The server's tokenizer: whitespace tokens (deterministic, easy to assert)."""
    return len(str(text).split())


@dataclass
class Request:
    """One received chat-completion request, as the test sees it."""

    model: str
    messages: list[dict]
    n: int
    temperature: Optional[float]
    max_tokens: Optional[int]
    seed: Optional[int]
    body: dict = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.messages)


@dataclass
class Rule:
    pattern: str
    answer: Answer
    model: Optional[str] = None  # None = any model

    def matches(self, req: Request) -> bool:
        if self.model is not None and req.model != self.model:
            return False
        return re.search(self.pattern, req.prompt, flags=re.S) is not None


class LLMServer:
    """Threaded scripted chat-completions server; see module docstring."""

    def __init__(self, rules: Optional[list] = None, default: Optional[Answer] = None,
                 api_key: Optional[str] = None, max_n: Optional[int] = None,
                 delay_s: float = 0.0, max_lifetime_s: float = 300.0):
        self.rules: list[Rule] = [r if isinstance(r, Rule) else Rule(*r) for r in (rules or [])]
        self.default = default
        self.api_key = api_key  # when set, requests must send "Authorization: Bearer <key>"
        self.max_n = max_n  # simulate servers that ignore n>1 (return at most max_n choices)
        self.delay_s = delay_s  # answer this much later (to exercise client timeouts)
        self.max_lifetime_s = max_lifetime_s
        self.requests: list[Request] = []
        self.attempts = 0  # every POST, scripted failures included
        self._failures: list[tuple[int, Optional[float]]] = []
        self._served: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None
        self._timer: Optional[threading.Timer] = None

    # --- script ------------------------------------------------------------
    def add_rule(self, pattern: str, answer: Answer, model: Optional[str] = None) -> None:
        with self._lock:
            self.rules.append(Rule(pattern, answer, model))

    def fail_next(self, status: int = 500, times: int = 1, retry_after: Optional[float] = None) -> None:
        """The next ``times`` requests get HTTP ``status`` instead of an answer."""
        with self._lock:
            self._failures.extend([(status, retry_after)] * times)

    def count(self, model: Optional[str] = None) -> int:
        """Answered requests (scripted failures excluded), optionally for one model."""
        with self._lock:
            return sum(1 for r in self.requests if model is None or r.model == model)

    # --- lifecycle ---------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "LLMServer":
        handler = type("Handler", (_Handler,), {"server_ref": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="llm-test-server")
        self._thread.start()
        self._timer = threading.Timer(self.max_lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if self._timer is not None:
            self._timer.cancel()
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __enter__(self) -> "LLMServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- answering ---------------------------------------------------------
    def _answer(self, req: Request) -> list[str]:
        with self._lock:
            rules = list(self.rules)
        answer: Optional[Answer] = None
        for rule in rules:
            if rule.matches(req):
                answer = rule.answer
                break
        if answer is None:
            answer = self.default
        if answer is None:
            raise LookupError("no rule matched the prompt")
        if callable(answer):
            answer = answer(req)
        n = req.n if self.max_n is None else min(req.n, self.max_n)
        if isinstance(answer, str):
            return [answer] * n
        answers = list(answer)
        key = (req.model, req.prompt)
        with self._lock:  # repeated requests continue the list (so n-capped servers still vary)
            offset = self._served.get(key, 0)
            self._served[key] = offset + n
        return [str(answers[(offset + i) % len(answers)]) for i in range(n)]


class _Handler(BaseHTTPRequestHandler):
    server_ref: LLMServer
    protocol_version = "HTTP/1.1"
    timeout = 30

    def log_message(self, *args) -> None:  # keep pytest output clean
        pass

    def _send(self, status: int, payload: dict, headers: Optional[dict] = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout test): nothing to answer

    def _error(self, status: int, message: str, headers: Optional[dict] = None) -> None:
        self._send(status, {"error": {"message": message, "type": "test_server", "code": status}}, headers)

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        srv = self.server_ref
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        with srv._lock:
            srv.attempts += 1
            failure = srv._failures.pop(0) if srv._failures else None
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            return self._error(404, f"unknown path {self.path}")
        if srv.api_key is not None and self.headers.get("Authorization") != f"Bearer {srv.api_key}":
            return self._error(401, "invalid api key")
        if failure is not None:
            status, retry_after = failure
            headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
            return self._error(status, "scripted failure", headers)
        try:
            body = json.loads(raw or b"{}")
            req = Request(model=str(body["model"]), messages=list(body["messages"]), n=int(body.get("n") or 1),
                          temperature=body.get("temperature"),
                          max_tokens=body.get("max_tokens", body.get("max_completion_tokens")),
                          seed=body.get("seed"), body=body)
        except (ValueError, KeyError, TypeError) as e:
            return self._error(400, f"bad request: {e}")
        with srv._lock:
            srv.requests.append(req)
        if srv.delay_s:
            time.sleep(srv.delay_s)
        try:
            texts = srv._answer(req)
        except LookupError as e:
            return self._error(400, str(e))
        prompt_tokens = sum(count_tokens(m.get("content", "")) for m in req.messages)
        completion_tokens = sum(count_tokens(t) for t in texts)
        self._send(200, {
            "id": f"chatcmpl-test-{len(srv.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model,
            "choices": [{"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
                        for i, t in enumerate(texts)],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        })


@pytest.fixture
def llm_server():
    """A fresh scripted server per test; add rules with ``llm_server.add_rule``."""
    with LLMServer(max_lifetime_s=120.0) as srv:
        yield srv
