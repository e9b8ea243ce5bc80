"""Slice builder: caps, injection rate, class balance, and byte-for-byte reproducibility."""
from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from fixtures_sgd import registry  # noqa: F401  (fixture)

from sage_core.data.slice_io import read_slice
from sage_core.data.types import AgentAct, Turn, UserValue, Utterance
from sage_core.science.slice_builder import build_slice

REPO = Path(__file__).resolve().parents[1]


def corpus(n_dialogues=30):
    """Three turns per dialogue: an opening (PC/UV-able), a filling turn (IUV), a closing turn."""
    turns = []
    cities = ["San Jose", "Oakland", "Fresno", "Napa", "Davis", "Berkeley"]
    for d in range(n_dialogues):
        did = f"d{d:02d}"
        city = cities[d % len(cities)]
        wf = "Restaurants_9:ReserveRestaurant" if d % 3 else "Restaurants_9:FindRestaurants"
        u1 = f"I want a place in {city}."
        h = []
        turns.append(Turn(f"{did}:1", did, wf, list(h), u1, "What date?", {}, {"city": city},
                          [UserValue("city", city, (u1.index(city), u1.index(city) + len(city)))],
                          [AgentAct("REQUEST", "date")]))
        h += [Utterance("user", u1), Utterance("agent", "What date?")]
        u2 = "Tomorrow at 6 pm at Luigi's."
        s2 = {"city": city, "date": "Tomorrow", "time": "6 pm", "restaurant_name": "Luigi's"}
        turns.append(Turn(f"{did}:3", did, wf, list(h), u2, "For how many people?", {"city": city}, s2,
                          [UserValue("date", "Tomorrow", (0, 8)), UserValue("time", "6 pm", (12, 16)),
                           UserValue("restaurant_name", "Luigi's", (20, 27))],
                          [AgentAct("REQUEST", "party_size")]))
        h += [Utterance("user", u2), Utterance("agent", "For how many people?")]
        turns.append(Turn(f"{did}:5", did, wf, list(h), "Thanks, bye.", "Goodbye!", dict(s2), dict(s2), [],
                          [AgentAct("GOODBYE")]))
    return turns


def test_caps_rate_and_balance(registry):
    turns = corpus()
    out, summary = build_slice(turns, registry, n=40, rate=0.5, cap_per_intent=25, cap_files_per_service=20,
                               seed=0)
    assert len(out) == summary.n == 40
    assert len({t.turn_id for t in out}) == 40
    assert len({t.dialogue_id for t in out}) <= 20  # one service: at most 20 dialogues
    per_wf = Counter(t.workflow for t in out)
    assert max(per_wf.values()) <= 25 and len(per_wf) == 2
    gold = Counter((t.gold.label, t.gold.failure_class) for t in out)
    assert sum(v for (lab, _), v in gold.items() if lab == "failure") == 20
    assert gold[("acceptable", None)] == 20
    assert {c: gold[("failure", c)] for c in ("IUV", "WNF", "PC", "UV")} == {"IUV": 5, "WNF": 5, "PC": 5, "UV": 5}
    assert summary.sampled_workflows == 2 and summary.corpus_workflows == 2 and summary.schema_workflows == 2
    for t in out:
        if t.gold.label == "failure":
            assert t.meta["injected"] == t.gold.failure_class and "mutation" in t.meta
        else:
            assert "injected" not in t.meta


def test_round_robin_respects_small_caps(registry):
    out, summary = build_slice(corpus(), registry, n=7, rate=0.25, cap_per_intent=4, cap_files_per_service=3,
                               seed=1)
    assert len(out) == 7 and len({t.dialogue_id for t in out}) <= 3
    assert Counter(t.workflow for t in out).most_common(1)[0][1] <= 4


def test_n_beyond_the_caps_is_an_error_naming_them(registry):
    from sage_core import SageInputError
    with pytest.raises(SageInputError) as e:
        build_slice(corpus(), registry, n=100, rate=0.25, cap_per_intent=4, cap_files_per_service=3, seed=1)
    msg = str(e.value)
    assert "--n 100" in msg and "at most 7" in msg and "--cap-per-intent 4" in msg \
        and "--cap-files-per-service 3" in msg


def test_seed_controls_everything(registry):
    a, _ = build_slice(corpus(), registry, n=16, seed=4)
    b, _ = build_slice(corpus(), registry, n=16, seed=4)
    c, _ = build_slice(corpus(), registry, n=16, seed=5)
    assert [t.to_dict() for t in a] == [t.to_dict() for t in b]
    assert [t.to_dict() for t in a] != [t.to_dict() for t in c]


def test_uv_only_and_bad_arguments(registry):
    out, s = build_slice(corpus(), registry, n=30, rate=0.5, classes=["UV"], cap_per_intent=30,
                         cap_files_per_service=30)
    assert Counter(t.gold.failure_class for t in out if t.gold.label == "failure") == {"UV": 15}
    from sage_core.data.errors import SageInputError
    with pytest.raises(SageInputError):
        build_slice(corpus(), registry, classes=["XX"])
    with pytest.raises(SageInputError):
        build_slice(corpus(), registry, rate=1.5)


def _cli(args, hashseed):
    env = dict(os.environ, PYTHONHASHSEED=str(hashseed), HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "sage_core", "build-slice", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_on_sgd_is_byte_reproducible(shared_data, sgd_schema_path, tmp_path):
    dialogues = shared_data / "sgd" / "test"
    outs = []
    for i, hs in enumerate((1, 2)):
        out = tmp_path / f"slice{i}.jsonl"
        r = _cli(["--corpus", "sgd", "--dialogues", str(dialogues), "--schema", str(sgd_schema_path),
                  "--n", "280", "--rate", "0.5", "--seed", "0", "--out", str(out)], hs)
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    turns = read_slice(tmp_path / "slice0.jsonl")
    assert len(turns) == 280
    gold = Counter(t.gold.failure_class for t in turns if t.gold.label == "failure")
    assert sum(gold.values()) == 140 and min(gold.values()) >= 30
    assert max(Counter(t.workflow for t in turns).values()) <= 8
    per_service = {}
    for t in turns:
        per_service.setdefault(t.workflow.split(":")[0], set()).add(t.dialogue_id)
    assert max(len(v) for v in per_service.values()) <= 12
    assert "workflows" in r.stdout


def test_cli_error_is_one_line(tmp_path, sgd_schema_path, shared_data):
    r = _cli(["--dialogues", str(shared_data / "sgd" / "test"), "--schema", str(sgd_schema_path),
              "--classes", "IUV,NOPE", "--out", str(tmp_path / "x.jsonl")], 0)
    assert r.returncode == 2 and r.stderr.startswith("error:") and "NOPE" in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_caps_error_exit_2(tmp_path, sgd_schema_path, shared_data):
    r = _cli(["--dialogues", str(shared_data / "sgd" / "test"), "--schema", str(sgd_schema_path),
              "--n", "5000", "--cap-per-intent", "2", "--cap-files-per-service", "3",
              "--out", str(tmp_path / "x.jsonl")], 0)
    assert r.returncode == 2 and r.stderr.startswith("error:") and "Traceback" not in r.stderr
    assert "--cap-per-intent 2" in r.stderr and "--cap-files-per-service 3" in r.stderr
    assert not (tmp_path / "x.jsonl").exists()


@pytest.fixture(scope="module")
def dev_turns(shared_data):
    from sage_core import load_turns
    dev = shared_data / "sgd" / "dev"
    return load_turns("sgd", str(dev), str(dev / "schema.json"))


def test_natural_slice_uses_real_replies_and_text_only_strips(dev_turns):
    turns, registry = dev_turns
    by_id = {t.turn_id: t for t in turns}
    corpus_agent = {t.agent for t in turns}
    out, summary = build_slice(turns, registry, n=120, rate=0.5, seed=2, injection="natural")
    assert summary.injection == "natural"
    gold = Counter(t.gold.failure_class for t in out if t.gold.label == "failure")
    assert sum(gold.values()) == 60 and set(gold) == {"IUV", "WNF", "PC", "UV"}
    for t in out:
        if t.gold.failure_class in ("WNF", "PC"):
            src = by_id[t.meta["mutation"]["source_turn"]]
            assert t.agent == src.agent and src.dialogue_id != t.dialogue_id
        assert t.agent in corpus_agent  # every reply in the slice is a real SGD agent utterance
    template, _ = build_slice(turns, registry, n=120, rate=0.5, seed=2, injection="template")
    templated = [t for t in template if t.gold.failure_class in ("WNF", "PC")]
    assert templated and any(t.agent not in corpus_agent for t in templated)
    text, s2 = build_slice(turns, registry, n=120, rate=0.5, seed=2, injection="natural", text_only=True)
    assert s2.text_only and all(t.user_values is None and t.agent_acts is None for t in text)
    assert [(t.turn_id, t.agent, t.state_after, t.gold.failure_class) for t in text] == \
        [(t.turn_id, t.agent, t.state_after, t.gold.failure_class) for t in out]
    again, _ = build_slice(turns, registry, n=120, rate=0.5, seed=2, injection="natural")
    assert [t.to_dict() for t in again] == [t.to_dict() for t in out]
    with pytest.raises(Exception):
        build_slice(turns, registry, n=10, injection="fancy")
