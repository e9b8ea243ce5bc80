"""Dialogues page: first failing turn per annotator and evaluator, checked against a hand computation."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from audit import assignment, sampling
from sage_core.evaluator.cascade import CascadeConfig, Evaluator
from ui.loading import load_demo

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 180


@pytest.fixture()
def audit(db_url):
    """Demo turns, 3 per stratum; A labels like gold; B calls the first audited turn of one dialogue a failure
    and misses one gold failure, and leaves the last audited turn of another dialogue unlabelled."""
    ls = load_demo()
    # several turns per dialogue on purpose (the dialogue view); the default draws one per dialogue
    sample = sampling.stratified_sample(ls.turns, 3, seed=0, max_per_dialogue=None)
    assignment.create_audit_from_sample("dlg-audit", sample, db=db_url)
    tids = [s.turn.turn_id for s in sample.turns]
    a = {t: ls.by_id[t].gold.label for t in tids}
    b = dict(a)
    order = {t.turn_id: i for i, t in enumerate(ls.turns)}
    by_dlg: dict[str, list[str]] = {}
    for t in sorted(tids, key=order.get):
        by_dlg.setdefault(ls.by_id[t].dialogue_id, []).append(t)
    multi = next(d for d, ts in by_dlg.items() if len(ts) > 1 and a[ts[0]] == "acceptable")
    b[by_dlg[multi][0]] = "failure"
    missed = next(t for t in tids if a[t] == "failure" and ls.by_id[t].dialogue_id != multi)
    b[missed] = "acceptable"
    partial = next(d for d, ts in by_dlg.items() if len(ts) > 1 and d != multi)
    b.pop(by_dlg[partial][-1])
    for who, labels in (("ann-a", a), ("ann-b", b)):
        for t, lab in labels.items():
            assignment.submit_label("dlg-audit", who, t, lab, None, db=db_url)
    return ls, tids, by_dlg, {"ann-a": a, "ann-b": b}, multi, partial


def _first(ts, lab):
    return next((t for t in ts if lab.get(t) == "failure"), None)


def _cells(html: str) -> dict[str, list[str]]:
    out = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", html, flags=re.S):
        tds = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, flags=re.S)]
        if tds:
            out[tds[0]] = tds
    return out


def test_first_failures_links_and_agreement(audit):
    ls, tids, by_dlg, human, multi, partial = audit
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    at.button(key="run_one").click().run()  # SAGE-Core on the demo slice
    at.switch_page("pages/5_Dialogues.py").run()
    assert not at.exception and not at.error

    ev = Evaluator(ls.registry, CascadeConfig.named("sage-core", s2_backend="offline"))
    sage = {v.turn_id: v.label.value for v in ev.evaluate(ls.turns)}
    html = next(m.value for m in at.markdown if "sage-dlg" in m.value)
    header = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th>(.*?)</th>", html)]
    assert header == ["dialogue", "audited turns", "ann-a", "ann-b", "SAGE-Core / offline",
                      "annotators agree", "all agree"]
    cells = _cells(html)
    assert set(cells) == set(by_dlg)
    for dlg, ts in by_dlg.items():
        row = cells[dlg]
        assert row[1] == str(len(ts))
        fa, fb, fs = _first(ts, human["ann-a"]), _first(ts, human["ann-b"]), _first(ts, sage)
        assert row[2] == (fa or "no failure")
        assert row[4] == (fs or "no failure")
        if dlg == partial:  # ann-b did not label the whole dialogue: not counted in the agreement
            assert row[3] == (f"{fb} (partial)" if fb else "not fully labelled")
            assert row[5] == "-"
        else:
            assert row[3] == (fb or "no failure")
            assert row[5] == ("yes" if fa == fb else "no")
        assert row[6] == ("yes" if len({fa, fs} | ({fb} if dlg != partial else set())) == 1 else "no")
        for t in {fa, fb, fs} - {None}:
            assert f'href="Inspector?turn={t}' in html
    assert by_dlg[multi][0] == _first(by_dlg[multi], human["ann-b"]) and cells[multi][5] == "no"
    # the SAGE column links to the SAGE run in the Inspector
    if _first(by_dlg[multi], sage):
        assert "run=SAGE-Core%20%2F%20offline" in html

    pairs = next(d.value for d in at.dataframe if "same first failure" in d.value.columns)
    pairs = pairs.set_index(["source A", "source B"])
    both = [ts for d, ts in by_dlg.items() if d != partial]
    same = sum(_first(ts, human["ann-a"]) == _first(ts, human["ann-b"]) for ts in both)
    assert pairs.loc[("ann-a", "ann-b"), "dialogues both labelled"] == len(both)
    assert pairs.loc[("ann-a", "ann-b"), "same first failure"] == pytest.approx(same / len(both))
    same_s = sum(_first(ts, human["ann-a"]) == _first(ts, sage) for ts in by_dlg.values())
    assert pairs.loc[("SAGE-Core / offline", "ann-a"), "dialogues both labelled"] == len(by_dlg)
    assert pairs.loc[("SAGE-Core / offline", "ann-a"), "same first failure"] == pytest.approx(same_s / len(by_dlg))

    # only the disagreeing dialogues
    at.toggle(key="dlg_only_diff").set_value(True).run()
    html = next(m.value for m in at.markdown if "sage-dlg" in m.value)
    assert multi in _cells(html)


def test_uploaded_baseline_is_a_source(audit):
    ls, tids, by_dlg, human, multi, partial = audit
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.switch_page("pages/5_Dialogues.py").run()
    csv = "turn_id,label\n" + "".join(f"{t},failure\n" for t in tids)
    at.file_uploader(key="dlg_baselines").set_value([("always_fail.csv", csv.encode(), "text/csv")]).run()
    assert not at.exception and not at.error
    cells = _cells(next(m.value for m in at.markdown if "sage-dlg" in m.value))
    for dlg, ts in by_dlg.items():
        assert cells[dlg][-3] == ts[0]  # flags everything: the first audited turn


def test_dialogues_page_is_not_served_to_annotators(monkeypatch, db_url):
    monkeypatch.setenv("SAGE_ANNOTATION_ONLY", "1")
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert not any("Dialogues" == t.value for t in at.title)
