"""The SGD corpus profile: how people say SGD's categorical values (value aliases).

SGD's slot names are plain words, so it needs no slot hints; SGD-X renderings of the
schema use the same profile.
"""
from __future__ import annotations

from sage_core.data.profile import CorpusProfile

# How people say some common categorical values (lower-case canonical -> phrases).
VALUE_ALIASES = {
    "pool": ("shared ride", "shared", "carpool", "share a ride", "share the ride", "cheapest"),
    "regular": ("standard", "normal", "ordinary"),
    "luxury": ("fancy", "luxurious", "premium", "high end", "comfortable", "expensive"),
    "theater": ("play", "drama", "broadway", "theatre", "stage show", "show"),
    "music": ("concert", "gig", "band", "live music", "singer", "musical"),
    "debit card": ("checking account", "check card", "debit", "checking"),
    "credit card": ("visa", "mastercard", "master card", "amex", "jcb", "discover", "credit"),
    "app balance": ("balance", "in app", "app cash", "wallet", "app account"),
    "flexible": ("refundable", "fully refundable"),
    "value": ("cheapest", "basic", "non refundable", "economy", "conditionally refundable"), "business": ("first class",),
    "economy": ("coach", "cheapest"), "premium economy": ("economy premium", "economy plus"),
    "pricey": ("expensive", "high end", "upscale", "fancy"), "cheap": ("inexpensive", "budget", "affordable"),
    "moderate": ("moderately priced", "mid range", "intermediate priced", "intermediate", "reasonably priced", "not too expensive"),
    "ultra high end": ("very expensive", "luxury", "upscale"), "3d": ("3 d", "three d"),
    "direct": ("non stop", "nonstop", "direct"), "one stop": ("one stop", "1 stop", "layover"),
    "living room": ("living room", "lounge"), "hatchback": ("small car", "compact"),
    "suv": ("sport utility",), "sedan": ("standard car", "saloon"),
    "psychologist": ("psychologist",), "psychiatrist": ("psychiatrist",),
    "family counselor": ("family therapist", "family counsellor", "marriage counselor", "family"),
    "place of worship": ("church", "temple", "mosque", "cathedral", "synagogue", "worship"),
    "theme park": ("amusement park", "theme park"), "museum": ("museum", "gallery", "exhibit"),
    "historical landmark": ("historical", "landmark", "historic", "monument"), "park": ("park", "garden"),
    "rent": ("rent", "rental", "renting", "lease"), "buy": ("buy", "purchase", "buying", "own"),
}

SGD_PROFILE = CorpusProfile(name="sgd", value_aliases=VALUE_ALIASES)
