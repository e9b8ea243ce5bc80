"""Lead views: Home without gold (flag rate, classes, undecided and why), the Inspector's injection record,
and the template warning when an audit is created from a slice with templated replies."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from audit import blinding
from sage_core import build_slice
from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from sage_core.science.report.compute import strip_annotations
from ui import render, verdict_summary
from ui.loading import DEMO_SCHEMA, load_demo

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
TIMEOUT = 180


def _upload(turns, name="s.jsonl") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key="load_source").set_value("Upload").run()
    data = "".join(json.dumps(t.to_dict()) + "\n" for t in turns).encode()
    at.file_uploader(key="load_files").set_value([(name, data, "application/json")])
    at.file_uploader(key="load_schema_file").set_value(("schema.json", DEMO_SCHEMA.read_bytes(), "application/json"))
    at.run()
    at.button(key="load_upload_btn").click().run()
    assert not at.exception and not at.error
    return at


@pytest.fixture(scope="module")
def no_gold():
    """Demo turns as real logs: no gold, no annotations; the first six also without user text."""
    ls = load_demo()
    turns = strip_annotations(copy.deepcopy(ls.turns))
    for t in turns:
        t.gold = None
    for t in turns[:6]:
        t.user = ""
    ev = Evaluator(ls.registry, CascadeConfig.named("sage-core", s2_backend="offline"))
    return turns, ev.evaluate(turns)


def test_summary_of_a_run_without_gold(no_gold):
    _, vs = no_gold
    s = verdict_summary.summary(vs)
    assert s["n"] == len(vs)
    assert s["flag_rate"] == pytest.approx(sum(v.label.value == "failure" for v in vs) / len(vs))
    undecided = [v for v in vs if v.label.value == "undecided"]
    assert undecided and s["undecided_share"] == pytest.approx(len(undecided) / len(vs))
    reason = "UV: no user text in u_t or history to ground the value in"
    assert s["reasons"][reason] >= 1  # the turns without user text cannot ground their values
    assert all(any(tr.final.decision.value == "abstain" for tr in v.traces) for v in undecided)
    assert sum(s["classes"].values()) >= s["labels"].get("failure", 0)


def test_home_without_gold_shows_flag_rate_classes_and_undecided_reasons(db_url, no_gold):
    turns, vs = no_gold
    at = _upload(turns, "nogold.jsonl")
    at.button(key="run_one").click().run()
    assert not at.exception and not at.error
    s = verdict_summary.summary(vs)
    m = {x.label: x.value for x in at.metric}
    assert m["Flag rate"] == f"{s['flag_rate']:.1%}" and m["Undecided"] == f"{s['undecided_share']:.1%}"
    reasons = next(d.value for d in at.dataframe if "reason" in d.value.columns)
    assert dict(zip(reasons["reason"], reasons["turns"])) == dict(s["reasons"])
    if s["classes"]:
        classes = next(d.value for d in at.dataframe if "share of flagged" in d.value.columns)
        assert dict(zip(classes["class"], classes["turns"])) == s["classes"]


@pytest.fixture(scope="module")
def template_slice():
    ls = load_demo()
    out, _ = build_slice(ls.turns, ls.registry, n=40, rate=0.5, cap_per_intent=40, cap_files_per_service=40,
                         seed=0, injection="template")
    return out


def test_inspector_shows_the_injection_record_and_position(db_url, template_slice):
    at = _upload(template_slice, "tmpl.jsonl")
    wnf = next(t for t in template_slice if blinding.injected_class(t) == "WNF")
    at.switch_page("pages/1_Inspector.py")
    at.query_params["turn"] = wnf.turn_id
    at.run()
    assert not at.exception and not at.error
    md = "\n".join(m.value for m in at.markdown)
    assert '<details class="sage-att" open><summary><b>Injection record: WNF</b></summary>' in md  # opened
    assert "original agent reply (before injection)" in md
    assert render.esc(wnf.meta["original_agent"]) in md and wnf.meta["original_agent"] != wnf.agent
    assert render.esc('"injected": "WNF"') in md  # the record itself, escaped JSON
    ids = at.selectbox(key="insp_turn").options
    assert any(c.value.startswith("Turn ") and f" of {len(ids)}" in c.value for c in at.caption)


def test_audit_creation_warns_about_templated_replies(db_url, template_slice):
    at = _upload(template_slice, "tmpl.jsonl")
    at.switch_page("pages/2_Blind_annotation.py").run()
    assert not at.exception
    n = len(blinding.templated_reply_turns(template_slice))
    assert any(f"{n} templated replies" in w.value for w in at.warning)
    at.text_input(key="aud_name").set_value("tmpl-audit")
    at.number_input(key="aud_total").set_value(12)
    at.button(key="aud_create").click().run()
    assert not at.exception and not at.error
    from db import get_audit
    d = get_audit("tmpl-audit").design
    assert d["injection_modes"].get("template", 0) > 0 and d["exposures"] == 0
    assert d["dialogue_rule"]["max_per_dialogue"] == 1
