"""Corpus loaders: real dialogue corpora -> ``list[Turn]`` + the ``WorkflowRegistry`` to judge them by.

``load_corpus(kind, path, schema_path=None)`` is the one entry point the CLI,
the app and the benchmarks use; ``detect_kind(path)`` guesses the kind from
the files. Kinds: ``slice`` (our JSONL), ``sgd``, ``multiwoz22``,
``multiwoz24``, ``abcd``, ``mwoz-outputs``, and the tool-calling agent logs
``agent-openai`` (OpenAI chat transcripts) and ``tau-bench`` (trajectory files),
whose "schema" is a tools.json, our tool policy YAML or a spec written by
``load-agent-logs``. Where the schema sits beside the
data in the corpus' usual layout it is found without ``schema_path``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from sage_core.corpora.common import LoadedTurns, LoadStats, read_json
from sage_core.corpora.multiwoz.booking_overlay import DOMAINS as MWOZ_DOMAINS
from sage_core.data.errors import SageInputError
from sage_core.data.limits import load_json_document, loads_strict
from sage_core.data.types import Turn
from sage_core.specs.workflow import WorkflowRegistry

KINDS = ("slice", "sgd", "multiwoz22", "multiwoz24", "abcd", "mwoz-outputs", "agent-openai", "tau-bench")
AGENT_LOG_FORMATS = {"agent-openai": "openai", "tau-bench": "tau-bench"}  # kind -> agent_logs format

__all__ = ["KINDS", "LoadStats", "LoadedTurns", "detect_kind", "load_corpus", "load_registry_for_slice"]


def _first(*cands: Path) -> Optional[Path]:
    return next((c for c in cands if c.is_file()), None)


def _near(path: Path, names: tuple[str, ...]) -> Optional[Path]:
    """A file named one of ``names`` in the data's folder or the folder above it."""
    base = path if path.is_dir() else path.parent
    return _first(*[d / n for d in (base, base.parent) for n in names])


def _classify_json(raw, name: str) -> str:
    from sage_core.corpora.agent_logs import looks_like_openai_transcripts, looks_like_tau_trajectories

    if looks_like_tau_trajectories(raw):
        return "tau-bench"
    if looks_like_openai_transcripts(raw) or (isinstance(raw, dict) and looks_like_openai_transcripts(
            raw.get("conversations"))):
        return "agent-openai"
    if isinstance(raw, list):
        first = next((x for x in raw if isinstance(x, dict)), None)
        if first is None:
            raise SageInputError("cannot tell the corpus kind of an empty list: no turns", file=name)
        if "turns" in first:
            svcs = {str(s) for s in first.get("services", []) or []}
            slots = {k for t in first.get("turns", []) for fr in t.get("frames", []) or []
                     for k in ((fr.get("state") or {}).get("slot_values") or {})}
            if (svcs and svcs <= set(MWOZ_DOMAINS)) or any("-" in s for s in slots):
                return "multiwoz22"
            return "sgd"
        if "original" in first or "scenario" in first:
            return "abcd"
    if isinstance(raw, dict) and raw:
        v = next(iter(raw.values()))
        if isinstance(v, dict) and "log" in v:
            return "multiwoz24"
        if isinstance(v, list) and v and isinstance(v[0], dict):
            if "response" in v[0] or "state" in v[0]:
                return "mwoz-outputs"
            if "original" in v[0] or "scenario" in v[0]:
                return "abcd"
    raise SageInputError("cannot tell which corpus this is; pass the kind explicitly "
                         f"({', '.join(KINDS)})", file=name)


def detect_kind(path: str | Path) -> str:
    """Guess the corpus kind from a file or folder (reads JSON files to look at their shape)."""
    p = Path(path)
    if p.is_dir():
        dialogues = sorted(p.glob("dialogues_*.json"))
        if dialogues:
            return _classify_json(read_json(dialogues[0]), str(dialogues[0]))
        if (p / "data.json").is_file():
            return "multiwoz24"
        if sorted(p.glob("*.jsonl")):
            return "slice"
        raise SageInputError("no dialogues_*.json, data.json or *.jsonl in this folder", file=str(p))
    if not p.is_file():
        raise SageInputError("file not found", file=str(p))
    if p.suffix == ".jsonl":
        return "agent-openai" if _jsonl_is_transcript(p) else "slice"
    return _classify_json(read_json(p), str(p))


def _jsonl_is_transcript(p: Path) -> bool:
    """A JSONL file whose first record is a chat conversation (``messages``) rather than a slice turn."""
    from sage_core.corpora.agent_logs import looks_like_openai_transcripts

    try:
        with open(p, encoding="utf-8") as fh:
            first = next((ln for ln in fh if ln.strip()), "")
        return looks_like_openai_transcripts(loads_strict(first, str(p), 1)) if first else False
    except (OSError, ValueError, UnicodeDecodeError, SageInputError):
        return False


def _is_abcd_ontology(path: Path) -> bool:
    try:
        raw = load_json_document(path, "ontology")
    except SageInputError:
        return False
    return isinstance(raw, dict) and "actions" in raw and "intents" in raw


def _abcd_registry(ontology: Path) -> WorkflowRegistry:
    from sage_core.corpora.abcd.workflows import load_abcd_workflows

    kb = ontology.parent / "kb.json"
    if not kb.is_file():
        raise SageInputError("kb.json must sit beside the ABCD ontology", file=str(ontology))
    guide = ontology.parent / "guidelines.json"
    return load_abcd_workflows(ontology, kb, guide if guide.is_file() else None)


def load_registry_for_slice(schema_path: str | Path) -> WorkflowRegistry:
    """A slice's workflows: an SGD-format schema, our YAML spec, or an ABCD ontology (kb beside it)."""
    from sage_core.corpora.schemas import load_schema

    sp = Path(schema_path)
    if sp.suffix == ".json" and _is_abcd_ontology(sp):
        return _abcd_registry(sp)
    return load_schema(sp)


def _need_schema(schema: Optional[Path], kind: str, hint: str) -> Path:
    if schema is None:
        raise SageInputError(f"{kind} needs a schema: pass schema_path ({hint})", field="schema")
    return schema


def load_corpus(kind: Optional[str], path: str | Path,
                schema_path: Optional[str | Path] = None) -> tuple[list[Turn], WorkflowRegistry]:
    """Load ``path`` as corpus ``kind`` (None: ``detect_kind``) -> (turns, registry).

    The returned list is a ``LoadedTurns`` whose ``stats`` says what was skipped
    or could not be mapped.
    """
    from sage_core.corpora.schemas import load_schema

    p = Path(path)
    kind = kind or detect_kind(p)
    if kind not in KINDS:
        raise SageInputError(f"unknown corpus kind '{kind}'; use one of {', '.join(KINDS)}", field="kind")
    schema = Path(schema_path) if schema_path else None
    if kind == "slice":
        from sage_core.data.slice_io import read_slice, validate_against

        registry = load_registry_for_slice(_need_schema(schema, kind, "schema.json, a workflow YAML or ABCD ontology.json"))
        turns = read_slice(p)
        validate_against(turns, registry, str(p))
        stats = LoadStats(corpus="slice", files=1, dialogues=len({t.dialogue_id for t in turns}), turns=len(turns))
        return LoadedTurns(turns, stats), registry
    if kind in AGENT_LOG_FORMATS:
        from sage_core.corpora.agent_logs import load_agent_corpus

        return load_agent_corpus(AGENT_LOG_FORMATS[kind], p, schema)
    if kind == "sgd":
        from sage_core.corpora.sgd.loader import load_sgd_dialogues

        schema = schema or _near(p, ("schema.json",))
        registry = load_schema(_need_schema(schema, kind, "schema.json was not found beside the dialogues"))
        return load_sgd_dialogues(p, registry), registry
    if kind in ("multiwoz22", "multiwoz24", "mwoz-outputs"):
        schema = schema or _near(p, ("schema.json", "schema_2.2.json"))
        registry = load_schema(_need_schema(schema, kind, "the MultiWOZ 2.2 schema.json"))
        if kind == "multiwoz22":
            from sage_core.corpora.multiwoz.loader import load_multiwoz22
            return load_multiwoz22(p, registry), registry
        if kind == "multiwoz24":
            from sage_core.corpora.multiwoz.loader import load_multiwoz24
            return load_multiwoz24(p, registry), registry
        from sage_core.corpora.system_outputs.loader import load_system_outputs
        return load_system_outputs(p, registry), registry
    # abcd
    from sage_core.corpora.abcd.loader import load_abcd_conversations

    onto = schema or _near(p, ("ontology.json",))
    registry = _abcd_registry(_need_schema(onto, kind, "ontology.json with kb.json beside it"))
    return load_abcd_conversations(p, registry, ontology_path=onto), registry
