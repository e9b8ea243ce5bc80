"""Reading an SGD-format ``schema.json`` (SGD, SGD-X, MultiWOZ 2.2 share it): one workflow
per (service, intent). Generic: corpus-specific additions live in the corpus profiles."""
from __future__ import annotations

from pathlib import Path

from sage_core.data.errors import SageInputError
from sage_core.data.limits import load_json_document
from sage_core.specs.workflow import (
    SlotSpec,
    WorkflowRegistry,
    WorkflowSpec,
    infer_value_type,
    require_key,
)
from sage_core.specs.yaml_spec import load_workflow_spec


def load_sgd_schema(path: str | Path) -> WorkflowRegistry:
    """SGD / SGD-X / MultiWOZ 2.2 ``schema.json``: one workflow per (service, intent)."""
    path = str(path)
    raw = load_json_document(path, "schema", field="schema")
    if isinstance(raw, dict) and "workflows" in raw:
        return load_workflow_spec(path)
    if not isinstance(raw, list) or not raw:
        raise SageInputError("an SGD schema must be a non-empty JSON list of services", file=path)
    specs: list[WorkflowSpec] = []
    for i, svc in enumerate(raw):
        where = f"service #{i}"
        name = require_key(svc, "service_name", path, where)
        slots = {}
        for s in require_key(svc, "slots", path, f"service '{name}'"):
            sname = require_key(s, "name", path, f"a slot of '{name}'")
            cat = bool(s.get("is_categorical", False))
            pv = [str(v) for v in s.get("possible_values", []) or []]
            desc = str(s.get("description", "") or "")
            slots[sname] = SlotSpec(sname, desc, cat, pv, infer_value_type(sname, cat, pv, desc))
        for it in require_key(svc, "intents", path, f"service '{name}'"):
            iname = require_key(it, "name", path, f"an intent of '{name}'")
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
    by_service: dict[str, set] = {}
    for sp in specs:
        by_service.setdefault(sp.service, set()).update(sp.intent_slots)
    for sp in specs:  # every intent of a service shares its slots (and so which of them users give)
        sp.user_slots = frozenset(by_service[sp.service])
        sp.finders = _finders(sp, [o for o in specs if o.service == sp.service and o.intent != sp.intent])
    registry = WorkflowRegistry(specs, source=path)
    registry.format = "sgd-schema"
    return registry


def _finders(spec: WorkflowSpec, others: list[WorkflowSpec]) -> dict[str, frozenset]:
    """``WorkflowSpec.finders``: for each required slot of ``spec`` that another intent of the service finds (a search,
    not a transaction, returning it among its ``result_slots`` without taking it as an argument), the slots that
    search takes from the user and ``spec`` does not. A transaction's results describe what it booked (a visit
    returns the flat's bedrooms), they do not search for it."""
    out: dict[str, frozenset] = {}
    own = set(spec.intent_slots)
    for slot in spec.required:
        takes = {s for o in others if not o.is_transactional and slot in o.result_slots and slot not in o.intent_slots
                 for s in o.intent_slots} - own
        if takes:
            out[slot] = frozenset(takes)
    return out
