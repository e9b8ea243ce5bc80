"""Risk-coverage curves are downsampled for display only: every drawn point is an exact curve point,
both ends are kept, and gaps (undefined ratios) stay gaps."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ui.coverage import downsample


def curve(n: int, gap: slice | None = None) -> pd.DataFrame:
    cov = np.arange(1, n + 1) / n
    val = np.sin(cov * 7) ** 2
    if gap is not None:
        val[gap] = np.nan
    rows = [{"configuration": cfg, "coverage": c, "metric": "F1", "value": v, "n_kept": i + 1}
            for cfg in ("A", "B") for i, (c, v) in enumerate(zip(cov, val))]
    return pd.DataFrame(rows)


def test_small_curves_are_untouched():
    df = curve(200)
    assert downsample(df, 300).equals(df)


def test_large_curves_keep_exact_points_ends_and_gaps():
    df = curve(10_000, gap=slice(0, 37))
    out = downsample(df, 300)
    for cfg, g in out.groupby("configuration"):
        full = df[df.configuration == cfg].set_index("n_kept")
        assert 300 <= len(g) <= 304
        # exact values at the kept coverages
        kept = full.loc[g["n_kept"]]
        assert np.allclose(kept["coverage"].to_numpy(), g["coverage"].to_numpy())
        assert np.array_equal(np.isnan(kept["value"].to_numpy()), np.isnan(g["value"].to_numpy()))
        ok = ~np.isnan(g["value"].to_numpy())
        assert np.allclose(kept["value"].to_numpy()[ok], g["value"].to_numpy()[ok])
        assert g["n_kept"].iloc[0] == 1 and g["n_kept"].iloc[-1] == 10_000
        # the last undefined point and the first defined one are both drawn: the gap is not bridged
        assert {37, 38} <= set(g["n_kept"])
