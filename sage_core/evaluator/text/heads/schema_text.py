"""Slots and values as the heads read them: which slots a schema offers, and each slot or value in words
(name and description renderings, value claims)."""
from __future__ import annotations

import re
from typing import Sequence


def schema_slots(spec) -> list[tuple[str, str]]:
    """A workflow's slots as the slot and mention heads score them: (name, description), sorted by name. One order
    for every caller, so the per-schema slot matrix (``Heads._slot_matrix``) is built once and shared."""
    return [(s, spec.slots[s].description) for s in sorted(spec.slots)]


def request_slots(spec) -> list[tuple[str, str]]:
    """The slots the slot head scores a request against: ``schema_slots`` less those no workflow of the service takes
    from the user (``WorkflowSpec.user_slots``), which no agent asks for."""
    return [(s, d) for s, d in schema_slots(spec) if spec.requestable(s)]


def slot_text(name: str, description: str) -> str:
    """How a slot is put to the encoder: its name in words and its description."""
    words = re.sub(r"[_\-]+", " ", name).strip()
    desc = (description or "").strip()
    return f"{words}: {desc}" if desc else words


# how a slot is put to the slot head: its name and description, its description alone, its name alone, varied 6 : 2 : 2
# in training (``science.heads.train``); a sentence's pair score is the mean of the three under the same weights, so a
# reworded name or description moves it less (dev, requested slots: recall 0.896 -> 0.901 at precision 0.948)
SLOT_RENDERING_WEIGHTS = (0.6, 0.2, 0.2)


def slot_renderings(name: str, description: str) -> list[str]:
    """The slot's texts in the order of ``SLOT_RENDERING_WEIGHTS``: name with description, description alone (the
    name when there is none), name alone."""
    return [slot_text(name, description), slot_text("", description) if description else slot_text(name, ""),
            slot_text(name, "")]


def slot_match_texts(name: str, description: str) -> list[str]:
    """The slot's texts the token-level match (``features.token_matches``) is averaged over: its name alone and its
    description alone (the name again when there is none), as ``slot_renderings`` writes them (the description
    after ": ", as the heads were fitted). Name and description together would let the longer one decide; each alone
    says in its own words what the question must ask for."""
    r = slot_renderings(name, description)
    return [r[2], r[1]]


VALUE_WORDS = {"true": "yes", "false": "no"}


def value_claim(slot_name: str, description: str, value: str) -> str:
    """How the value-support head reads "slot = value": the slot in words and the value ("yes" / "no" for a
    yes/no slot), e.g. "good for kids: whether the attraction is good for kids = yes"."""
    v = VALUE_WORDS.get(str(value).strip().lower(), str(value).strip())
    return f"{slot_text(slot_name, description)} = {v}"


def value_candidates(value: str, possible: Sequence[str], value_type: str) -> list[str]:
    """The values the written one competes with: yes / no for a yes/no slot, else the slot's possible values;
    the written value first (added when the schema does not list it)."""
    pool = ["True", "False"] if value_type == "bool" else list(possible)
    key = str(value).strip().lower()
    return [str(value)] + [c for c in pool if str(c).strip().lower() != key]
