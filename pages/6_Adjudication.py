"""Adjudication: the lead resolves each disagreement with a label, failure classes and a reason.

Disagreements include every turn where a rater said ``unsure`` (``audit.consensus``); a
resolution is acceptable or failure (never unsure), a failure with any number of classes.

Lead page (like Agreement, it shows the annotators' labels and notes). The
resolution is stored in its own table (``db.adjudicate``), never over the raw
labels: agreement statistics keep using the raw labels, the consensus set and
the exports use the resolution (``audit.consensus.build_consensus``). The turn
is shown as the annotators saw it (blind payload), without gold, so the
resolution is not anchored on the reference label. Also here: the audit's
guidelines (Markdown shown to annotators) and importing an audit bundle or a
filled annotation sheet exported from another server.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from audit import consensus as cons
from audit import exports
from audit.guidelines import md_escape
from db import adjudicate, adjudications, audit_turns, split_classes
from db.models import CLASSES as CLASS_NAMES
from ui import annotate, guidelines, render
from ui.audits import audits_or_stop
from ui.errors import guard, message
from ui.auth import require  # noqa: E402

ME = require("lead")  # the first call: gates a direct URL, the sidebar and a first visit after a restart

st.title("Adjudication")
st.markdown(render.STYLE, unsafe_allow_html=True)

CLASSES = list(CLASS_NAMES)


def _resolve(audit: str, tid: str) -> None:
    s = st.session_state
    label = s.get(f"adj_label::{tid}")
    cls = [c for c in s.get(f"adj_class::{tid}") or [] if c in CLASSES] if label == "failure" else None
    try:
        adjudicate(audit, tid, label or "", cls, s.get(f"adj_reason::{tid}", ""),
                   lead=ME.name)
        s["adj_done"] = tid
    except Exception as exc:  # noqa: BLE001 - shown to the lead, never a traceback
        s["adj_error"] = message(exc) if hasattr(exc, "detail") else str(exc)


def _turn_box(t) -> None:
    p = t.payload
    left, right = st.columns([3, 2])
    with left:
        st.markdown(render.utterance_box("history", render.history_html(annotate.history(p))), unsafe_allow_html=True)
        st.markdown(render.utterance_box("user", render.esc(p.get("user", ""))), unsafe_allow_html=True)
        st.markdown(render.utterance_box("agent reply", render.esc(p.get("agent", ""))), unsafe_allow_html=True)
    with right:
        st.markdown(render.state_diff_html(p.get("state_before") or {}, p.get("state_after") or {}),
                    unsafe_allow_html=True)


def _import_section() -> None:
    with st.expander("Import an audit from another server"):
        up = st.file_uploader("Audit bundle (JSONL, from the Agreement page)", type=["jsonl"], key="adj_bundle")
        new_name = st.text_input("Import under the name (empty: the bundle's)", key="adj_bundle_name")
        if up is not None and st.button("Import bundle", key="adj_bundle_go"):
            info = exports.import_audit_bundle(up.getvalue().decode("utf-8", errors="replace"),
                                               name=new_name.strip() or None)
            st.success(f"Imported audit '{md_escape(info.name)}' ({info.n_turns} turns) with its labels and history.")


def _sheet_section(audit: str) -> None:
    with st.expander("Import a filled annotation sheet (CSV or JSONL) as one annotator's labels"):
        who = st.text_input("Annotator", key="adj_sheet_who")
        up = st.file_uploader("Annotation sheet", type=["csv", "jsonl"], key="adj_sheet")
        if up is not None and who.strip() and st.button("Import labels", key="adj_sheet_go"):
            read = exports.import_sheet_jsonl if up.name.lower().endswith(".jsonl") else exports.import_sheet_csv
            n = read(audit, who.strip(), up.getvalue().decode("utf-8", errors="replace"))
            st.success(f"Imported {n} labels for {md_escape(who.strip())}.")


def _shown(value) -> str:
    """A rater's value as the lead reads it: a class alone ("PC") is a failure of that class."""
    if value is None:
        return "not labelled"
    return value if value in ("acceptable", "failure", "unsure") else f"failure ({value})"


with guard():
    if "adj_error" in st.session_state:
        st.error(st.session_state.pop("adj_error"))
    _import_section()
    names = [a.name for a in audits_or_stop("No audit yet: create one on the Blind annotation page.")]
    c1, c2 = st.columns([2, 1])
    audit = c1.selectbox("Audit", names, index=len(names) - 1, key="adj_audit")
    level = c2.radio("Disagree on", ["category", "label"], horizontal=True, key="adj_level",
                     format_func=lambda x: {"label": "binary label", "category": "label + class"}[x])

    with st.expander("Guidelines shown to the annotators of this audit"):
        guidelines.editor(audit, ME.name)
    _sheet_section(audit)

    labels = cons.load_audit_labels(audit)
    res = adjudications(audit)
    consensus = cons.build_consensus(labels, level, res)
    dis = consensus.disagreements
    st.caption(f"{render.count(consensus.n_pairs, 'turn')} with two or more labels · "
               f"{render.count(len(dis), 'disagreement')} · {len(consensus.adjudicated)} resolved")
    if "adj_done" in st.session_state:
        st.success(f"Resolved {md_escape(st.session_state.pop('adj_done'))}.")
    if not dis:
        st.info("No disagreement to resolve.")
        st.stop()

    st.dataframe(pd.DataFrame([{"turn_id": d.turn_id, "dialogue": d.dialogue_id,
                                "labels": "; ".join(f"{a}: {_shown(v)}" for a, v in zip(d.annotators, d.values)),
                                "resolution": consensus.adjudicated.get(d.turn_id, ""),
                                "reason": consensus.reasons.get(d.turn_id, "")} for d in dis]),
                 hide_index=True, key="adj_table")
    only_open = st.toggle("Unresolved only", value=True, key="adj_open")
    todo = [d for d in dis if not (only_open and d.turn_id in consensus.adjudicated)]
    if not todo:
        st.success("Every disagreement is resolved.")
        st.stop()
    ids = [d.turn_id for d in todo]
    if st.session_state.get("adj_turn") not in ids:
        st.session_state["adj_turn"] = ids[0]
    tid = st.selectbox("Disagreement", ids, key="adj_turn",
                       format_func=lambda x: f"{x} ({ids.index(x) + 1} of {len(ids)})")
    d = next(x for x in todo if x.turn_id == tid)
    turn = next(t for t in audit_turns(audit) if t.turn_id == tid)
    # HTML blocks (<h4>, <ul>), not Markdown lines: Markdown would still read "**x**" or "![x](http://host/y)" in an
    # escaped annotator note, and the browser would fetch the image
    st.markdown(f"<h4>Turn {render.code(tid)}</h4>", unsafe_allow_html=True)
    _turn_box(turn)
    st.markdown("<ul>" + "".join(f"<li><b>{render.esc(a)}</b>: {render.esc(_shown(v))}"
                                 + (f" — {render.esc(n)}" if n else "") + "</li>"
                                 for a, v, n in zip(d.annotators, d.values, d.notes)) + "</ul>",
                unsafe_allow_html=True)
    prev = res.get(tid)
    if prev is not None:
        st.caption(f"Resolved by {md_escape(prev.lead)} as {md_escape(prev.category)} "
                   f"({prev.created_at:%Y-%m-%d %H:%M} UTC): {md_escape(prev.reason)}. "
                   "A new resolution replaces it; the history keeps both.")
    lk, ck, rk = f"adj_label::{tid}", f"adj_class::{tid}", f"adj_reason::{tid}"
    if lk not in st.session_state and prev is not None:
        st.session_state[lk], st.session_state[ck] = prev.label, list(split_classes(prev.failure_class))
    f = st.columns([1, 1, 3])
    f[0].radio("Resolution", ["acceptable", "failure"], index=None, key=lk)
    f[1].multiselect("Failure classes", CLASSES, key=ck, disabled=st.session_state.get(lk) != "failure",
                     help="several allowed")
    f[2].text_area("Reason (required)", key=rk, height=90)
    st.button("Resolve", type="primary", key=f"adj_go::{tid}", on_click=_resolve, args=(audit, tid),
              disabled=st.session_state.get(lk) is None)
