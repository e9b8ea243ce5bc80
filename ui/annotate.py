"""Annotation helpers: the blind payload's history and creating an audit from the current slice.

The sampling design (strata, seed, inclusion probabilities) and the blind
payload are the audit module's (``audit.sampling``, ``create_audit_from_sample``);
this only collects the parameters. It reports the audit's name and size but
not its strata, whose names are failure classes: the annotation page shows
nothing derived from reference labels or verdicts.
"""
from __future__ import annotations

import streamlit as st

from audit import blinding, sampling
from audit.assignment import create_audit_from_sample
from sage_core import Utterance

from .errors import message
from .render import md
from .session import peek_slice

STRATA = {"slice labels (failure class or clean)": "gold", "latest SAGE run": "sage"}


def history(payload: dict) -> list[Utterance]:
    return [Utterance(h.get("speaker", "?"), h.get("text", "")) for h in payload.get("history") or []]


DESIGNS = {"paper protocol (half failures balanced by class, half clean)": "paper",
           "equal quota per stratum": "equal"}


def sample_current_slice(name: str, n: int, seed: int, by: str = "gold", design: str = "paper",
                         max_per_dialogue: int = 1):
    """Seeded stratified sample of the current slice stored as a new audit (``db`` from settings).

    ``design`` "paper": ``sampling.paper_protocol`` with ``n`` turns in total;
    "equal": ``sampling.stratified_sample`` with ``n`` turns per stratum. At most
    ``max_per_dialogue`` turns of one dialogue, never two that expose an injection.
    The design records the slice's injection modes and templated replies (``audit.blinding``).
    """
    from . import runs

    ls = peek_slice()
    key = sampling.gold_stratum
    if by == "sage":
        done = runs.runs_for(ls)
        if not done:
            raise ValueError("run SAGE on the home page first, or stratify by the slice labels")
        key = sampling.labels_stratum({v.turn_id: v.label.value for v in done[-1].verdicts},
                                      {v.turn_id: (v.fired_classes or [None])[0] for v in done[-1].verdicts})
    k = int(max_per_dialogue)
    if design == "paper":
        sample = sampling.paper_protocol(ls.turns, n=int(n), seed=int(seed), key=key, max_per_dialogue=k)
    else:
        sample = sampling.stratified_sample(ls.turns, int(n), key=key, seed=int(seed), max_per_dialogue=k)
    rep = blinding.blinding_report([x.turn for x in sample.turns])
    sample.design.update({"slice": ls.name, "slice_hash": ls.content_hash, "strata_by": by,
                          "injection_modes": rep["injection_modes"],
                          "templated_replies": len(rep["templated_replies"]), "exposures": rep["exposures"]})
    return create_audit_from_sample(name, sample, workflows=ls.registry)


def _create() -> None:
    s = st.session_state
    try:
        design = DESIGNS[s.get("aud_design", next(iter(DESIGNS)))]
        n = s.get("aud_total", 200) if design == "paper" else s.get("aud_n", 3)
        info = sample_current_slice(s.get("aud_name", ""), n, s.get("aud_seed", 0),
                                    STRATA[s.get("aud_by", next(iter(STRATA)))], design,
                                    s.get("aud_per_dialogue", 1))
        s["aud_created"] = f"Created audit '{md(info.name)}' with {info.n_turns} turns."
        if info.n_turns < int(n) and design == "paper":
            s["aud_created"] += (f" {int(n)} were asked for: the strata of this slice hold fewer turns that can be "
                                 f"drawn at {s.get('aud_per_dialogue', 1)} per dialogue.")
        s["aud_created"] += (f" Blinding check: {info.design.get('exposures', 0)} turns expose another's "
                             "injection" + (f"; {info.design['templated_replies']} templated replies"
                                            if info.design.get("templated_replies") else "") + ".")
        short = (info.design.get("dialogue_rule") or {}).get("shortfall") or {}
        if short:
            # want = min(asked, held): what the rule cost, beyond the stratum's size
            per = s.get("aud_per_dialogue", 1)
            s["aud_created"] += (f" At {per} per dialogue, some strata gave fewer turns than they hold or were asked "
                                 "for: " + ", ".join(f"{k} {v} fewer" for k, v in sorted(short.items())) + ".")
        s["ann_audit"] = info.name
    except Exception as exc:  # noqa: BLE001 - shown with st.error, never a traceback
        s["aud_error"] = message(exc) if hasattr(exc, "detail") else f"Cannot create the audit: {exc}"


def slice_blinding_notice(turns, key: str = "") -> None:
    """Say whether the slice's failures were injected from templates (recognisable replies) or naturally.

    ``key`` (the slice's content hash) caches the scan in the session: the page reruns on every click.
    """
    cache = st.session_state.setdefault("_aud_blinding", {})
    if key and key in cache:
        modes, templ = cache[key]
    else:
        modes, templ = blinding.injection_modes(turns), blinding.templated_reply_turns(turns)
        if key:
            cache.clear()
            cache[key] = (modes, templ)
    if templ:
        st.warning(f"This slice carries **{len(templ)} templated replies** (template injection: WNF and PC replies "
                   "written from fixed phrases an annotator can learn to recognise). Audit a slice built with "
                   "`build-slice --injection natural` instead.", icon=":material/warning:")
    elif modes.get("template"):
        st.caption(f"Template injection ({modes['template']} turns), state edits only: no templated reply.")
    elif modes.get("natural"):
        st.caption(f"Natural injection ({modes['natural']} turns): no templated reply.")
    else:
        st.caption("No injection record in this slice (real failures or unlabelled turns).")


def create_audit_section() -> None:
    """Expander: sample an audit from the slice loaded on the home page."""
    with st.expander("Create an audit from the current slice"):
        ls = peek_slice()
        st.caption(f"Current slice: {md(ls.name)} ({len(ls.turns)} turns). Turns are drawn per stratum without "
                   "replacement with a fixed seed; inclusion probabilities are stored for weighting.")
        c = st.columns([2, 2, 2])
        c[0].text_input("Audit name", key="aud_name", placeholder="e.g. demo-audit-1")
        c[1].selectbox("Design", list(DESIGNS), key="aud_design")
        c[2].selectbox("Strata", list(STRATA), key="aud_by")
        slice_blinding_notice(ls.turns, ls.content_hash)
        c = st.columns([2, 1, 1])
        if DESIGNS[st.session_state.get("aud_design", next(iter(DESIGNS)))] == "paper":
            c[0].number_input("Turns in total", 1, 100_000, min(200, max(1, len(ls.turns))), key="aud_total",
                              help="The paper's protocol draws 200; a smaller slice offers at most its own size.")
        else:
            c[0].number_input("Turns per stratum", 1, 10_000, 3, key="aud_n")
        c[1].number_input("Seed", 0, 2**31 - 1, 0, key="aud_seed")
        c[2].number_input("Turns per dialogue (max)", 1, 50, 1, key="aud_per_dialogue",
                          help="Blind by construction: a later turn of a dialogue shows the original reply and "
                               "state of an earlier injected turn. With more than one per dialogue, combinations "
                               "that expose an injection are still never drawn.")
        st.button("Create audit", key="aud_create", on_click=_create)
        if "aud_error" in st.session_state:
            st.error(st.session_state.pop("aud_error"))
        if "aud_created" in st.session_state:
            st.success(st.session_state.pop("aud_created"))
