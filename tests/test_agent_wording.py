"""Wordings that LLM agents use and the training corpus rarely does, read from text only: polite modal requests
("May I know ...?", "Could I get ...?"), an offer to carry out the action under way ("Shall I book it?") as the
confirmation it is, a reply that collects a missing slot while it seems to confirm, a reply laid out as lines or a
list, and the phrasal verbs that say which end of a range a date is ("drop it off Monday"). Sentences marked "dev"
are SGD dev turns (never test); the others are our own wording. The schemas are our own."""
from __future__ import annotations

import pytest

from sage_core.data.types import Decision, Turn, Utterance
from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from sage_core.evaluator.compile import compile_turn
from sage_core.evaluator.text.agent_acts import extract_agent_acts
from sage_core.evaluator.text.sentences import is_directive_request
from sage_core.evaluator.text.user_values import extract_user_values
from sage_core.specs.workflow import WorkflowRegistry, WorkflowSpec
from tests.spec_builders import slot_spec


_slot = slot_spec


CAR_SLOTS = [_slot("pickup_city", "City where the car is picked up"),
             _slot("pickup_date", "Date the car is picked up"),
             _slot("pickup_time", "Time the car is picked up"),
             _slot("dropoff_date", "Date the car is returned"),
             _slot("car_type", "Size class of the car", ["Compact", "Standard", "SUV"])]
RESERVE = WorkflowSpec("Autos_9:ReserveCar", "Autos_9", "ReserveCar", "", {s.name: s for s in CAR_SLOTS},
                       ["pickup_city", "pickup_date", "pickup_time", "dropoff_date", "car_type"],
                       is_transactional=True)
SEARCH = WorkflowSpec("Autos_9:FindCars", "Autos_9", "FindCars", "", {s.name: s for s in CAR_SLOTS},
                      ["pickup_city", "pickup_date", "dropoff_date"], is_transactional=False)
CLINIC_SLOTS = [_slot("doctor_name", "Name of the doctor"), _slot("appointment_date", "Date of the appointment"),
                _slot("patient_name", "Full name of the patient")]
VISIT = WorkflowSpec("Care_4:BookVisit", "Care_4", "BookVisit", "", {s.name: s for s in CLINIC_SLOTS},
                     ["doctor_name", "appointment_date", "patient_name"], is_transactional=True)
REGISTRY = WorkflowRegistry([RESERVE, SEARCH, VISIT])


def _turn(spec, user, agent, before, after, history=()):
    return Turn("d:1", "d", spec.id, [Utterance(s, t) for s, t in history], user, agent, dict(before), dict(after))


@pytest.fixture(scope="module")
def ev(minilm):
    return Evaluator(REGISTRY, CascadeConfig.named("sage-core", s2_backend="offline"))


def _acts(ev, spec, agent, before=None):
    t = _turn(spec, "Okay.", agent, before or {}, before or {})
    return {(a.act, a.slot) for a in extract_agent_acts(t, spec, heads=ev.heads)}


@pytest.mark.parametrize("sentence,asks", [
    ("May I have your origin city?", True),  # dev
    ("Yup! May I know when do you need the car?", True),  # dev
    ("May i know the time of alarm?", True),  # dev
    ("Could I get the patient's full name, please?", True),
    ("Can I get you another ticket?", False),  # dev: more of anything
    ("Sure, can I get some more information?", False),  # dev: nothing named
    ("Could I get a confirmation that this is right?", False),
])
def test_a_polite_modal_request_asks_for_a_value(sentence, asks):
    assert is_directive_request(sentence) is asks


def test_modal_requests_are_read_as_requests_of_their_slot(ev):
    assert ("REQUEST", "pickup_date") in _acts(ev, SEARCH, "Yup! May I know when do you need the car?")  # dev
    assert ("REQUEST", "patient_name") in _acts(ev, VISIT, "Could I get the patient's full name, please?",
                                                {"doctor_name": "Dr. Hale", "appointment_date": "Friday"})
    # re-asking a held slot that way is a wrong next field
    held = {"doctor_name": "Dr. Hale", "appointment_date": "Friday", "patient_name": "Ana Ruiz"}
    reply = "Before I change anything, could I get the patient's full name, please?"
    t = _turn(VISIT, "Friday works.", reply, held, held)
    v = ev.evaluate_turn(t)
    assert "WNF" in v.fired_classes


@pytest.mark.parametrize("reply", [
    "Sure! A compact in Phoenix, pick-up Saturday at 9 am. Shall I book it?",
    "Shall I reserve it?",
    "Would you like me to reserve the car?",
])
def test_an_offer_to_carry_out_the_action_under_way_is_a_confirmation(ev, reply):
    before = {"pickup_city": "Phoenix", "pickup_date": "Saturday", "pickup_time": "9 am", "car_type": "Compact"}
    t = _turn(RESERVE, "Compact is fine.", reply, before, before)
    assert any(a.act == "CONFIRM" for a in extract_agent_acts(t, RESERVE, heads=ev.heads))
    pc = [c for c in compile_turn(t, RESERVE, heads=ev.heads) if c.type.value == "PC"]
    assert pc and pc[0].args["missing"] == ["dropoff_date"]
    assert ev.evaluate_turn(t).label.value == "failure"
    # in a search the same offer starts another intent (the only use the training corpus has): no confirmation
    s = _turn(SEARCH, "Compact is fine.", reply, before, before)
    assert not any(a.act in ("CONFIRM", "NOTIFY_SUCCESS") for a in extract_agent_acts(s, SEARCH, heads=ev.heads))


def test_a_confirmation_cue_is_read_before_an_offer_to_act(ev):
    # both readings apply (the template injector's form, whose act head reading is below threshold); the cue rule is
    # the more specific evidence, so it gives the act and its confidence
    before = {"pickup_city": "Phoenix", "pickup_date": "Saturday", "pickup_time": "9 am", "car_type": "Compact"}
    reply = "To confirm for your reserve car request - pickup city: Phoenix, pickup date: Saturday. Shall I go ahead?"
    acts = extract_agent_acts(_turn(RESERVE, "Compact is fine.", reply, before, before), RESERVE, heads=ev.heads)
    confirms = [a for a in acts if a.act == "CONFIRM"]
    assert confirms and confirms[0].source == "rule"
    # the offer alone is still read by the head
    acts = extract_agent_acts(_turn(RESERVE, "Compact is fine.", "Shall I reserve it?", before, before), RESERVE,
                              heads=ev.heads)
    assert [a.source for a in acts if a.act == "CONFIRM"] == ["head"]


def test_a_question_asking_for_a_value_is_no_offer_to_act(ev):
    # the act head reads "Could I get your name, please?" as an intent offer; it asks for a value
    before = {"doctor_name": "Dr. Hale", "appointment_date": "Friday"}
    t = _turn(VISIT, "Friday works.", "Could I get your name, please?", before, before)
    assert not any(a.act == "CONFIRM" for a in extract_agent_acts(t, VISIT, heads=ev.heads))
    assert ev.evaluate_turn(t).label.value != "failure"


def test_phrasal_verbs_say_which_end_of_the_range_a_date_is():
    user = "Can I get a compact car in Phoenix? I'd grab it Saturday at 9 in the morning and drop it off Monday."
    t = _turn(RESERVE, user, "Sure!", {}, {})
    got = {(v.slot, v.value) for v in extract_user_values(t, RESERVE, 0.5)}
    assert {("pickup_date", "Saturday"), ("dropoff_date", "Monday")} <= got
    # dev wording: the pick-up verb before the time of one end
    t2 = _turn(RESERVE, "I want to pick it up on the 7th of March and bring it back on the 9th.", "Sure!", {}, {})
    got2 = {(v.slot, v.value) for v in extract_user_values(t2, RESERVE, 0.5)}
    assert ("dropoff_date", "the 9th") in got2 and ("pickup_date", "the 7th of March") in got2
    # the verb of the start alone does not make an end
    t3 = _turn(RESERVE, "I'll pick it up Friday.", "Sure!", {}, {})
    assert ("dropoff_date", "Friday") not in {(v.slot, v.value) for v in extract_user_values(t3, RESERVE, 0.5)}


def test_collecting_reply_that_seems_to_confirm_is_not_judged_premature(ev):
    before = {"doctor_name": "Dr. Hale"}
    t = _turn(VISIT, "Friday works.", "Got it. What day works for you, and whose name should I put it under?",
              before, {**before})
    v = ev.evaluate_turn(t)
    assert Decision.TRUE not in [tr.final.decision for tr in v.traces if tr.criterion.type.value == "PC"]


def test_a_reply_laid_out_as_lines_is_read_line_by_line(ev):
    from sage_core.evaluator.text.sentences import sentences
    summary = "Here's a summary:\n\n* **Doctor:** Dr. Hale\n* **Date:** Friday\n\nShall I go ahead and book it?"
    assert [s.strip() for s, _ in sentences(summary)][-1] == "Shall I go ahead and book it?"
    before = {"doctor_name": "Dr. Hale", "appointment_date": "Friday"}
    # a list summary, then the offer to book while the patient's name is still empty: premature
    t = _turn(VISIT, "Friday is good.", summary, before, before)
    assert "PC" in ev.evaluate_turn(t).fired_classes
    # the same layout asking for what is missing: a request, no confirmation
    ask = "Great! Here is what I have:\n- Doctor: Dr. Hale\n- Date: Friday\n\nWhat is the patient's full name?"
    t2 = _turn(VISIT, "Friday is good.", ask, before, before)
    assert ("REQUEST", "patient_name") in {(a.act, a.slot) for a in extract_agent_acts(t2, VISIT, heads=ev.heads)}
    assert ev.evaluate_turn(t2).label.value == "acceptable"


def test_an_emoji_after_the_last_question_is_no_sentence(ev):
    from sage_core.evaluator.text.sentences import worded_sentences
    assert worded_sentences("All set on my side. Shall I lock this in? 🔒") == ["All set on my side.",
                                                                               "Shall I lock this in?"]
    before = {"doctor_name": "Dr. Hale", "appointment_date": "Friday"}
    t = _turn(VISIT, "Friday is good.", "Dr. Hale on Friday. Shall I lock this in? 🔒", before, before)
    assert "PC" in ev.evaluate_turn(t).fired_classes
