"""Answer kinds (evaluator/text/answer_types): what a question asks for, what a slot holds, read from slot wording
written for these tests (no corpus schema), and their agreement as the slot head's listwise features."""
from __future__ import annotations

import pytest

from sage_core.evaluator.text.answer_types import answer_fit, question_kinds, question_side, slot_kinds, slot_side


@pytest.mark.parametrize("name,desc,kinds", [
    ("payee", "The person who receives the payment", {"PERSON"}),  # from the description's head phrase
    ("recipient_name", "Name of whoever gets the money", {"PERSON"}),  # from the name
    ("sender_account_type", "Which of the person's accounts the money leaves", {"TYPE"}),  # "... type" decides
    ("start_day", "First day of the booking", {"DATE"}),
    ("guests", "Number of guests staying", {"COUNT"}),
    ("contact_number", "Phone number of the venue", set()),  # an identifier, not a count
    ("budget", "Most the user wants to spend", {"AMOUNT"}),
    ("pickup_spot", "Location where the car is collected", {"PLACE"}),
    ("has_parking", "Whether the venue has parking", set()),  # yes/no slots hold no asked-for kind
    ("is_open_late", "Open after midnight", set()),
    ("cuisine", "Kind of food served", {"TYPE"}),
    ("venue_name", "Name of the venue", {"PLACE"}),
    ("dish", "The dish to order", set()),
])
def test_slot_kinds_come_from_the_slot_wording(name, desc, kinds):
    assert slot_kinds(name, desc) == frozenset(kinds)


@pytest.mark.parametrize("question,kinds", [
    ("To whom?", {"PERSON"}),
    ("Who should I send it to?", {"PERSON"}),
    ("How many people will be there?", {"COUNT"}),
    ("How many days should I make the reservation for?", {"DURATION"}),  # SGD dev: a length of stay, not a count
    ("How many nights?", {"DURATION"}),
    ("Transfer how much?", {"AMOUNT"}),
    ("How much time will you need the car for?", {"DURATION", "COUNT"}),  # not a sum
    ("How much longer will you stay?", {"DURATION", "COUNT"}),
    ("When and where do you want to pick it up?", {"DATE", "TIME", "PLACE"}),
    ("At what time?", {"TIME"}),
    ("What kind of movie do you like?", {"TYPE"}),
    ("Is there any particular type of food you are looking for?", {"TYPE"}),  # a kind asked without "what"
    ("Any preference?", set()),
    # SGD dev: the kind named as the noun of "what is the / your ..." or after a word of preference
    ("What is the arrival day?", {"DATE"}),
    ("What is your planned date to book the car from?", {"DATE"}),
    ("Do you have any preferred City to search for the hotel?", {"PLACE"}),
    ("What's your pick-up location?", {"PLACE"}),
    ("What is the amount you want to send?", {"AMOUNT"}),
    ("What is the amount of bedrooms you'll need?", set()),  # a count, named by no kind word
    ("How would you like visiting Fremont Street Experience, which is a Shopping Area?", set()),  # describes an offer
])
def test_question_kinds(question, kinds):
    assert question_kinds(question) == frozenset(kinds)


def test_agreement_is_per_slot_and_silent_without_kinds():
    slots = [("recipient_name", "Name of whoever gets the money"), ("amount", "How much money to send"),
             ("note", "A message for the recipient")]
    assert answer_fit("To whom?", slots).kind_agreement() == [(1.0, 0.0), (0.0, 1.0), (0.0, 0.0)]
    assert answer_fit("Anything else?", slots).kind_agreement() == [(0.0, 0.0)] * 3


@pytest.mark.parametrize("question,side", [
    ("Where are you traveling from?", "start"),
    ("Where are you going from?", "start"),  # the trailing preposition decides
    ("Where do you want to go?", "end"),
    ("Till what date?", "end"),
    ("From which date do you want the car?", "start"),
    ("When do you want to drop it off?", "end"),
    ("When did you want to leave and where are you going?", ""),  # both ends: the clauses decide
    ("How would you like to pay?", ""),
])
def test_question_side(question, side):
    assert question_side(question) == side


SIBLINGS = [("start_town", "Town the trip begins in"), ("goal_town", "Destination town of the trip"),
            ("seats", "Number of seats")]


def test_side_agreement_needs_a_sibling_of_the_other_end():
    assert slot_side("start_town", "Town the trip begins in") == "start"  # from the description's strong word
    assert slot_side("to_city", "City") == "end"  # from the name
    assert answer_fit("Where are you traveling from?", SIBLINGS).side_agreement() == [(1.0, 0.0), (0.0, 1.0), (0.0, 0.0)]
    # a schema with one end only: "Start time of the show" is no trip's start
    assert answer_fit("When does it start?", [("show_time", "Start time of the show"), ("seats", "Seats")]) \
        .side_agreement() == [(0.0, 0.0)] * 2


def test_exclusive_ends_lowers_the_other_end_only_beside_a_sibling():
    out = answer_fit("Where are you traveling from?", SIBLINGS).exclusive_ends([0.8, 0.9, 0.3])
    assert out[0] == 0.8 and out[2] == 0.3 and abs(out[1] - 0.9 * 0.2) < 1e-9
    # a question about no end, or a schema without both ends, changes nothing
    assert answer_fit("Which town?", SIBLINGS).exclusive_ends([0.8, 0.9, 0.3]) == [0.8, 0.9, 0.3]
    assert answer_fit("Where from?", SIBLINGS[1:]).exclusive_ends([0.9, 0.3]) == [0.9, 0.3]


def test_exclusive_kinds_lowers_slots_of_another_kind_only_beside_one_that_fits():
    slots = [("depart_day", "Day of departure"), ("depart_hour", "Time of departure"), ("riders", "Number of riders")]
    out = answer_fit("What time would you like to leave?", slots).exclusive_kinds([0.8, 0.9, 0.1])
    assert out[1] == 0.9 and abs(out[0] - 0.8 * 0.1) < 1e-9 and abs(out[2] - 0.1 * 0.1) < 1e-9
    # "when" asks for a date or a time: both fit; a question naming no kind changes nothing
    assert answer_fit("When would you like to leave?", slots).exclusive_kinds([0.8, 0.9, 0.1])[:2] == [0.8, 0.9]
    assert answer_fit("Anything else?", slots).exclusive_kinds([0.8, 0.9, 0.1]) == [0.8, 0.9, 0.1]
    # no slot holds what is asked for ("how long" of a rental with only dates): nothing to yield to
    assert answer_fit("How long do you need it?", slots[:2]).exclusive_kinds([0.7, 0.2]) == [0.7, 0.2]


def test_a_question_for_a_number_of_days_fits_the_length_of_stay_not_a_count_of_rooms():
    slots = [("check_in_date", "Date of check in"), ("stay_length", "Length of stay in days"),
             ("number_of_rooms", "Number of rooms to reserve")]
    fit = answer_fit("How many days will you need the reservation for?", slots)  # SGD dev
    assert fit.kind_agreement() == [(0.0, 1.0), (1.0, 0.0), (0.0, 1.0)]
    assert answer_fit("How many rooms?", slots).kind_agreement() == [(0.0, 1.0), (0.0, 1.0), (1.0, 0.0)]


def test_a_question_asking_either_of_two_kinds_ties_the_slots_holding_them():
    slots = [("leaving_date", "Date of bus leaving"), ("leaving_time", "Time of bus leaving"),
             ("return_date", "Date of the return trip"), ("travelers", "Number of travelers"),
             ("stay_length", "Number of nights of the stay")]
    when = answer_fit("When are you leaving?", slots)
    assert when.kind_ties(0)[1] and when.kind_ties(1)[0]
    assert not when.kind_ties(0)[2]  # two dates: the same kind, the pair scores tell them apart
    assert not answer_fit("What date are you leaving?", slots).kind_ties(0)[1]  # one kind asked
    assert not answer_fit("How long will you stay?", slots).kind_ties(4)[3]  # counts: their noun says which
