"""Audit of hand-written lexicon entries against SGD train + dev: does each entry fire correctly there?

Every rule, lexicon entry and value alias of the text extractor was written
while SGD test was the only SGD split on disk, so each one was read off test.
The protocol (docs/benchmarks.md) keeps an entry only if train + dev support
it. This module measures that support from the raw SGD annotations, never
from test:

- a *value phrase* (value alias, synonym, number word, don't-care phrase) fires
  in a user turn whose tokens contain the phrase and whose service could take
  the value; it fires *correctly* when the user's acts in that turn give the
  canonical value (SGD ``canonical_values``), *wrongly* otherwise;
- a *request hint* (slot-name token -> words used when asking) fires in an
  agent question sentence containing the words, in a service with a slot
  named by the token; correctly when the agent REQUESTs such a slot;
- a *commit cue* (confirmation / success regex) fires on an agent reply it
  matches; correctly when the reply carries the cue's act.

Decision rule (fixed before measuring): keep an entry when it fires
correctly at least ``MIN_CORRECT`` times and its precision (correct / fired)
is at least ``MIN_PRECISION``; otherwise drop it.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Sequence

MIN_CORRECT = 3
MIN_PRECISION = 0.6
_Q_SENT = re.compile(r"[^.!?]*\?")


@dataclass
class EntryAudit:
    table: str
    key: str  # canonical value / slot token / act
    entry: str  # the phrase or regex
    fired: int = 0
    correct: int = 0

    @property
    def precision(self) -> float:
        return self.correct / self.fired if self.fired else float("nan")

    @property
    def keep(self) -> bool:
        return self.correct >= MIN_CORRECT and self.precision >= MIN_PRECISION

    def as_row(self) -> dict:
        return {"table": self.table, "key": self.key, "entry": self.entry, "fired": self.fired,
                "correct": self.correct, "precision": self.precision, "keep": self.keep}


@dataclass
class SgdTurn:
    """One raw SGD utterance with what the annotation says about it."""

    speaker: str  # USER | SYSTEM
    text: str
    services: tuple[str, ...]
    acts: tuple[tuple[str, str, tuple[str, ...]], ...]  # (act, slot, canonical values lower-cased)
    alternatives: tuple[tuple[str, ...], ...] = ()  # state value lists with more than one surface form


class SplitData:
    """The raw utterances and schemas of some SGD splits (train/dev for the protocol)."""

    def __init__(self, split_dirs: Sequence[Path]):
        self.turns: list[SgdTurn] = []
        self.slots: dict[str, dict[str, list[str]]] = {}  # service -> slot -> possible values (lower)
        for d in split_dirs:
            for svc in json.loads((Path(d) / "schema.json").read_text()):
                self.slots.setdefault(svc["service_name"], {
                    s["name"]: [v.lower() for v in s.get("possible_values") or []] for s in svc["slots"]})
            for f in sorted(Path(d).glob("dialogues_*.json")):
                for dlg in json.loads(f.read_text()):
                    for t in dlg["turns"]:
                        acts = tuple((a["act"], a.get("slot") or "",
                                      tuple(str(v).lower() for v in (a.get("canonical_values") or [])))
                                     for fr in t["frames"] for a in fr.get("actions", []))
                        alts = tuple(tuple(v.lower() for v in vals) for fr in t["frames"]
                                     for vals in ((fr.get("state") or {}).get("slot_values") or {}).values()
                                     if len(vals) > 1)
                        self.turns.append(SgdTurn(t["speaker"], t["utterance"],
                                                  tuple(fr["service"] for fr in t["frames"]), acts, alts))

    def user(self) -> Iterator[SgdTurn]:
        return (t for t in self.turns if t.speaker == "USER")

    def system(self) -> Iterator[SgdTurn]:
        return (t for t in self.turns if t.speaker == "SYSTEM")


def _contains(words: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return n > 0 and any(words[i:i + n] == phrase for i in range(len(words) - n + 1))


def audit_value_phrases(data: SplitData, table: str, entries: Iterable[tuple[str, str]],
                        tokens: Callable[[str], list[str]],
                        could_take: Callable[[SgdTurn, str], bool]) -> list[EntryAudit]:
    """(canonical, phrase) entries: fired = user turns with the phrase where ``could_take(turn, canonical)``;
    correct = those whose acts give the canonical value."""
    entries = list(entries)
    out = [EntryAudit(table, c, p) for c, p in entries]
    phrases = [tokens(p) for _, p in entries]
    for t in data.user():
        words = tokens(t.text)
        given = {v for _, _, vals in t.acts for v in vals}
        for a, ph in zip(out, phrases):
            if _contains(words, ph) and could_take(t, a.key):
                a.fired += 1
                a.correct += a.key.lower() in given
    return out


def categorical_taker(data: SplitData) -> Callable[[SgdTurn, str], bool]:
    """A turn could take a categorical value when one of its services has a slot listing it."""
    by_value: dict[str, set[str]] = defaultdict(set)
    for svc, slots in data.slots.items():
        for vals in slots.values():
            for v in vals:
                by_value[v].add(svc)
    return lambda t, canon: bool(by_value.get(canon.lower(), set()) & set(t.services))


def numeric_taker(data: SplitData) -> Callable[[SgdTurn, str], bool]:
    """A turn could take a number when one of its services has a slot whose possible values are all digits."""
    numeric = {svc for svc, slots in data.slots.items() if any(v and all(x.isdigit() for x in v)
                                                               for v in slots.values())}
    return lambda t, canon: bool(numeric & set(t.services))


def any_taker(t: SgdTurn, canon: str) -> bool:
    return True


def audit_synonyms(data: SplitData, table: str, entries: Iterable[tuple[str, str]],
                   tokens: Callable[[str], list[str]], clean: Callable[[str], str]) -> list[EntryAudit]:
    """(canonical, variant) pairs of free-text values: fired = SGD state value lists (several surface
    forms of one value) holding the variant; correct = another form in the list cleans to the canonical."""
    entries = list(entries)
    out = [EntryAudit(table, c, p) for c, p in entries]
    for t in data.user():
        for alts in t.alternatives:
            toks = [" ".join(tokens(v)) for v in alts]
            for a in out:
                if a.entry in toks:
                    a.fired += 1
                    a.correct += any(clean(v) == a.key for v, tk in zip(alts, toks) if tk != a.entry)
    return out


def audit_request_hints(data: SplitData, table: str, entries: Iterable[tuple[str, str]],
                        tokens: Callable[[str], list[str]]) -> list[EntryAudit]:
    """(slot-name token, hint phrase): fired = agent question sentences with the phrase in a service
    having a slot named by the token; correct = the reply REQUESTs such a slot."""
    entries = list(entries)
    out = [EntryAudit(table, k, p) for k, p in entries]
    phrases = [tokens(p) for _, p in entries]
    slot_tokens = {svc: {s: set(tokens(s.replace("_", " "))) for s in slots} for svc, slots in data.slots.items()}
    for t in data.system():
        qwords = [tokens(s) for s in _Q_SENT.findall(t.text)]
        if not qwords:
            continue
        requested = {slot for act, slot, _ in t.acts if act == "REQUEST"}
        for a, ph in zip(out, phrases):
            slots = {s for svc in t.services for s, toks in slot_tokens.get(svc, {}).items() if a.key in toks}
            if slots and any(_contains(w, ph) for w in qwords):
                a.fired += 1
                a.correct += bool(slots & requested)
    return out


def audit_commit_cues(data: SplitData, table: str, cues: Iterable[tuple[str, str]]) -> list[EntryAudit]:
    """(regex, act): fired = agent replies the regex matches; correct = the reply carries that act."""
    cues = list(cues)
    out = [EntryAudit(table, act, pat) for pat, act in cues]
    res = [re.compile(p, re.I) for p, _ in cues]
    for t in data.system():
        acts = {a for a, _, _ in t.acts}
        for a, r in zip(out, res):
            if r.search(t.text):
                a.fired += 1
                a.correct += a.key in acts
    return out


__all__ = ["EntryAudit", "SplitData", "audit_value_phrases", "audit_synonyms", "audit_request_hints", "audit_commit_cues",
           "categorical_taker", "numeric_taker", "any_taker", "MIN_CORRECT", "MIN_PRECISION"]
