"""Value aliases mined from SGD train and checked on dev (``science.alias_mining``): which words count, the committed
artifact is what mining writes, a broken file is a clear error, and the SGD profile uses the aliases."""
from __future__ import annotations

import json

import pytest

from sage_core.data.errors import SageInputError
from sage_core.data.types import Turn, Utterance
from sage_core.science.alias_mining import candidates, dev_check, mine
from sage_core.specs.workflow import SlotSpec, WorkflowSpec

# a made-up service: the size of a boat, said in other words
SPEC = WorkflowSpec("Boats_1:Rent", "Boats_1", "Rent", "", {
    "size": SlotSpec("size", "Size of the boat", True, ["Dinghy", "Yacht", "Skiff"], "categorical"),
    "port": SlotSpec("port", "Port to leave from"),
}, ["port"], {"size": "Skiff"})


def turn(i, user, after, before=None, history=()):
    return Turn(f"d{i}:1", f"d{i}", SPEC.id, [Utterance(s, t) for s, t in history], user, "Which port?",
                dict(before or {}), dict(after), None, None)


def corpus():
    out = []
    for i in range(6):  # "tiny" always comes with Dinghy
        out.append((turn(i, "I want a tiny boat.", {"size": "Dinghy"}), SPEC))
    for i in range(6, 12):  # "instead" comes with every change, whichever value
        out.append((turn(i, "A huge boat instead.", {"size": "Yacht"}), SPEC))
        out.append((turn(i + 100, "Oh, the small kind instead.", {"size": "Dinghy"}), SPEC))
    for i in range(12, 18):  # the default, written on a "yes": not said
        out.append((turn(i, "Lovely, go ahead.", {"size": "Skiff"}), SPEC))
    for i in range(18, 24):  # named by the agent just before: not said in other words
        out.append((turn(i, "The compact one then.", {"size": "Yacht"}, history=[("agent", "A Yacht?")]), SPEC))
    return out


def test_aliases_are_words_that_come_with_a_value_nobody_names():
    got = mine(corpus(), stop=frozenset({"a", "i", "the", "oh", "want", "then", "one", "kind"}))
    assert "tiny" in got["dinghy"]
    assert "huge" in got["yacht"]  # 6 of 6
    assert "instead" not in sum(got.values(), [])  # with Yacht 6 times and Dinghy 6 times: no value's word
    assert "skiff" not in got  # the default
    assert "compact" not in sum(got.values(), [])  # the agent had named the value
    assert "tiny boat" not in got["dinghy"]  # a two-word alias holding a one-word one adds nothing


def test_candidates_and_the_dev_check():
    assert candidates("Find a 4 star tiny boat.", frozenset({"find", "a"})) >= {"tiny", "boat", "tiny boat"}
    assert not any(any(c.isdigit() for c in g) for g in candidates("Find a 4 star tiny boat.", frozenset()))
    checks = dev_check({"dinghy": ["tiny"]}, [(turn(1, "Something tiny.", {"size": "Dinghy"}), SPEC),
                                             (turn(2, "Tiny budget, big boat.", {"size": "Yacht"}), SPEC)])
    assert checks[("dinghy", "tiny")] == (2, 1)


def test_committed_aliases_are_what_mining_writes(shared_data, tmp_path):
    import subprocess
    import sys

    from sage_core.corpora.sgd.profile import MINED_ALIASES_PATH
    from tests.conftest import REPO

    out = tmp_path / "aliases.json"
    r = subprocess.run([sys.executable, "-m", "sage_core", "mine-aliases", "--data", str(shared_data), "--out",
                        str(out)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert out.read_bytes() == MINED_ALIASES_PATH.read_bytes()


@pytest.mark.parametrize("content", ["{not json", json.dumps({"aliases": {"compact": "small"}}), json.dumps({})])
def test_a_broken_aliases_file_is_a_clear_error(tmp_path, content):
    from sage_core.corpora.sgd.profile import mined_value_aliases

    p = tmp_path / "mined_aliases.json"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(SageInputError, match="mined_aliases.json: not a usable aliases file"):
        mined_value_aliases(p)
    with pytest.raises(SageInputError, match="not a usable aliases file"):
        mined_value_aliases(tmp_path / "missing.json")


def test_a_value_said_in_mined_words_is_supported(minilm):
    """SGD dev: "I want a small car until March 13th." while s_t writes type = Compact (no word of it in the turn;
    the slot as SGD dev describes it, where the value head reads Compact at 0.55 and leaves it open)."""
    from sage_core import CascadeConfig, Evaluator
    from sage_core.corpora.sgd.profile import SGD_PROFILE, VALUE_ALIASES, mined_value_aliases
    from sage_core.data.profile import CorpusProfile
    from sage_core.specs.workflow import WorkflowRegistry

    mined = mined_value_aliases()
    value = next(v for v in sorted(mined) if v == "compact")  # the committed file holds it (mined from train)
    spec = WorkflowSpec("Cars_9:Find", "Cars_9", "Find", "", {
        "type": SlotSpec("type", "Type of the car", True, ["Compact", "Standard", "Full-size"], "categorical"),
        "city": SlotSpec("city", "City to pick the car up in"),
    }, ["city"])
    t = Turn("d:3", "d", spec.id, [], "I want a small car until March 13th.", "Which city?", {},
             {"type": "Compact"}, None, None)

    def uv_decisions(profile):
        reg = WorkflowRegistry([spec], profile=profile)
        v = Evaluator(reg, CascadeConfig(name="sage-core", s2_backend="offline")).evaluate([t])[0]
        return [tr.final.decision.value for tr in v.traces if tr.criterion.type.value == "UV"]

    assert value == "compact" and uv_decisions(SGD_PROFILE) == ["false"]  # supported: "small" says it
    hand_only = CorpusProfile(name="sgd-hand", value_aliases=VALUE_ALIASES)
    assert uv_decisions(hand_only) != ["false"]  # without the mined alias nothing supports it
