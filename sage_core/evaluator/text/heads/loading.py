"""Reading ``heads.json``: every array's shape checked, errors naming the file and the section."""
from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path
from typing import Optional

import numpy as np

from sage_core.data.errors import SageInputError
from sage_core.evaluator.text.heads.features import MAXSIM_RANK_FEATURES, RANK_FEATURES, VALUE_RANK_FEATURES
from sage_core.evaluator.text.heads.model import Embedder, Heads, ListwiseStage


DEFAULT_HEADS_PATH = Path(__file__).with_name("heads.json")
# 2: a second slot head on schema-centred pair features (``centred_pair_features``), averaged with the first; the
# slot threshold is the mean's
# 3: the act head is two MLPs, on the text as written and with its values masked (``act_input.act_text``), whose
# logits are averaged; a /2 file has the first only
# 4: each slot head may carry a token-level listwise stage (``token_stage``: ``MAXSIM_RANK_FEATURES``, its own Platt
# scaling), whose calibrated p is averaged with the plain stage's
FORMAT = "sage-heads/4"
DIM = 384
_LOADED: dict[str, "Heads"] = {}


def heads_file_error(path: Path, why: str, field: Optional[str] = None) -> SageInputError:
    return SageInputError(f"not a usable heads file: {why} (regenerate it with `python -m sage_core train-heads`)",
                          file=str(path), field=field)


def _array(d: dict, key: str, shape: tuple, path: Path) -> np.ndarray:
    try:
        a = np.asarray(d[key], dtype=np.float64)
    except KeyError:
        raise heads_file_error(path, f"missing field '{key}'") from None
    except (TypeError, ValueError):
        raise heads_file_error(path, f"field '{key}' is not numeric") from None
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise heads_file_error(path, f"field '{key}' has shape {a.shape} (expected {shape}) or non-finite values")
    return a


def _mlp(d: dict, n_in: int, n_out: int, path: Path) -> dict:
    if not isinstance(d.get("mlp"), dict):
        raise heads_file_error(path, "missing field 'mlp'")
    m = d["mlp"]
    try:
        hidden = len(m["b1"])
    except (KeyError, TypeError):
        raise heads_file_error(path, "missing field 'b1'") from None
    return {"w1": _array(m, "w1", (n_in, hidden), path), "b1": _array(m, "b1", (hidden,), path),
            "w2": _array(m, "w2", (hidden, n_out), path), "b2": _array(m, "b2", (n_out,), path)}


def _ranked_pair_head(path: Path, d: dict, key: str, what: str, n_in: int, n_rank: int) -> tuple:
    """(pair MLP, listwise weights, listwise bias, Platt) of a pair head with a listwise stage (the value head, the
    centred slot head) in section ``key`` of the file, checked; a malformed section is a ``SageInputError`` naming the
    file, the section and the head."""
    section = d[key]
    with _reading(path, what, key):
        mlp = _mlp(section, n_in, 1, path)
    stage = _listwise_stage(path, section, key, what, n_rank, weights="rank")
    return mlp, stage.w, stage.b, stage.platt


def _listwise_stage(path: Path, section: dict, key: str, what: str, n_rank: int,
                    weights: Optional[str] = None) -> ListwiseStage:
    """A listwise stage of ``section`` (file section ``key``), checked: ``w`` (n_rank,) and ``b`` (under
    ``section[weights]`` when given, else in ``section`` itself) and a two-number ``platt``."""
    with _reading(path, what, key):
        rank = section[weights] if weights else section
        w = _array(rank, "w", (n_rank,), path)
        b = float(rank["b"])
        platt = tuple(float(x) for x in section["platt"])
    if len(platt) != 2 or not all(math.isfinite(x) for x in (b, *platt)):
        raise heads_file_error(path, f"malformed {what}", key)
    return ListwiseStage(w, b, platt)


def _token_stage(path: Path, d: dict, key: str, what: str) -> Optional[ListwiseStage]:
    """The slot head's token-level listwise stage in section ``key`` (``token_stage``), checked; None when the
    section has none."""
    section = d[key].get("token_stage") if isinstance(d.get(key), dict) else None
    if section is None:
        return None
    return _listwise_stage(path, section, key, f"{what}'s token-level stage", len(MAXSIM_RANK_FEATURES))


@contextlib.contextmanager
def _reading(path: Path, what: str, key: str):
    """Malformed content while reading one optional head becomes a SageInputError naming the file, the head and its
    section of the file (``key``)."""
    try:
        yield
    except SageInputError as e:
        if e.field is not None:
            raise
        raise SageInputError(e.detail, file=e.file, field=key) from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise heads_file_error(path, f"malformed {what} ({type(e).__name__}: {e})", key) from None


def load_heads(path: Optional[str | Path] = None, embed: Optional[Embedder] = None,
               tokens: Optional[Embedder] = None) -> Heads:
    """Read and check a heads artifact (default: the committed ``heads.json``); cached per path unless an encoder
    (``embed``: unit vectors; ``tokens``: token rows) is passed.

    A missing, unreadable or malformed file is a ``SageInputError`` naming the file.
    """
    p = Path(path) if path is not None else DEFAULT_HEADS_PATH
    key = str(p.resolve()) if p.exists() else str(p)
    if embed is None and tokens is None and key in _LOADED:
        return _LOADED[key]
    if not p.is_file():
        raise heads_file_error(p, "not found")
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise heads_file_error(p, f"not valid JSON ({type(e).__name__})") from None
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise heads_file_error(p, f"not a {FORMAT} file")
    try:
        acts = [str(a) for a in d["acts"]["names"]]
        ad, sd = d["acts"], d["slots"]
        k = len(acts)
        if "REQUEST" not in acts:
            raise heads_file_error(p, "the act head has no REQUEST output")
        h = Heads(
            path=str(p), acts=acts, act_mlp=_mlp(ad, DIM, k, p), act_mlp_masked=_mlp(ad["masked"], DIM, k, p),
            act_platt=_array(ad, "platt", (k, 2), p),
            act_threshold={str(a): float(t) for a, t in ad["threshold"].items()},
            slot_mlp=_mlp(sd, 2 * DIM + 1, 1, p),
            rank_w=_array(sd["rank"], "w", (len(RANK_FEATURES),), p), rank_b=float(sd["rank"]["b"]),
            slot_platt=tuple(float(x) for x in sd["platt"]), slot_threshold=float(sd["threshold"]),
            meta=dict(d.get("meta") or {}), embed=embed, tokens=tokens)
    except SageInputError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise heads_file_error(p, f"malformed ({type(e).__name__}: {e})") from None
    if d.get("values") is not None:
        h.value_mlp, h.value_rank_w, h.value_rank_b, h.value_platt = _ranked_pair_head(
            p, d, "values", "value head", 2 * DIM + 1, len(VALUE_RANK_FEATURES))
    if d.get("mentions") is not None:
        with _reading(p, "mention head", "mentions"):
            md = d["mentions"]
            h.mention_mlp = _mlp(md, 2 * DIM + 1, 1, p)
            h.mention_platt = tuple(float(x) for x in md["platt"])
            h.mention_base_rate = float(md["base_rate"])
        if len(h.mention_platt) != 2 or not all(math.isfinite(x) for x in h.mention_platt) \
                or not 0.0 < h.mention_base_rate < 1.0:
            raise heads_file_error(p, "malformed mention head", "mentions")
    if d.get("informs") is not None:
        with _reading(p, "informs head", "informs"):
            fd = d["informs"]
            h.informs_mlp = _mlp(fd, DIM, 1, p)
            h.informs_platt = tuple(float(x) for x in fd["platt"])
            h.informs_threshold = float(fd["threshold"])
        if len(h.informs_platt) != 2 or not all(math.isfinite(x) for x in (h.informs_threshold, *h.informs_platt)):
            raise heads_file_error(p, "malformed informs head", "informs")
    if d.get("slots_centred") is not None:
        h.centred_mlp, h.centred_rank_w, h.centred_rank_b, h.centred_platt = _ranked_pair_head(
            p, d, "slots_centred", "centred slot head", 2 * DIM + 2, len(RANK_FEATURES))
    if len(h.slot_platt) != 2 or not all(math.isfinite(x) for x in (h.rank_b, h.slot_threshold, *h.slot_platt)):
        raise heads_file_error(p, "malformed slot head")
    h.slot_maxsim = _token_stage(p, d, "slots", "slot head")
    h.centred_maxsim = _token_stage(p, d, "slots_centred", "centred slot head") if h.centred_mlp is not None else None
    if h.centred_mlp is not None and (h.slot_maxsim is None) != (h.centred_maxsim is None):
        raise heads_file_error(p, "one slot head has a token-level stage and the other has none", "slots_centred")
    if embed is None and tokens is None:
        _LOADED[key] = h
    return h
