"""Helpers every corpus loader shares: file discovery, JSON reading with
file/line errors, load statistics, and SGD-style value-list collapsing.

Kept apart so each corpus module holds only what is specific to its format.
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from sage_core.data.errors import SageInputError
from sage_core.data.limits import load_json_document

log = logging.getLogger("sage_core.corpora")


@dataclass
class LoadStats:
    """What a loader read and what it left out (and why), for honest reporting."""

    corpus: str = ""
    files: int = 0
    dialogues: int = 0
    turns: int = 0
    skipped: Counter = field(default_factory=Counter)  # reason -> count
    unmapped_slots: Counter = field(default_factory=Counter)  # raw slot name -> count
    renamed_values: Counter = field(default_factory=Counter)  # "slot: old -> new" -> count

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    def to_dict(self) -> dict[str, Any]:
        return {"corpus": self.corpus, "files": self.files, "dialogues": self.dialogues,
                "turns": self.turns, "skipped": dict(self.skipped),
                "unmapped_slots": dict(self.unmapped_slots), "renamed_values": dict(self.renamed_values)}

    def log(self) -> None:
        msg = (f"{self.corpus}: {self.turns} turns from {self.dialogues} dialogues in {self.files} file(s)")
        if self.skipped:
            msg += "; skipped " + ", ".join(f"{n} ({why})" for why, n in self.skipped.most_common())
        if self.unmapped_slots:
            msg += "; unmapped slots " + ", ".join(f"{s} x{n}" for s, n in self.unmapped_slots.most_common())
        log.info(msg)


class LoadedTurns(list):
    """A plain ``list[Turn]`` that also carries the loader's ``stats``."""

    def __init__(self, turns: Iterable = (), stats: Optional[LoadStats] = None):
        super().__init__(turns)
        self.stats = stats or LoadStats()


def expand_paths(paths: Any, pattern: str, what: str) -> list[Path]:
    """A file, a folder (files matching ``pattern``, sorted) or a list of either."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(p.glob(pattern))
            if not found:
                raise SageInputError(f"no {what} files matching '{pattern}' in this folder", file=str(p))
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise SageInputError(f"{what} file not found", file=str(p))
    if not out:
        raise SageInputError(f"no {what} files given")
    return out


def read_json(path: str | Path) -> Any:
    """Parse a JSON file; malformed or missing input becomes ``SageInputError`` with file/line."""
    return load_json_document(path, "input")


def collapse_values(values: Sequence[str] | str, previous: Optional[str], user_text: str,
                    history_texts: Sequence[str]) -> str:
    """Pick one surface form from SGD's list of alternatives for a slot.

    Order: the value held before (so an unchanged slot is not a diff), else
    the form that occurs in u_t, else in the history (most recent first),
    else the first listed.
    """
    if isinstance(values, str):
        return values
    vals = [str(v) for v in values if v is not None]
    if not vals:
        return ""
    if previous is not None and previous in vals:
        return previous
    low = user_text.lower()
    for v in vals:
        if v and v.lower() in low:
            return v
    for text in reversed(history_texts):
        tl = text.lower()
        for v in vals:
            if v and v.lower() in tl:
                return v
    return vals[0]


def no_turns_error(file: str, corpus: str) -> SageInputError:
    return SageInputError(f"no turns: the {corpus} input contains no usable dialogue turns", file=file)
