"""Blind by construction: the same-dialogue leak on the old sampling, gone with the default rule."""
from __future__ import annotations

from collections import Counter

import pytest

from audit import blinding, sampling
from sage_core import build_slice, load_corpus
from sage_core.data.types import Gold, Turn, Utterance

DEMO, SCHEMA = "data/demo/demo_slice.jsonl", "data/demo/schema.json"


@pytest.fixture(scope="module")
def demo_slices():
    import os
    os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    turns, reg = load_corpus("slice", DEMO, SCHEMA)
    out = {}
    for mode in ("template", "natural"):
        out[mode], _ = build_slice(turns, reg, n=40, rate=0.5, cap_per_intent=40, cap_files_per_service=40,
                                   seed=0, injection=mode)
    return out


def _two_turn_dialogue() -> tuple[Turn, Turn]:
    """t1 injected (WNF: the reply was rewritten; UV-like state edit on 'time'), t2 the original continuation."""
    t1 = Turn("d:1", "d", "S_1:I", [], "a table for two", "Injected reply?", {}, {"time": "9:00"},
              gold=Gold("failure", "UV"),
              meta={"injected": "UV", "original_agent": "What time?",
                    "mutation": {"slot": "time", "value": "9:00", "replaced": None}})
    t2 = Turn("d:2", "d", "S_1:I", [Utterance("user", "a table for two"), Utterance("agent", "What time?")],
              "at 7 pm", "Booked.", {}, {"time": "19:00"}, gold=Gold("acceptable"))
    return t1, t2


def test_exposes_hand_case_reply_and_state():
    t1, t2 = _two_turn_dialogue()
    found = blinding.exposes(t1, t2)
    assert {e.what for e in found} == {"reply", "state"}  # history shows "What time?"; s_1 lacks 'time'
    assert all(e.injected == "d:1" and e.shown_in == "d:2" for e in found)
    assert blinding.exposes(t2, t1) == []  # t2 is not injected, and t1 comes earlier
    assert blinding.exposed_turns([t1, t2]) == {"d:1"}
    assert blinding.exposures([t1]) == [] and blinding.exposures([t2]) == []
    assert not blinding.consistent_with(t2, [t1]) and not blinding.consistent_with(t1, [t2])
    # the later turn with the injected reply and state in its history exposes nothing
    t2b = Turn("d:2", "d", "S_1:I", [Utterance("user", "a table for two"), Utterance("agent", "Injected reply?")],
               "ok", "Booked.", {"time": "9:00"}, {"time": "9:00"})
    assert blinding.exposes(t1, t2b) == []


def test_old_sampling_leaks_and_the_default_does_not(demo_slices):
    sl = demo_slices["template"]
    # the old draw: every turn of every dialogue may be audited together
    old = sampling.stratified_sample(sl, 100, seed=0, max_per_dialogue=None)
    old_turns = [x.turn for x in old.turns]
    leaks = blinding.exposures(old_turns)
    assert len({e.injected for e in leaks}) >= 5  # several injected turns can be read off their dialogue
    assert {e.what for e in leaks} == {"reply", "state"}
    for e in leaks:  # each leak is real: the later turn's history / state shows the pre-injection original
        inj = next(t for t in old_turns if t.turn_id == e.injected)
        later = next(t for t in old_turns if t.turn_id == e.shown_in)
        if e.what == "reply":
            assert inj.meta["original_agent"] in [u.text for u in later.history if u.speaker == "agent"]
            assert inj.agent not in [u.text for u in later.history]
    # the default: one turn per dialogue, nothing exposed
    for seed in range(5):
        new = sampling.stratified_sample(sl, 100, seed=seed)
        per_dialogue = Counter(x.turn.dialogue_id for x in new.turns)
        assert max(per_dialogue.values()) == 1
        assert blinding.exposures([x.turn for x in new.turns]) == []
        assert new.design["dialogue_rule"]["max_per_dialogue"] == 1
    # more per dialogue when asked, still never an exposing combination
    more = sampling.stratified_sample(sl, 100, seed=0, max_per_dialogue=3)
    assert max(Counter(x.turn.dialogue_id for x in more.turns).values()) > 1
    assert blinding.exposures([x.turn for x in more.turns]) == []


def test_paper_protocol_default_is_one_turn_per_dialogue(demo_slices):
    s = sampling.paper_protocol(demo_slices["natural"], n=12, seed=2)
    assert max(Counter(x.turn.dialogue_id for x in s.turns).values()) == 1
    assert blinding.exposures([x.turn for x in s.turns]) == []
    for st in s.strata:  # pi stays n_h / N_h
        assert st.inclusion_prob == pytest.approx(st.sampled / st.population)
    with pytest.raises(ValueError):
        sampling.stratified_sample(demo_slices["natural"], 2, max_per_dialogue=0)


def test_injection_mode_and_templated_replies(demo_slices):
    tmpl, nat = demo_slices["template"], demo_slices["natural"]
    assert blinding.injection_modes(tmpl) == Counter({"template": 20})
    assert blinding.injection_modes(nat) == Counter({"natural": 20})
    assert blinding.templated_reply_turns(nat) == []
    templ = blinding.templated_reply_turns(tmpl)
    assert templ and all(blinding.injected_class(t) in ("WNF", "PC") for t in tmpl if t.turn_id in templ)
    assert {t.turn_id for t in tmpl if blinding.injected_class(t) in ("WNF", "PC")} == set(templ)
    rep = blinding.blinding_report(tmpl)
    assert rep["injection_modes"] == {"template": 20} and rep["templated_replies"] == templ


def test_readme_sgd_slice_paper_audit_leak_and_fix(shared_data):
    """The issue's case: the README's SGD slice (template injection), the paper's n=200 audit, seed 0."""
    from sage_core.science.slice_builder import load_turns
    s = shared_data / "sgd" / "test"
    turns, reg = load_turns("sgd", str(s), str(s / "schema.json"))
    sl, _ = build_slice(turns, reg, n=280, rate=0.5, cap_per_intent=8, cap_files_per_service=12, seed=0,
                        injection="template")
    old = [x.turn for x in sampling.paper_protocol(sl, n=200, seed=0, max_per_dialogue=None).turns]
    injected = [t for t in old if blinding.injected_class(t)]
    assert len(old) == 200 and len(injected) == 100
    assert len(blinding.exposed_turns(old)) >= 20  # the issue counted 27 of 100 on its slice version
    assert len(blinding.templated_reply_turns(old)) == sum(blinding.injected_class(t) in ("WNF", "PC")
                                                           for t in injected)
    new = sampling.paper_protocol(sl, n=200, seed=0)
    new_turns = [x.turn for x in new.turns]
    assert blinding.exposures(new_turns) == []
    assert len({t.dialogue_id for t in new_turns}) == len(new_turns)
    assert sum(1 for t in new_turns if blinding.injected_class(t)) >= 90  # failures keep their quota


def test_inclusion_probabilities_under_the_dialogue_rule(demo_slices):
    import numpy as np
    sl = demo_slices["template"]
    a = sampling.stratified_sample(sl, 3, seed=4)
    b = sampling.stratified_sample(sl, 3, seed=4)
    assert [(x.turn.turn_id, x.inclusion_prob) for x in a.turns] == [(x.turn.turn_id, x.inclusion_prob)
                                                                     for x in b.turns]
    assert all(1 / 200 <= x.inclusion_prob <= 1 for x in a.turns)
    assert "200 seeded draws" in a.design["dialogue_rule"]["inclusion_prob"]
    # hand case: d0 holds the only IUV turn (always drawn first) and a clean turn, which the rule makes
    # unreachable; the two other clean turns are then always drawn: pi = 1, not the nominal 2 / 3
    hand = [Turn("f", "d0", "S_1:I", [], "u", "a", {}, {}, gold=Gold("failure", "IUV")),
            Turn("c0", "d0", "S_1:I", [Utterance("user", "u"), Utterance("agent", "a")], "u", "a", {}, {},
                 gold=Gold("acceptable")),
            Turn("c1", "d1", "S_1:I", [], "u", "a", {}, {}, gold=Gold("acceptable")),
            Turn("c2", "d2", "S_1:I", [], "u", "a", {}, {}, gold=Gold("acceptable"))]
    h = sampling.stratified_sample(hand, {"IUV": 1, "clean": 3}, seed=0)
    assert {x.turn.turn_id: x.inclusion_prob for x in h.turns} == {"f": 1.0, "c1": 1.0, "c2": 1.0}
    assert next(st for st in h.strata if st.name == "clean").inclusion_prob == pytest.approx(2 / 3)
    assert h.design["dialogue_rule"]["unreachable_turns"] == 1 and h.design["dialogue_rule"]["shortfall"] == \
        {"clean": 1}
    # a turn-level share the rule distorts: clean turns whose dialogue holds an injected turn (they lose
    # their dialogue to the rarer failure stratum). Per-turn pi removes much of the naive n_h/N_h bias.
    inj = {t.dialogue_id for t in sl if blinding.injected_class(t)}
    truth = np.mean([t.dialogue_id in inj and not blinding.injected_class(t) for t in sl])
    est, naive = [], []
    for seed in range(30):
        s = sampling.stratified_sample(sl, 3, seed=seed)
        nominal = {st.name: st.inclusion_prob for st in s.strata}
        y = np.array([x.turn.dialogue_id in inj and not blinding.injected_class(x.turn) for x in s.turns], float)
        est.append((y / np.array([x.inclusion_prob for x in s.turns])).sum() / len(sl))
        naive.append((y / np.array([nominal[x.stratum] for x in s.turns])).sum() / len(sl))
    assert abs(np.mean(est) - truth) < abs(np.mean(naive) - truth)
    # where the rule cannot bind (one turn per dialogue), pi is exactly n_h / N_h
    single = [t for t in sl if t.turn_id.endswith("-t1")]
    s = sampling.stratified_sample(single, 2, seed=0)
    assert all(x.inclusion_prob == next(st.inclusion_prob for st in s.strata if st.name == x.stratum)
               for x in s.turns)
    assert s.design["dialogue_rule"]["unreachable_turns"] == 0
