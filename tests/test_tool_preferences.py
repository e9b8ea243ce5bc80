"""Tool-calling steps: how a user's request is read (inflections, gaps, negation, withdrawal), the user's stated
preference among searched options (IUV), and the dialogue score's prior for steps that cannot change the outcome.
Hand-written transcripts of a made-up trip shop, through the real cascade (S1 + offline S2)."""
from __future__ import annotations

import json

import pytest

from sage_core.data.errors import SageInputError
from sage_core.evaluator.tools.user_requests import request_phrase_in, word_form_of
from tests.test_tool_steps import call, evaluate_transcripts, out

TOOLS = [
    {"type": "function", "function": {"name": "get_user", "parameters": {
        "type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}}},
    {"type": "function", "function": {"name": "find_trips", "parameters": {
        "type": "object", "properties": {"origin": {"type": "string"}, "day": {"type": "string"}},
        "required": ["origin", "day"]}}},
    {"type": "function", "function": {"name": "reserve_trip", "parameters": {
        "type": "object", "properties": {
            "user_id": {"type": "string"},
            "seat": {"type": "string", "enum": ["coach", "first"]},
            "legs": {"type": "array", "items": {"type": "object", "properties": {
                "leg_no": {"type": "string"}, "day": {"type": "string"}}, "required": ["leg_no", "day"]}}},
        "required": ["user_id", "seat", "legs"]}}},
]
POLICY = """service: trips
consequential: [reserve_trip]
requires_called: {reserve_trip: [get_user]}
request_words: {reserve_trip: [reserve a trip, reserve]}
option_preferences:
  - tools: [reserve_trip]
    arg: legs
    keys: [leg_no, day]
    options_from: [find_trips]
    available: "seats.{seat}"
    prefer:
      - {words: [cheapest, lowest price], least: "fare.{seat}"}
      - {words: [nonstop, direct], least: "@parts"}
      - {words: [fastest, quickest], least: "@span:departs:arrives"}
    time_window: {departs: departs, arrives: arrives}
spending_limits:
  - tools: [reserve_trip]
    key: trip_id
    paid: "payments[].amount"
"""


def leg(no, coach, departs, arrives, first=900, seats=5):
    return {"leg_no": no, "fare": {"coach": coach, "first": first}, "seats": {"coach": seats, "first": 2},
            "departs": departs, "arrives": arrives}


# one search: a direct leg T1 (300, 10:00 to 18:00), a two-leg option T2 + T3 (120 + 100 = 220, 08:00 to 11:00), a
# sold-out direct T4 (90)
SEARCH = json.dumps([leg("T1", 300, "10:00:00", "18:00:00"),
                     [leg("T2", 120, "08:00:00", "09:00:00"), leg("T3", 100, "09:30:00", "11:00:00")],
                     leg("T4", 90, "23:00:00", "00:30:00+1", seats=0)])


def trip(cid, wish, legs, seat="coach"):
    return {"id": cid, "messages": [
        {"role": "user", "content": f"Hi, I'm kim_7. I'd like to reserve a trip from Oslo on day 3. {wish}"},
        call("u", "get_user", {"user_id": "kim_7"}), out("u", '{"user_id": "kim_7"}'),
        call("f", "find_trips", {"origin": "Oslo", "day": "3"}), out("f", SEARCH),
        {"role": "assistant", "content": f"I found a few options. Shall I reserve {' + '.join(legs)} on day 3 in "
                                         f"{seat} for kim_7?"},
        {"role": "user", "content": "Yes, go ahead."},
        call("r", "reserve_trip", {"user_id": "kim_7", "seat": seat, "legs": [{"leg_no": n, "day": "3"}
                                                                           for n in legs]}),
        out("r", '{"ok": true}')]}


@pytest.fixture()
def run(tmp_path):
    def _run(*convs, policy=POLICY):
        return evaluate_transcripts(tmp_path, convs, TOOLS, policy)
    return _run


def preference_traces(res, dialogue):
    return [tr for t, v in res if t.dialogue_id == dialogue for tr in v.traces
            if tr.criterion.args.get("rule") == "option_preference"]


def test_request_words_in_any_form_with_gaps_and_local_negation():
    assert word_form_of("cancelling", "cancel") and word_form_of("cancellation", "cancel")
    assert word_form_of("changing", "change") and word_form_of("modifying", "modify")
    assert not word_form_of("cancelled", "cancel")  # a past form reports, it does not ask
    assert not word_form_of("bookkeeping", "book")
    assert request_phrase_in("change my flight", "I need to change my return flight from Austin.")
    assert request_phrase_in("cancel", "If that fails, would cancelling be an option?")
    assert request_phrase_in("change my flight", "I don't have the number, but I'd like to change my flight.")
    assert not request_phrase_in("cancel", "I don't want to cancel anything.")  # negated just before
    assert not request_phrase_in("change my flight", "change it, my sister said, and then the flight")  # too far apart
    assert not request_phrase_in("book", "My booking was made in May.")  # a noun after a determiner
    assert request_phrase_in("cheapest", "I want the cheapest one.", nouns_too=True)


def test_a_request_the_user_takes_back_is_not_dropped(run):
    def ask(cid, last_user):
        return {"id": cid, "messages": [
            {"role": "user", "content": "Hi, I'm kim_7. Can you reserve a trip from Oslo for me?"},
            {"role": "assistant", "content": "Sure, which day?"},
            {"role": "user", "content": last_user},
            {"role": "assistant", "content": "Alright. Have a nice day!"}]}

    res = run(ask("kept", "Day 3, please."), ask("withdrawn", "That's above my budget, I'll hold off for now."),
              ask("withdrawn2", "Never mind, thanks."))

    def dropped(dialogue):
        return [tr.final.decision.value for t, v in res if t.dialogue_id == dialogue for tr in v.traces
                if tr.criterion.args.get("rule") == "dropped_request"]

    assert dropped("kept") == ["true"]  # asked, never done, never declined
    assert dropped("withdrawn") == [] and dropped("withdrawn2") == []


def test_the_users_stated_preference_among_searched_options(run):
    res = run(trip("pricey", "The cheapest option please.", ["T1"]),
              trip("cheapest", "The cheapest option please.", ["T2", "T3"]),
              trip("nonstop_ok", "I want a nonstop trip.", ["T1"]),
              trip("nonstop_ignored", "I want a nonstop trip.", ["T2", "T3"]),
              trip("softened", "Direct would be nice, but one stop is fine too.", ["T2", "T3"]),
              trip("no_wish", "", ["T1"]),
              trip("first_class", "The cheapest option please.", ["T1"], seat="first"),
              trip("slow", "I need the quickest one.", ["T1"]))
    tr = preference_traces(res, "pricey")
    assert [(x.final.decision.value, x.final.stage.value) for x in tr] == [("true", "S2-symbolic")]
    # T4 (90) is cheaper but sold out: the rival named is T2 + T3 (220)
    assert "T1 (300)" in tr[0].final.rationale and "T2 + T3 (220)" in tr[0].final.rationale
    assert [x.final.decision.value for x in preference_traces(res, "cheapest")] == ["false"]
    assert [x.final.decision.value for x in preference_traces(res, "nonstop_ok")] == ["false"]
    assert [x.final.decision.value for x in preference_traces(res, "nonstop_ignored")] == ["true"]
    assert preference_traces(res, "softened") == [] and preference_traces(res, "no_wish") == []
    # prices in the call's own seat class: first class T1 900 vs T2 + T3 1800
    assert [x.final.decision.value for x in preference_traces(res, "first_class")] == ["false"]
    # fastest: first departure to last arrival, T1 480 min against T2 + T3 180 min
    tr = preference_traces(res, "slow")
    assert [x.final.decision.value for x in tr] == ["true"] and "T1 (480) where T2 + T3 (180)" in tr[0].final.rationale
    label = {t.dialogue_id: v.label.value for t, v in res if t.meta["step"].get("tool") == "reserve_trip"}
    assert label["pricey"] == "failure" and label["cheapest"] == "acceptable"


def test_clock_times_for_the_span_of_an_option():
    from sage_core.evaluator.tools.preferences import clock_minutes

    assert clock_minutes("09:30:00") == 570 and clock_minutes("9:05") == 545
    assert clock_minutes("00:30:00+1") == 1470  # the next day
    assert clock_minutes("late") is None and clock_minutes(None) is None


@pytest.mark.parametrize("sentence,window", [
    ("I prefer flights departing after 8am and before 9pm.", ("departure", 480, 1260)),
    ("Neither works for me as I don't want to fly before 11 AM EST.", ("departure", 660, 1440)),  # negated
    ("I can\u2019t leave before 10 am.", ("departure", 600, 1440)),  # a typographic apostrophe
    ("I need to arrive no later than 5:30 pm.", ("arrival", 0, 1050)),
    ("Something between 9 am and noon, please.", ("departure", 540, 720)),
    ("I'd prefer the morning flights.", ("departure", 0, 720)),
    ("Good morning, I need a flight.", None),  # a greeting
    ("After 8 and before 9.", None),  # no am / pm: which 8?
    ("I'll call after lunch.", None),
    ("After 9 pm but before 8 am.", None),  # empty
])
def test_a_time_window_the_user_states(sentence, window):
    from sage_core.evaluator.text.time_windows import stated_window

    w = stated_window(sentence)
    assert (None if w is None else ("arrival" if w.arrival else "departure", w.start, w.end)) == window


def test_the_users_time_window_among_searched_options(run):
    # T1 leaves 10:00 and lands 18:00; T2 + T3 leave 08:00 and land 11:00; T4 (sold out) leaves 23:00
    res = run(trip("too_early", "I don't want to leave before 9 am.", ["T2", "T3"]),
              trip("in_window", "I don't want to leave before 9 am.", ["T1"]),
              trip("cheapest_inside", "The cheapest trip leaving after 9 am, please.", ["T1"]),
              trip("lands_late", "I have to arrive before noon.", ["T1"]),
              trip("nothing_fits", "Only after 11 pm please.", ["T1"]),  # only the sold-out T4 leaves then
              trip("softened", "After 9 am would be nice, but any time is fine.", ["T2", "T3"]))

    def window(dialogue):
        return [x for x in preference_traces(res, dialogue) if x.criterion.args["least"] == "@window"]

    tr = window("too_early")
    assert [x.final.decision.value for x in tr] == ["true"]
    assert "T2 + T3 falls outside it where T1 fits" in tr[0].final.rationale
    assert [x.final.decision.value for x in window("in_window")] == ["false"]
    # the cheaper T2 + T3 leaves before the window: not a rival of the cheapest inside it
    assert [x.final.decision.value for x in preference_traces(res, "cheapest_inside")] == ["false", "false"]
    assert [x.final.decision.value for x in window("lands_late")] == ["true"]
    assert window("nothing_fits") == [] and window("softened") == []


@pytest.mark.parametrize("sentence,cap", [
    ("I'm willing to pay up to $600 for the upgrades.", 600.0),
    ("I really need it to fit under $1,000.", 1000.0),
    ("I'm willing to pay a change fee if needed, up to $100.", 100.0),  # the condition ends at the comma
    ("My budget is $250 and no more than $200 for the seat.", 200.0),  # the smallest cap
    ("If it costs under $100, book it.", None),  # a cap inside a condition
    ("If more than $100 of it will be wasted, use my card.", None),
    ("It costs $50.", None),
])
def test_the_most_a_user_says_they_will_pay(sentence, cap):
    from sage_core.evaluator.text.spending_limits import stated_limit

    assert stated_limit(sentence) == cap


def test_a_write_that_charges_more_than_the_user_would_pay(run):
    def spend(cid, wish, answer, earlier=None, error=False):
        msgs = [{"role": "user", "content": f"Hi, I'm kim_7. Please reserve a trip from Oslo on day 3. {wish}"},
                call("u", "get_user", {"user_id": "kim_7"}), out("u", json.dumps(earlier or {"user_id": "kim_7"})),
                {"role": "assistant", "content": "Shall I reserve T1 on day 3 in coach for kim_7?"},
                {"role": "user", "content": "Yes, go ahead."},
                call("r", "reserve_trip", {"user_id": "kim_7", "seat": "coach",
                                           "legs": [{"leg_no": "T1", "day": "3"}]}),
                out("r", "Error: no seats" if error else json.dumps(answer))]
        return {"id": cid, "messages": msgs}

    res = run(spend("over", "I can pay up to $250.", {"trip_id": "R1", "payments": [{"amount": 300}]}),
              spend("within", "I can pay up to $250.", {"trip_id": "R1", "payments": [{"amount": 220}]}),
              # the record already held a payment of 100: this call charges 300 - 100 = 200
              spend("delta", "I can pay up to $250.", {"trip_id": "R1", "payments": [{"amount": 100}, {"amount": 200}]},
                    earlier={"trip_id": "R1", "payments": [{"amount": 100}]}),
              spend("no_cap", "If it costs under $100, book it.", {"trip_id": "R1", "payments": [{"amount": 300}]}),
              spend("rejected", "I can pay up to $250.", None, error=True),
              spend("no_payments", "I can pay up to $250.", {"trip_id": "R1"}))

    def limit(dialogue):
        return [(tr.final.decision.value, tr.final.rationale) for t, v in res if t.dialogue_id == dialogue
                for tr in v.traces if tr.criterion.args.get("rule") == "spending_limit"]

    assert [d for d, _ in limit("over")] == ["true"] and "charge of 300" in limit("over")[0][1]
    assert [d for d, _ in limit("within")] == ["false"]
    assert [d for d, _ in limit("delta")] == ["false"] and "charges 200" in limit("delta")[0][1]
    assert limit("no_cap") == [] and limit("rejected") == [] and limit("no_payments") == []


def test_options_only_from_the_agents_own_searches(run):
    c = trip("unsearched", "The cheapest option please.", ["T1"])
    c["messages"] = [m for m in c["messages"] if not (m.get("tool_calls") and
                                                      m["tool_calls"][0]["function"]["name"] == "find_trips")
                     and m.get("tool_call_id") != "f"]
    assert preference_traces(run(c), "unsearched") == []  # nothing to compare with


def test_option_preference_policy_errors(tmp_path):
    from sage_core.specs.from_tools import read_policy, registry_from_tools

    p = tmp_path / "p.yaml"
    for text, needle in [
        ("option_preferences: {tools: [reserve_trip]}\n", "must be a list"),
        ("option_preferences:\n  - {tools: [reserve_trip], arg: legs, keys: [leg_no]}\n", r"option_preferences\[0\]"),
        ("option_preferences:\n  - {tools: [reserve_trip], arg: legs, keys: [leg_no], options_from: [find_trips],\n"
         "     prefer: [{words: [cheapest]}]}\n", r"option_preferences\[0\]\.prefer\[0\]"),
        ("option_preferences:\n  - {tools: [reserve_trip], arg: legs, keys: [leg_no], options_from: [find_trips],\n"
         "     prefer: [{words: [fastest], least: '@duration'}]}\n", "unknown 'least'"),
        ("option_preferences:\n  - {tools: [reserve_trip], arg: legs, keys: [leg_no], options_from: [find_trips],\n"
         "     prefer: [{words: [cheapest], least: fare}], time_window: {departs: departs}}\n",
         r"option_preferences\[0\]\.time_window"),
        ("spending_limits:\n  - {tools: [reserve_trip], key: trip_id, paid: amount}\n", r"spending_limits\[0\]"),
        ("spending_limits: {tools: [reserve_trip]}\n", "must be a list"),
    ]:
        p.write_text(text, encoding="utf-8")
        with pytest.raises(SageInputError, match=needle):
            read_policy(p)
    p.write_text("option_preferences:\n  - {tools: [reserve_trip], arg: legs, keys: [leg_no], options_from: "
                 "[find_flights], prefer: [{words: [cheapest], least: fare}]}\n", encoding="utf-8")
    with pytest.raises(SageInputError, match="tool 'find_flights'"):
        registry_from_tools(TOOLS, read_policy(p))


def test_steps_that_cannot_change_the_outcome_weigh_less_in_the_dialogue_score(run):
    from types import SimpleNamespace as V

    from sage_core.science.dialogue_score import PI_NO_EFFECT, noisy_or_score, outcome_effects

    fail = V(label="failure", confidence=1.0)
    assert noisy_or_score([fail], effects=[True]) == pytest.approx(0.5)
    assert noisy_or_score([fail], effects=[False]) == pytest.approx(PI_NO_EFFECT)
    assert noisy_or_score([fail, fail], effects=[False, False]) < noisy_or_score([fail], effects=[True])
    with pytest.raises(ValueError):
        noisy_or_score([fail], effects=[True, False])
    with pytest.raises(ValueError):
        noisy_or_score([fail], pi_no_effect=0.9)
    # on a real dialogue: the write that took effect can change the record, the lookups and the search cannot
    res = run(trip("pricey", "The cheapest option please.", ["T1"]))
    turns, verdicts = zip(*res)
    eff = outcome_effects(turns, verdicts, ["reserve_trip"])
    assert [t.meta["step"].get("tool") for t, e in zip(turns, eff) if e] == ["reserve_trip"]
