"""Input errors that name the file, line and field, so users can fix their data.

The CLI turns these into a one-line message and exit code 2; the app shows
them with ``st.error``. Nothing user-facing should ever print a traceback.
"""
from __future__ import annotations

from typing import Optional


class SageInputError(ValueError):
    """Bad user input: malformed file, unknown workflow, slot not in schema..."""

    def __init__(self, message: str, *, file: Optional[str] = None,
                 line: Optional[int] = None, field: Optional[str] = None):
        self.file = file
        self.line = line
        self.field = field
        self.detail = message
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.file:
            where.append(str(self.file))
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f"field '{self.field}'")
        prefix = ", ".join(where)
        return f"{prefix}: {self.detail}" if prefix else self.detail


class ModelUnavailableError(RuntimeError):
    """A requested model (NLI weights, LLM endpoint) cannot be loaded or reached."""
