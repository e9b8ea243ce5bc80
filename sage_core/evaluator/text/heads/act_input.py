"""The reply as the act head's second MLP reads it: the values it names masked (``act_text``).

Which act a reply performs does not depend on the values it names: "How about Delta at 5 pm?" offers whatever the
airline and the hour. Fed only the raw reply, the act head on MiniLM embeddings learned the training domains' names
and numbers as well as the act; with numbers and capitalised name runs replaced by one placeholder each, an MLP reads
the act's wording. The act head averages the logits of one MLP on each (``features.act_logits``). Chosen on the
train / dev splits only (``benchmarks/bench_act_head_domains.py``, docs/benchmarks.md): average precision with whole
train domains held out of the fit rose for every act against the raw MLP alone, and on dev too; the masked MLP alone
gained on held-out domains but lost on dev's pipeline figures.

``train-heads`` and ``Heads`` apply the same function, so the two read the same strings. The other heads see the
raw text: which slot a question asks for, or whether u_t says a value, is about the words masked here.
"""
from __future__ import annotations

import re

NUMBER_PLACEHOLDER = "5"
NAME_PLACEHOLDER = "Smith"
# a number with its separators ("$45.50", "10:30", "1,200"): one placeholder
_NUMBER = re.compile(r"\$?\d(?:[\d,.:]*\d)?")
# a run of capitalised words, joined by the small words names contain ("Bank of America", "Tom and Jerry")
_CAPITALISED_RUN = re.compile(r"\b[A-Z][\w'&-]*(?:\s+(?:of|the|and|de|&)?\s*[A-Z][\w'&-]*)*")
# the pronoun is capitalised without being a name
_PRONOUN_I = re.compile(r"I(?:'[a-z]+)?")


def _mask_run(text: str, m: re.Match) -> str:
    run = m.group(0)
    before = text[:m.start()].rstrip()
    if not before or before[-1] in ".!?":  # a capitalised sentence opener is not (only) a name: keep its first word
        first, _, rest = run.partition(" ")
        return f"{first} {NAME_PLACEHOLDER}" if rest.strip() else first
    if _PRONOUN_I.fullmatch(run):
        return run
    return NAME_PLACEHOLDER


def act_text(text: str) -> str:
    """``text`` with each number and each capitalised name run (not a sentence's first word, not "I") replaced
    by one placeholder: the string the act head embeds."""
    text = _NUMBER.sub(NUMBER_PLACEHOLDER, text)
    return _CAPITALISED_RUN.sub(lambda m: _mask_run(text, m), text)
