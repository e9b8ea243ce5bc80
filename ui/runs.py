"""Run the cascade once per (slice content, configuration, S2 backend) and keep the result.

Why here: evaluators (and the models they load) are created once per process
with ``st.cache_resource``; finished runs live in a process-wide store keyed
by the slice's content hash, so switching pages or sessions never re-runs a
configuration. Progress is reported through a callback, not from inside a
cached function (Streamlit would replay the widget).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import streamlit as st

from sage_core import TurnLabel, TurnVerdict

from .loading import LoadedSlice, registry_fingerprint
from .memory import SessionBoundCache, register

# label shown in the app -> ``CascadeConfig.named`` name
CONFIGS = {"SAGE-Core": "sage-core", "SAGE-LLM": "sage-llm", "no_S1": "no_s1", "no_S2": "no_s2"}
CONFIG_LABELS = {v: k for k, v in CONFIGS.items()}
BACKENDS = {"offline (embedded MiniLM + span grounding)": "offline", "nli (cross-encoder NLI model)": "nli"}
DEFAULT_CONFIG = "sage-core"
DEFAULT_BACKEND = "offline"


@dataclass
class RunResult:
    """One finished cascade run over one slice."""

    slice_hash: str
    config: str
    backend_requested: str
    backend_ran: str  # ``Evaluator.s2_backend_name``: what actually ran
    verdicts: list[TurnVerdict]
    seconds: float
    metrics: Optional[dict] = None
    by_id: dict = field(default_factory=dict)
    turn_table: Optional[tuple] = field(default=None, repr=False)  # (slice hash, frame): ui.table's memo

    def __post_init__(self):
        self.by_id = {v.turn_id: v for v in self.verdicts}
        # resident size estimate for the byte-bounded run store: ~2x the verdicts' JSON, from a sample
        sample = self.verdicts[:64]
        per = sum(len(json.dumps(v.to_dict())) for v in sample) / max(len(sample), 1)
        self.approx_bytes = int(2 * per * len(self.verdicts)) + 400 * len(self.verdicts)  # + the turn table

    @property
    def backend_shown(self) -> str:
        """The backend that ran, in words (``none`` when the configuration has no S2 stage)."""
        return self.backend_ran if self.backend_ran != "none" else "none (this configuration has no S2)"

    @property
    def label(self) -> str:
        return CONFIG_LABELS.get(self.config, self.config)

    @property
    def key(self) -> str:
        return f"{self.label} / {self.backend_requested}"


def settings_key() -> tuple:
    """The settings that change verdicts (tau, floors, models, endpoint): part of every cache key."""
    from sage_core import get_settings

    s = get_settings()
    return (s.tau, s.extraction_floor, s.nli_model, s.nli_model_dir, s.llm_model, s.llm_base_url)


@st.cache_resource(show_spinner=False, max_entries=8)
def _evaluator(registry_key: str, config: str, backend: str, settings: tuple, _registry):
    """One evaluator per (workflows, config, backend); models load lazily inside, once."""
    from sage_core import CascadeConfig, Evaluator, get_settings

    s = get_settings()  # the app is an entry point: it reads the environment and passes the values in
    return Evaluator.from_settings(_registry, CascadeConfig.from_settings(config, s, s2_backend=backend), s)


@st.cache_resource(show_spinner=False)
def _store() -> SessionBoundCache:
    """Process-wide finished runs: (slice hash, config, backend, settings key) -> RunResult.

    Bounded by bytes and released when the sessions that made or used a run end (``ui.memory``).
    """
    return register(SessionBoundCache("finished runs"))


def cached(ls: LoadedSlice, config: str, backend: str) -> Optional[RunResult]:
    return _store().get((ls.content_hash, config, backend, settings_key()))


def runs_for(ls: LoadedSlice) -> list[RunResult]:
    """Every finished run on this slice under the current settings, in a fixed order: configurations as the Run
    menu lists them (SAGE-Core first), then backends. Not the store's order: that is least recently used first, so
    pickers and legends would reorder as pages read the runs."""
    sk = settings_key()
    store = _store()
    # read through ``get``: it marks each run as used by this session, so a run another session made (the same
    # browser before a refresh) stays while this session shows it, not only until the other session expires
    found = [store.get(key) for key, _ in store.items() if key[0] == ls.content_hash and key[3] == sk]
    found = [r for r in found if r is not None]
    order = {c: i for i, c in enumerate(CONFIGS.values())}
    backends = {b: i for i, b in enumerate(BACKENDS.values())}
    return sorted(found, key=lambda r: (order.get(r.config, len(order)), backends.get(r.backend_requested,
                                                                                      len(backends)), r.key))


def run(ls: LoadedSlice, config: str, backend: str,
        progress: Optional[Callable[[int, int], None]] = None) -> RunResult:
    """Evaluate the slice (or return the cached run). Raises SageInputError / ModelUnavailableError."""
    hit = cached(ls, config, backend)
    if hit is not None:
        return hit
    ev = _evaluator(registry_fingerprint(ls.registry), config, backend, settings_key(), ls.registry)
    t0 = time.perf_counter()
    verdicts = ev.evaluate(ls.turns, progress=progress)
    secs = time.perf_counter() - t0
    metrics = None
    if ls.has_gold:
        from sage_core import classification_metrics

        metrics = classification_metrics(verdicts, ls.turns)
    res = RunResult(ls.content_hash, config, backend, str(ev.s2_backend_name), verdicts, secs, metrics)
    _store()[(ls.content_hash, config, backend, settings_key())] = res
    return res


def llm_configured() -> bool:
    """Whether an LLM endpoint is configured for S3 (``SAGE_LLM_API_KEY`` set; the base URL has a default)."""
    from sage_core import get_settings

    return bool(get_settings().llm_api_key)


LLM_HOWTO = ("SAGE-LLM sends S1/S2 abstentions to an LLM (S3) and needs an OpenAI-compatible endpoint: set "
             "`SAGE_LLM_BASE_URL` (default `https://api.openai.com/v1`, e.g. `http://localhost:8000/v1` for vLLM) "
             "and `SAGE_LLM_API_KEY` (any non-empty value for local servers) in the environment, then restart "
             "`streamlit run app.py`.")


# --- per-turn facts the pages filter and display on --------------------------
def deciding_stages(v: TurnVerdict) -> list[str]:
    """Stages whose answer is final for at least one criterion (``none`` = all abstained)."""
    return sorted({t.final.stage.value for t in v.traces})


def outcome(v: TurnVerdict, gold_label: Optional[str]) -> str:
    """TP / FP / FN / TN against gold (undecided scores as acceptable), or 'undecided' / 'no gold'."""
    if v.label == TurnLabel.UNDECIDED:
        tag = "undecided"
        if gold_label == "failure":
            return "undecided (FN)"
        return tag
    if gold_label is None:
        return "no gold"
    pred = v.label == TurnLabel.FAILURE
    gold = gold_label == "failure"
    return {(True, True): "TP", (True, False): "FP", (False, True): "FN", (False, False): "TN"}[(pred, gold)]


# --- page helpers ---------------------------------------------------------------
def ensure_runs(ls: LoadedSlice) -> list[RunResult]:
    """Finished runs on this slice; runs the default configuration first if there is none."""
    done = runs_for(ls)
    if done:
        return done
    bar = st.progress(0.0, text="Running SAGE-Core (offline S2) on the current slice")

    def tick(i: int, n: int) -> None:
        bar.progress(min(1.0, i / max(n, 1)), text=f"SAGE-Core: {i}/{n} turns")

    run(ls, DEFAULT_CONFIG, DEFAULT_BACKEND, progress=tick)
    bar.empty()
    return runs_for(ls)


def pick_run(done: list[RunResult], key: str, label: str = "Run") -> RunResult:
    """Select one finished run (SAGE-Core / offline first); always say which S2 backend actually ran."""
    keys = [r.key for r in done]
    default = next((i for i, r in enumerate(done) if (r.config, r.backend_requested) == (DEFAULT_CONFIG,
                                                                                         DEFAULT_BACKEND)),
                   len(keys) - 1)
    chosen = st.selectbox(label, keys, index=default, key=key)
    res = done[keys.index(chosen)]
    st.caption(f"S2 backend that ran: **{res.backend_shown}**")
    return res
