"""Natural injection: replies and values come from other real dialogues of the same split, never templates."""
from __future__ import annotations

import pytest

from sage_core.science.inject import appears, norm_text, pc_missing, turn_rng, wnf_candidates
from sage_core.science.natural_injection import (CONFIRMING_ACTS, NaturalPool, inject_natural, inject_pc_natural,
                                         inject_uv_natural, inject_wnf_natural)


@pytest.fixture(scope="module")
def dev_corpus(shared_data):
    """Three SGD dev files (train/dev are ours to use; never test for development)."""
    from sage_core.corpora.sgd.loader import load_sgd_dialogues
    from sage_core.specs.sgd_format import load_sgd_schema

    dev = shared_data / "sgd" / "dev"
    registry = load_sgd_schema(str(dev / "schema.json"))
    files = [str(dev / f"dialogues_00{i}.json") for i in (1, 2, 3)]
    turns = list(load_sgd_dialogues(files, registry))
    return turns, registry, NaturalPool(turns)


def _injected(turns, registry, pool, cls, seed=0, limit=400):
    out = []
    for t in turns[:limit]:
        r = inject_natural(t, cls, registry.get(t.workflow), turn_rng(seed, t.turn_id, cls), pool)
        if r is not None:
            out.append((t, r))
    return out


def test_wnf_reply_is_a_real_request_from_another_dialogue(dev_corpus):
    turns, registry, pool = dev_corpus
    by_id = {t.turn_id: t for t in turns}
    done = _injected(turns, registry, pool, "WNF")
    assert len(done) > 50
    for orig, inj in done:
        spec = registry.get(orig.workflow)
        mut = inj.meta["mutation"]
        src = by_id[mut["source_turn"]]
        assert src.dialogue_id != orig.dialogue_id
        assert inj.agent == src.agent != ""  # verbatim real utterance, no template
        assert src.workflow.split(":")[0] == spec.service
        assert [(a.act, a.slot) for a in src.agent_acts] and {a.act for a in src.agent_acts} == {"REQUEST"}
        assert {a.slot for a in inj.agent_acts} == {mut["slot"]}
        assert mut["slot"] in {s for s, _ in wnf_candidates(orig, spec)}
        assert mut["slot"] not in spec.legal_next(orig.state_before)
        # nothing but the reply and its acts changed
        assert inj.state_before == orig.state_before and inj.state_after == orig.state_after
        assert inj.user == orig.user and inj.gold.failure_class == "WNF"
        assert inj.meta["original_agent"] == orig.agent


def test_pc_reply_is_a_real_confirmation_of_the_same_workflow(dev_corpus):
    turns, registry, pool = dev_corpus
    by_id = {t.turn_id: t for t in turns}
    done = _injected(turns, registry, pool, "PC", limit=len(turns))
    assert len(done) > 20
    kinds = set()
    for orig, inj in done:
        src = by_id[inj.meta["mutation"]["source_turn"]]
        assert src.dialogue_id != orig.dialogue_id and src.workflow == orig.workflow
        assert inj.agent == src.agent
        acts = {a.act for a in inj.agent_acts}
        assert acts & CONFIRMING_ACTS
        kinds |= acts & CONFIRMING_ACTS
        missing = pc_missing(orig, registry.get(orig.workflow))
        assert missing and inj.meta["mutation"]["missing"] == missing
        assert not {a.slot for a in inj.agent_acts if a.act == "CONFIRM"} & set(missing)
        assert inj.state_after == orig.state_after
    assert kinds == {"CONFIRM", "NOTIFY_SUCCESS"}  # both real kinds of premature commitment occur


def test_uv_value_is_real_and_unsupported_here(dev_corpus):
    turns, registry, pool = dev_corpus
    done = _injected(turns, registry, pool, "UV")
    assert len(done) > 50
    for orig, inj in done:
        spec = registry.get(orig.workflow)
        mut = inj.meta["mutation"]
        slot, value = mut["slot"], mut["value"]
        assert inj.state_after[slot] == value != orig.state_after.get(slot)
        others = {t.dialogue_id for t in turns if t.workflow.split(":")[0] == spec.service
                  and value in (t.state_before.get(slot), t.state_after.get(slot))}
        assert others - {orig.dialogue_id}, f"{value!r} is no real value of {slot} in another dialogue"
        ctx = norm_text(" ".join([u.text for u in orig.history] + [orig.user, orig.agent]))
        assert not appears(value, ctx, spec.slots[slot].value_type)
        assert inj.agent == orig.agent


def test_not_applicable_without_other_dialogues(dev_corpus):
    turns, registry, _ = dev_corpus
    one = [t for t in turns if t.dialogue_id == turns[0].dialogue_id]
    alone = NaturalPool(one)  # only the turn's own dialogue: nothing real to transplant
    for t in one:
        spec = registry.get(t.workflow)
        for f in (inject_wnf_natural, inject_pc_natural, inject_uv_natural):
            assert f(t, spec, turn_rng(0, t.turn_id, "X"), alone) is None


def test_deterministic_per_seed(dev_corpus):
    turns, registry, pool = dev_corpus
    for cls in ("WNF", "PC", "UV", "IUV"):
        a = [r.to_dict() for _, r in _injected(turns, registry, pool, cls, seed=3, limit=300)]
        b = [r.to_dict() for _, r in _injected(turns, registry, NaturalPool(turns), cls, seed=3, limit=300)]
        assert a == b and a
    c = [r.to_dict() for _, r in _injected(turns, registry, pool, "WNF", seed=4, limit=300)]
    d = [r.to_dict() for _, r in _injected(turns, registry, pool, "WNF", seed=3, limit=300)]
    assert c != d
