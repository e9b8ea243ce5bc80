"""Load a slice (demo, path on disk, or upload) into one ``LoadedSlice``.

Why one shape: every page needs the same four things (turns, workflows, a
display name and a content hash that keys cached runs), whatever the source.
Validation is the library's: ``slice_io`` for our JSONL, ``sage_core.corpora``
for raw corpora; their ``SageInputError`` carries file/line/field.
"""
from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass, field
import os
from pathlib import Path
from typing import Optional, Sequence

from sage_core import (
    SageInputError,
    Turn,
    WorkflowRegistry,
    dumps_turn,
    load_schema,
    read_slice,
    read_slice_bytes,
    validate_against,
)

REPO = Path(__file__).resolve().parents[1]
# The app holds a loaded slice in memory (about 10x its size on disk); bigger inputs go through the
# streaming CLI (`python -m sage_core evaluate`). Streamlit's own upload cap (.streamlit/config.toml) is the same.
MAX_APP_INPUT_BYTES = 200 * 1024 * 1024
DEMO_DIR = REPO / "data" / "demo"
DEMO_SLICE = DEMO_DIR / "demo_slice.jsonl"
DEMO_SCHEMA = DEMO_DIR / "schema.json"

# label shown in the app -> ``sage_core.corpora.load_corpus`` kind
KINDS = {
    "Auto-detect": None,
    "SAGE slice (JSONL)": "slice",
    "SGD dialogues (+ schema.json)": "sgd",
    "MultiWOZ 2.2 dialogues (+ schema.json)": "multiwoz22",
    "MultiWOZ 2.4 data.json": "multiwoz24",
    "ABCD conversations (+ ontology.json, kb.json)": "abcd",
    "MultiWOZ system outputs (JSON)": "mwoz-outputs",
    "Tool-calling agent transcripts (OpenAI JSON/JSONL; + tools.json, policy YAML)": "agent-openai",
    "tau-bench trajectories (+ tools.json, policy YAML)": "tau-bench",
}


@dataclass
class LoadedSlice:
    """Turns + workflows + where they came from; ``content_hash`` keys cached runs."""

    name: str
    kind: str
    turns: list[Turn]
    registry: WorkflowRegistry
    content_hash: str = ""
    notes: list[str] = field(default_factory=list)

    def __post_init__(self):
        h, json_bytes = _hash_and_size(self.turns, self.registry)
        self.content_hash = self.content_hash or h
        # resident size estimate for the app's byte-bounded caches: parsed turns take ~4x their JSON
        self.approx_bytes = 4 * json_bytes
        self.by_id = {t.turn_id: t for t in self.turns}

    @property
    def has_gold(self) -> bool:
        return any(t.gold is not None for t in self.turns)

    @property
    def n_dialogues(self) -> int:
        return len({t.dialogue_id for t in self.turns})


def registry_fingerprint(registry: WorkflowRegistry) -> str:
    """Stable text of everything in W that changes verdicts."""
    rows = []
    for spec in sorted(registry, key=lambda s: s.id):
        rows.append([spec.id, spec.required, sorted(spec.optional.items()), spec.order, spec.outcome_slots,
                     sorted((s.name, s.value_type, s.possible_values) for s in spec.slots.values())])
    return json.dumps(rows, sort_keys=True, default=str)


def content_hash(turns: Sequence[Turn], registry: WorkflowRegistry) -> str:
    return _hash_and_size(turns, registry)[0]


def _hash_and_size(turns: Sequence[Turn], registry: WorkflowRegistry) -> tuple[str, int]:
    """Content hash of turns + workflows, and the turns' JSON size in bytes (one pass)."""
    h = hashlib.sha256()
    n = 0
    for t in turns:
        b = dumps_turn(t).encode("utf-8")
        n += len(b)
        h.update(b)
        h.update(b"\n")
    h.update(registry_fingerprint(registry).encode("utf-8"))
    return h.hexdigest()[:16], n


def _slice_with_schema(turns: list[Turn], schema_path: Path, name: str) -> LoadedSlice:
    """Our JSONL turns validated against a schema file (every workflow and slot must exist)."""
    registry = load_schema(schema_path)
    validate_against(turns, registry, name)
    return LoadedSlice(name=name, kind="slice", turns=turns, registry=registry)


def load_demo() -> LoadedSlice:
    """The embedded demo slice: the app opens on it with no setup."""
    turns = read_slice(DEMO_SLICE)
    ls = _slice_with_schema(turns, DEMO_SCHEMA, str(DEMO_SLICE.relative_to(REPO)))
    ls.name = "demo slice (data/demo)"
    return ls


OUTSIDE_ROOTS = ("this path is not inside a data folder the app may read; ask the server's operator to add its "
                 "folder to SAGE_DATA_ROOTS")


def check_inside_roots(path: str, roots, field: str = "path") -> None:
    """Refuse ``path`` unless it resolves (symlinks followed) inside one of ``roots``.

    Decided on the resolved name alone, before anything touches the file, and with one
    message, so the answer never says whether a file outside the roots exists.
    """
    try:
        resolved = Path(os.path.abspath(os.path.expanduser(path)))
        resolved = resolved.resolve(strict=False)
    except (OSError, RuntimeError, ValueError):
        raise SageInputError(OUTSIDE_ROOTS, field=field) from None
    if not any(resolved == r or resolved.is_relative_to(r) for r in roots):
        raise SageInputError(OUTSIDE_ROOTS, field=field)


def load_path(kind: Optional[str], path: str, schema_path: Optional[str] = None,
              roots=None) -> LoadedSlice:
    """A slice or corpus on disk (``kind`` None: ``detect_kind``).

    ``roots``: the resolved folders the path and schema must lie in (the app passes
    ``ui.session.data_roots()``, i.e. ``SAGE_DATA_ROOTS``); None = no restriction (library use).
    """
    from sage_core import load_corpus

    path = (path or "").strip()
    schema_path = (schema_path or "").strip() or None
    if not path:
        raise SageInputError("enter a path to a slice file or corpus folder", field="path")
    if roots is not None:
        check_inside_roots(path, roots)
        if schema_path:
            check_inside_roots(schema_path, roots, field="schema")
    if Path(path).is_file():
        _check_app_size(Path(path).stat().st_size, path)
    try:
        turns, registry = load_corpus(kind, path, schema_path)
    except SageInputError as e:
        if e.field == "schema" and not schema_path:  # say it in the app's words, naming the file
            raise SageInputError("this is a SAGE slice: it needs a schema; enter the schema.json or workflow YAML "
                                 "path in the Schema field", file=e.file or path, field="schema") from None
        raise
    return _loaded(path, kind, turns, registry)


def _check_app_size(n_bytes: int, name: str) -> None:
    if n_bytes > MAX_APP_INPUT_BYTES:
        raise SageInputError(f"{n_bytes / 2**20:.0f} MiB is over the app's {MAX_APP_INPUT_BYTES // 2**20} MiB limit per "
                             "file; evaluate it with `python -m sage_core evaluate` (streams any size)", file=name)


def _loaded(name: str, kind: Optional[str], turns, registry) -> LoadedSlice:
    ls = LoadedSlice(name=name, kind=kind or getattr(getattr(turns, "stats", None), "corpus", "") or "auto",
                     turns=list(turns), registry=registry)
    stats = getattr(turns, "stats", None)
    if stats is not None and getattr(stats, "skipped_total", 0):
        ls.notes.append("skipped " + ", ".join(f"{n} ({why})" for why, n in stats.skipped.most_common()))
    return ls


SIDE_FILES = {"schema.json", "schema_2.2.json", "ontology.json", "kb.json", "guidelines.json",
              "tools.json", "tool_policy.yaml", "policy.yaml"}


def _upload_slice(name: str, data: bytes, schema: Optional[tuple[str, bytes]]) -> LoadedSlice:
    turns = read_slice_bytes(data, name)
    if schema is None:
        raise SageInputError("a SAGE slice needs a schema: upload schema.json or a workflow YAML",
                             file=name, field="schema")
    with tempfile.TemporaryDirectory(prefix="sage_schema_") as tmp:
        spath = Path(tmp) / Path(schema[0]).name
        spath.write_bytes(schema[1])
        try:
            registry = load_schema(spath)
        except SageInputError as e:
            raise _renamed(e, tmp) from None
    registry.source = schema[0]
    validate_against(turns, registry, name)
    return LoadedSlice(name=f"upload: {name}", kind="slice", turns=turns, registry=registry)


def load_upload(kind: Optional[str], files: Sequence[tuple[str, bytes]],
                schema: Optional[tuple[str, bytes]]) -> LoadedSlice:
    """Uploaded files: slices are parsed from memory; corpora are written to a temp folder and loaded.

    Side files (schema.json, ontology.json, kb.json) may come with the dialogues;
    errors name the uploaded file, never the temp folder.
    """
    if not files:
        raise SageInputError("upload at least one file", field="upload")
    for name, data in files:
        _check_app_size(len(data), name)
    if kind == "slice":
        if len(files) != 1:
            raise SageInputError("upload exactly one slice JSONL file", field="upload")
        return _upload_slice(files[0][0], files[0][1], schema)
    from sage_core import detect_kind, load_corpus

    with tempfile.TemporaryDirectory(prefix="sage_upload_") as tmp:
        folder = Path(tmp) / "corpus"
        folder.mkdir()
        for name, data in files:
            (folder / Path(name).name).write_bytes(data)
        spath = None
        if schema is not None:
            spath = Path(tmp) / Path(schema[0]).name
            spath.write_bytes(schema[1])
        data_files = [Path(n).name for n, _ in files if Path(n).name not in SIDE_FILES]
        target = folder / data_files[0] if len(data_files) == 1 else folder
        try:
            kind = kind or detect_kind(target)
            if kind == "slice":
                if len(data_files) != 1:
                    raise SageInputError(f"a SAGE slice is one JSONL file; {len(data_files)} were uploaded "
                                         f"({', '.join(data_files)}): upload one, or choose the corpus format",
                                         field="upload")
                raw = next(d for n, d in files if Path(n).name == data_files[0])
                return _upload_slice(data_files[0], raw, schema)
            turns, registry = load_corpus(kind, str(target), str(spath) if spath else None)
        except SageInputError as e:
            raise _renamed(e, tmp) from None
        except OSError as e:  # e.g. a folder where the loader expected a file: name the upload, not the temp dir
            raise SageInputError(f"cannot read the uploaded files as {kind}: {e.strerror or e}",
                                 file=", ".join(data_files), field="upload") from None
        label = ", ".join(n for n, _ in files[:3]) + (" ..." if len(files) > 3 else "")
        return _loaded(f"upload: {label}", kind, turns, registry)


def _renamed(e: SageInputError, tmp: str) -> SageInputError:
    """Report uploaded files by their own names, not the temp folder they were written to."""
    file = e.file
    if file and str(file).startswith(tmp):
        file = Path(file).name
    return SageInputError(e.detail.replace(tmp + "/corpus/", "").replace(tmp + "/", ""), file=file,
                          line=e.line, field=e.field)
