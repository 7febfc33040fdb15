"""Plots: fitted slopes, log-log styles with bands over seeds, PNG output without a display."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nolo.exceptions import ParameterError
from nolo.experiments import plots


def _curves(exponents: dict[str, float], seeds=(0, 1, 2)) -> pd.DataFrame:
    t = np.unique(np.logspace(1, 4, 40).astype(int))
    rows = []
    for name, a in exponents.items():
        for s in seeds:
            noise = np.random.default_rng(s).normal(1.0, 0.01, t.size)
            rows.append(pd.DataFrame({"learner": name, "seed": s, "setting": "default", "t": t,
                                      "regret": 2.0 * t**a * noise, "error_rate": 1.0 / np.sqrt(t) * noise}))
    return pd.concat(rows, ignore_index=True)


def test_fit_slope_recovers_power_laws_and_ignores_nonpositive_points():
    t = np.arange(1, 1001)
    assert plots.fit_slope(t, 3.0 * t**0.5) == pytest.approx(0.5, abs=1e-12)
    v = 3.0 * t**0.7
    v[:100] = -1.0
    assert plots.fit_slope(t, v) == pytest.approx(0.7, abs=1e-12)
    assert plots.fit_slope(t, t**2.0, min_t=500) == pytest.approx(2.0, abs=1e-12)
    assert np.isnan(plots.fit_slope([1, 2], [1, 2]))


def test_regret_vs_rounds_reports_each_learners_slope(tmp_path):
    fig, slopes = plots.regret_vs_rounds(_curves({"sqrt": 0.5, "linear": 1.0}))
    assert slopes["sqrt"] == pytest.approx(0.5, abs=0.02)
    assert slopes["linear"] == pytest.approx(1.0, abs=0.02)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert any("slope 0.50" in t.get_text() for t in ax.get_legend().get_texts())
    path = plots.save_figure(fig, tmp_path / "sub" / "regret.png")
    from matplotlib.image import imread

    img = imread(path)
    assert img.shape[:2] == (400, 550) and img[..., :3].std() > 0.05


def test_metric_vs_rounds_draws_a_band_over_seeds():
    fig = plots.metric_vs_rounds(_curves({"a": 0.5, "b": 1.0}), "error_rate", ylabel="error rate")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.get_lines()) == 2 and len(ax.collections) == 2  # one line and one band per learner
    band = plots.mean_band(_curves({"a": 0.5}), "error_rate", ["learner"])
    assert (band["se"] > 0).all() and len(band) == band["t"].nunique()
    with pytest.raises(ParameterError, match="metric must be a recorded column"):
        plots.metric_vs_rounds(_curves({"a": 0.5}), "accuracy")


def test_estimates_vs_truth():
    fig = plots.estimates_vs_truth([0.0, 1.0, 2.0], [0.01, 0.98, 2.02], se=[0.01, 0.02, 0.01], labels="abc")
    assert fig.axes[0].get_xlabel() == "true value"
    with pytest.raises(ParameterError, match="equal length"):
        plots.estimates_vs_truth([0.0, 1.0], [1.0])


def test_a_multi_panel_figure_gets_one_shared_legend(tmp_path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 3)
    for i, ax in enumerate(axes):
        ax.plot([1, 2], [1, 2], color="tab:red", label=f"RCNBF (gamma={0.1 * (i + 1):g})")
        ax.plot([1, 2], [2, 1], color="tab:orange", label="BPA (gamma=0.01)")
        ax.legend(fontsize=6)
    plots.save_figure(fig, tmp_path / "panels.png")
    assert all(ax.get_legend() is None for ax in axes)
    assert len(fig.legends) == 1
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["RCNBF", "BPA (gamma=0.01)"]
    one, ax = plots.new_figure()
    ax.plot([1, 2], [1, 2], label="a")
    ax.legend()
    assert not plots.shared_legend(one)  # one panel keeps its legend
