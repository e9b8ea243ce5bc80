"""What the user asked the agent to do, in any wording ("cancel my flight", "cancelling", "the
cancellation"), and which writes a policy says must come first."""
from __future__ import annotations

import re
from typing import Any

from sage_core.evaluator.text.lexicon import NEGATION
from sage_core.evaluator.text.sentences import sentences
from sage_core.evaluator.text.normalize import tokens
from sage_core.data.types import Turn
from sage_core.evaluator.tools.context import CALL_RE, REFUSAL_CUE


def phrase_in(phrase: str, text: str) -> bool:
    p = " ".join(tokens(phrase))
    return bool(p) and f" {p} " in " " + " ".join(tokens(text)) + " "


# endings of an inflected or derived form of a request verb ("cancelling", "cancellation", "modifying")
_INFLECTIONS = ("s", "es", "ing", "ling", "ation", "ations", "lation", "lations")
# (no past forms: "I booked it", "cancelled by the airline", "canceled reservations" report, they do not ask)
REQUEST_GAP = 2  # words allowed between two words of a request phrase ("change my *return* flight")
NEGATION_REACH = 3  # a negation this many words before the phrase negates it ("I don't want to cancel")


# an inflected / derived request word after one of these is a noun, which asks for nothing ("my booking", "why the
# cancellation ..."); the policy's own words match as written ("my shipping address")
NOUN_DETERMINERS = frozenset({"the", "a", "an", "my", "your", "our", "his", "her", "their", "this", "that", "its",
                              "original", "previous", "current", "last", "earlier", "existing"})
# the user takes a request back ("I'll hold off on making any changes", "never mind", "let's not proceed")
WITHDRAWAL = re.compile(r"\b(hold off|never ?mind|forget (?:it|about it)|"
                        r"(?:do not|don'?t|not|won'?t|will not) (?:want to |wish to |be able to )?"
                        r"(?:proceed|go ahead|make (?:any|the|these) changes?)|let'?s not|i'?ll pass|"
                        r"(?:keep|leave) (?:it|things|everything|my \w+) (?:as it is|as is|unchanged)|no changes)\b", re.I)


def word_form_of(token: str, word: str) -> bool:
    """``token`` is ``word`` or a present / -ing / -ation form of it (cancel: cancels, cancelling, cancellation;
    change: changes, changing; modify: modifies, modifying, modification)."""
    if token == word:
        return True
    if len(word) < 3:
        return False
    if token.startswith(word) and token[len(word):] in _INFLECTIONS:
        return True
    if word.endswith("e") and token.startswith(word[:-1]) and token[len(word) - 1:] in ("ing", "es", "ation"):
        return True
    return word.endswith("y") and token.startswith(word[:-1]) and token[len(word) - 1:] in (
        "ies", "ying", "ication", "ications")


def request_phrase_in(phrase: str, text: str, nouns_too: bool = False) -> bool:
    """A user asks for something in ``phrase``'s words: each word in order, in any inflected form, with at most
    ``REQUEST_GAP`` other words between two of them ("I'd like to change my return flight" for "change my
    flight", "would cancelling be an option" for "cancel"), not a derived form used as a noun ("my booking"), and
    no negation just before the first word (a negation elsewhere in the sentence, "I don't have the id, but I
    want to cancel", does not count). ``nouns_too``: a preference ("the cheapest") is a noun phrase."""
    want, toks = tokens(phrase), tokens(text)
    if not want:
        return False
    for start, tok in enumerate(toks):
        if not word_form_of(tok, want[0]):
            continue
        pos, ok = start, True
        for w in want[1:]:
            nxt = next((j for j in range(pos + 1, min(len(toks), pos + 2 + REQUEST_GAP)) if word_form_of(toks[j], w)),
                       None)
            if nxt is None:
                ok = False
                break
            pos = nxt
        noun = tok != want[0] and start > 0 and toks[start - 1] in NOUN_DETERMINERS  # "my booking", "the cancellation"
        if ok and (nouns_too or not noun) \
                and not any(NEGATION.fullmatch(t) for t in toks[max(0, start - NEGATION_REACH):start]):
            return True
    return False


def events(turn: Turn) -> list[tuple[str, str]]:
    """(speaker, text) in dialogue order, u_t in its place and this step's reply last."""
    hist = [(u.speaker, u.text) for u in turn.history]
    pos = (turn.meta.get("step") or {}).get("u_t_position", len(hist))
    if turn.user.strip():
        hist.insert(pos, ("user", turn.user))
    if turn.meta["step"]["kind"] == "reply":
        hist.append(("agent", turn.agent))
    return hist


def user_requests(turn: Turn, spec: Any) -> dict[str, tuple[str, bool]]:
    """tool -> (the user's latest sentence asking for it, whether an agent reply after it declines)."""
    found: dict[str, tuple[str, int]] = {}
    ev = events(turn)
    for i, (who, text) in enumerate(ev):
        if who != "user":
            continue
        for sent, _ in sentences(text):
            if WITHDRAWAL.search(sent):
                found.clear()  # every request made so far is taken back; a later one counts again
                continue
            for tool, words in spec.policy.request_words.items():
                if any(request_phrase_in(w, sent) for w in words):
                    found[tool] = (sent.strip(), i)
    out = {}
    for tool, (sent, i) in found.items():
        declined = any(who == "agent" and not CALL_RE.match(t) and REFUSAL_CUE.search(t) for who, t in ev[i + 1:])
        out[tool] = (sent, declined)
    return out


def missing_prerequisites(prereq: list[str], done: set[str]) -> list[str]:
    """The prerequisites (``a|b``: either tool) that no successful call in ``done`` satisfies."""
    return [alt for alt in prereq if not any(t in done for t in alt.split("|"))]
