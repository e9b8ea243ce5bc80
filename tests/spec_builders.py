"""Slot specs for tests that build their own schemas (our own wording of SGD-like services)."""
from __future__ import annotations

from sage_core.specs.workflow import SlotSpec, infer_value_type


def slot_spec(name: str, desc: str, pv=(), cat=None) -> SlotSpec:
    """A slot with its description and possible values; categorical when it has values (unless ``cat`` says)."""
    cat = bool(pv) if cat is None else cat
    return SlotSpec(name, desc, cat, list(pv), infer_value_type(name, cat, list(pv)))
