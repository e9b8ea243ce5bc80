"""Streaming (and optionally parallel) evaluation of JSONL slices to a verdict JSONL file.

Why: a slice of a million turns must not be held in memory, and a batch run
should use every core. Pass 1 validates every line (file, line, field) before
any model loads; pass 2 reads chunks of raw lines, evaluates them in this
process or in a pool of worker processes (each loads the workflows and one
encoder once), writes verdict lines in input order and aggregates the metrics
online. Memory is bounded by chunk size x chunks in flight, not by the slice.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import os
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from sage_core.data.errors import SageInputError
from sage_core.data.limits import check_input_file, iter_lines_bounded, loads_strict
from sage_core.data.slice_io import turn_from_dict, validate_against
from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from sage_core.specs.workflow import WorkflowRegistry

# Turns per chunk handed to an evaluator: a multiple of CascadeConfig.chunk_size, so the S2
# batches are the same whatever the number of workers (same verdicts, same order).
CHUNK_TURNS = 256
Lines = list[tuple[int, str]]  # (line number, raw JSON text)


@dataclass(frozen=True)
class VerdictRecord:
    """What metrics need of one verdict and its turn's gold: small, so workers send it cheaply."""

    gold_label: Optional[str]
    gold_class: Optional[str]
    label: str
    stages: tuple[str, ...]  # deciding stage of each criterion
    latency_ms: float
    paid_calls: int
    cost_usd: float
    s2_backend: str

    @classmethod
    def of(cls, verdict, turn) -> "VerdictRecord":
        g = turn.gold
        return cls(g.label if g else None, g.failure_class if g else None, verdict.label.value,
                   tuple(tr.final.stage.value for tr in verdict.traces), float(verdict.latency_ms),
                   int(verdict.paid_calls), float(verdict.cost_usd), verdict.s2_backend)


def iter_slice_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines of a slice file with their numbers, read incrementally."""
    p = check_input_file(path, "slice", field="slice")
    try:
        with open(p, encoding="utf-8") as fh:
            for lineno, raw in enumerate(iter_lines_bounded(fh, str(p)), start=1):
                if raw.strip():
                    yield lineno, raw
    except UnicodeDecodeError as e:
        raise SageInputError(f"not UTF-8 text (byte {e.start} of a line)", file=str(p)) from None


def parse_line(raw: str, file: str, lineno: int):
    """One slice line -> validated ``Turn`` (strict JSON: depth, finite numbers, types)."""
    t = turn_from_dict(loads_strict(raw, file, lineno), file, lineno)
    t._line = lineno
    return t


def validate_slice(paths: Sequence[str], registry: WorkflowRegistry) -> int:
    """Pass 1: every line of every file parses and fits the schema; turn ids are unique. Returns the turn count."""
    from sage_core.evaluator.compile import validate_turn

    seen: set[bytes] = set()  # 8-byte digests: ~70 bytes per turn, not the ids themselves
    n = 0
    for path in paths:
        for lineno, raw in iter_slice_lines(path):
            t = parse_line(raw, path, lineno)
            validate_against([t], registry, file=path)
            try:
                validate_turn(t, registry.get(t.workflow))
            except SageInputError as e:
                raise SageInputError(e.detail, file=path, line=lineno, field=e.field) from None
            key = hashlib.blake2b(t.turn_id.encode("utf-8"), digest_size=8).digest()
            if key in seen:
                raise SageInputError(f"duplicate turn_id '{t.turn_id}'", file=path, line=lineno, field="turn_id")
            seen.add(key)
            n += 1
    if n == 0:
        raise SageInputError("the slice is empty: no turns found", file=", ".join(paths))
    return n


def iter_chunks(paths: Sequence[str], size: int = CHUNK_TURNS) -> Iterator[tuple[str, Lines]]:
    """(file, up to ``size`` raw lines), in file and line order; chunks never span files."""
    for path in paths:
        chunk: Lines = []
        for item in iter_slice_lines(path):
            chunk.append(item)
            if len(chunk) == size:
                yield path, chunk
                chunk = []
        if chunk:
            yield path, chunk


def evaluate_lines(ev: Evaluator, file: str, lines: Lines) -> list[tuple[str, VerdictRecord]]:
    """Evaluate one chunk: (verdict JSON line, metrics record) per turn, in order."""
    turns = [parse_line(raw, file, lineno) for lineno, raw in lines]
    return [(json.dumps(v.to_dict(), ensure_ascii=False), VerdictRecord.of(v, t))
            for v, t in zip(ev.evaluate(turns), turns)]


# --- worker processes -----------------------------------------------------------------
_WORKER_EV: Optional[Evaluator] = None


def one_core() -> None:
    """One torch thread per evaluating process: N workers use N cores (not N x N threads), and the
    encoder's float sums run in the same order in every process, so 1 and N workers give identical margins."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass


def make_evaluator(registry: WorkflowRegistry, config: CascadeConfig, settings: Any = None) -> Evaluator:
    """The evaluator of one process (or Ray actor); with ``settings`` S3 gets the configured LLM endpoint."""
    one_core()
    return Evaluator.from_settings(registry, config, settings) if settings is not None else Evaluator(registry, config)


def _init_worker(registry: WorkflowRegistry, config: CascadeConfig, settings: Any) -> None:
    global _WORKER_EV
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    _WORKER_EV = make_evaluator(registry, config, settings)


def _work(file: str, lines: Lines) -> list[tuple[str, VerdictRecord]]:
    assert _WORKER_EV is not None, "worker not initialised"
    return evaluate_lines(_WORKER_EV, file, lines)


@dataclass
class BatchResult:
    n: int
    labels: dict[str, int] = field(default_factory=dict)
    s2_backends: set[str] = field(default_factory=set)
    has_gold: bool = False


def _results(paths: Sequence[str], registry: WorkflowRegistry, config: CascadeConfig, settings: Any,
             workers: int, chunk: int) -> Iterator[list[tuple[str, VerdictRecord]]]:
    chunks = iter_chunks(paths, chunk)
    if workers <= 1:
        ev = make_evaluator(registry, config, settings)
        for file, lines in chunks:
            yield evaluate_lines(ev, file, lines)
        return
    ctx = mp.get_context("spawn")  # no fork of a parent that may hold torch threads
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(registry, config, settings)) as pool:
        inflight: deque = deque()
        for file, lines in chunks:
            inflight.append(pool.submit(_work, file, lines))
            if len(inflight) >= 2 * workers:  # bounded: at most 2 chunks per worker in flight
                yield inflight.popleft().result()
        while inflight:
            yield inflight.popleft().result()


def evaluate_to_file(paths: Sequence[str], registry: WorkflowRegistry, out: str | Path, config: CascadeConfig,
                     workers: int = 1, chunk: int = CHUNK_TURNS, settings: Any = None,
                     progress: Optional[Callable[[int, int], None]] = None,
                     on_record: Optional[Callable[[VerdictRecord], None]] = None) -> BatchResult:
    """Validate, then evaluate ``paths`` (in order) into one verdict JSONL at ``out``.

    The file appears only when the run succeeded (written to ``out.partial`` first);
    ``on_record`` sees each verdict's ``VerdictRecord`` in order (online metrics).
    """
    if workers < 1:
        raise SageInputError(f"--workers must be at least 1, got {workers}", field="workers")
    if chunk % max(config.chunk_size, 1):
        raise ValueError("chunk must be a multiple of config.chunk_size")
    total = validate_slice(paths, registry)
    result = BatchResult(0)
    out = Path(out)
    tmp = out.with_name(out.name + ".partial")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            for rows in _results(paths, registry, config, settings, workers, chunk):
                for line, rec in rows:
                    fh.write(line + "\n")
                    result.labels[rec.label] = result.labels.get(rec.label, 0) + 1
                    result.s2_backends.add(rec.s2_backend)
                    result.has_gold |= rec.gold_label is not None
                    if on_record:
                        on_record(rec)
                result.n += len(rows)
                if progress:
                    progress(result.n, total)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return result


def expand_slice_paths(pattern_or_paths: str | Iterable[str]) -> list[str]:
    """A path or a glob ('logs/*.jsonl') -> sorted list of files (a folder is refused later, by name)."""
    import glob

    items = [pattern_or_paths] if isinstance(pattern_or_paths, str) else list(pattern_or_paths)
    out: list[str] = []
    for item in items:
        if any(c in item for c in "*?["):
            found = sorted(glob.glob(item))
            if not found:
                raise SageInputError("no files match this pattern", file=item, field="slice")
            out.extend(found)
        else:
            out.append(item)
    return out


__all__ = ["CHUNK_TURNS", "iter_slice_lines", "parse_line", "validate_slice", "iter_chunks", "evaluate_lines",
           "evaluate_to_file", "expand_slice_paths", "BatchResult", "VerdictRecord", "one_core", "make_evaluator"]
