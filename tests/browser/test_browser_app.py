"""Real-browser test: ``streamlit run app.py`` in headless Chromium, every page, two annotators.

Why beside the AppTests: only a browser shows that the pages really render
(charts, HTML, query-param deep links, websocket sessions), that labels
written from two browser sessions land in the SQLite file, and what the
annotator's DOM actually contains. Screenshots go to docs/screenshots/ for
the README (or ``$SAGE_SCREENSHOT_DIR``). Skipped, with the reason, when Chromium or chromedriver is absent.
"""
from __future__ import annotations

import sqlite3
import subprocess
import sys
import time

import pytest

from tests.browser.browser_support import (PW, REPO, WAIT, Browsers, button as _button, idle as _idle,
                                           server_env, shot as _shot, sign_in, start_streamlit, stop_streamlit,
                                           wait_text as _wait_text)
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from ui.loading import load_demo  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app on a free port with a fresh SQLite audit database and one audit of the demo slice."""
    tmp = tmp_path_factory.mktemp("browser")
    db_file = tmp / "audit.db"
    url = f"sqlite:///{db_file}"
    env = server_env(SAGE_DATABASE_URL=url)
    # the audit is created with the audit API, as a coordinator would; the browser only labels it
    code = ("from audit import sampling, assignment; from ui.loading import load_demo; "
            "s = sampling.stratified_sample(load_demo().turns, 2, seed=5); "
            f"assignment.create_audit_from_sample('browser-audit', s, db={url!r}); "
            # accounts (issue 10): a lead and two annotators, each signs in with a password
            "from db import accounts; "
            f"[accounts.create_account(n, {PW!r}, role=r, db={url!r}) "
            "for n, r in (('lea', 'lead'), ('alice', 'annotator'), ('bob', 'annotator'))]")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, check=True, timeout=120)
    proc, base, log = start_streamlit(env, tmp / "streamlit.log")
    yield base, db_file
    stop_streamlit(proc, log)


@pytest.fixture()
def browser():
    """Factory of browsers, each with a fresh profile (its own cookies, its own Streamlit session)."""
    made = Browsers()
    yield made
    made.close()


def _sign_in(d, base: str, name: str) -> str:
    sign_in(d, base + "/Blind_annotation", name)
    return _current_turn(d)


def _current_turn(d) -> str:
    _wait_text(d, "Turn ")
    return d.find_element(By.XPATH, "//h4[starts-with(normalize-space(), 'Turn')]//code").text


def _label(d, value: str) -> None:
    radio = WebDriverWait(d, WAIT).until(EC.element_to_be_clickable(
        (By.XPATH, f"//div[@role='radiogroup']//label[.//p[normalize-space()='{value}']]")))
    radio.click()
    _wait_text(d, "Draft saved.")
    _idle(d)
    _button(d, "Submit label")
    _idle(d)


def _flagged_turn() -> tuple[str, str]:
    """A turn SAGE-Core flags: the first false positive, else the first true positive."""
    from sage_core.evaluator.cascade import CascadeConfig, Evaluator
    from ui.loading import load_demo

    ls = load_demo()
    vs = Evaluator(ls.registry, CascadeConfig.named("sage-core", s2_backend="offline")).evaluate(ls.turns)
    flagged = [(t, v) for t, v in zip(ls.turns, vs) if v.predicted_failure and v.repairs]
    fp = [t.turn_id for t, v in flagged if t.gold.label == "acceptable"]
    return (fp[0], "FP") if fp else (flagged[0][0].turn_id, "TP")


def test_every_page_and_two_annotators(server, browser):
    base, db_file = server
    d = browser()

    # home: the lead signs in; demo slice, run every configuration (SAGE-LLM is refused without an endpoint)
    sign_in(d, base + "/", "lea")
    _wait_text(d, "SAGE Studio")
    _wait_text(d, "Gold failures")
    _button(d, "Run all four configurations")
    _wait_text(d, "S2 backend that actually ran")
    _idle(d)
    assert "offline" in d.find_element(By.TAG_NAME, "body").text
    _wait_text(d, "Inspect turns")  # the last element: tables above it are laid out
    WebDriverWait(d, WAIT).until(lambda x: len(x.find_elements(By.CSS_SELECTOR, '[data-testid="stDataFrame"] canvas')) >= 3)
    time.sleep(1.5)
    _shot(d, "home.png")

    # inspector: deep link to a flagged turn (the demo's false positive if SAGE-Core makes one)
    tid, outcome = _flagged_turn()
    d.get(base + f"/Inspector?turn={tid}")
    _wait_text(d, "Criterion trace")
    _idle(d)
    body = d.find_element(By.TAG_NAME, "body").text
    assert tid in body and outcome in body and "Repair signals" in body and "failure present" in body
    assert d.find_elements(By.CSS_SELECTOR, "mark.sage-span")
    _shot(d, "inspector_table.png")
    prev = d.find_element(By.XPATH, "//button[.//p[normalize-space()='Previous']]")
    d.execute_script("arguments[0].scrollIntoView({block: 'start'});", prev)
    d.execute_script("document.querySelector('[data-testid=\"stMain\"]') && "
                     "document.querySelector('[data-testid=\"stMain\"]').scrollBy(0, -90); window.scrollBy(0, -90);")
    time.sleep(0.5)
    _shot(d, "inspector.png")  # the turn: text with spans, state diff, criterion trace, repair

    # risk-coverage: the chart renders (vega canvas or svg), declined turns listed
    d.get(base + "/Risk_coverage")
    _wait_text(d, "Turns declined at a coverage")
    WebDriverWait(d, WAIT).until(lambda x: x.find_elements(By.CSS_SELECTOR, ".vega-embed canvas, .vega-embed svg"))
    _idle(d)
    time.sleep(1.0)
    chart = d.find_element(By.CSS_SELECTOR, ".vega-embed")
    assert chart.size["height"] > 200
    # click the no_S2 point that keeps half of the turns: the declined list follows the click
    n = len(load_demo().turns)
    point = next(p for p in d.find_elements(By.CSS_SELECTOR, ".vega-embed svg g.mark-symbol path")
                 if "configuration: no_S2 / offline" in (p.get_attribute("aria-label") or "")
                 and f"n_kept: {n // 2};" in (p.get_attribute("aria-label") or "") + ";")
    ActionChains(d).move_to_element(point).click().perform()
    _wait_text(d, f"Keeping {n // 2} of {n} turns; {n - n // 2} declined")
    _idle(d)
    ActionChains(d).move_to_element(d.find_element(By.TAG_NAME, "h1")).perform()  # the tooltip would hide a panel
    time.sleep(0.5)
    _shot(d, "risk_coverage.png")

    # blind annotation: alice and bob, each in a fresh browser profile, three turns each
    alice_labels = ["failure", "acceptable", "acceptable"]
    bob_labels = ["failure", "acceptable", "failure"]
    lead = d
    d = browser()  # alice: her own browser profile (cookies) and session
    tid = _sign_in(d, base, "alice")
    html = d.page_source.lower()
    for banned in ("gold", "verdict", "confidence", "fired", "criterion trace", "sage-core"):
        assert banned not in html, banned
    _shot(d, "annotation.png")
    alice_turns = []
    for i, lab in enumerate(alice_labels, start=1):
        alice_turns.append(_current_turn(d))
        _label(d, lab)
        _wait_text(d, f"You: {i} submitted")
    assert alice_turns[0] == tid

    d2 = browser()
    _sign_in(d2, base, "bob")
    bob_turns = []
    for i, lab in enumerate(bob_labels, start=1):
        bob_turns.append(_current_turn(d2))
        html = d2.page_source.lower()
        assert "gold" not in html and "verdict" not in html
        _label(d2, lab)
        _wait_text(d2, f"You: {i} submitted")
    assert sorted(bob_turns) == sorted(alice_turns)  # half-labelled turns are offered first

    # reload: still signed in (session cookie); the labels come back from the database, not from the browser
    d.refresh()
    _wait_text(d, "Signed in as alice")
    _wait_text(d, "Your submitted labels (3)")
    with sqlite3.connect(db_file) as con:
        rows = con.execute(
            "SELECT a.name, e.turn_id, e.label FROM sage_label_event e JOIN sage_annotator a "
            "ON a.id = e.annotator_id WHERE e.kind = 'submit'").fetchall()
    assert sorted(rows) == sorted([("alice", t, lab) for t, lab in zip(alice_turns, alice_labels)]
                                  + [("bob", t, lab) for t, lab in zip(bob_turns, bob_labels)])

    # agreement: three doubly-labelled turns
    alice_by, bob_by = dict(zip(alice_turns, alice_labels)), dict(zip(bob_turns, bob_labels))
    n_dis = sum(alice_by[t] != bob_by[t] for t in alice_by)
    d = lead  # the lead's pages again, in the lead's browser
    d.get(base + "/Agreement")
    _wait_text(d, "Inter-annotator agreement")
    _wait_text(d, f"Disagreements ({n_dis}")
    _idle(d)
    _shot(d, "agreement.png")

    # dialogues: first failing turn per annotator and SAGE run; a turn id opens the Inspector on it
    d.get(base + "/Dialogues")
    _wait_text(d, "First failing turn per dialogue")
    _idle(d)
    heads = [h.text for h in d.find_elements(By.CSS_SELECTOR, "table.sage-dlg th")]
    assert {"alice", "bob"} <= set(heads), heads
    _shot(d, "dialogues.png")
    links = d.find_elements(By.CSS_SELECTOR, "table.sage-dlg a")
    assert links, "no failing turn in the labelled dialogues"
    first = links[0].text.split(" ")[0]
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", links[0])
    links[0].click()
    _wait_text(d, "Criterion trace")
    _idle(d)
    assert f"turn={first.replace(':', '%3A')}" in d.current_url or f"turn={first}" in d.current_url
    assert first in d.find_element(By.TAG_NAME, "body").text
