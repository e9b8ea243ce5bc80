"""The heads' numerics on embeddings: pair features of a sentence against slots (plain and schema-centred),
the listwise ranking features, and the forward pass of a one-hidden-layer MLP."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from sage_core.evaluator.text.answer_types import ANSWER_FEATURES, SIDE_FEATURES
from sage_core.evaluator.text.sentences import opens_with_wh


def pair_features(sent: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Features of (sentence, slot) pairs: u*v, |u-v|, cosine. ``sent`` (d,) or (n, d), ``slots`` (n, d)."""
    sent = np.broadcast_to(sent, slots.shape)
    cos = np.sum(sent * slots, axis=1, keepdims=True)
    return np.concatenate([sent * slots, np.abs(sent - slots), cos], axis=1)


def _unit(a: np.ndarray) -> np.ndarray:
    return a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-12)


def centred_pair_features(sent: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """The second slot head's features of (sentence, slot) pairs, where ``slots`` (n, d) are all the slots the
    sentence is scored against (a schema's requestable slots): u'*v', |u-v|, cosine of u and v, cosine of u' and v',
    with u' = u - c and v' = v - c for c the mean of the slots. What a schema's slots share is mostly their domain,
    which a pair MLP on u*v memorises; centred, it sees what sets a slot apart from its siblings and whether the
    sentence leans that way. Alone it ranks better on domains without train dialogues and worse on new services of
    known domains than ``pair_features``; the two heads err on different services, so ``Heads.slot_probs`` averages
    them (docs/benchmarks.md, "Schema-centred pair features", dev only)."""
    c = slots.mean(axis=0)
    u = np.broadcast_to(sent - c, slots.shape)
    v = slots - c
    sent = np.broadcast_to(sent, slots.shape)
    cos = np.sum(sent * slots, axis=1, keepdims=True)
    cos_c = np.sum(_unit(u) * _unit(v), axis=1, keepdims=True)
    return np.concatenate([u * v, np.abs(sent - slots), cos, cos_c], axis=1)


# the slot head's listwise stage: the pair score against the other slots', the request score of the sentence,
# whether the kind of value the question asks for is one the slot holds, and whether the question is about the end
# of the trip / booking the slot is (``answer_types``)
RANK_FEATURES = ["z", "z - max other z", "is top", "request logit of the sentence (request_logit)"] + ANSWER_FEATURES \
    + SIDE_FEATURES
VALUE_RANK_FEATURES = RANK_FEATURES[:3]  # the value head's listwise stage: a value against the slot's other values
# a question opening with an asking wh-word ("Which account should I check?", "Who do you want to transfer it to?")
# asks for a value whatever the act head reads in it: fitted on the train split's domains, it reads such questions of
# new services as statements (dev, a bank service without train dialogues: REQUEST p 0.01-0.4). The listwise stage sees
# their REQUEST logit at least this high. Chosen on dev (request-candidate units, services without train dialogues:
# average precision of requested pairs 0.960 -> 0.962, recall at the dev-chosen threshold 0.851 -> 0.864; floors 0,
# 1, 2, 3 tried, 2 best on recall; services with train dialogues unchanged)
WH_REQUEST_LOGIT_FLOOR = 2.0


def request_logit(sentence: str, z: float) -> float:
    """The listwise stage's REQUEST feature of a request unit: the act head's logit ``z``, floored at
    ``WH_REQUEST_LOGIT_FLOOR`` for a question opening with an asking wh-word (``opens_with_wh``)."""
    return max(z, WH_REQUEST_LOGIT_FLOOR) if opens_with_wh(sentence) else z


def slot_rank_features(z: np.ndarray, sentence_ids: Sequence[int], zreq: Sequence[float],
                       answers: Sequence[tuple[float, ...]]) -> np.ndarray:
    """The slot head's listwise features (``RANK_FEATURES``): ``rank_features`` and, per pair, its answer-kind and
    trip-end agreement (``answer_types.AnswerFit.features``)."""
    extra = len(RANK_FEATURES) - 4
    return np.concatenate([rank_features(z, sentence_ids, zreq),
                           np.asarray(answers, dtype=np.float64).reshape(-1, extra)], axis=1)


def rank_features(z: np.ndarray, sentence_ids: Sequence[int], zreq: Sequence[float]) -> np.ndarray:
    """Listwise features of each (sentence, slot) pair given the pair scores ``z`` of all slots of its sentence
    (the first four of ``RANK_FEATURES``)."""
    z = np.asarray(z, dtype=np.float64)
    ids = np.asarray(sentence_ids)
    out = np.zeros((len(z), 4))
    for i in np.unique(ids):
        idx = np.flatnonzero(ids == i)
        zz = z[idx]
        order = np.sort(zz)[::-1]
        top, second = order[0], (order[1] if len(order) > 1 else order[0] - 10.0)
        other = np.where(zz == top, second, top)
        out[idx, 0] = zz
        out[idx, 1] = zz - other
        out[idx, 2] = (zz == top).astype(np.float64)
    out[:, 3] = np.asarray(zreq, dtype=np.float64)
    return out


# the slot head's token-level stage: RANK_FEATURES and how the sentence's words meet the slot's (``token_matches``),
# against the other slots of the schema. Dev, train domains held out in turn (benchmarks/bench_slot_head_domains.py,
# 2 folds): alone it ranks slots of domains the head never saw better than RANK_FEATURES alone (average precision
# 0.842 -> 0.863) and those it saw worse (0.961 -> 0.956); averaged with the plain stage, each Platt-scaled on dev,
# 0.855 and 0.960 (docs/benchmarks.md, "what the slot head reads and ranks by")
MAXSIM_FEATURES = ["token match", "token match - best other slot's", "token match is the best"]
MAXSIM_RANK_FEATURES = RANK_FEATURES + MAXSIM_FEATURES


@dataclass(frozen=True)
class SlotTokens:
    """The token vectors of a schema's slot texts, stacked for ``token_matches``: ``rows`` (M, d) unit rows of every
    text in turn (``schema_text.slot_match_texts``: two per slot), ``starts`` where each text's rows begin,
    ``lengths`` how many rows it has."""

    rows: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray

    @classmethod
    def stack(cls, texts: Sequence[np.ndarray]) -> "SlotTokens":
        lengths = np.asarray([len(t) for t in texts], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        return cls(np.concatenate(texts).astype(np.float64), starts, lengths.astype(np.float64))


def token_matches(sentence: np.ndarray, slots: SlotTokens, per_slot: int = 2) -> np.ndarray:
    """How well a sentence covers each slot's texts word by word (ColBERT's MaxSim, averaged), per slot: for each
    token of a slot text its best cosine with any token of the sentence (``sentence``, (n, d) unit rows), averaged
    over the text's tokens, then over the slot's ``per_slot`` texts. Contextual token vectors match "which day" with
    "date" or "where to" with "destination", where a whole-sentence embedding mostly says the sentence's domain."""
    best = np.max(slots.rows @ np.asarray(sentence, dtype=np.float64).T, axis=1)
    return (np.add.reduceat(best, slots.starts) / slots.lengths).reshape(-1, per_slot).mean(axis=1)


def maxsim_features(scores: Sequence[float]) -> np.ndarray:
    """``MAXSIM_FEATURES`` of each slot of one sentence, given each slot's ``token_matches``: the match, its lead over
    the best other slot (over 0 when it has no other), whether it leads."""
    ms = np.asarray(scores, dtype=np.float64)
    out = np.zeros((len(ms), 3))
    for i in range(len(ms)):
        others = np.delete(ms, i)
        lead = ms[i] - (others.max() if len(others) else 0.0)
        out[i] = (ms[i], lead, float(lead > 0))
    return out


def act_logits(mlps: tuple[dict, dict], raw: np.ndarray, masked: np.ndarray) -> np.ndarray:
    """The act head's logits (n, k): the mean of its two MLPs', one on the text as written (``raw``, (n, d)), one on
    the text with its values masked (``masked``, ``act_input.act_text``)."""
    return (mlp_logits(mlps[0], raw) + mlp_logits(mlps[1], masked)) / 2


def mlp_logits(params: dict, X: np.ndarray) -> np.ndarray:
    """One hidden ReLU layer: relu(X w1 + b1) w2 + b2."""
    h = np.maximum(X @ params["w1"] + params["b1"], 0.0)
    return h @ params["w2"] + params["b2"]


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))
