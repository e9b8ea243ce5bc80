"""The turn-confidence fit (benchmarks/fit_turn_confidence.py): the map it builds from turn rows, and its refusal of
the test split."""
from __future__ import annotations

import numpy as np

from sage_core.data.types import TurnLabel
from tests.benchmark_modules import load_benchmark

fit = load_benchmark("fit_turn_confidence")


def _rows(seed: int = 0) -> list[dict]:
    """Verdicts right as often as 1/2 + 1/2 sigmoid(a m + b) says per label, which (1 + m) / 2 misstates; turns
    without criteria right 90 % of the time."""
    rng = np.random.default_rng(seed)
    rows = []
    for label, a, b in ((TurnLabel.FAILURE, 4.0, 1.5), (TurnLabel.ACCEPTABLE, 3.0, -1.5)):
        for m in rng.uniform(0.2, 1.0, 3000):
            ok = bool(rng.random() < 0.5 + 0.5 / (1 + np.exp(-(a * m + b))))
            rows.append({"seed": seed, "label": label, "empty": False, "margin": float(m), "correct": ok,
                         "gold": int((label == TurnLabel.FAILURE) == ok), "pred": int(label == TurnLabel.FAILURE)})
    for _ in range(500):
        ok = bool(rng.random() < 0.9)
        rows.append({"seed": seed, "label": TurnLabel.ACCEPTABLE, "empty": True, "margin": None, "correct": ok,
                     "gold": int(not ok), "pred": 0})
    return rows


def test_the_fitted_map_calibrates_rows_it_was_not_fitted_on():
    cmap = fit.fit_map(_rows(0), "t")
    assert abs(cmap.failure[0] - 4.0) < 1.5
    assert abs(cmap.acceptable[0] - 3.0) < 1.0 and abs(cmap.acceptable[1] + 1.5) < 0.6
    assert abs(cmap.empty - 0.9) < 0.03
    held = _rows(1)
    plain = fit.TurnConfidenceMap("plain", empty=cmap.empty)
    assert fit.ece(held, cmap) < 0.03 < fit.ece(held, plain)


def test_refuses_the_test_split(tmp_path, capsys):
    (tmp_path / "test").mkdir()
    assert fit.main(["--data", str(tmp_path / "test")]) == 2
    assert "never on test" in capsys.readouterr().err
    assert fit.main(["--data", str(tmp_path / "nowhere")]) == 2
