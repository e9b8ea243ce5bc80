"""What SAGE adds to the MultiWOZ 2.2 schema so its workflows can be checked.

``schema_2.2.json`` lists no required slots for any intent, so the outcome
predicate O always holds and premature confirmation could never fire. The
booking overlay (documented in ``sage_core.corpora.multiwoz.loader``) is the MultiWOZ
profile's schema overlay, applied by ``sage_core.corpora.schemas.load_schema``, so every
caller that loads the schema sees the same workflows.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sage_core.specs.workflow import WorkflowRegistry

DOMAINS = ("hotel", "train", "attraction", "restaurant", "hospital", "taxi", "bus", "police")

# what a MultiWOZ booking needs before the agent may confirm it (see the module docstring)
BOOKING_REQUIRED: dict[str, tuple[str, ...]] = {
    "restaurant:book_restaurant": ("restaurant-bookday", "restaurant-bookpeople", "restaurant-booktime"),
    "hotel:book_hotel": ("hotel-bookday", "hotel-bookpeople", "hotel-bookstay"),
    "train:book_train": ("train-bookpeople",),
    "taxi:book_taxi": ("taxi-departure", "taxi-destination"),
}
OVERLAY_SOURCE = "multiwoz booking overlay"


def is_multiwoz_registry(registry: WorkflowRegistry) -> bool:
    """Every service is a MultiWOZ domain and every slot is named ``<domain>-<slot>`` (MultiWOZ 2.2)."""
    svcs = registry.services()
    return bool(svcs) and all(s in DOMAINS for s in svcs) and all(
        name.startswith(spec.service + "-") for spec in registry for name in spec.slots)


def apply_booking_overlay(registry: WorkflowRegistry) -> WorkflowRegistry:
    """Give MultiWOZ 2.2's booking intents the required slots a booking needs (in place; returns it).

    Does nothing unless ``is_multiwoz_registry``; leaves any intent alone that
    already has required slots or lacks one of the slots. Idempotent.
    """
    if not is_multiwoz_registry(registry):
        return registry
    for wid, slots in BOOKING_REQUIRED.items():
        spec = registry.specs.get(wid)
        if spec is None or spec.required or not all(s in spec.slots for s in slots):
            continue
        spec.required = list(slots)
        spec.optional = {k: v for k, v in spec.optional.items() if k not in slots}
        if OVERLAY_SOURCE not in spec.source:
            spec.source = f"{spec.source} + {OVERLAY_SOURCE}" if spec.source else OVERLAY_SOURCE
    return registry
