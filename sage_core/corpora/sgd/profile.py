"""The SGD corpus profile: how people say SGD's categorical values (value aliases).

SGD's slot names are plain words, so it needs no slot hints; SGD-X renderings of the
schema use the same profile.
"""
from __future__ import annotations

from sage_core.data.profile import CorpusProfile

# How people say some common categorical values (lower-case canonical -> phrases).
# Kept by the protocol audit (docs/benchmarks.md): entries written while reading SGD test stay only where
# SGD train + dev support them (>= 3 correct firings, precision >= 0.6; benchmarks/audit_lexicons.py).
VALUE_ALIASES = {
    "music": ("concert",),
    "moderate": ("intermediate priced", "intermediate", "reasonably priced"),
    "psychologist": ("psychologist",), "psychiatrist": ("psychiatrist",), "family counselor": ("family",),
    "place of worship": ("worship",), "museum": ("museum",), "historical landmark": ("historical", "landmark"),
    "park": ("park", "garden"),
}

SGD_PROFILE = CorpusProfile(name="sgd", value_aliases=VALUE_ALIASES)
