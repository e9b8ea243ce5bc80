"""The SGD corpus profile: how people say SGD's categorical values (value aliases: a few kept by the protocol
audit, the rest mined from SGD train and checked on dev, ``mined_aliases.json``).

SGD's slot names are plain words, so it needs no slot hints; SGD-X renderings of the
schema use the same profile.
"""
from __future__ import annotations

import json
from pathlib import Path

from sage_core.data.errors import SageInputError
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

MINED_ALIASES_PATH = Path(__file__).with_name("mined_aliases.json")


def mined_value_aliases(path: Path = MINED_ALIASES_PATH) -> dict[str, tuple[str, ...]]:
    """Aliases mined from SGD train and checked on dev (``science.alias_mining``; regenerate with
    ``python -m sage_core mine-aliases --data ../shared/data``)."""
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        aliases = d["aliases"]
        if not (isinstance(aliases, dict) and all(isinstance(v, str) and isinstance(a, list) and
                                                  all(isinstance(x, str) and x for x in a) for v, a in aliases.items())):
            raise ValueError("'aliases' must map each value to a list of phrases")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SageInputError(f"{path}: not a usable aliases file ({e}); regenerate it with "
                             "`python -m sage_core mine-aliases --data ../shared/data`") from None
    return {v: tuple(a) for v, a in aliases.items()}


def merged_aliases(hand: dict[str, tuple[str, ...]], mined: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """The hand-kept entries, each followed by the mined phrases it lacks."""
    out = {v: tuple(a) for v, a in hand.items()}
    for v, al in mined.items():
        out[v] = out.get(v, ()) + tuple(a for a in al if a not in out.get(v, ()))
    return out


SGD_PROFILE = CorpusProfile(name="sgd", value_aliases=merged_aliases(VALUE_ALIASES, mined_value_aliases()))
