"""The extraction benchmark scores a split's turns by how new their service is to the heads (train *dialogues*)."""
import json

from sage_core.data.types import AgentAct, Turn
from sage_core.specs.workflow import SlotSpec, WorkflowRegistry, WorkflowSpec

from tests.benchmark_modules import load_benchmark


def _bench():
    return load_benchmark("bench_extraction")


def _spec(service: str) -> WorkflowSpec:
    return WorkflowSpec(id=f"{service}:Find", service=service, intent="Find", description="",
                        slots={"city": SlotSpec("city", "the city")}, required=["city"])


def _turn(i: int, service: str) -> Turn:
    return Turn(turn_id=f"d{i}:1", dialogue_id=f"d{i}", workflow=f"{service}:Find", history=[], user="hi",
                agent="Which city?", state_before={}, state_after={}, user_values=[],
                agent_acts=[AgentAct("REQUEST", "city")])


def test_turns_are_grouped_by_train_dialogues_then_by_domain(tmp_path):
    # train's schema would list Buses_2 and Trains_1 too; only its dialogues count
    dialogues = [{"dialogue_id": "1", "services": ["Buses_1"]}, {"dialogue_id": "2", "services": ["Hotels_2", "Buses_1"]}]
    (tmp_path / "dialogues_001.json").write_text(json.dumps(dialogues))
    reg = WorkflowRegistry([_spec(s) for s in ("Buses_1", "Buses_3", "Hotels_4", "Trains_1")])
    turns = [_turn(i, s) for i, s in enumerate(["Buses_1", "Trains_1", "Buses_3", "Hotels_4", "Buses_1"])]
    groups = _bench().novelty_groups(turns, reg, tmp_path)
    assert {k: (v[0], [t.turn_id for t in v[1]]) for k, v in groups.items()} == {
        "services with train dialogues": (["Buses_1"], ["d0:1", "d4:1"]),
        "new services of a domain in train": (["Buses_3", "Hotels_4"], ["d2:1", "d3:1"]),
        "domains without train dialogues": (["Trains_1"], ["d1:1"])}
    assert _bench().novelty_groups(turns, reg, tmp_path / "missing") == {}


def test_grouped_figures_reuse_each_turns_evidence():
    calls = []

    def evidence(bare, spec):
        calls.append(bare.turn_id)
        return [], [AgentAct("REQUEST", "city")]
    done: dict = {}
    fn = _bench()._remembered(evidence, done)
    t = _turn(0, "Buses_1")
    assert fn(t, _spec("Buses_1")) == fn(t, _spec("Buses_1")) and calls == ["d0:1"]
