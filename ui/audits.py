"""What the coordinator pages share about audits: the audit list and imported baseline verdicts.

Baselines uploaded on one page (Agreement or Dialogues) are kept in the session so
the other page shows them too.
"""
from __future__ import annotations

import streamlit as st

from db import list_audits
from sage_core import parse_evaluator_verdicts

BASELINES = "sage_baselines"  # session: evaluator name -> EvaluatorVerdicts


def audits_or_stop(empty_message: str) -> list:
    """All audits, oldest first; with none, say how to make one and stop the page."""
    audits = list_audits()
    if not audits:
        st.info(empty_message)
        st.stop()
    return audits


def upload_baselines(label: str, key: str) -> dict:
    """Parse uploaded verdict files, remember them in the session, return the ones uploaded here."""
    files = st.file_uploader(label, accept_multiple_files=True, type=["jsonl", "json", "csv"], key=key)
    out = {}
    for f in files or []:
        ev = parse_evaluator_verdicts(f.getvalue().decode("utf-8", errors="replace"), f.name)
        out[ev.name] = ev
    st.session_state.setdefault(BASELINES, {}).update(out)
    return out


def session_baselines() -> dict:
    """Every baseline uploaded in this session, on any page."""
    return dict(st.session_state.get(BASELINES, {}))
