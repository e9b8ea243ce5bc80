"""What a corpus knows that generic code must not: ``CorpusProfile``.

Slot-name hints for run-together names, spoken aliases of categorical values,
the delexicalisation placeholder pattern of system outputs, and a schema
overlay. Loaders attach a profile to the registry they return
(``WorkflowRegistry.profile``); the evaluator receives it from there and never
reads corpus tables from module globals. A user's own spec gets the empty
profile (``CorpusProfile()``), which holds nothing and works everywhere.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

SlotHints = Mapping[str, tuple[tuple[str, float], ...]]


@dataclass(frozen=True, eq=False)
class CorpusProfile:
    """One corpus's lexical knowledge. Identity-hashed, so caches can key on it."""

    name: str = "generic"
    # request hints keyed by the part of a slot name after "<domain>-" ("leaveat" for "train-leaveat"):
    # (phrase, weight) pairs that replace the generic own-token / hint weights for that slot
    slot_hints: SlotHints = field(default_factory=dict)
    # hint keys whose weak words (< 0.8) do not count in a sentence about a time ("departure or arrival time?")
    time_excluded_hints: frozenset[str] = frozenset()
    # a yes/no-shaped question matching this asks for a value ("do you have a price range in mind?")
    value_question: Optional[re.Pattern] = None
    # categorical value (lower-case, cleaned) -> phrases people use for it
    value_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # placeholders of delexicalised system outputs ("[value_area]"): they stand for values, not slot words
    delex_pattern: Optional[re.Pattern] = None
    # applied to a registry loaded for this corpus (in place; returns it); None: nothing to add
    schema_overlay: Optional[Callable[[Any], Any]] = None

    def hint_key(self, slot: str) -> Optional[str]:
        """The ``slot_hints`` key of a slot (``leaveat`` for ``train-leaveat``), or None when it has none."""
        if "-" not in slot or not self.slot_hints:
            return None
        suffix = slot.split("-", 1)[1].lower()
        return suffix if suffix in self.slot_hints else None


EMPTY_PROFILE = CorpusProfile()
