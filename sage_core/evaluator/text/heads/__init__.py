"""Learned, schema-driven heads on the frozen all-MiniLM-L6-v2 encoder (applied with numpy).

Four small heads (one hidden ReLU layer each, scikit-learn MLPs), trained by ``python -m sage_core train-heads``
and committed as ``heads.json`` beside this file (plain JSON weights: no pickle, loaded offline):

- **act head**: the embedding of an agent reply (or sentence) -> one probability per dialogue act (REQUEST,
  CONFIRM, NOTIFY_SUCCESS, OFFER, INFORM, ...), multi-label, Platt-calibrated per act;
- **slot head**: a request sentence against *every* slot of the workflow's schema. The slot is embedded
  from its name and description, its description alone and its name alone (``slot_renderings``; the pair logit is
  their ``SLOT_RENDERING_WEIGHTS`` mean), and the pair is scored from schema-free features
  (elementwise product, absolute difference, cosine), so slots of services never seen in training,
  renamed / paraphrased schemas and slots outside the current intent are scored the same way; a listwise
  logistic stage then weighs each slot's score against the other slots of the schema, the sentence's
  request score, whether the question asks for the kind of value the slot holds and whether it is about the end of
  the trip the slot is (origin or destination; ``slot_rank_features``, ``answer_types``). Each clause of a multi-part question is scored as well (``request_units``);
- **slot-mention head** (optional in the file): u_t against every slot of the schema (``slot_text``): p(u_t gives
  a value for the slot at all), whatever the value; Platt-calibrated. Used by S2's UV check for yes/no slots and
  "no preference" values said in words no keyword list has (``verify.s2_symbolic``'s mention verdict);
- **informs head** (optional in the file): a one-sentence user question -> p(it gives a value) ("Can you find 1
  room at a 2 star hotel?") rather than asking about the offer ("Does their menu have vegetarian food?"); values the
  rules read in a question the head reads as asking are dropped (``user_values.drop_values_in_asking_questions``);
- **value-support head** (optional in the file): u_t against every value of a categorical slot, each as
  ``value_claim`` text; a pair MLP, then a listwise logistic over the slot's values (``VALUE_RANK_FEATURES``):
  p(u_t says this value rather than another), for values no word of which occurs in the dialogue ("games" for
  Sports). Used by S2's UV check, times the mention head's p (``verify.s2_symbolic``'s value-head verdict).

Probabilities are calibrated (Platt scaling fitted on held-out data), so an extracted act's confidence
is a probability and the S2 margin built from it (``1 - 2p`` for "failure absent") is meaningful.
Keyword rules stay as high-precision shortcuts in ``agent_acts``; paraphrases are the heads' job.
"""
from __future__ import annotations

import contextlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from sage_core.data.errors import SageInputError
from sage_core.evaluator.lru import LruDict
from sage_core.evaluator.text.answer_types import ANSWER_FEATURES, QUANTITY_KINDS, SIDE_FEATURES, answer_fit
from sage_core.evaluator.text.sentences import (asks_without_mark, directive_object, is_directive_request,
                                               marked_question, opens_with_wh, run_on_sentences)

DEFAULT_HEADS_PATH = Path(__file__).with_name("heads.json")
# 2: a second slot head on schema-centred pair features (``centred_pair_features``), averaged with the first; the
# slot threshold is the mean's
FORMAT = "sage-heads/2"
DIM = 384
_LOADED: dict[str, "Heads"] = {}
# entries of each per-Heads memo (schemas; recent texts' act logits; recent request units' slot probabilities): a
# few MB at most. At 256 a 280-turn slice's ~300 request units no longer fitted once directive objects became units,
# and a second pass over it missed every one (an LRU read cyclically): 1.4 -> 2.0 ms/turn warm, text-only
MEMO_MAX = 1024

# acts a question performs without asking for a value: a question the act head reads more as one of these than
# as REQUEST is not scored for requested slots
NON_REQUEST_QUESTION_ACTS = ("OFFER_INTENT", "CONFIRM", "OFFER", "REQ_MORE")
# of those, the ones a question opening with a wh-word can still perform ("Which of the 3 do you like?" offers, "What
# else can I do?" asks for more); never a yes/no intent offer or confirmation (``opens_with_wh``). Dev: 6 of 6 wh-
# questions the act head read as one sit in a reply that requests a slot (train: 1 of 2, the other "Who do you want
# to buy the tickets?", annotated as an intent offer)
WH_QUESTION_VETOES = ("OFFER", "REQ_MORE")
# a request sentence without a question mark ("Please tell me the city.") must read as REQUEST at least this
# surely. Both gates chosen on the dev split's head candidates (4,000 turns): the head keeps 822 of the 834 true
# requested slots it found and 13 of the 30 (false) requests of slots outside Next(W, s) (0.8 / 0.95: the same within 2)
STATEMENT_REQUEST_MIN = 0.9

Embedder = Callable[[list[str]], dict[str, np.ndarray]]


def schema_slots(spec) -> list[tuple[str, str]]:
    """A workflow's slots as the slot and mention heads score them: (name, description), sorted by name. One order
    for every caller, so the per-schema slot matrix (``Heads._slot_matrix``) is built once and shared."""
    return [(s, spec.slots[s].description) for s in sorted(spec.slots)]


# counts, sums and durations need their question's noun to say which slot (``QUANTITY_KINDS``), except a sum of money:
# a question asking only "how much" (money) in a schema with exactly one slot holding a sum
# asks for that slot whatever the slot head ranks first ("How much money?" scored the account type 0.52, the amount
# 0.11 in a bank service without train dialogues). Dev, every turn: 69 such units, all 69 in a reply requesting that
# slot, 24 of them found by nothing else; the train split has no such question (its services ask sums in other
# words), so this is a dev choice. Counts stay out: "For how many days ...?" is a count the rooms slot also holds
# (dev: 254 of 273 right)
SUM_KINDS = frozenset({"AMOUNT"})


def request_slots(spec) -> list[tuple[str, str]]:
    """The slots the slot head scores a request against: ``schema_slots`` less those no workflow of the service takes
    from the user (``WorkflowSpec.user_slots``), which no agent asks for."""
    return [(s, d) for s, d in schema_slots(spec) if spec.requestable(s)]


def slot_text(name: str, description: str) -> str:
    """How a slot is put to the encoder: its name in words and its description."""
    words = re.sub(r"[_\-]+", " ", name).strip()
    desc = (description or "").strip()
    return f"{words}: {desc}" if desc else words


# how a slot is put to the slot head: its name and description, its description alone, its name alone, varied 6 : 2 : 2
# in training (``science.heads.train``); a sentence's pair score is the mean of the three under the same weights, so a
# reworded name or description moves it less (dev, requested slots: recall 0.896 -> 0.901 at precision 0.948)
SLOT_RENDERING_WEIGHTS = (0.6, 0.2, 0.2)


def slot_renderings(name: str, description: str) -> list[str]:
    """The slot's texts in the order of ``SLOT_RENDERING_WEIGHTS``: name with description, description alone (the
    name when there is none), name alone."""
    return [slot_text(name, description), slot_text("", description) if description else slot_text(name, ""),
            slot_text(name, "")]


VALUE_WORDS = {"true": "yes", "false": "no"}


def value_claim(slot_name: str, description: str, value: str) -> str:
    """How the value-support head reads "slot = value": the slot in words and the value ("yes" / "no" for a
    yes/no slot), e.g. "good for kids: whether the attraction is good for kids = yes"."""
    v = VALUE_WORDS.get(str(value).strip().lower(), str(value).strip())
    return f"{slot_text(slot_name, description)} = {v}"


def value_candidates(value: str, possible: Sequence[str], value_type: str) -> list[str]:
    """The values the written one competes with: yes / no for a yes/no slot, else the slot's possible values;
    the written value first (added when the schema does not list it)."""
    pool = ["True", "False"] if value_type == "bool" else list(possible)
    key = str(value).strip().lower()
    return [str(value)] + [c for c in pool if str(c).strip().lower() != key]


def _sentences(text: str) -> list[tuple[str, int]]:
    from sage_core.evaluator.text.sentences import sentences
    return sentences(text or "")


def question_sentences(text: str) -> list[str]:
    """The sentences a request can sit in: the questions of the reply, or the whole reply when none is one."""
    qs = [s.strip() for s, _ in _sentences(text) if s.rstrip().endswith("?") and len(s.strip()) > 1]
    return qs or ([text.strip()] if (text or "").strip() else [])


# where one question asks for several things: ", and", "and also", "also" before a word. Each part of a
# multi-part question is scored on its own as well, so the second slot of "Where are you leaving from and where
# are you going?" is the top slot of its own clause instead of being ranked below the first (dev: requested-slot
# recall +4 points at -1 point precision).
_CLAUSE_SPLIT = re.compile(r"\s*(?:,\s*(?:and\s+)?|\band\s+(?:also\s+)?|\balso\s+)(?=\w)", re.I)


def clauses(sentence: str, min_words: int = 2) -> list[str]:
    """The parts of a multi-part sentence (``min_words`` or more each), keeping its question mark; [] for one part."""
    s = sentence.strip()
    mark = "?" if s.endswith("?") else "."
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(s.rstrip("?.! ")) if p and p.strip()]
    if len(parts) < 2:
        return []
    return [p + mark for p in parts if len(p.split()) >= min_words]


# two question words (or a question word and two nouns) sharing one predicate: "Where and when are you leaving?",
# "How much and to whom?", "What day and city do you want to depart from?" ask for two things; each is also
# scored as its own question ("Where are you leaving?" / "When are you leaving?")
_WH = r"(?:what\s+time|what\s+day|how\s+many|how\s+much|how\s+long|where|when|who|whom|which|what)"
WH_PAIR = re.compile(r"^(?P<pre>.*?)\b(?P<w1>" + _WH + r")\s+and\s+(?P<prep>(?:to|from|for|with|at|on|in|by)\s+)?"
                     r"(?P<w2>" + _WH + r")\b(?P<rest>.*)$", re.I)
WH_NOUN_PAIR = re.compile(r"^(?P<pre>.*?)\b(?P<wh>what|which)\s+(?P<n1>[a-z]+)\s+and\s+(?P<n2>[a-z]+)\b(?P<rest>.*)$",
                          re.I)
_NOT_NOUN = frozenset({"you", "your", "i", "we", "they", "he", "she", "it", "the", "a", "an", "is", "are", "do", "does",
                       "will", "would", "can", "could", "should", "when", "where", "what", "which", "who", "how", "also"})


def split_question_pairs(unit: str) -> list[str]:
    """The single questions of a unit that coordinates two question words or two nouns after one (``WH_PAIR``,
    ``WH_NOUN_PAIR``); [] when it does not."""
    u = unit.strip()
    m = WH_PAIR.match(u)
    if m:
        pre, rest = m.group("pre"), m.group("rest")
        return [f"{pre}{m.group('w1')}{rest}".strip(), f"{pre}{m.group('prep') or ''}{m.group('w2')}{rest}".strip()]
    m = WH_NOUN_PAIR.match(u)
    if m and m.group("n1").lower() not in _NOT_NOUN and m.group("n2").lower() not in _NOT_NOUN:
        pre, wh, rest = m.group("pre"), m.group("wh"), m.group("rest")
        return [f"{pre}{wh} {m.group('n1')}{rest}".strip(), f"{pre}{wh} {m.group('n2')}{rest}".strip()]
    return []


# a one-word part of a request is a question too ("Departure city and destination?" asks "destination?"; dev,
# requested slots: recall 0.893 -> 0.896 at precision 0.948)
REQUEST_PART_MIN_WORDS = 1


def request_unit_groups(text: str) -> list[tuple[str, list[str]]]:
    """(sentence, its parts) for each sentence a request can sit in, each with its clauses and the single questions
    of a coordinated pair (``split_question_pairs``): in a reply with a question, every sentence in order (a statement
    counts only where the act head reads it as a request, ``Heads.asks_for_value``; dev, every 2nd turn: requested-slot
    recall 0.875 -> 0.880, precision 0.953 -> 0.952); otherwise the questions written without their mark (given one)
    and the directive requests ("Please tell me the city.", ``is_directive_request``), else the whole reply
    (``question_sentences``). A directive's object is a part of its own ("the city?", ``directive_object``)."""
    sents = question_sentences(text)
    if not any(s.rstrip().endswith("?") for s in sents):
        asking = [marked_question(s) or s.strip() for s, _ in run_on_sentences(text) if asks_without_mark(s)]
        sents = asking or sents
    else:  # a request put as a statement beside a question: "Where to? I will also need to know when you leave."
        sents = [s.strip() for s, _ in _sentences(text) if len(s.strip()) > 1]
    out, seen = [], set()
    for sent in sents:
        parts = []
        for c in clauses(sent, REQUEST_PART_MIN_WORDS) + [sent]:
            obj = directive_object(c)
            for u in ([c] if c != sent else []) + ([obj] if obj else []) + split_question_pairs(c):
                if u not in seen and u != sent and len(u.split()) >= REQUEST_PART_MIN_WORDS:
                    seen.add(u)
                    parts.append(u)
        seen.add(sent)
        out.append((sent, parts))
    return out


def request_units(text: str) -> list[str]:
    """What the slot head scores in a reply: the sentences a request can sit in, then their parts (``request_unit_groups``)."""
    groups = request_unit_groups(text)
    out = [s for s, _ in groups]
    for _, parts in groups:
        out.extend(p for p in parts if p not in out)
    return out


def mention_units(user: str) -> list[str]:
    """What the mention head scores in u_t: the whole utterance, then each sentence and clause of two words or more
    (a slot named in one sentence of three is diluted in the utterance's embedding: dev, yes/no slots, recall at
    p >= 0.5 from 0.26 to 0.33)."""
    user = user.strip()
    out = [user]
    for sent, _ in _sentences(user):
        for unit in [sent.strip()] + clauses(sent):
            if len(unit.split()) >= 2 and unit not in out:
                out.append(unit)
    return out


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


def mlp_logits(params: dict, X: np.ndarray) -> np.ndarray:
    """One hidden ReLU layer: relu(X w1 + b1) w2 + b2."""
    h = np.maximum(X @ params["w1"] + params["b1"], 0.0)
    return h @ params["w2"] + params["b2"]


_CONTROLLER: list = []
_BLAS_DEPTH = [0]  # nesting of single_thread_blas(): only the outermost one talks to threadpoolctl


def single_thread_blas():
    """A context that runs numpy's BLAS on one thread: the heads' matrices are tiny, and a multi-threaded BLAS
    on a busy machine spends more time waking threads than multiplying (measured 8x slower on 2 shared cores).
    The same products, so the same numbers; without threadpoolctl (a scikit-learn dependency) it does nothing.
    Re-entrant: the cascade holds it for a whole chunk, so the per-turn calls inside cost nothing (setting and
    restoring the limit per turn was ~0.1 ms a turn)."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
            _CONTROLLER.append(ThreadpoolController())
        except Exception:  # noqa: BLE001 - optional speed-up only
            _CONTROLLER.append(None)
    c = _CONTROLLER[0]
    return _nested_limit(c) if c is not None else contextlib.nullcontext()


@contextlib.contextmanager
def _nested_limit(controller):
    outer = contextlib.nullcontext() if _BLAS_DEPTH[0] else controller.limit(limits=1, user_api="blas")
    with outer:
        _BLAS_DEPTH[0] += 1
        try:
            yield
        finally:
            _BLAS_DEPTH[0] -= 1


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))


def _memo():
    """A per-``Heads`` bounded memo (``MEMO_MAX`` entries), not a constructor field."""
    return field(default_factory=lambda: LruDict(MEMO_MAX), init=False, repr=False, compare=False)


@dataclass
class Heads:
    """The loaded artifact; ``embed`` maps strings to normalised encoder vectors (MiniLM by default)."""

    path: str
    acts: list[str]
    act_mlp: dict  # w1 (d, h), b1 (h,), w2 (h, k), b2 (k,)
    act_platt: np.ndarray  # (k, 2): p = sigmoid(a * z + b)
    act_threshold: dict[str, float]
    slot_mlp: dict  # w1 (2d + 1, h), b1, w2 (h, 1), b2 (1,)
    rank_w: np.ndarray  # (8,) listwise stage over RANK_FEATURES
    rank_b: float
    slot_platt: tuple[float, float]
    slot_threshold: float  # on the mean of both slot heads' probabilities when the centred head is loaded
    meta: dict
    embed: Optional[Embedder] = None
    # the centred slot head (optional in the file): the same recipe on ``centred_pair_features``, its own listwise
    # stage and Platt scaling; ``slot_probs`` averages its calibrated probability with the plain head's
    centred_mlp: Optional[dict] = None  # w1 (2d + 2, h), b1, w2 (h, 1), b2 (1,)
    centred_rank_w: Optional[np.ndarray] = None
    centred_rank_b: float = 0.0
    centred_platt: tuple = (1.0, 0.0)
    # the value-support head (optional in the file): (u_t, value_claim) pair MLP, then a listwise logistic over the
    # slot's candidate values (VALUE_RANK_FEATURES), Platt-calibrated
    value_mlp: Optional[dict] = None
    value_rank_w: Optional[np.ndarray] = None
    value_rank_b: float = 0.0
    value_platt: tuple = (1.0, 0.0)
    # the slot-mention head (optional in the file): (u_t, slot_text) pair MLP, Platt-calibrated: p(u_t gives a value
    # for the slot at all), whatever the value or its polarity
    mention_mlp: Optional[dict] = None
    mention_platt: tuple = (1.0, 0.0)
    mention_base_rate: float = 0.5  # share of dev (u_t, slot) pairs in which u_t gives a value: Platt's prior
    # the informs head (optional in the file): user question -> p(it gives a value), MLP, Platt-calibrated; below
    # informs_threshold (dev-chosen) the question asks rather than informs
    informs_mlp: Optional[dict] = None
    informs_platt: tuple = (1.0, 0.0)
    informs_threshold: float = 0.0
    # per-process memos (bounded LRU): the slot matrix of each schema, the act logits of recent texts (a reply is
    # scored by act_probs, again by requested() when it has no "?", and as its own question sentence), the asking
    # units of recent replies and the slot probabilities of recent request units (requested(), kind_matched() and
    # legal_rival() score the same units of a reply). Same inputs, same float64 products: the memos change no number.
    # Not constructor fields, so ``dataclasses.replace`` (other thresholds, other weights) starts empty memos.
    _slot_v: "LruDict[np.ndarray]" = _memo()
    _logits: "LruDict[np.ndarray]" = _memo()
    _units: "LruDict[tuple]" = _memo()
    _unit_p: "LruDict[dict]" = _memo()

    # --- encoder --------------------------------------------------------------------------
    def _embed(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        if self.embed is None:
            from sage_core.evaluator.verify.s2_encoders import embed  # lazy: loads MiniLM once per process
            self.embed = embed
        return self.embed(list(texts))

    def prefetch(self, texts: Sequence[str]) -> None:
        """Embed many strings in one batch (the cascade calls it per chunk of turns)."""
        todo = sorted({t for t in texts if t})
        if todo:
            self._embed(todo)

    def prefetch_replies(self, replies: Sequence[str]) -> None:
        strings: list[str] = []
        for r in replies:
            if r and r.strip():
                strings.append(r.strip())
                strings.extend(request_units(r))
        self.prefetch(strings)

    # --- heads -------------------------------------------------------------------------------
    def act_probs(self, text: str) -> dict[str, float]:
        """Calibrated probability of each act for one agent reply."""
        text = (text or "").strip()
        if not text:
            return {a: 0.0 for a in self.acts}
        z = self._act_logits(text)
        p = sigmoid(self.act_platt[:, 0] * z + self.act_platt[:, 1])
        return dict(zip(self.acts, np.round(p, 6).tolist()))  # np.round == round() of each np.float64

    def _act_logits(self, text: str) -> np.ndarray:
        z = self._logits.get(text)
        if z is None:
            e = self._embed([text])[text].astype(np.float64)
            z = self._logits.put(text, mlp_logits(self.act_mlp, e[None, :])[0])
        return z

    def _slot_matrix(self, sentence: str, slots: list[tuple[str, str]], rendering: int = 0) -> np.ndarray:
        """The float64 embeddings of the slots' texts (n, d) in one of ``slot_renderings`` (0: name and
        description), built once per schema instead of per sentence.

        On a miss the encoder is asked exactly as before (the sentence with the slot texts), so the strings
        that share its batch, and hence the vectors, are the same."""
        key = (tuple(slots), rendering)
        v = self._slot_v.get(key)
        if v is None:
            texts = [slot_renderings(n, d)[rendering] for n, d in slots]
            e = self._embed([sentence] + texts)
            v = self._slot_v.put(key, np.stack([e[t] for t in texts]).astype(np.float64))
        return v

    def slot_probs(self, sentence: str, slots: list[tuple[str, str]]) -> dict[str, float]:
        """Calibrated p(the sentence asks for the slot) for every (name, description) in ``slots``: the pair
        score of each slot, then a listwise stage (how far the slot stands above the others of the schema, how
        much the sentence reads as a request, and whether the question asks for the kind of value it holds); a slot
        of the other end of the trip than the question's, or holding another kind of value than it asks for, yields
        to the slots that fit (``answer_types.AnswerFit.exclusive``)."""
        if not slots or not sentence.strip():
            return {}
        key = (sentence, tuple(slots))
        probs = self._unit_p.get(key)
        if probs is None:
            zreq = request_logit(sentence, float(self._act_logits(sentence)[self.acts.index("REQUEST")]))
            fit = answer_fit(sentence, slots)

            def calibrated(z, w, b, platt):
                s = slot_rank_features(z, [0] * len(z), [zreq] * len(z), fit.features()) @ w + b
                return sigmoid(platt[0] * s + platt[1])

            p = calibrated(self.pair_scores(sentence, slots), self.rank_w, self.rank_b, self.slot_platt)
            if self.centred_mlp is not None:
                pc = calibrated(self.pair_scores(sentence, slots, centred=True), self.centred_rank_w,
                                self.centred_rank_b, self.centred_platt)
                p = (p + pc) / 2
            p = fit.exclusive(p)
            probs = self._unit_p.put(key, dict(zip((n for n, _ in slots), np.round(p, 6).tolist())))
        return dict(probs)

    def pair_scores(self, sentence: str, slots: list[tuple[str, str]], centred: bool = False) -> np.ndarray:
        """The slot head's pair score (logit, before the listwise stage) of the sentence against each slot: the
        ``SLOT_RENDERING_WEIGHTS`` mean over the slot's renderings. ``centred``: the centred head's, whose features
        depend on the whole set ``slots`` (``centred_pair_features``); callers that rank a subset use the plain one."""
        mlp, features = (self.centred_mlp, centred_pair_features) if centred else (self.slot_mlp, pair_features)
        u = self._embed([sentence])[sentence].astype(np.float64)
        z = np.zeros(len(slots))
        for r, w in enumerate(SLOT_RENDERING_WEIGHTS):
            z += w * mlp_logits(mlp, features(u, self._slot_matrix(sentence, slots, r)))[:, 0]
        return z

    def legal_rival(self, text: str, slot: str, legal: Sequence[str], slots: list[tuple[str, str]]
                    ) -> Optional[tuple[str, float]]:
        """(the best legal slot, how far ``slot``'s pair score stands above it) in the request unit of the reply that
        asks for ``slot`` most surely (``requested``'s units). A small gap means the sentence could as well be
        asking for that legal slot (a sibling: drop-off for pick-up, origin for destination), which the listwise
        stage hides by pushing every slot but the top one down. A legal slot the question itself rules out beside
        ``slot`` (``AnswerFit.ruled_out_beside``: "What time would you like to leave?" is no question for the leaving
        date) is no rival: the pair scores tell kinds apart poorly (dev, natural WNF requests left unjudged for a
        rival of the wrong kind: "What time would you like to leave?" leaving_date, "How much money?" account_type).
        A legal slot holding the other of the two kinds a question asks for (``AnswerFit.kind_ties``: "When are you
        leaving?" asks for the date or the time) ties with ``slot`` whatever the pair scores say (gap 0): once the date
        is known the question asks for the time (dev: clean-turn WNF flags 22 -> 19, natural WNF recall unchanged).
        None when no unit asks, or no legal slot is in ``slots`` or left as a rival."""
        names = [n for n, _ in slots]
        if slot not in names or not any(n in legal for n in names):
            return None
        i = names.index(slot)
        best: Optional[tuple[float, Optional[str], float]] = None
        for sent in self._asking_units(text):
            p = self.slot_probs(sent, slots)[slot]
            if best is None or p > best[0]:
                # a question's kinds, not a statement's ("... Beth Kane, who is a Family Counselor")
                asks = marked_question(sent) is not None or opens_with_wh(sent)
                fit = answer_fit(sent, slots) if asks else None
                out = fit.ruled_out_beside(i) if fit else [False] * len(names)
                ties = fit.kind_ties(i) if fit else [False] * len(names)
                rivals = [n for j, n in enumerate(names) if n in legal and not out[j]]
                tied = [n for j, n in enumerate(names) if n in legal and ties[j]]
                if tied:  # "When are you leaving?" once the date is known asks for the time
                    best = (p, tied[0], 0.0)
                    continue
                if not rivals:
                    best = (p, None, 0.0)
                    continue
                z = self.pair_scores(sent, slots)
                rival = max(rivals, key=lambda n: (float(z[names.index(n)]), n))
                best = (p, rival, float(z[i] - z[names.index(rival)]))
        return None if best is None or best[1] is None else (best[1], round(best[2], 6))

    def value_support(self, user: str, slot: str, description: str, candidates: Sequence[str]) -> Optional[float]:
        """Calibrated p(u_t says ``slot`` = ``candidates[0]``) against the slot's other candidate values
        (``value_candidates``): "I need a spacious car" supports type = Full-size over Compact / Standard;
        "somewhere child-friendly" supports good_for_kids = yes. None when the file has no value head, u_t is
        empty or there is nothing to compare with."""
        probs = self.value_probs(user, slot, description, candidates)
        return None if probs is None else probs[0]

    def value_probs(self, user: str, slot: str, description: str, candidates: Sequence[str]
                    ) -> Optional[list[float]]:
        """``value_support`` of every candidate at once (the listwise features do not depend on the order of the
        candidates): which value of the slot the head reads u_t as saying most."""
        user = (user or "").strip()
        if self.value_mlp is None or not user or len(candidates) < 2:
            return None
        claims = [value_claim(slot, description, c) for c in candidates]
        e = self._embed([user] + claims)
        u = e[user].astype(np.float64)
        v = np.stack([e[c] for c in claims]).astype(np.float64)
        z = mlp_logits(self.value_mlp, pair_features(u, v))[:, 0]
        r = rank_features(z, [0] * len(z), [0.0] * len(z))[:, :len(VALUE_RANK_FEATURES)]
        sc = r @ self.value_rank_w + self.value_rank_b
        return np.round(sigmoid(self.value_platt[0] * sc + self.value_platt[1]), 6).tolist()

    def mention_probs(self, user: str, slots: list[tuple[str, str]]) -> Optional[dict[str, float]]:
        """Calibrated p(u_t gives a value for the slot), for every (name, description) in ``slots``: whether the
        user speaks of the slot at all ("somewhere child-friendly" speaks of good_for_kids, "I don't mind the
        cuisine" of category), not which value. None when the file has no mention head or u_t is empty."""
        both = self.mention_readings(user, slots)
        return None if both is None else {s: p for s, (p, _) in both.items()}

    def mention_probs_if_written(self, user: str, slots: list[tuple[str, str]]) -> Optional[dict[str, float]]:
        """p(u_t gave a value for the slot) for a slot the tracker wrote a value of, under an even prior.
        ``mention_probs`` is calibrated over every (u_t, slot) pair of dev, where u_t speaks of a slot in only
        ``mention_base_rate`` of pairs (about 7 %); a written value is a different population, of which the head
        knows nothing. The head's likelihood ratio, odds(p) / odds(base rate), is put on even odds instead (prior
        shift: logit p - logit base rate), so a reading the head finds unlikely among all pairs but not rare among
        said ones ("something child friendly", p 0.2) is not a confident "nobody said it". None as for
        ``mention_probs``."""
        both = self.mention_readings(user, slots)
        return None if both is None else {s: pe for s, (_, pe) in both.items()}

    def mention_readings(self, user: str, slots: list[tuple[str, str]]) -> Optional[dict[str, tuple[float, float]]]:
        """Per slot, (``mention_probs``, ``mention_probs_if_written``) from one pass of the head; None as for them."""
        z = self._mention_logits(user, slots)
        if z is None:
            return None
        b = self.mention_base_rate
        p, pe = np.round(sigmoid(z), 6).tolist(), np.round(sigmoid(z - math.log(b / (1.0 - b))), 6).tolist()
        return {n: (x, y) for (n, _), x, y in zip(slots, p, pe)}

    def _mention_logits(self, user: str, slots: list[tuple[str, str]]) -> Optional[np.ndarray]:
        """The mention head's calibrated logits per slot (max over ``mention_units``), or None."""
        user = (user or "").strip()
        if self.mention_mlp is None or not user or not slots:
            return None
        units = mention_units(user)
        v = self._slot_matrix(user, slots)
        e = self._embed(units)
        z = np.max([mlp_logits(self.mention_mlp, pair_features(e[t].astype(np.float64), v))[:, 0] for t in units],
                   axis=0)
        return self.mention_platt[0] * z + self.mention_platt[1]

    def informs(self, question: str) -> Optional[float]:
        """Calibrated p(a user's question gives a value); None without an informs head or text."""
        question = (question or "").strip()
        if self.informs_mlp is None or not question:
            return None
        e = self._embed([question])[question].astype(np.float64)
        z = float(mlp_logits(self.informs_mlp, e[None, :])[0, 0])
        return round(float(sigmoid(np.asarray(self.informs_platt[0] * z + self.informs_platt[1]))), 6)

    def question_asks(self, question: str) -> bool:
        """The user's question asks about the offer and gives no value (``informs`` below its dev threshold)."""
        p = self.informs(question)
        return p is not None and p < self.informs_threshold

    def asks_for_value(self, sentence: str) -> bool:
        """The act head reads the sentence as a request for a value. A question is not one when the act head
        decides (at its own threshold) that it performs one of ``NON_REQUEST_QUESTION_ACTS`` more than REQUEST
        (an intent offer "Do you want to book a room?", a restating confirmation "So a shared ride for 2?"); a
        sentence without a question mark must read as REQUEST above every other act and at
        ``STATEMENT_REQUEST_MIN`` ("There is a 21 percent chance of rain." informs). A directive or a need ("Please
        tell me the recipient.", ``is_directive_request``) asks whatever the act head reads in its wrapper."""
        if is_directive_request(sentence):
            return True
        probs = self.act_probs(sentence)
        req = probs.get("REQUEST", 0.0)
        if sentence.rstrip().endswith("?"):
            vetoes = WH_QUESTION_VETOES if opens_with_wh(sentence) else NON_REQUEST_QUESTION_ACTS
            return not any(probs.get(a, 0.0) > req and probs.get(a, 0.0) >= self.act_threshold.get(a, 0.5)
                           for a in vetoes)
        return req >= STATEMENT_REQUEST_MIN and all(p <= req for a, p in probs.items() if a != "REQUEST")

    def requested(self, text: str, slots: list[tuple[str, str]]) -> dict[str, float]:
        """Slot -> best calibrated probability over the reply's request units (question sentences and their
        clauses, ``request_units``; all slots, unthresholded).

        A reply without a question ("They charge $296 per night.") is scored only when the act head reads it as
        a request ("Please tell me the city."); otherwise an informing statement would be scored like a question.
        Only sentences that ``asks_for_value`` are scored; a reply with none scores 0 for every slot.
        """
        best: dict[str, float] = {n: 0.0 for n, _ in slots}
        for sent in self._asking_units(text):
            for n, p in self.slot_probs(sent, slots).items():
                if p > best.get(n, -1.0):
                    best[n] = p
        return best

    def kind_matched(self, text: str, slots: list[tuple[str, str]], floor: float) -> dict[str, float]:
        """Slot -> p for request units whose question names a kind of value exactly one of ``slots`` holds ("At what
        time?" with one time slot) when that slot is also the head's top slot, from ``floor`` up (below the head's
        own threshold, the kind agreement is the evidence that decides). Not for counts and durations ("How many days
        will you stay?" in a schema whose only count is of travellers); a question asking only for a sum of money and a
        schema with one slot holding one needs neither the top rank nor ``floor`` (``SUM_KINDS``)."""
        out: dict[str, float] = {}
        for sent in self._asking_units(text):
            probs = self.slot_probs(sent, slots)
            fit = answer_fit(sent, slots)
            agree = [n for (n, _), (a, _) in zip(slots, fit.kind_agreement()) if a]
            if len(agree) != 1 or agree[0] not in probs:
                continue
            slot = agree[0]
            if fit.asked_kinds != SUM_KINDS:  # "How much money?" asks for the schema's one sum, whatever ranks first
                if fit.asked_kinds & QUANTITY_KINDS:
                    continue  # "How many days ...?" names a count, but which count only its noun says
                if max(sorted(probs), key=lambda n: probs[n]) != slot or probs[slot] < floor:
                    continue
            if probs[slot] > out.get(slot, -1.0):
                out[slot] = probs[slot]
        return out

    def _asking_units(self, text: str) -> list[str]:
        """The request units (``request_units``) the slot head scores: none when the reply has no question and
        does not read as a request; else those that ``asks_for_value``."""
        units = self._units.get(text)
        if units is None:
            units = self._units.put(text, tuple(self._find_asking_units(text)))
        return list(units)

    def _find_asking_units(self, text: str) -> list[str]:
        asks = any(s.rstrip().endswith("?") or asks_without_mark(s) for s, _ in run_on_sentences(text))
        if not asks and self.act_probs(text).get("REQUEST", 0.0) < self.act_threshold.get("REQUEST", 0.5):
            return []
        out: list[str] = []
        for sent, parts in request_unit_groups(text):
            if self.asks_for_value(sent):  # the parts of an asking sentence ask too ("... and your destination.")
                out.extend(u for u in [sent] + parts if u not in out)
            else:
                out.extend(u for u in parts if u not in out and self.asks_for_value(u))
        return out


def _fail(path: Path, why: str, field: Optional[str] = None) -> SageInputError:
    return SageInputError(f"not a usable heads file: {why} (regenerate it with `python -m sage_core train-heads`)",
                          file=str(path), field=field)


def _array(d: dict, key: str, shape: tuple, path: Path) -> np.ndarray:
    try:
        a = np.asarray(d[key], dtype=np.float64)
    except KeyError:
        raise _fail(path, f"missing field '{key}'") from None
    except (TypeError, ValueError):
        raise _fail(path, f"field '{key}' is not numeric") from None
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise _fail(path, f"field '{key}' has shape {a.shape} (expected {shape}) or non-finite values")
    return a


def _mlp(d: dict, n_in: int, n_out: int, path: Path) -> dict:
    if not isinstance(d.get("mlp"), dict):
        raise _fail(path, "missing field 'mlp'")
    m = d["mlp"]
    try:
        hidden = len(m["b1"])
    except (KeyError, TypeError):
        raise _fail(path, "missing field 'b1'") from None
    return {"w1": _array(m, "w1", (n_in, hidden), path), "b1": _array(m, "b1", (hidden,), path),
            "w2": _array(m, "w2", (hidden, n_out), path), "b2": _array(m, "b2", (n_out,), path)}


def _ranked_pair_head(path: Path, d: dict, key: str, what: str, n_in: int, n_rank: int) -> tuple:
    """(pair MLP, listwise weights, listwise bias, Platt) of a pair head with a listwise stage (the value head, the
    centred slot head) in section ``key`` of the file, checked; a malformed section is a ``SageInputError`` naming the
    file, the section and the head."""
    section = d[key]
    with _reading(path, what, key):
        mlp = _mlp(section, n_in, 1, path)
        w = _array(section["rank"], "w", (n_rank,), path)
        b = float(section["rank"]["b"])
        platt = tuple(float(x) for x in section["platt"])
    if len(platt) != 2 or not all(math.isfinite(x) for x in (b, *platt)):
        raise _fail(path, f"malformed {what}", key)
    return mlp, w, b, platt


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
        raise _fail(path, f"malformed {what} ({type(e).__name__}: {e})", key) from None


def load_heads(path: Optional[str | Path] = None, embed: Optional[Embedder] = None) -> Heads:
    """Read and check a heads artifact (default: the committed ``heads.json``); cached per path.

    A missing, unreadable or malformed file is a ``SageInputError`` naming the file.
    """
    p = Path(path) if path is not None else DEFAULT_HEADS_PATH
    key = str(p.resolve()) if p.exists() else str(p)
    if embed is None and key in _LOADED:
        return _LOADED[key]
    if not p.is_file():
        raise _fail(p, "not found")
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise _fail(p, f"not valid JSON ({type(e).__name__})") from None
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise _fail(p, f"not a {FORMAT} file")
    try:
        acts = [str(a) for a in d["acts"]["names"]]
        ad, sd = d["acts"], d["slots"]
        k = len(acts)
        if "REQUEST" not in acts:
            raise _fail(p, "the act head has no REQUEST output")
        h = Heads(
            path=str(p), acts=acts, act_mlp=_mlp(ad, DIM, k, p),
            act_platt=_array(ad, "platt", (k, 2), p),
            act_threshold={str(a): float(t) for a, t in ad["threshold"].items()},
            slot_mlp=_mlp(sd, 2 * DIM + 1, 1, p),
            rank_w=_array(sd["rank"], "w", (len(RANK_FEATURES),), p), rank_b=float(sd["rank"]["b"]),
            slot_platt=tuple(float(x) for x in sd["platt"]), slot_threshold=float(sd["threshold"]),
            meta=dict(d.get("meta") or {}), embed=embed)
    except SageInputError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise _fail(p, f"malformed ({type(e).__name__}: {e})") from None
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
            raise _fail(p, "malformed mention head")
    if d.get("informs") is not None:
        with _reading(p, "informs head", "informs"):
            fd = d["informs"]
            h.informs_mlp = _mlp(fd, DIM, 1, p)
            h.informs_platt = tuple(float(x) for x in fd["platt"])
            h.informs_threshold = float(fd["threshold"])
        if len(h.informs_platt) != 2 or not all(math.isfinite(x) for x in (h.informs_threshold, *h.informs_platt)):
            raise _fail(p, "malformed informs head")
    if d.get("slots_centred") is not None:
        h.centred_mlp, h.centred_rank_w, h.centred_rank_b, h.centred_platt = _ranked_pair_head(
            p, d, "slots_centred", "centred slot head", 2 * DIM + 2, len(RANK_FEATURES))
    if len(h.slot_platt) != 2 or not all(math.isfinite(x) for x in (h.rank_b, h.slot_threshold, *h.slot_platt)):
        raise _fail(p, "malformed slot head")
    if embed is None:
        _LOADED[key] = h
    return h


__all__ = ["single_thread_blas", "Heads", "load_heads", "DEFAULT_HEADS_PATH", "schema_slots", "request_slots", "slot_text", "question_sentences", "request_units",
           "clauses", "mention_units", "pair_features", "centred_pair_features", "FORMAT",
           "RANK_FEATURES", "rank_features", "slot_rank_features", "mlp_logits", "sigmoid", "STATEMENT_REQUEST_MIN",
           "NON_REQUEST_QUESTION_ACTS", "value_claim", "value_candidates", "VALUE_RANK_FEATURES"]
