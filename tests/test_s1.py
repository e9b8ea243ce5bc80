"""S1 symbolic rules on annotated turns: each failure class caught, clean turns passed, abstain where needed."""
from __future__ import annotations

import copy

from sage_core.data.types import AgentAct, Decision, FailureClass, Stage, UserValue
from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from tests.test_compiler import REGISTRY, clean_turn, make_turn

EV = Evaluator(REGISTRY, CascadeConfig.named("no_s2"))  # S1 only: never loads a model


def finals(turn):
    v = EV.evaluate_turn(turn)
    return v, {(t.criterion.type.value, t.criterion.args.get("slot")): t.final for t in v.traces}


def test_clean_turn_acceptable_at_s1():
    v, f = finals(clean_turn())
    assert v.label.value == "acceptable" and v.confidence == 1.0
    assert all(x.decision == Decision.FALSE and x.stage == Stage.S1 for x in f.values())


def test_iuv_dropped_value():
    t = clean_turn()
    del t.state_after["time"]
    v, f = finals(t)
    assert f[("IUV", "time")].decision == Decision.TRUE and f[("IUV", "time")].stage == Stage.S1
    assert v.label.value == "failure" and v.fired_classes == ["IUV"]
    assert v.repairs[0].message == "record '7 pm' at span [32,36] into slot time"


def test_iuv_stale_value_kept():
    t = make_turn("Actually make it 8 pm.", "Okay.", {"time": "7 pm"}, {"time": "7 pm"},
                  [UserValue("time", "8 pm")], [])
    _, f = finals(t)
    assert f[("IUV", "time")].decision == Decision.TRUE


def test_iuv_paraphrase_in_state_is_not_a_failure():
    t = make_turn("Two people at 7 pm.", "Which restaurant?", {}, {"time": "19:00", "number_of_seats": "2"},
                  [UserValue("time", "7 pm"), UserValue("number_of_seats", "two")],
                  [AgentAct("REQUEST", "restaurant_name")])
    v, f = finals(t)
    assert f[("IUV", "time")].decision == Decision.FALSE and f[("IUV", "number_of_seats")].decision == Decision.FALSE
    assert f[("UV", "time")].decision == Decision.FALSE and f[("UV", "number_of_seats")].decision == Decision.FALSE
    assert v.label.value == "acceptable"


def test_iuv_written_different_surface_abstains_for_s2():
    t = make_turn("Somewhere in NYC.", "Which restaurant?", {}, {"location": "Manhattan"},
                  [UserValue("location", "NYC")], [AgentAct("REQUEST", "restaurant_name")])
    v, f = finals(t)
    assert f[("IUV", "location")].decision == Decision.ABSTAIN and f[("IUV", "location")].stage == Stage.NONE
    assert v.label.value == "undecided" and v.confidence == 0.5  # aggregate.UNDECIDED_CONFIDENCE


def test_wnf_request_of_filled_slot_and_of_non_intent_slot():
    t = clean_turn()
    t.state_before = {"restaurant_name": "Sushi Taro"}
    t.state_after["restaurant_name"] = "Sushi Taro"
    v, f = finals(t)
    assert f[("WNF", "restaurant_name")].decision == Decision.TRUE
    assert "instead of restaurant_name" in v.repairs[0].message and "slots {date, number_of_seats} instead" in v.repairs[0].message
    t2 = clean_turn()
    t2.agent_acts = [AgentAct("REQUEST", "price_range")]
    _, f2 = finals(t2)
    assert f2[("WNF", "price_range")].decision == Decision.TRUE


def test_wnf_rerequest_of_value_just_supplied():
    t = clean_turn()
    t.agent_acts = [AgentAct("REQUEST", "time")]
    _, f = finals(t)
    assert f[("WNF", "time")].decision == Decision.TRUE
    t2 = copy.deepcopy(t)  # tracker missed it: asking again is a legal re-confirmation
    del t2.state_after["time"]
    _, f2 = finals(t2)
    assert f2[("WNF", "time")].decision == Decision.FALSE


def test_pc_confirmation_with_required_slot_empty():
    t = make_turn("At 7 pm please.", "Please confirm a table at 7 pm in San Jose.", {"location": "San Jose"},
                  {"location": "San Jose", "time": "7 pm"}, [UserValue("time", "7 pm")],
                  [AgentAct("CONFIRM", "time", "7 pm"), AgentAct("CONFIRM", "location", "San Jose")])
    v, f = finals(t)
    assert f[("PC", None)].decision == Decision.TRUE
    assert v.repairs[0].edit == {"op": "fill_required", "missing": ["restaurant_name"]}
    assert "{restaurant_name} still empty" in v.repairs[0].message


def test_pc_right_after_last_required_slot_is_fine():
    t = make_turn("At 7 pm please.", "Please confirm Sushi Taro in San Jose at 7 pm.",
                  {"location": "San Jose", "restaurant_name": "Sushi Taro"},
                  {"location": "San Jose", "restaurant_name": "Sushi Taro", "time": "7 pm"},
                  [UserValue("time", "7 pm")], [AgentAct("CONFIRM", "time", "7 pm")])
    _, f = finals(t)
    assert f[("PC", None)].decision == Decision.FALSE


def test_uv_s1_decides_user_values_and_categorical_domain_only():
    t = make_turn("Somewhere cheap.", "Which city?", {}, {"price_range": "cheap", "category": "Thai"},
                  [UserValue("price_range", "cheap")], [AgentAct("REQUEST", "location")])
    _, f = finals(t)
    assert f[("UV", "price_range")].decision == Decision.FALSE
    assert f[("UV", "category")].decision == Decision.ABSTAIN  # grounding in history is S2's job
    t.state_after["price_range"] = "very cheap"  # outside the schema's possible values
    _, f = finals(t)
    assert f[("UV", "price_range")].decision == Decision.TRUE


def test_s1_abstains_on_extracted_evidence():
    t = clean_turn()
    t.user_values = None
    t.agent_acts = None
    v = EV.evaluate_turn(t)
    assert v.traces and all(tr.attempts[0].decision == Decision.ABSTAIN or
                            tr.criterion.type == FailureClass.UV for tr in v.traces)
    assert all(tr.attempts[0].stage == Stage.S1 for tr in v.traces)


def test_ordered_groups_advance_with_the_users_answer():
    from sage_core.data.types import Turn
    from sage_core.specs.workflow import SlotSpec, WorkflowRegistry, WorkflowSpec
    slots = {n: SlotSpec(n, n.replace("_", " ")) for n in ("account_id", "order_id", "refund_amount")}
    spec = WorkflowSpec("Shop:Refund", "Shop", "Refund", "refund", slots, list(slots),
                        order=[["account_id"], ["order_id"], ["refund_amount"]])
    ev = Evaluator(WorkflowRegistry([spec]), CascadeConfig.named("no_s2"))

    def turn(request):
        return Turn("r:1", "r", spec.id, [], "My account is AC-77.", "And the order id?", {}, {"account_id": "AC-77"},
                    [UserValue("account_id", "AC-77")], [AgentAct("REQUEST", request)])
    ok = ev.evaluate_turn(turn("order_id"))
    assert ok.label.value == "acceptable"  # group 1 done by u_t: group 2 is next
    bad = ev.evaluate_turn(turn("refund_amount"))
    assert bad.fired_classes == ["WNF"]  # skipping group 2 is a wrong next field
