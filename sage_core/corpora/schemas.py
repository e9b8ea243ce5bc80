"""Loading a schema for a corpus: the generic spec reader plus the corpus profile that goes with it.

``sage_core.specs`` reads spec files without knowing any corpus; this module
recognises which corpus a registry describes and attaches that corpus's
``CorpusProfile`` (and applies its schema overlay, e.g. MultiWOZ's booking
requirements). Every entry point that loads a schema for evaluation goes
through ``load_schema`` so the CLI, the app and the benchmarks judge by the
same workflows.
"""
from __future__ import annotations

from pathlib import Path

from sage_core.corpora.multiwoz.booking_overlay import is_multiwoz_registry
from sage_core.corpora.multiwoz.profile import MULTIWOZ_PROFILE
from sage_core.corpora.sgd.profile import SGD_PROFILE
from sage_core.data.profile import EMPTY_PROFILE, CorpusProfile
from sage_core.specs.loading import load_workflows
from sage_core.specs.workflow import WorkflowRegistry


def profile_for(registry: WorkflowRegistry) -> CorpusProfile:
    """MultiWOZ 2.2 registries get the MultiWOZ profile, other SGD-format schemas the SGD one, our YAML none."""
    if is_multiwoz_registry(registry):
        return MULTIWOZ_PROFILE
    if registry.format == "sgd-schema":
        return SGD_PROFILE
    return EMPTY_PROFILE


def attach_profile(registry: WorkflowRegistry, profile: CorpusProfile | None = None) -> WorkflowRegistry:
    """Set ``registry.profile`` (recognised when not given) and apply its schema overlay; returns the registry."""
    registry.profile = profile if profile is not None else profile_for(registry)
    if registry.profile.schema_overlay is not None:
        registry.profile.schema_overlay(registry)
    return registry


def load_schema(path: str | Path) -> WorkflowRegistry:
    """A schema file (SGD-format ``schema.json`` or our YAML spec) with its corpus profile attached."""
    return attach_profile(load_workflows(path))
