"""The one prompt template every LLM-judge baseline shares, and its answer parsers.

All judges see the same system text (task + failure definitions) and the same
turn rendering, so differences between G-Eval, FrugalGPT and the direct judge
come from the method, not the wording. ``mode`` selects what the judge sees:
``transcript`` = history + u_t + agent reply; ``state`` = that plus the tracker
state pair s_{t-1}, s_t and the workflow's required slots. Only the final
answer-format paragraph differs between methods.
"""
from __future__ import annotations

import json
import re
from typing import Optional

from sage_core.data.types import Turn
from sage_core.llm.client import parse_json_answer, strip_json_fence
from sage_core.specs.workflow import WorkflowSpec

TEMPLATE_VERSION = "v1"
MODES = ("transcript", "state")
CLASSES = ("IUV", "WNF", "PC", "UV")

SYSTEM = (
    "You are an expert evaluator of task-oriented dialogue agents, which collect the information a task "
    "needs (slots) and then confirm or complete the task. You judge ONE agent reply: the last one shown.\n"
    "The reply is a FAILURE if it shows any of these:\n"
    "- IUV (ignored user value): the user gave a value in their last message and the agent ignores, "
    "drops or contradicts it.\n"
    "- WNF (wrong next field): the agent asks for information it should not ask for now (already given, "
    "or not needed next for the task).\n"
    "- PC (premature confirmation): the agent confirms or completes the task although required "
    "information is still missing.\n"
    "- UV (unsupported value): the agent uses or records a value the user never gave or accepted.\n"
    "Otherwise the reply is clean (acceptable)."
)

GEVAL_TASK = (
    "Evaluation steps:\n"
    "1. List the values the user has given so far, and those in their last message.\n"
    "2. Check whether the agent reply keeps every value the user gave in their last message.\n"
    "3. Check whether the agent asks only for information that is still needed next.\n"
    "4. Check whether the agent confirms or completes the task before all required information is given.\n"
    "5. Check that every value the agent uses was given or accepted by the user.\n"
    "6. Rate the acceptability of the agent reply from 1 (clear failure) to 5 (fully acceptable).\n"
    "Think through the steps briefly, then end with exactly these two lines:\n"
    "Failure class: IUV | WNF | PC | UV | none\n"
    "Acceptability: <1-5>"
)

DIRECT_TASK = (
    "Is the agent reply a failure? Reply with JSON only, no other text: "
    '{"label": "failure" | "clean", "class": "IUV" | "WNF" | "PC" | "UV" | null}'
)

CONFIDENCE_TASK = (
    "Is the agent reply a failure? Reply with JSON only, no other text: "
    '{"label": "failure" | "clean", "class": "IUV" | "WNF" | "PC" | "UV" | null, '
    '"confidence": <number from 0 to 1: how sure you are of the label>}'
)


def _state(state: dict) -> str:
    filled = {k: v for k, v in state.items() if str(v).strip() != ""}
    return json.dumps(filled, ensure_ascii=False, sort_keys=True) if filled else "{} (empty)"


def render_turn(turn: Turn, spec: Optional[WorkflowSpec], mode: str) -> str:
    """The judged turn as text; state-aware mode adds s_{t-1}, s_t and the required slots."""
    if mode not in MODES:
        raise ValueError(f"unknown judge mode '{mode}' (use {' or '.join(MODES)})")
    lines = []
    if mode == "state" and spec is not None:
        lines.append(f"Task (workflow): {spec.id}" + (f" — {spec.description}" if spec.description else ""))
        req = ", ".join(f"{s} ({spec.describe_slot(s)})" for s in spec.required) or "(none)"
        lines.append(f"Required slots: {req}")
        lines.append("")
    lines.append("Dialogue history:")
    if turn.history:
        lines.extend(f"{u.speaker.capitalize()}: {u.text}" for u in turn.history)
    else:
        lines.append("(start of the dialogue)")
    lines.append("")
    lines.append(f"User (last message): {turn.user}")
    if mode == "state":
        lines.append("")
        lines.append(f"Tracker state before the user's last message (s_t-1): {_state(turn.state_before)}")
        lines.append(f"Tracker state after the user's last message (s_t): {_state(turn.state_after)}")
    lines.append("")
    lines.append(f"Agent reply to judge: {turn.agent}")
    return "\n".join(lines)


def build_messages(turn: Turn, spec: Optional[WorkflowSpec], mode: str, task: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": render_turn(turn, spec, mode) + "\n\n" + task}]


# --- answer parsers ----------------------------------------------------------
_SCORE = re.compile(r"acceptability\s*(?:score)?\s*[:=]\s*\**\s*([1-5](?:\.\d+)?)\b", re.I)
_CLASS = re.compile(r"failure\s*class\s*[:=]\s*\**\s*(IUV|WNF|PC|UV|none)\b", re.I)


def parse_geval(text: str) -> tuple[Optional[float], Optional[str]]:
    """(score in [1, 5] or None, class or None) from the form's last lines."""
    scores = _SCORE.findall(text or "")
    score = float(scores[-1]) if scores else None
    if score is not None and not 1.0 <= score <= 5.0:
        score = None
    classes = _CLASS.findall(text or "")
    cls = classes[-1].upper() if classes else None
    return score, (cls if cls in CLASSES else None)


def _norm_label(v) -> Optional[str]:
    if not isinstance(v, str):
        return None
    v = v.strip().lower()
    if v in ("failure", "fail", "failed"):
        return "failure"
    if v in ("clean", "acceptable", "ok", "pass"):
        return "acceptable"
    return None


def _norm_class(v) -> Optional[str]:
    if isinstance(v, str) and v.strip().upper() in CLASSES:
        return v.strip().upper()
    return None


def parse_label(text: str, want_confidence: bool = False) -> tuple[Optional[str], Optional[str], Optional[float]]:
    """(label failure|acceptable or None, class, confidence) from a JSON answer.

    A bare ``failure``/``clean`` word (optionally followed by a class) is accepted
    when no confidence is asked for; unparsable answers give label None.
    """
    obj, _ = parse_json_answer(text)
    if isinstance(obj, dict):
        label = _norm_label(obj.get("label"))
        cls = _norm_class(obj.get("class")) if label == "failure" else None
        conf = obj.get("confidence")
        if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0.0 <= float(conf) <= 1.0:
            conf = None
        if want_confidence and conf is None:
            return None, None, None
        return label, cls, (float(conf) if conf is not None else None)
    if want_confidence:
        return None, None, None
    m = re.fullmatch(r"(failure|clean|acceptable)\W*(IUV|WNF|PC|UV)?\W*", strip_json_fence(text), flags=re.I)
    if not m:
        return None, None, None
    label = _norm_label(m.group(1))
    return label, (_norm_class(m.group(2)) if label == "failure" else None), None
