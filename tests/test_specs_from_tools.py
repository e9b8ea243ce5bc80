"""Workflow specs from tool schemas: flattening nested objects/arrays, JSON-schema types, policy YAML."""
from __future__ import annotations

import pytest

from sage_core.data.errors import SageInputError
from sage_core.specs.from_tools import (ToolWorkflowSpec, load_tool_registry, load_tool_spec, read_policy,
                                        registry_from_tools, write_tool_spec)

BOOK = {"type": "function", "function": {
    "name": "book", "description": "Book a trip.",
    "parameters": {"type": "object", "properties": {
        "user_id": {"type": "string"},
        "cabin": {"type": "string", "enum": ["economy", "business"]},
        "passengers": {"type": "array", "items": {"type": "object", "properties": {
            "first_name": {"type": "string"}, "dob": {"type": "string", "description": "format 'YYYY-MM-DD'"},
            "meals": {"type": "array", "items": {"type": "string", "enum": ["veg", "halal"]}}},
            "required": ["first_name"]}},
        "bags": {"type": "integer"}, "price": {"type": "number"}, "insured": {"type": "boolean"},
        "contact": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}},
        "required": ["user_id", "cabin", "passengers", "contact"]}}}
LOOKUP = {"name": "lookup", "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}},
                                           "required": ["user_id"]}}


def test_nested_arrays_enums_and_types_flatten_to_slots():
    reg = registry_from_tools([BOOK, LOOKUP], max_items=2)
    spec = reg.get("tools:book")
    assert isinstance(spec, ToolWorkflowSpec) and spec.tool == "book"
    s = spec.slots
    assert s["cabin"].value_type == "categorical" and s["cabin"].possible_values == ["economy", "business"]
    assert s["passengers[1].meals[1]"].possible_values == ["veg", "halal"]  # array in an array of objects
    assert "passengers[2].first_name" not in s  # max_items=2
    assert s["passengers[0].dob"].value_type == "date"
    assert (s["bags"].value_type, s["price"].value_type, s["insured"].value_type) == ("number", "number", "bool")
    assert s["contact.email"].value_type == "text"
    # required: top-level required leaves, index 0 of a required array, required keys of required objects
    assert spec.required == ["user_id", "cabin", "passengers[0].first_name", "contact.email"]
    assert reg.get("tools:lookup").required == ["user_id"]  # a bare function (no "type": "function" wrapper)
    reply = reg.get("tools:reply")  # the agent's replies: one workflow whose slots are the index-free fields
    assert "passengers[].first_name" in reply.slots and reply.tool == "reply"


def test_policy_yaml_and_spec_round_trip(tmp_path):
    pol = tmp_path / "p.yaml"
    pol.write_text("service: shop\nconsequential: [book]\nrequires_called: {book: [lookup]}\n"
                   "grounding:\n  book.passengers[].first_name: [lookup]\nfree_text: [note]\n", encoding="utf-8")
    policy = read_policy(pol)
    reg = registry_from_tools([BOOK, LOOKUP], policy, max_items=2)
    book = reg.get("shop:book")
    assert book.consequential and book.is_transactional and not reg.get("shop:lookup").consequential
    assert book.policy.prerequisites("book") == ["lookup"]
    assert book.policy.grounding_tools("book", "passengers[1].first_name") == ["lookup"]
    assert book.policy.grounding_tools("book", "user_id") is None
    out = tmp_path / "spec.yaml"
    write_tool_spec(reg, out)
    again = load_tool_spec(out)
    assert sorted(s.id for s in again) == sorted(s.id for s in reg)
    assert again.get("shop:book").slots.keys() == book.slots.keys()
    assert again.get("shop:book").policy.consequential == ["book"]
    assert not again.get("shop:book").policy.one_call_per_message  # off unless the policy says so
    pol.write_text(pol.read_text() + "one_call_per_message: true\n", encoding="utf-8")
    write_tool_spec(registry_from_tools([BOOK, LOOKUP], read_policy(pol), max_items=2), out)
    assert load_tool_spec(out).get("shop:book").policy.one_call_per_message  # survives the written spec
    # the written spec is also our plain workflows YAML
    from sage_core.specs.yaml_spec import load_workflow_spec
    plain = load_workflow_spec(out)
    assert plain.get("shop:book").required == book.required


def test_policy_errors_name_the_field(tmp_path):
    pol = tmp_path / "p.yaml"
    pol.write_text("consequential: [nuke]\n", encoding="utf-8")
    with pytest.raises(SageInputError, match="tool 'nuke'.*field 'consequential'|field 'consequential'.*nuke"):
        registry_from_tools([BOOK], read_policy(pol))
    pol.write_text("one_call_per_message: sometimes\n", encoding="utf-8")
    with pytest.raises(SageInputError, match="one_call_per_message"):
        read_policy(pol)
    pol.write_text("ask_order: user_id\n", encoding="utf-8")
    with pytest.raises(SageInputError, match="ask_order"):
        read_policy(pol)
    bad = {"name": "x", "parameters": {"type": "object", "properties": {"a": {"type": "tuple"}}}}
    with pytest.raises(SageInputError, match="tool 'x'.*unsupported JSON-schema type"):
        registry_from_tools([bad])


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_shipped_tau_bench_policies_load(shared_data, domain, tmp_path):
    reg = load_tool_registry(shared_data / "tau_bench" / domain / "tools.json", f"data/specs/tau_bench_{domain}.yaml")
    cons = [s.tool for s in reg if getattr(s, "consequential", False)]
    assert len(cons) == (6 if domain == "airline" else 7)
    assert all(s.service == domain for s in reg)
    assert all(s.policy.one_call_per_message for s in reg)  # both policy.md files state the rule
    policy = next(iter(reg)).policy
    assert policy.record_rules  # business rules checked against looked-up records
    write_tool_spec(reg, tmp_path / "spec.yaml")  # the written spec carries the whole policy
    assert next(iter(load_tool_spec(tmp_path / "spec.yaml"))).policy.to_dict() == policy.to_dict()
