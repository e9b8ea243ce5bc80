"""The MultiWOZ corpus profile: request hints for its run-together slot names, the value question
phrasing of its agents, its delexicalisation placeholders, its value aliases and the booking overlay.

Read off MultiWOZ system outputs and the MultiWOZ 2.2 schema (see docs/benchmarks.md for the
review these came from); only registries recognised as MultiWOZ 2.2 get this profile.
"""
from __future__ import annotations

import re

from sage_core.corpora.multiwoz.booking_overlay import apply_booking_overlay
from sage_core.data.profile import CorpusProfile

# MultiWOZ-style slot names ("train-leaveat"): the hint tables above key on SGD
# slot-name tokens, and MultiWOZ names are run together ("leaveat", "bookpeople")
# or shared between the two ends of a trip ("departure" is a place here, but also
# "departure time"). Keyed on the part after "<domain>-"; each entry replaces the
# generic own-token / NAME_HINTS / DIRECTION_HINTS weights for that slot. Only
# names with a hyphen use it, and no SGD / SGD-X slot name has one.
SLOT_HINTS: dict[str, tuple[tuple[str, float], ...]] = {
    "departure": (("departing from", 1.0), ("depart from", 1.0), ("leaving from", 1.0), ("leave from", 1.0),
                  ("departure station", 0.9), ("departure location", 0.9), ("departure point", 0.9),
                  ("starting from", 0.8), ("coming from", 0.8), ("from where", 0.8), ("where from", 0.8),
                  ("pick you up", 0.8), ("picked up", 0.8), ("pick up", 0.7), ("departing", 0.6),
                  ("departure", 0.6), ("origin", 0.6)),
    "destination": (("destination", 1.0), ("where to", 0.8), ("going to", 0.8), ("headed", 0.7), ("heading", 0.7),
                    ("travel to", 0.8), ("traveling to", 0.8), ("travelling to", 0.8), ("go to", 0.7),
                    ("where are you going", 0.9), ("where would you like to go", 0.9), ("drop you off", 0.8),
                    ("arriving at", 0.6), ("where", 0.6)),
    "leaveat": (("departure time", 1.0), ("leaving time", 1.0), ("departure or arrival", 0.9),
                ("arrival or departure", 0.9), ("leave by", 0.8), ("leave after", 0.9),
                ("depart after", 0.9), ("leave", 0.6), ("leaving", 0.6), ("depart", 0.5), ("departure", 0.6),
                ("what time", 0.5), ("when", 0.4)),
    "arriveby": (("arrival time", 1.0), ("arrive by", 1.0), ("departure or arrival", 0.9), ("arrival or departure", 0.9),
                 ("arrive", 0.6), ("arrival", 0.6), ("arriving", 0.6),
                 ("get there", 0.6), ("be there", 0.6), ("what time", 0.5), ("when", 0.4)),
    "bookday": (("what day", 0.8), ("which day", 0.8), ("day", 0.6), ("when", 0.4), ("date", 0.6)),
    "day": (("what day", 0.8), ("which day", 0.8), ("day", 0.6), ("when", 0.4), ("date", 0.6)),
    "bookpeople": (("how many people", 1.0), ("how many tickets", 1.0), ("how many guests", 1.0),
                   ("for how many", 0.9), ("people", 0.6), ("tickets", 0.6), ("guests", 0.6), ("party", 0.6),
                   ("how many", 0.5)),
    "booktime": (("what time", 0.8), ("which time", 0.8), ("time", 0.8), ("when", 0.4)),
    "bookstay": (("how many nights", 1.0), ("how many days", 0.9), ("how long", 0.8), ("nights", 0.8),
                 ("staying", 0.4)),
    "pricerange": (("price range", 1.0), ("price", 0.6), ("budget", 0.8), ("price point", 0.9)),
    "price": (("price", 0.6), ("cost", 0.6), ("how much", 0.5), ("fare", 0.6)),
    "area": (("area", 1.0), ("part of town", 1.0), ("side of town", 1.0), ("part of the city", 1.0),
             ("location", 0.6), ("where", 0.4)),
    "food": (("food", 1.0), ("cuisine", 1.0)),
    "type": (("what type", 0.6), ("what kind", 0.6), ("which type", 0.6), ("kind of", 0.6), ("type", 0.6),
             ("hotel or guesthouse", 1.0), ("guesthouse or hotel", 1.0), ("guesthouse or a hotel", 1.0),
             ("hotel or a guesthouse", 1.0), ("car type", 1.0)),
    "stars": (("stars", 1.0), ("star", 1.0), ("star rating", 1.0), ("rating", 0.6)),
    "internet": (("internet", 1.0), ("wifi", 1.0), ("wi-fi", 1.0)),
    "parking": (("parking", 1.0),),
    "name": (("name", 0.6), ("which one", 0.4)),
    "department": (("department", 1.0),),
    "trainid": (("train id", 1.0), ("which train", 0.8)),
}
# In a sentence about a time ("a preferred departure or arrival time?"), a place
# slot's weak words ("departure") do not count; its phrases ("departing from") do.
TIME_EXCLUDED = {"departure", "destination"}
# yes/no-shaped questions that ask for a value in MultiWOZ agents' phrasing
VALUE_QUESTION = re.compile(r"\b(?:in mind|preference|particular|specific|certain)\b", re.I)
# "[restaurant_name]", "[value_area]": placeholders of delexicalised system outputs
DELEX = re.compile(r"\[[a-z]+(?:_[a-z]+)+\]")
# the spoken aliases of MultiWOZ's own categorical values: the phrases SGD's profile had for them before the
# SGD protocol audit dropped the unsupported ones there (docs/benchmarks.md); kept here unchanged, since no
# MultiWOZ train/dev annotation was used to audit them (the MultiWOZ figures are a no-gold review)
MULTIWOZ_VALUE_ALIASES = {
    "cheap": ("inexpensive", "budget", "affordable"),
    "moderate": ("moderately priced", "mid range", "intermediate priced", "intermediate", "reasonably priced",
                 "not too expensive"),
    "museum": ("museum", "gallery", "exhibit"),
    "park": ("park", "garden"),
    "pricey": ("expensive", "high end", "upscale", "fancy"),
}

MULTIWOZ_PROFILE = CorpusProfile(
    name="multiwoz",
    slot_hints=SLOT_HINTS,
    time_excluded_hints=frozenset(TIME_EXCLUDED),
    value_question=VALUE_QUESTION,
    value_aliases=MULTIWOZ_VALUE_ALIASES,
    delex_pattern=DELEX,
    schema_overlay=apply_booking_overlay,
)
