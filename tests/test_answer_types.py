"""Answer kinds (evaluator/text/answer_types): what a question asks for, what a slot holds, read from slot wording
written for these tests (no corpus schema), and their agreement as the slot head's listwise features."""
from __future__ import annotations

import pytest

from sage_core.evaluator.text.answer_types import answer_agreement, question_kinds, slot_kinds


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
    ("Transfer how much?", {"AMOUNT"}),
    ("When and where do you want to pick it up?", {"DATE", "TIME", "PLACE"}),
    ("At what time?", {"TIME"}),
    ("What kind of movie do you like?", {"TYPE"}),
    ("Any preference?", set()),
])
def test_question_kinds(question, kinds):
    assert question_kinds(question) == frozenset(kinds)


def test_agreement_is_per_slot_and_silent_without_kinds():
    slots = [("recipient_name", "Name of whoever gets the money"), ("amount", "How much money to send"),
             ("note", "A message for the recipient")]
    assert answer_agreement("To whom?", slots) == [(1.0, 0.0), (0.0, 1.0), (0.0, 0.0)]
    assert answer_agreement("Anything else?", slots) == [(0.0, 0.0)] * 3
