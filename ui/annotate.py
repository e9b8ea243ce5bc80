"""Annotation helpers: the blind payload's history and creating an audit from the current slice.

The sampling design (strata, seed, inclusion probabilities) is the audit
module's; this only collects the parameters and reports what was created.
"""
from __future__ import annotations

import importlib.util

import streamlit as st

from sage_core.types import Utterance


def history(payload: dict) -> list[Utterance]:
    return [Utterance(h.get("speaker", "?"), h.get("text", "")) for h in payload.get("history") or []]


def create_audit_section() -> None:
    """Expander: sample an audit from the slice loaded on the home page."""
    with st.expander("Create an audit from the current slice"):
        if importlib.util.find_spec("audit.sampling") is None:
            st.info("Audit sampling (audit.sampling) is not available in this checkout yet.")
            return
        st.info("audit.sampling found; creation form pending.")
