"""Sentence segmentation and the sentence-level questions extractors ask (is this mention
inside a question? which sentence holds this span?)."""
from __future__ import annotations

import re
from typing import Optional

from sage_core.data.types import Turn
from sage_core.evaluator.text.lexicon import (ABOUT_IT, ABOUT_NAMED, ABOUT_OFFER, IF_CLAUSE, PERMISSION, QUESTION_FORM,
                                              Span)

# a sentence ends at ".", "!" or "?", or at a line break: an LLM agent's reply lays out a summary as lines or a list
# ("- Date: Friday\n- Time: 3 pm\n\nShall I book it?"), and each line is a sentence of its own
_SENT_RE = re.compile(r"[^.!?\n]*[.!?]?")


def sentences(text: str) -> list[tuple[str, int]]:
    """(sentence, start offset) pairs; a question mark ends a sentence, and so does a line break."""
    out = []
    for m in _SENT_RE.finditer(text or ""):
        s = m.group(0)
        if s.strip():
            out.append((s, m.start()))
    return out


_WORD = re.compile(r"\w")


def worded_sentences(text: str) -> list[str]:
    """``sentences``, stripped, without the pieces that hold no word: an emoji or stray marks after the last question
    ("Shall I lock this in? 🔒") is no sentence of its own."""
    return [s.strip() for s, _ in sentences(text) if _WORD.search(s)]


def previous_agent_text(turn: Turn) -> str:
    for u in reversed(turn.history):
        if u.speaker == "agent":
            return u.text
    return ""


def sentence_of(text: str, span: Span) -> str:
    for sent, off in sentences(text):
        if off <= span[0] < off + len(sent):
            return sent
    return ""


def sentence_start(text: str, pos: int) -> int:
    for sent, off in sentences(text):
        if off <= pos < off + len(sent):
            return off
    return 0


def asks_about_offer(text: str, span: Span) -> bool:
    """The mention sits in a question about the offer ("was that for 2 tickets?"), or in one asking whether the offer
    allows it ("Are two checked bags allowed?", "Tell me if one checked bag is allowed"; ``PERMISSION``)."""
    sent = sentence_of(text, span)
    if re.search(r"\b(i|we)\s*('d|would|want|need|'m|am)\b", sent, re.I):
        return False
    asked = sent.rstrip().endswith("?") or is_unmarked_question(sent) or bool(IF_CLAUSE.search(sent))
    return (sent.rstrip().endswith("?") and bool(ABOUT_OFFER.search(sent))) or (asked and bool(PERMISSION.search(sent)))


def is_question(text: str, span: Span) -> bool:
    """The mention sits in a question about the offer ("is it expensive?"), so it asks rather than informs."""
    sent = sentence_of(text, span)
    if re.search(r"\b(i|we)\s*('d|would|want|need|'m|am)\b", sent, re.I):
        return False
    if not sent.rstrip().endswith("?"):
        return bool(QUESTION_FORM.search(sent))
    return bool(ABOUT_IT.search(sent) or ABOUT_NAMED.search(sent) or IF_CLAUSE.search(sent))


# a sentence written without its question mark that is still a question: a wh-word asking ("How many tickets did you
# need.", "Sure, what genre.", "where should i search in"), or an auxiliary before its subject ("Is there a genre you
# prefer.", "Is the ticket in Premium Economy."); not "What a ..." (an exclamation), "When you arrive, ..." (a clause
# of time) or a subjectless "Would be great."
_LEAD = r"^\W*(?:(?:and|so|ok(?:ay)?|sure|great|alright|also|now|then|first|yes|no)\b\W*)*"
_WH_ASKS = (r"(?:(?:what|which|who|whom|whose)\b(?!\s+an?\b)|(?:where|when|how)\s+(?:do|does|did|will|would|should|"
            r"shall|are|is|was|were|can|could|may|might|many|much|long|often|far|soon|early|late)\b)")
UNMARKED_QUESTION = re.compile(
    _LEAD + r"(?:" + _WH_ASKS + r"|"
    r"(?:is|are|was|were|do|does|did|will|would|could|can|should|shall|may)\s+(?:there|you|i|we|it|this|that|"
    r"these|those|the|they|he|she|my|your|our|their|a|an|any)\b)", re.I)


# a request put as a directive or a need ("Please tell me the recipient.", "Let me know your convenient time to eat",
# "I'll need to know in which city to search.", "Can you tell me to whom you want to send the money?"): the sentence
# asks for the value whatever the act head reads in its wrapper. Not where it asks whether ("tell me if ..."), for an
# approval or an opinion ("give me your confirmation to play ...", "tell me what you think"), for more of anything
# ("let me know if there is anything else") or for time ("give me one moment"). Fitted on the train split: 136 of 140
# matching agent sentences sit in a reply that REQUESTs a slot (dev: 182 of 184). A polite modal request ("May I know
# your name?", "Could I get the patient's full name?"), which the act head reads as an offer: train 16 of 17, dev 6 of 7
# (the others offer to buy: "Can I get the tickets?")
DIRECTIVE_REQUEST = re.compile(
    r"\b(?:(?:tell|give|send|provide|specify|share|mention|say|inform)\s+(?:me|us)\b"
    r"(?!\s+(?:a|one)?\s*(?:moment|second|sec|minute|while|chance|call))"
    r"|(?:provide|specify|mention|enter)\s+(?=(?:the|your|which|what|where|when|how|who)\b)"
    r"|let\s+(?:me|us)\s+know\b"
    r"|(?:i|we)(?:'ll|\s+will|'d|\s+would)?\s+(?:first\s+|also\s+|just\s+|still\s+)?(?:need|have|like|want)\s+to\s+know\b"
    r"|(?:i|we)(?:'ll|\s+will)?\s+(?:first\s+|also\s+|just\s+|still\s+)?need\s+(?:the|your)\b"
    r"|(?:may|could|can|might)\s+(?:i|we)\s+(?:please\s+)?(?:have|get|know|ask\s+(?:for|about)|take)\s+"
    r"(?=(?:the|your|a|an|which|what|where|when|how|who|whom)\b))", re.I)
_NOT_DIRECTIVE = re.compile(r"\b(?:else|confirm\w*|(?:your|an?|the)\s+ok(?:ay)?|approval|go-ahead|opinion|think|input|"
                            r"details?|green light|more help|any help)\b", re.I)


def _directive(sentence: str) -> Optional[re.Match]:
    """The wrapper of a directive request (``DIRECTIVE_REQUEST``) that asks for a value, not whether (``IF_CLAUSE``),
    nor for an approval, an opinion, more of anything or a moment (``_NOT_DIRECTIVE``)."""
    m = DIRECTIVE_REQUEST.search(sentence)
    return m if m and not IF_CLAUSE.search(sentence) and not _NOT_DIRECTIVE.search(sentence) else None


def is_directive_request(sentence: str) -> bool:
    """The sentence asks for a value as a directive or a need (``_directive``)."""
    return _directive(sentence) is not None


_OBJECT_LEAD = re.compile(r"^[\s,:]*(?:(?:please|about|first|now|again)\b[\s,]*)*", re.I)


def directive_object(sentence: str) -> Optional[str]:
    """What a directive request asks for, as a question: "Please tell me the number of bedrooms you need." -> "the
    number of bedrooms you need?" (the wrapper read as an intent offer or a statement, and diluting the slot in the
    sentence's embedding); None when the sentence is no directive or asks for nothing after it."""
    m = _directive(sentence)
    if m is None:
        return None
    obj = _OBJECT_LEAD.sub("", sentence[m.end():]).strip().rstrip(".!?, ").strip()
    return obj + "?" if obj else None


# a yes/no question in which the agent proposes to act itself: "Shall I book it?", "Can we go ahead?", "Do you want me
# to reserve it?", "Okay for me to submit it?". Not "Do you have a preference?" (the user acts) or a wh-question
AGENT_OFFER_FORM = re.compile(_LEAD + r"(?:(?:shall|should|can|could|may)\s+(?:i|we)\b|(?:do|would)\s+you\s+(?:want|like)\s+"
                              r"(?:me|us)\s+to\b|(?:want|ready\s+for)\s+(?:me|us)\s+to\b|(?:is\s+it\s+)?ok(?:ay)?\s+"
                              r"(?:if\s+(?:i|we)|for\s+(?:me|us)\s+to)\b)", re.I)


def offers_to_act(sentence: str) -> bool:
    """The sentence is a question in which the agent proposes to act (``AGENT_OFFER_FORM``), not a request for a
    value put politely ("Could I get your name?", ``is_directive_request``)."""
    s = sentence.strip()
    return s.endswith("?") and bool(AGENT_OFFER_FORM.match(s)) and not is_directive_request(s)


# a question opening with a wh-word (after interjections and a preposition: "To whom do you want to send the
# money?") asks for a value: it cannot be a yes/no intent offer or confirmation, whatever its words share with one
# ("... do you want to send the money" read as "Do you want to send money?"); "How about ...?" / "What about ...?"
# offer and "What else ...?" asks for more
WH_OPENING = re.compile(_LEAD + r"(?:(?:to|from|for|with|at|on|in|by)\s+)?(?:who|whom|whose|what|which|where|when|how)\b"
                        r"(?!\s+(?:about|else)\b)", re.I)


def opens_with_wh(sentence: str) -> bool:
    """The sentence opens with a wh-word that asks (``WH_OPENING``)."""
    return bool(WH_OPENING.match(sentence))


def asks_without_mark(sentence: str) -> bool:
    """The sentence asks though it has no question mark: a question written without it (``is_unmarked_question``) or
    a directive request (``is_directive_request``)."""
    return is_unmarked_question(sentence) or is_directive_request(sentence)


def is_unmarked_question(sentence: str) -> bool:
    """A question written without a question mark (``UNMARKED_QUESTION``)."""
    s = sentence.strip()
    return bool(s) and not s.endswith("?") and bool(UNMARKED_QUESTION.match(s))


def marked_question(sentence: str) -> Optional[str]:
    """The sentence as a question with its mark: as written when it ends in "?", with the mark put back when it is
    a question written without it ("Is the ticket in Premium Economy." -> "... Economy?"); None for no question.
    The heads see questions in this one form, in training and at inference."""
    s = sentence.strip()
    if s.endswith("?"):
        return s
    return s.rstrip(".!") + "?" if is_unmarked_question(s) else None


# where a reply written without any sentence mark starts its next question: a wh-word that asks (as in
# ``UNMARKED_QUESTION``), or an auxiliary before its subject after three words or more, none of the last four a wh-word
# ("sure i can help with that where are you leaving from", "i found 3 flights do you want the first one", "which city
# should i search in do you have a cuisine in mind"); never inside "what kind of food are you looking for"
_RUN_ON_WH = re.compile(r"\b" + _WH_ASKS, re.I)
_RUN_ON_AUX = re.compile(r"\b(?:is|are|was|were|do|does|did|will|would|could|can|should|shall|may)\s+(?:there|you|we|"
                         r"it|this|that|they|i)\b", re.I)
SENTENCE_MARK = re.compile(r"[.!?]")
_TRAILING_CONJ = re.compile(r"\b(?:and|or|also|so|then)\s*,?\s*$", re.I)
_WH_WORD = re.compile(r"\b(?:what|which|who|whom|whose|where|when|how)\b", re.I)
# a relative clause, no new question: a relative pronoun right after a name ("... including Beth Kane who is a Family
# Counselor", "... at Sunnyvale where they serve ...") or one that goes on "is a ..." ("a dentist who is a ...")
_RELATIVE = re.compile(r"(?:who|whom|whose|which|where)\b", re.I)
_RELATIVE_IS_A = re.compile(r"(?:who|which)\s+(?:is|are|was|were|has|have|had)\s+an?\b", re.I)
_NOT_A_NAME = frozenset({"I", "OK", "Ok", "Okay", "Sure", "Great", "Alright", "Yes", "No", "So", "Now", "Then", "Also",
                         "And", "First", "Thanks", "Hi", "Hello"})


def _relative_clause(head: str, rest: str) -> bool:
    """The wh-word opening ``rest`` opens a relative clause of ``head``'s last noun, not a question (``_RELATIVE``)."""
    if not _RELATIVE.match(rest):
        return False
    words = head.split()
    after_name = len(words) > 1 and words[-1][:1].isupper() and words[-1] not in _NOT_A_NAME
    return after_name or bool(_RELATIVE_IS_A.match(rest))


def run_on_sentences(text: str) -> list[tuple[str, int]]:
    """``sentences``, except that a text without any ".", "!" or "?" (a transcript, a chat written without marks) is
    cut before each question it runs into (``_RUN_ON_WH``, ``_RUN_ON_AUX``): "ok i can help with that where are
    you leaving from and when" -> "ok i can help with that", "where are you leaving from and when"; never before a
    relative clause (``_relative_clause``)."""
    text = text or ""
    if SENTENCE_MARK.search(text) or "\n" in text:
        return sentences(text)
    cuts = [0]
    for m in sorted([*_RUN_ON_WH.finditer(text), *_RUN_ON_AUX.finditer(text)], key=lambda m: m.start()):
        head = text[cuts[-1]:m.start()]
        if m.start() <= cuts[-1] or not head.strip():
            continue
        if m.re is _RUN_ON_AUX and (len(head.split()) < 3 or _WH_WORD.search(" ".join(head.split()[-4:]))):
            continue
        if m.re is _RUN_ON_WH and _relative_clause(head, text[m.start():]):
            continue
        conj = _TRAILING_CONJ.search(head)  # "... will be going and what time ...": the "and" opens the next one
        cuts.append(m.start() - (len(head) - conj.start()) if conj and conj.start() > 0 else m.start())
    return [(text[a:b], a) for a, b in zip(cuts, cuts[1:] + [len(text)]) if text[a:b].strip()]


# a relative clause after a name, opened by a relative pronoun and a verb ("How about Burdge Sarah, who is also a
# psychologist in San Jose?", "... Fremont Street Experience, which is a Shopping Area?"): it describes what is
# offered, and asks nothing though it opens with a wh-word and carries the sentence's question mark. Train + dev
# replies: 158 such parts after a comma naming no second person, none in a reply that requests a slot (while "who is
# the recipient?", "Who will I send the transfer to?", "which one do you like?" and "which would you prefer?" ask)
_RELATIVE_OPENING = re.compile(r"(?:who|whom|whose|which)\s+(?:is|are|was|were|has|have|had|also|can|could|will|would|"
                               r"may|might|does|do|did|offers|serves|specializes|provides|includes|features)\b", re.I)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves|u)\b", re.I)


def is_relative_clause(part: str, sentence: str) -> bool:
    """``part`` of ``sentence`` is a relative clause describing what the sentence names (``_RELATIVE_OPENING``): it
    follows a comma, opens with a relative pronoun and a verb, and names no second person."""
    bare = part.strip().rstrip("?.!").strip()
    return bool(bare) and bool(_RELATIVE_OPENING.match(bare)) and not _SECOND_PERSON.search(bare) \
        and re.search(r",\s*" + re.escape(bare), sentence) is not None


def asks_by_form(part: str) -> bool:
    """A part of a sentence is a question by its own form: it opens with an asking wh-word ("what city?") or an
    auxiliary before its subject ("do you need a car?"), or it is a directive request. Not a clause that only
    inherited its sentence's question mark ("There are 3 restaurants you may like?" of "There are 3 restaurants you
    may like, how about Pasta Primavera Cafe?")."""
    bare = part.strip().rstrip("?").strip()
    return opens_with_wh(bare) or asks_without_mark(bare)
