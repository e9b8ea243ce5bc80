"""Inspector: one turn at a time (state diff, criterion trace, repairs, injection record) and a filterable table.

Deep link: ``?turn=<turn_id>`` opens that turn; the URL follows the turn shown.
Previous / Next move through the filtered turns and stop at both ends (no
silent wrap-around); the position is shown as "k of n".
"""
from __future__ import annotations

import streamlit as st

from sage_core import ROUTING_STAGES, TurnLabel, get_settings
from ui import render, runs, table, tool_steps, turn_view
from ui.errors import guard
from ui.session import current_slice, slice_caption
from ui.auth import require  # noqa: E402

ME = require("lead")  # the first call: gates a direct URL, the sidebar and a first visit after a restart

st.title("Inspector")
st.markdown(render.STYLE + turn_view.STYLE, unsafe_allow_html=True)
slice_caption()

TURN = "insp_turn"  # selectbox key: the turn shown
QP_SEEN = "_insp_qp"  # last ?turn= value applied or written


def _filters(df) -> table.Filters:
    with st.expander("Filters", expanded=True):
        c = st.columns(5)
        f = table.Filters(
            verdicts=c[0].multiselect("Verdict", ["failure", "acceptable", "undecided"], key="f_verdict"),
            golds=c[1].multiselect("Gold", ["failure", "acceptable", "none"], key="f_gold"),
            classes=c[2].multiselect("Failure class", ["IUV", "WNF", "PC", "UV"], key="f_class"),
            stages=c[3].multiselect("Deciding stage", list(ROUTING_STAGES), key="f_stage"),
            errors=c[4].selectbox("Show", table.ERROR_FILTERS, key="f_errors"),
        )
    return f


def _go(ids: list[str], step: int) -> None:
    """Move by ``step`` inside the list; stays on the first / last turn (the buttons are disabled there)."""
    cur = st.session_state.get(TURN)
    i = ids.index(cur) if cur in ids else 0
    st.session_state[TURN] = ids[min(max(i + step, 0), len(ids) - 1)]


MAX_PICK_OPTIONS = 2000  # above this many filtered turns the turn picker is a text box, not a selectbox
MAX_TABLE_ROWS = 1000  # rows the table sends to the browser; filters narrow it, Previous / Next reach every turn
JUMP, JUMP_MISS = "insp_jump", "_insp_jump_miss"


def _jump(ids: list[str]) -> None:
    """The typed turn id becomes the turn shown, if it is among the filtered turns."""
    want = (st.session_state.get(JUMP) or "").strip()
    st.session_state[JUMP_MISS] = None
    if want in ids:
        st.session_state[TURN] = want
    elif want:
        st.session_state[JUMP_MISS] = want


def _table_pick(ids: list[str]) -> None:
    rows = st.session_state["insp_table"]["selection"]["rows"]
    if rows:
        st.session_state[TURN] = ids[rows[0]]


def _turn_detail(ls, res, tid: str) -> None:
    """The turn shown: a few HTML blocks (see ui/turn_view.py for why not widgets), redrawn on each Next."""
    t, v = ls.by_id[tid], res.by_id[tid]
    gold = t.gold.label if t.gold else None
    gold_txt = f"{gold}" + (f" ({t.gold.failure_class})" if t.gold and t.gold.failure_class else "") if gold else "none"
    st.markdown(turn_view.header_html(tid, t.workflow, t.dialogue_id, v.label.value, v.confidence, gold_txt,
                                      runs.outcome(v, gold)), unsafe_allow_html=True)
    st.caption(f"Deciding stages: {', '.join(runs.deciding_stages(v)) or 'none (no criteria)'} · "
               f"latency {v.latency_ms:.1f} ms · paid calls {v.paid_calls} · cost ${v.cost_usd:.4f} · "
               f"S2 backend {render.md(v.s2_backend)}")
    spans = {"user": [], "agent": []}
    for i, tr in enumerate(v.traces, start=1):
        c = tr.criterion
        if c.span and c.evidence in spans:
            spans[c.evidence].append((c.span[0], c.span[1], f"{i} {c.type.value}", c.type.value))
    tool_step = tool_steps.step(t)  # a tool-calling agent's step: tool outputs collapsed
    left, right = st.columns([3, 2])
    hist = tool_steps.STYLE + tool_steps.history_html(t.history) if tool_step else render.history_html(t.history)
    left.markdown("**History**\n\n" + render.utterance_box("history", hist)
                  + render.utterance_box("user (u_t)", render.highlight(t.user, spans["user"]))
                  + render.utterance_box("agent (a_t)", render.highlight(t.agent, spans["agent"])),
                  unsafe_allow_html=True)
    if t.user_values is None and t.agent_acts is None and not tool_step:
        left.caption("No `user_values` / `agent_acts` in the slice: the compiler extracted the evidence "
                     "(heuristics, with a confidence), so S1 defers to S2.")
    right.markdown("**State diff**" + (" (the call's arguments)" if tool_step else "") + "\n\n"
                   + (tool_steps.call_html(t) if tool_step else "")
                   + render.state_diff_html(t.state_before, t.state_after)
                   + (tool_steps.flags_html(v) if tool_step else ""), unsafe_allow_html=True)

    st.markdown("**Criterion trace** (each row: one failure hypothesis; *failure present* = the failure is there)")
    if not v.traces:
        st.caption(f"No criteria were compiled for this turn: acceptable, but nothing was checked, so its confidence "
                   f"is {v.confidence:.2f}, not 1.0 (the share of such turns that are acceptable; annotated evidence "
                   "can miss less than extracted evidence).")
    else:
        st.markdown(turn_view.trace_html(v) + turn_view.attempts_html(v), unsafe_allow_html=True)
        st.caption(f"margin: how decisively the deciding stage answered (S1 rules = 1.0; S2 decides only when "
                   f"|margin| >= tau = {get_settings().tau}); abstained: the stages that could not decide; open a "
                   "criterion below the table for its arguments and every stage's attempt. "
                   "The turn's confidence is the chance the verdict is right, from its label and the smallest "
                   "margin over decided criteria: (1 + margin) / 2 with annotated evidence; with evidence read "
                   "from text, a map fitted on SGD dev (0.5 when undecided).")
    record = turn_view.injection_html(t.meta or {}, t.agent)
    if record:
        st.markdown(record, unsafe_allow_html=True)
    st.markdown("**Repair signals**")
    if v.repairs:
        st.markdown(turn_view.repairs_html(v), unsafe_allow_html=True)
    elif v.label == TurnLabel.FAILURE:
        st.caption("No repair signal was produced.")
    else:
        st.caption("None: nothing fired.")


@st.fragment
def _navigator(ls, res, ids: list[str], outcomes: dict) -> None:
    """Previous / Next / pick a turn: reruns only this fragment, not the table above (10k+ turn slices)."""
    with guard():
        cur = st.session_state.get(TURN)
        k = ids.index(cur) if cur in ids else 0
        nav = st.columns([1, 4, 1])
        nav[0].button("Previous", on_click=_go, args=(ids, -1), key="insp_prev", width="stretch", disabled=k == 0)
        if len(ids) <= MAX_PICK_OPTIONS:
            nav[1].selectbox("Turn", ids, key=TURN, label_visibility="collapsed",
                             format_func=lambda x: f"{x}  ·  {outcomes.get(x, '')}")
        else:  # a selectbox would send every id to the browser on each Next: type an id instead
            nav[1].text_input("Turn id", key=JUMP, label_visibility="collapsed", on_change=_jump, args=(ids,),
                              placeholder=f"go to a turn id ({len(ids)} turns; or Previous / Next, or a table row)")
            if st.session_state.get(JUMP_MISS):
                st.warning(f"No turn '{render.md(st.session_state[JUMP_MISS])}' among the filtered turns.")
        nav[2].button("Next", on_click=_go, args=(ids, 1), key="insp_next", width="stretch",
                      disabled=k == len(ids) - 1)
        k = ids.index(st.session_state[TURN])
        st.caption(f"Turn {k + 1} of {len(ids)}" + (" · last turn" if k == len(ids) - 1 else "")
                   + (" · first turn" if k == 0 and len(ids) > 1 else ""))
        tid = st.session_state[TURN]
        st.query_params["turn"] = tid
        st.session_state[QP_SEEN] = tid
        _turn_detail(ls, res, tid)


with guard():
    ls = current_slice()
    done = runs.ensure_runs(ls)
    qr = st.query_params.get("run")  # deep links may name the run (e.g. from the Dialogues page)
    if qr and qr != st.session_state.get("_insp_qr"):
        st.session_state["_insp_qr"] = qr
        if qr in [r.key for r in done]:
            st.session_state["insp_run"] = qr
    res = runs.pick_run(done, key="insp_run")
    df = table.turn_table_cached(ls, res)
    shown = table.apply(df, _filters(df))
    ids = shown["turn_id"].tolist()  # .tolist(): iterating an Arrow-backed column is ~10x slower

    qp = st.query_params.get("turn")
    if qp and qp != st.session_state.get(QP_SEEN):
        st.session_state[QP_SEEN] = qp
        if qp in ls.by_id and qp in res.by_id:
            if qp not in ids:  # deep link wins over filters
                ids.insert(0, qp)
            st.session_state[TURN] = qp
        else:
            st.warning(f"Turn '{render.md(qp)}' from the link is not in this slice.")
    if not ids:
        st.info("No turn matches these filters.")
        st.stop()
    if st.session_state.get(TURN) not in ids:
        st.session_state[TURN] = ids[0]

    listed = shown.head(MAX_TABLE_ROWS)
    st.caption(f"{len(shown)} of {len(df)} turns match. Select a row to open it."
               + (f" The table lists the first {MAX_TABLE_ROWS:,}: filter to narrow it; Previous / Next and the turn "
                  "box reach every matching turn." if len(shown) > MAX_TABLE_ROWS else ""))
    st.dataframe(listed, hide_index=True, key="insp_table", on_select=lambda: _table_pick(listed["turn_id"].tolist()),
                 selection_mode="single-row", height=min(420, 38 + 35 * len(listed)),
                 column_config={"confidence": st.column_config.NumberColumn(format="%.3f"),
                                "criteria": st.column_config.NumberColumn(help="criteria compiled for the turn"),
                                "stages": st.column_config.TextColumn("deciding stages"),
                                "fired": st.column_config.TextColumn("fired classes"),
                                "annotated": st.column_config.CheckboxColumn(
                                    help="the slice gives user_values / agent_acts (else extracted)")})

    _navigator(ls, res, ids, dict(zip(df["turn_id"].tolist(), df["outcome"].tolist())))
