"""What annotators read: guidelines generated from the workflow spec, and the workflow context of a turn.

Pure logic (no streamlit): ``ui.guidelines`` renders it next to the turn.

* ``spec_to_dict`` / ``spec_from_dict``: the schema part of a ``WorkflowSpec``
  (slots, required, optional, order, outcome), stored with the audit
  (``db.AuditGuidelines``) so an annotation server needs no slice.
* ``default_guidelines(specs)``: Markdown with the four classes, a one-line
  definition each and a worked example built from one of the audit's workflows.
  The lead may replace it per audit (``db.save_guidelines``); the lead's
  Markdown is trusted, every string taken from data (slot names, descriptions,
  values, workflow ids) is escaped with ``md_escape``.
* ``turn_context(spec, state_before)``: required slots, which are filled in
  s_{t-1}, optional slots and Next(W, s_{t-1}), the legal next fields.

Nothing here reads gold, ``meta``, injection records or verdicts: the inputs are
the spec and the state before, which the annotator already sees.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from sage_core import SlotSpec, WorkflowSpec

MAX_VALUES = 30  # possible values kept per slot in the stored spec

CLASS_DEFINITIONS = {
    "IUV": ("ignored user value",
            "the user gives a value for a slot in this utterance, but the state after does not hold it."),
    "WNF": ("wrong next field",
            "the agent asks for a slot that is not a legal next field: already filled, or not part of the task."),
    "PC": ("premature confirmation",
           "the agent confirms or completes the task while a required slot is still unknown."),
    "UV": ("unsupported value",
           "the state after holds a value that nothing in the dialogue supports (the user never gave it)."),
}

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~=&$:])")


def md_escape(text: object) -> str:
    """Backslash-escape Markdown syntax in a data string so it renders as plain text (no link, no image)."""
    s = str(text).replace("\r", " ").replace("\n", " ")
    return _MD_SPECIAL.sub(r"\\\1", s)


# ------------------------------------------------------------------ specs
def spec_to_dict(spec: WorkflowSpec) -> dict:
    """The schema part of a spec (JSON-safe; possible values capped at ``MAX_VALUES``)."""
    return {"id": spec.id, "service": spec.service, "intent": spec.intent, "description": spec.description,
            "slots": {n: {"description": s.description, "is_categorical": s.is_categorical,
                          "possible_values": list(s.possible_values)[:MAX_VALUES], "value_type": s.value_type}
                      for n, s in spec.slots.items()},
            "required": list(spec.required), "optional": dict(spec.optional),
            "order": [list(g) for g in spec.order] if spec.order else None,
            "outcome_slots": list(spec.outcome_slots) if spec.outcome_slots is not None else None,
            "is_transactional": bool(spec.is_transactional),
            "finders": {k: sorted(v) for k, v in sorted(spec.finders.items())}}


def spec_from_dict(d: Mapping) -> WorkflowSpec:
    slots = {n: SlotSpec(n, str(s.get("description", "")), bool(s.get("is_categorical", False)),
                         [str(v) for v in s.get("possible_values") or []], str(s.get("value_type", "text")))
             for n, s in (d.get("slots") or {}).items()}
    return WorkflowSpec(str(d["id"]), str(d.get("service", "")), str(d.get("intent", "")),
                        str(d.get("description", "")), slots, [str(x) for x in d.get("required") or []],
                        {str(k): str(v) for k, v in (d.get("optional") or {}).items()},
                        [list(g) for g in d["order"]] if d.get("order") else None,
                        list(d["outcome_slots"]) if d.get("outcome_slots") is not None else None,
                        bool(d.get("is_transactional", False)),
                        finders={str(k): frozenset(str(x) for x in v) for k, v in (d.get("finders") or {}).items()})


def workflows_for(registry, workflow_ids: Iterable[str]) -> dict[str, dict]:
    """Spec dicts of the given workflows that ``registry`` knows (others are left out)."""
    out = {}
    for wid in sorted(set(workflow_ids)):
        if registry is not None and wid in registry:
            out[wid] = spec_to_dict(registry.get(wid))
    return out


# -------------------------------------------------------- turn context
@dataclass(frozen=True)
class TurnContext:
    workflow: str
    required: list[tuple[str, bool]]  # (slot, filled in s_{t-1})
    optional: list[tuple[str, bool]]
    legal_next: list[str]  # Next(W, s_{t-1})
    descriptions: dict[str, str]

    @property
    def missing_required(self) -> list[str]:
        return [s for s, f in self.required if not f]


def turn_context(spec: WorkflowSpec, state_before: Mapping[str, str]) -> TurnContext:
    """Required / optional slots with their filled status in s_{t-1}, and the legal next fields."""
    st = dict(state_before or {})
    req = [(s, spec.filled(st, s)) for s in spec.required]
    opt = [(s, spec.filled(st, s)) for s in spec.optional if s not in spec.required]
    legal = spec.legal_next(st)
    order = [s for s in spec.intent_slots if s in legal] + sorted(legal - set(spec.intent_slots))
    return TurnContext(spec.id, req, opt, order,
                       {s: spec.describe_slot(s) for s in spec.intent_slots})


def context_markdown(ctx: TurnContext) -> str:
    """The per-turn panel as Markdown (every data string escaped)."""
    def row(items):
        return ", ".join(f"{md_escape(s)} {'✔ filled' if f else '✘ empty'}" for s, f in items) or "none"
    lines = [f"**Workflow** {md_escape(ctx.workflow)}",
             f"- **Required slots** (in the state before): {row(ctx.required)}"]
    if ctx.optional:
        lines.append(f"- **Optional slots**: {row(ctx.optional)}")
    lines.append("- **Legal next fields** (the agent may ask for): "
                 + (", ".join(md_escape(s) for s in ctx.legal_next) or "none: every slot is filled"))
    return "\n".join(lines)


# -------------------------------------------------------- guidelines text
def _example_value(spec: WorkflowSpec, slot: str, k: int = 0) -> str:
    vals = [v for v in spec.slots[slot].possible_values if v.lower() not in ("dontcare", "true", "false")] \
        if slot in spec.slots else []
    if vals:
        return vals[min(k, len(vals) - 1)]
    return {"time": ["7 pm", "10:30"], "date": ["March 3", "tomorrow"],
            "number": ["2", "4"]}.get(spec.slots[slot].value_type if slot in spec.slots else "text",
                                      [f"{slot.replace('_', ' ')} A", f"{slot.replace('_', ' ')} B"])[k % 2]


def worked_examples(spec: WorkflowSpec) -> dict[str, str]:
    """One Markdown example per class, built from the spec's slots (data escaped)."""
    e = md_escape
    req = list(spec.required) or list(spec.intent_slots) or sorted(spec.slots)
    a = req[0] if req else "slot"
    b = req[1] if len(req) > 1 else a
    va, vb, vb2 = _example_value(spec, a), _example_value(spec, b), _example_value(spec, b, 1)
    da = spec.describe_slot(a) if a in spec.slots else a
    da = da[:1].lower() + da[1:]
    legal_empty = sorted(spec.legal_next({}))
    return {
        "IUV": f"state before {{}}; user: \"… {e(da)}: {e(va)} …\"; state after has no {e(a)} "
               f"→ **IUV** ({e(a)} = {e(va)} was given and dropped).",
        "WNF": f"state before {{{e(a)}: {e(va)}}}; agent: \"What is the {e(da)}?\" → **WNF** "
               f"({e(a)} is already filled; legal next: {', '.join(e(s) for s in legal_empty if s != a) or 'none'}).",
        "PC": f"state before {{{e(a)}: {e(va)}}}, {e(b)} empty and not given by the user; agent: \"Let me confirm "
              f"your booking…\" → **PC** ({e(b)} is required and still unknown)."
        if b != a else f"state before {{}}; agent: \"Your request is confirmed.\" → **PC** ({e(a)} is unknown).",
        "UV": f"user never mentions {e(vb2)}; state after {{{e(b)}: {e(vb2)}}} → **UV** "
              f"(nothing supports {e(b)} = {e(vb2)}; {e(vb)} would be supported only if the user said it).",
    }


def default_guidelines(specs: Iterable[WorkflowSpec]) -> str:
    """The generated guidelines: the four classes with definition and worked example, then the workflows."""
    specs = sorted(specs, key=lambda s: s.id)
    lines = ["### How to label a turn",
             "Read the history, the user's utterance u_t, the agent's reply and the tracker state before "
             "(s_{t-1}) and after (s_t) the utterance. Label **failure** if any of the four failures below is "
             "present, otherwise **acceptable**; tick every class that applies (several are allowed). Label "
             "**unsure** only when the dialogue does not let you decide: the lead then resolves the turn. "
             "Use the workflow panel: the required slots, which are filled "
             "before the utterance and the legal next fields.", ""]
    ex = worked_examples(specs[0]) if specs else {}
    for cls, (name, definition) in CLASS_DEFINITIONS.items():
        lines.append(f"- **{cls} – {name}**: {definition}")
        if cls in ex:
            lines.append(f"  - *Example ({md_escape(specs[0].id)})*: {ex[cls]}")
    if specs:
        lines += ["", "### Workflows in this audit"]
        for s in specs:
            req = ", ".join(md_escape(x) for x in s.required) or "none"
            opt = ", ".join(md_escape(x) for x in s.optional) or "none"
            lines.append(f"- **{md_escape(s.id)}**: required {req}; optional {opt}"
                         + (f"; order {' → '.join('/'.join(md_escape(x) for x in g) for g in s.order)}"
                            if s.order else ""))
    return "\n".join(lines)


def guidelines_text(markdown: str, workflows: Mapping[str, Mapping]) -> str:
    """What annotators read: the lead's Markdown when set, else the generated guidelines."""
    if markdown and markdown.strip():
        return markdown
    return default_guidelines(spec_from_dict(d) for d in workflows.values())


def context_for(workflows: Mapping[str, Mapping], payload: Mapping) -> Optional[TurnContext]:
    """The turn's context from the stored specs and its blind payload; None when its workflow has no spec."""
    d = workflows.get(str(payload.get("workflow", "")))
    if not d:
        return None
    return turn_context(spec_from_dict(d), payload.get("state_before") or {})


__all__ = ["CLASS_DEFINITIONS", "md_escape", "spec_to_dict", "spec_from_dict", "workflows_for", "TurnContext",
           "turn_context", "context_markdown", "worked_examples", "default_guidelines", "guidelines_text",
           "context_for"]
