"""Workflow specs W = (schema S, required fields F, legal-next relation, outcome O).

One ``WorkflowSpec`` per (service, intent). They are built from SGD-format
``schema.json`` files (SGD, SGD-X variants, MultiWOZ 2.2) or from our own small
YAML/JSON spec format for users' agents; ``sage_core.abcd`` builds them from the
ABCD ontology. Everything downstream only sees ``WorkflowSpec``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

import yaml

from .errors import SageInputError
from .multiwoz_schema import apply_booking_overlay

VALUE_TYPES = ("text", "time", "date", "number", "bool", "categorical")


@dataclass
class SlotSpec:
    name: str
    description: str = ""
    is_categorical: bool = False
    possible_values: list[str] = field(default_factory=list)
    value_type: str = "text"  # one of VALUE_TYPES; drives normalisation


@dataclass
class WorkflowSpec:
    """W for one (service, intent)."""

    id: str  # "Service_1:Intent"
    service: str
    intent: str
    description: str
    slots: dict[str, SlotSpec]  # every slot of the service
    required: list[str]  # F
    optional: dict[str, str] = field(default_factory=dict)  # slot -> default
    order: Optional[list[list[str]]] = None  # legal-next groups; None = any unfilled
    outcome_slots: Optional[list[str]] = None  # O: these must be filled; None = F
    is_transactional: bool = False
    result_slots: list[str] = field(default_factory=list)
    source: str = ""

    # --- W's relations -------------------------------------------------
    @property
    def intent_slots(self) -> list[str]:
        return list(dict.fromkeys(list(self.required) + list(self.optional)))

    def has_slot(self, slot: str) -> bool:
        return slot in self.slots

    @staticmethod
    def filled(state: dict[str, str], slot: str) -> bool:
        v = state.get(slot)
        return v is not None and str(v).strip() != ""

    def legal_next(self, state: dict[str, str]) -> set[str]:
        """Next(W, s): slots the agent may legally request in state s.

        With an explicit ``order`` the first group that still has an unfilled
        slot is legal; otherwise any unfilled required or optional slot is.
        """
        if self.order:
            for group in self.order:
                open_slots = {s for s in group if not self.filled(state, s)}
                if open_slots:
                    return open_slots
            return set()
        return {s for s in self.intent_slots if not self.filled(state, s)}

    def missing_for_outcome(self, state: dict[str, str]) -> list[str]:
        needed = self.outcome_slots if self.outcome_slots is not None else self.required
        return [s for s in needed if not self.filled(state, s)]

    def outcome(self, state: dict[str, str]) -> bool:
        """O(s): the workflow may be confirmed/committed in state s."""
        return not self.missing_for_outcome(state)

    def describe_slot(self, slot: str) -> str:
        spec = self.slots.get(slot)
        if spec and spec.description:
            return spec.description
        return slot.replace("_", " ")


class WorkflowRegistry:
    """All workflows known to one evaluation run, keyed by workflow id."""

    def __init__(self, specs: Iterable[WorkflowSpec] = (), source: str = ""):
        self.specs: dict[str, WorkflowSpec] = {}
        self.source = source
        for s in specs:
            self.specs[s.id] = s

    def __len__(self) -> int:
        return len(self.specs)

    def __contains__(self, wid: str) -> bool:
        return wid in self.specs

    def __iter__(self):
        return iter(self.specs.values())

    def merge(self, other: "WorkflowRegistry") -> "WorkflowRegistry":
        out = WorkflowRegistry(list(self.specs.values()) + list(other.specs.values()),
                               source=";".join(x for x in (self.source, other.source) if x))
        return out

    def get(self, wid: str, *, file: Optional[str] = None, line: Optional[int] = None) -> WorkflowSpec:
        if wid not in self.specs:
            known = ", ".join(sorted(self.specs)[:8])
            more = "" if len(self.specs) <= 8 else f" (and {len(self.specs) - 8} more)"
            raise SageInputError(f"unknown workflow '{wid}'; the schema defines {known}{more}",
                                 file=file, line=line, field="workflow")
        return self.specs[wid]

    def services(self) -> list[str]:
        return sorted({s.service for s in self.specs.values()})


# --- value types -----------------------------------------------------------
_BOOL_VALUES = {"true", "false"}


def infer_value_type(name: str, is_categorical: bool, possible_values: list[str]) -> str:
    low = name.lower()
    pv = [str(v).lower() for v in possible_values]
    if pv and set(pv) <= _BOOL_VALUES | {"dontcare"}:
        return "bool"
    if pv and all(re.fullmatch(r"\d+", v) for v in pv if v != "dontcare"):
        return "number"
    if re.search(r"(^|_)(time|leaveat|arriveby|leave|arrive)($|_)", low) or low.endswith("time"):
        return "time"
    if re.search(r"(^|_)(date|day)($|_)", low) or low.endswith("date"):
        return "date" if not is_categorical else "categorical"
    if re.search(r"(number|num|count|seats|people|stay|rooms)", low) and not is_categorical \
            and "phone" not in low:
        return "number"
    if is_categorical:
        return "categorical"
    return "text"


# --- SGD-format schema -----------------------------------------------------
def _req(obj: dict, key: str, path: str, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise SageInputError(f"missing '{key}' in {where}", file=path, field=key)
    return obj[key]


def load_sgd_schema(path: str | Path) -> WorkflowRegistry:
    """SGD / SGD-X / MultiWOZ 2.2 ``schema.json``: one workflow per (service, intent)."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except FileNotFoundError:
        raise SageInputError("schema file not found", file=path) from None
    except json.JSONDecodeError as e:
        raise SageInputError(f"malformed JSON ({e.msg} at line {e.lineno} column {e.colno})",
                             file=path, line=e.lineno) from None
    if isinstance(raw, dict) and "workflows" in raw:
        return load_workflow_spec(path)
    if not isinstance(raw, list) or not raw:
        raise SageInputError("an SGD schema must be a non-empty JSON list of services", file=path)
    specs: list[WorkflowSpec] = []
    for i, svc in enumerate(raw):
        where = f"service #{i}"
        name = _req(svc, "service_name", path, where)
        slots = {}
        for s in _req(svc, "slots", path, f"service '{name}'"):
            sname = _req(s, "name", path, f"a slot of '{name}'")
            cat = bool(s.get("is_categorical", False))
            pv = [str(v) for v in s.get("possible_values", []) or []]
            slots[sname] = SlotSpec(sname, s.get("description", ""), cat, pv,
                                    infer_value_type(sname, cat, pv))
        for it in _req(svc, "intents", path, f"service '{name}'"):
            iname = _req(it, "name", path, f"an intent of '{name}'")
            required = list(it.get("required_slots", []) or [])
            optional = dict(it.get("optional_slots", {}) or {})
            for s in required + list(optional):
                if s not in slots:
                    raise SageInputError(f"intent '{iname}' of '{name}' names slot '{s}' that the service does not define",
                                         file=path, field="required_slots")
            specs.append(WorkflowSpec(
                id=f"{name}:{iname}", service=name, intent=iname,
                description=it.get("description", ""), slots=slots,
                required=required, optional={k: str(v) for k, v in optional.items()},
                is_transactional=bool(it.get("is_transactional", False)),
                result_slots=list(it.get("result_slots", []) or []), source=path))
    return apply_booking_overlay(WorkflowRegistry(specs, source=path))  # MultiWOZ 2.2 only; no-op otherwise


# --- our own spec format ---------------------------------------------------
def load_workflow_spec(path: str | Path) -> WorkflowRegistry:
    """Our YAML/JSON spec for users' own agents (documented in README)."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh)
    except FileNotFoundError:
        raise SageInputError("workflow spec file not found", file=path) from None
    except yaml.YAMLError as e:
        raise SageInputError(f"malformed YAML/JSON: {e}", file=path) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("workflows"), list) or not raw["workflows"]:
        raise SageInputError("a workflow spec needs a non-empty 'workflows' list", file=path, field="workflows")
    specs = []
    for i, w in enumerate(raw["workflows"]):
        wid = _req(w, "id", path, f"workflow #{i}")
        if ":" not in str(wid):
            raise SageInputError(f"workflow id '{wid}' must look like 'Service:Intent'", file=path, field="id")
        service, intent = str(wid).split(":", 1)
        slots = {}
        for s in _req(w, "slots", path, f"workflow '{wid}'"):
            if isinstance(s, str):
                s = {"name": s}
            sname = _req(s, "name", path, f"a slot of '{wid}'")
            pv = [str(v) for v in s.get("possible_values", []) or []]
            cat = bool(s.get("categorical", bool(pv)))
            vtype = s.get("type") or infer_value_type(sname, cat, pv)
            if vtype not in VALUE_TYPES:
                raise SageInputError(f"slot '{sname}' has unknown type '{vtype}' (use one of {', '.join(VALUE_TYPES)})",
                                     file=path, field="type")
            slots[sname] = SlotSpec(sname, s.get("description", ""), cat, pv, vtype)
        required = list(w.get("required", []) or [])
        optional = {k: str(v) for k, v in (w.get("optional", {}) or {}).items()}
        order = w.get("order")
        outcome = w.get("outcome")
        outcome_slots = None
        if isinstance(outcome, dict) and "all_filled" in outcome:
            outcome_slots = list(outcome["all_filled"])
        for fld, names in (("required", required), ("optional", list(optional)),
                           ("order", [s for g in (order or []) for s in g]),
                           ("outcome", outcome_slots or [])):
            for s in names:
                if s not in slots:
                    raise SageInputError(f"workflow '{wid}' names slot '{s}' that its 'slots' list does not define",
                                         file=path, field=fld)
        specs.append(WorkflowSpec(id=str(wid), service=service, intent=intent,
                                  description=w.get("description", ""), slots=slots,
                                  required=required, optional=optional,
                                  order=[list(g) for g in order] if order else None,
                                  outcome_slots=outcome_slots,
                                  is_transactional=bool(w.get("transactional", True)),
                                  source=path))
    return WorkflowRegistry(specs, source=path)


def load_workflows(path: str | Path) -> WorkflowRegistry:
    """Dispatch on content: SGD-format schema list, or our ``workflows:`` spec."""
    p = str(path)
    if p.endswith((".yaml", ".yml")):
        return load_workflow_spec(p)
    return load_sgd_schema(p)
