"""What the heads score in a text: a reply's request units (question sentences, their clauses, the single
questions of a coordinated pair, a directive's object) and u_t's mention units."""
from __future__ import annotations

import re


from sage_core.evaluator.text.sentences import (asks_without_mark, directive_object, marked_question,
                                               run_on_sentences)


def sentences_of(text: str) -> list[tuple[str, int]]:
    from sage_core.evaluator.text.sentences import sentences
    return sentences(text or "")


def question_sentences(text: str) -> list[str]:
    """The sentences a request can sit in: the questions of the reply, or the whole reply when none is one."""
    qs = [s.strip() for s, _ in sentences_of(text) if s.rstrip().endswith("?") and len(s.strip()) > 1]
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
        sents = [s.strip() for s, _ in sentences_of(text) if len(s.strip()) > 1]
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
    """What the slot head scores in a reply: the sentences a request can sit in, then their parts
    (``request_unit_groups``)."""
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
    for sent, _ in sentences_of(user):
        for unit in [sent.strip()] + clauses(sent):
            if len(unit.split()) >= 2 and unit not in out:
                out.append(unit)
    return out
