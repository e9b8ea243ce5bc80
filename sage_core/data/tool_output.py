"""Whether a tool's answer reports a failure: shared by the agent-log loaders and the tool-step verifiers."""
from __future__ import annotations

import json


def is_error_output(text: str) -> bool:
    """A tool answer that reports a failure ("Error: ...", or a JSON object with an ``error`` key)."""
    s = (text or "").strip()
    if s.lower().startswith(("error", "exception", "traceback")):
        return True
    if s.startswith("{"):
        try:
            obj = json.loads(s)
        except ValueError:
            return False
        return isinstance(obj, dict) and bool(obj.get("error"))
    return False


__all__ = ["is_error_output"]
