"""S3: a focused single-criterion LLM verifier, consulted only on S1/S2 abstentions.

Unlike a whole-turn LLM judge, the prompt holds ONE criterion: its statement,
its evidence span, the slot description and only the context that criterion
names (UV: the value plus history + u_t; IUV: the user span and the state
value; WNF: the requested slot and the legally open slots; PC: the confirming
reply and the missing required slots). The answer must be strict JSON
``{"answer": "true"|"false"|"abstain", "confidence": 0..1}``, where TRUE means
the failure is present; anything else becomes an abstention with a rationale,
so a sloppy model can never flip a verdict.
"""
from __future__ import annotations

import json
import math
from typing import Any, Optional

from sage_core.data.types import Criterion, Decision, FailureClass, Stage, Turn, Verdict
from sage_core.llm.client import LLMClient, LLMUsage, parse_json_answer
from sage_core.specs.workflow import WorkflowSpec

PROMPT_VERSIONS = ("v1",)

SYSTEM_V1 = (
    "You verify exactly one claim about one turn of a task-oriented dialogue between a user and an agent "
    "that fills slots of a workflow. The claim states that a specific failure is present. Judge only this "
    "claim, using only the evidence given. Reply with a single JSON object and nothing else: "
    '{"answer": "true" | "false" | "abstain", "confidence": <number from 0 to 1>}. '
    '"true" means the failure IS present, "false" means it is absent, "abstain" means the evidence '
    "does not allow a decision. Notation: s_t is the tracker state after the user's last message, "
    "s_t-1 the state before it; u_t is the user's last message."
)

QUESTIONS_V1 = {
    FailureClass.IUV: "Does the tracker state fail to hold the value the user gave for this slot "
                      "(treat paraphrases and equivalent normalised forms as holding it)?",
    FailureClass.WNF: "Is the agent asking for a slot that is not among the slots it may legally ask for next?",
    FailureClass.PC: "Does the agent confirm or complete the task although required information is still missing?",
    FailureClass.UV: "Is the value written to the tracker state NOT supported by what the user said or "
                     "accepted in the dialogue?",
}

DEFAULT_CLAIMS = {
    FailureClass.IUV: "The user gave a value for slot '{slot}' that the tracker state does not hold.",
    FailureClass.WNF: "The agent requests slot '{slot}', which is not a legal next slot.",
    FailureClass.PC: "The agent confirms before all required slots are filled.",
    FailureClass.UV: "The value '{value}' written for slot '{slot}' is not supported by the dialogue.",
}


def _quote(text: str) -> str:
    return json.dumps(str(text), ensure_ascii=False)


def _state_value(state: dict, slot: Optional[str]) -> str:
    if not slot:
        return "(no slot)"
    v = state.get(slot)
    return _quote(v) if v not in (None, "") else "(empty)"


def evidence_text(criterion: Criterion, turn: Turn) -> str:
    """The text the criterion's span points into (user u_t, agent reply, or the state)."""
    source = {"user": turn.user, "agent": turn.agent}.get(criterion.evidence)
    if source is None:
        return ""
    if criterion.span:
        l, r = criterion.span
        if 0 <= l <= r <= len(source) and r > l:
            return source[l:r]
    return source


class S3Verifier:
    """Asks one LLM call per abstained criterion; see module docstring."""

    def __init__(self, client: LLMClient, prompt_version: str = "v1", max_tokens: int = 96,
                 min_confidence: float = 0.0):
        if prompt_version not in PROMPT_VERSIONS:
            raise ValueError(f"unknown S3 prompt version '{prompt_version}' (known: {', '.join(PROMPT_VERSIONS)})")
        self.client = client
        self.prompt_version = prompt_version
        self.max_tokens = max_tokens
        self.min_confidence = min_confidence  # decided answers below this become abstentions

    @classmethod
    def from_settings(cls, settings: Any, model: Optional[str] = None, **kw) -> "S3Verifier":
        """S3 on the settings' endpoint; the cheap ``llm_model`` by default (one focused call)."""
        return cls(LLMClient.from_settings(settings, model), **kw)

    # --- prompt ------------------------------------------------------------
    def build_messages(self, criterion: Criterion, turn: Turn, spec: WorkflowSpec) -> list[dict]:
        a = criterion.args or {}
        slot = a.get("slot")
        claim = criterion.text or DEFAULT_CLAIMS[criterion.type].format(slot=slot, value=a.get("value"))
        lines = [f"Claim ({criterion.type.value}): {claim}"]
        if slot:
            lines.append(f"Slot: {slot} — {spec.describe_slot(slot)}")
        span = evidence_text(criterion, turn)
        t = criterion.type
        if t == FailureClass.IUV:
            lines.append(f"User words: {_quote(span or turn.user)}")
            if a.get("value") is not None:
                lines.append(f"Value the user gave: {_quote(a['value'])}")
            lines.append(f"Tracker state value for {slot} after the user's turn: {_state_value(turn.state_after, slot)}")
        elif t == FailureClass.UV:
            lines.append(f"Value written to the tracker state: {slot} = {_quote(a.get('value', turn.state_after.get(slot, '')))}")
            if a.get("previous") not in (None, ""):
                lines.append(f"(it replaces the earlier value {_quote(a['previous'])})")
            lines.append("Dialogue so far:")
            lines.extend(f"  {u.speaker}: {u.text}" for u in turn.history)
            lines.append(f"  user: {turn.user}")
        elif t == FailureClass.WNF:
            lines.append(f"Agent reply: {_quote(span or turn.agent)}")
            legal = a.get("legal")
            if legal is None:
                legal = spec.legal_next(turn.state_before)
            filled = sorted(s for s in spec.intent_slots if spec.filled(turn.state_before, s))
            lines.append(f"Slots the agent may legally ask for next: {', '.join(sorted(legal)) or '(none)'}")
            lines.append(f"Slots already filled before the user's turn: {', '.join(filled) or '(none)'}")
            lines.append(f"User's last words: {_quote(turn.user)}")
            if a.get("just_supplied"):
                held = a.get("filled_after", spec.filled(turn.state_after, slot))
                lines.append(f"The user just gave {slot}; re-asking is legal only as a re-confirmation when the "
                             f"tracker state after the turn lacks it (it {'holds' if held else 'lacks'} it).")
        elif t == FailureClass.PC:
            lines.append(f"Agent reply: {_quote(span or turn.agent)}")
            missing = a.get("missing")
            if missing is None:
                missing = spec.missing_for_outcome({**turn.state_before, **turn.state_after})
            lines.append(f"Required slots still empty: {', '.join(missing) or '(none)'}")
        lines.append(f"Question: {QUESTIONS_V1[t]}")
        lines.append('Answer with JSON only: {"answer": "true"|"false"|"abstain", "confidence": 0..1}')
        return [{"role": "system", "content": SYSTEM_V1}, {"role": "user", "content": "\n".join(lines)}]

    # --- answer ------------------------------------------------------------
    @staticmethod
    def parse(text: str) -> tuple[Decision, float, str]:
        """Strict parse; returns (decision, confidence, rationale). Malformed -> abstain, 0."""
        obj, error = parse_json_answer(text)
        if error is not None:
            return Decision.ABSTAIN, 0.0, f"unparsable S3 answer ({error}): {text[:120]!r}"
        if not isinstance(obj, dict):
            return Decision.ABSTAIN, 0.0, f"unparsable S3 answer (not an object): {text[:120]!r}"
        ans = obj.get("answer")
        if not isinstance(ans, str) or ans.strip().lower() not in ("true", "false", "abstain"):
            return Decision.ABSTAIN, 0.0, f"unparsable S3 answer (answer must be true|false|abstain): {ans!r}"
        conf = obj.get("confidence")
        if isinstance(conf, bool) or not isinstance(conf, (int, float)) or math.isnan(conf) \
                or not 0.0 <= conf <= 1.0:
            return Decision.ABSTAIN, 0.0, f"unparsable S3 answer (confidence must be a number in [0, 1]): {conf!r}"
        return Decision(ans.strip().lower()), float(conf), ""

    def verify(self, criterion: Criterion, turn: Turn, spec: WorkflowSpec) -> tuple[Verdict, LLMUsage]:
        """One focused call; raises ModelUnavailableError when the endpoint is unreachable."""
        messages = self.build_messages(criterion, turn, spec)
        res = self.client.chat(messages, temperature=0.0, n=1, max_tokens=self.max_tokens)
        text = res.texts[0] if res.texts else ""
        decision, conf, why = self.parse(text)
        if decision == Decision.ABSTAIN and not why:
            why = "S3 model abstained"
        elif decision != Decision.ABSTAIN and conf < self.min_confidence:
            why = f"S3 answered {decision.value} with confidence {conf:.2f} < {self.min_confidence:.2f}"
            decision = Decision.ABSTAIN
        else:
            why = why or f"S3 ({self.client.model}, prompt {self.prompt_version}) answered {decision.value}"
        evidence = evidence_text(criterion, turn)
        return Verdict(decision, conf, Stage.S3, evidence=evidence, rationale=why), res.usage
