"""Real-browser check of a tau-bench failure in the Inspector (and the README screenshot inspector_tau.png).

The app loads the airline trajectories by path with our policy YAML, runs SAGE-Core, and the Inspector
deep link opens the booking of task0-trial0 that writes baggage counts nobody gave (the step that made the
reward 0). Skipped, with the reason, when Chromium, chromedriver or ../shared are absent.
"""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.browser.browser_support import (PW, REPO, SHOTS, Browsers, click_xpath, free_port, idle, server_env,
                                           sign_in, start_streamlit, stop_streamlit, wait_text)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

WAIT = 180
TURN = "task0-trial0-s013"
LEAD = "lea"


@pytest.fixture(scope="module")
def server(tmp_path_factory, shared_data):
    tmp = tmp_path_factory.mktemp("tau_browser")
    env = server_env(SAGE_DATABASE_URL=f"sqlite:///{tmp / 'audit.db'}",
                     SAGE_DATA_ROOTS=f"{REPO}:{shared_data}")  # "Path on disk" reads only inside the data roots
    # every page needs a signed-in lead (issue 10): the account is made as a lead would, by the entry point
    subprocess.run([sys.executable, "-m", "audit", "create-lead", "--name", LEAD], cwd=REPO,
                   env=dict(env, SAGE_LEAD_PASSWORD=PW), check=True, timeout=120)
    proc, base, log = start_streamlit(env, tmp / "streamlit.log", port=free_port(range(8620, 8630)))
    yield base, shared_data
    stop_streamlit(proc, log)


@pytest.fixture()
def driver():
    made = Browsers()
    yield made()
    made.close()


def _text(d, text):
    wait_text(d, text, WAIT)


def _idle(d):
    idle(d, WAIT, settle=0.7)


def _click(d, xpath):
    click_xpath(d, xpath)
    _idle(d)


def _type(d, label, value):
    box = WebDriverWait(d, WAIT).until(EC.element_to_be_clickable((By.XPATH, f"//input[@aria-label='{label}']")))
    box.clear()
    box.send_keys(value, Keys.ENTER)
    _idle(d)


def test_tau_bench_failure_in_the_inspector(server, driver):
    base, data = server
    d = driver
    sign_in(d, base + "/", LEAD)
    _text(d, "SAGE Studio")
    _idle(d)
    _click(d, "//label[.//p[normalize-space()='Path on disk']]")
    _type(d, "Slice file or corpus folder", str(data / "tau_bench" / "airline" / "trajectories_gpt-4o.json"))
    _type(d, "Schema (schema.json or workflow YAML; optional for corpora that ship one)",
          str(REPO / "data" / "specs" / "tau_bench_airline.yaml"))
    _click(d, "//button[.//p[normalize-space()='Load']]")
    _text(d, "1426")
    _click(d, "//button[.//p[normalize-space()='Run']]")
    _text(d, "S2 backend that actually ran")
    _idle(d)
    # same session: open the Inspector from the sidebar, then deep-link the turn with the slice and run it shows
    _click(d, "//a[@data-testid='stSidebarNavLink'][.//span[normalize-space()='Inspector']]")
    _text(d, "Criterion trace")
    _idle(d)
    url = d.current_url
    assert "slice=" in url, url
    d.get(url.split("?")[0] + "?" + "&".join([f"turn={TURN}"] + [kv for kv in url.split("?")[1].split("&")
                                                                  if not kv.startswith("turn=")]))
    _text(d, "Criterion trace")
    _idle(d)
    body = d.find_element(By.TAG_NAME, "body").text
    assert TURN in body and "book_reservation" in body and "nonfree_baggages" in body
    assert "failure present" in body and "failures found at this step" in body.lower()
    # reward and gold actions are the lead's to see, in the turn's meta record (a collapsed expander);
    # annotators never receive them (tests/browser/test_browser_access.py, tests/test_app_tool_steps.py)
    assert "Turn metadata (meta)" in body
    details = d.find_elements(By.CSS_SELECTOR, "details.sage-tool")
    assert len(details) >= 5  # tool outputs collapsed in the history, plus the call's own answer
    assert not any(x.get_attribute("open") for x in details)
    head = d.find_element(By.XPATH, f"//h3[.//code[normalize-space()='{TURN}']]")
    d.execute_script("arguments[0].scrollIntoView({block: 'start'});", head)
    d.execute_script("window.scrollBy(0, -70); var m = document.querySelector('[data-testid=\"stMain\"]');"
                     " if (m) m.scrollBy(0, -70);")
    time.sleep(1.0)
    SHOTS.mkdir(parents=True, exist_ok=True)
    d.save_screenshot(str(SHOTS / "inspector_tau.png"))
