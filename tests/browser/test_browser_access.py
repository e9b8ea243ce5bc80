"""Real-browser test of accounts, roles and blinding (issue 10): a lead and two annotators, each in
their own Chromium profile (own cookies, own Streamlit session), on two servers:

* a default server, where the lead has run SAGE and the annotators label, revise and use shortcuts;
* a freshly started ``SAGE_ANNOTATION_ONLY=1`` server whose very first request is a lead page.

Every annotator browser records Chrome's performance log, and the test scans every websocket
frame it received (Streamlit's protobuf messages, base64 in the log) as well as every page's HTML
for gold, verdict, injection-record and partner-note strings. Screenshots go to
``$SAGE_SCREENSHOT_DIR`` (default docs/screenshots). Skipped without Chromium/chromedriver.
"""
from __future__ import annotations

import base64
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser.browser_support import (PW, REPO, WAIT, Browsers, button as _button, idle as _idle,
                                           server_env, shot as _shot, sign_in, start_streamlit, stop_streamlit,
                                           wait_text as _wait_text)
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

INJECTION_MARKER = "INJ-META-MARKER-51c"  # put into every turn's meta (the injection record)
PARTNER_NOTE = "BOB-PRIVATE-NOTE-9e2"
LEAD_PAGES = ["/", "/Home", "/Inspector", "/Agreement", "/Risk_coverage", "/Dialogues", "/Accounts"]
LEAD_MARKERS = ["Criterion trace", "Gold failures", "Inter-annotator agreement", "First failing turn",
                "Turns declined", "New account", "Run all four configurations", "Headline metrics"]
BANNED = ["gold", "verdict", "sage-core", "criterion", "s2-symbolic", INJECTION_MARKER, PARTNER_NOTE]


SETUP = """
from audit import sampling, assignment
from db import accounts
from ui.loading import load_demo
url = {url!r}
turns = load_demo().turns
for t in turns:
    t.meta["injection"] = {{"record": {marker!r}}}
s = sampling.stratified_sample(turns, 2, seed=5)
assignment.create_audit_from_sample("access-audit", s, db=url)
accounts.create_account("Lea", {pw!r}, role="lead", db=url)
for name in ("Alice", "Bob"):
    accounts.create_account(name, {pw!r}, db=url)
"""


def _start(tmp: Path, env_extra: dict):
    """A server with the SETUP database (an audit, a lead, two annotators); returns (process, base url, log)."""
    url = f"sqlite:///{tmp / 'audit.db'}"
    env = server_env(SAGE_DATABASE_URL=url, **env_extra)
    subprocess.run([sys.executable, "-c", SETUP.format(url=url, marker=INJECTION_MARKER, pw=PW)], cwd=REPO,
                   env=env, check=True, timeout=120)
    return start_streamlit(env, tmp / "streamlit.log")


@pytest.fixture()
def browser():
    """Factory of browsers, each with a fresh profile and Chrome's performance log (websocket frames)."""
    made = Browsers(performance_log=True)
    yield made
    made.close()


def _collect_frames(d) -> list[bytes]:
    """Drain the performance log: the payload of every websocket frame received so far."""
    if not hasattr(d, "frames_seen"):
        d.frames_seen = []  # every websocket payload this browser received (decoded)
    for entry in d.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.webSocketFrameReceived":
            r = msg["params"]["response"]
            data = r.get("payloadData", "")
            d.frames_seen.append(base64.b64decode(data) if r.get("opcode") == 2 else data.encode())
    return d.frames_seen


def _assert_blind(d, where: str, own: tuple = ()) -> None:
    """No banned string (except the person's own ``own`` strings) in the page or any websocket frame so far."""
    html = d.page_source.lower()
    frames = b"\n".join(_collect_frames(d)).lower()
    assert frames, "no websocket frame recorded"
    for banned in [b for b in BANNED if b not in own]:
        assert banned.lower() not in html, (where, banned, "html")
        assert banned.lower().encode() not in frames, (where, banned, "websocket")


def _body(d) -> str:
    return d.find_element(By.TAG_NAME, "body").text


def _nav_links(d) -> set[str]:
    """Page names in the sidebar navigation (each link's text is "<icon name>\\n<title>")."""
    return {a.text.splitlines()[-1] for a in d.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebarNav"] a')
            if a.text.strip()}


def _current_turn(d) -> str:
    _wait_text(d, "Turn ")
    return d.find_element(By.XPATH, "//h4[starts-with(normalize-space(), 'Turn')]//code").text


def _keys(d, keys: str) -> None:
    """Type shortcut keys with the focus on the page (not in a text field), once the page has its listener."""
    _idle(d)
    WebDriverWait(d, WAIT).until(lambda x: x.execute_script("return window.__sageShortcuts === true"))
    d.execute_script("document.activeElement && document.activeElement.blur && document.activeElement.blur();")
    for k in keys:
        ActionChains(d).send_keys(k).perform()
        _idle(d)


def _submits(db_file: Path, who: str) -> list[tuple]:
    with sqlite3.connect(db_file) as con:
        return con.execute("SELECT e.turn_id, e.label, e.failure_class, e.note FROM sage_label_event e "
                           "JOIN sage_annotator a ON a.id = e.annotator_id WHERE e.kind = 'submit' AND a.name = ? "
                           "ORDER BY e.id", (who,)).fetchall()


def _no_lead_content(d, where: str) -> None:
    body = _body(d)
    for marker in LEAD_MARKERS:
        assert marker not in body, (where, marker)
    titles = [h.text for h in d.find_elements(By.TAG_NAME, "h1")]
    assert not set(titles) & {"SAGE Studio", "Inspector", "Agreement", "Risk-coverage", "Dialogues", "Accounts"}, \
        (where, titles)


def test_lead_and_two_annotators_blind_roles_shortcuts_revisions(tmp_path, browser):
    proc, base, log = _start(tmp_path, {})
    db_file = tmp_path / "audit.db"
    try:
        # the lead: sign-in page first (screenshot), then SAGE runs so the server holds verdicts
        lead = browser()
        lead.get(base + "/")
        _wait_text(lead, "Sign in to SAGE Studio")
        _idle(lead)
        _shot(lead, "sign_in.png")
        sign_in(lead, base + "/", "lea")
        _button(lead, "Run all four configurations")
        _wait_text(lead, "S2 backend that actually ran")
        _idle(lead)
        lead.get(base + "/Accounts")  # a new page load: the cookie keeps the lead signed in
        _wait_text(lead, "New account")
        _idle(lead)
        assert "3 accounts" in _body(lead)
        sidebar = _nav_links(lead)
        assert {"Home", "Agreement", "Accounts", "Blind annotation"} <= sidebar, sidebar

        # alice: her own browser; every lead page by URL, query parameter and sidebar is closed to her
        alice = browser()
        sign_in(alice, base + "/Blind_annotation", "alice")
        tid = _current_turn(alice)
        for path in LEAD_PAGES + [f"/Inspector?turn={tid}", "/Agreement?audit=access-audit", "/?slice=0123456789abcdef"]:
            alice.get(base + path)
            _wait_text(alice, "Signed in as")
            _idle(alice)
            _no_lead_content(alice, path)
        links = _nav_links(alice)
        assert not links & {"Home", "Inspector", "Agreement", "Risk-coverage", "Dialogues", "Accounts"}, links
        for testid in ("stAppDeployButton", "stMainMenu"):  # client.toolbarMode = "minimal"
            assert not alice.find_elements(By.CSS_SELECTOR, f'[data-testid="{testid}"]'), testid

        # shortcuts: f (failure), 1 2 (tick IUV, WNF), 0 (clear), 1 4 (tick IUV, UV), s (submit)
        alice.get(base + "/Blind_annotation")
        assert _current_turn(alice) == tid
        _keys(alice, "f120")
        _wait_text(alice, "Draft saved.")
        _keys(alice, "14")
        _keys(alice, "s")
        _wait_text(alice, "You: 1 submitted")
        assert _submits(db_file, "Alice") == [(tid, "failure", "IUV,UV", "")]
        _assert_blind(alice, "after alice's first label")

        # bob labels the same turn (half-labelled turns first) with a private note, by mouse
        bob = browser()
        sign_in(bob, base + "/Blind_annotation", "bob")
        assert _current_turn(bob) == tid
        note = bob.find_element(By.XPATH, "//textarea[@aria-label='Note (optional)']")
        note.send_keys(PARTNER_NOTE)
        radio = WebDriverWait(bob, WAIT).until(EC.element_to_be_clickable(
            (By.XPATH, "//div[@role='radiogroup']//label[.//p[normalize-space()='acceptable']]")))
        radio.click()
        _wait_text(bob, "Draft saved.")
        _idle(bob)
        _button(bob, "Submit label")
        _wait_text(bob, "You: 1 submitted")
        assert _submits(db_file, "Bob") == [(tid, "acceptable", None, PARTNER_NOTE)]

        # alice revises with shortcuts: p (previous), a (acceptable), s; the history shows both versions
        alice.refresh()  # a reload keeps her signed in (session cookie)
        _wait_text(alice, "Signed in as Alice")
        _idle(alice)
        _keys(alice, "p")
        _wait_text(alice, "Reviewing your submitted label")
        assert _current_turn(alice) == tid
        _keys(alice, "a")
        _wait_text(alice, "Draft saved.")
        _keys(alice, "s")
        _idle(alice)
        assert _submits(db_file, "Alice") == [(tid, "failure", "IUV,UV", ""), (tid, "acceptable", None, "")]
        _keys(alice, "p")
        _wait_text(alice, "Your versions of this label")
        rows = [r.text for r in alice.find_elements(By.CSS_SELECTOR, '[data-testid="stTable"] tbody tr')]
        assert len(rows) == 2 and "failure" in rows[0] and "IUV,UV" in rows[0] and "acceptable" in rows[1], rows
        _shot(alice, "annotation_revise.png")
        _assert_blind(alice, "after the revision (bob's note and the lead's runs exist on the server)")

        # a typed note survives a reload (its draft is saved while typing)
        _keys(alice, "n")
        other = _current_turn(alice)
        box = alice.find_element(By.XPATH, "//textarea[@aria-label='Note (optional)']")
        box.click()
        box.send_keys("half-typed thought")  # saved while typing: the field is never left
        _wait_text(alice, "Draft saved.")
        _idle(alice)
        alice.refresh()
        _wait_text(alice, "Resumed your autosaved draft")
        assert _current_turn(alice) == other
        assert alice.find_element(By.XPATH, "//textarea[@aria-label='Note (optional)']").get_attribute(
            "value") == "half-typed thought"
        _assert_blind(alice, "end")
        _assert_blind(bob, "bob end", own=(PARTNER_NOTE,))  # his own note, nothing else

        # the lead invites Cora (done last: her page claims a seat): no password typed, a one-time link;
        # Cora chooses her own password in her own browser
        lead.get(base + "/Accounts")
        _wait_text(lead, "New account")
        _idle(lead)
        lead.find_element(By.XPATH, "//input[@aria-label='Name']").send_keys("Cora")
        _button(lead, "Create account")
        _wait_text(lead, "one-time link")
        _idle(lead)
        link = lead.find_element(By.CSS_SELECTOR, '[data-testid="stCode"] code').text.strip()
        assert "/?invite=" in link, link
        _shot(lead, "accounts_invite.png")
        cora = browser()
        cora.get(link)
        _wait_text(cora, "Choose the password for Cora")
        for label in ("Password", "Repeat the password"):
            WebDriverWait(cora, WAIT).until(EC.element_to_be_clickable(
                (By.XPATH, f"//input[@aria-label='{label}']"))).send_keys("coras own password")
        _button(cora, "Set password and sign in")
        _wait_text(cora, "Signed in as Cora")
        _current_turn(cora)
        assert "invite=" not in cora.current_url  # the one-time link leaves the address bar
    finally:
        stop_streamlit(proc, log)


def test_fresh_annotation_only_server_refuses_lead_pages_before_root_is_visited(tmp_path, browser):
    proc, base, log = _start(tmp_path, {"SAGE_ANNOTATION_ONLY": "1"})
    try:
        d = browser()
        d.get(base + "/Agreement")  # the first page request this server ever gets
        _wait_text(d, "annotation page only")
        _idle(d)
        _no_lead_content(d, "/Agreement first")
        for path in LEAD_PAGES[1:] + ["/Inspector?turn=rest-002-t2"]:
            d.get(base + path)
            WebDriverWait(d, WAIT).until(lambda x: "annotation page only" in _body(x) or "Sign in" in _body(x))
            _idle(d)
            _no_lead_content(d, path)
        sign_in(d, base + "/Blind_annotation", "lea")  # even the lead: no lead page on this server
        for path in LEAD_PAGES:
            d.get(base + path)
            _wait_text(d, "Signed in as")
            _idle(d)
            _no_lead_content(d, path)
        a = browser()
        a.get(base + "/Dialogues")
        WebDriverWait(a, WAIT).until(lambda x: "annotation page only" in _body(x) or "Sign in" in _body(x))
        sign_in(a, base + "/Blind_annotation", "alice")
        _current_turn(a)
        _assert_blind(a, "annotation-only server")
    finally:
        stop_streamlit(proc, log)
