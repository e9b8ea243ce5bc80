"""The unsaid-values benchmark writes a yes/no or "dontcare" value only for a slot u_t did not speak of (by its
annotated user acts) and that neither state holds, and counts the UV verdict on that slot."""
from collections import Counter

from sage_core.data.types import Turn, UserValue
from sage_core.specs.workflow import SlotSpec, WorkflowRegistry, WorkflowSpec

from tests.benchmark_modules import load_benchmark

SIGHTS = WorkflowSpec(id="Sights_3:FindPlaces", service="Sights_3", intent="FindPlaces", description="",
                      slots={"location": SlotSpec("location", "City where the attraction is"),
                             "category": SlotSpec("category", "Kind of attraction", True, ["Museum", "Park"],
                                                  "categorical"),
                             "free_entry": SlotSpec("free_entry", "Whether entrance is free", True,
                                                    ["True", "False"], "bool"),
                             "good_for_kids": SlotSpec("good_for_kids", "Whether it suits kids", True,
                                                       ["True", "False"], "bool")},
                      required=["location"], optional={})


def _bench():
    return load_benchmark("bench_unsaid_values")


def _turn(i: int, user: str, said: dict, before: dict, after: dict, annotated: bool = True) -> Turn:
    return Turn(f"d{i}:1", f"d{i}", SIGHTS.id, [], user, "Here is one.", before, after,
                [UserValue(s, v) for s, v in said.items()] if annotated else None, [] if annotated else None)


def test_only_slots_nobody_spoke_of_and_no_state_holds_are_written():
    mod = _bench()
    # free_entry was said, though the tracker missed it: not "unsaid"; category is held by both states
    t = _turn(1, "A park in London with free entry, please.", {"location": "London", "free_entry": "True"},
              {"category": "Park"}, {"category": "Park", "location": "London"})
    assert mod.unsaid_slots(t, SIGHTS) == ["good_for_kids"]
    reg = WorkflowRegistry([SIGHTS])
    turns = [t, _turn(2, "Anything in Paris?", {"location": "Paris"}, {}, {"location": "Paris"}),
             _turn(3, "Anything in Rome?", {}, {}, {"location": "Rome"}, annotated=False),  # no annotations: skipped
             _turn(4, "", {}, {}, {})]  # no u_t: skipped
    yn = mod.unsaid_value_turns(turns, reg, "yes/no", 10, 0)
    assert [u.turn_id for u, _ in yn] == ["d1:1", "d2:1"]
    for u, slot in yn:
        src = next(t for t in turns if t.turn_id == u.turn_id)
        assert SIGHTS.slots[slot].value_type == "bool" and slot in mod.unsaid_slots(src, SIGHTS)
        assert u.state_after == {**src.state_after, slot: u.state_after[slot]} and u.state_after[slot] in ("True", "False")
    dc = mod.unsaid_value_turns(turns, reg, "dontcare", 10, 0)
    assert all(u.state_after[s] == "dontcare" and s not in u.state_before for u, s in dc)
    assert {s for u, s in dc if u.turn_id == "d1:1"} == {"good_for_kids"}
    assert len(mod.unsaid_value_turns(turns, reg, "dontcare", 1, 0)) == 1  # seeded sample of n
    assert mod.unsaid_value_turns(turns, reg, "yes/no", 10, 3) == mod.unsaid_value_turns(turns, reg, "yes/no", 10, 3)


def test_outcomes_count_the_uv_verdict_on_the_written_slot():
    import dataclasses

    from sage_core.evaluator.cascade import CascadeConfig, Evaluator
    mod = _bench()
    reg = WorkflowRegistry([SIGHTS])
    # nothing in the dialogue speaks of kids (rules only: the symbolic "nobody mentions it" verdict fails it)
    t = _turn(1, "I'd like a park in London.", {"location": "London", "category": "Park"}, {},
              {"location": "London", "category": "Park"})
    pairs = mod.unsaid_value_turns([t], reg, "yes/no", 5, 0)
    ev = Evaluator(reg, CascadeConfig(use_heads=False))
    vs = ev.evaluate([dataclasses.replace(u, user_values=None, agent_acts=None) for u, _ in pairs])
    assert mod.uv_outcomes(pairs, vs) == Counter({"true": 1})
    assert mod.uv_outcomes([(t, "free_entry")], ev.evaluate([t])) == Counter({"none": 1})  # nothing written: no UV
