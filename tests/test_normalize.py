"""Normalisation-aware matching: equal values in different words must match, different ones must not."""
from __future__ import annotations

import pytest

from sage_core.evaluator.text.normalize import compare, find_dontcare, find_in_text, normalize, values_match


@pytest.mark.parametrize("a,b", [
    ("7 pm", "19:00"), ("7 in the evening", "19:00"), ("afternoon 12", "12:00"), ("12 pm", "12:00"),
    ("half past 6 pm", "18:30"), ("evening 6:30", "18:30"), ("quarter to 8 pm", "19:45"),
    ("11:30 am", "11:30"), ("noon", "12 pm"), ("seven thirty pm", "19:30"), ("5:30 PM", "17:30"),
])
def test_times_match(a, b):
    assert values_match(a, b, "time")
    assert normalize(a, "time") == normalize(b, "time")


@pytest.mark.parametrize("a,b", [("7 pm", "7 am"), ("19:00", "19:30"), ("6 pm", "18:30")])
def test_different_times_do_not_match(a, b):
    assert compare(a, b, "time") is False


def test_time_without_period_matches_either_half_of_the_day():
    assert values_match("7:30", "19:30", "time") and values_match("7:30", "07:30", "time")
    assert not values_match("7:30", "20:30", "time")


@pytest.mark.parametrize("a,b,expected", [
    ("March 8th", "2019-03-08", True), ("the 8th", "2019-03-08", True), ("8th of March", "March 8", True),
    ("11th of this month", "March 11th", True), ("March 9th", "2019-03-08", False),
    ("2019-04-08", "2018-04-08", False), ("next Friday", "Friday", True), ("today", "today", True),
    ("Friday", "2019-03-08", None),  # a weekday cannot be checked against a calendar date
])
def test_dates(a, b, expected):
    assert compare(a, b, "date") is expected


@pytest.mark.parametrize("a,b", [("two", "2"), ("just one", "1"), ("2 people", "2"), ("four tickets", "4"),
                                 ("just me", "1")])
def test_numbers_match(a, b):
    assert values_match(a, b, "number")


def test_numbers_differ():
    assert compare("three", "2", "number") is False


@pytest.mark.parametrize("a,b", [("yes", "True"), ("True", "true"), ("no", "False")])
def test_booleans(a, b):
    assert values_match(a, b, "bool")
    assert not values_match("yes", "False", "bool")


@pytest.mark.parametrize("phrase", ["any", "doesn't matter", "no preference", "I don't care", "whatever",
                                    "dontcare", "Anything is fine"])
def test_dontcare(phrase):
    assert normalize(phrase, "text") == "dontcare"
    assert values_match(phrase, "dontcare", "categorical")
    assert not values_match(phrase, "cheap", "categorical")


def test_text_case_punctuation_synonyms():
    assert values_match("P.F. Chang's", "p f changs", "text")
    assert values_match("Benissimo Restaurant & Bar", "benissimo restaurant and bar", "text")
    assert values_match("NYC", "New York", "text")
    assert values_match("The Cheesecake Factory", "cheesecake factory", "text")
    assert not values_match("San Jose", "San Diego", "text")


def test_find_in_text_returns_spans():
    text = "Book a table for two at 7 in the evening on the 8th in Corte Madera."
    for value, vt, expect in [("19:00", "time", "7 in the evening"), ("2", "number", "two"),
                              ("2019-03-08", "date", "the 8th"), ("corte madera", "text", "Corte Madera")]:
        sp = find_in_text(value, text, vt)
        assert sp is not None and text[sp[0]:sp[1]] == expect, (value, sp)
    assert find_in_text("20:00", text, "time") is None
    assert find_in_text("San Jose", text, "text") is None


def test_numbers_inside_times_and_dates_are_not_counts():
    assert find_in_text("2", "see you at 2 pm", "number") is None
    assert find_in_text("8", "on March 8", "number") is None
    assert find_in_text("2", "for 2 at 5 pm", "number") == (4, 5)


def test_find_dontcare_cue():
    text = "I really don't care which one."
    sp = find_in_text("dontcare", text, "categorical")
    assert sp is not None and text[sp[0]:sp[1]] == "don't care"


def test_short_year_with_apostrophe_is_found_for_a_year_value():
    from sage_core.evaluator.text.normalize import find_in_text
    text = "songs from the album High Expectations from '19."
    sp = find_in_text("2019", text, "number")
    assert sp is not None and text[sp[0]:sp[1]] == "'19"
    assert find_in_text("2018", text, "number") is None
    assert find_in_text("19", "it costs 19 dollars", "number") is not None


def test_a_name_in_the_possessive_is_found():
    # SGD train user turns ("I like Jason Aldean's songs"): the name is there, its "'s" aside
    assert find_in_text("Jason Aldean", "I like Jason Aldean's songs as well.") == (7, 19)
    assert find_in_text("Frank Ocean", "Something from Frank Ocean\u2019s album") == (15, 26)
    assert find_in_text("Frank Ocean", "I like Frank Oceans songs") is None  # a different word, not a possessive


def test_no_preference_said_in_more_ways():
    # SGD train user turns whose state writes dontcare
    for text, cue in [("I have no specific date in mind.", "no specific date in mind"),
                      ("Please search in San Mateo, price is not an issue.", "is not an issue"),
                      ("How long can I watch it? Every theater is okay.", "Every theater is okay"),
                      ("I like Shawn Mendes, and I like all genres.", "like all genres")]:
        sp = find_dontcare(text)
        assert sp is not None and text[sp[0]:sp[1]] == cue, text
    # a preference, or an answer that accepts something else, is no "no preference"
    for text in ("Price is an issue for me.", "I have a date in mind.", "That is not a problem.",
                 "Yes, all the details are good."):
        assert find_dontcare(text) is None, text


@pytest.mark.parametrize("value,text,found", [
    ("Comedy", "I love comedies", "comedies"),
    ("Thriller", "Any thrillers playing?", "thrillers"),
    ("Family Counselor", "I need one of the family counselors there", "family counselors"),
    ("Church", "Are there churches nearby?", "churches"),
    ("New", "Any news?", None),  # a short word is not read through a plural
    ("Bus", "Two buses", None),  # nor a word of three letters
    ("Business", "business class", "business"),  # "business" is no plural
    ("Park", "parks", "parks"),
    ("Museum", "Museums, please.", "Museums"),  # capitalised because it opens the sentence
    ("Museum", "Sure. Museums near the river?", "Museums"),
    ("Museum", "I like Museums", None),  # a capital inside a sentence marks a name
])
def test_a_categorical_value_said_in_the_plural(value, text, found):
    span = find_in_text(value, text, "categorical")
    assert (text[span[0]:span[1]] if span else None) == found


def test_a_free_text_value_said_in_the_plural_only_as_a_common_noun():
    text = "Any good comedies with Jim Carrey?"
    assert find_in_text("Comedy", text, "text") == (9, 17)
    assert find_in_text("Frank Ocean", "I like Frank Oceans songs", "text") is None  # a name keeps its form
