"""The learned, schema-driven heads (evaluator/text/heads): behaviour on SGD **dev** sentences (never test),
paraphrases no lexicon lists, unseen / renamed schemas, calibrated margins, out-of-schema requests,
determinism of verdicts and of retraining, and clear errors for a missing or corrupt heads file."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from sage_core import load_corpus
from sage_core.data.errors import SageInputError
from sage_core.data.types import AgentAct, Decision, FailureClass, Stage, Turn, TurnLabel
from sage_core.evaluator.text.agent_acts import confirmation_cue, extract_agent_acts
from sage_core.evaluator.text.heads import DEFAULT_HEADS_PATH, act_text, load_heads
from sage_core.specs.workflow import SlotSpec, WorkflowRegistry, WorkflowSpec

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def heads(minilm):
    return load_heads()


def _spec(wid: str, slots: dict[str, str], required: list[str], intent_slots=None) -> WorkflowSpec:
    return WorkflowSpec(id=wid, service=wid.split(":")[0], intent=wid.split(":")[1], description="",
                        slots={n: SlotSpec(n, d) for n, d in slots.items()},
                        required=required, optional={})


# services written for these tests (our own wording of schemas; the sentences are SGD dev replies)
BANK = _spec("Bank_9:TransferMoney", {
    "account_type": "The account type of the user",
    "transfer_amount": "The amount of money to transfer",
    "recipient_name": "The name of the person receiving the money",
    "recipient_account_type": "The account type of the recipient",
    "balance": "Current balance of the account",
}, ["account_type", "transfer_amount", "recipient_name"])
HOTEL = _spec("Stay_7:ReserveRoom", {
    "hotel_name": "Name of the hotel",
    "check_in_date": "Date of check in",
    "number_of_days": "Number of days of the stay",
    "destination": "City where the hotel is located",
    "number_of_rooms": "Number of rooms to reserve",
}, ["hotel_name", "check_in_date", "number_of_days", "destination"])
# the same hotel workflow with renamed slots and reworded descriptions (an SGD-X-like rendering)
HOTEL_RENAMED = _spec("Lodging_2:BookStay", {
    "property": "The lodging to stay at",
    "arrival_day": "The day the guest arrives at the property",
    "nights": "How long the guest stays, in days",
    "where": "The town of the lodging",
    "rooms_needed": "Count of rooms wanted",
}, ["property", "arrival_day", "nights", "where"])


# the bank workflow without its balance slot: one slot holds a sum of money
BANK_ONE_SUM = _spec("Bank_9:SendMoney", {n: BANK.slots[n].description for n in BANK.slots if n != "balance"},
                     ["account_type", "transfer_amount", "recipient_name"])
# dev replies of a bank service without train dialogues; the slot head ranked the account type first for all of them
HOW_MUCH_DEV = ["How much money?", "How much?", "how much then?"]


@pytest.mark.parametrize("reply", HOW_MUCH_DEV)
def test_how_much_asks_for_the_schemas_one_sum(heads, reply):
    acts = extract_agent_acts(_turn(reply, BANK_ONE_SUM), BANK_ONE_SUM, heads=heads)
    assert {a.slot for a in acts if a.act == "REQUEST"} == {"transfer_amount"}
    from sage_core.evaluator.text.heads import request_slots
    # two slots holding a sum (the amount and the balance): "how much" alone does not say which
    assert "transfer_amount" not in heads.kind_matched(reply, request_slots(BANK), 0.3)
    # a count is no sum: "how much time" asks for a duration
    assert "transfer_amount" not in heads.kind_matched("How much time do you need?", request_slots(BANK_ONE_SUM), 0.3)


# a kind asked for without "what / which" ("a specific kind of cuisine?", SGD dev): the question asks for the one
# slot holding a kind of value, not for the yes/no slot its "Is there ...?" resembles
EATERY = _spec("Eat_3:FindPlace", {"food_kind": "The kind of cooking the restaurant serves",
                                   "city": "City the restaurant is in",
                                   "has_vegetarian_dishes": "Whether the restaurant offers vegetarian dishes",
                                   "price_level": "How expensive the restaurant is"}, ["city", "food_kind"])


def test_kind_of_question_without_what_asks_for_the_kind(heads):
    acts = extract_agent_acts(_turn("Is there a specific kind of cuisine that you are looking for?", EATERY), EATERY,
                              heads=heads)
    assert {a.slot for a in acts if a.act == "REQUEST"} == {"food_kind"}


def test_a_yes_no_slot_yields_to_a_question_asking_for_a_kind(heads):
    """"Is there any particular type of food you are looking for?" (SGD dev) asks for a kind of value, which a yes/no
    slot never holds: the vegetarian slot, which the pair score puts beside the kind, yields to it (``exclusive_kinds``)
    and is no rival to it when legal (``ruled_out_beside``); a plain yes/no question still asks for it."""
    from sage_core.evaluator.text.heads import request_slots
    slots = request_slots(EATERY)
    q = "Is there any particular type of food you are looking for?"
    p = heads.slot_probs(q, slots)
    assert p["has_vegetarian_dishes"] < 0.2 and p["food_kind"] > 0.65
    assert heads.legal_rival(q, "food_kind", ["has_vegetarian_dishes"], slots) is None
    assert heads.slot_probs("Do you need a place that serves vegetarian dishes?", slots)["has_vegetarian_dishes"] > 0.5


# wh-questions of a service without train dialogues (SGD dev, a bank): the act head reads them as statements (REQUEST
# p 0.01-0.4), which pulled the slot they ask for under the threshold; the listwise stage floors a wh-question's
# REQUEST logit (``request_logit``)
def test_wh_question_of_a_new_service_is_read_as_its_request(heads):
    acts = extract_agent_acts(_turn("What is the name of your contact that you wish to send the money to?", BANK), BANK,
                              heads=heads)
    assert "recipient_name" in {a.slot for a in acts if a.act == "REQUEST"}


@pytest.mark.parametrize("reply,slot", [("What account should I check?", "account_type"),
                                        ("To whom would that be?", "recipient_name")])
def test_wh_floor_raises_the_slot_a_wh_question_asks_for(heads, monkeypatch, reply, slot):
    import dataclasses
    import sage_core.evaluator.text.heads as H
    import sage_core.evaluator.text.heads.features as F
    floored = dataclasses.replace(heads).slot_probs(reply, H.request_slots(BANK))[slot]  # a copy starts without memos
    monkeypatch.setattr(F, "WH_REQUEST_LOGIT_FLOOR", float("-inf"))
    plain = dataclasses.replace(heads).slot_probs(reply, H.request_slots(BANK))[slot]
    assert floored > plain + 0.05


def test_request_logit_floors_wh_questions_only():
    from sage_core.evaluator.text.heads import WH_REQUEST_LOGIT_FLOOR, request_logit
    assert request_logit("Which account should I use?", -3.0) == WH_REQUEST_LOGIT_FLOOR
    assert request_logit("Which account should I use?", 5.0) == 5.0
    assert request_logit("How about the savings account?", -3.0) == -3.0  # an offer, not a wh-question that asks
    assert request_logit("Please tell me the account.", -3.0) == -3.0


def _turn(agent: str, spec: WorkflowSpec, before=None, after=None, acts=None, user="ok") -> Turn:
    return Turn("d:1", "d", spec.id, [], user, agent, dict(before or {}), dict(after or {}),
                None if acts is None else [], acts)


# --- act head ----------------------------------------------------------------------------------------------------
SUCCESS_DEV = ["Your ride is on the way.", "Your apartment visit is scheduled.",
               "I've placed your transfer, which will take 3 business days."]


@pytest.mark.parametrize("reply", SUCCESS_DEV)
def test_act_head_finds_successes_no_lexicon_lists(heads, reply):
    assert confirmation_cue(reply) is None  # no keyword rule reads these as a success
    p = heads.act_probs(reply)
    assert p["NOTIFY_SUCCESS"] >= heads.act_threshold["NOTIFY_SUCCESS"]
    assert p["REQUEST"] < 0.5
    acts = extract_agent_acts(_turn(reply, BANK), BANK, heads=heads)
    assert [a.act for a in acts if a.act in ("CONFIRM", "NOTIFY_SUCCESS")] == ["NOTIFY_SUCCESS"]
    assert all(a.source == "head" and 0.5 <= a.confidence < 1.0 for a in acts)


# success said without a booking verb (SGD dev replies): the act head reads unseen domains' notices weakly, the
# success cue of ``lexicon.CONFIRM_CUES`` (read off train) stands beside it; "not successful" and "is through" are not
CUE_SUCCESS_DEV = ["Your new alarm is added to your clock successfully and you will be reminded of at that time.",
                   "Your transfer is complete and he will get the money in 1 business day.",
                   "Transfer successful. It will take 3 business days."]
CUE_NOT_SUCCESS = ["Sorry, the reservation was not successful. Should I try 6 pm instead?",
                   "The flight is through Delta Airlines and leaves at 7:50 am.",
                   "Your transfer was unsuccessful."]


@pytest.mark.parametrize("reply", CUE_SUCCESS_DEV)
def test_success_without_a_booking_verb_is_a_success(heads, reply):
    acts = extract_agent_acts(_turn(reply, BANK), BANK, heads=heads)
    assert [a.act for a in acts if a.act in ("CONFIRM", "NOTIFY_SUCCESS")] == ["NOTIFY_SUCCESS"]
    assert confirmation_cue(reply)[0] == "NOTIFY_SUCCESS"


@pytest.mark.parametrize("reply", CUE_NOT_SUCCESS)
def test_failed_or_offered_is_not_a_success_cue(reply):
    cue = confirmation_cue(reply)
    assert cue is None or cue[0] != "NOTIFY_SUCCESS"


def test_act_head_separates_requests_offers_and_goodbyes(heads):
    assert heads.act_probs("When are you checking in?")["REQUEST"] > 0.5
    offer = heads.act_probs("How about the 4 pm show of Joker at AMC Mercado?")
    assert offer["OFFER"] > 0.5 and offer["NOTIFY_SUCCESS"] < 0.5 and offer["CONFIRM"] < 0.5
    bye = heads.act_probs("Have a great day!")
    assert bye["GOODBYE"] > 0.5 and bye["NOTIFY_SUCCESS"] < 0.5
    conf = heads.act_probs("So that is a table for 2 at Bazille on March 3rd at 7 pm, right?")
    assert conf["CONFIRM"] > 0.5


@pytest.mark.parametrize("text,masked", [
    ("How about Delta Airlines at 10:30 am for $45.50?", "How about Smith at 5 am for 5?"),
    ("Your table at Bank of America Plaza is booked. I'd say it costs 30 dollars.",
     "Your table at Smith is booked. I'd say it costs 5 dollars."),
    ("Okay. New York on March 3rd?", "Okay. New Smith on Smith 5rd?"),  # an opener keeps its first word
    ("which city are you leaving from?", "which city are you leaving from?"),  # lower case: nothing to mask
])
def test_act_text_masks_the_values_a_reply_names(text, masked):
    assert act_text(text) == masked


def test_act_head_averages_its_raw_and_its_value_blind_reading(heads):
    """The act head's logits are the mean of two MLPs': one on the reply as written, one on the reply with its values
    masked, which reads the same offer, confirmation or success alike whatever names and numbers it carries."""
    import numpy as np
    from sage_core.evaluator.text.heads import mlp_logits
    pairs = [("How about the 4 pm show of Joker at AMC Mercado?",
              "How about the 9 pm show of Parasite at Regal Cinemas?"),
             ("So that is a table for 2 at Bazille on March 3rd at 7 pm, right?",
              "So that is a table for 6 at Lucky Dragon on June 23rd at 11 pm, right?"),
             ("Your transfer of $320 to Jerry went through.", "Your transfer of $15,000 to Anna Lee went through.")]
    for a, b in pairs:
        assert act_text(a) == act_text(b)
        ea, eb = heads._embed([a, act_text(a)]), heads._embed([b])
        raw_a = mlp_logits(heads.act_mlp, ea[a][None, :])[0]
        masked = mlp_logits(heads.act_mlp_masked, ea[act_text(a)][None, :])[0]
        assert np.allclose(heads._act_logits(a), (raw_a + masked) / 2)
        raw_b = mlp_logits(heads.act_mlp, eb[b][None, :])[0]
        # only the raw reading differs
        assert np.allclose(heads._act_logits(a) - heads._act_logits(b), (raw_a - raw_b) / 2)
        assert heads.act_probs(a)[max(heads.act_probs(a), key=heads.act_probs(a).get)] > 0.5


def test_heads_file_without_the_masked_act_head_is_a_clear_input_error(tmp_path):
    d = json.loads(DEFAULT_HEADS_PATH.read_text())
    del d["acts"]["masked"]
    p = tmp_path / "heads.json"
    p.write_text(json.dumps(d))
    with pytest.raises(SageInputError) as e:
        load_heads(p)
    assert e.value.file == str(p) and "masked" in str(e.value)


# --- slot head ---------------------------------------------------------------------------------------------------
FLIGHT = _spec("Air_4:BookTrip", {
    "origin_city": "City of origin for the flight",
    "destination_city": "City of destination for the flight",
    "departure_date": "Start date of the trip",
    "return_date": "End date of the trip",
    "airlines": "Airline of the flight",
}, ["origin_city", "destination_city", "departure_date"])
# the same workflow with every slot renamed and re-described (an SGD-X-like rendering no training schema has)
FLIGHT_RENAMED = _spec("Air_5:BookJourney", {
    "start_point": "Where the journey begins",
    "end_point": "Where the traveller is going",
    "outbound_day": "Day the traveller sets off",
    "inbound_day": "Day the traveller comes back",
    "carrier": "Company operating the flight",
}, ["start_point", "end_point", "outbound_day"])


# SGD dev replies (requests), scored against schemas written for this test
@pytest.mark.parametrize("reply,spec,slot", [
    ("Which city are you departing from?", FLIGHT, "origin_city"),
    ("Which city are you departing from?", FLIGHT_RENAMED, "start_point"),
    ("Can you tell me the day when you will be returning?", FLIGHT, "return_date"),
    ("Travel date?", FLIGHT, "departure_date"),
    ("When are you checking in?", HOTEL, "check_in_date"),
    ("How much would you like me to transfer?", BANK, "transfer_amount"),
    ("Who should I transfer the money to?", BANK, "recipient_name"),  # the question asks for a person
    ("Where are you traveling from?", FLIGHT, "origin_city"),  # the pair score alone ranked the destination first
])
# (since the 256-unit slot head, the terse "Transfer how much?" ranks BANK's balance first, just above
# transfer_amount: both hold an amount, so the answer kind cannot separate them)
def test_slot_head_ranks_the_requested_slot_first(heads, reply, spec, slot):
    probs = heads.requested(reply, [(s, spec.slots[s].description) for s in spec.slots])
    assert set(probs) == set(spec.slots)
    assert max(probs, key=probs.get) == slot


# (renamed schemas: "Which city are you departing from?" ranks start_point of FLIGHT_RENAMED first, but at p 0.68,
# below the slot threshold 0.75, since the heads are trained on all of SGD train: renamed-schema extraction is
# weak, see docs/benchmarks.md)
@pytest.mark.parametrize("reply,spec,slots", [
    ("Can you tell me the day when you will be returning?", FLIGHT, ["return_date"]),
    ("Where are you flying from, and what is the destination?", FLIGHT, ["destination_city", "origin_city"]),
    ("How many days are you staying?", HOTEL, ["number_of_days"]),
])
def test_slot_head_extracts_requests_of_unseen_and_renamed_schemas(heads, reply, spec, slots):
    acts = extract_agent_acts(_turn(reply, spec), spec, heads=heads)
    assert sorted(a.slot for a in acts if a.act == "REQUEST" and a.source == "head") == slots


def test_request_units_add_the_clauses_of_a_multi_part_question():
    from sage_core.evaluator.text.heads import clauses, request_units
    assert clauses("Where will you be departing from and where are you going?") == [
        "Where will you be departing from?", "where are you going?"]
    assert clauses("What city would you like the apartment, and how many bed rooms did you want?") == [
        "What city would you like the apartment?", "how many bed rooms did you want?"]
    assert clauses("When are you checking in?") == []  # one part: nothing added
    assert clauses("Where and when?") == []  # one-word parts are no clauses
    units = request_units("Sure. Where are you leaving from and where are you going? Anything else?")
    # every sentence of a reply with a question, then the parts (the act head decides whether "Sure." asks)
    assert units == ["Sure.", "Where are you leaving from and where are you going?", "Anything else?",
                     "Where are you leaving from?", "where are you going?"]
    assert request_units("Your ride is booked.") == ["Your ride is booked."]  # no question: the reply itself


BUS = _spec("Coach_4:BuyTicket", {
    "from_city": "City the coach leaves from",
    "to_city": "City the coach goes to",
    "departure_day": "Day of the trip",
    "passengers": "How many tickets",
}, ["from_city", "to_city", "departure_day", "passengers"])
FLAT = _spec("Flats_3:Search", {
    "area": "Town or city to search in",
    "bedrooms": "How many bedrooms the flat has",
    "pets": "Whether pets are allowed",
}, ["area", "bedrooms"])


# SGD dev replies asking for two slots in one question: the second slot is found in its own clause
@pytest.mark.parametrize("reply,spec,slots", [
    ("Where will you be departing from and where are you going?", BUS, ["from_city", "to_city"]),
    ("In which area you want the residence and how many bedrooms you want?", FLAT, ["area", "bedrooms"]),
])
def test_slot_head_finds_both_slots_of_a_two_part_question(heads, reply, spec, slots):
    acts = extract_agent_acts(_turn(reply, spec), spec, heads=heads)
    assert sorted(a.slot for a in acts if a.act == "REQUEST" and a.source == "head") == slots


def test_slot_head_ignores_non_requests(heads):
    for reply in SUCCESS_DEV + ["Is there anything else I can help you with?"]:
        assert not [a for a in extract_agent_acts(_turn(reply, HOTEL), HOTEL, heads=heads) if a.act == "REQUEST"]


def test_rules_alone_miss_what_the_heads_find():
    # the reason for the heads: the keyword rules find no request in this dev reply
    assert not [a for a in extract_agent_acts(_turn("Your ride is on the way.", BANK), BANK)
                if a.act == "NOTIFY_SUCCESS"]


def _categorical(wid: str, slots: dict[str, tuple[str, list[str]]], intent_slots: list[str]) -> WorkflowSpec:
    return WorkflowSpec(id=wid, service=wid.split(":")[0], intent=wid.split(":")[1], description="",
                        slots={n: SlotSpec(n, d, True, v, "categorical") for n, (d, v) in slots.items()},
                        required=intent_slots, optional={})


# two slots share the values "checking" / "savings"; only the first belongs to the balance intent
ACCOUNTS = _categorical("Money_3:ShowBalance", {
    "own_account": ("Which of the user's accounts", ["checking", "savings"]),
    "payee_account": ("Account of the person paid", ["checking", "savings"]),
    "cabin": ("Class of travel", ["economy", "business", "first"]),
}, ["own_account"])


@pytest.mark.parametrize("use_heads", [False, True])
@pytest.mark.parametrize("reply,slots", [
    ("In checking or savings?", ["own_account"]),  # dev replies; the twin slot outside the intent is not asked for
    ("Is that for your checking or savings account?", ["own_account"]),
    ("Economy, business or first class ticket you want to purchase?", ["cabin"]),
    ("I found a checking account.", []),  # no question
    ("Do you want the savings account?", []),  # one value offered, no alternative
])
def test_alternative_questions_request_the_slot_whose_values_they_list(heads, use_heads, reply, slots):
    acts = extract_agent_acts(_turn(reply, ACCOUNTS), ACCOUNTS, heads=heads if use_heads else None)
    assert sorted({a.slot for a in acts if a.act == "REQUEST"}) == slots


COACH = _spec("Coach_2:FindCoach", {
    "from_town": "Town the coach leaves from",
    "to_town": "Town where the coach is going",
    "leave_day": "Day of departure",
}, ["from_town", "to_town", "leave_day"])


@pytest.mark.parametrize("use_heads", [False, True])
def test_a_question_about_one_end_of_the_trip_does_not_request_the_other(heads, use_heads):
    # a dev reply: "going" made the keyword rule read the destination; the trailing "from" asks for the origin
    acts = extract_agent_acts(_turn("Where are you going from?", COACH), COACH, heads=heads if use_heads else None)
    assert "to_town" not in {a.slot for a in acts if a.act == "REQUEST"}


def test_alternative_question_about_a_value_already_held_is_no_request(heads):
    turn = _turn("Checking or savings?", ACCOUNTS, before={"own_account": "checking"})
    assert not [a for a in extract_agent_acts(turn, ACCOUNTS, heads=heads) if a.act == "REQUEST"]


# --- cascade: margins, stage, out-of-schema requests ---------------------------------------------------------------
def _evaluator(spec: WorkflowSpec, heads):
    from sage_core.evaluator.cascade import Evaluator
    return Evaluator(WorkflowRegistry([spec]), heads=heads)


def test_head_decisions_are_s2_encoder_with_probability_margins(heads):
    ev = _evaluator(BANK, heads)
    # PC: success while the recipient is missing
    t = _turn("I've placed your transfer, which will take 3 business days.", BANK,
              {"account_type": "checking", "transfer_amount": "$200"},
              {"account_type": "checking", "transfer_amount": "$200"})
    v = ev.evaluate_turn(t)
    pc = [tr for tr in v.traces if tr.criterion.type == FailureClass.PC][0]
    p = pc.criterion.args["confidence"]
    assert pc.criterion.args["source"] == "head"
    assert pc.final.stage == Stage.S2_ENCODER and pc.final.decision == Decision.TRUE
    assert pc.final.margin == pytest.approx(abs(1 - 2 * p))
    # the turn's confidence: the dev-fitted map of extracted evidence applied to the margin (aggregate.py) ...
    from sage_core.evaluator.aggregate import EXTRACTED_OFFLINE, TurnConfidenceMap
    assert v.label == TurnLabel.FAILURE and v.confidence == EXTRACTED_OFFLINE.of_margin(v.label, pc.final.margin)
    # ... or, uncalibrated, (1 + margin) / 2 = p, the head's calibrated probability
    from sage_core.evaluator.cascade import CascadeConfig, Evaluator
    plain = Evaluator(WorkflowRegistry([BANK]), CascadeConfig(extracted_confidence=TurnConfidenceMap("plain", 0.9)),
                      heads=heads)
    assert plain.evaluate_turn(t).confidence == pytest.approx(p) == pytest.approx((1 + pc.final.margin) / 2)
    # WNF: asks for the length of stay when it is already given -> illegal; judged on the posterior at the prior of
    # a request outside Next(W, s)
    from sage_core.evaluator.verify.s2_symbolic import out_of_next_posterior
    t2 = _turn("How many days are you staying?", HOTEL, {"number_of_days": "3"}, {"number_of_days": "3"})
    w = [tr for tr in _evaluator(HOTEL, heads).evaluate_turn(t2).traces if tr.criterion.type == FailureClass.WNF][0]
    assert w.criterion.args["source"] == "head"
    assert w.final.stage == Stage.S2_ENCODER and w.final.decision == Decision.TRUE
    q = out_of_next_posterior(w.criterion.args["confidence"])
    assert q < w.criterion.args["confidence"] and w.final.margin == pytest.approx(abs(1 - 2 * q))


def test_out_of_schema_request_is_a_wnf_not_an_input_error(heads):
    ev = _evaluator(BANK, heads)
    t = _turn("What time do you want the alarm?", BANK, acts=[AgentAct("REQUEST", "alarm_time")])
    v = ev.evaluate_turn(t)
    wnf = [tr for tr in v.traces if tr.criterion.type == FailureClass.WNF]
    assert len(wnf) == 1 and wnf[0].criterion.args["in_schema"] is False
    assert wnf[0].final.decision == Decision.TRUE and wnf[0].final.stage == Stage.S1
    assert v.label == TurnLabel.FAILURE
    # a state slot outside the schema stays an input error naming line and field
    bad = _turn("ok", BANK, {"alarm_time": "7 am"}, {"alarm_time": "7 am"}, acts=[])
    bad._line = 7
    with pytest.raises(SageInputError) as e:
        ev.evaluate_turn(bad)
    assert e.value.line == 7 and e.value.field == "state_before.alarm_time"


def test_turn_without_criteria_is_not_the_most_confident(heads):
    from sage_core.evaluator.aggregate import EMPTY_ANNOTATED, EMPTY_EXTRACTED
    ev = _evaluator(BANK, heads)
    annotated = _turn("Have a great day!", BANK, acts=[AgentAct("GOODBYE")])
    text_only = _turn("Have a great day!", BANK)
    va, vt = ev.evaluate_turn(annotated), ev.evaluate_turn(text_only)
    assert va.traces == [] and va.label == TurnLabel.ACCEPTABLE and va.confidence == EMPTY_ANNOTATED < 1.0
    assert vt.traces == [] and vt.label == TurnLabel.ACCEPTABLE and vt.confidence == EMPTY_EXTRACTED < 1.0


# --- determinism -------------------------------------------------------------------------------------------------
def test_text_only_verdicts_identical_across_runs(heads):
    from sage_core.evaluator.cascade import Evaluator
    turns = [_turn(r, HOTEL, {"hotel_name": "Hyatt"}, {"hotel_name": "Hyatt"})
             for r in ["When are you checking in?", "Your room is booked.", "What city?", "Anything else?"]]
    reg = WorkflowRegistry([HOTEL])

    def run():
        out = []
        for v in Evaluator(reg).evaluate(turns):
            d = v.to_dict()
            d.pop("latency_ms", None)
            out.append(json.dumps(d, sort_keys=True))
        return out
    assert run() == run()


def test_retraining_reproduces_the_artifact_byte_for_byte(tmp_path, shared_data, heads):
    """Two `train-heads` processes with different string hashing (PYTHONHASHSEED) write the same bytes:
    nothing may depend on set order, thread scheduling or the process (a subset, to keep it short)."""
    import os
    import subprocess
    import sys

    runs = []
    for seed, name in (("1", "a.json"), ("2", "b.json")):
        env = dict(os.environ, PYTHONHASHSEED=seed, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))
        runs.append(subprocess.Popen([sys.executable, "-m", "sage_core", "train-heads", "--data", str(shared_data),
                                      "--scale", "0.015", "--out", str(tmp_path / name)], cwd=REPO, env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    for p in runs:
        assert p.wait(timeout=600) == 0, p.stderr.read().decode()[-2000:]
    a, b = (tmp_path / "a.json").read_bytes(), (tmp_path / "b.json").read_bytes()
    assert a == b
    h = load_heads(tmp_path / "a.json")
    assert h.slot_mlp["w1"].shape[0] == 769 and h.centred_mlp["w1"].shape[0] == 770  # pair / centred features, 384-d


def test_part_of_train_is_put_to_the_heads_in_paraphrased_schemas(shared_data):
    """``train-heads --paraphrases`` shows the slot and mention heads part of train in our paraphrased renderings of
    the train schema (data/schema_paraphrases/train): the same sentences, the same requested slots under their new
    names."""
    from sage_core.science.heads import train as T

    renderings = T.paraphrase_renderings(shared_data / "sgd" / "train", T.TRAIN_PARAPHRASES)
    assert len(renderings) >= 2
    split = T.collect(shared_data / "sgd" / "train", 300, 400, T.SEED)
    again = T.rerender(split, renderings, T.SEED)
    assert T.rerender(split, renderings, T.SEED).sentences == again.sentences  # seeded
    assert T.rerender(split, [], T.SEED) is split  # without renderings, the split as it was
    changed = 0
    for (g, sent, slots, req), (g2, sent2, slots2, req2) in zip(split.sentences, again.sentences):
        assert (g, sent) == (g2, sent2) and len(slots) == len(slots2) and len(req) == len(req2)
        assert req2 <= {n for n, _ in slots2}
        if slots2 != slots:
            changed += 1
            table = next(r for r in renderings if tuple(slots) in r and r[tuple(slots)][0] == slots2)
            assert req2 == {table[tuple(slots)][1][n] for n in req}
    assert 0.3 < changed / len(split.sentences) < 0.7  # about PARAPHRASE_SHARE
    rows = T.collect_mentions(shared_data / "sgd" / "train", 200, T.SEED)
    moved = T.rerender_mentions(rows, renderings, T.SEED)
    assert [r[0] for r in moved] == [r[0] for r in rows] and any(a[1] != b[1] for a, b in zip(rows, moved))


# --- the artifact and its errors -----------------------------------------------------------------------------------
def test_committed_artifact_is_small_json_and_offline():
    raw = DEFAULT_HEADS_PATH.read_bytes()
    assert len(raw) < 6_000_000  # "kilobytes to a few MB" (issue 9); 5.2 MB with the centred slot head and the second act MLP
    d = json.loads(raw)  # plain JSON, no pickle
    assert d["format"] == "sage-heads/4"
    assert d["meta"]["fitted_on"] == "train split annotations" and d["meta"]["chosen_and_calibrated_on"] == "dev split"


@pytest.mark.parametrize("content,why", [(None, "not found"), ("{not json", "not valid JSON"),
                                         ('{"format": "sage-heads/4", "acts": {}}', "malformed"),
                                         ('{"format": "sage-heads/4", "acts": {"names": ["REQUEST"], "mlp": {"b1": [0]}}, "slots": {}}',
                                          "missing field 'w1'"),
                                         ('[1, 2]', "not a sage-heads/4 file"),
                                         ('{"format": "sage-heads/3"}', "not a sage-heads/4 file")])
def test_missing_or_corrupt_heads_file_is_a_clear_input_error(tmp_path, content, why):
    p = tmp_path / "heads.json"
    if content is not None:
        p.write_text(content)
    with pytest.raises(SageInputError) as e:
        load_heads(p)
    assert e.value.file == str(p) and why in str(e.value) and str(p) in str(e.value)


def test_cli_corrupt_heads_exit_2_without_traceback(tmp_path):
    bad = tmp_path / "heads.json"
    bad.write_text('{"format": "sage-heads/4", "acts": {"names": ["REQUEST"], "w": [[0.1]]}}')
    sl = tmp_path / "s.jsonl"
    sl.write_text(json.dumps({"turn_id": "d:1", "dialogue_id": "d", "workflow": "Restaurants_1:ReserveRestaurant", "history": [],
                              "user": "hi", "agent": "What day?", "state_before": {}, "state_after": {}}) + "\n")
    schema = REPO / "data" / "demo" / "schema.json"
    r = subprocess.run([sys.executable, "-m", "sage_core", "evaluate", "--slice", str(sl), "--schema", str(schema),
                        "--out", str(tmp_path / "v.jsonl"), "--heads", str(bad), "--quiet"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2, r.stderr
    assert str(bad) in r.stderr and "Traceback" not in r.stderr


def test_statements_without_a_question_are_not_read_as_requests(heads):
    spec = _spec("Stay_8:Reserve", {"price_per_night": "Price per night of the stay",
                                    "smoking_allowed": "Whether smoking is allowed in the room",
                                    "hotel_name": "Name of the hotel"}, ["hotel_name"])
    slots = [(s, spec.slots[s].description) for s in spec.slots]
    for reply in ["It costs $150 per night.", "Smoking is not allowed anywhere in the building."]:
        assert heads.act_probs(reply)["REQUEST"] < heads.act_threshold["REQUEST"]
        assert set(heads.requested(reply, slots).values()) == {0.0}
        assert not [a for a in extract_agent_acts(_turn(reply, spec), spec, heads=heads) if a.act == "REQUEST"]
    # an imperative without "?" is a request whatever the act head reads in it (SGD agents mostly ask with "?"):
    # the slot head scores what it asks for (``is_directive_request``)
    acts = extract_agent_acts(_turn("Please tell me the name of the hotel.", spec), spec, heads=heads)
    assert [(a.act, a.slot, a.source) for a in acts] == [("REQUEST", "hotel_name", "head")]


def test_relative_clause_of_an_offer_asks_nothing():
    """A relative clause after a name opens with a wh-word and carries the question mark of its offer, but it
    describes what is offered; questions that open with the same words, or ask the user, stay questions."""
    from sage_core.evaluator.text.sentences import asks_by_form, is_relative_clause
    offer = "How about Burdge Sarah, who is also a psychologist in San Jose?"  # SGD dev wording
    assert asks_by_form("who is also a psychologist in San Jose?")
    assert is_relative_clause("who is also a psychologist in San Jose?", offer)
    assert is_relative_clause("which is a Shopping Area?",
                              "How would you like visiting Fremont Street Experience, which is a Shopping Area?")
    for part, sent in [("who is the recipient?", "What amount do you want to transfer and who is the recipient?"),
                       ("Who will I send the transfer to?", "Who will I send the transfer to, and how much?"),
                       ("which one do you like?", "I found 4 flights, which one do you like?"),
                       ("which is your pick?", "There are two, which is your pick?"),
                       ("which would you prefer?", "Economy or business, which would you prefer?")]:
        assert not is_relative_clause(part, sent), part


def test_an_offer_with_a_relative_clause_requests_nothing(heads):
    """SGD dev: the offer's relative clause ("who is also a psychologist ...") was scored as a question by its form
    and read as asking for the therapist's name; the same reply asking which one the user wants still requests."""
    spec = _spec("Care_4:FindProvider", {"therapist_name": "Name of the therapist",
                                         "city": "City where the therapist practices",
                                         "type": "Kind of therapist the user needs"}, ["city", "type"])
    slots = [(s, spec.slots[s].description) for s in spec.slots]
    offer = "How about Burdge Sarah, who is also a psychologist in San Jose?"
    assert heads._find_asking_units(offer) == []
    assert not [a for a in extract_agent_acts(_turn(offer, spec), spec, heads=heads) if a.act == "REQUEST"]
    ask = "There are 3 therapists in San Jose, which city should I search in instead?"
    assert "which city should I search in instead?" in heads._find_asking_units(ask)


# --- value-support head ----------------------------------------------------------------------------------------------
EVENTS = WorkflowSpec(id="Shows_5:FindShow", service="Shows_5", intent="FindShow", description="",
                      slots={"kind": SlotSpec("kind", "Kind of event", True, ["Music", "Sports", "Theater"],
                                              "categorical"),
                             "town": SlotSpec("town", "City where the event is")},
                      required=["kind", "town"], optional={})
# SGD dev user turns that name a categorical value in other words (no word of the value occurs). Not every such turn
# is read: "economical priced" (SGD: price_range = moderate) gives moderate p 0.77 under SGD's own description but
# p 0.40 (inexpensive 0.42) under "How expensive the place is"; reworded descriptions move the value head too
@pytest.mark.parametrize("user,spec,slot,said,other", [
    ("Can you find some events? I'm looking for games.", EVENTS, "kind", "Sports", "Music"),
    ("Sounds interesting. Can you find me something to do like a games event?", EVENTS, "kind", "Sports", "Theater"),
])
def test_value_head_reads_categorical_values_said_in_other_words(heads, user, spec, slot, said, other):
    from sage_core.evaluator.text.heads import schema_slots, value_candidates
    from sage_core.evaluator.verify.s2_symbolic import VALUE_HEAD_MIN_SUPPORT
    sp = spec.slots[slot]
    p_said = heads.value_support(user, slot, sp.description, value_candidates(said, sp.possible_values, "categorical"))
    p_other = heads.value_support(user, slot, sp.description, value_candidates(other, sp.possible_values, "categorical"))
    assert p_said >= VALUE_HEAD_MIN_SUPPORT and p_other <= 0.4
    p_slot = heads.mention_probs_if_written(user, schema_slots(spec))[slot]
    ev = _evaluator(spec, heads)
    # the value said in other words is supported: u_t speaks of the slot and names this value, margin 2q - 1 with
    # q = p(u_t gives the slot a value, even odds) x p(this value rather than another)
    v = _uv_verdict(ev, spec, user, slot, said)
    assert v.stage == Stage.S2_ENCODER and v.decision == Decision.FALSE
    assert v.margin == pytest.approx(2 * p_slot * p_said - 1, abs=1e-6)
    # another value of the slot: the value head does not vouch for it, so the same u_t fails it
    v = _uv_verdict(ev, spec, user, slot, other)
    assert v.stage == Stage.S2_ENCODER and v.decision == Decision.TRUE
    assert v.margin == pytest.approx(1 - 2 * p_slot * p_other, abs=1e-6)  # a verdict's margin is |m|


def _uv_verdict(ev, spec, user: str, slot: str, value: str):
    t = Turn("d:1", "d", spec.id, [], user, "What city?", {}, {slot: value}, [], [])
    return [tr for tr in ev.evaluate_turn(t).traces if tr.criterion.type == FailureClass.UV][0].final


@pytest.mark.parametrize("user,said", [("Yes.", "Sports"), ("Sounds good, thanks.", "Music")])
def test_value_head_alone_does_not_support_a_value_u_t_never_speaks_of(heads, user, said):
    """The value head compares the slot's values given that u_t gives one; a bare acknowledgement gives none, and
    the value head still prefers one value strongly. The mention head's factor fails it."""
    from sage_core.evaluator.text.heads import schema_slots, value_candidates
    from sage_core.evaluator.verify.s2_symbolic import VALUE_HEAD_MIN_SUPPORT
    sp = EVENTS.slots["kind"]
    assert heads.value_support(user, "kind", sp.description,
                               value_candidates(said, sp.possible_values, "categorical")) >= VALUE_HEAD_MIN_SUPPORT
    assert heads.mention_probs_if_written(user, schema_slots(EVENTS))["kind"] < 0.1
    v = _uv_verdict(_evaluator(EVENTS, heads), EVENTS, user, "kind", said)
    assert v.stage == Stage.S2_ENCODER and v.decision == Decision.TRUE and v.margin > 0.8


def _heads_file(tmp_path, edit) -> Path:
    """The committed heads file after ``edit`` (a function changing its JSON in place), written under tmp_path."""
    d = json.loads(DEFAULT_HEADS_PATH.read_text())
    edit(d)
    p = tmp_path / "heads.json"
    p.write_text(json.dumps(d))
    return p


def test_heads_file_without_value_head_keeps_the_symbolic_verdict(tmp_path, heads):
    from sage_core.evaluator.cascade import Evaluator
    h = load_heads(_heads_file(tmp_path, lambda d: d.pop("values")))
    assert h.value_mlp is None and h.value_support("I like games.", "kind", "Kind", ["Sports", "Music"]) is None
    t = Turn("d:1", "d", EVENTS.id, [], "Can you find some events? I'm looking for games.", "What city?", {},
             {"kind": "Sports"}, [], [])
    uv = [tr for tr in Evaluator(WorkflowRegistry([EVENTS]), heads=h).evaluate_turn(t).traces
          if tr.criterion.type == FailureClass.UV][0]
    assert uv.final.stage == Stage.S2_SYMBOLIC and uv.final.decision == Decision.TRUE  # no word of "Sports"


def test_malformed_value_head_is_a_clear_input_error(tmp_path):
    p = _heads_file(tmp_path, lambda d: d["values"]["rank"].update(w=[1.0]))
    with pytest.raises(SageInputError) as e:
        load_heads(p)
    assert e.value.file == str(p) and "field 'w' has shape" in str(e.value)


# --- slot-mention head -----------------------------------------------------------------------------------------------
# the slot descriptions of SGD dev's Travel_1 (a service not in train); under descriptions reworded in our own words the
# head separates the two yes/no slots less well (docs/benchmarks.md: on dev turns that speak of one yes/no slot, the
# other reaches p >= 0.5 in 8 % of cases)
SIGHTS = WorkflowSpec(id="Sights_3:FindPlaces", service="Sights_3", intent="FindPlaces", description="",
                      slots={"location": SlotSpec("location", "City or town where the attraction is located"),
                             "category": SlotSpec("category", "Category to which the attraction belongs", True,
                                                  ["Museum", "Park", "Theme Park"], "categorical"),
                             "free_entry": SlotSpec("free_entry", "Boolean flag indicating whether entrance to "
                                                    "attraction is free", True, ["True", "False"], "bool"),
                             "good_for_kids": SlotSpec("good_for_kids", "Boolean flag indicating whether attraction "
                                                       "is good for to take kids to", True, ["True", "False"], "bool")},
                      required=["location"], optional={})


def _uv_final(ev, spec, user, after):
    t = Turn("d:1", "d", spec.id, [], user, "Where should I look?", {}, after, None, None)  # text-only
    # the S2 attempt (an abstention's final verdict has no stage)
    return {tr.criterion.args["slot"]: tr.attempts[-1] for tr in ev.evaluate_turn(t).traces
            if tr.criterion.type == FailureClass.UV}


def _mention_margin(heads, user, slot) -> float:
    """The verdict rule of ``s2_symbolic._mention_verdict``, written out: unsupported as surely as the even-odds
    reading says, supported as surely as the head's own reading says, 0 where the two priors disagree."""
    slots = [(n, sp.description) for n, sp in SIGHTS.slots.items()]
    p, pe = heads.mention_probs(user, slots)[slot], heads.mention_probs_if_written(user, slots)[slot]
    return 2 * pe - 1 if pe < 0.5 else (2 * p - 1 if p > 0.5 else 0.0)


# SGD dev user turns that speak of a yes/no slot in words its keyword list lacks ("entry fee" for free_entry:
# the keywords are "free" and "entrance"; "child friendly" for good_for_kids)
@pytest.mark.parametrize("user,slot,other", [
    ("Please show me attractions to visit without an entry fee.", "free_entry", "good_for_kids"),
    ("Search in New York and I need something child friendly.", "good_for_kids", "free_entry"),
])
def test_mention_head_reads_yes_no_slots_said_in_other_words(heads, user, slot, other):
    slots = [(n, sp.description) for n, sp in SIGHTS.slots.items()]
    p = heads.mention_probs(user, slots)
    assert p[slot] >= 0.5 > 0.4 > p[other]
    finals = _uv_final(_evaluator(SIGHTS, heads), SIGHTS, user, {slot: "True", other: "True"})
    for s in (slot, other):  # S2-encoder verdicts whose margin is the rule's (a verdict keeps |m|)
        assert finals[s].stage == Stage.S2_ENCODER and finals[s].margin == pytest.approx(abs(_mention_margin(heads, user, s)))
    # the slot u_t speaks of is not failed; the other one is never supported by it
    assert finals[slot].decision != Decision.TRUE and finals[other].decision != Decision.FALSE


def test_mention_reading_is_put_on_even_odds_for_a_written_value(heads):
    """``mention_probs_if_written`` is the head's reading with its calibration prior (the share of dev pairs in which
    u_t speaks of the slot) swapped for even odds: logit p_even = logit p - logit base rate, so never below p."""
    slots = [(n, sp.description) for n, sp in SIGHTS.slots.items()]
    b = heads.mention_base_rate
    assert 0.01 < b < 0.3
    for user in ("Find me something to do in Chicago.", "Search in New York and I need something child friendly."):
        p, pe = heads.mention_probs(user, slots), heads.mention_probs_if_written(user, slots)
        for s in p:
            assert pe[s] >= p[s]
            if 1e-4 < p[s] < 1 - 1e-4:
                logit = lambda x: math.log(x / (1 - x))  # noqa: E731
                assert logit(pe[s]) - logit(p[s]) == pytest.approx(-logit(b), abs=1e-3)


def test_mention_verdict_fails_only_what_both_priors_call_unsaid(heads):
    """A yes/no value nobody spoke of is unsupported; one the head half reads ("child friendly", p below 0.6) is not
    failed, since it is no rare reading among values users did give; where the priors disagree the verdict abstains."""
    users = ["I'd like a park in London.", "Find me something to do in Chicago.",
             "Search in New York and I need something child friendly."]
    slots = [(n, sp.description) for n, sp in SIGHTS.slots.items()]
    ps = [heads.mention_probs(u, slots)["good_for_kids"] for u in users]
    finals = [_uv_final(_evaluator(SIGHTS, heads), SIGHTS, u, {"good_for_kids": "True"})["good_for_kids"]
              for u in users]
    assert all(f.stage == Stage.S2_ENCODER for f in finals)
    assert [f.margin for f in finals] == [pytest.approx(abs(_mention_margin(heads, u, "good_for_kids"))) for u in users]
    assert ps[0] < 0.05 and finals[0].decision == Decision.TRUE  # nobody spoke of kids: unsupported
    assert 0.05 < ps[1] < 0.4 and finals[1].decision == Decision.ABSTAIN and finals[1].margin == 0.0
    assert ps[2] > ps[1] and finals[2].decision != Decision.TRUE


def test_mention_head_does_not_vouch_for_dontcare_when_u_t_gives_a_value(heads):
    """"No preference" is supported by the head only when no value for the slot was read from u_t: a user who names
    a kind of place has a preference, however strongly u_t speaks of the slot."""
    user = "Find me a Museum in Paris, please."
    assert heads.mention_probs(user, [(n, sp.description) for n, sp in SIGHTS.slots.items()])["location"] >= 0.6
    finals = _uv_final(_evaluator(SIGHTS, heads), SIGHTS, user, {"location": "dontcare"})
    assert finals["location"].decision == Decision.TRUE and finals["location"].stage == Stage.S2_SYMBOLIC


def test_heads_file_without_mention_head_keeps_the_symbolic_verdict(tmp_path, heads):
    from sage_core.evaluator.cascade import Evaluator
    h = load_heads(_heads_file(tmp_path, lambda d: d.pop("mentions")))
    user = "Please show me attractions to visit without an entry fee."
    assert h.mention_mlp is None and h.mention_probs(user, [("free_entry", "Whether entrance is free")]) is None
    finals = _uv_final(Evaluator(WorkflowRegistry([SIGHTS]), heads=h), SIGHTS, user, {"free_entry": "True"})
    assert finals["free_entry"].stage == Stage.S2_SYMBOLIC and finals["free_entry"].decision == Decision.TRUE


@pytest.mark.parametrize("edit", [lambda d: d["mentions"].update(platt=[1.0, "x"]),
                                  lambda d: d["mentions"].pop("base_rate"),
                                  lambda d: d["mentions"].update(base_rate=1.0)])
def test_malformed_mention_head_is_a_clear_input_error(tmp_path, edit):
    p = _heads_file(tmp_path, edit)
    with pytest.raises(SageInputError) as e:
        load_heads(p)
    assert e.value.file == str(p) and "mention head" in str(e.value)


# --- informs head: does a user's question give a value, or ask about the offer? (SGD dev questions) ---------------
DINER = WorkflowSpec(id="Eats_5:FindPlace", service="Eats_5", intent="FindPlace", description="",
                     slots={"city": SlotSpec("city", "Town to look for a place to eat in"),
                            "cuisine": SlotSpec("cuisine", "Kind of food served", True,
                                                ["Italian", "Mexican", "Vegetarian", "Pizza"], "categorical"),
                            "price_level": SlotSpec("price_level", "How expensive the place is", True,
                                                    ["cheap", "moderate", "pricey"], "categorical")},
                     required=["city"], optional={"cuisine": "dontcare", "price_level": "dontcare"})


@pytest.mark.parametrize("question,asks", [
    ("Does their menu have vegetarian food?", True),
    ("Is it a cheap place pricewise?", True),
    ("When does it arrive and is it a Business class ticket?", True),
    ("Can you find 1 room at a 2 star hotel?", False),
    # not here: "Could you find me a vegetarian restaurant?", which the head reads near its threshold (0.13 at 0.15);
    # the evaluator never drops values of a question asking the agent to act (next test)
])
def test_informs_head_tells_questions_that_ask_from_questions_that_give(heads, question, asks):
    p = heads.informs(question)
    assert p is not None and 0.0 <= p <= 1.0
    assert heads.question_asks(question) is asks


def _user_turn(user: str, spec: WorkflowSpec) -> Turn:
    return Turn("d:3", "d", spec.id, [], user, "Here is a place.", {"city": "Lafayette"}, {"city": "Lafayette"},
                None, None)


def test_values_read_in_a_question_about_the_offer_are_dropped(heads):
    from sage_core.evaluator.compile import turn_evidence
    from sage_core.evaluator.text.user_values import extract_user_values
    t = _user_turn("Does their menu have vegetarian food?", DINER)
    assert "cuisine" in {uv.slot for uv in extract_user_values(t, DINER)}  # the rules read a value
    uvs, _ = turn_evidence(t, DINER, heads=heads)
    assert "cuisine" not in {uv.slot for uv in uvs}
    uvs, _ = turn_evidence(_user_turn("Could you find me a vegetarian restaurant?", DINER), DINER, heads=heads)
    assert ("cuisine", "Vegetarian") in {(uv.slot, uv.value) for uv in uvs}


def test_a_question_written_without_its_mark_is_read_as_one(heads):
    """SGD dev users drop the question mark ("Is the ticket in Premium Economy."): the informs head reads it with
    the mark, so the value it asks about is not taken as given; a statement keeps its value."""
    from sage_core.evaluator.compile import turn_evidence
    uvs, _ = turn_evidence(_user_turn("Does their menu have vegetarian food.", DINER), DINER, heads=heads)
    assert "cuisine" not in {uv.slot for uv in uvs}
    uvs, _ = turn_evidence(_user_turn("I want vegetarian food.", DINER), DINER, heads=heads)
    assert ("cuisine", "Vegetarian") in {(uv.slot, uv.value) for uv in uvs}


def test_informs_rows_come_from_every_question_sentence(shared_data):
    """The informs head learns from questions among several sentences too, labelled by where the annotated value's
    span starts (dev rows; the head is fitted on train's)."""
    from sage_core.science.heads.train import collect_user_questions
    rows = collect_user_questions(shared_data / "sgd" / "dev", 100_000, 0)
    assert rows and all(q.endswith("?") and lab in (0, 1) for q, lab in rows)
    turns, _ = load_corpus("sgd", shared_data / "sgd" / "dev", shared_data / "sgd" / "dev" / "schema.json")
    whole = {(t.user or "").strip() for t in turns}
    parts = [(q, lab) for q, lab in rows if q not in whole and q.rstrip("?") + "." not in whole]
    assert {lab for _, lab in parts} == {0, 1}  # a question beside a sentence that gives the value is labelled 0


def test_slot_labels_of_a_reply_go_to_the_question_that_scores_them_best():
    """The annotations say which slots a reply requests, not which of its questions asks for which: each label stays
    on the question whose out-of-fold score for it is highest, the reply's other questions become negatives for it
    (an offer beside a request among them); replies of one unit, and replies requesting nothing, keep their labels."""
    import numpy as np
    from sage_core.science.heads.train import Split, assign_requests
    slots = [("destination", ""), ("date", ""), ("passengers", "")]
    both = frozenset({"destination", "date"})
    split = Split([], [
        (0, "Where are you going?", slots, both), (0, "When do you leave?", slots, both),
        (1, "How about Delta?", slots, frozenset({"passengers"})), (1, "How many tickets?", slots,
                                                                    frozenset({"passengers"})),
        (2, "Which day?", slots, frozenset({"date"})),
        (3, "Anything else?", slots, frozenset()), (3, "Shall I book it?", slots, frozenset())])
    z = np.array([2.0, 0.5, -1.0,  -1.0, 1.5, -2.0,   # reply 0: the first question scores the destination, the second the date
                  -3.0, -3.0, 0.9,  -3.0, -3.0, 0.4,  # reply 1: the offer scores the count higher than the question
                  -1.0, -1.0, -1.0,                   # reply 2: one unit, kept even where its score is low
                  0.0, 0.0, 5.0, 0.0, 0.0, 5.0])      # reply 3: no request, nothing to move
    got = [set(r[3]) for r in assign_requests(split, z).sentences]
    assert got == [{"destination"}, {"date"}, {"passengers"}, set(), {"date"}, set(), set()]
    z[9:12] = [-3.0, -3.0, 2.0]  # now the count question scores it best: the offer is a negative
    got = [set(r[3]) for r in assign_requests(split, z).sentences]
    assert got[2:4] == [set(), {"passengers"}]
    z[9:12] = [-3.0, -3.0, 0.9]  # a tie keeps the first question
    assert [set(r[3]) for r in assign_requests(split, z).sentences][2:4] == [{"passengers"}, set()]
    assert [r[1] for r in assign_requests(split, z).sentences] == [r[1] for r in split.sentences]  # units unchanged


def test_heads_file_without_informs_head_keeps_every_extracted_value(tmp_path):
    from sage_core.evaluator.compile import turn_evidence
    h = load_heads(_heads_file(tmp_path, lambda d: d.pop("informs")))
    assert h.informs_mlp is None and h.informs("Is it cheap?") is None and not h.question_asks("Is it cheap?")
    uvs, _ = turn_evidence(_user_turn("Does their menu have vegetarian food?", DINER), DINER, heads=h)
    assert "cuisine" in {uv.slot for uv in uvs}


STAY = WorkflowSpec(id="Stay_8:FindHotel", service="Stay_8", intent="FindHotel", description="",
                    slots={"city": SlotSpec("city", "City the hotel is in"),
                           "has_wifi": SlotSpec("has_wifi", "Whether the hotel has wifi", True, ["True", "False"],
                                                "bool")},
                    required=["city"], optional={})


def _wifi_verdict(ev, user: str):
    return _uv_final(ev, STAY, user, {"has_wifi": "True"})["has_wifi"]


def test_a_yes_no_keyword_only_in_a_question_about_the_offer_supports_no_value(heads, tmp_path):
    """SGD dev: "Do they have wifi?" asks about the hotel on offer (a REQUEST, no constraint); a tracker that writes
    has_wifi=True from it wrote a value nobody gave. The informs head's p that the question gives a value is the
    margin (2p - 1, S2-encoder). A question asking the agent to act, or a statement, still supports it."""
    ev = _evaluator(STAY, heads)
    asked = _wifi_verdict(ev, "Do they have wifi?")
    p = heads.informs("Do they have wifi?")
    assert asked.decision == Decision.TRUE and asked.stage == Stage.S2_ENCODER
    assert asked.margin == pytest.approx(abs(2 * p - 1)) and "question about the offer" in asked.rationale
    for user in ("Can you find me a hotel with wifi?", "I need wifi.", "Do they have wifi? I need wifi."):
        assert _wifi_verdict(ev, user).decision == Decision.FALSE, user
    # without an informs head the keyword supports the value, as before
    from sage_core.evaluator.cascade import Evaluator
    h = load_heads(_heads_file(tmp_path, lambda d: d.pop("informs")))
    assert _wifi_verdict(Evaluator(WorkflowRegistry([STAY]), heads=h), "Do they have wifi?").decision == Decision.FALSE


def test_malformed_informs_head_is_a_clear_input_error(tmp_path):
    p = _heads_file(tmp_path, lambda d: d["informs"].update(threshold="x"))
    with pytest.raises(SageInputError) as e:
        load_heads(p)
    assert e.value.file == str(p) and "informs head" in str(e.value)


def test_a_question_asking_the_agent_to_act_keeps_its_values(heads):
    """SGD dev: "Can you find a therapist for me?" gives the kind of doctor, though the informs head, which learned
    that "Can you find me a restaurant?" gives no value, reads it as asking."""
    from sage_core.evaluator.compile import turn_evidence
    care = WorkflowSpec(id="Care_2:FindDoctor", service="Care_2", intent="FindDoctor", description="",
                        slots={"town": SlotSpec("town", "Town the doctor works in"),
                               "specialty": SlotSpec("specialty", "Kind of doctor", True,
                                                     ["Therapist", "Dentist", "Psychiatrist"], "categorical")},
                        required=["town", "specialty"])
    question = "Can you find a therapist for me?"
    assert heads.question_asks(question)
    t = Turn("d:1", "d", care.id, [], question, "In which town?", {}, {}, None, None)
    uvs, _ = turn_evidence(t, care, heads=heads)
    assert ("specialty", "Therapist") in {(uv.slot, uv.value) for uv in uvs}


# --- a confirmation that restates held values is no re-request ----------------------------------------------------
def test_a_confirmation_restating_a_held_value_is_not_a_wnf(heads, shared_data):
    """SGD dev turn 8_00076:11 (Buses_1), text-only: the agent reads the booking back as a question ("Could you
    confirm ... leaving from Portland and going to Vancouver?"). Its clause "going to Vancouver?" only inherits the
    question mark (``asks_by_form``), so no request of the held to_location is read at all. Where the read-back does
    ask for the held slot as a question ("..., and where are you going to?"), a reply the act head reads as CONFIRM
    restates it: not judged (S2 abstains). The same slot asked for plainly, with no confirmation, stays a WNF."""
    import dataclasses
    from sage_core.evaluator.cascade import Evaluator
    turns, reg = load_corpus("sgd", str(shared_data / "sgd" / "dev"))
    t = next(x for x in turns if x.turn_id == "8_00076:11")
    assert t.agent.startswith("Could you confirm") and t.state_before.get("to_location")
    ev = Evaluator(reg, heads=dataclasses.replace(heads, slot_threshold=0.6))
    text_only = dataclasses.replace(t, user_values=None, agent_acts=None)

    def wnfs(turn):
        return {tr.criterion.args["slot"]: tr for tr in ev.evaluate_turn(turn).traces
                if tr.criterion.type == FailureClass.WNF}
    assert not wnfs(text_only)
    asks_again = dataclasses.replace(text_only, agent="Could you confirm that you want a bus ticket leaving from "
                                                       "Portland, and where are you going to?")
    wnf = wnfs(asks_again)
    assert "to_location" in wnf and wnf["to_location"].criterion.args["confirms_held"] is True
    assert not any(tr.final.decision == Decision.TRUE for tr in wnf.values())
    plain = wnfs(dataclasses.replace(text_only, agent="Where are you going to?"))
    assert "to_location" in plain and plain["to_location"].criterion.args["confirms_held"] is False
    assert plain["to_location"].final.decision == Decision.TRUE


def test_pair_score_is_the_mean_over_the_slot_renderings(heads):
    """The slot head scores a slot as name + description, description alone and name alone, as it was varied in
    training, and averages the pair logits; a one-word part of a request is scored as its own unit."""
    import numpy as np

    from sage_core.evaluator.text.heads import (SLOT_RENDERING_WEIGHTS, mlp_logits, pair_features, request_units,
                                                slot_renderings)
    slots = [("pickup_city", "City where the car is collected"), ("dropoff_date", "Day the car is returned"),
             ("car_type", "")]
    sent = "Which city will you pick it up in?"  # SGD dev wording
    u = heads._embed([sent])[sent].astype(np.float64)
    parts = []
    for r in range(len(SLOT_RENDERING_WEIGHTS)):
        texts = [slot_renderings(n, d)[r] for n, d in slots]
        e = heads._embed(texts)
        v = np.stack([e[t] for t in texts]).astype(np.float64)
        parts.append(mlp_logits(heads.slot_mlp, pair_features(u, v))[:, 0])
    assert slot_renderings("car_type", "") == ["car type", "car type", "car type"]
    want = sum(w * z for w, z in zip(SLOT_RENDERING_WEIGHTS, parts))
    assert np.allclose(heads.pair_scores(sent, slots), want, atol=1e-9)
    assert not np.allclose(parts[0], parts[1])  # the renderings do differ
    assert "destination?" in request_units("What is your departure city and destination?")  # SGD dev


def test_training_sample_can_be_restricted_to_some_services(shared_data):
    """``collect(services=...)`` keeps the dialogue turns of those services only (the domain-held-out benchmark fits
    the slot head without whole domains): every sentence is scored against that service's slots."""
    from sage_core.science.heads.train import collect, request_slots, request_units, _load
    dev = shared_data / "sgd" / "dev"
    _, reg = _load(dev)
    banks = {tuple(n for n, _ in request_slots(w)) for w in reg if w.service == "Banks_2"}
    some = collect(dev, 0, 40, 1, units=request_units, slots_of=request_slots, services={"Banks_2"})
    assert some.sentences and {tuple(n for n, _ in slots) for _, _, slots, _ in some.sentences} <= banks
    every = collect(dev, 0, 40, 1, units=request_units, slots_of=request_slots)
    assert {tuple(n for n, _ in slots) for _, _, slots, _ in every.sentences} - banks


def test_domain_benchmark_groups_services_by_domain_and_reads_recall_at_a_precision():
    import numpy as np
    from tests.benchmark_modules import load_benchmark
    mod = load_benchmark("bench_slot_head_domains")
    from sage_core.corpora.sgd.loader import service_domain
    assert [service_domain(s) for s in ("Hotels_4", "RideSharing_2", "Alarm_1")] == ["Hotels", "RideSharing", "Alarm"]
    p = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    y = np.array([1, 1, 0, 1, 0, 1])
    # precision at each cut: 1, 1, 2/3, 3/4, 3/5, 4/6; the deepest cut reaching 0.75 finds 3 of the 4
    assert mod.recall_at_precision(p, y, 0.75) == 0.75
    assert mod.recall_at_precision(p, y, 0.8) == 0.5
    assert mod.recall_at_precision(p, y, 0.6) == 1.0
    assert mod.recall_at_precision(p, np.zeros(6, dtype=int), 0.5) == 0.0


def test_act_domain_benchmark_deals_whole_domains_into_folds(shared_data):
    from tests.benchmark_modules import load_benchmark
    mod = load_benchmark("bench_act_head_domains")
    folds = mod.deal_folds(["Hotels", "Buses", "Events", "Hotels", "Flights", "Alarm"], 2)
    assert folds == {"Alarm": 0, "Buses": 1, "Events": 0, "Flights": 1, "Hotels": 0}
    rows = mod.reply_rows(shared_data / "sgd" / "dev", 1)
    assert len({r[1] for r in rows}) == len(rows) and all(r[2] for r in rows[:50])  # distinct replies, act sets
    assert {r[0] for r in rows} >= {"Alarm", "Banks"} and rows == mod.reply_rows(shared_data / "sgd" / "dev", 1)


def test_embedding_cache_is_written_whole_and_extended(tmp_path, monkeypatch):
    """The experiments' embedding cache is written beside its path and then moved into place (a run killed while
    writing left a truncated .npz the next run could not open), and grows with new strings only."""
    import numpy as np
    import sage_core.evaluator.verify.s2_encoders as enc
    from sage_core.science.heads.train import cached_embedder
    asked = []

    def fake_embed(strings):
        asked.append(list(strings))
        return {s: np.full(3, float(len(s))) for s in strings}
    monkeypatch.setattr(enc, "embed_float64", fake_embed)
    path = tmp_path / "emb.npz"
    embed = cached_embedder(path)
    assert embed(["ab"])["ab"].tolist() == [2.0, 2.0, 2.0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emb.npz"]
    got = cached_embedder(path)(["ab", "abc"])
    assert asked == [["ab"], ["abc"]] and got["abc"].tolist() == [3.0, 3.0, 3.0]
    with np.load(path) as z:
        assert z["keys"].tolist() == ["ab", "abc"]


def test_centred_pair_features_see_what_sets_a_slot_apart_from_its_schema():
    """The centred slot head's pair features are taken about the mean of the schema's slots: what every slot and the
    sentence share (a domain) moves only the plain cosine, and the same sentence and slot read differently beside
    other siblings."""
    import numpy as np

    from sage_core.evaluator.text.heads import centred_pair_features
    rng = np.random.default_rng(0)
    sent, slots = rng.normal(size=8), rng.normal(size=(4, 8))
    f = centred_pair_features(sent, slots)
    assert f.shape == (4, 2 * 8 + 2)
    c = slots.mean(axis=0)
    assert np.allclose(f[:, :8], (sent - c) * (slots - c))
    assert np.allclose(f[:, 8:16], np.abs(sent - slots))
    assert np.allclose(f[:, -2], slots @ sent)
    shift = rng.normal(size=8)
    g = centred_pair_features(sent + shift, slots + shift)
    assert np.allclose(g[:, :8], f[:, :8]) and np.allclose(g[:, -1], f[:, -1])  # a shared offset drops out
    assert not np.allclose(g[:, -2], f[:, -2])  # ... except from the plain cosine
    other = centred_pair_features(sent, np.vstack([slots[:2], rng.normal(size=(2, 8))]))
    assert not np.allclose(other[:2, -1], f[:2, -1])  # the same pair beside other siblings


def test_slot_probs_average_both_calibrated_slot_heads(heads):
    """``slot_probs`` is the mean of the plain and the centred head's calibrated probabilities, each the mean of its
    two listwise stages' (pair scores with the answer-kind features, Platt; the same plus the token-level match,
    its own Platt), before the answer-kind exclusion; recomputed here from the loaded weights."""
    import dataclasses

    import numpy as np

    from sage_core.evaluator.text.answer_types import answer_fit
    from sage_core.evaluator.text.heads import request_logit, request_slots, sigmoid, slot_rank_features
    assert heads.centred_mlp is not None and heads.slot_maxsim is not None and heads.centred_maxsim is not None
    slots = request_slots(BANK)
    sent = "Which account should the money come out of?"
    fit = answer_fit(sent, slots)
    zreq = request_logit(sent, float(heads._act_logits(sent)[heads.acts.index("REQUEST")]))
    m = heads.token_match_features(sent, slots)

    def calibrated(z, w, b, platt, token_stage):
        r = slot_rank_features(z, [0] * len(z), [zreq] * len(z), fit.features())
        first = sigmoid(platt[0] * (r @ w + b) + platt[1])
        a = np.concatenate([r, m], axis=1)
        second = sigmoid(token_stage.platt[0] * (a @ token_stage.w + token_stage.b) + token_stage.platt[1])
        assert not np.allclose(first, second)  # two stages, not one read twice
        return first, (first + second) / 2

    plain = calibrated(heads.pair_scores(sent, slots), heads.rank_w, heads.rank_b, heads.slot_platt, heads.slot_maxsim)
    centred = calibrated(heads.pair_scores(sent, slots, centred=True), heads.centred_rank_w, heads.centred_rank_b,
                         heads.centred_platt, heads.centred_maxsim)
    assert not np.allclose(plain[1], centred[1])  # two heads, not one read twice
    want = np.round(fit.exclusive((plain[1] + centred[1]) / 2), 6)
    got = heads.slot_probs(sent, slots)
    assert [got[n] for n, _ in slots] == want.tolist()
    alone = dataclasses.replace(heads, centred_mlp=None).slot_probs(sent, slots)
    assert [alone[n] for n, _ in slots] == np.round(fit.exclusive(plain[1]), 6).tolist()
    first_stages = dataclasses.replace(heads, slot_maxsim=None, centred_maxsim=None).slot_probs(sent, slots)
    assert [first_stages[n] for n, _ in slots] == np.round(fit.exclusive((plain[0] + centred[0]) / 2), 6).tolist()
    mixed = dataclasses.replace(heads, slot_maxsim=None).slot_probs(sent, slots)  # one head without its token stage
    assert [mixed[n] for n, _ in slots] == np.round(fit.exclusive((plain[0] + centred[1]) / 2), 6).tolist()


def test_token_match_reads_the_slot_a_question_asks_for_in_other_words(heads):
    """The token-level match (MaxSim over MiniLM's contextual token vectors) of a question and each slot's name and
    description: the slot the question asks for matches best, though the question shares no word with its name
    ("when ... leave" / departure_date, "where ... go" / destination_city), and its lead over the others is the
    feature the token stage reads. Our own wording of the schema; SGD dev-style questions."""
    slots = [("origin_city", "City the trip starts from"), ("destination_city", "City the trip goes to"),
             ("departure_date", "Day of leaving"), ("number_of_seats", "How many seats to book")]
    for sent, slot in (("When do you want to leave?", "departure_date"),
                       ("Where would you like to go?", "destination_city"),
                       ("For how many people?", "number_of_seats")):
        f = heads.token_match_features(sent, slots)
        names = [n for n, _ in slots]
        assert names[int(f[:, 0].argmax())] == slot, (sent, f[:, 0])
        i = names.index(slot)
        assert f[i, 1] > 0 and f[i, 2] == 1.0 and sum(f[:, 2]) == 1.0
        assert all(f[j, 1] < 0 for j in range(len(names)) if j != i)


def test_token_match_features_are_read_as_in_training():
    """Training's per-pair token features (``token_match_rows``) and inference's (``Heads.token_match_features``)
    are one computation: the same token rows give the same numbers. MaxSim itself: each slot-text token's best
    cosine with a sentence token, averaged over the text, then over the slot's two texts (name, description)."""
    import numpy as np

    from sage_core.evaluator.text.heads import SlotTokens, maxsim_features, slot_match_texts, token_matches
    from sage_core.science.heads.train import Split, token_match_rows, token_strings
    rng = np.random.default_rng(3)
    unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)  # noqa: E731
    slots = [("pickup_city", "City to collect the car"), ("car_type", "")]
    sents = ["Where will you pick it up?", "What kind of car?"]
    split = Split(sentences=[(0, sents[0], slots, frozenset({"pickup_city"})), (1, sents[1], slots, frozenset())])
    assert token_strings(split) == sorted(set(sents) | {"pickup city", ": City to collect the car", "car type"})
    assert slot_match_texts("car_type", "") == ["car type", "car type"]
    tok = {t: unit(rng.normal(size=(2 + len(t) % 5, 8))) for t in token_strings(split)}
    rows = token_match_rows(split, tok)
    assert rows.shape == (4, 3)
    heads = load_heads(tokens=lambda texts: {t: tok[t] for t in texts})
    for k, sent in enumerate(sents):
        assert np.array_equal(heads.token_match_features(sent, slots), rows[2 * k:2 * k + 2])
    # by hand: pickup_city's texts are its name and its description
    s = tok[sents[0]]
    by_hand = [np.mean([np.mean(np.max(tok[t] @ s.T, axis=1)) for t in slot_match_texts(n, d)]) for n, d in slots]
    assert np.allclose(rows[:2, 0], by_hand, atol=1e-12)
    assert np.allclose(rows[:2, 1], [by_hand[0] - by_hand[1], by_hand[1] - by_hand[0]], atol=1e-12)
    assert np.allclose(token_matches(s, SlotTokens.stack([tok[t] for n, d in slots for t in slot_match_texts(n, d)])),
                       by_hand, atol=1e-12)
    assert maxsim_features([0.4]).tolist() == [[0.4, 0.4, 1.0]]  # a schema of one slot: it leads by its own match


def test_token_rows_share_the_forward_pass_of_the_embedding(minilm):
    """``embed_tokens`` runs the float32 encoder once per string and leaves the string's embedding cached, bitwise
    the vector ``embed`` computes on its own (one code path: a verdict never depends on which came first); its rows
    are the real tokens' last-layer vectors without [CLS] / [SEP], unit length, within float32 noise of the
    float64 rows ``train-heads`` fits on."""
    import numpy as np

    import sage_core.evaluator.verify.s2_encoders as enc
    text = "Which day would you like to check out of the hotel?"  # SGD dev-style
    enc._EMB.clear()
    enc._TOK.clear()
    alone = enc.embed([text])[text]
    enc._EMB.clear()
    rows = enc.embed_tokens([text])[text]
    assert np.array_equal(enc._EMB.get(text), alone)
    n = len(enc.load_minilm().tokenizer(text)["input_ids"])
    assert rows.shape == (n - 2, 384) and np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(enc.embed_tokens([text])[text], rows)  # cached: the same rows again
    assert np.allclose(enc.tokens_float64([text])[text], rows, atol=1e-5)


@pytest.mark.parametrize("edit,why", [
    (lambda d: d["slots"]["token_stage"].update(w=[1.0] * 8), "field 'w' has shape"),
    (lambda d: d["slots_centred"]["token_stage"].update(platt=[1.0]), "malformed centred slot head's token-level"),
    (lambda d: d["slots"]["token_stage"].pop("b"), "malformed slot head's token-level stage"),
    (lambda d: d["slots_centred"].pop("token_stage"), "one slot head has a token-level stage and the other")])
def test_malformed_token_stage_is_a_clear_input_error(tmp_path, edit, why):
    p = _heads_file(tmp_path, edit)
    with pytest.raises(SageInputError) as e:
        load_heads(p)
    assert e.value.file == str(p) and why in str(e.value) and e.value.field in ("slots", "slots_centred")


def test_heads_file_without_token_stages_scores_with_the_first_stages(tmp_path, heads):
    import numpy as np
    h = load_heads(_heads_file(tmp_path, lambda d: (d["slots"].pop("token_stage"),
                                                    d["slots_centred"].pop("token_stage"))))
    assert h.slot_maxsim is None and h.centred_maxsim is None
    p = h.slot_probs("Who is the money for?", [(n, BANK.slots[n].description) for n in sorted(BANK.slots)])
    assert max(p, key=p.get) == "recipient_name" and all(np.isfinite(list(p.values())))
    assert p != heads.slot_probs("Who is the money for?", [(n, BANK.slots[n].description) for n in sorted(BANK.slots)])


@pytest.mark.parametrize("edit,why", [(lambda d: d["slots_centred"]["rank"].update(w=[1.0]), "field 'w' has shape"),
                                      (lambda d: d["slots_centred"].update(platt=[1.0, float("nan")]),
                                       "malformed centred slot head"),
                                      (lambda d: d["slots_centred"]["mlp"].pop("w1"), "field 'slots_centred'")])
def test_malformed_centred_slot_head_is_a_clear_input_error(tmp_path, edit, why):
    p = _heads_file(tmp_path, edit)
    with pytest.raises(SageInputError) as e:
        load_heads(p)
    assert e.value.file == str(p) and why in str(e.value)
