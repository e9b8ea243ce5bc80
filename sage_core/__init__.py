"""SAGE: State-Grounded, Abstention-Aware Evaluation of task-oriented dialogue agents.

The evaluator library. No Streamlit imports here: the app, the CLI and the
benchmarks all build on this package, through the public API below
(``from sage_core import Evaluator, CascadeConfig, load_corpus, read_slice, ...``).
Names are resolved lazily, so ``import sage_core`` stays cheap and loads no
model, plotting or database code until a name that needs it is used.

Subpackages (see ARCHITECTURE.md): ``data`` (types, errors, settings, file
formats), ``specs`` (workflow specs), ``corpora`` (one loader and profile per
corpus), ``evaluator`` (text understanding, compile, verify, aggregate,
cascade), ``science`` (injection, slices, statistics, metrics, report),
``llm`` (client, baselines), ``cli``.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.2.0"

# public name -> module that defines it
_API = {
    # data
    "Turn": "sage_core.data.types", "Utterance": "sage_core.data.types", "UserValue": "sage_core.data.types",
    "AgentAct": "sage_core.data.types", "Gold": "sage_core.data.types", "StateDiff": "sage_core.data.types",
    "Criterion": "sage_core.data.types", "Verdict": "sage_core.data.types",
    "CriterionTrace": "sage_core.data.types", "RepairSignal": "sage_core.data.types",
    "TurnVerdict": "sage_core.data.types", "FailureClass": "sage_core.data.types",
    "Decision": "sage_core.data.types", "Stage": "sage_core.data.types", "ROUTING_STAGES": "sage_core.data.types", "TurnLabel": "sage_core.data.types",
    "SageInputError": "sage_core.data.errors", "ModelUnavailableError": "sage_core.data.errors",
    "Settings": "sage_core.data.settings", "get_settings": "sage_core.data.settings",
    "read_slice": "sage_core.data.slice_io", "read_slice_bytes": "sage_core.data.slice_io",
    "write_slice": "sage_core.data.slice_io", "dumps_turn": "sage_core.data.slice_io",
    "validate_against": "sage_core.data.slice_io", "iter_jsonl": "sage_core.data.slice_io",
    "read_evaluator_verdicts": "sage_core.data.verdict_io",
    "parse_evaluator_verdicts": "sage_core.data.verdict_io",
    "from_turn_verdicts": "sage_core.data.verdict_io", "EvaluatorVerdicts": "sage_core.data.verdict_io",
    # specs
    "SlotSpec": "sage_core.specs.workflow", "WorkflowSpec": "sage_core.specs.workflow",
    "WorkflowRegistry": "sage_core.specs.workflow", "load_workflows": "sage_core.specs.loading",
    "load_sgd_schema": "sage_core.specs.sgd_format", "load_workflow_spec": "sage_core.specs.yaml_spec",
    "load_schema": "sage_core.corpora.schemas", "CorpusProfile": "sage_core.data.profile",
    # corpora
    "load_corpus": "sage_core.corpora", "detect_kind": "sage_core.corpora",
    "load_registry_for_slice": "sage_core.corpora", "LoadedTurns": "sage_core.corpora.common",
    "load_sgd_dialogues": "sage_core.corpora.sgd.loader",
    "load_multiwoz_schema": "sage_core.corpora.multiwoz.loader",
    "load_system_outputs": "sage_core.corpora.system_outputs.loader",
    # evaluator
    "Evaluator": "sage_core.evaluator.cascade", "CascadeConfig": "sage_core.evaluator.cascade",
    "compile_turn": "sage_core.evaluator.compile",
    # science
    "build_slice": "sage_core.science.slice_builder", "load_turns": "sage_core.science.slice_builder",
    "classification_metrics": "sage_core.science.metrics",
    "prf": "sage_core.science.statistics", "prf_from_counts": "sage_core.science.statistics",
    "bootstrap_ci": "sage_core.science.statistics",
    "bootstrap_cis": "sage_core.science.statistics", "paired_bootstrap": "sage_core.science.statistics",
    "holm_bonferroni": "sage_core.science.statistics",
    "selective_curve": "sage_core.science.selective", "f1_at_coverage": "sage_core.science.selective",
    "aurc": "sage_core.science.selective", "kept_count": "sage_core.science.selective",
    "per_class_recall": "sage_core.science.report.compute",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'sage_core' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # resolve once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
