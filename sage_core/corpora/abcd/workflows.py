"""ABCD action-grounded workflows: one ``WorkflowSpec`` per subflow.

ABCD's agent guidelines fix, per subflow, an ordered sequence of actions
(``kb.json``: subflow -> actions) and each action's form fields
(``ontology.json["actions"]``). We read that as a workflow:

- id ``"<flow>:<subflow>"`` (e.g. ``product_defect:return_size``);
- slots = the union of the fields of the subflow's actions, categorical with
  the ontology's ``values.enumerable`` values where it has them;
- required = the fields of the actions in the kb sequence;
- legal-next = one group per action, in kb order: the agent may only ask for
  fields of the first action that is not yet complete (asking for the
  username before the name is WNF).

Heuristic (from the guidelines' wording, not annotated): an action is
complete when ``NEEDED`` of its fields are filled — the guidelines ask for
"full name OR account ID" for Pull up Account and one value per Enter
Details / Record Reason / Update form, but all of username, email and order
ID for Validate Purchase and three identity fields for Verify Identity.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from sage_core.corpora.common import read_json
from sage_core.data.errors import SageInputError
from sage_core.specs.workflow import (
    SlotSpec,
    WorkflowRegistry,
    WorkflowSpec,
    infer_value_type,
)

NEEDED = {"validate-purchase": 3, "verify-identity": 3}  # default: 1 field completes an action


@dataclass
class ActionGroup:
    action: str
    slots: list[str]
    needed: int

    def done(self, state: dict[str, str]) -> bool:
        return sum(1 for s in self.slots if WorkflowSpec.filled(state, s)) >= min(self.needed, len(self.slots))


@dataclass
class ActionWorkflowSpec(WorkflowSpec):
    """A WorkflowSpec whose order groups are actions completed by k-of-n fields."""

    actions: list[str] = field(default_factory=list)  # the kb sequence, slot-less actions included
    groups: list[ActionGroup] = field(default_factory=list)

    def legal_next(self, state: dict[str, str]) -> set[str]:
        for g in self.groups:
            if not g.done(state):
                return {s for s in g.slots if not self.filled(state, s)}
        return set()

    def missing_for_outcome(self, state: dict[str, str]) -> list[str]:
        missing: list[str] = []
        for g in self.groups:
            if not g.done(state):
                missing.extend(s for s in g.slots if not self.filled(state, s) and s not in missing)
        return missing


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _guideline_texts(guidelines: dict, flows: dict[str, list[str]], path: str) -> dict[tuple[str, str], str]:
    """(flow, subflow) -> 'Subflow Name: instructions'. Flows match by name, subflows by position."""
    out: dict[tuple[str, str], str] = {}
    if not isinstance(guidelines, dict):
        raise SageInputError("guidelines must be an object {flow: {subflows: ...}}", file=path)
    for gflow, gv in guidelines.items():
        flow = _norm(gflow)
        subs = flows.get(flow)
        gsubs = list((gv or {}).get("subflows", {}).items())
        if not subs or len(subs) != len(gsubs):
            continue
        for sub, (gname, gsv) in zip(subs, gsubs):
            texts = [a.get("text", "") for a in (gsv or {}).get("actions", []) if isinstance(a, dict)]
            out[(flow, sub)] = f"{gname}: " + " ".join(t.strip() for t in texts if t.strip())
    return out


def load_abcd_workflows(ontology_path: str | Path, kb_path: str | Path,
                        guidelines_path: Optional[str | Path] = None) -> WorkflowRegistry:
    """ABCD ontology + kb (+ guidelines for descriptions) -> registry of subflow workflows."""
    onto_p, kb_p = str(ontology_path), str(kb_path)
    onto, kb = read_json(onto_p), read_json(kb_p)
    try:
        flows: dict[str, list[str]] = onto["intents"]["subflows"]
        actions = {a: list(slots) for cat in onto["actions"].values() for a, slots in cat.items()}
        enumerable: dict[str, list[str]] = (onto.get("values") or {}).get("enumerable", {}) or {}
    except (KeyError, TypeError, AttributeError):
        raise SageInputError("an ABCD ontology needs intents.subflows and actions", file=onto_p) from None
    if not isinstance(kb, dict) or not kb:
        raise SageInputError("kb.json must map subflows to action lists", file=kb_p)
    descriptions = {}
    if guidelines_path is not None:
        descriptions = _guideline_texts(read_json(guidelines_path), flows, str(guidelines_path))
    specs = []
    for flow, subs in flows.items():
        for sub in subs:
            seq = kb.get(sub)
            if seq is None:
                raise SageInputError(f"subflow '{sub}' of flow '{flow}' has no action sequence", file=kb_p,
                                     field=sub)
            slots: dict[str, SlotSpec] = {}
            groups: list[ActionGroup] = []
            required: list[str] = []
            for act in seq:
                if act not in actions:
                    raise SageInputError(f"subflow '{sub}' uses action '{act}' that the ontology does not define",
                                         file=kb_p, field=sub)
                new = []
                for s in actions[act]:
                    if s not in slots:
                        pv = [str(v) for v in enumerable.get(s, [])]
                        slots[s] = SlotSpec(s, s.replace("_slotval", " value").replace("_", " "), bool(pv), pv,
                                            infer_value_type(s, bool(pv), pv))
                        new.append(s)
                    if s not in required:
                        required.append(s)
                if new:
                    groups.append(ActionGroup(act, new, NEEDED.get(act, 1)))
            specs.append(ActionWorkflowSpec(
                id=f"{flow}:{sub}", service=flow, intent=sub,
                description=descriptions.get((flow, sub), f"{flow.replace('_', ' ')}: {sub.replace('_', ' ')}"),
                slots=slots, required=required, order=[g.slots for g in groups] or None,
                is_transactional=True, source=onto_p, actions=list(seq), groups=groups))
    return WorkflowRegistry(specs, source=onto_p)
