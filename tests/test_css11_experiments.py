"""CSS11 experiments: registration with the platform and their task functions at small sizes."""

import numpy as np

from nolo.experiments.registry import get_experiments, load_experiment_modules


def test_four_experiments_registered():
    load_experiment_modules()
    ids = {e.id for e in get_experiments("css11")}
    assert {"unbiasedness", "regret", "recovery", "kernel-noise"} <= ids


def test_regret_task_regret_below_bound_and_naive_worse():
    from nolo.experiments.css11.regret import regret_run

    df = regret_run(seed=1, horizons=[500, 4000])
    last = df[df["T"] == 4000].set_index("learner")
    assert last.loc["setting1", "regret"] <= last.loc["setting1", "bound"]
    assert last.loc["setting2", "regret"] <= last.loc["setting2", "bound"]
    assert last.loc["naive", "regret"] > last.loc["setting1", "regret"]


def test_recovery_and_kernel_tasks():
    from nolo.experiments.css11.kernel_noise import kernel_run
    from nolo.experiments.css11.recovery import recovery_run

    rec = recovery_run(seed=2, horizons=[8000]).set_index("learner")["error"]
    assert rec["setting2"] < rec["naive"] and rec["batch_eiv"] < rec["batch_ols"]
    ker = kernel_run(seed=0, T=150, noise_var=0.3, n_test=100)
    assert set(ker["learner"]) == {"alg2_gaussian", "alg2_radial", "naive_gaussian", "naive_radial", "clean_gaussian"}
    assert np.all(np.isfinite(ker[["avg_clean_loss", "test_mse"]].to_numpy()))


def test_unbiasedness_checks_small():
    from nolo.experiments.css11.unbiasedness import run_checks

    g = run_checks("gradient", n=20_000, seed=3, noise="uniform")
    assert g["setting1_max_abs_z"][0] <= 4 and g["printed_min_abs_z"][0] >= 5
    q = run_checks("quadrature", n=0, seed=0)
    assert q["surrogate_rel_err"][0] <= 1e-8
