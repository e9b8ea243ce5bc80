"""Real-browser check of a tau-bench failure in the Inspector (and the README screenshot inspector_tau.png).

The app loads the airline trajectories by path with our policy YAML, runs SAGE-Core, and the Inspector
deep link opens the booking of task0-trial0 that writes baggage counts nobody gave (the step that made the
reward 0). Skipped, with the reason, when Chromium, chromedriver or ../shared are absent.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("SAGE_SCREENSHOT_DIR", REPO / "docs" / "screenshots"))
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
pytestmark = pytest.mark.skipif(not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
                                reason=f"needs {CHROMIUM} and {CHROMEDRIVER}")
webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

WAIT = 180
TURN = "task0-trial0-s013"
LEAD, PW = "lea", "browser test password"


def _port() -> int:
    """A free port in 8620-8629 (the range this feature's servers use), else any free port."""
    for p in list(range(8620, 8630)) + [0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
                return s.getsockname()[1]
            except OSError:
                continue
    raise RuntimeError("no free port")


@pytest.fixture(scope="module")
def server(tmp_path_factory, shared_data):
    tmp = tmp_path_factory.mktemp("tau_browser")
    env = dict(os.environ, SAGE_DATABASE_URL=f"sqlite:///{tmp / 'audit.db'}", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONPATH=str(REPO),
               SAGE_DATA_ROOTS=f"{REPO}:{shared_data}")  # "Path on disk" reads only inside the data roots
    # every page needs a signed-in lead (issue 10): the account is made as a lead would, by the entry point
    subprocess.run([sys.executable, "-m", "audit", "create-lead", "--name", LEAD], cwd=REPO,
                   env=dict(env, SAGE_LEAD_PASSWORD=PW), check=True, timeout=120)
    port = _port()
    log = open(tmp / "streamlit.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + WAIT
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(base + "/_stcore/health", timeout=2).read().strip() == b"ok":
                break
        except OSError:
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail("streamlit did not start")
    yield base, shared_data
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


@pytest.fixture()
def driver():
    profile = tempfile.mkdtemp(prefix="sage-chrome-")
    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1440,1800", f"--user-data-dir={profile}"):
        opts.add_argument(arg)
    d = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    d.set_page_load_timeout(WAIT)
    yield d
    d.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _text(d, text):
    WebDriverWait(d, WAIT).until(EC.text_to_be_present_in_element((By.TAG_NAME, "body"), text))


def _idle(d):
    time.sleep(0.7)
    WebDriverWait(d, WAIT).until(lambda x: not x.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]'))


def _click(d, xpath):
    el = WebDriverWait(d, WAIT).until(EC.element_to_be_clickable((By.XPATH, xpath)))
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", el)
    el.click()
    _idle(d)


def _type(d, label, value):
    box = WebDriverWait(d, WAIT).until(EC.element_to_be_clickable((By.XPATH, f"//input[@aria-label='{label}']")))
    box.clear()
    box.send_keys(value, Keys.ENTER)
    _idle(d)


def test_tau_bench_failure_in_the_inspector(server, driver):
    base, data = server
    d = driver
    d.get(base + "/")
    box = WebDriverWait(d, WAIT).until(EC.element_to_be_clickable((By.XPATH, "//input[@aria-label='Name']")))
    box.send_keys(LEAD)
    d.find_element(By.XPATH, "//input[@aria-label='Password']").send_keys(PW)
    _click(d, "//button[.//p[normalize-space()='Sign in']]")
    _text(d, f"Signed in as {LEAD}")
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
