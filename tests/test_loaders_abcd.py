"""ABCD workflows (ontology + kb) and conversations on the real sample."""
from __future__ import annotations

import json

import pytest

from sage_core.corpora.abcd.loader import load_abcd_conversations, request_slots
from sage_core.corpora.abcd.workflows import ActionWorkflowSpec, load_abcd_workflows
from sage_core.data.errors import SageInputError
from sage_core.data.slice_io import turn_from_dict, validate_against
from sage_core.data.types import StateDiff


@pytest.fixture(scope="module")
def abcd_dir(shared_data):
    return shared_data / "abcd"


@pytest.fixture(scope="module")
def abcd_registry(abcd_dir):
    return load_abcd_workflows(abcd_dir / "ontology.json", abcd_dir / "kb.json", abcd_dir / "guidelines.json")


@pytest.fixture(scope="module")
def abcd_turns(abcd_dir, abcd_registry):
    return load_abcd_conversations(abcd_dir / "abcd_sample.json", abcd_registry)


def test_one_workflow_per_subflow(abcd_dir, abcd_registry):
    onto = json.load(open(abcd_dir / "ontology.json"))
    kb = json.load(open(abcd_dir / "kb.json"))
    subflows = [(f, s) for f, subs in onto["intents"]["subflows"].items() for s in subs]
    assert len(abcd_registry) == len(subflows) == len(kb)
    fields = {a: s for cat in onto["actions"].values() for a, s in cat.items()}
    for flow, sub in subflows:
        spec = abcd_registry.get(f"{flow}:{sub}")
        assert isinstance(spec, ActionWorkflowSpec)
        expected = {s for a in kb[sub] for s in fields[a]}
        assert set(spec.slots) == expected == set(spec.required)
        assert spec.actions == kb[sub]
    spec = abcd_registry.get("product_defect:return_size")
    assert spec.description.startswith("Return Due to Size:")
    assert spec.slots["membership_level"].is_categorical
    assert "gold" in spec.slots["membership_level"].possible_values


def test_legal_next_follows_the_action_order(abcd_registry):
    spec = abcd_registry.get("product_defect:return_size")  # pull-up, validate-purchase, membership, ...
    assert spec.legal_next({}) == {"customer_name", "account_id"}
    assert "username" not in spec.legal_next({})  # asking for the username before the name is WNF
    # Pull up Account needs the name OR the account id
    assert spec.legal_next({"customer_name": "crystal minh"}) == {"username", "email", "order_id"}
    # Validate Purchase needs all three
    st = {"customer_name": "x", "username": "u", "email": "e"}
    assert spec.legal_next(st) == {"order_id"}
    st["order_id"] = "1"
    assert spec.legal_next(st) == {"membership_level"}
    assert not spec.outcome(st) and "membership_level" in spec.missing_for_outcome(st)


def test_conversations_turns(abcd_dir, abcd_turns, abcd_registry):
    raw = json.load(open(abcd_dir / "abcd_sample.json"))
    assert abcd_turns.stats.dialogues == 3
    assert {t.dialogue_id for t in abcd_turns} == {str(c["convo_id"]) for c in raw}
    # one turn per agent block that starts after a customer message (or at the start)
    expected = 0
    for c in raw:
        prev = "customer"
        for sp, _ in c["original"]:
            if sp != "customer" and prev == "customer":
                expected += 1
            prev = sp
    assert len(abcd_turns) == expected
    validate_against([turn_from_dict(t.to_dict()) for t in abcd_turns], abcd_registry)
    assert {t.workflow for t in abcd_turns} == {"product_defect:return_size", "product_defect:refund_status",
                                                "storewide_query:timing"}
    for t in abcd_turns:
        for uv in t.user_values:
            assert t.user[uv.span[0]:uv.span[1]] == uv.value
            assert t.state_after[uv.slot].lower() == uv.value.lower()


def test_known_abcd_turns(abcd_turns):
    by_id = {t.turn_id: t for t in abcd_turns}
    t = by_id["3592:3"]
    assert t.agent == "sure, may I have your name please?"
    assert [(a.act, a.slot) for a in t.agent_acts] == [("REQUEST", "customer_name")]
    t = by_id["3592:5"]  # the customer gives the name; the agent pulls up the account
    assert t.user == "Crystal Minh"
    assert t.state_before == {} and t.state_after == {"customer_name": "Crystal Minh"}
    assert t.meta["actions"][0]["action"] == "pull-up-account"
    t = by_id["3592:12"]
    assert StateDiff.between(t.state_before, t.state_after).written == {
        "username": "cminh730", "email": "cminh730@email.com", "order_id": "3348917502"}
    # the phone number is entered with Enter Details: it lands in details_slotval
    t = next(t for t in abcd_turns if t.meta.get("action_only"))
    assert t.state_after["details_slotval"] == "(977) 625-2661"
    assert abcd_turns.stats.unmapped_slots["action:notify-team:company_team"] == 1
    # a username inside an e-mail address is not a second username
    t = by_id["9489:11"]
    assert [u.slot for u in t.user_values] == ["order_id", "email"]


def test_request_cues(abcd_registry):
    spec = abcd_registry.get("product_defect:return_size")
    assert request_slots("ok, may I have your username, email address and order ID please?", spec)[0] == [
        "username", "email", "order_id"]
    assert request_slots("I'd just need your phone number.", spec) == ([], ["phone"])
    assert request_slots("Have a great night!", spec) == ([], [])
    assert request_slots("What is your membership level Crystal?", spec)[0] == ["membership_level"]


def test_bad_abcd_inputs(tmp_path, abcd_dir, abcd_registry):
    p = tmp_path / "convos.json"
    p.write_text(json.dumps([{"convo_id": 1, "scenario": {"flow": "nope", "subflow": "nope"}, "original": []}]))
    with pytest.raises(SageInputError, match="not in the ABCD workflows"):
        load_abcd_conversations(p, abcd_registry, ontology_path=abcd_dir / "ontology.json")
    p.write_text("[]")
    with pytest.raises(SageInputError, match="no turns"):
        load_abcd_conversations(p, abcd_registry, ontology_path=abcd_dir / "ontology.json")
    kb = tmp_path / "kb.json"
    real = json.load(open(abcd_dir / "kb.json"))
    kb.write_text(json.dumps(dict(real, recover_username=["no-such-action"])))
    with pytest.raises(SageInputError, match="no-such-action"):
        load_abcd_workflows(abcd_dir / "ontology.json", kb)
    del real["reset_2fa"]
    kb.write_text(json.dumps(real))
    with pytest.raises(SageInputError, match="reset_2fa"):
        load_abcd_workflows(abcd_dir / "ontology.json", kb)
