"""Limits and checks every file a user names goes through before we read or write it.

Why: without them a directory, ``/dev/zero``, a binary file, 200k-deep JSON or a
``NaN`` reached Python's own errors (a traceback) or was silently coerced into a
wrong verdict. Every refusal here is a ``SageInputError`` naming the file (and
the line or field), so the CLI exits 2 and the app shows ``st.error``.

Documented limits (README, "Input limits"):
- ``MAX_JSON_DEPTH`` (64): nesting of any JSON/YAML value; our formats need < 10.
- ``MAX_DOCUMENT_BYTES`` (64 MiB): whole-document inputs that cannot stream
  (schemas, SGD/MultiWOZ/ABCD dialogue files, system outputs, YAML specs);
  parsing costs about ten times the file size in memory.
- ``MAX_VERDICT_FILE_BYTES`` (256 MiB): an imported evaluator's verdict file (JSONL/CSV, read whole).
- ``MAX_LINE_BYTES`` (4 MiB): one line of a JSONL slice or verdict file; the file
  itself streams and has no size limit.
- Only regular files are read: directories, devices (``/dev/zero``), FIFOs and
  sockets are refused.
"""
from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any, Iterator, Optional, TextIO

import numpy as np

from sage_core.data.errors import SageInputError

MAX_JSON_DEPTH = 64
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_VERDICT_FILE_BYTES = 256 * 1024 * 1024

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB"


def check_input_file(path: str | Path, what: str = "input", field: Optional[str] = None,
                     max_bytes: Optional[int] = None) -> Path:
    """The path must name an existing regular file (and be at most ``max_bytes`` long)."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise SageInputError(f"{what} file not found", file=str(p), field=field) from None
    except OSError as e:
        raise SageInputError(f"cannot read {what} file: {e.strerror}", file=str(p), field=field) from None
    if stat.S_ISDIR(st.st_mode):
        raise SageInputError(f"{what} must be a file, but this is a directory", file=str(p), field=field)
    if not stat.S_ISREG(st.st_mode):
        raise SageInputError(f"{what} must be a regular file (not a device, pipe or socket)", file=str(p), field=field)
    if max_bytes is not None and st.st_size > max_bytes:
        raise SageInputError(f"{what} file is {_mib(st.st_size)}, over the {_mib(max_bytes)} limit for inputs "
                             "that are parsed whole", file=str(p), field=field)
    if not os.access(p, os.R_OK):
        raise SageInputError(f"{what} file is not readable (permission denied)", file=str(p), field=field)
    return p


def check_output_file(path: str | Path, what: str = "output", field: Optional[str] = None) -> Path:
    """The path must be writable as a file: not a directory; its folder exists or can be created."""
    p = Path(path)
    if p.is_dir():
        raise SageInputError(f"{what} must be a file path, but this is a directory", file=str(p), field=field)
    if p.exists() and not p.is_file():
        raise SageInputError(f"{what} must be a regular file (not a device, pipe or socket)", file=str(p), field=field)
    _make_dir(p.parent, what, field, shown=p)
    if p.exists() and not os.access(p, os.W_OK):
        raise SageInputError(f"cannot write {what}: permission denied", file=str(p), field=field)
    return p


def check_output_dir(path: str | Path, what: str = "output folder", field: Optional[str] = None) -> Path:
    """The path must be a directory or creatable as one (a file there is refused)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise SageInputError(f"{what} must be a directory, but a file of that name exists", file=str(p), field=field)
    _make_dir(p, what, field, shown=p)
    return p


def _make_dir(d: Path, what: str, field: Optional[str], shown: Path) -> None:
    if str(d) in ("", "."):
        return
    try:
        d.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise SageInputError(f"cannot create the folder for {what}: '{d}' exists and is not a directory",
                             file=str(shown), field=field) from None
    except OSError as e:
        raise SageInputError(f"cannot create the folder for {what}: {e.strerror}", file=str(shown),
                             field=field) from None
    if not os.access(d, os.W_OK | os.X_OK):
        raise SageInputError(f"cannot write {what}: folder '{d}' is not writable", file=str(shown), field=field)


# --- JSON: depth and finite numbers ------------------------------------------------
def json_depth(text: str) -> int:
    """Maximum bracket nesting of a JSON text (strings ignored), without recursing."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return min(text.count("[") + text.count("{"), MAX_JSON_DEPTH)
    b = np.frombuffer(_JSON_STRING.sub('""', text).encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = ((b == 91) | (b == 123)).astype(np.int32) - ((b == 93) | (b == 125)).astype(np.int32)
    return int(np.cumsum(step).max()) if step.size else 0


def value_depth(obj: Any) -> int:
    """Nesting depth of a parsed value (YAML results), iteratively."""
    depth, stack = 0, [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, (dict, list)):
            depth = max(depth, d)
            if d > MAX_JSON_DEPTH:
                return d
            stack.extend((v, d + 1) for v in (o.values() if isinstance(o, dict) else o))
    return depth


def _not_finite(token: str) -> Any:
    raise ValueError(f"{token} is not allowed: JSON numbers must be finite")


def _finite_float(token: str) -> float:
    x = float(token)
    if not math.isfinite(x):
        raise ValueError(f"number {token} overflows: JSON numbers must be finite")
    return x


def loads_strict(text: str, file: Optional[str] = None, line: Optional[int] = None) -> Any:
    """``json.loads`` that refuses NaN/Infinity, overflowing numbers and nesting deeper than MAX_JSON_DEPTH."""
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise SageInputError(f"JSON nested {depth} levels deep, over the limit of {MAX_JSON_DEPTH}", file=file,
                             line=line)
    try:
        return json.loads(text, parse_constant=_not_finite, parse_float=_finite_float)
    except json.JSONDecodeError as e:
        raise SageInputError(f"malformed JSON: {e.msg} (column {e.colno})", file=file,
                             line=e.lineno if line is None else line) from None
    except (ValueError, RecursionError) as e:
        raise SageInputError(str(e) if isinstance(e, ValueError) else "JSON nested too deeply", file=file,
                             line=line) from None


def read_text_document(path: str | Path, what: str = "input", field: Optional[str] = None,
                       max_bytes: int = MAX_DOCUMENT_BYTES) -> str:
    """Whole-document text input: regular file, size limit, UTF-8."""
    p = check_input_file(path, what, field, max_bytes)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise SageInputError(f"cannot read {what} file: {e.strerror}", file=str(p), field=field) from None
    return decode_utf8(data, str(p), what)


def decode_utf8(data: bytes, name: str, what: str = "input") -> str:
    if b"\x00" in data[:8192]:
        raise SageInputError(f"{what} is a binary file, not UTF-8 JSON/YAML text", file=name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SageInputError(f"{what} is not UTF-8 text (byte {e.start})", file=name) from None


def load_json_document(path: str | Path, what: str = "input", field: Optional[str] = None,
                       max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """Parse a whole JSON document with every limit above applied."""
    return loads_strict(read_text_document(path, what, field, max_bytes), file=str(path))


def iter_lines_bounded(fh: TextIO, name: str, max_line: int = MAX_LINE_BYTES) -> Iterator[str]:
    """Lines of a text stream, refusing any line longer than ``max_line`` characters (no unbounded read)."""
    lineno = 0
    while True:
        raw = fh.readline(max_line + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) > max_line and not raw.endswith("\n"):
            raise SageInputError(f"line longer than {_mib(max_line)}: not a JSONL slice?", file=name, line=lineno)
        yield raw


__all__ = ["MAX_JSON_DEPTH", "MAX_DOCUMENT_BYTES", "MAX_LINE_BYTES", "MAX_VERDICT_FILE_BYTES", "check_input_file", "check_output_file",
           "check_output_dir", "json_depth", "value_depth", "loads_strict", "read_text_document", "decode_utf8",
           "load_json_document", "iter_lines_bounded"]
