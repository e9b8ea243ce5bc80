"""Protocol audit: does each hand-written lexicon entry (read off SGD test) fire correctly on SGD train + dev?

Reads only ../shared/data/sgd/train and dev. For the value aliases, synonyms,
number phrases and don't-care phrases of the normaliser and the request hints
and commit cues of the extractor, prints fired / correct / precision and the
decision by the rule in ``sage_core.science.lexicon_audit`` (keep: >= 3 correct
firings and precision >= 0.6). ``--markdown`` prints the table for
docs/benchmarks.md; ``--json`` writes every row.

    python benchmarks/audit_lexicons.py [--markdown] [--json audit.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_core.science.lexicon_audit import (MIN_CORRECT, MIN_PRECISION, SplitData, any_taker, audit_commit_cues,  # noqa: E402
                                     audit_request_hints, audit_synonyms, audit_value_phrases,
                                     categorical_taker, numeric_taker)

BASIC_NUMBERS = set("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                    "sixteen seventeen eighteen nineteen twenty thirty forty fifty".split())


def tables():
    """The lexicon tables as they live in the evaluator today."""
    from sage_core.corpora.sgd.profile import SGD_PROFILE
    from sage_core.evaluator.text import lexicon as extract
    from sage_core.evaluator.text import normalize
    return {
        "VALUE_ALIASES": [(c, p) for c, ps in SGD_PROFILE.value_aliases.items() for p in ps],
        "SYNONYMS": [(b, a) for a, b in normalize.SYNONYMS.items() if a != b],
        "NUMBER_WORDS (phrases)": [(str(n), w) for w, n in normalize.NUMBER_WORDS.items() if w not in BASIC_NUMBERS],
        "DONTCARE_PHRASES": [("dontcare", p) for p in normalize.DONTCARE_PHRASES if p != "dontcare"],  # the value itself
        "NAME_HINTS": [(k, h) for k, hs in extract.NAME_HINTS.items() for h in hs],
        "DIRECTION_HINTS": [(k, h) for k, hs in extract.DIRECTION_HINTS.items() for h in hs],
        "CONFIRM_CUES": [(p, a) for p, a, _ in extract.CONFIRM_CUES],
    }


def run_audit(data: SplitData) -> list:
    from sage_core.evaluator.text.normalize import clean_text, tokens
    t = tables()
    cat = categorical_taker(data)
    rows = []
    rows += audit_value_phrases(data, "VALUE_ALIASES", t["VALUE_ALIASES"], tokens, cat)
    text_syn = [(b, a) for b, a in t["SYNONYMS"] if not cat(_AnyService(data), b)]
    cat_syn = [(b, a) for b, a in t["SYNONYMS"] if cat(_AnyService(data), b)]
    rows += audit_synonyms(data, "SYNONYMS", text_syn, tokens, clean_text)
    rows += audit_value_phrases(data, "SYNONYMS", cat_syn, tokens, cat)
    rows += audit_value_phrases(data, "NUMBER_WORDS (phrases)", t["NUMBER_WORDS (phrases)"], tokens, numeric_taker(data))
    rows += audit_value_phrases(data, "DONTCARE_PHRASES", t["DONTCARE_PHRASES"], tokens, any_taker)
    rows += audit_request_hints(data, "NAME_HINTS", t["NAME_HINTS"], tokens)
    rows += audit_request_hints(data, "DIRECTION_HINTS", t["DIRECTION_HINTS"], tokens)
    rows += audit_commit_cues(data, "CONFIRM_CUES", t["CONFIRM_CUES"])
    return rows


class _AnyService:
    """A pseudo-turn in every service: 'is this value categorical anywhere in the schemas?'."""

    def __init__(self, data):
        self.services = tuple(data.slots)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "sgd"))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    dirs = [Path(args.data) / s for s in ("train", "dev")]
    if not all(d.is_dir() for d in dirs):
        print(f"SGD train/dev not found under {args.data}; nothing to audit")
        return 0
    data = SplitData(dirs)
    rows = run_audit(data)
    print(f"SGD train + dev: {sum(1 for _ in data.user())} user and {sum(1 for _ in data.system())} system "
          f"utterances; keep = >= {MIN_CORRECT} correct firings and precision >= {MIN_PRECISION}")
    by_table = {}
    for r in rows:
        by_table.setdefault(r.table, []).append(r)
    for table, rs in by_table.items():
        kept = sum(r.keep for r in rs)
        print(f"\n### {table}: keep {kept}, drop {len(rs) - kept}")
        if args.markdown:
            print("\n| key | entry | fired | correct | precision | decision |\n|---|---|---|---|---|---|")
        for r in rs:
            p = "n/a" if r.fired == 0 else f"{r.precision:.2f}"
            entry = r.entry if len(r.entry) < 70 else r.entry[:67] + "..."
            if args.markdown:
                entry = entry.replace("|", "\\|")
                print(f"| {r.key} | `{entry}` | {r.fired} | {r.correct} | {p} | {'keep' if r.keep else '**drop**'} |")
            else:
                print(f"  {'keep' if r.keep else 'DROP'}  {r.key:<18} {entry:<40} fired {r.fired:>6} "
                      f"correct {r.correct:>6} P {p}")
    if args.json:
        Path(args.json).write_text(json.dumps([r.as_row() for r in rows], indent=1))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
