"""Scale: throughput and peak memory of ``evaluate`` at 10k / 100k / 1M turns, and the app's memory.

Slices are built by replicating the SGD *test* turns (loaded with the SGD loader,
annotations stripped: text-only, so every turn goes through extraction and the
encoder) with new turn and dialogue ids. Modes: one process (``--workers 1``),
``--workers 2`` and the Ray path (``--engine ray``, 4 input shards, local
instance with 2 CPUs). Peak memory is the summed RSS of the whole process tree
(workers, Ray daemons), sampled every 0.25 s from /proc.

``--app``: a streamlit server (127.0.0.1, port 8630), headless Chromium loads three
~50 MB slices by path in three sessions (one after the other), closes them, and
the server's RSS is printed idle, after each load and after the sessions closed.

Each mode prints a "started" line, then its row when it ends. A mode past ``--limit-s``, or a SIGTERM
to the bench (a session's time limit: the previous run lost its Ray line that way, killed while Ray
ran, after the two local modes had used most of its 15 minutes), is interrupted and still printed, with
``stopped`` and the verdicts it had written. Ray's local instance runs its workers at nice 15 (Ray's
default ``worker_niceness``), so on a busy machine the Ray mode yields to everything else running.

Prints only; never asserts. Run:
``python benchmarks/bench_scale.py --sizes 10000,100000 --modes local1,local2,ray``
``python benchmarks/bench_scale.py --sizes 1000000 --modes local2``
``python benchmarks/bench_scale.py --app``
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SGD_TEST = Path(os.environ.get("SAGE_SHARED_DATA", REPO.parent / "shared" / "data")) / "sgd" / "test"
MODES = {"local1": ["--workers", "1"], "local2": ["--workers", "2"], "ray": ["--engine", "ray"]}


# --- process-tree memory from /proc -------------------------------------------------------
def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree_rss_mb(pid: int) -> tuple[float, float]:
    """(summed RSS, largest single RSS) of ``pid`` and its descendants, in MB."""
    kids, todo, total, biggest = _children(), [pid], 0.0, 0.0
    while todo:
        p = todo.pop()
        todo.extend(kids.get(p, []))
        try:
            with open(f"/proc/{p}/statm") as fh:
                rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        except (OSError, IndexError, ValueError):
            continue
        total += rss
        biggest = max(biggest, rss)
    return total, biggest


class PeakSampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.25):
        super().__init__(daemon=True)
        self.pid, self.every, self.peak, self.peak_single, self._halt = pid, every, 0.0, 0.0, threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            total, single = tree_rss_mb(self.pid)
            self.peak, self.peak_single = max(self.peak, total), max(self.peak_single, single)
            time.sleep(self.every)

    def stop(self) -> None:
        self._halt.set()
        self.join()


# --- slices ----------------------------------------------------------------------------------
def base_lines() -> list[str]:
    """SGD test turns, text-only, as JSON lines with id placeholders."""
    from sage_core import load_corpus

    turns, _ = load_corpus("sgd", SGD_TEST, SGD_TEST / "schema.json")
    out = []
    for t in turns:
        d = t.to_dict()
        d.pop("user_values", None)
        d.pop("agent_acts", None)
        d.pop("gold", None)
        d["turn_id"], d["dialogue_id"] = "@@TID@@", "@@DID@@"
        out.append(json.dumps(d, ensure_ascii=False))
    return out


def write_slice(base: list[str], turns: list, n: int, paths: list[Path]) -> None:
    """``n`` turns, replica k of base turn i gets ids '<id>~k'; spread round-robin by dialogue over ``paths``."""
    fhs = [open(p, "w", encoding="utf-8") for p in paths]
    try:
        for i in range(n):
            k, j = divmod(i, len(base))
            tid, did = turns[j]
            line = base[j].replace("@@TID@@", f"{tid}~{k}", 1).replace("@@DID@@", f"{did}~{k}", 1)
            fhs[(i // 1000) % len(fhs)].write(line + "\n")
    finally:
        for fh in fhs:
            fh.close()


class Stopped(Exception):
    """SIGTERM reached the bench (a session's time limit): the running mode still gets its row."""


def _on_sigterm(signum, frame):  # noqa: ARG001
    raise Stopped()


def verdicts_so_far(out: Path) -> int:
    """Verdict lines written so far: the ``.partial`` file(s) of a run still going (local: one file; ray: a folder)."""
    files = list(out.glob("*.partial")) if out.is_dir() else [out.with_name(out.name + ".partial")]
    n = 0
    for f in files:
        try:
            with open(f, "rb") as fh:
                n += sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
        except OSError:
            pass
    return n


def run_evaluate(slice_arg: str, out: Path, mode: str, n: int, limit_s: float = 0.0) -> dict:
    """One ``evaluate`` run; a run past ``limit_s`` (or a SIGTERM to the bench) is interrupted and still reported,
    with the verdicts it had written, so a cut-short bench never loses the line of the mode it was in."""
    cmd = [sys.executable, "-m", "sage_core", "evaluate", "--slice", slice_arg, "--schema",
           str(SGD_TEST / "schema.json"), "--out", str(out), "--quiet", *MODES[mode]]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    print(json.dumps({"turns": n, "mode": mode, "status": "started", "at": time.strftime("%H:%M:%S")}), flush=True)
    t0 = time.perf_counter()
    # stdout/stderr go to files, not pipes: the bench waits on the process (with a time limit), and a pipe
    # nobody reads would block a chatty run (Ray Data logs) once it is full
    log_out, log_err = (tempfile.TemporaryFile("w+") for _ in range(2))
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log_out, stderr=log_err, text=True)
    sampler = PeakSampler(proc.pid)
    sampler.start()
    stopped = None
    try:
        proc.wait(timeout=limit_s or None)
    except (subprocess.TimeoutExpired, Stopped, KeyboardInterrupt) as e:
        stopped = "time limit" if isinstance(e, subprocess.TimeoutExpired) else type(e).__name__
    secs = time.perf_counter() - t0
    row = {"turns": n, "mode": mode, "seconds": round(secs, 1), "turns_per_s": round(n / secs, 1),
           "peak_tree_mb": round(sampler.peak), "peak_single_mb": round(sampler.peak_single)}
    if stopped:
        done = verdicts_so_far(out)
        row.update(stopped=stopped, verdicts_written=done, turns_per_s=round(done / secs, 1))
        proc.send_signal(signal.SIGINT)  # the CLI removes its partial output and shuts Ray down
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    sampler.stop()
    row["rc"] = proc.returncode
    if proc.returncode and not stopped:
        log_err.seek(0)
        row["error"] = log_err.read().strip().splitlines()[-1:]
    log_out.close()
    log_err.close()
    if stopped and stopped != "time limit":
        print(json.dumps(row), flush=True)
        raise Stopped()
    return row


def bench_cli(sizes: list[int], modes: list[str], keep: bool, limit_s: float = 0.0) -> None:
    from sage_core import load_corpus

    turns, _ = load_corpus("sgd", SGD_TEST, SGD_TEST / "schema.json")
    ids = [(t.turn_id, t.dialogue_id) for t in turns]
    base = base_lines()
    print(f"base: {len(base)} SGD test turns (text-only), replicated with new ids", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="sage_scale_"))
    try:
        for n in sizes:
            one = tmp / f"slice_{n}.jsonl"
            shards = [tmp / f"shards_{n}" / f"part{i}.jsonl" for i in range(4)]
            if any(m != "ray" for m in modes):
                write_slice(base, ids, n, [one])
            if "ray" in modes:
                shards[0].parent.mkdir(exist_ok=True)
                write_slice(base, ids, n, shards)
            for mode in modes:
                if mode == "ray":
                    row = run_evaluate(str(shards[0].parent / "*.jsonl"), tmp / f"out_{n}_ray", mode, n, limit_s)
                else:
                    row = run_evaluate(str(one), tmp / f"out_{n}_{mode}.jsonl", mode, n, limit_s)
                print(json.dumps(row), flush=True)
            for p in [one, *shards]:
                p.unlink(missing_ok=True)
    finally:
        if not keep:
            subprocess.run(["rm", "-rf", str(tmp)], check=False)


# --- app memory ------------------------------------------------------------------------------
def bench_app(port: int, slice_mb: float) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    from sage_core import load_corpus

    turns, _ = load_corpus("sgd", SGD_TEST, SGD_TEST / "schema.json")
    ids = [(t.turn_id, t.dialogue_id) for t in turns]
    base = base_lines()
    per_turn = sum(len(x) for x in base) / len(base)
    n = int(slice_mb * 2**20 / per_turn)
    tmp = Path(tempfile.mkdtemp(prefix="sage_scale_app_"))
    slices = []
    for k in range(3):  # three distinct slices (different ids), ~slice_mb each
        p = tmp / f"app_slice_{k}.jsonl"
        write_slice(base[k:] + base[:k], ids[k:] + ids[:k], n, [p])
        slices.append(p)
    server = _start_app(port, tmp)
    base_url = f"http://127.0.0.1:{port}"
    try:
        time.sleep(8)

        def rss() -> float:
            return round(tree_rss_mb(server.pid)[0])

        d = _chrome()
        _sign_in(d, base_url)
        WebDriverWait(d, 300).until(EC.text_to_be_present_in_element((By.TAG_NAME, "body"), "Source"))
        time.sleep(3)
        d.quit()
        time.sleep(20)
        idle = rss()
        print(json.dumps({"app": "idle (demo opened once, session closed)", "server_rss_mb": idle}), flush=True)
        for k, p in enumerate(slices):
            d = _chrome()
            _sign_in(d, base_url)
            _load_by_path(d, p, 600)
            time.sleep(2)
            print(json.dumps({"app": f"slice {k + 1} loaded ({p.stat().st_size / 2**20:.0f} MB, {n} turns)",
                              "server_rss_mb": rss()}), flush=True)
            d.quit()
        # a closed tab's session is kept for Streamlit's server.disconnectedSessionTTL (120 s, for reconnects);
        # ui/memory drops what only such sessions used within PRUNE_EVERY_S after the server discards them
        closed = time.monotonic()
        for wait_s in (30, 60, 150, 180):
            time.sleep(max(0.0, closed + wait_s - time.monotonic()))
            print(json.dumps({"app": f"{wait_s} s after the last session closed", "server_rss_mb": rss(),
                              "idle_mb": idle}), flush=True)
    finally:
        _stop_app(server, tmp)


def _stop_app(server: subprocess.Popen, tmp: Path) -> None:
    server.terminate()
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:  # busy in a run: do not leave it behind
        server.kill()
    subprocess.run(["rm", "-rf", str(tmp)], check=False)


def _load_by_path(d, path: Path, timeout: float) -> None:
    """Home: load ``path`` with the SGD test schema by "Path on disk"; returns once the page names the file."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(d, timeout)
    wait.until(EC.element_to_be_clickable((By.XPATH, "//label[.//p[normalize-space()='Path on disk']]"))).click()
    box = wait.until(EC.element_to_be_clickable((By.XPATH, "//input[@aria-label='Slice file or corpus folder']")))
    box.send_keys(str(path) + Keys.ENTER)
    d.find_element(By.XPATH, "//input[starts-with(@aria-label, 'Schema (schema.json')]").send_keys(
        str(SGD_TEST / "schema.json") + Keys.ENTER)
    time.sleep(1)
    wait.until(EC.element_to_be_clickable((By.XPATH, "//button[.//p[normalize-space()='Load']]"))).click()
    wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "body"), path.name))


def _sign_in(d, base_url: str) -> None:
    """Sign the bench's lead in (a fresh Chromium has no session cookie)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    d.get(base_url)
    wait = WebDriverWait(d, 300)
    wait.until(EC.element_to_be_clickable((By.XPATH, "//input[@aria-label='Name']"))).send_keys(BENCH_LEAD)
    d.find_element(By.XPATH, "//input[@aria-label='Password']").send_keys(BENCH_PASSWORD)
    wait.until(EC.element_to_be_clickable((By.XPATH, "//button[.//p[normalize-space()='Sign in']]"))).click()
    wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "body"), "Signed in as"))


def _chrome():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        opts.add_argument(a)
    opts.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


BENCH_LEAD, BENCH_PASSWORD = "bench-lead", "bench password, loopback only"


def _start_app(port: int, tmp: Path) -> subprocess.Popen:
    """The app on 127.0.0.1 with a lead account (every page needs one) that may read slices under ``tmp``
    and the SGD schema (``SAGE_DATA_ROOTS``: "Path on disk" reads nothing else)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), SAGE_DATABASE_URL=f"sqlite:///{tmp / 'audit.db'}",
               SAGE_DATA_ROOTS=f"{tmp}:{SGD_TEST}")
    env.pop("SAGE_ANNOTATION_ONLY", None)
    subprocess.run([sys.executable, "-m", "audit", "create-lead", "--name", BENCH_LEAD], cwd=REPO,
                   env=dict(env, SAGE_LEAD_PASSWORD=BENCH_PASSWORD), check=True, timeout=300,
                   stdout=subprocess.DEVNULL)
    log = open(tmp / "streamlit.log", "w")
    return subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)


POLL_S = 0.02  # selenium polls every 0.5 s by default: the timings would be rounded up to half-seconds


def bench_inspector(port: int, n: int, repeats: int = 5) -> None:
    """Inspector open and next-turn times on an n-turn slice (after its SAGE-Core run is cached)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    from sage_core import load_corpus

    turns, _ = load_corpus("sgd", SGD_TEST, SGD_TEST / "schema.json")
    tmp = Path(tempfile.mkdtemp(prefix="sage_scale_insp_"))
    p = tmp / "inspector_slice.jsonl"
    write_slice(base_lines(), [(t.turn_id, t.dialogue_id) for t in turns], n, [p])
    server = _start_app(port, tmp)
    base_url = f"http://127.0.0.1:{port}"

    def idle(d, timeout=600):
        time.sleep(0.05)
        WebDriverWait(d, timeout, poll_frequency=POLL_S).until(
            lambda x: not x.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]'))

    def header(d) -> str:
        els = d.find_elements(By.XPATH, "//h3//code")
        return els[0].text if els else ""

    try:
        time.sleep(8)
        d = _chrome()
        wait = WebDriverWait(d, 900)
        _sign_in(d, base_url)
        _load_by_path(d, p, 900)
        idle(d)
        t0 = time.perf_counter()
        wait.until(EC.element_to_be_clickable((By.XPATH, "//button[.//p[normalize-space()='Run']]"))).click()
        # the run's summary names the backend that ran; the status widget alone can vanish before the run ends
        WebDriverWait(d, 3600).until(EC.text_to_be_present_in_element((By.TAG_NAME, "body"),
                                                                      "S2 backend that actually ran"))
        idle(d, 1800)
        print(json.dumps({"inspector": f"SAGE-Core run of {n} turns in the app", "seconds":
                          round(time.perf_counter() - t0, 1)}), flush=True)
        url = d.current_url.split("?")[1] if "?" in d.current_url else ""
        opens, nexts = [], []
        for _ in range(repeats):
            d.get(base_url)  # away, then open the Inspector fresh (same session: slice and run cached)
            idle(d)
            t0 = time.perf_counter()
            d.get(f"{base_url}/Inspector?{url}")
            WebDriverWait(d, 300, poll_frequency=POLL_S).until(lambda x: header(x) != "")
            idle(d)
            opens.append(time.perf_counter() - t0)
            for _ in range(3):
                before = header(d)
                t0 = time.perf_counter()
                d.find_element(By.XPATH, "//button[.//p[normalize-space()='Next']]").click()
                WebDriverWait(d, 300, poll_frequency=POLL_S).until(lambda x: header(x) not in ("", before))
                idle(d)
                nexts.append(time.perf_counter() - t0)
        med = lambda xs: round(sorted(xs)[len(xs) // 2], 3)  # noqa: E731
        print(json.dumps({"inspector": f"{n} turns", "open_s_median": med(opens), "open_s": [round(x, 2) for x in opens],
                          "next_s_median": med(nexts), "next_s": [round(x, 2) for x in nexts]}), flush=True)
        d.quit()
    finally:
        _stop_app(server, tmp)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated turn counts")
    ap.add_argument("--modes", default="local1,local2,ray", help=f"comma-separated: {', '.join(MODES)}")
    ap.add_argument("--app", action="store_true", help="measure the app's memory instead")
    ap.add_argument("--inspector", type=int, default=0, metavar="N",
                    help="measure Inspector open / next-turn times in Chromium on an N-turn slice instead")
    ap.add_argument("--port", type=int, default=8630)
    ap.add_argument("--slice-mb", type=float, default=50.0)
    ap.add_argument("--keep", action="store_true", help="keep the generated slices and verdicts")
    ap.add_argument("--limit-s", type=float, default=0.0,
                    help="stop a mode after this many seconds and report the verdicts it wrote (0: no limit)")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, _on_sigterm)
    if a.inspector:
        bench_inspector(a.port, a.inspector)
    elif a.app:
        bench_app(a.port, a.slice_mb)
    else:
        try:
            bench_cli([int(x) for x in a.sizes.split(",")], a.modes.split(","), a.keep, a.limit_s)
        except Stopped:
            sys.exit(143)


if __name__ == "__main__":
    main()
