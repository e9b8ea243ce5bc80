"""The annotator's guidelines panel and the lead's guidelines editor (logic in ``audit.guidelines``).

``panel(audit, payload)`` is the one call the annotation page makes: the
audit's guidelines (the lead's Markdown, trusted, or the text generated from
the workflow specs) in an expander, and the turn's workflow context (required
slots, which are filled in s_{t-1}, legal next fields). Its inputs are the
stored specs and the blind payload's workflow and state before: no gold, meta,
injection record or verdict can reach it. Data strings are Markdown-escaped.
"""
from __future__ import annotations

import streamlit as st

from audit import guidelines as gl
from db import get_guidelines, save_guidelines


def _stored(audit: str):
    """The audit's guidelines row, read once per rerun of the page (session-keyed by audit)."""
    return get_guidelines(audit)


def panel(audit: str, payload: dict) -> None:
    """Guidelines expander + the turn's workflow context."""
    g = _stored(audit)
    with st.expander("Guidelines: the four failure classes", expanded=False):
        st.markdown(gl.guidelines_text(g.markdown, g.workflows))
    ctx = gl.context_for(g.workflows, payload)
    if ctx is None:
        st.caption(f"No workflow spec stored with this audit for {gl.md_escape(payload.get('workflow', ''))}.")
    else:
        st.markdown(gl.context_markdown(ctx))


def editor(audit: str, lead: str = "") -> None:
    """Lead: edit the audit's guidelines in Markdown ("Restore generated" empties the override)."""
    g = _stored(audit)
    generated = gl.default_guidelines(gl.spec_from_dict(d) for d in g.workflows.values())
    key = f"gl_text::{audit}"
    if key not in st.session_state:
        st.session_state[key] = g.markdown or generated
    st.text_area("Guidelines (Markdown) shown to the annotators of this audit", key=key, height=320)
    c = st.columns([1, 1, 4])
    if c[0].button("Save guidelines", key=f"gl_save::{audit}", type="primary"):
        text = st.session_state[key]
        save_guidelines(audit, "" if text.strip() == generated.strip() else text, by=lead)
        st.success("Saved: annotators see these guidelines from their next turn.")
    if c[1].button("Restore generated", key=f"gl_reset::{audit}"):
        save_guidelines(audit, "", by=lead)
        st.session_state.pop(key, None)
        st.rerun()
    c[2].caption("Last edited " + (f"by {gl.md_escape(g.updated_by)} " if g.updated_by else "")
                 + (f"at {g.updated_at:%Y-%m-%d %H:%M} UTC" if g.updated_at else "never (generated text)"))
    with st.expander("Preview"):
        st.markdown(gl.guidelines_text(st.session_state[key], g.workflows))
