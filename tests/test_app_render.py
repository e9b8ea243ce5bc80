"""HTML helpers of the pages: escaping, span highlighting, state-diff rows, content hashes."""
from __future__ import annotations

import re

from sage_core.data.types import Utterance
from ui import render
from ui.loading import content_hash, load_demo


def test_highlight_escapes_text_and_marks_exact_spans():
    text = "Book <Luigi's> for 4 & 5"
    out = render.highlight(text, [(5, 14, "1 IUV", "IUV"), (19, 20, "2 UV", "UV")])
    assert "<Luigi" not in out and "&lt;Luigi&#x27;s&gt;" in out and "&amp;" in out
    marks = re.findall(r'<mark class="sage-span"[^>]*>(.*?)<sup>(.*?)</sup></mark>', out)
    assert marks == [("&lt;Luigi&#x27;s&gt;", "1 IUV"), ("4", "2 UV")]
    # the text around the marks is unchanged once tags are stripped
    plain = re.sub(r"<sup>.*?</sup>", "", out)
    plain = re.sub(r"<[^>]+>", "", plain)
    assert plain == "Book &lt;Luigi&#x27;s&gt; for 4 &amp; 5"


def test_overlapping_and_out_of_range_spans():
    out = render.highlight("abcdefgh", [(1, 4, "1 IUV", "IUV"), (2, 6, "2 UV", "UV"), (6, 99, "3 PC", "PC")])
    assert out.count("<mark") == 1
    assert ">bcdef<sup>1 IUV, 2 UV</sup>" in out
    assert out.endswith("gh")


def test_state_diff_rows_are_classified():
    html = render.state_diff_html({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "9", "d": "4"})
    rows = {slot: cls for cls, slot in re.findall(r'<tr class="(\w*)"><td><code>(\w)</code>', html)}
    assert rows == {"a": "", "b": "changed", "c": "removed", "d": "written"}


def test_history_and_badge_escape():
    html = render.history_html([Utterance("user", "<b>hi</b>")])
    assert "&lt;b&gt;hi&lt;/b&gt;" in html
    assert "start of the dialogue" in render.history_html([])
    assert render.badge("failure").count("#b91c1c") == 1


def test_content_hash_changes_with_turns_and_schema():
    ls = load_demo()
    h = content_hash(ls.turns, ls.registry)
    assert h == ls.content_hash == load_demo().content_hash
    assert content_hash(ls.turns[:-1], ls.registry) != h
    spec = next(iter(ls.registry))
    spec.required = spec.required[:-1]
    assert content_hash(ls.turns, ls.registry) != h


def test_turn_view_escapes_every_piece_of_text():
    """The Inspector's turn view (header, trace, stage attempts, repairs, meta) puts no user text into the page
    as markup: a hostile value, id, reply and meta entry come out escaped."""
    import dataclasses

    from sage_core import UserValue
    from sage_core.evaluator.cascade import CascadeConfig, Evaluator
    from ui import turn_view

    ls = load_demo()
    t = next(t for t in ls.turns if t.gold.label == "failure" and t.user_values)
    evil = "<img src=x onerror=alert(1)>"
    u = t.user + " " + evil
    bad = dataclasses.replace(t, user=u, user_values=[UserValue("party_size", evil, (len(u) - len(evil), len(u)))],
                              meta={"injected": "IUV", "original_agent": evil, "note": evil,
                                    "reference": {"reward": 0.0}})
    v = Evaluator(ls.registry, CascadeConfig.named("sage-core", s2_backend="offline")).evaluate([bad])[0]
    assert v.predicted_failure and v.repairs and v.traces
    parts = [turn_view.header_html(evil, evil, evil, v.label.value, v.confidence, evil, evil),
             turn_view.trace_html(v), turn_view.attempts_html(v), turn_view.repairs_html(v),
             turn_view.injection_html(bad.meta, bad.agent)]
    for p in parts:
        assert "<img" not in p and "<script" not in p
    assert any("&lt;img src=x onerror=alert(1)&gt;" in p for p in parts[1:4])  # the value reached the trace
    assert parts[0].count("&lt;img") == 5
    rec = parts[4]
    assert rec.startswith('<details class="sage-att" open>') and "Injection record: IUV" in rec
    assert "reward" in rec  # the lead's view: every meta entry, escaped
    other = turn_view.injection_html({"note": evil}, bad.agent)
    assert other.startswith('<details class="sage-att">') and "Turn metadata (meta)" in other  # collapsed
    assert turn_view.injection_html({}, "x") == ""
    assert turn_view.trace_html(v).count("<tr") == len(v.traces) + 1


def test_user_line_breaks_cannot_end_an_html_block():
    """Markdown ends an HTML block at a blank line and reads what follows as Markdown again: user text with
    "\\n\\n" then a link or image must stay text inside the block (a real browser fetched the image before)."""
    evil = "hello\r\n\r\n![x](http://127.0.0.1:9/x.png)\n\n[link](http://127.0.0.1:9/)"
    for out in (render.esc(evil), render.utterance_box("user", render.esc(evil)),
                render.history_html([Utterance("user", evil)]), render.highlight(evil, [(0, 5, "1 UV", "UV")]),
                render.state_diff_html({"a": evil}, {"a": evil + "!"})):
        assert "\n" not in out and "\r" not in out
    assert render.esc("a\nb") == "a&#10;b"  # still a line break for the browser (shown under pre-wrap)


def test_counts_take_the_noun_in_the_right_number():
    assert [render.count(n, "disagreement") for n in (0, 1, 2)] == ["0 disagreements", "1 disagreement",
                                                                    "2 disagreements"]
