"""Exports: formula-safe CSV, JSONL, and the audit bundle that continues an audit on another server."""
from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest
from test_db_support import sqlite_url  # noqa: F401  (fixture)

import db
from audit import assignment as asg
from audit import consensus as cs
from audit import exports, sampling
from sage_core.data.types import Gold, Turn, Utterance

NASTY = ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2", "@SUM(A1)", "\tx", "\rx", "'quoted"]


def _turns(n=8):
    return [Turn(f"t{i}", f"d{i}", "S_1:I", [Utterance("user", f"hi {i}")], f"user {i}", f"agent {i}",
                 {}, {"x": str(i)}, gold=Gold("failure", "UV") if i % 3 == 0 else Gold("acceptable"),
                 meta={"injected": "UV" if i % 3 == 0 else "none"}) for i in range(n)]


@pytest.fixture
def url(tmp_path):
    return f"sqlite:///{tmp_path / 'one.db'}"


def _audit(url):
    s = sampling.stratified_sample(_turns(), 10, seed=0)
    asg.create_audit_from_sample("x1", s, db=url)
    tids = [x.turn.turn_id for x in s.turns]
    return tids


def test_formula_prefixes_are_neutralised_in_every_csv(url):
    tids = _audit(url)
    for tid, note in zip(tids, NASTY):
        asg.submit_label("x1", "=cmd|' /C calc'!A0", tid, "acceptable", note=note, db=url)
    for text in (exports.history_csv("x1", db=url), exports.results_csv("x1", db=url)):
        cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
        assert not any(c[:1] in ("=", "+", "-", "@", "\t", "\r") for c in cells)
        for note in NASTY:
            assert "'" + note in cells
        assert "'=cmd|' /C calc'!A0" in cells
    hist = list(csv.DictReader(io.StringIO(exports.history_csv("x1", db=url))))
    assert sorted(exports.unneutralise(r["note"]) for r in hist) == sorted(NASTY)
    assert hist[0]["seq"] == "1"  # numbers are not touched
    df = pd.DataFrame({"evaluator": ["=evil()", "ok"], "F1": [-0.5, 0.25]})
    back = list(csv.reader(io.StringIO(exports.dataframe_csv(df))))
    assert back[1] == ["'=evil()", "-0.5"] and back[2] == ["ok", "0.25"]
    assert exports.neutralise(-3) == -3 and exports.unneutralise(exports.neutralise("-3")) == "-3"


def test_jsonl_exports_sheet_blind_results_history(url):
    tids = _audit(url)
    asg.submit_label("x1", "ann", tids[0], "failure", "UV", note="=1", db=url)
    sheet = [json.loads(line) for line in exports.annotation_sheet_jsonl("x1", db=url).splitlines()]
    assert [r["turn_id"] for r in sheet] == [t.turn_id for t in db.audit_turns("x1", db=url)]
    blob = json.dumps(sheet)
    assert "gold" not in blob and "stratum" not in blob and "injected" not in blob and "inclusion" not in blob
    assert sheet[0]["history"] == [{"speaker": "user", "text": f"hi {sheet[0]['turn_id'][1:]}"}]
    res = [json.loads(line) for line in exports.results_jsonl("x1", db=url).splitlines()]
    assert {r["turn_id"] for r in res} == set(tids) and "gold_label" in res[0]
    hist = [json.loads(line) for line in exports.history_jsonl("x1", db=url).splitlines()]
    assert hist == [dict(r, seq=int(r["seq"]), note=exports.unneutralise(r["note"]))
                    for r in csv.DictReader(io.StringIO(exports.history_csv("x1", db=url)))]
    assert hist[0]["note"] == "=1"


def _snapshot(url, name):
    hist = [(r.annotator, r.turn_id, r.seq, r.kind, r.label, r.failure_class, r.note, r.prev_label, r.prev_class,
             r.created_at.replace(tzinfo=None)) for r in db.label_history(name, kinds=("draft", "submit", "skip"), db=url)]
    cur = {t: {a: (r.label, r.failure_class, r.note) for a, r in by.items()}
           for t, by in db.current_labels(name, db=url).items()}
    turns = [(t.turn_id, t.dialogue_id, t.position, t.stratum, t.inclusion_prob, t.gold_label, t.gold_class, t.payload)
             for t in db.audit_turns(name, db=url)]
    adj = [(r.turn_id, r.seq, r.label, r.failure_class, r.reason, r.lead) for r in db.adjudication_history(name, db=url)]
    g = db.get_guidelines(name, db=url)
    strata = db.audit_strata(name, db=url)
    prog = {w: asg.progress(name, w, db=url) for w in ("alice", "bob", "carol")}
    return hist, cur, turns, adj, (g.markdown, g.workflows), strata, prog


def test_bundle_round_trip_into_a_fresh_database(tmp_path):
    a_url, b_url = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    tids = _audit(a_url)
    db.save_guidelines("x1", "## Rules\n=not a formula here", by="lead", workflows={"S_1:I": {"id": "S_1:I"}},
                       db=a_url)
    for t in tids[:5]:
        asg.submit_label("x1", "alice", t, "acceptable", note="-ok", db=a_url)
        asg.submit_label("x1", "bob", t, "failure" if t == tids[0] else "acceptable",
                         "UV" if t == tids[0] else None, db=a_url)
    asg.submit_label("x1", "alice", tids[1], "failure", "IUV", note="changed my mind", db=a_url)  # a revision
    asg.skip_turn("x1", "carol", tids[6], db=a_url)
    it = asg.next_turn_for("x1", "carol", db=a_url)
    asg.save_draft("x1", "carol", it.turn_id, "failure", None, "half done", db=a_url)
    db.adjudicate("x1", tids[0], "failure", "UV", "the value is never mentioned", lead="lead", db=a_url)
    bundle = exports.audit_bundle_jsonl("x1", db=a_url)

    info = exports.import_audit_bundle(bundle, db=b_url)
    assert info.name == "x1"
    assert _snapshot(a_url, "x1") == _snapshot(b_url, "x1")
    assert exports.audit_bundle_jsonl("x1", db=b_url) == bundle  # the import loses nothing
    _, cons_b = cs.load_consensus("x1", db=b_url)
    assert cons_b.adjudicated == {tids[0]: "UV"} and cons_b.reasons[tids[0]] == "the value is never mentioned"
    # the audit continues: carol resumes her draft, bob's and alice's seats are kept
    again = asg.next_turn_for("x1", "carol", db=b_url)
    assert again.turn_id == it.turn_id and again.resumed and again.draft.note == "half done"
    asg.submit_label("x1", "carol", again.turn_id, "acceptable", db=b_url)
    with pytest.raises(db.QuotaFullError):
        asg.submit_label("x1", "carol", tids[2], "acceptable", db=b_url)
    assert [r.seq for r in db.label_history("x1", turn_id=tids[1], annotator="alice", db=b_url)] == [1, 2]
    with pytest.raises(db.AuditError):
        exports.import_audit_bundle(bundle, db=b_url)  # the name exists
    assert exports.import_audit_bundle(bundle, db=b_url, name="x1-copy").n_turns == len(tids)
    with pytest.raises(db.AuditError):
        exports.import_audit_bundle('{"kind": "turn"}\n', db=b_url, name="bad")


def test_filled_sheet_is_imported_as_one_annotators_labels(url):
    tids = _audit(url)
    rows = list(csv.DictReader(io.StringIO(exports.annotation_sheet_csv("x1", db=url))))
    rows[0].update(label="failure", failure_class="UV", note="'=looks like a formula")
    rows[1].update(label="acceptable")
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    assert exports.import_sheet_csv("x1", "dora", buf.getvalue(), db=url) == 2
    cur = db.current_labels("x1", db=url)
    assert (cur[rows[0]["turn_id"]]["dora"].label, cur[rows[0]["turn_id"]]["dora"].note) == ("failure", "=looks like a formula")
    assert cur[rows[1]["turn_id"]]["dora"].label == "acceptable" and len(cur) == 2
    rows[2].update(label="maybe")
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows[2:3])
    with pytest.raises(db.AuditError, match="sheet row 2"):
        exports.import_sheet_csv("x1", "dora", buf.getvalue(), db=url)


def test_filled_jsonl_sheet_is_imported(url):
    _audit(url)
    rows = [json.loads(line) for line in exports.annotation_sheet_jsonl("x1", db=url).splitlines()]
    rows[0].update(label="failure", failure_class="UV", note="=raw text in JSONL")
    text = "".join(json.dumps(r) + "\n" for r in rows)
    assert exports.import_sheet_jsonl("x1", "eve", text, db=url) == 1
    r = db.current_labels("x1", db=url)[rows[0]["turn_id"]]["eve"]
    assert (r.label, r.failure_class, r.note) == ("failure", "UV", "=raw text in JSONL")
    with pytest.raises(db.AuditError, match="line 1"):
        exports.import_sheet_jsonl("x1", "eve", "not json\n", db=url)
