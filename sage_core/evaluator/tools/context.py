"""What a tool step is judged against: the prior calls, tool outputs and messages of its history
(``StepContext``), and where a value occurs in them."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from sage_core.data.tool_output import is_error_output
from sage_core.evaluator.text.normalize import iter_numbers, parse_number, tokens
from sage_core.specs.from_tools import ToolWorkflowSpec
from sage_core.data.types import Turn


EXPLICIT_YES = re.compile(r"\b(yes|yeah|yep|yup|confirm|confirmed|i confirm|proceed|go ahead|do it|approved?)\b", re.I)
WEAK_YES = re.compile(r"\b(sure|ok|okay|alright|sounds good|that works|please do|correct|right|fine|great|perfect|"
                      r"let'?s do|book it|cancel it)\b", re.I)
REFUSAL_CUE = re.compile(r"\b(not eligible|ineligible|cannot|can'?t|unable to|not able to|not possible|not allowed|"
                         r"not permitted|against (?:our|the) policy|per (?:our|the) policy|i'?m sorry, but|"
                         r"unfortunately)\b", re.I)
REQUEST_CUE = re.compile(r"\?|\b(please (provide|share|confirm|let me know|tell)|could you|can you|may i (have|know)|"
                         r"i(?:'ll| will) need|i need|let me know)\b", re.I)
CALL_RE = re.compile(r"^\[call\] (\w+)\((.*)\)\s*$", re.S)
OUTPUT_RE = re.compile(r"^\[(\w+)\] (.*)$", re.S)
ID_LIKE = re.compile(r"^(?=.*\d)[A-Za-z0-9#_\-.@]{4,}$|^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+$")


def is_tool_step(turn: Turn, spec: Any) -> bool:
    """A step of a tool-calling agent judged by a tool workflow (the loader's ``meta["step"]`` says which kind)."""
    return isinstance(spec, ToolWorkflowSpec) and isinstance((turn.meta or {}).get("step"), dict) \
        and turn.meta["step"].get("kind") in ("reply", "tool_call")


def json_or_none(text: Optional[str]) -> Any:
    """``text`` parsed as JSON; None when it is not JSON."""
    try:
        return json.loads(text or "")
    except ValueError:
        return None


@dataclass
class PriorCall:
    tool: str
    args: dict[str, Any]
    output: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.output is not None and not is_error_output(self.output)

    def json_answer(self) -> Any:
        """The tool's answer parsed as JSON; None when it is not JSON."""
        return json_or_none(self.output)


@dataclass
class StepContext:
    """The history of one step split by source (what supports what)."""

    turn: Turn
    spec: Any
    user_texts: list[str] = field(default_factory=list)  # oldest first, u_t last
    tool_outputs: list[tuple[str, str]] = field(default_factory=list)  # (tool, output), successful answers
    agent_texts: list[str] = field(default_factory=list)  # earlier replies to the user
    calls: list[PriorCall] = field(default_factory=list)
    replies_then_user: list[tuple[str, str]] = field(default_factory=list)  # (agent reply, the user's answer)

    @classmethod
    def of(cls, turn: Turn, spec: Any) -> "StepContext":
        ctx = cls(turn, spec)
        pending: list[PriorCall] = []
        last_reply: Optional[str] = None
        for u in turn.history:
            if u.speaker == "user":
                ctx.user_texts.append(u.text)
                if last_reply is not None:
                    ctx.replies_then_user.append((last_reply, u.text))
                    last_reply = None
            elif u.speaker == "tool":
                m = OUTPUT_RE.match(u.text)
                name, out = (m.group(1), m.group(2)) if m else ("tool", u.text)
                call = next((c for c in pending if c.tool == name), None)
                if call is not None:
                    pending.remove(call)
                    call.output = out
                if not is_error_output(out):
                    ctx.tool_outputs.append((name, out))
            else:
                m = CALL_RE.match(u.text)
                if m:
                    args = json_or_none(m.group(2))
                    pc = PriorCall(m.group(1), args if isinstance(args, dict) else {})
                    ctx.calls.append(pc)
                    pending.append(pc)
                else:
                    ctx.agent_texts.append(u.text)
                    last_reply = u.text
        if turn.user.strip():
            ctx.user_texts.append(turn.user)
            if last_reply is not None:
                ctx.replies_then_user.append((last_reply, turn.user))
        return ctx

    def outputs_of(self, tools: Optional[list[str]]) -> list[str]:
        if tools is None:
            return [o for _, o in self.tool_outputs]
        allowed = {t for alt in tools for t in alt.split("|")}
        return [o for name, o in self.tool_outputs if name in allowed]


def occurs(value: str, text: str) -> bool:
    """Exact, case-insensitive occurrence of ``value`` as a whole token sequence (ids, codes, names)."""
    v = value.strip()
    if not v or not text:
        return False
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(v) + r"(?![A-Za-z0-9_])", text, re.I) is not None


def occurs_number(value: str, text: str) -> bool:
    n = parse_number(value)
    if n is None:
        return False
    return any(abs(x - n) < 1e-9 for x, _ in iter_numbers(text)) or \
        any(abs(float(m.group(0)) - n) < 1e-9 for m in re.finditer(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])", text))


def leaf(path: str) -> str:
    return re.sub(r"\[\d+\]", "", path.split(".")[-1])


def keyword_stems(path: str) -> list[str]:
    """Words that name an argument ("nonfree_baggages" -> ["nonfree", "bag"]), 3+ letter stems."""
    out = []
    for w in re.split(r"[_\W]+", leaf(path).lower()):
        if len(w) >= 3:
            out.append(w[:3] if w.startswith("bag") else w.rstrip("s")[:max(3, len(w) - 2)])
    return out


def near_keyword(value: str, text: str, path: str, window: int = 6) -> bool:
    """A number stated within ``window`` tokens of a word naming the argument."""
    n = parse_number(value)
    stems = keyword_stems(path)
    if n is None or not stems:
        return False
    toks = tokens(text)
    for i, t in enumerate(toks):
        if parse_number(t) == n:
            ctx = toks[max(0, i - window): i + window + 1]
            if any(w.startswith(s) for s in stems for w in ctx):
                return True
    return False


def json_key_value(path: str, value: str, text: str) -> bool:
    """A tool output (JSON) holding ``"<leaf>": value``."""
    pat = r'"' + re.escape(leaf(path)) + r'"\s*:\s*"?' + re.escape(value) + r'(?:\.0+)?"?(?![\w.])'
    return re.search(pat, text) is not None


def indexed_items(args: dict[str, str], arg: str) -> dict[int, dict[str, str]]:
    """Flattened array argument ``arg[i].k`` (or ``arg[i]``) -> {i: {k: value}}."""
    out: dict[int, dict[str, str]] = {}
    for p, v in args.items():
        m = re.match(re.escape(arg) + r"\[(\d+)\](?:\.(.+))?$", p)
        if m:
            out.setdefault(int(m.group(1)), {})[m.group(2) or ""] = str(v)
    return out


def argument_spec(spec: Any, path: str):
    return spec.slots.get(path)
