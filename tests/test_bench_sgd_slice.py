"""The slice benchmark's SGD-X mode: every seed's text-only slice re-run under each variant schema, spread printed."""
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks" / "bench_sgd_slice.py"


def _split(shared_data, tmp_path) -> Path:
    """One dialogue file of SGD test beside its schema (the slice builder reads a folder)."""
    d = tmp_path / "sgd_one"
    d.mkdir()
    for name in ("schema.json", "dialogues_001.json"):
        (d / name).symlink_to(shared_data / "sgd" / "test" / name)
    return d


def test_sgdx_mode_prints_each_variant_over_the_seeds_and_the_spread(shared_data, minilm, tmp_path):
    r = subprocess.run([sys.executable, str(BENCH), "--data", str(_split(shared_data, tmp_path)), "--n", "16",
                        "--seeds", "0,1", "--sgdx-dir", str(shared_data / "sgd" / "sgd_x")],
                       capture_output=True, text=True, timeout=900, cwd=REPO)
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout.split("SGD-X, text-only", 1)[1]
    for v in ("v1", "v2", "v3", "v4", "v5"):
        m = re.search(rf"^\s+{v}\s+F1 (\d\.\d+) ± (\d\.\d+)\s+\(seeds: (\d\.\d+), (\d\.\d+)\)", out, re.M)
        assert m, out
        mean, a, b = float(m.group(1)), float(m.group(3)), float(m.group(4))
        assert abs(mean - (a + b) / 2) <= 0.0011  # the mean of the two seeds' figures
    assert re.search(r"σ across variants of the per-variant means \d\.\d+", out)


def test_sgdx_mode_fails_before_evaluating_on_a_folder_without_variants(shared_data, tmp_path):
    r = subprocess.run([sys.executable, str(BENCH), "--data", str(_split(shared_data, tmp_path)), "--n", "16",
                        "--seeds", "0", "--sgdx-dir", str(tmp_path)], capture_output=True, text=True, timeout=600,
                       cwd=REPO)
    assert r.returncode == 2 and str(tmp_path) in r.stderr and "Traceback" not in r.stderr
    assert "mean ± sd over seeds" not in r.stdout  # nothing was evaluated
