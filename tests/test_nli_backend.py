"""NLI backend: a tiny random DeBERTa-v2 saved locally; label order must come from the model's id2label."""
from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: E402  (a requirement: a broken install must fail, not skip)
import transformers  # noqa: E402

from sage_core.data.errors import ModelUnavailableError
from sage_core.data.types import AgentAct, UserValue
from sage_core.data.settings import Settings
from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from sage_core.evaluator.verify.s2_encoders import NLIBackend, load_nli, nli_margins
from tests.test_compiler import REGISTRY, make_turn  # noqa: E402

WORDS = ("the user wants a table at seven pm in san jose for two people category is sci fi science fiction "
         "mexican sushi agent asks restaurant time city . , ? i feel like okay").split()
PAIRS = [("The user wants a table at seven pm.", "The time is seven pm."),
         ("The category is sci fi.", "The category is science fiction."),
         ("I feel like mexican.", "The category is sushi.")]


def build_model(path, id2label):
    """Random tiny DeBERTa-v2 classifier + WordPiece tokenizer, saved with save_pretrained."""
    path.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(set(WORDS))
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt"), do_lower_case=True)
    tok.save_pretrained(str(path))
    cfg = transformers.DebertaV2Config(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
        max_position_embeddings=64, num_labels=3, id2label=id2label, label2id={v: k for k, v in id2label.items()},
        initializer_range=0.5, pad_token_id=0)
    torch.manual_seed(0)
    model = transformers.DebertaV2ForSequenceClassification(cfg).eval()
    model.save_pretrained(str(path))
    return path


def manual_margins(path, ent, con):
    tok = transformers.AutoTokenizer.from_pretrained(str(path))
    model = transformers.AutoModelForSequenceClassification.from_pretrained(str(path)).eval()
    enc = tok([p for p, _ in PAIRS], [h for _, h in PAIRS], padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        p = torch.softmax(model(**enc).logits, dim=-1).numpy()
    return p[:, ent] - p[:, con]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    base = tmp_path_factory.mktemp("nli")
    a = build_model(base / "ent_neu_con", {0: "entailment", 1: "neutral", 2: "contradiction"})
    b = build_model(base / "con_ent_neu", {0: "CONTRADICTION", 1: "ENTAILMENT", 2: "NEUTRAL"})
    return a, b


def test_label_order_read_from_config(models, monkeypatch):
    a, b = models
    _, ent, con, used = load_nli(str(a))
    assert (ent, con, used) == (0, 2, str(a))
    ma = np.array(nli_margins(PAIRS, str(a)))
    np.testing.assert_allclose(ma, manual_margins(a, 0, 2), atol=1e-5)
    _, ent, con, _ = load_nli(str(b))
    assert (ent, con) == (1, 0)
    mb = np.array(nli_margins(PAIRS, str(b)))
    np.testing.assert_allclose(mb, manual_margins(b, 1, 0), atol=1e-5)
    # same weights, different id2label: an assumed fixed order would give the same numbers
    assert not np.allclose(ma, mb, atol=1e-4)
    assert np.all(np.abs(ma) <= 1) and np.all(np.abs(mb) <= 1)


def test_evaluator_runs_the_nli_backend(models, monkeypatch):
    a, _ = models
    # the entry points' wiring: SAGE_NLI_MODEL_DIR read into Settings, passed into the config explicitly
    monkeypatch.setenv("SAGE_NLI_MODEL_DIR", str(a))
    ev = Evaluator(REGISTRY, CascadeConfig.from_settings("sage-core", Settings(), s2_backend="nli"))
    assert ev.s2_backend_name == f"nli: {a}"
    t = make_turn("I feel like sci fi.", "Okay.", {}, {"category": "science fiction"},
                  [UserValue("category", "sci fi")], [AgentAct("REQUEST", "location")])
    v = ev.evaluate_turn(t)
    tr = [x for x in v.traces if x.criterion.type.value == "IUV"][0]
    assert tr.attempts[-1].stage.value == "S2-encoder" and v.s2_backend == f"nli: {a}"
    # the NLI margin decides (or abstains below tau): premise = the dialogue window (history + u_t),
    # hypothesis = the claim in words (slot description + the value s_t holds); check it is that number
    backend = NLIBackend(model=str(a))
    from sage_core.evaluator.verify.s1 import TurnContext
    spec = REGISTRY.get(t.workflow)
    pair = backend.support_pair(TurnContext(t, spec, t.user_values, t.agent_acts), spec.describe_slot("category"),
                                "science fiction", "sci fi")
    window = "\n".join([f"{'User' if u.speaker == 'user' else 'Agent'}: {u.text}" for u in t.history[-6:]]
                       + ["User: I feel like sci fi."])
    assert pair == (window, "The category of food offered by the restaurant is science fiction.")
    m = backend.score_pairs([pair], "para")[0]
    assert tr.attempts[-1].margin == pytest.approx(abs(m), abs=1e-6)


def test_missing_model_dir_names_the_path(tmp_path, monkeypatch):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelUnavailableError) as e:
        NLIBackend(model=str(missing)).load()
    assert str(missing) in str(e.value) and "SAGE_NLI_MODEL_DIR" in str(e.value)
    monkeypatch.setenv("SAGE_NLI_MODEL_DIR", str(missing))  # the same through the entry points' settings
    with pytest.raises(ModelUnavailableError) as e:
        Evaluator(REGISTRY, CascadeConfig.from_settings("sage-core", Settings(), s2_backend="nli")).s2
    assert str(missing) in str(e.value)


def test_unloadable_hub_model_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("SAGE_NLI_MODEL_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError) as e:
        NLIBackend(model="cross-encoder/surely-not-cached-model").load()
    assert "cross-encoder/surely-not-cached-model" in str(e.value) and "SAGE_NLI_MODEL_DIR" in str(e.value)
