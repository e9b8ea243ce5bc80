"""Our own YAML/JSON workflow spec for users' agents (documented in the README)."""
from __future__ import annotations

from pathlib import Path

import yaml

from sage_core.data.errors import SageInputError
from sage_core.data.limits import MAX_JSON_DEPTH, read_text_document, value_depth
from sage_core.specs.workflow import (
    VALUE_TYPES,
    SlotSpec,
    WorkflowRegistry,
    WorkflowSpec,
    infer_value_type,
    require_key,
)


# --- our own spec format ---------------------------------------------------
def load_workflow_spec(path: str | Path) -> WorkflowRegistry:
    """Our YAML/JSON spec for users' own agents (documented in README)."""
    path = str(path)
    text = read_text_document(path, "workflow spec", field="schema")
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise SageInputError(f"malformed YAML/JSON: {e}", file=path) from None
    except RecursionError:
        raise SageInputError(f"YAML nested deeper than {MAX_JSON_DEPTH} levels", file=path) from None
    if value_depth(raw) > MAX_JSON_DEPTH:
        raise SageInputError(f"YAML nested deeper than {MAX_JSON_DEPTH} levels", file=path)
    if not isinstance(raw, dict) or not isinstance(raw.get("workflows"), list) or not raw["workflows"]:
        raise SageInputError("a workflow spec needs a non-empty 'workflows' list", file=path, field="workflows")
    specs = []
    for i, w in enumerate(raw["workflows"]):
        wid = require_key(w, "id", path, f"workflow #{i}")
        if ":" not in str(wid):
            raise SageInputError(f"workflow id '{wid}' must look like 'Service:Intent'", file=path, field="id")
        service, intent = str(wid).split(":", 1)
        slots = {}
        for s in require_key(w, "slots", path, f"workflow '{wid}'"):
            if isinstance(s, str):
                s = {"name": s}
            sname = require_key(s, "name", path, f"a slot of '{wid}'")
            pv = [str(v) for v in s.get("possible_values", []) or []]
            cat = bool(s.get("categorical", bool(pv)))
            vtype = s.get("type") or infer_value_type(sname, cat, pv, str(s.get("description", "") or ""))
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
    registry = WorkflowRegistry(specs, source=path)
    registry.format = "spec-yaml"
    return registry
