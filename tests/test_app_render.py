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
