"""Value aliases mined from SGD train, checked on dev: the words users put for a categorical value they never name
("a small car" for Compact, "something affordable" for moderate, "a match" for Sports).

Why mined: hand-written aliases were read off the test files (the protocol audit dropped them); the value head on
the frozen encoder cannot tell "small" from "large" ("large car" scores Compact 0.89). Counting which words come
with a value the state takes while the user never says it is a plain fit on train, kept only where dev agrees.

An event is a categorical slot the state sets for the first time in a turn (no earlier value, not "dontcare", not the
schema's default, which a confirmation writes) whose value occurs neither in u_t nor in the two utterances before it. A candidate is a content word (three letters or
more, not a stop word) or a two-word sequence with one, of u_t. A candidate becomes an alias of a value when, on train:
it comes with the value in at least ``MIN_COUNT`` events; of the turns where a slot with that value is open and
unnamed and the candidate occurs, at least ``MIN_PRECISION`` set it (precision); and of the events of that slot
with the candidate, at least ``MIN_PRECISION`` set this value (specificity: "instead" comes with every value). A
two-word alias holding a one-word alias of the same value is dropped. On dev an alias is dropped when it fires
``DEV_MIN_FIRINGS`` times or more at a precision under ``DEV_MIN_PRECISION`` (the lexicon audit's bar).

``python -m sage_core mine-aliases --data ../shared/data`` rewrites ``corpora/sgd/mined_aliases.json``, byte for
byte, from train and dev (test is never read).
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Iterable, Optional

MIN_COUNT = 5
MIN_PRECISION = 0.8
DEV_MIN_FIRINGS = 3
DEV_MIN_PRECISION = 0.6
HISTORY_UTTERANCES = 2
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "corpora" / "sgd" / "mined_aliases.json"
# words that say nothing about a value: scikit-learn's English stop words, the request verbs of every turn, and the
# words of confirming, booking and changing, which come with the defaults and changes the corpus writes on a "yes"
# ("sounds good, reserve it" sets a car type nobody named), not with a value
_EXTRA_STOP = {"want", "need", "like", "please", "find", "looking", "look", "book", "im", "id", "ill", "thanks",
               "thank", "okay", "ok", "yes", "yeah", "sure", "great", "good", "fine",
               "sound", "sounds", "correct", "right", "reserve", "reservation", "booking", "confirm", "proceed",
               "perfect", "instead", "change", "changed", "play", "song", "cost"}


def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    return frozenset(ENGLISH_STOP_WORDS) | _EXTRA_STOP


def candidates(text: str, stop: frozenset[str]) -> set[str]:
    """Content words and two-word sequences holding one, of an utterance (normalised tokens)."""
    from sage_core.evaluator.text.normalize import tokens
    toks = tokens(text)

    def content(w: str) -> bool:
        return len(w) >= 3 and w not in stop and not any(c.isdigit() for c in w)

    out = {w for w in toks if content(w)}
    out |= {f"{a} {b}" for a, b in zip(toks, toks[1:]) if (content(a) or content(b))
            and not any(c.isdigit() for c in a + b)}
    return out


def _turn_events(turn, spec):
    """(open unnamed (slot, value) pairs, first-set (slot, value) events) of a turn, categorical values only."""
    from sage_core.evaluator.text.normalize import find_in_text
    near = [turn.user] + [u.text for u in turn.history[-HISTORY_UTTERANCES:]]

    def named(v: str) -> bool:
        return any(find_in_text(v, t, "categorical") for t in near)

    open_pairs, events = [], []
    for slot, sp in spec.slots.items():
        if sp.value_type != "categorical" or str(turn.state_before.get(slot) or "").strip():
            continue
        default = str(spec.optional.get(slot) or "").lower()  # a default is written on a "yes", not said

        def usable(v: str) -> bool:
            return bool(v) and v.lower() not in ("dontcare", default) and not named(v)

        open_pairs.extend((slot, pv) for pv in sp.possible_values if usable(pv))
        v = str(turn.state_after.get(slot) or "")
        if v in sp.possible_values and usable(v):
            events.append((slot, v))
    return open_pairs, events


def _turns(folder: Path):
    from sage_core.corpora import load_corpus
    turns, reg = load_corpus("sgd", str(folder), str(folder / "schema.json"))
    for t in turns:
        spec = reg.get(t.workflow)
        if spec is not None and (t.user or "").strip():
            yield t, spec


def mine(turns: Iterable, stop: Optional[frozenset[str]] = None) -> dict[str, list[str]]:
    """Value (lower case) -> aliases from (turn, spec) pairs of the fitting split (rules in the module docstring)."""
    stop = _stop_words() if stop is None else stop
    pos, occ, slot_pos = Counter(), Counter(), Counter()
    for t, spec in turns:
        open_pairs, events = _turn_events(t, spec)
        if not open_pairs:
            continue
        grams = candidates(t.user, stop)
        for slot, pv in set(open_pairs):
            for g in grams:
                occ[(slot, pv, g)] += 1
        for slot, v in events:
            for g in grams:
                pos[(slot, v, g)] += 1
                slot_pos[(slot, g)] += 1
    by_value: dict[str, set[str]] = {}
    for (slot, v, g), n in sorted(pos.items()):
        if n >= MIN_COUNT and n >= MIN_PRECISION * occ[(slot, v, g)] and n >= MIN_PRECISION * slot_pos[(slot, g)]:
            by_value.setdefault(v.lower(), set()).add(g)
    out = {}
    for v, grams in sorted(by_value.items()):
        words = {g for g in grams if " " not in g}
        kept = sorted(g for g in grams if " " not in g or not any(w in words for w in g.split()))
        if kept:
            out[v] = kept
    return out


def dev_check(aliases: dict[str, list[str]], turns: Iterable) -> dict[tuple[str, str], tuple[int, int]]:
    """(value, alias) -> (firings, correct) on the checking split: the alias in u_t while a slot with the value is
    open and unnamed; correct when the state sets that value there."""
    from sage_core.evaluator.text.normalize import find_in_text
    counts: Counter = Counter()
    for t, spec in turns:
        open_pairs, events = _turn_events(t, spec)
        set_values = {(s, v.lower()) for s, v in events}
        for slot, pv in set(open_pairs):
            for a in aliases.get(pv.lower(), ()):
                if find_in_text(a, t.user, "text"):
                    counts[(pv.lower(), a, "fired")] += 1
                    counts[(pv.lower(), a, "correct")] += (slot, pv.lower()) in set_values
    return {(v, a): (counts[(v, a, "fired")], counts[(v, a, "correct")]) for v, al in aliases.items() for a in al}


def mine_sgd(data: Path, log=print) -> dict:
    """Mine on ``data/sgd/train``, check on ``data/sgd/dev``; the artifact's JSON object."""
    sgd = Path(data) / "sgd"
    mined = mine(_turns(sgd / "train"))
    checks = dev_check(mined, _turns(sgd / "dev"))
    kept: dict[str, list[str]] = {}
    dropped = []
    for v, al in mined.items():
        for a in al:
            fired, correct = checks[(v, a)]
            if fired >= DEV_MIN_FIRINGS and correct < DEV_MIN_PRECISION * fired:
                dropped.append(f"{v}: {a} ({correct}/{fired} on dev)")
            else:
                kept.setdefault(v, []).append(a)
            log(f"{v!r} <- {a!r}: dev {correct}/{fired}")
    return {"format": "sage-value-aliases/1",
            "fitted_on": "SGD train (mined), SGD dev (checked); test never read",
            "rules": {"min_count": MIN_COUNT, "min_precision": MIN_PRECISION, "dev_min_firings": DEV_MIN_FIRINGS,
                      "dev_min_precision": DEV_MIN_PRECISION, "history_utterances": HISTORY_UTTERANCES},
            "dropped_on_dev": dropped, "aliases": kept}


def add_arguments(p) -> None:
    p.add_argument("--data", required=True, help="folder holding sgd/train and sgd/dev (test is never read)")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="where to write the aliases JSON")


def run(args) -> int:
    from sage_core.data.errors import SageInputError
    data = Path(args.data)
    for split in ("train", "dev"):
        if not (data / "sgd" / split / "schema.json").is_file():
            raise SageInputError(f"{data / 'sgd' / split / 'schema.json'}: not found (--data must hold sgd/train "
                                 "and sgd/dev)")
    art = mine_sgd(data)
    Path(args.out).write_text(json.dumps(art, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    n = sum(len(v) for v in art["aliases"].values())
    print(f"wrote {n} aliases of {len(art['aliases'])} values to {args.out}")
    return 0
