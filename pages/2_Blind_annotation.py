"""Blind annotation: label sampled turns from the dialogue alone (any signed-in account).

This page shows only the blind payload stored with the audit (history, user
utterance, agent reply, state pair). It never reads reference labels or any
evaluator output, so neither can reach the page, its HTML or its widgets.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from audit import assignment
from db import label_history, split_classes
from db.models import CLASSES as CLASS_NAMES
from ui import annotate, guidelines, render, shortcuts
from ui.audits import audits_or_stop
from ui.errors import guard, message
from ui.session import annotation_only
from ui.auth import require  # noqa: E402

ME = require("annotator")  # the first call: gates a direct URL, the sidebar and a first visit after a restart

st.title("Blind annotation")
st.markdown(render.STYLE, unsafe_allow_html=True)

ITEM, ERR, CONFLICT = "ann_item", "ann_error", "ann_conflict"
LABELS = ["acceptable", "failure", "unsure"]
CLASSES = list(CLASS_NAMES)  # IUV, WNF, PC, UV: one checkbox each, several may be ticked
CLASS_HELP = {"IUV": "ignored user value", "WNF": "wrong next field (asks for the wrong slot)",
              "PC": "premature confirmation", "UV": "unsupported value written to the state"}
me = ME.name  # the signed-in account (ui.auth): labels, seats and drafts are stored under it


def _fail(exc: Exception) -> None:
    if isinstance(exc, assignment.ChangedElsewhereError):
        st.session_state[CONFLICT] = message(exc).removeprefix("Input error: ")
    else:
        st.session_state[ERR] = message(exc)


def _class_key(c: str, tid: str) -> str:
    return f"ann_class_{c}::{tid}"


def _forget(tid: str) -> None:
    for k in ("label", "note", "ver"):
        st.session_state.pop(f"ann_{k}::{tid}", None)
    for c in CLASSES:
        st.session_state.pop(_class_key(c, tid), None)


def _values(tid: str):
    """(label, classes, note) of the form; classes only for a failure (ticked boxes of another label are ignored)."""
    label = st.session_state.get(f"ann_label::{tid}")
    cls = [c for c in CLASSES if st.session_state.get(_class_key(c, tid))] if label == "failure" else []
    return label, (cls or None), st.session_state.get(f"ann_note::{tid}", "")


def _autosave(audit: str, tid: str) -> None:
    label, cls, note = _values(tid)
    try:
        rec = assignment.save_draft(audit, me, tid, label, cls, note,
                                    expected_version=st.session_state.get(f"ann_ver::{tid}"))
        st.session_state[f"ann_ver::{tid}"] = rec.seq
        st.session_state["ann_saved"] = tid
    except Exception as exc:  # noqa: BLE001 - shown to the user, never a traceback
        _fail(exc)


def _submit(audit: str, tid: str) -> None:
    label, cls, note = _values(tid)
    try:
        assignment.submit_label(audit, me, tid, label, cls, note,
                                expected_version=st.session_state.get(f"ann_ver::{tid}"))
        st.session_state.pop(ITEM, None)
        _forget(tid)
        st.session_state["ann_done"] = tid
    except Exception as exc:  # noqa: BLE001
        _fail(exc)


def _skip(audit: str, tid: str) -> None:
    try:
        assignment.skip_turn(audit, me, tid)
        st.session_state.pop(ITEM, None)
        _forget(tid)
    except Exception as exc:  # noqa: BLE001
        _fail(exc)


def _reload(tid: str) -> None:
    """After a "changed elsewhere" message: drop this tab's copy and load the stored version."""
    item = st.session_state.pop(ITEM, None)
    _forget(tid)
    st.session_state.pop(CONFLICT, None)
    if item is not None and item.current is not None:  # reviewing a submitted label: reopen it
        st.session_state["ann_open"] = tid


def _open(tid: str) -> None:
    """Open one of my submitted turns to review or revise its label."""
    cur = st.session_state.get(ITEM)
    if cur is not None:
        _forget(cur.turn_id)
    st.session_state.pop(ITEM, None)
    st.session_state["ann_open"] = tid


def _back_to_queue(tid: str) -> None:
    st.session_state.pop(ITEM, None)
    _forget(tid)


def _label_form(audit: str, item, mine: dict) -> None:
    tid = item.turn_id
    d = item.draft
    reviewing = item.current is not None
    if item.resumed and d is not None:
        st.caption("Resumed your autosaved draft.")
    keys = {"label": f"ann_label::{tid}", "note": f"ann_note::{tid}"}
    if keys["label"] not in st.session_state:  # restore once: a newer draft, else the submitted label
        src = d if d is not None else item.current
        if src is not None:
            st.session_state[keys["label"]] = src.label
            have = set(split_classes(src.failure_class))  # "IUV,UV" (or an old single class "PC")
            for c in CLASSES:
                st.session_state[_class_key(c, tid)] = c in have
            st.session_state[keys["note"]] = src.note or ""
        st.session_state[f"ann_ver::{tid}"] = item.version
    if reviewing:
        st.info(f"Reviewing your submitted label ({item.current.label}"
                f"{' · ' + ', '.join(split_classes(item.current.failure_class)) if item.current.failure_class else ''}). "
                "Submit again to revise it; every version is kept.")
    with st.container(key="ann_label_box"):
        st.radio("Is the agent's turn acceptable?", LABELS, index=None, key=keys["label"],
                 horizontal=True, on_change=_autosave, args=(audit, tid),
                 help="unsure: you cannot tell from the dialogue; the turn goes to the lead's adjudication")
    not_failure = st.session_state.get(keys["label"]) != "failure"
    st.markdown("Failure classes (optional, several allowed)")
    with st.container(key="ann_class_box", horizontal=True):
        for c in CLASSES:
            st.checkbox(c, key=_class_key(c, tid), help=CLASS_HELP[c], on_change=_autosave, args=(audit, tid),
                        disabled=not_failure)
    with st.container(key="ann_note_box"):  # saved while typing (ui/shortcuts.py) and when left
        st.text_area("Note (optional)", key=keys["note"], on_change=_autosave, args=(audit, tid), height=80)
    if CONFLICT in st.session_state:
        st.error(st.session_state[CONFLICT])
        st.button("Reload this turn", key="ann_reload", on_click=_reload, args=(tid,))
    with st.container(key="ann_actions", horizontal=True):
        prev = [t for t in mine if t != tid]
        st.button("Previous", key="ann_prev", on_click=_open, args=(prev[-1],) if prev else ("",),
                  disabled=not prev, help="open your last submitted label (p)")
        st.button("Revise label" if reviewing else "Submit label", type="primary", key="ann_submit",
                  on_click=_submit, args=(audit, tid), disabled=st.session_state.get(keys["label"]) is None,
                  help="Ctrl+Enter")
        if reviewing:
            st.button("Next", key="ann_next", on_click=_back_to_queue, args=(tid,), help="back to your queue (n)")
        else:
            st.button("Skip", key="ann_skip", on_click=_skip, args=(audit, tid), help="give the turn back (n)")
    if st.session_state.get("ann_saved") == tid:
        st.caption("Draft saved.")
    st.caption(shortcuts.HELP)
    versions = label_history(audit, turn_id=tid, annotator=me)
    if versions:
        st.markdown("**Your versions of this label** (oldest first)")
        # st.table renders Markdown in its cells: the note is escaped like every user string
        st.table(pd.DataFrame([{"version": i, "label": r.label, "class": r.failure_class or "",
                                "note": render.md(r.note), "submitted": r.created_at.strftime("%Y-%m-%d %H:%M:%S")}
                               for i, r in enumerate(versions, start=1)]).set_index("version"))


with guard():
    if ERR in st.session_state:
        st.error(st.session_state.pop(ERR))
    st.markdown(f"Signed in as **{render.md(me)}**")

    if ME.is_lead and not annotation_only():
        annotate.create_audit_section()
    audits = audits_or_stop("No audit yet: ask the audit lead to create one." if not ME.is_lead or annotation_only()
                            else "No audit yet: create one from the current slice above.")
    names = [a.name for a in audits]
    if st.session_state.get("ann_audit") not in names:
        st.session_state["ann_audit"] = names[-1]
    audit = st.selectbox("Audit", names, key="ann_audit")
    audit_id = next(a.id for a in audits if a.name == audit)

    if ME.is_lead:  # a lead sees gold and verdicts on the other pages: labelling would unblind the audit
        prog = assignment.progress(audit)
        st.progress(prog.fraction, text=f"Audit: {prog.labels_submitted}/{prog.labels_needed} labels, "
                                        f"{prog.turns_complete}/{prog.n_turns} turns complete")
        st.info("Leads do not label: they can see reference labels and verdicts. Annotators sign in with their "
                "own accounts (Accounts page) and get their turns here.")
        st.stop()
    prog = assignment.progress(audit, me)
    mine_total = (prog.mine_submitted or 0) + (prog.mine_remaining or 0)
    st.progress(prog.mine_submitted / mine_total if mine_total else 1.0,
                text=f"You: {prog.mine_submitted} submitted, {prog.mine_remaining} left · "
                     f"audit: {prog.labels_submitted}/{prog.labels_needed} labels, "
                     f"{prog.turns_complete}/{prog.n_turns} turns complete")
    if "ann_done" in st.session_state:
        st.toast(f"Saved label for {render.md(st.session_state.pop('ann_done'))}")

    mine = assignment.annotator_labels(audit, me)  # my own current labels only (never a partner's)
    mine = dict(sorted(mine.items(), key=lambda kv: kv[1].created_at))
    item = st.session_state.get(ITEM)
    opening = st.session_state.pop("ann_open", None)
    if opening and opening in mine:
        item = assignment.open_turn(audit, me, opening)
        st.session_state[ITEM] = item
    if item is None or item.audit_id != audit_id:
        item = assignment.next_turn_for(audit, me)
        st.session_state[ITEM] = item
    if item is None:
        st.success("Nothing left for you in this audit. Thank you!")
    else:
        p = item.payload
        st.markdown(f"#### Turn {render.code(item.turn_id)}", unsafe_allow_html=True)
        left, right = st.columns([3, 2])
        with left:
            st.markdown(render.utterance_box("history", render.history_html(annotate.history(p))),
                        unsafe_allow_html=True)
            st.markdown(render.utterance_box("user", render.esc(p.get("user", ""))), unsafe_allow_html=True)
            st.markdown(render.utterance_box("agent reply", render.esc(p.get("agent", ""))),
                        unsafe_allow_html=True)
        with right:
            guidelines.panel(audit, p)  # names the workflow: with its spec, or in "no spec stored for ..."
            st.markdown("**Tracker state before and after the user's utterance**")
            st.markdown(render.state_diff_html(p.get("state_before") or {}, p.get("state_after") or {}),
                        unsafe_allow_html=True)
        _label_form(audit, item, mine)
        shortcuts.install()

    if mine:
        with st.expander(f"Your submitted labels ({len(mine)})"):
            st.dataframe([{"turn_id": r.turn_id, "label": r.label, "class": r.failure_class or "",
                           "note": r.note} for r in mine.values()], hide_index=True)
            c = st.columns([3, 1])
            c[0].selectbox("Review or revise", list(mine), key="ann_pick", index=len(mine) - 1)
            c[1].button("Open", key="ann_open_btn", on_click=lambda: _open(st.session_state.get("ann_pick", "")))
