"""AM experiments: registration and the per-task functions on the smallest dataset (Iris)."""

import numpy as np

from nolo.experiments import get_experiments, load_experiment_modules
from nolo.papers.am import _common as C
from nolo.papers.am.noise_rates import PAPER, estimate_task


def test_registered_ids():
    load_experiment_modules()
    ids = {e.id for e in get_experiments("am")}
    assert {"error-curves", "gamma-sweep", "noise-rates", "claims"} <= ids


def test_curves_task_iris():
    out = C.curves_task("iris", 0.2, 0.2, [0, 1], True, 20_000)
    algos = set(out["algo"].tolist())
    assert algos == {*C.ALGORITHMS, "Perceptron"}
    assert np.all((out["error_rate"] >= 0) & (out["error_rate"] <= 1))
    last = out["t"] == out["t"].max()
    fin = {a: out["error_rate"][last & (out["algo"] == a)].mean() for a in algos}
    assert fin["Perceptron"] < 0.2 and fin["RCNBF"] < 0.5  # chance is 2/3
    assert set(out["gamma"][out["algo"] == "RCNBF"]) <= set(C.GAMMA_GRID)
    rc = out["algo"] == "RCINE"
    assert np.all(np.isfinite(out["rho0_hat"][rc])) and np.all(out["nrest_seconds"][rc] > 0)


def test_noise_rate_task_and_paper_table():
    assert set(PAPER) == {"mnist", "usps", "fashion-mnist", "iris", "synsep"}
    assert all(set(v) == set(C.SETTINGS) for v in PAPER.values())
    res = estimate_task("iris", 0.2, 0.4, 0, 5_000, True)
    assert abs(res["rho0_hat"][0] - 0.2) < 0.2 and abs(res["rho1_hat"][0] - 0.4) < 0.2
