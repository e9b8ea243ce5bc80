"""``Heads``: the loaded heads applied to text (acts, requested slots, mentions, informs, value support),
with their dev-chosen thresholds and per-instance memos."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

from sage_core.evaluator.lru import LruDict
from sage_core.evaluator.text.answer_types import QUANTITY_KINDS, answer_fit
from sage_core.evaluator.text.sentences import (asks_by_form, asks_without_mark, is_directive_request,
                                               is_relative_clause, marked_question, opens_with_wh, run_on_sentences)
from sage_core.evaluator.text.heads.act_input import act_text
from sage_core.evaluator.text.heads.features import (VALUE_RANK_FEATURES, SlotTokens, act_logits,
                                                     centred_pair_features, maxsim_features, mlp_logits, pair_features,
                                                     rank_features, request_logit, sigmoid, slot_rank_features,
                                                     token_matches)
from sage_core.evaluator.text.heads.schema_text import (SLOT_RENDERING_WEIGHTS, slot_match_texts, slot_renderings,
                                                        value_claim)
from sage_core.evaluator.text.heads.units import mention_units, request_unit_groups, request_units


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
# a reply with no question and no directive that states a number informs ("21 percent, more or less.", "On that day,
# the temperature will be approximately 84 degrees Fahrenheit"): however surely the act head reads it as a request,
# it is not scored for requested slots. Dev, every turn, text-only: of the replies without a question, those with a
# digit gave 7 false requested-slot pairs and no true one (the act head had not seen the weather domain in training)
STATED_NUMBER = re.compile(r"\d")

Embedder = Callable[[list[str]], dict[str, np.ndarray]]  # strings -> unit vectors (d,); or -> token rows (n, d)


@dataclass(frozen=True)
class ListwiseStage:
    """A listwise logistic stage and its Platt scaling: p = sigmoid(a (x w + b) + c) for feature rows x."""

    w: np.ndarray
    b: float
    platt: tuple[float, float]

    def probs(self, X: np.ndarray) -> np.ndarray:
        return sigmoid(self.platt[0] * (X @ self.w + self.b) + self.platt[1])


# counts, sums and durations need their question's noun to say which slot (``QUANTITY_KINDS``), except a sum of money:
# a question asking only "how much" (money) in a schema with exactly one slot holding a sum
# asks for that slot whatever the slot head ranks first ("How much money?" scored the account type 0.52, the amount
# 0.11 in a bank service without train dialogues). Dev, every turn: 69 such units, all 69 in a reply requesting that
# slot, 24 of them found by nothing else; the train split has no such question (its services ask sums in other
# words), so this is a dev choice. Counts stay out: "For how many days ...?" is a count the rooms slot also holds
# (dev: 254 of 273 right)
SUM_KINDS = frozenset({"AMOUNT"})


def new_memo():
    """A per-``Heads`` bounded memo (``MEMO_MAX`` entries), not a constructor field."""
    return field(default_factory=lambda: LruDict(MEMO_MAX), init=False, repr=False, compare=False)


@dataclass
class Heads:
    """The loaded artifact; ``embed`` maps strings to normalised encoder vectors (MiniLM by default)."""

    path: str
    acts: list[str]
    act_mlp: dict  # w1 (d, h), b1 (h,), w2 (h, k), b2 (k,): on the text as written
    act_mlp_masked: dict  # the same on the text with its values masked (``act_text``); the logits are the mean
    act_platt: np.ndarray  # (k, 2): p = sigmoid(a * z + b)
    act_threshold: dict[str, float]
    slot_mlp: dict  # w1 (2d + 1, h), b1, w2 (h, 1), b2 (1,)
    rank_w: np.ndarray  # (8,) listwise stage over RANK_FEATURES
    rank_b: float
    slot_platt: tuple[float, float]
    slot_threshold: float  # on the mean of both slot heads' probabilities when the centred head is loaded
    meta: dict
    embed: Optional[Embedder] = None
    # contextual token vectors of a string (``s2_encoders.embed_tokens`` by default), for the token-level stages
    tokens: Optional[Embedder] = None
    # the slot heads' token-level listwise stages (optional in the file; ``MAXSIM_RANK_FEATURES``): each head's
    # calibrated p is the mean of its plain stage's and this one's
    slot_maxsim: Optional[ListwiseStage] = None
    centred_maxsim: Optional[ListwiseStage] = None
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
    _slot_v: "LruDict[np.ndarray]" = new_memo()
    _slot_tok: "LruDict[SlotTokens]" = new_memo()
    _logits: "LruDict[np.ndarray]" = new_memo()
    _units: "LruDict[tuple]" = new_memo()
    _unit_p: "LruDict[dict]" = new_memo()

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
        units: list[str] = []
        for r in replies:
            if r and r.strip():
                parts = request_units(r)
                units.extend(parts)
                strings.append(r.strip())
                strings.extend(act_text(u) for u in [r.strip()] + parts)  # what the act head reads
        if units and self.reads_tokens:
            # the units' token rows; the same forward pass embeds them (the default encoder caches both)
            self._tokens(sorted(set(units)))
        self.prefetch(strings + units)

    @property
    def reads_tokens(self) -> bool:
        """Either slot head has a token-level stage, so request units need their token rows."""
        return self.slot_maxsim is not None or self.centred_maxsim is not None

    def _tokens(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        if self.tokens is None:
            from sage_core.evaluator.verify.s2_encoders import embed_tokens  # lazy: loads MiniLM once per process
            self.tokens = embed_tokens
        return self.tokens(list(texts))

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
        """The act head's logits of ``text``: the mean of its MLPs' on the text as written and on the text with its
        values masked (``act_text``)."""
        z = self._logits.get(text)
        if z is None:
            masked = act_text(text)
            e = self._embed([text, masked])
            z = self._logits.put(text, act_logits((self.act_mlp, self.act_mlp_masked),
                                                  e[text].astype(np.float64)[None, :],
                                                  e[masked].astype(np.float64)[None, :])[0])
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

            m = self.token_match_features(sentence, slots) if self.reads_tokens else None

            def calibrated(z, w, b, platt, token_stage):
                R = slot_rank_features(z, [0] * len(z), [zreq] * len(z), fit.features())
                p = ListwiseStage(w, b, platt).probs(R)
                if token_stage is not None:
                    p = (p + token_stage.probs(np.concatenate([R, m], axis=1))) / 2
                return p

            p = calibrated(self.pair_scores(sentence, slots), self.rank_w, self.rank_b, self.slot_platt,
                           self.slot_maxsim)
            if self.centred_mlp is not None:
                pc = calibrated(self.pair_scores(sentence, slots, centred=True), self.centred_rank_w,
                                self.centred_rank_b, self.centred_platt, self.centred_maxsim)
                p = (p + pc) / 2
            p = fit.exclusive(p)
            probs = self._unit_p.put(key, dict(zip((n for n, _ in slots), np.round(p, 6).tolist())))
        return dict(probs)

    def token_match_features(self, sentence: str, slots: list[tuple[str, str]]) -> np.ndarray:
        """``maxsim_features`` (n, 3) of the sentence against each slot: the token-level stages' extra features."""
        key = tuple(slots)
        st = self._slot_tok.get(key)
        if st is None:
            texts = [t for n, d in slots for t in slot_match_texts(n, d)]
            rows = self._tokens(texts)
            st = self._slot_tok.put(key, SlotTokens.stack([rows[t] for t in texts]))
        return maxsim_features(token_matches(self._tokens([sentence])[sentence], st))

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
        if not asks and (STATED_NUMBER.search(text)
                         or self.act_probs(text).get("REQUEST", 0.0) < self.act_threshold.get("REQUEST", 0.5)):
            return []
        out: list[str] = []
        for sent, parts in request_unit_groups(text):
            parts = [u for u in parts if not is_relative_clause(u, sent)]
            if self.asks_for_value(sent):  # the parts of an asking sentence ask too ("... and your destination.")
                out.extend(u for u in [sent] + parts if u not in out)
            else:
                # a sentence that does not ask (an offer: "There are 3 restaurants you may like, how about X?")
                # still asks in a part that is a question by its own form ("I found 4 flights, which one do you
                # like?"), not in a clause that only inherited the question mark. Dev, every turn, text-only:
                # requested-slot pairs 29 false fewer, 2 true fewer (P 0.939 -> 0.944, R 0.932 -> 0.931)
                out.extend(u for u in parts if u not in out and asks_by_form(u) and self.asks_for_value(u))
        return out
