"""What every real-browser test needs: the app started on a loopback port, headless Chromium profiles,
and the waits that make Streamlit's asynchronous reruns testable.

One copy, so that a fix to a wait or to the server start (they decide whether these tests are flaky
under load) reaches every browser test. Importing this module skips the importing test module when
Chromium, chromedriver or selenium are absent, with the reason.
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
from typing import Iterable, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("SAGE_SCREENSHOT_DIR", REPO / "docs" / "screenshots"))  # CI may write elsewhere
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 120  # seconds: a page that loads a model or runs SAGE on a shared 2-core machine can take a while
PW = "browser test password"

if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip(f"real-browser test needs Debian's {CHROMIUM} and {CHROMEDRIVER} "
                "(apt-get install chromium chromium-driver)", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


def free_port(preferred: Iterable[int] = ()) -> int:
    """The first free port of ``preferred`` on 127.0.0.1, else any free one."""
    for p in list(preferred) + [0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
                return s.getsockname()[1]
            except OSError:
                continue
    raise RuntimeError("no free port")


def server_env(**extra: str) -> dict:
    """The environment of a test server: offline models, the repo importable, ``extra`` on top."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               PYTHONPATH=str(REPO), **extra)
    if "SAGE_ANNOTATION_ONLY" not in extra:
        env.pop("SAGE_ANNOTATION_ONLY", None)
    return env


def start_streamlit(env: dict, log_path: Path, port: Optional[int] = None):
    """``streamlit run app.py`` on 127.0.0.1; returns (process, base url, log file) once /_stcore/health answers.

    The health endpoint runs no page script, so the test's own first request is the first page view.
    """
    port = port or free_port()
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + WAIT
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(base + "/_stcore/health", timeout=2).read().strip() == b"ok":
                return proc, base, log
        except OSError:
            time.sleep(0.5)
    stop_streamlit(proc, log)
    pytest.fail("streamlit did not start: " + Path(log_path).read_text()[-2000:])


def stop_streamlit(proc, log=None) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    if log is not None:
        log.close()


def new_driver(profile: str, performance_log: bool = False):
    """Headless Chromium with its own profile (own cookies, own Streamlit session); ``performance_log``
    records the DevTools network events (websocket frames) for blinding checks."""
    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-dev-shm-usage", "--window-size=1440,1800", f"--user-data-dir={profile}"):
        opts.add_argument(arg)
    if performance_log:
        opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    d = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    d.set_page_load_timeout(WAIT)
    return d


class Browsers:
    """Factory of drivers, each with a fresh profile; ``close`` quits them all and removes the profiles."""

    def __init__(self, performance_log: bool = False):
        self.performance_log = performance_log
        self.made: list = []

    def __call__(self):
        profile = tempfile.mkdtemp(prefix="sage-chrome-")
        self.made.append((new_driver(profile, self.performance_log), profile))
        return self.made[-1][0]

    def close(self) -> None:
        for d, profile in self.made:
            d.quit()
            shutil.rmtree(profile, ignore_errors=True)


def wait_text(d, text: str, timeout: float = WAIT):
    WebDriverWait(d, timeout).until(EC.text_to_be_present_in_element((By.TAG_NAME, "body"), text))


def idle(d, timeout: float = WAIT, settle: float = 0.5):
    """Wait until the script run finished (Streamlit shows a 'Running...' status widget while busy)."""
    time.sleep(settle)
    WebDriverWait(d, timeout).until(
        lambda x: not x.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]'))


def click_xpath(d, xpath: str):
    """Scroll the element into view and click it (a click outside the viewport can miss)."""
    el = WebDriverWait(d, WAIT).until(EC.element_to_be_clickable((By.XPATH, xpath)))
    d.execute_script("arguments[0].scrollIntoView({block: 'center'});", el)
    el.click()
    return el


def button(d, label: str):
    return click_xpath(d, f"//button[.//p[normalize-space()='{label}'] or normalize-space()='{label}']")


def sign_in(d, url: str, name: str, password: str = PW) -> None:
    """Open ``url`` (nobody signed in in this browser yet) and sign in with name and password (names are
    matched without case, so the page may greet the account's own spelling)."""
    d.get(url)
    box = WebDriverWait(d, WAIT).until(EC.element_to_be_clickable((By.XPATH, "//input[@aria-label='Name']")))
    box.send_keys(name)
    d.find_element(By.XPATH, "//input[@aria-label='Password']").send_keys(password)
    button(d, "Sign in")
    wait_text(d, "Signed in as")
    idle(d)


def shot(d, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    d.save_screenshot(str(path))
    return path
