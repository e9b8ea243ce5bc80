"""Time the Table-1 statistics: 10k-resample CIs and paired bootstrap, 280 turns, 6 evaluators.

Target: < 2 s in total. Prints the timing; never asserts it (CI machines vary).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sage_core import bootstrap_cis, holm_bonferroni, paired_bootstrap


def main() -> int:
    rng = np.random.default_rng(0)
    n, n_eval = 280, 6
    y = rng.integers(0, 2, n)
    preds = {f"eval{i}": np.where(rng.random(n) < 0.70 + 0.04 * i, y, 1 - y) for i in range(n_eval)}
    clusters = np.arange(n) // 4
    t0 = time.perf_counter()
    cis = bootstrap_cis(y, preds, n_resamples=10_000, seed=0)
    t1 = time.perf_counter()
    sage = preds.pop(f"eval{n_eval - 1}")
    pr = paired_bootstrap(y, sage, preds, n_resamples=10_000, seed=0)
    t2 = time.perf_counter()
    pvals = [paired_bootstrap(y, sage, {k: v}, n_resamples=10_000, seed=0).p for k, v in preds.items()]
    holm_bonferroni(pvals)
    t3 = time.perf_counter()
    cl = bootstrap_cis(y, dict(preds, sage=sage), n_resamples=10_000, seed=0, clusters=clusters)
    t4 = time.perf_counter()
    total = t4 - t0
    print(f"bootstrap CIs, {n_eval} evaluators x 10k resamples x {n} turns: {t1 - t0:.3f} s")
    print(f"paired bootstrap vs {len(preds)} baselines (re-selected):      {t2 - t1:.3f} s")
    print(f"per-baseline paired tests + Holm:                       {t3 - t2:.3f} s")
    print(f"dialogue-clustered CIs (70 dialogues):                  {t4 - t3:.3f} s")
    print(f"sage F1 {cis[f'eval{n_eval - 1}'][0]:.3f}, delta {pr.delta:+.3f} "
          f"[{pr.lo:+.3f}, {pr.hi:+.3f}] p={pr.p:.4f}; clustered CI {cl['sage'][1]:.3f}-{cl['sage'][2]:.3f}")
    mark = "PASS" if total < 2.0 else "FAIL"
    print(f"[{mark}] total {total:.3f} s (target < 2 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
