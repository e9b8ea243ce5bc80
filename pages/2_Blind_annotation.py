"""Blind annotation: label sampled turns from the dialogue alone.

This page shows only the blind payload stored with the audit (history, user
utterance, agent reply, state pair). It never reads reference labels or any
evaluator output, so neither can reach the page, its HTML or its widgets.
"""
from __future__ import annotations

import streamlit as st

from audit import assignment
from db import sign_in
from ui import annotate, guidelines, render
from ui.audits import audits_or_stop
from ui.errors import guard, message
from ui.session import annotation_only

st.title("Blind annotation")
st.markdown(render.STYLE, unsafe_allow_html=True)

NAME, ITEM, ERR = "ann_name", "ann_item", "ann_error"
CLASSES = ["(none)", "IUV", "WNF", "PC", "UV"]
CLASS_HELP = ("IUV ignored user value · WNF wrong next field (asks for the wrong slot) · "
              "PC premature confirmation · UV unsupported value written to the state")


def _fail(exc: Exception) -> None:
    st.session_state[ERR] = message(exc)


def _sign_in() -> None:
    try:
        info = sign_in(st.session_state.get("ann_name_input", ""))
        st.session_state[NAME] = info.name
        st.session_state.pop(ITEM, None)
    except Exception as exc:  # noqa: BLE001 - shown to the user, never a traceback
        _fail(exc)


def _sign_out() -> None:
    st.session_state.pop(NAME, None)
    st.session_state.pop(ITEM, None)


def _values(tid: str):
    label = st.session_state.get(f"ann_label::{tid}")
    cls = st.session_state.get(f"ann_class::{tid}")
    cls = None if cls in (None, "(none)") or label != "failure" else cls
    return label, cls, st.session_state.get(f"ann_note::{tid}", "")


def _autosave(audit: str, tid: str) -> None:
    label, cls, note = _values(tid)
    try:
        assignment.save_draft(audit, st.session_state[NAME], tid, label, cls, note)
        st.session_state["ann_saved"] = tid
    except Exception as exc:  # noqa: BLE001
        _fail(exc)


def _submit(audit: str, tid: str) -> None:
    label, cls, note = _values(tid)
    try:
        assignment.submit_label(audit, st.session_state[NAME], tid, label, cls, note)
        st.session_state.pop(ITEM, None)
        st.session_state["ann_done"] = tid
    except Exception as exc:  # noqa: BLE001
        _fail(exc)


def _skip(audit: str, tid: str) -> None:
    try:
        assignment.skip_turn(audit, st.session_state[NAME], tid)
        st.session_state.pop(ITEM, None)
    except Exception as exc:  # noqa: BLE001
        _fail(exc)


def _label_form(audit: str, item) -> None:
    tid = item.turn_id
    d = item.draft
    if item.resumed and d is not None:
        st.caption("Resumed your autosaved draft.")
    keys = {"label": f"ann_label::{tid}", "class": f"ann_class::{tid}", "note": f"ann_note::{tid}"}
    if keys["label"] not in st.session_state and d is not None:  # restore the draft once
        st.session_state[keys["label"]] = d.label
        st.session_state[keys["class"]] = d.failure_class or "(none)"
        st.session_state[keys["note"]] = d.note or ""
    st.radio("Is the agent's turn acceptable?", ["acceptable", "failure"], index=None, key=keys["label"],
             horizontal=True, on_change=_autosave, args=(audit, tid))
    st.selectbox("Failure class (optional)", CLASSES, key=keys["class"], help=CLASS_HELP,
                 on_change=_autosave, args=(audit, tid),
                 disabled=st.session_state.get(keys["label"]) != "failure")
    st.text_area("Note (optional)", key=keys["note"], on_change=_autosave, args=(audit, tid), height=80)
    c = st.columns([1, 1, 4])
    c[0].button("Submit label", type="primary", key=f"ann_submit::{tid}", on_click=_submit, args=(audit, tid),
                disabled=st.session_state.get(keys["label"]) is None)
    c[1].button("Skip", key=f"ann_skip::{tid}", on_click=_skip, args=(audit, tid))
    if st.session_state.get("ann_saved") == tid:
        c[2].caption("Draft saved.")


with guard():
    if ERR in st.session_state:
        st.error(st.session_state.pop(ERR))
    if NAME not in st.session_state:
        st.text_input("Your name", key="ann_name_input", placeholder="e.g. Alice")
        st.button("Sign in", on_click=_sign_in, key="ann_sign_in", type="primary")
        st.caption("Labels are stored under this name; sign in again with it to resume.")
        st.stop()
    me = st.session_state[NAME]
    top = st.columns([4, 1])
    top[0].markdown(f"Signed in as **{render.esc(me)}**")
    top[1].button("Sign out", on_click=_sign_out, key="ann_sign_out")

    if not annotation_only():
        annotate.create_audit_section()
    audits = audits_or_stop("No audit yet: ask the coordinator to create one." if annotation_only()
                            else "No audit yet: create one from the current slice above.")
    names = [a.name for a in audits]
    if st.session_state.get("ann_audit") not in names:
        st.session_state["ann_audit"] = names[-1]
    audit = st.selectbox("Audit", names, key="ann_audit")

    prog = assignment.progress(audit, me)
    mine_total = (prog.mine_submitted or 0) + (prog.mine_remaining or 0)
    st.progress(prog.mine_submitted / mine_total if mine_total else 1.0,
                text=f"You: {prog.mine_submitted} submitted, {prog.mine_remaining} left · "
                     f"audit: {prog.labels_submitted}/{prog.labels_needed} labels, "
                     f"{prog.turns_complete}/{prog.n_turns} turns complete")
    if "ann_done" in st.session_state:
        st.toast(f"Saved label for {st.session_state.pop('ann_done')}")

    item = st.session_state.get(ITEM)
    if item is None or item.audit_id != next(a.id for a in audits if a.name == audit):
        item = assignment.next_turn_for(audit, me)
        st.session_state[ITEM] = item
    if item is None:
        st.success("Nothing left for you in this audit. Thank you!")
    else:
        p = item.payload
        st.markdown(f"#### Turn `{render.esc(item.turn_id)}`", unsafe_allow_html=True)
        left, right = st.columns([3, 2])
        with left:
            st.markdown(render.utterance_box("history", render.history_html(annotate.history(p))),
                        unsafe_allow_html=True)
            st.markdown(render.utterance_box("user", render.esc(p.get("user", ""))), unsafe_allow_html=True)
            st.markdown(render.utterance_box("agent reply", render.esc(p.get("agent", ""))),
                        unsafe_allow_html=True)
        with right:
            guidelines.panel(audit, p)
            st.markdown("**Tracker state before and after the user's utterance**")
            st.markdown(render.state_diff_html(p.get("state_before") or {}, p.get("state_after") or {}),
                        unsafe_allow_html=True)
        _label_form(audit, item)

    mine = assignment.annotator_labels(audit, me)
    if mine:
        with st.expander(f"Your submitted labels ({len(mine)})"):
            st.dataframe([{"turn_id": r.turn_id, "label": r.label, "class": r.failure_class or "",
                           "note": r.note} for r in mine.values()], hide_index=True)
