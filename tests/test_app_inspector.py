"""Inspector page: deep link to a failure turn, its deciding stage and repair, filters, next/previous."""
from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sage_core.data.types import Decision
from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from ui import table
from ui.loading import load_demo

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 180


@pytest.fixture(scope="module")
def demo_verdicts():
    ls = load_demo()
    ev = Evaluator(ls.registry, CascadeConfig.named("sage-core", s2_backend="offline"))
    return ls, {v.turn_id: v for v in ev.evaluate(ls.turns)}


def _inspector(turn: str | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    at.switch_page("pages/1_Inspector.py")
    if turn:
        at.query_params["turn"] = turn
    return at.run()


def _md(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def _trace_rows(at) -> list[tuple[bool, list[str]]]:
    """The criterion-trace table's body rows as (shaded as a failure, cell texts), parsed from the page's HTML."""
    block = next(m.value for m in at.markdown if 'class="sage-trace"' in m.value)
    body = block.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    out = []
    for tr in re.findall(r"<tr([^>]*)>(.*?)</tr>", body, re.S):
        cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr[1], re.S)]
        out.append(('class="fired"' in tr[0], cells))
    return out


def test_deep_link_opens_failure_turn_with_stage_and_repair(demo_verdicts):
    ls, verdicts = demo_verdicts
    # a gold failure that SAGE flags: pick it from the data, not by hand
    tid = next(t.turn_id for t in ls.turns if t.gold.label == "failure" and verdicts[t.turn_id].repairs)
    v = verdicts[tid]
    at = _inspector(tid)
    assert not at.exception and not at.error
    assert at.selectbox(key="insp_turn").value == tid
    assert f"<h3><code>{tid}</code></h3>" in _md(at)  # the id in an escaped <code> element (issue 10)
    rows = _trace_rows(at)
    assert len(rows) == len(v.traces)
    fired = [tr for tr in v.traces if tr.final.decision == Decision.TRUE]
    assert fired
    for tr in fired:  # a shaded row names the class, "failure present" and the deciding stage
        assert any(shaded and cells[1] == tr.criterion.type.value and cells[2] == "failure present"
                   and cells[3] == tr.final.stage.value for shaded, cells in rows)
    assert all(shaded == (cells[2] == "failure present") for shaded, cells in rows)
    for r in v.repairs:
        assert html.escape(r.message) in _md(at)  # shown HTML-escaped (issue 10)
    assert "failure" in _md(at) and "Outcome" in _md(at)


def test_extracted_turn_shows_abstaining_stage_and_highlighted_span(demo_verdicts):
    ls, verdicts = demo_verdicts
    t = next(t for t in ls.turns if t.user_values is None and any(
        tr.criterion.span and tr.criterion.evidence == "user" for tr in verdicts[t.turn_id].traces))
    at = _inspector(t.turn_id)
    rows = [cells for _, cells in _trace_rows(at)]
    # S1 decides only annotated evidence: on an unannotated turn it abstains and S2 decides
    assert any("S1" in cells[5] for cells in rows)
    assert {"S2-symbolic", "S2-encoder"} & {cells[3] for cells in rows}
    assert 'class="sage-span"' in _md(at)
    assert "the compiler extracted the evidence" in "\n".join(c.value for c in at.caption)


def test_false_positive_filter_matches_gold(demo_verdicts):
    ls, verdicts = demo_verdicts
    expected = [t.turn_id for t in ls.turns if t.gold.label == "acceptable" and verdicts[t.turn_id].predicted_failure]
    at = _inspector()
    at.selectbox(key="f_errors").set_value("false positives").run()
    assert not at.exception
    shown = at.dataframe[0].value
    assert list(shown["turn_id"]) == expected
    if expected:
        assert at.selectbox(key="insp_turn").value == expected[0]


def test_next_previous_follow_the_filtered_table_and_update_url(demo_verdicts):
    ls, _ = demo_verdicts
    at = _inspector()
    at.multiselect(key="f_gold").set_value(["failure"]).run()
    ids = [t.turn_id for t in ls.turns if t.gold.label == "failure"]
    assert list(at.dataframe[0].value["turn_id"]) == ids
    assert at.selectbox(key="insp_turn").value == ids[0]
    at.button(key="insp_next").click().run()
    assert at.selectbox(key="insp_turn").value == ids[1]
    assert at.query_params["turn"] == ids[1]
    at.button(key="insp_prev").click().run()
    assert at.selectbox(key="insp_turn").value == ids[0]
    assert at.button(key="insp_prev").disabled and not at.button(key="insp_next").disabled
    assert any(c.value.startswith(f"Turn 1 of {len(ids)}") for c in at.caption)
    at.selectbox(key="insp_turn").set_value(ids[-1]).run()
    assert at.button(key="insp_next").disabled
    assert any(c.value == f"Turn {len(ids)} of {len(ids)} · last turn" for c in at.caption)  # no silent wrap


def test_unknown_deep_link_warns():
    at = _inspector("no-such-turn")
    assert not at.exception
    assert any("no-such-turn" in w.value for w in at.warning)


def test_filters_are_pure_and_combine():
    import pandas as pd

    df = pd.DataFrame([
        {"turn_id": "a", "verdict": "failure", "gold": "acceptable", "gold class": "", "fired": "PC",
         "stages": "S1,S2-symbolic", "outcome": "FP"},
        {"turn_id": "b", "verdict": "acceptable", "gold": "failure", "gold class": "UV", "fired": "",
         "stages": "S1", "outcome": "FN"},
        {"turn_id": "c", "verdict": "undecided", "gold": "failure", "gold class": "IUV", "fired": "",
         "stages": "none", "outcome": "undecided (FN)"},
    ])
    assert list(table.apply(df, table.Filters(classes=["PC"]))["turn_id"]) == ["a"]
    assert list(table.apply(df, table.Filters(errors="false negatives"))["turn_id"]) == ["b", "c"]
    assert list(table.apply(df, table.Filters(stages=["S2-symbolic"]))["turn_id"]) == ["a"]
    assert list(table.apply(df, table.Filters(golds=["failure"], errors="undecided"))["turn_id"]) == ["c"]
    assert table.apply(df, table.Filters(verdicts=["failure"], golds=["failure"])).empty


def test_deep_link_in_a_new_session_opens_the_loaded_slice_and_run():
    """A link opened in a new tab (new session) names the slice and the run: the Inspector opens them, not the demo."""
    import json

    from ui.loading import DEMO_SCHEMA

    turns = load_demo().turns[:6]
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    at.radio(key="load_source").set_value("Upload").run()
    at.file_uploader(key="load_files").set_value(
        [("six.jsonl", "".join(json.dumps(t.to_dict()) + "\n" for t in turns).encode(), "application/json")])
    at.file_uploader(key="load_schema_file").set_value(("schema.json", DEMO_SCHEMA.read_bytes(), "application/json"))
    at.run()
    at.button(key="load_upload_btn").click().run()
    at.selectbox(key="run_config").set_value("no_S2").run()
    at.button(key="run_one").click().run()
    assert not at.exception and not at.error
    slice_hash = at.query_params["slice"]  # kept in the URL, so a refresh keeps the slice too
    assert slice_hash

    fresh = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    fresh.switch_page("pages/1_Inspector.py")
    fresh.query_params.update({"turn": turns[3].turn_id, "slice": slice_hash, "run": "no_S2 / offline"})
    fresh.run()
    assert not fresh.exception and not fresh.warning
    assert fresh.selectbox(key="insp_run").value == "no_S2 / offline"
    assert fresh.selectbox(key="insp_turn").value == turns[3].turn_id
    assert "6 turns" in "\n".join(c.value for c in fresh.caption)


def test_large_slice_lists_a_bounded_table_and_jumps_by_typed_id(db_url, tmp_path, monkeypatch):
    """Above MAX_PICK_OPTIONS filtered turns the Inspector sends neither every id (selectbox options) nor every
    table row to the browser on each Next; a typed id jumps, an unknown one is named, Next still walks every turn."""
    import json
    import os

    demo = load_demo()
    rows = []
    for k in range(60):  # 2,400 annotated turns: the run stays fast
        for t in demo.turns:
            d = t.to_dict()
            d["turn_id"], d["dialogue_id"] = f"{t.turn_id}~{k}", f"{t.dialogue_id}~{k}"
            rows.append(json.dumps(d))
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    schema = REPO / "data" / "demo" / "schema.json"
    monkeypatch.setenv("SAGE_DATA_ROOTS", os.pathsep.join([str(tmp_path), str(schema.parent)]))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    at.radio(key="load_source").set_value("Path on disk").run()
    at.text_input(key="load_path").set_value(str(path)).run()
    at.text_input(key="load_schema_path").set_value(str(schema)).run()
    at.button(key="load_path_btn").click().run()
    at.button(key="run_one").click().run()
    assert not at.exception and not at.error
    at.switch_page("pages/1_Inspector.py").run()
    assert not at.exception and not at.error
    assert not [s for s in at.selectbox if s.key == "insp_turn"]  # no 2,400-option picker
    listed = next(d.value for d in at.dataframe if "turn_id" in d.value.columns)
    assert len(listed) == 1000 and "lists the first 1,000" in "\n".join(c.value for c in at.caption)
    first = listed["turn_id"].iloc[0]
    assert f"<code>{first}</code>" in _md(at)
    far = f"{demo.turns[7].turn_id}~59"  # beyond the listed rows
    at.text_input(key="insp_jump").set_value(far).run()
    assert f"<code>{far}</code>" in _md(at)
    at.button(key="insp_next").click().run()
    assert f"<code>{demo.turns[8].turn_id}~59</code>" in _md(at)
    at.text_input(key="insp_jump").set_value("no-such-turn").run()
    assert any("no-such-turn" in w.value for w in at.warning)
    assert f"<code>{demo.turns[8].turn_id}~59</code>" in _md(at)  # stays on the turn shown


def test_turn_table_is_built_once_per_run_not_per_session(demo_verdicts):
    """The turn table is memoised on the run (process-wide store), so a new browser session (every page load)
    reuses it; another slice content under the same run object gets its own table."""
    import dataclasses

    from ui.runs import RunResult

    ls, verdicts = demo_verdicts
    res = RunResult(ls.content_hash, "sage-core", "offline", "offline", list(verdicts.values()), 1.0)
    first = table.turn_table_cached(ls, res)
    assert list(first["turn_id"]) == [t.turn_id for t in ls.turns]
    assert table.turn_table_cached(ls, res) is first  # no rebuild
    other = dataclasses.replace(ls, content_hash="another-slice")
    assert table.turn_table_cached(other, res) is not first
