"""Train the schema-driven heads (``sage_core/evaluator/text/heads``) on SGD train, choose and calibrate on dev.

``python -m sage_core train-heads [--data ../shared/data] [--out PATH]``

Protocol (docs/benchmarks.md): weights are fitted on ``sgd/train`` annotations only; the regularisation
strength C, the Platt calibration and the decision thresholds are chosen on ``sgd/dev``; ``sgd/test`` is never
read. Everything is seeded and the fits are deterministic (seeded MLP / lbfgs, inputs in a total order, one BLAS
thread, embeddings rounded to 6 decimals), and weights are rounded to 6 decimals, so a fresh run writes the
committed file byte for byte (docs/benchmarks_history.md, "Reproducing `heads.json`").

- act head: one reply (its annotated act set as labels) -> two one-hidden-layer MLPs with one logistic output per
  act (multi-label), one on the reply's embedding, one on the embedding of the reply with its values masked
  (``act_text``); their logits averaged (``act_logits``), Platt-calibrated per act on dev;
- slot head: each question sentence of a reply (the whole reply when none is a question) paired with every slot
  of its service; positive when the reply REQUESTs that slot and this question is the reply's best-scoring one for it
  (``assign_requests``, on the out-of-fold scores of a first fit). Slot renderings are varied in training
  (name + description, description only, name only) so that renamed and paraphrased schemas are not new to it,
  and scored as their weighted mean (``rendering_views``, as ``Heads.pair_scores`` does). Its listwise stage is
  fitted on out-of-fold pair scores with whole services held out (``service_folds``). The same recipe is fitted
  a second time on ``centred_pair_features``. Each head has a second listwise stage on the same features plus the
  token-level match of the sentence and the slot's name and description (``token_match_rows``, on MiniLM's
  contextual token vectors), Platt-scaled on dev on its own; a head's p is the mean of its two stages'. The slot
  threshold is chosen on the mean of both heads' calibrated dev probabilities (``mean_threshold``), as
  ``Heads.slot_probs`` averages them;
- value-support head: u_t against each candidate value of a categorical slot s_t writes (``collect_values``);
- slot-mention head: each user utterance paired with every slot of its service; positive when the user's annotated
  INFORM acts give the slot a value (any value, "dontcare" and yes / no included); slot renderings varied as above.
"""
from __future__ import annotations

import json
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Collection, Optional

import numpy as np

from sage_core.data.errors import SageInputError
from sage_core.evaluator.text.answer_types import answer_fit
from sage_core.evaluator.text.heads import (FORMAT, MAXSIM_RANK_FEATURES, RANK_FEATURES, SLOT_RENDERING_WEIGHTS,
                                           SlotTokens, act_logits, act_text, centred_pair_features, maxsim_features,
                                           mlp_logits, pair_features, question_sentences, rank_features,
                                           request_logit, request_slots, request_units, schema_slots, sigmoid,
                                           slot_match_texts, slot_rank_features, slot_renderings, slot_text,
                                           token_matches)
from sage_core.science.statistics import prf_from_counts

ACTS = ["REQUEST", "CONFIRM", "NOTIFY_SUCCESS", "OFFER", "INFORM", "REQ_MORE", "GOODBYE", "NOTIFY_FAILURE",
        "INFORM_COUNT", "OFFER_INTENT"]
SEED = 0
ALPHA_GRID = (1e-4, 1e-2)  # act head L2, chosen on dev log-loss
ACT_HIDDEN, ACT_ITERS = 128, 60
# slot head: hidden 256 chosen on dev (average precision of requested (reply, slot) pairs: 128 -> 0.921, 256 -> 0.927,
# 512 -> 0.929 at twice the size; alpha 1e-3 / 1e-2 and 10 / 50 epochs no better)
SLOT_HIDDEN, SLOT_ITERS, SLOT_ALPHA = 256, 25, 1e-4
THRESHOLD_GRID = tuple(round(0.5 + 0.025 * i, 3) for i in range(19))  # 0.5 .. 0.95
# decision thresholds: the most recall at this dev precision (a margin over the 0.90 target)
DEV_PRECISION = {"acts": 0.95, "slots": 0.93}
# train: every distinct annotated reply of sgd/train (22,918) for the act head and every reply with a REQUEST (6,129)
# for the slot head; on dev the 4,000 / 2,500 of before gave CONFIRM|NOTIFY_SUCCESS recall 0.849 and requested-slot
# recall 0.726, all of train 0.922 / 0.737 (dev precision 0.966 / 0.942)
SIZES = {"train_replies": 25000, "train_requests": 7000, "dev_replies": 2000, "dev_requests": 1000,
         "train_values": 4000, "dev_values": 2000, "train_mentions": 12000, "dev_mentions": 3000,
         "train_questions": 10000, "dev_questions": 2000}


@dataclass
class Split:
    replies: list[tuple[str, frozenset]] = field(default_factory=list)  # (reply, act set)
    # (group id, sentence, [(slot name, description)], requested slot names)
    sentences: list[tuple[int, str, list[tuple[str, str]], frozenset]] = field(default_factory=list)


def _load(folder: Path):
    from sage_core.corpora import load_corpus
    if not folder.is_dir():
        raise SageInputError("training data folder not found (expected the SGD train/ and dev/ folders)",
                             file=str(folder))
    return load_corpus("sgd", str(folder))


def _row_key(row) -> tuple:
    """A total order on (reply, acts, slots, requested): frozensets compare by inclusion (a partial
    order), so sorting them directly left the order to Python's per-process string hashing."""
    text, acts, slots, req = row
    return text, sorted(acts), slots, sorted(req)


def assign_requests(split: Split, z: np.ndarray) -> Split:
    """Multiple-instance relabelling of the slot head's training units. The annotations say which slots a *reply*
    requests, not which of its questions asks for which: labelled per question sentence, "Where are you going? When
    do you leave?" taught that "Where are you going?" asks for the date as well, and "How about Delta? How many
    tickets?" that an offer asks for the ticket count (23 % of the train units came from such replies). Given
    out-of-fold pair scores ``z`` (one per pair of ``pair_matrix``), a slot the reply requests stays positive only in
    the question that scores it best; its other questions become negatives for it (an offer beside a request is then
    a negative, as at inference, where each question is scored on its own). Ties keep the first question.
    Dev, average precision of requested (reply, slot) pairs 0.945 -> 0.954, recall at dev precision 0.93 0.821 ->
    0.861 (joining a reply's questions into one unit: 0.955 / 0.863, but then no offer beside a request is a negative,
    and dev clean turns read more offers as requests; dropping such replies: 0.954 / 0.857)."""
    counts = Counter(g for g, *_ in split.sentences)
    best: dict = {}
    i = 0
    for k, (g, _, slots, req) in enumerate(split.sentences):
        for n, _ in slots:
            if n in req and counts[g] > 1 and z[i] > best.get((g, n), (-np.inf, -1))[0]:
                best[(g, n)] = (float(z[i]), k)
            i += 1
    out = Split(replies=split.replies)
    for k, (g, sent, slots, req) in enumerate(split.sentences):
        if counts[g] > 1 and req:
            req = frozenset(n for n in req if best[(g, n)][1] == k)
        out.sentences.append((g, sent, slots, req))
    return out


# share of training replies / utterances put to the heads in each paraphrased rendering of the train schema
# (``--paraphrases``; the rest keep the schema's own names and descriptions)
PARAPHRASE_SHARE = 0.5


def paraphrase_renderings(train_folder: Path, paraphrases: Optional[Path]) -> list[dict]:
    """Per paraphrased rendering of the train schema (``<paraphrases>/*/schema.json``, our own wording, aligned slot
    by slot as SGD-X renderings are: ``sgdx_slot_map``): {original service's ``schema_slots`` tuple -> (the
    rendering's ``schema_slots`` list, original slot name -> rendered name)}. Empty without ``paraphrases``."""
    if paraphrases is None:
        return []
    from sage_core.corpora.sgd.loader import sgdx_slot_map
    from sage_core.specs.sgd_format import load_sgd_schema
    files = sorted(Path(paraphrases).glob("*/schema.json"))
    if not files:
        raise SageInputError("no paraphrased schemas (*/schema.json) in this folder", file=str(paraphrases))
    orig = load_sgd_schema(Path(train_folder) / "schema.json")
    by_service = {spec.service: spec for spec in orig}  # a service's intents share its slots
    out = []
    for f in files:
        variant = load_sgd_schema(f)
        mapping = sgdx_slot_map(orig, variant)
        renamed = {spec.service: spec for spec in variant}
        out.append({tuple(schema_slots(spec)): (schema_slots(renamed[mapping.services[svc]]), dict(mapping[svc]))
                    for svc, spec in by_service.items()})
    return out


def _rendering_choices(n: int, k: int, seed: int) -> list[int]:
    """Seeded choice per row: 0 = the schema's own wording (share 1 - PARAPHRASE_SHARE), i = rendering i."""
    rng = random.Random(seed)
    return [0 if rng.random() >= PARAPHRASE_SHARE else 1 + rng.randrange(k) for _ in range(n)] if k else [0] * n


def rerender(split: Split, renderings: list[dict], seed: int) -> Split:
    """``split`` with each reply's sentences scored against one rendering of its schema (``paraphrase_renderings``),
    chosen per reply: renamed and reworded slots are then not new to the slot head. Without renderings, ``split``."""
    if not renderings:
        return split
    groups = sorted({g for g, *_ in split.sentences})
    pick = dict(zip(groups, _rendering_choices(len(groups), len(renderings), seed)))
    out = Split(replies=split.replies)
    for g, sent, slots, req in split.sentences:
        k = pick[g]
        if k and tuple(slots) in renderings[k - 1]:
            vslots, names = renderings[k - 1][tuple(slots)]
            slots, req = list(vslots), frozenset(names[n] for n in req)
        out.sentences.append((g, sent, list(slots), req))
    return out


def rerender_mentions(rows, renderings: list[dict], seed: int) -> list:
    """The mention head's rows, each in one rendering of its schema, as ``rerender``."""
    if not renderings:
        return rows
    out = []
    for (user, slots, said), k in zip(rows, _rendering_choices(len(rows), len(renderings), seed)):
        if k and slots in renderings[k - 1]:
            vslots, names = renderings[k - 1][slots]
            slots, said = tuple(vslots), frozenset(names[n] for n in said)
        out.append((user, slots, said))
    return out


def collect(folder: Path, n_replies: int, n_requests: int, seed: int,
            units: Callable[[str], list[str]] = question_sentences,
            slots_of: Callable = schema_slots, services: Optional[Collection[str]] = None) -> Split:
    """A seeded sample of annotated agent replies (acts) and request sentences (slots) of one split; ``units``
    cuts a reply into the pieces the slot head scores (train: its question sentences, labelled per reply; the slot
    head's fit assigns each label to one of them, ``assign_requests``;
    dev: ``request_units``, as the evaluator scores them, so the threshold is chosen on what inference does);
    ``slots_of`` gives the slots each sentence is scored against (train: every slot of the schema, result slots
    being negatives the pair MLP learns from; dev: ``request_slots``, as the evaluator scores them: dev AP of
    requested pairs 0.932 -> 0.943 with the head fitted on every slot, 0.927 with train restricted as well).
    ``services``: only the dialogue turns of these services (all when None)."""
    turns, reg = _load(folder)
    rows = []
    for t in turns:
        if t.agent_acts is None or not (t.agent or "").strip():
            continue
        spec = reg.get(t.workflow)
        if services is not None and spec.service not in services:
            continue
        slots = slots_of(spec)
        req = frozenset(a.slot for a in t.agent_acts if a.act == "REQUEST" and a.slot in spec.slots)
        rows.append((t.agent.strip(), frozenset(a.act for a in t.agent_acts), tuple(slots), req))
    rows = sorted(set(rows), key=_row_key)
    rng = random.Random(seed)
    rng.shuffle(rows)
    out = Split()
    seen = set()
    for text, acts, _, _ in rows:
        if text not in seen and len(out.replies) < n_replies:
            seen.add(text)
            out.replies.append((text, acts))
    with_req = [r for r in rows if r[3]][:n_requests]
    without = [r for r in rows if not r[3]][:max(1, n_requests // 3)]
    for g, (text, _, slots, req) in enumerate(sorted(with_req + without, key=_row_key)):
        for sent in units(text):
            out.sentences.append((g, sent, list(slots), req))
    return out


# value-support groups: a value s_t writes for a categorical slot, with u_t and the slot's candidate values
# (``value_candidates``). Positives: values u_t says in other words (no exact span of them in u_t), which are what the
# head is for, plus as many said exactly (they teach the task); never a value found anywhere in the history (an
# accepted offer: "That sounds good" says nothing about the slot). Every other candidate is a negative.
# yes/no slots are left out: between "= yes" and "= no" the head learned the prior (yes), not whether u_t speaks of
# the slot at all (dev: "Can you find 1 room at a 2 star hotel?" -> smoking_allowed = yes at p 0.97)
VALUE_TYPES_SUPPORTED = ("categorical",)
VALUE_MAX_CANDIDATES = 12


def collect_values(folder: Path, n_groups: int, seed: int) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(u_t, slot, description, candidates with the written value first) groups of one split, seeded."""
    from sage_core.evaluator.text.heads import value_candidates
    from sage_core.evaluator.text.normalize import find_in_text
    turns, reg = _load(folder)
    para, exact = set(), set()
    for t in turns:
        spec = reg.get(t.workflow)
        user = (t.user or "").strip()
        if not user:
            continue
        for slot, v in sorted(t.state_after.items()):
            sp = spec.slots.get(slot)
            if sp is None or sp.value_type not in VALUE_TYPES_SUPPORTED or not v or t.state_before.get(slot) == v:
                continue
            if str(v).strip().lower() == "dontcare" or any(find_in_text(v, u.text, sp.value_type) for u in t.history):
                continue
            cands = tuple(value_candidates(str(v), sp.possible_values, sp.value_type))
            if not 2 <= len(cands) <= VALUE_MAX_CANDIDATES:
                continue
            row = (user, slot, sp.description, cands)
            (exact if find_in_text(v, user, sp.value_type) else para).add(row)
    rng = random.Random(seed)
    para, exact = sorted(para), sorted(exact)
    rng.shuffle(para)
    rng.shuffle(exact)
    return sorted(para[:n_groups] + exact[:min(len(para), n_groups)])


def value_pairs(groups, emb: dict):
    """Pair features, labels (1 = the written value) and group ids of the value head."""
    from sage_core.evaluator.text.heads import value_claim
    X, y, ids = [], [], []
    for g, (user, slot, desc, cands) in enumerate(groups):
        v = np.stack([emb[value_claim(slot, desc, c)] for c in cands])
        X.append(pair_features(emb[user], v))
        y.extend([1] + [0] * (len(cands) - 1))
        ids.extend([g] * len(cands))
    return np.concatenate(X).astype(np.float64), np.asarray(y), ids


def value_strings(groups) -> list[str]:
    from sage_core.evaluator.text.heads import value_claim
    out = {u for u, _, _, _ in groups}
    for _, slot, desc, cands in groups:
        out.update(value_claim(slot, desc, c) for c in cands)
    return sorted(out)


# slot-mention rows: a user utterance, the slots of its service, and the slots its annotated INFORM acts give a value
# for (any value: "dontcare", yes / no, a value said in other words). Every user turn of the split is a candidate;
# the same utterance in two dialogues with different labels stays (the head learns the rate).
def collect_mentions(folder: Path, n_turns: int, seed: int) -> list[tuple[str, tuple, frozenset]]:
    """(u_t, ((slot, description), ...), informed slots) rows of one split, seeded."""
    turns, reg = _load(folder)
    rows = set()
    for t in turns:
        user = (t.user or "").strip()
        if not user or t.user_values is None:
            continue
        spec = reg.get(t.workflow)
        rows.add((user, tuple(schema_slots(spec)), frozenset(uv.slot for uv in t.user_values if uv.slot in spec.slots)))
    rows = sorted(rows, key=_mention_key)
    random.Random(seed).shuffle(rows)
    return sorted(rows[:n_turns], key=_mention_key)


def _mention_key(row) -> tuple:
    """A total order on (u_t, slots, informed slots); the frozenset sorted, as in ``_row_key``."""
    user, slots, said = row
    return user, slots, sorted(said)


def mention_pairs(rows, emb: dict, seed: int, augment: bool):
    """Pair features, labels and row ids of the mention head (slot renderings varied in training, as for the slot
    head)."""
    rng = random.Random(seed)
    X, y, ids = [], [], []
    for g, (user, slots, said) in enumerate(rows):
        X.append(pair_features(emb[user], np.stack([emb[t] for t in _slot_texts(slots, rng, augment)])))
        y.extend(int(n in said) for n, _ in slots)
        ids.extend([g] * len(slots))
    return np.concatenate(X).astype(np.float64), np.asarray(y), ids


def mention_strings(rows) -> list[str]:
    out = {u for u, _, _ in rows}
    for _, slots, _ in rows:
        for n, d in slots:
            out.update(slot_renderings(n, d))
    return sorted(out)


# user questions, labelled by whether the user gives a value in them (``collect_user_questions``). "Can you find 1 room
# at a 2 star hotel?" gives values; "Does their menu have vegetarian food?" asks about the offer and gives none, though
# a keyword extractor reads a value in it (vegetarian).
def collect_user_questions(folder: Path, n: int, seed: int) -> list[tuple[str, int]]:
    """(question, gives a value) rows of one split, seeded; the same question with both labels stays twice.

    A question is a user sentence ending in "?", or one written without its mark, given it back
    (``sentences.marked_question``, as at inference). A one-sentence utterance gives a value iff the turn has any user value; a
    question among several sentences iff an annotated value's span starts inside it (turns with a value without a
    span are left out: which sentence gave it is unknown). The multi-sentence questions and the unmarked ones
    took the train rows from 3,982 to 6,646 (dev clean turns: IUV false alarms 67 -> 58)."""
    from sage_core.evaluator.text.sentences import marked_question, sentences
    turns, _ = _load(folder)
    rows = set()
    for t in turns:
        if t.user_values is None:
            continue
        sents = [(x, o) for x, o in sentences(t.user or "") if x.strip()]
        questions = [(q, o, len(x)) for x, o in sents for q in [marked_question(x)] if q]
        if len(sents) == 1:
            rows.update((q, int(bool(t.user_values))) for q, _, _ in questions)
        elif questions and all(uv.span is not None for uv in t.user_values):
            rows.update((q, int(any(o <= uv.span[0] < o + ln for uv in t.user_values))) for q, o, ln in questions)
    out = sorted(rows)
    random.Random(seed).shuffle(out)
    return sorted(out[:n])


def _slot_texts(slots, rng: random.Random, augment: bool) -> list[str]:
    """How each (name, description) is put to the encoder in training: as at inference, or (``augment``) varied
    between name + description, description only and name only (6 : 2 : 2) so reworded schemas are not new."""
    return [slot_renderings(n, d)[rng.choices((0, 1, 2), weights=SLOT_RENDERING_WEIGHTS)[0]] if augment
            else slot_text(n, d) for n, d in slots]


def pair_matrix(split: Split, emb: dict, seed: int, augment: bool, rendering: Optional[int] = None,
                features: Callable = pair_features):
    """Pair features, labels and group ids for the slot head; ``rendering``: every slot in that one of
    ``slot_renderings`` (instead of ``_slot_texts``); ``features``: ``pair_features`` or ``centred_pair_features``
    (each sentence against all its slots at once)."""
    rng = random.Random(seed)
    X = []
    for g, sent, slots, _ in split.sentences:
        texts = _slot_texts(slots, rng, augment) if rendering is None else \
            [slot_renderings(n, d)[rendering] for n, d in slots]
        X.append(features(emb[sent], np.stack([emb[t] for t in texts])))
    return np.concatenate(X).astype(np.float64), pair_labels(split), pair_groups(split)


def pair_groups(split: Split) -> list[tuple[int, str]]:
    """Per pair of ``pair_matrix``, (reply group, slot)."""
    return [(g, n) for g, _, slots, _ in split.sentences for n, _ in slots]


def rendering_views(split: Split, emb: dict, features: Callable = pair_features) -> list[tuple[float, np.ndarray]]:
    """(weight, pair features) for each of ``slot_renderings``, the weights ``Heads.pair_scores`` averages with."""
    return [(w, pair_matrix(split, emb, SEED, augment=False, rendering=r, features=features)[0])
            for r, w in enumerate(SLOT_RENDERING_WEIGHTS)]


def averaged_logits(params: dict, views: list[tuple[float, np.ndarray]]) -> np.ndarray:
    """The pair MLP's logits averaged over ``views`` (``rendering_views``), as ``Heads.pair_scores`` scores."""
    return sum(w * mlp_logits(params, V)[:, 0] for w, V in views)


def pair_labels(split: Split) -> np.ndarray:
    """Per pair of ``pair_matrix``, 1 when the sentence's unit requests the slot."""
    return np.asarray([int(n in req) for _, _, slots, req in split.sentences for n, _ in slots])


def service_folds(split: Split) -> list[int]:
    """Per pair, a fold id that keeps each schema (service) whole: the slot head's out-of-fold scores are then
    scores on services the fold's MLP never saw, as at inference on a new service, so the listwise stage learns how
    far to trust the pair score there and how much the answer-kind features add (dev, average precision of
    requested (reply, slot) pairs: folds by reply 0.908, by service 0.916; with the answer-kind features 0.921; with
    256 hidden units 0.927; with the trip-end features 0.933).
    Schemas are numbered in sorted order, so the folds are deterministic."""
    keys = sorted({tuple(n for n, _ in slots) for _, _, slots, _ in split.sentences})
    index = {k: i for i, k in enumerate(keys)}
    out = []
    for _, _, slots, _ in split.sentences:
        out.extend([index[tuple(n for n, _ in slots)]] * len(slots))
    return out


def _answers(split: Split) -> list[tuple[float, ...]]:
    """Per pair, the answer-kind and trip-end agreement of its sentence and slot (``AnswerFit.features``)."""
    out: list[tuple[float, ...]] = []
    for _, sent, slots, _ in split.sentences:
        out.extend(answer_fit(sent, slots).features())
    return out


def exclusive_probs(split: Split, p: np.ndarray) -> np.ndarray:
    """Per pair, ``p`` after each sentence's slots of the wrong kind or trip end yield (``AnswerFit.exclusive``), as
    ``Heads.slot_probs`` returns them: the threshold is chosen on what inference scores (without it dev chose 0.65 for
    the plain head, 0.625 with it)."""
    out, i = [], 0
    for _, sent, slots, _ in split.sentences:
        out.extend(answer_fit(sent, slots).exclusive(p[i:i + len(slots)]))
        i += len(slots)
    return np.asarray(out, dtype=np.float64)


def _sentence_ids(split: Split) -> list[int]:
    """Per pair, the index of its sentence (pairs of one sentence are contiguous)."""
    out = []
    for i, (_, _, slots, _) in enumerate(split.sentences):
        out.extend([i] * len(slots))
    return out


def _pair_sentences(split: Split) -> list[str]:
    out = []
    for _, sent, slots, _ in split.sentences:
        out.extend([sent] * len(slots))
    return out


def _strings(split: Split) -> list[str]:
    s = {t for t, _ in split.replies} | {sent for _, sent, _, _ in split.sentences}
    s |= {act_text(t) for t in s}  # what the act head reads (``act_text``)
    for _, _, slots, _ in split.sentences:
        for n, d in slots:
            s.update(slot_renderings(n, d))
    return sorted(s)


def token_strings(split: Split) -> list[str]:
    """The strings whose token rows the slot head's token-level stage reads: the request units and the slots'
    ``slot_match_texts``."""
    s = {sent for _, sent, _, _ in split.sentences}
    for _, _, slots, _ in split.sentences:
        for n, d in slots:
            s.update(slot_match_texts(n, d))
    return sorted(s)


def token_match_rows(split: Split, tok: dict) -> np.ndarray:
    """Per pair of ``pair_matrix``, the ``MAXSIM_FEATURES`` of its sentence against its slot among the sentence's
    slots, as ``Heads.token_match_features`` computes them; ``tok``: token rows of ``token_strings``."""
    stacked: dict = {}
    out = []
    for _, sent, slots, _ in split.sentences:
        key = tuple(slots)
        if key not in stacked:
            stacked[key] = SlotTokens.stack([tok[t] for n, d in slots for t in slot_match_texts(n, d)])
        out.append(maxsim_features(token_matches(tok[sent], stacked[key])))
    return np.concatenate(out) if out else np.zeros((0, 3))


def _mlp(X, Y, alpha: float, hidden: int, iters: int):
    """One-hidden-layer ReLU MLP with logistic outputs (multi-label when Y is 2-D); seeded, so deterministic."""
    import warnings
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier
    m = MLPClassifier(hidden_layer_sizes=(hidden,), activation="relu", solver="adam", alpha=alpha,
                      batch_size=256, learning_rate_init=1e-3, max_iter=iters, shuffle=True, random_state=SEED,
                      tol=0.0, n_iter_no_change=iters + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m.fit(X, Y)
    return m


def _pair_mlp_with_oof(X, y, groups, alpha: float, hidden: int, iters: int,
                       after_fold: Callable[[int], None] = lambda f: None, fit_all: bool = True, views=None):
    """A pair MLP's 2-fold out-of-fold scores on its own training data (folds by ``groups`` parity, so no group is
    split; the listwise stage is fitted on them) and the MLP fitted on all of it (None unless ``fit_all``):
    (z_oof, params). ``views``: (weight, matrix) pairs with the same rows as ``X`` (the slots rendered otherwise);
    the out-of-fold score is then the weighted sum of each fold model's scores on them, as at inference."""
    folds = np.asarray([g % 2 for g in groups])
    z_oof = np.zeros(len(y))
    for f in (0, 1):
        pf = _mlp_params(_mlp(X[folds != f], y[folds != f], alpha, hidden, iters))
        rows = folds == f
        z_oof[rows] = mlp_logits(pf, X[rows])[:, 0] if views is None else \
            averaged_logits(pf, [(w, V[rows]) for w, V in views])
        after_fold(f)
    return z_oof, (_mlp_params(_mlp(X, y, alpha, hidden, iters)) if fit_all else None)


def _mlp_params(m) -> dict:
    return {"w1": np.asarray(m.coefs_[0]), "b1": np.asarray(m.intercepts_[0]),
            "w2": np.asarray(m.coefs_[1]), "b2": np.asarray(m.intercepts_[1])}


def _logloss(p, y):
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def _platt(z, y) -> tuple[float, float]:
    from sklearn.linear_model import LogisticRegression
    if len(set(y.tolist())) < 2:
        return 1.0, 0.0
    m = LogisticRegression(C=1e6, solver="lbfgs", max_iter=2000, tol=1e-8)
    m.fit(z.reshape(-1, 1), y)
    return float(m.coef_[0, 0]), float(m.intercept_[0])


def _threshold(p, y, min_precision: float) -> float:
    """The threshold with the most dev recall at dev precision >= min_precision (else the best F1)."""
    best, best_f1 = None, (-1.0, 0.5)
    for t in THRESHOLD_GRID:
        pred = p >= t
        prec, rec, f1 = (float(x) for x in prf_from_counts(np.sum(pred & (y == 1)), np.sum(pred & (y == 0)),
                                                           np.sum(~pred & (y == 1))))
        if prec >= min_precision and (best is None or rec > best[1]):
            best = (t, rec)
        if f1 > best_f1[0]:
            best_f1 = (f1, t)
    return float(best[0] if best is not None else best_f1[1])


def _r(a) -> list:
    return np.round(np.asarray(a, dtype=np.float64), 6).tolist()


def cached_embedder(path: Path) -> Callable:
    """MiniLM embeddings kept in an .npz outside the repository between runs (a speed-up for experiments only). Kept
    in float64: float32 copies changed the fits' last digits. The committed file is made by the plain command, without
    a cache (a cached run embeds in other batches; byte identity with it is not claimed)."""
    from sage_core.evaluator.verify.s2_encoders import embed_float64 as _e
    path = Path(path)

    def embed(strings: list[str]) -> dict:
        have: dict = {}
        if path.is_file():
            with np.load(path, allow_pickle=False) as z:
                have = dict(zip(z["keys"].tolist(), z["vecs"]))
        todo = sorted(set(strings) - set(have))
        if todo:
            have.update(_e(todo))
            keys = sorted(have)
            # written whole beside the path, then moved: a run killed mid-write leaves the previous cache readable
            part = path.with_name(path.name + ".part")
            with open(part, "wb") as f:
                np.savez(f, keys=np.asarray(keys), vecs=np.stack([have[k] for k in keys]).astype(np.float64))
            os.replace(part, path)
        return {s: have[s] for s in strings}
    return embed


EMB_DECIMALS = 6


def _rounded(embed: Callable, strings: list[str]) -> dict:
    """Embeddings as the fits see them: float64 rounded to ``EMB_DECIMALS`` decimals, so float noise of the encoder
    (~1e-15 in float64) cannot reach the fits."""
    return {k: np.round(np.asarray(v, dtype=np.float64), EMB_DECIMALS) for k, v in embed(strings).items()}


@dataclass
class SlotFit:
    """A fitted slot head (``fit_slot_head``) and how it scores the dev sentences it was calibrated on."""

    params: dict  # the pair MLP
    rank_w: np.ndarray  # the listwise logistic stage (``RANK_FEATURES``)
    rank_b: float
    platt: tuple[float, float]
    threshold: float  # alone: the most recall at ``DEV_PRECISION["slots"]`` on the dev (reply, slot) pairs
    n_pairs: int
    dev_pair_p: np.ndarray  # per dev (request unit, slot) pair (``pair_groups`` order): the calibrated p (the mean
    # of both stages' when there is a token-level one), before ``exclusive_probs``
    # the token-level listwise stage (``MAXSIM_RANK_FEATURES``): (w, b, Platt), None when fitted without token rows
    token_stage: Optional[tuple[np.ndarray, float, tuple[float, float]]] = None


def best_per_reply_slot(groups, p, y) -> tuple[np.ndarray, np.ndarray]:
    """Turn level: (reply, slot) is requested when any of its request units scores it; per (reply, slot), sorted,
    the best p over the units and the label."""
    bestp: dict = {}
    for key, pk, yk in zip(groups, p, y):
        if pk > bestp.get(key, (-1.0, 0))[0]:
            bestp[key] = (float(pk), int(yk))
    return (np.asarray([v[0] for _, v in sorted(bestp.items())]),
            np.asarray([v[1] for _, v in sorted(bestp.items())]))


def fit_slot_head(train: Split, dev: Split, emb: dict, act_params: tuple[dict, dict], req_j: int,
                  log: Callable[[str], None] = lambda s: None, features: Callable = pair_features,
                  tok: Optional[dict] = None) -> SlotFit:
    """The slot head: a pair MLP fitted on ``train``, a listwise logistic over the slots of each sentence (fitted on
    the MLP's out-of-fold scores, ``service_folds``), Platt scaling and the decision threshold on ``dev``.
    ``act_params``: the act head's two MLPs (``act_logits``), whose REQUEST logit (column ``req_j``) is a listwise
    feature; ``features``: the pair features (``pair_features``, or ``centred_pair_features`` for the centred head);
    ``tok``: token rows of ``token_strings`` of both splits: a second listwise stage is fitted on the same features
    plus ``token_match_rows`` and Platt-scaled on dev on its own, and the head's dev p is the mean of both stages'
    (train domains held out in turn, dev: average precision 0.842 -> 0.855 on the held-out domains, 0.961 -> 0.960
    on seen ones; the token stage alone 0.863 / 0.956; docs/benchmarks.md)."""
    from sklearn.linear_model import LogisticRegression
    Xs, ys, _ = pair_matrix(train, emb, SEED, augment=True, features=features)
    z_first = _pair_mlp_with_oof(Xs, ys, service_folds(train), SLOT_ALPHA, SLOT_HIDDEN, SLOT_ITERS, fit_all=False)[0]
    train = assign_requests(train, z_first)
    ys = pair_labels(train)  # the pairs, and so Xs, are unchanged: only labels moved
    log("slot head labels assigned to one question each")
    # scored as at inference: the mean over the slot's renderings (``Heads.pair_scores``)
    views = rendering_views(train, emb, features)
    z_oof, slot_params = _pair_mlp_with_oof(Xs, ys, service_folds(train), SLOT_ALPHA, SLOT_HIDDEN, SLOT_ITERS,
                                            lambda f: log(f"slot head fold {f}"), views=views)
    del views
    def zreq(sent: str) -> float:
        return request_logit(sent, float(act_logits(act_params, emb[sent][None, :], emb[act_text(sent)][None, :])
                                         [0, req_j]))
    zreq_train = {sent: zreq(sent) for _, sent, _, _ in train.sentences}
    zreq_dev = {sent: zreq(sent) for _, sent, _, _ in dev.sentences}
    R = slot_rank_features(z_oof, _sentence_ids(train), [zreq_train[s] for s in _pair_sentences(train)],
                           _answers(train))
    ysd = pair_labels(dev)
    zd = averaged_logits(slot_params, rendering_views(dev, emb, features))
    Rd = slot_rank_features(zd, _sentence_ids(dev), [zreq_dev[s] for s in _pair_sentences(dev)], _answers(dev))
    stages = [(R, Rd)]
    if tok is not None:
        stages.append((np.concatenate([R, token_match_rows(train, tok)], axis=1),
                       np.concatenate([Rd, token_match_rows(dev, tok)], axis=1)))
    fitted = []
    for A, Ad in stages:
        rank = LogisticRegression(C=1.0, solver="lbfgs", max_iter=2000, tol=1e-8).fit(A, ys)
        sd = Ad @ rank.coef_[0] + rank.intercept_[0]
        sa, sb = _platt(sd, ysd)
        fitted.append((rank.coef_[0], float(rank.intercept_[0]), (sa, sb), sigmoid(sa * sd + sb)))
    pd_ = np.mean([f[3] for f in fitted], axis=0)
    (w, b, platt, _), token_stage = fitted[0], (fitted[1][:3] if len(fitted) > 1 else None)
    return SlotFit(params=slot_params, rank_w=w, rank_b=b, platt=platt,
                   threshold=_threshold(*dev_scores(dev, pd_), DEV_PRECISION["slots"]), n_pairs=len(ys),
                   dev_pair_p=pd_, token_stage=token_stage)


def dev_scores(dev: Split, pair_p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per dev (reply, slot), sorted: the best over the reply's request units of ``pair_p`` (per pair, calibrated)
    after ``exclusive_probs``, as ``Heads.slot_probs`` returns it, and the label."""
    return best_per_reply_slot(pair_groups(dev), exclusive_probs(dev, pair_p), pair_labels(dev))


def mean_dev_scores(dev: Split, *fits: SlotFit) -> tuple[np.ndarray, np.ndarray]:
    """``dev_scores`` of the mean of the fitted heads' calibrated probabilities (``Heads.slot_probs`` averages them)."""
    return dev_scores(dev, np.mean([f.dev_pair_p for f in fits], axis=0))


def mean_threshold(dev: Split, *fits: SlotFit) -> float:
    """The decision threshold on ``mean_dev_scores``: the most dev recall at ``DEV_PRECISION["slots"]``."""
    return _threshold(*mean_dev_scores(dev, *fits), DEV_PRECISION["slots"])


def train_heads(data: Path, sizes: Optional[dict] = None, embed: Optional[Callable] = None,
                log: Callable[[str], None] = lambda s: None, tokens: Optional[Callable] = None,
                paraphrases: Optional[Path] = None) -> dict:
    """Fit, choose and calibrate both heads; returns the artifact as a JSON-ready dict.

    The fits run on one BLAS thread: a multi-threaded BLAS may split sums differently from run
    to run, and the MLP fits amplify last-bit differences (two full runs gave different Platt
    parameters before); with one thread and rounded embeddings the file is reproduced byte for byte.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _train_heads(data, sizes, embed, log, tokens, paraphrases)


def _train_heads(data: Path, sizes: Optional[dict], embed: Optional[Callable],
                 log: Callable[[str], None], tokens: Optional[Callable] = None,
                 paraphrases: Optional[Path] = None) -> dict:
    sizes = {**SIZES, **(sizes or {})}
    t0 = time.perf_counter()
    sgd = Path(data) / "sgd"
    renderings = paraphrase_renderings(sgd / "train", paraphrases)
    train = rerender(collect(sgd / "train", sizes["train_replies"], sizes["train_requests"], SEED), renderings, SEED)
    dev = collect(sgd / "dev", sizes["dev_replies"], sizes["dev_requests"], SEED + 1, units=request_units,
                  slots_of=request_slots)
    log(f"train: {len(train.replies)} replies, {len(train.sentences)} request-candidate sentences; "
        f"dev: {len(dev.replies)} / {len(dev.sentences)} ({time.perf_counter() - t0:.1f} s)")
    if embed is None:
        from sage_core.evaluator.verify.s2_encoders import embed_float64 as _e
        embed = _e
    strings = sorted(set(_strings(train)) | set(_strings(dev)))
    emb = _rounded(embed, strings)
    log(f"embedded {len(strings)} strings ({time.perf_counter() - t0:.1f} s)")

    # --- act head (two multi-label MLPs, raw and masked text, logits averaged; alpha chosen on dev log-loss) ----
    Xa, Xam = (np.stack([emb[f(t)] for t, _ in train.replies]) for f in (str, act_text))
    Xd, Xdm = (np.stack([emb[f(t)] for t, _ in dev.replies]) for f in (str, act_text))
    Ya = np.asarray([[int(act in a) for act in ACTS] for _, a in train.replies])
    Yd = np.asarray([[int(act in a) for act in ACTS] for _, a in dev.replies])
    best = None
    for alpha in ALPHA_GRID:
        params = (_mlp_params(_mlp(Xa, Ya, alpha, ACT_HIDDEN, ACT_ITERS)),
                  _mlp_params(_mlp(Xam, Ya, alpha, ACT_HIDDEN, ACT_ITERS)))
        z = act_logits(params, Xd, Xdm)
        loss = sum(_logloss(sigmoid(z[:, j]), Yd[:, j]) for j in range(len(ACTS)))
        log(f"act head alpha={alpha}: dev log-loss {loss:.4f}")
        if best is None or loss < best[0] - 1e-12:
            best = (loss, alpha, params)
    _, act_alpha, act_params = best
    Zd = act_logits(act_params, Xd, Xdm)
    P, T = [], {}
    for j, act in enumerate(ACTS):
        a, b = _platt(Zd[:, j], Yd[:, j])
        P.append((a, b))
        T[act] = _threshold(sigmoid(a * Zd[:, j] + b), Yd[:, j], DEV_PRECISION["acts"])
        log(f"act {act}: platt=({a:.3f}, {b:.3f}) threshold={T[act]}")
    req_j = ACTS.index("REQUEST")

    if tokens is None:
        from sage_core.evaluator.verify.s2_encoders import tokens_float64 as tokens
    tok = _rounded(tokens, sorted(set(token_strings(train)) | set(token_strings(dev))))
    log(f"token rows of {len(tok)} strings ({time.perf_counter() - t0:.1f} s)")
    slot = fit_slot_head(train, dev, emb, act_params, req_j, lambda m: log(f"{m} ({time.perf_counter() - t0:.1f} s)"),
                         tok=tok)
    centred = fit_slot_head(train, dev, emb, act_params, req_j,
                            lambda m: log(f"centred {m} ({time.perf_counter() - t0:.1f} s)"),
                            features=centred_pair_features, tok=tok)
    del tok
    slot_threshold = mean_threshold(dev, slot, centred)
    vtrain = collect_values(sgd / "train", sizes["train_values"], SEED)
    vdev = collect_values(sgd / "dev", sizes["dev_values"], SEED + 1)
    emb.update(_rounded(embed, value_strings(vtrain + vdev)))
    values = fit_value_head(vtrain, vdev, emb, log)
    mtrain = rerender_mentions(collect_mentions(sgd / "train", sizes["train_mentions"], SEED), renderings, SEED)
    mdev = collect_mentions(sgd / "dev", sizes["dev_mentions"], SEED + 1)
    emb.update(_rounded(embed, mention_strings(mtrain + mdev)))
    mentions = fit_mention_head(mtrain, mdev, emb, log)
    qtrain = collect_user_questions(sgd / "train", sizes["train_questions"], SEED)
    qdev = collect_user_questions(sgd / "dev", sizes["dev_questions"], SEED + 1)
    emb.update(_rounded(embed, sorted({q for q, _ in qtrain + qdev})))
    informs = fit_informs_head(qtrain, qdev, emb, log)
    for name, f in (("slot head", slot), ("centred slot head", centred)):
        log(f"{name}: {f.n_pairs} train pairs, rank w={np.round(f.rank_w, 3).tolist()} "
            f"platt=({f.platt[0]:.3f}, {f.platt[1]:.3f}); token stage w={np.round(f.token_stage[0], 3).tolist()} "
            f"platt=({f.token_stage[2][0]:.3f}, {f.token_stage[2][1]:.3f}); threshold alone={f.threshold}")
    log(f"slot threshold (mean of both heads): {slot_threshold} ({time.perf_counter() - t0:.1f} s)")
    return {
        "format": FORMAT,
        "encoder": "all-MiniLM-L6-v2 (frozen, mean-pooled, L2-normalised)",
        "acts": {"names": ACTS, "mlp": {k: _r(v) for k, v in act_params[0].items()},
                 "masked": {"input": "act_text: numbers and capitalised name runs masked",
                            "mlp": {k: _r(v) for k, v in act_params[1].items()}},
                 "logits": "the mean of both MLPs' (act_logits)", "platt": _r(P), "threshold": T},
        "slots": {"features": "u*v, |u-v|, cos(u, v); u = sentence, v = each of slot_renderings(name, description), "
                              "pair logits averaged with SLOT_RENDERING_WEIGHTS",
                  "mlp": {k: _r(v) for k, v in slot.params.items()},
                  "rank": {"features": RANK_FEATURES, "w": _r(slot.rank_w), "b": round(slot.rank_b, 6)},
                  "platt": _r(slot.platt), "token_stage": _token_stage(slot), "threshold": slot_threshold,
                  "threshold_of": "the mean of this head's and slots_centred's calibrated probabilities, each the "
                                  "mean of its two stages'"},
        "slots_centred": {"features": "u'*v', |u-v|, cos(u, v), cos(u', v') (centred_pair_features; u' = u - c, "
                                      "v' = v - c, c = the mean of the sentence's slots); otherwise as slots",
                          "mlp": {k: _r(v) for k, v in centred.params.items()},
                          "rank": {"features": RANK_FEATURES, "w": _r(centred.rank_w), "b": round(centred.rank_b, 6)},
                          "platt": _r(centred.platt), "token_stage": _token_stage(centred)},
        "values": values,
        "mentions": mentions,
        "informs": informs,
        "meta": {"fitted_on": "train split annotations", "chosen_and_calibrated_on": "dev split",
                 **({"train_schema_paraphrases": {"renderings": [f.parent.name for f in
                                                                 sorted(Path(paraphrases).glob("*/schema.json"))],
                                                  "share": PARAPHRASE_SHARE,
                                                  "heads": ["slots", "slots_centred", "mentions"]}}
                    if paraphrases is not None else {}),
                 "seed": SEED, "sizes": {"train_replies": len(train.replies), "train_sentences": len(train.sentences),
                                         "dev_replies": len(dev.replies), "dev_sentences": len(dev.sentences)},
                 "act_head": {"hidden": ACT_HIDDEN, "iters": ACT_ITERS, "alpha_grid": list(ALPHA_GRID),
                              "alpha": act_alpha},
                 "slot_head": {"hidden": SLOT_HIDDEN, "iters": SLOT_ITERS, "alpha": SLOT_ALPHA},
                 "mention_head": {"hidden": MENTION_HIDDEN, "iters": MENTION_ITERS, "alpha": MENTION_ALPHA,
                                  "train_utterances": len(mtrain), "dev_utterances": len(mdev)},
                 "informs_head": {"hidden": INFORMS_HIDDEN, "iters": INFORMS_ITERS, "alpha": INFORMS_ALPHA,
                                  "train_questions": len(qtrain), "dev_questions": len(qdev)},
                 "value_head": {"hidden": VALUE_HIDDEN, "iters": VALUE_ITERS, "alpha": VALUE_ALPHA,
                                "train_groups": len(vtrain), "dev_groups": len(vdev)},
                 "dev_precision_for_thresholds": DEV_PRECISION},
    }


def _token_stage(fit: SlotFit) -> dict:
    w, b, platt = fit.token_stage
    return {"features": MAXSIM_RANK_FEATURES, "w": _r(w), "b": round(b, 6), "platt": _r(platt),
            "token_rows": "MiniLM's last layer per real token ([CLS] / [SEP] dropped), L2-normalised; slot texts: "
                          "slot_match_texts (name alone, description alone)"}


VALUE_HIDDEN, VALUE_ITERS, VALUE_ALPHA = 64, 40, 1e-2


def fit_value_head(vtrain, vdev, emb: dict, log: Callable[[str], None]) -> dict:
    """The value-support head: a pair MLP on (u_t, value_claim), a listwise logistic over the slot's candidates
    (fitted on 2-fold out-of-fold train scores) and Platt scaling on dev."""
    from sklearn.linear_model import LogisticRegression
    from sage_core.evaluator.text.heads import VALUE_RANK_FEATURES
    X, y, ids = value_pairs(vtrain, emb)
    Xd, yd, idd = value_pairs(vdev, emb)
    k = len(VALUE_RANK_FEATURES)
    z_oof, params = _pair_mlp_with_oof(X, y, ids, VALUE_ALPHA, VALUE_HIDDEN, VALUE_ITERS)
    rank = LogisticRegression(C=1.0, solver="lbfgs", max_iter=2000, tol=1e-8).fit(
        rank_features(z_oof, ids, np.zeros(len(y)))[:, :k], y)
    sd = rank_features(mlp_logits(params, Xd)[:, 0], idd, np.zeros(len(yd)))[:, :k] @ rank.coef_[0] \
        + rank.intercept_[0]
    a, b = _platt(sd, yd)
    p = sigmoid(a * sd + b)
    top1 = np.mean([p[np.asarray(idd) == g].argmax() == 0 for g in sorted(set(idd))])
    log(f"value head: {len(vtrain)} train groups ({len(y)} pairs), {len(vdev)} dev groups; platt=({a:.3f}, {b:.3f}); "
        f"dev log-loss {_logloss(p, yd):.4f}, written value ranked first in {top1:.3f} of dev groups")
    return {"features": "u*v, |u-v|, cos(u, v); u = user utterance, v = value_claim(slot, description, value)",
            "mlp": {kk: _r(v) for kk, v in params.items()},
            "rank": {"features": list(VALUE_RANK_FEATURES), "w": _r(rank.coef_[0]), "b": round(float(rank.intercept_[0]), 6)},
            "platt": _r((a, b))}


MENTION_HIDDEN, MENTION_ITERS, MENTION_ALPHA = 64, 30, 1e-3


def fit_mention_head(mtrain, mdev, emb: dict, log: Callable[[str], None]) -> dict:
    """The slot-mention head: a pair MLP on (u_t, slot_text) fitted on train, Platt scaling on dev."""
    X, y, _ = mention_pairs(mtrain, emb, SEED, augment=True)
    Xd, yd, _ = mention_pairs(mdev, emb, SEED, augment=False)
    params = _mlp_params(_mlp(X, y, MENTION_ALPHA, MENTION_HIDDEN, MENTION_ITERS))
    zd = mlp_logits(params, Xd)[:, 0]
    a, b = _platt(zd, yd)
    p = sigmoid(a * zd + b)
    pr = {t: tuple(round(float(x), 3) for x in prf_from_counts(np.sum((p >= t) & (yd == 1)),
                                                               np.sum((p >= t) & (yd == 0)),
                                                               np.sum((p < t) & (yd == 1))))
          for t in (0.5, 0.8, 0.9)}
    log(f"mention head: {len(mtrain)} train utterances ({len(y)} pairs, {int(y.sum())} positive), {len(mdev)} dev; "
        f"platt=({a:.3f}, {b:.3f}); dev log-loss {_logloss(p, yd):.4f}; dev P/R/F1 at 0.5 / 0.8 / 0.9: {pr}")
    # the prior Platt calibrated under: the share of dev pairs in which u_t gives a value (used to put a written
    # value's reading on even odds, ``Heads.mention_probs_if_written``)
    return {"features": "u*v, |u-v|, cos(u, v); u = user utterance, v = slot_text(name, description)",
            "mlp": {kk: _r(v) for kk, v in params.items()}, "platt": _r((a, b)),
            "base_rate": round(float(np.mean(yd)), 6)}


INFORMS_HIDDEN, INFORMS_ITERS, INFORMS_ALPHA = 64, 40, 1e-3
# the informs head's threshold: below it a question is read as asking, not giving a value, when on dev at least this
# share of the questions read so give none
ASKS_PRECISION = 0.97


def fit_informs_head(qtrain, qdev, emb: dict, log: Callable[[str], None]) -> dict:
    """The informs head: an MLP on the question's embedding, p(the user question gives a value), fitted on train,
    Platt on dev; its threshold is the largest of 0.05, 0.10, ... 0.50 at which the dev questions scored below it
    give no value at ``ASKS_PRECISION`` or better."""
    X = np.stack([emb[q] for q, _ in qtrain]).astype(np.float64)
    y = np.asarray([lab for _, lab in qtrain])
    Xd = np.stack([emb[q] for q, _ in qdev]).astype(np.float64)
    yd = np.asarray([lab for _, lab in qdev])
    params = _mlp_params(_mlp(X, y, INFORMS_ALPHA, INFORMS_HIDDEN, INFORMS_ITERS))
    zd = mlp_logits(params, Xd)[:, 0]
    a, b = _platt(zd, yd)
    p = sigmoid(a * zd + b)
    thr = 0.0
    for t in (round(0.05 * i, 2) for i in range(1, 11)):
        asks = p < t
        if asks.sum() and float(np.mean(yd[asks] == 0)) >= ASKS_PRECISION:
            thr = t
    asks = p < thr
    log(f"informs head: {len(qtrain)} train questions ({int(y.sum())} giving a value), {len(qdev)} dev; "
        f"platt=({a:.3f}, {b:.3f}); threshold {thr}: dev questions read as asking {int(asks.sum())}, of which "
        f"{int(np.sum(asks & (yd == 1)))} give a value; {int(np.sum(yd == 0))} dev questions give none")
    return {"features": "u = the user question's embedding", "mlp": {kk: _r(v) for kk, v in params.items()},
            "platt": _r((a, b)), "threshold": thr}


def write_heads(artifact: dict, out: Path) -> None:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(artifact, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")


# --- CLI ------------------------------------------------------------------------------------------
# our own paraphrased renderings of the train schema (data/, beside the package), for ``--paraphrases``. Off by
# default: on dev they made renamed schemas easier (heavy paraphrase F1 0.931 -> 0.941) and the schema's own wording
# harder (0.969 -> 0.963, WNF recall 0.983 -> 0.950), docs/benchmarks.md
TRAIN_PARAPHRASES = Path(__file__).resolve().parents[3] / "data" / "schema_paraphrases" / "train"


def add_arguments(p) -> None:
    from sage_core.evaluator.text.heads import DEFAULT_HEADS_PATH
    p.add_argument("--data", default="../shared/data", help="folder holding sgd/train and sgd/dev (test is never read)")
    p.add_argument("--out", default=str(DEFAULT_HEADS_PATH), help="where to write the heads JSON")
    p.add_argument("--embed-cache", default=None,
                   help="optional .npz (outside the repository) keeping sentence embeddings between runs")
    p.add_argument("--paraphrases", default="none",
                   help="folder of paraphrased renderings of the train schema (*/schema.json, our own wording), e.g. "
                        f"{TRAIN_PARAPHRASES}: the slot and mention heads see half of train in them. Default none "
                        "(the committed heads): the schema's own wording only")
    p.add_argument("--scale", type=float, default=1.0,
                   help="fraction of the default sample sizes (for quick checks; the committed file uses 1.0)")


def run(args) -> int:
    scale = float(args.scale)
    if not 0 < scale <= 1:
        raise SageInputError(f"--scale must be in (0, 1], got {scale}")
    sizes = {k: max(20, int(v * scale)) for k, v in SIZES.items()}
    embed = cached_embedder(Path(args.embed_cache)) if args.embed_cache else None
    para = None if str(args.paraphrases).lower() == "none" else Path(args.paraphrases)
    art = train_heads(Path(args.data), sizes, embed=embed, log=lambda s: print(s, flush=True), paraphrases=para)
    write_heads(art, Path(args.out))
    print(f"wrote {args.out}")
    return 0
