"""Agent acts recovered from a reply's text: REQUEST of a slot, CONFIRM and NOTIFY_SUCCESS.
Every act carries a confidence < 1.0 so S1 never decides on it."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from sage_core.data.profile import EMPTY_PROFILE, CorpusProfile
from sage_core.data.types import AgentAct, Turn
from sage_core.evaluator.text.answer_types import answer_fit, slot_kinds
from sage_core.evaluator.text.lexicon import (
    CONFIRM_PATTERNS,
    DESC_STOP,
    KIND_OF,
    OFFER_START,
    OPPOSITE_END,
    REQUEST_CUES,
    TYPE_LIKE,
    YESNO_START,
    Span,
)
from sage_core.evaluator.text.normalize import (
    MONTHS,
    WEEKDAYS,
    find_in_text,
    iter_dates,
    iter_times,
    sequence_index,
    tokens,
    tokens_with_spans,
)
from sage_core.evaluator.text.sentences import (SENTENCE_MARK, is_unmarked_question, offers_to_act, run_on_sentences,
                                                sentences, worded_sentences)
from sage_core.evaluator.text.slot_keywords import bool_keywords, keyword_table, names_keyword, slot_words
from sage_core.specs.workflow import WorkflowSpec

if TYPE_CHECKING:
    from sage_core.evaluator.text.heads import Heads


def confirmation_cue(text: str) -> Optional[tuple[str, float, Span]]:
    """The strongest confirmation / success cue in an agent reply: (act, confidence, span)."""
    best = None
    for rx, act, conf in CONFIRM_PATTERNS:
        m = rx.search(text or "")
        if m and (best is None or conf > best[1]):
            best = (act, conf, (m.start(), m.end()))
    return best


def _other_end(slot: str, words: list[str]) -> bool:
    """The sentence says "<word> out" where the slot is "<word>_in_..." (or the reverse), and never "<word> in"."""
    raw = tokens(slot.replace("_", " "))
    for i, t in enumerate(raw[:-1]):
        end = raw[i + 1]
        if end in OPPOSITE_END and sequence_index(words, [t, OPPOSITE_END[end]]) is not None \
                and sequence_index(words, [t, end]) is None:
            return True
    return False


def _score_sentence(sent: str, off: int, spec: WorkflowSpec, candidates: list[str], bool_only: bool,
                    profile: CorpusProfile) -> dict[str, tuple[float, Span]]:
    toks = tokens_with_spans(sent)
    words = [t for t, _, _ in toks]
    kind_of = KIND_OF.search(sent)
    table = keyword_table(spec, profile)  # once per sentence, not once per slot
    scores: dict[str, tuple[float, Span, float]] = {}
    for slot in candidates:
        if bool_only and spec.slots[slot].value_type != "bool":
            continue
        if _other_end(slot, words):
            continue  # "when will you check out?" does not ask for check_in_date
        total, span, best_w = 0.0, None, 0.0
        if kind_of and any(t in TYPE_LIKE for t in slot_words(spec, slot)):
            total, span, best_w = 1.0, (off + kind_of.start(), off + kind_of.end()), 1.0
        desc = [t for t in tokens(spec.slots[slot].description) if t not in DESC_STOP and len(t) > 2]
        if len(desc) >= 2 and sum(t in words for t in set(desc)) >= 0.75 * len(set(desc)):
            total += 1.0  # the reply paraphrases the slot's own description
            span = span or (off, off + len(sent.rstrip()))
            best_w = max(best_w, 1.0)
        hint_key = profile.hint_key(slot)
        hinted = hint_key is not None
        timed = hinted and hint_key in profile.time_excluded_hints and "time" in words
        hits: list[float] = []
        for kw, w in table[slot]:
            if timed and w < 0.8:
                continue
            i = sequence_index(words, kw.split())
            if i is None:
                continue
            hits.append(w)
            if w > best_w:
                n = len(kw.split())
                best_w, span = w, (off + toks[i][1], off + toks[i + n - 1][2])
        if hinted and hits:
            # hint tables list overlapping phrases ("departing from", "departing"):
            # the best one decides, each further hit adds a little
            total += max(hits) + 0.1 * min(len(hits) - 1, 3)
        else:
            total += sum(hits)
        if span is not None and (best_w >= 0.6 or total >= 1.0):
            prior = 1.0 if slot in spec.intent_slots else 0.5
            scores[slot] = (min(total, 1.6) * prior, span, best_w)
    return scores


def states_value(text: str, value) -> bool:
    """The text names this concrete state value (not a yes/no or "dontcare", not one or two characters)."""
    v = str(value or "").strip()
    return len(v) > 2 and v.lower() not in ("true", "false", "dontcare") and bool(find_in_text(v, text))


def names_one_value(text: str, spec: WorkflowSpec, slot: Optional[str]) -> bool:
    """The text names exactly one of a categorical slot's possible values ("Would you like to fly with American
    Airlines?"): it puts that value forward, an offer, and does not ask for the slot; an alternative question names
    two or more (``choice_question_slots``). Counts ("do you need more than one seat?") are no such values. Dev, every
    turn, text-only: of the requests read for a categorical slot in replies naming one of its values, 2 of 26 were
    annotated requests (the other 24 offers of a search result); of 392 annotated requests of such slots, 3 name one
    value."""
    sp = spec.slots.get(slot) if slot else None
    if sp is None or sp.value_type != "categorical":
        return False
    values = [v for v in sp.possible_values if v.lower() != "dontcare" and not v.strip().isdigit()]
    return len(values) >= 2 and sum(1 for v in values if find_in_text(v, text or "", "categorical")) == 1


def _no_offered_requests(acts: list[AgentAct], turn: Turn, spec: WorkflowSpec) -> list[AgentAct]:
    """REQUEST acts read from text, less those of a slot the reply offers one value of (``names_one_value``)."""
    return [a for a in acts if a.act != "REQUEST" or a.source not in ("head", "rule")
            or not names_one_value(turn.agent, spec, a.slot)]


def requested_slots(text: str, spec: WorkflowSpec, state: Optional[dict[str, str]] = None,
                    profile: CorpusProfile = EMPTY_PROFILE) -> list[tuple[str, float, Span]]:
    """Slots the agent asks for in ``text``: request sentences (not offers or confirmations) naming the slot."""
    out: dict[str, tuple[float, Span]] = {}
    candidates = spec.intent_slots + [s for s in spec.slots if s not in spec.intent_slots and spec.requestable(s)]
    hinted_spec = any(profile.hint_key(s) is not None for s in spec.slots)
    text = text or ""
    if profile.delex_pattern is not None:
        # delexicalised placeholders ("[restaurant_name]", "[value_area]") stand for values, not for
        # words naming a slot; blank them out (same length, so spans stay valid)
        text = profile.delex_pattern.sub(lambda m: " " * len(m.group(0)), text)
    unmarked = not SENTENCE_MARK.search(text)  # no mark anywhere: questions are known by their form alone
    for sent, off in run_on_sentences(text):
        # a yes/no opening asks even when the writer left off the question mark ("Do you want to add insurance")
        question = (sent.rstrip().endswith("?") or bool(YESNO_START.search(sent))
                    or (unmarked and is_unmarked_question(sent)))
        if not (question or re.search(r"\b(tell me|let me know|need|provide|specify)\b", sent, re.I)):
            continue
        if confirmation_cue(sent) or OFFER_START.search(sent):
            continue
        yesno = bool(YESNO_START.search(sent)) and not REQUEST_CUES.search(sent)
        asks = yesno and hinted_spec and profile.value_question is not None and bool(
            profile.value_question.search(sent))
        if asks:
            yesno = False  # "do you have a price range in mind ?" asks for the value
        if not yesno and not asks and not REQUEST_CUES.search(sent):
            continue
        # a sentence that names a concrete state value is an offer/confirmation, not a request
        if state and any(states_value(sent, v) for v in state.values()):
            continue
        scores = _score_sentence(sent, off, spec, candidates, bool_only=yesno, profile=profile)
        if not scores:
            continue
        top = max(v[0] for v in scores.values())
        # a profile hint phrase of weight >= 0.8 ("how many nights") is specific enough to stand
        # beside a stronger slot in a multi-slot question ("what day and time ...?")
        strong = {k: 0.8 if profile.hint_key(k) is not None else 1.0 for k in scores}
        keep = {k: v for k, v in scores.items() if v[0] >= max(0.6, 0.75 * top)
                or (v[0] >= top - 1e-9 and v[0] >= 0.5 and v[2] >= 1.0)
                or (strong[k] < 1.0 and v[0] >= 0.6 and v[2] >= strong[k])}
        share = 1.0 if len(keep) <= 3 else 3.0 / len(keep)
        if len(keep) > 1 and all(v[2] < strong[k] for k, v in keep.items()):
            share *= 0.7  # only shared words ("date" for two date slots): ambiguous
        for slot, (sc, sp, _) in keep.items():
            conf = round(min(0.9, (0.4 + 0.35 * min(sc, 1.3)) * share), 3)
            if slot not in out or out[slot][0] < conf:
                out[slot] = (conf, sp)
    return sorted(((s, c, sp) for s, (c, sp) in out.items()), key=lambda x: x[2])


# an alternative question ("Checking or savings?", "Economy, business or first class?") asks for the slot whose
# possible values it lists. Train: 200 of 201 such (reply, slot) pairs are annotated requests; dev 139 of 181, the
# 42 others the twin slot that shares the values (the recipient's account type beside the user's), so a slot of the
# current intent wins, then the slot head's choice (dev after that: see CHOICE_QUESTION_CONFIDENCE)
CHOICE_OR = re.compile(r"\bor\b", re.I)
CHOICE_QUESTION_CONFIDENCE = 0.85


def choice_question_slots(text: str, spec: WorkflowSpec, slot_probs: Optional[dict[str, float]] = None
                          ) -> list[tuple[str, Span]]:
    """(slot, span) for each question sentence of ``text`` that offers two or more of one categorical slot's
    possible values joined by "or". Several slots sharing the values: those of the current intent, then the one
    ``slot_probs`` (the slot head's scores) ranks highest."""
    out: dict[str, Span] = {}
    unmarked = not SENTENCE_MARK.search(text or "")
    for sent, off in run_on_sentences(text or ""):
        if not (sent.rstrip().endswith("?") or (unmarked and is_unmarked_question(sent))) or not CHOICE_OR.search(sent):
            continue
        hits: dict[str, Span] = {}
        for slot in sorted(spec.slots):
            sp = spec.slots[slot]
            if sp.value_type != "categorical" or len(sp.possible_values) < 2 or not spec.requestable(slot):
                continue
            spans = [m for m in (find_in_text(v, sent, sp.value_type) for v in sp.possible_values) if m]
            if len(spans) >= 2:
                hits[slot] = (off + min(a for a, _ in spans), off + max(b for _, b in spans))
        if len(hits) > 1:
            own = [s for s in hits if s in spec.intent_slots]
            pool = own or list(hits)
            if len(pool) > 1 and slot_probs:
                pool = [max(pool, key=lambda s: (slot_probs.get(s, 0.0), s))]
            hits = {s: hits[s] for s in pool}
        for slot, span in hits.items():
            out.setdefault(slot, span)
    return sorted(out.items(), key=lambda kv: kv[1])


def _restates_bool(turn: Turn, spec: WorkflowSpec, profile: CorpusProfile) -> bool:
    """The reply names a yes/no slot the state holds ("free entry: True, good for kids: True")."""
    words = tokens(turn.agent)
    for slot, v in {**turn.state_before, **turn.state_after}.items():
        if slot in spec.slots and spec.slots[slot].value_type == "bool" and str(v).lower() in ("true", "false"):
            kws = bool_keywords(spec, slot, profile)
            if names_keyword(words, kws):
                return True
    return False


def _rule_confirmation(turn: Turn, spec: WorkflowSpec, profile: CorpusProfile) -> Optional[tuple[str, float, Span]]:
    cue = confirmation_cue(turn.agent)
    if cue and cue[0] == "CONFIRM":
        # a confirmation restates what it confirms; "just to verify you tried the code?" names no value
        values = [v for v in {**turn.state_before, **turn.state_after}.values()
                  if v and str(v).strip() and str(v).lower() not in ("true", "false", "dontcare")]
        if not any(find_in_text(v, turn.agent) for v in values) and not _restates_bool(turn, spec, profile):
            cue = (cue[0], min(cue[1], 0.45), cue[2])
    return cue


COMMIT_ACTS = ("CONFIRM", "NOTIFY_SUCCESS")
# the act a reply offering to start an intent carries ("Would you like to reserve a table?"). In the training corpus
# (train + dev), each of 2,632 annotated offers is made while the user's active intent is a search, and offers another
# intent; made in a transactional workflow it can only offer the action under way, which asks the user to approve it
OFFER_INTENT = "OFFER_INTENT"


def _offers_the_action(text: str, probs: dict[str, float], heads: "Heads", floor: float) -> Optional[float]:
    """In a transactional workflow, how surely the reply offers to carry out an action ("Sure! A compact in Phoenix,
    Saturday at 9 am. Shall I book it?"): the act head's OFFER_INTENT probability of the reply, or of its last
    sentence read alone (a restatement before it reads as an offer of results), when one reaches the head's
    threshold and a question of the reply has an offer's form, the agent proposing to act itself
    (``offers_to_act``); else None. Offering the action under way asks the user to approve it (``OFFER_INTENT``).
    The form keeps the head's intent-offer readings of requests ("wanna make a visit?", "Certainly, when would you
    like it?", "Do you have an account preference?": three dev clean turns read as premature without it)."""
    parts = worded_sentences(text)  # "Shall I lock this in? 🔒" ends with its question
    if not any(offers_to_act(p) for p in parts):
        return None
    thr = max(heads.act_threshold.get(OFFER_INTENT, 0.5), floor)
    if probs.get(OFFER_INTENT, 0.0) >= thr:
        return probs[OFFER_INTENT]
    if len(parts) > 1 and offers_to_act(parts[-1]):
        p = heads.act_probs(parts[-1]).get(OFFER_INTENT, 0.0)
        if p >= thr:
            return p
    return None


def head_agent_acts(turn: Turn, spec: WorkflowSpec, heads: "Heads", floor: float = 0.5,
                    profile: CorpusProfile = EMPTY_PROFILE) -> list[AgentAct]:
    """Acts from the learned heads, with the keyword rules as high-precision shortcuts beside them.

    CONFIRM / NOTIFY_SUCCESS: the act head's calibrated probability, kept at or above its dev-chosen threshold
    (and the extraction floor). REQUEST: every slot of the workflow's schema is scored against each question
    sentence of the reply by the slot head, kept at or above its threshold. A rule cue that the heads do not
    confirm is kept with its rule confidence (``source="rule"``).
    """
    from sage_core.evaluator.text.heads import request_slots, single_thread_blas
    acts: list[AgentAct] = []
    slots = request_slots(spec)
    with single_thread_blas():
        probs = heads.act_probs(turn.agent)
        requested = heads.requested(turn.agent, slots)
    for act in COMMIT_ACTS:
        p = probs.get(act, 0.0)
        if p >= max(heads.act_threshold.get(act, 0.5), floor):
            acts.append(AgentAct(act, None, None, p, source="head"))
    if not acts:  # a confirmation cue is the more specific evidence: read before an offer to act
        cue = _rule_confirmation(turn, spec, profile)
        if cue and cue[1] >= floor:
            acts.append(AgentAct(cue[0], None, None, cue[1], source="rule"))
    if not acts and spec.is_transactional:
        offer = _offers_the_action(turn.agent, probs, heads, floor)
        if offer is not None:
            acts.append(AgentAct("CONFIRM", None, None, offer, source="head"))
    thr = max(heads.slot_threshold, floor)
    known = {**turn.state_before, **turn.state_after}
    # a reply that states the slot's value is not asking for it ("4 tickets in Philadelphia: do you confirm?" does
    # not request the city): the rule the keyword extractor applies per sentence (``requested_slots``)
    found = {s: p for s, p in requested.items() if p >= thr and not states_value(turn.agent, known.get(s))}
    for s in sorted(found, key=lambda k: (-found[k], k)):
        acts.append(AgentAct("REQUEST", s, None, found[s], source="head"))
    if KIND_MATCH_CONFIDENCE >= floor:
        with single_thread_blas():
            matched = heads.kind_matched(turn.agent, slots, KIND_MATCH_MIN)
        for s in sorted(matched):
            if s not in found and not states_value(turn.agent, known.get(s)):
                found[s] = KIND_MATCH_CONFIDENCE
                acts.append(AgentAct("REQUEST", s, None, KIND_MATCH_CONFIDENCE, source="head"))
    wrong_end = _other_end_slots(turn.agent, spec)
    keyword_rule = probs.get("REQUEST", 0.0) >= RULE_REQUEST_MIN_ACT
    for slot, conf, _ in requested_slots(turn.agent, spec, known, profile) if keyword_rule else ():
        if conf >= floor and slot not in found and conf >= RULE_REQUEST_SHORTCUT and slot not in wrong_end:
            found[slot] = conf
            acts.append(AgentAct("REQUEST", slot, None, conf, source="rule"))
    proposals = _add_rule_requests(acts, turn, spec, floor, requested, heads)
    return _proposals_are_not_confirmations(_no_offered_requests(acts, turn, spec), turn, spec, heads, proposals)


def _proposals_are_not_confirmations(acts: list[AgentAct], turn: Turn, spec: WorkflowSpec,
                                     heads: Optional["Heads"] = None,
                                     proposals: Optional[list[tuple[str, Span]]] = None) -> list[AgentAct]:
    """Drop CONFIRM from a reply whose question proposes a value for a slot that is still empty ("Are you leaving
    March 5th?", "Will this be on March 9th?", ``proposal_requests``): it asks for that slot, while a confirmation
    restates values the state holds. The act head reads such questions as confirmations (they restate a value);
    the training corpus annotates them as requests. Dev, all 18,124 clean turns, text-only: 7 of 24 premature-
    confirmation flags were such questions; natural dev slices: no injected confirmation is one. ``proposals``:
    ``proposal_requests`` of this reply when the caller has them already."""
    if not any(a.act == "CONFIRM" for a in acts):
        return acts
    if not (proposals if proposals is not None else proposal_requests(turn, spec, heads)):
        return acts
    return [a for a in acts if a.act != "CONFIRM"]


def _other_end_slots(text: str, spec: WorkflowSpec) -> set[str]:
    """Slots of the other end of the trip than the one the reply asks about ("Where are you going from?" does not ask
    for the destination, whatever "going" suggests to a keyword rule); empty unless the schema has both ends."""
    fit = answer_fit(text or "", [(s, spec.slots[s].description) for s in spec.slots])
    return {s for s, other in zip(spec.slots, fit.other_end()) if other}


def _add_rule_requests(acts: list[AgentAct], turn: Turn, spec: WorkflowSpec, floor: float,
                       slot_probs: Optional[dict[str, float]] = None, heads: Optional["Heads"] = None
                       ) -> Optional[list[tuple[str, Span]]]:
    """REQUEST acts of alternative questions (``choice_question_slots``), then of value proposals
    (``proposal_requests``, ``context_proposals``), for slots no act of ``acts`` requests yet, at each rule's
    confidence. Returns the value proposals it read (None when their confidence is below the floor), for
    ``_proposals_are_not_confirmations``."""
    have = {a.slot for a in acts if a.act == "REQUEST"}
    known = {**turn.state_before, **turn.state_after}

    def add(found: list[tuple[str, Span]], confidence: float) -> None:
        for slot, _ in found:
            if slot not in have and not states_value(turn.agent, known.get(slot)):
                have.add(slot)
                acts.append(AgentAct("REQUEST", slot, None, confidence, source="rule"))

    if CHOICE_QUESTION_CONFIDENCE >= floor:
        add(choice_question_slots(turn.agent, spec, slot_probs), CHOICE_QUESTION_CONFIDENCE)
    if PROPOSAL_REQUEST_CONFIDENCE < floor:
        return None
    proposals = proposal_requests(turn, spec, heads)
    add(proposals, PROPOSAL_REQUEST_CONFIDENCE)
    if CONTEXT_PROPOSAL_CONFIDENCE >= floor:
        named = context_proposals(turn, spec, heads)
        add(named, CONTEXT_PROPOSAL_CONFIDENCE)
        proposals = proposals + named
    return proposals


# a question proposing one date or time for an open slot asks for that slot ("Would you like the car from March 7th?",
# "Is the departure day March 12th?"); the training corpus annotates these as REQUEST with the value (its dev split:
# 462 such acts, every one of an empty slot). Its confidence is its precision on dev, every turn: 174 of 176 (0.989;
# the two misses name the drop-off date for "get the car on March 7th"), capped at 0.95 like ``EXTRACTION_PRECISION``
PROPOSAL_REQUEST_CONFIDENCE = 0.95
# the same for a name or address the dialogue has seen ("Are you picking it up in Las Vegas?", ``context_proposals``):
# dev, every turn, with heads: 38 of 38 annotated as REQUEST of the slot chosen (32 of them found by nothing else),
# none in a reply annotated as CONFIRM; capped at 0.95
CONTEXT_PROPOSAL_CONFIDENCE = 0.95
_NOW_WORDS = frozenset({"today", "tonight", "now"})  # "Anything else today?" proposes no date
_NOT_PROPOSING = ("OFFER", "REQ_MORE")
_OFFERING = ("OFFER", "INFORM_COUNT")  # a reply presenting what was found
_WH_WORD = re.compile(r"\b(?:what|when|where|which|who|whom|how)\b", re.I)


_OR_BETWEEN = re.compile(r"^\s*,?\s*or\s*$", re.I)


def _alternatives(sent: str, dates: list, times: list) -> bool:
    """The sentence offers two or more dates, or two or more times, joined by "or" ("On March 12th or March 3rd?"):
    one proposal among alternatives."""
    found = dates if dates and not times else times if times and not dates else []
    spans = sorted(span for _, span in found)
    return len(spans) >= 2 and all(_OR_BETWEEN.match(sent[a[1]:b[0]]) for a, b in zip(spans, spans[1:]))


def proposal_requests(turn: Turn, spec: WorkflowSpec, heads: Optional["Heads"] = None) -> list[tuple[str, Span]]:
    """(slot, span) for each question sentence that names exactly one date or time (or offers several joined by
    "or": "Do you want to depart on March 6th or March 3rd?") and no value the state holds,
    when a requestable slot holding that kind of value is still empty: the agent proposes a value for it. Several
    such slots (pick-up and drop-off date): the one the question's trip end agrees with, else the slot head's
    best pair score, else none."""
    known = {**turn.state_before, **turn.state_after}
    out: list[tuple[str, Span]] = []
    for sent, off in run_on_sentences(turn.agent or ""):
        if not (sent.rstrip().endswith("?") or YESNO_START.search(sent)) or _WH_WORD.search(sent):
            continue  # "What time do you want to leave on March 7th?" asks for the time, it proposes no date
        if any(states_value(sent, v) for v in known.values()):
            continue
        dates = [d for d in iter_dates(sent) if sent[d[1][0]:d[1][1]].strip().lower() not in _NOW_WORDS]
        times = list(iter_times(sent))
        if len(dates) + len(times) != 1 and not _alternatives(sent, dates, times):
            continue
        if heads is not None:
            if _reads_as(heads, sent, _NOT_PROPOSING):
                continue  # an offer of an item ("the bus that leaves at 7:40 am?"), an offer to book, "anything else?"
        kind, span = ("DATE", dates[0][1]) if dates else ("TIME", times[0][1])
        open_slots = [(n, spec.slots[n].description) for n in sorted(spec.slots)
                      if spec.requestable(n) and not str(known.get(n) or "").strip()
                      and kind in slot_kinds(n, spec.slots[n].description)]
        if not open_slots:
            continue
        if len(open_slots) > 1:
            fit = answer_fit(sent, open_slots)
            agree = [slot for slot, (a, _) in zip(open_slots, fit.side_agreement()) if a]
            if len(agree) == 1:
                open_slots = agree
            elif heads is not None:
                z = heads.pair_scores(sent.strip(), open_slots)
                open_slots = [open_slots[max(range(len(z)), key=lambda i: z[i])]]  # the first of equal best
            else:
                continue
        out.append((open_slots[0][0], (off + span[0], off + span[1])))
    return out



_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'&.#-]*")
_NOT_NAME = frozenset({"i", "i'm", "i'll", "i'd", "i've"} | set(MONTHS) | set(WEEKDAYS))


def _names_word(word: str, first: bool) -> bool:
    """A word that marks a name or an address: a number, or a capitalised word that does not open the sentence and
    is not "I", a month or a weekday."""
    w = word.rstrip(".")
    return any(ch.isdigit() for ch in w) or (not first and w[:1].isupper() and w.lower() not in _NOT_NAME)


def _reads_as(heads: "Heads", text: str, acts: tuple[str, ...]) -> bool:
    """The act head reads ``text`` as one of ``acts``, each at its own threshold."""
    probs = heads.act_probs(text.strip())
    return any(probs.get(a, 0.0) >= heads.act_threshold.get(a, 0.5) for a in acts)


def _phrase(words: list[str]) -> str:
    """Words as ``_context_name`` compares them: lower case, no final period, space-delimited at both ends."""
    return " " + " ".join(w.lower().rstrip(".") for w in words) + " "


def _context_name(sent: str, seen: list[str]) -> Optional[Span]:
    """The longest run of words of ``sent`` that an earlier utterance of the dialogue also says, beginning and ending
    with a word that marks a name (``_names_word``) and holding a capitalised one: a name or an address the dialogue
    has seen ("175 Sutter Street", "Zuni Cafe", "Sacramento"); None when there is none. ``seen``: the earlier
    utterances as ``_phrase`` writes them."""
    words = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(sent)]
    marks = [_names_word(w, k == 0) for k, (w, _, _) in enumerate(words)]
    best: Optional[tuple[int, int]] = None
    for i in range(len(words)):
        if not marks[i]:
            continue
        for j in range(len(words), i, -1):
            if best is not None and j - i <= best[1] - best[0]:
                break
            if not marks[j - 1] or not any(marks[k] and not any(ch.isdigit() for ch in words[k][0])
                                           for k in range(i, j)):
                continue
            phrase = _phrase([w for w, _, _ in words[i:j]])
            if any(phrase in h for h in seen):
                best = (i, j)
                break
    if best is None:
        return None
    return words[best[0]][1], words[best[1] - 1][2]


def context_proposals(turn: Turn, spec: WorkflowSpec, heads: Optional["Heads"] = None) -> list[tuple[str, Span]]:
    """(slot, span) for each yes/no question proposing a name or address the dialogue has seen but the state does not
    hold ("Do you want a shared ride to 175 Sutter Street?", "Are you picking it up in Las Vegas?"): the agent asks
    for the open free-text slot of the intent that value fills (an item found is offered, not asked for: the slots
    outside the intent, and replies the act head reads as offering, propose nothing), picked by the slot head's pair
    score when several are open (without heads: only when one is). The dates and times ``proposal_requests`` reads
    are left to it."""
    known = {**turn.state_before, **turn.state_after}
    open_slots = [(n, spec.slots[n].description) for n in sorted(spec.intent_slots)
                  if spec.requestable(n) and not str(known.get(n) or "").strip()
                  and spec.slots[n].value_type == "text" and not spec.slots[n].possible_values]
    out: list[tuple[str, Span]] = []
    if not open_slots:
        return out
    if heads is not None and _reads_as(heads, turn.agent or "", _OFFERING):
        return out  # a found item offered by name ("Would you be interested in China Paradise Restaurant?")
    seen = [_phrase(_WORD.findall(u)) for u in [x.text for x in turn.history or []] + [turn.user or ""] if u]
    for sent, off in run_on_sentences(turn.agent or ""):
        if not (sent.rstrip().endswith("?") or YESNO_START.search(sent)) or _WH_WORD.search(sent):
            continue
        if any(states_value(sent, v) for v in known.values()):
            continue
        span = _context_name(sent, seen)
        if span is None or list(iter_dates(sent[span[0]:span[1]])) or list(iter_times(sent[span[0]:span[1]])):
            continue
        if heads is not None and _reads_as(heads, sent, _NOT_PROPOSING):
            continue
        cands = open_slots
        if len(cands) > 1:
            if heads is None:
                continue
            z = heads.pair_scores(sent.strip(), cands)
            cands = [cands[max(range(len(z)), key=lambda i: z[i])]]
        out.append((cands[0][0], (off + span[0], off + span[1])))
    return out

# a question naming a kind of value exactly one requestable slot holds, when the slot head ranks that slot first but
# under its threshold ("And what time would you like to leave?" at 0.69, "At what time?" at 0.50): a request of it
# from p >= KIND_MATCH_MIN. Dev, every 2nd turn: 45 of 46 such units right at 0.3 (40 / 41 at 0.4); the one
# "wrong" is "What time do you intend to depart?" annotated as the date. Confidence: that precision, capped at 0.95
KIND_MATCH_MIN = 0.3
KIND_MATCH_CONFIDENCE = 0.95


# a keyword request the slot head did not confirm is kept only from this rule confidence up
RULE_REQUEST_SHORTCUT = 0.8  # chosen on dev (every 6th dev turn): P 0.921 / R 0.710 vs 0.910 / 0.727 at 0.75
# ... and only in a reply the act head reads as a request at least this surely: a slot's keyword in an offer ("What do
# you think about the 3 star Aloft Phoenix-Airport hotel?", "... the song Pyramid from album Charice?") or a failure
# notice ("That time was not available, what else would you like me to do?") asks for nothing. Dev, every turn,
# text-only: the shortcut's requests in replies read below 0.1 were 10 false and no true one (the true ones read at
# 0.17 and up); value proposals ("Will you depart on March 4th?", read as confirmations) are not keyword requests
RULE_REQUEST_MIN_ACT = 0.1


def extract_agent_acts(turn: Turn, spec: WorkflowSpec, floor: float = 0.5,
                       profile: CorpusProfile = EMPTY_PROFILE, heads: Optional["Heads"] = None) -> list[AgentAct]:
    """REQUEST and CONFIRM/NOTIFY_SUCCESS acts recovered from the agent reply (rules only when ``heads`` is None)."""
    if heads is not None:
        return head_agent_acts(turn, spec, heads, floor, profile)
    acts: list[AgentAct] = []
    cue = _rule_confirmation(turn, spec, profile)
    if cue and cue[1] >= floor:
        acts.append(AgentAct(cue[0], None, None, cue[1], source="rule"))
    known = {**turn.state_before, **turn.state_after}
    wrong_end = _other_end_slots(turn.agent, spec)
    for slot, conf, _ in requested_slots(turn.agent, spec, known, profile):
        if conf >= floor and slot not in wrong_end:
            acts.append(AgentAct("REQUEST", slot, None, conf, source="rule"))
    proposals = _add_rule_requests(acts, turn, spec, floor)
    return _proposals_are_not_confirmations(_no_offered_requests(acts, turn, spec), turn, spec, proposals=proposals)
