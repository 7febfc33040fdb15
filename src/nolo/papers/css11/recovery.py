"""CSS11 parameter recovery: the online-to-batch average ``w_bar`` of Settings 1-2 against ``w*``.

Linear data ``y = <w*, x> + e`` with ``x ~ N(0, v I)`` and input noise ``N(0, v I)`` of the same
variance as the signal (the regime where the attenuation bias of one-copy learning is large: naive
OGD and OLS on noisy inputs shrink ``w`` by about ``1/2``).  For each ``T`` the learners run one pass
with the theory step tuned for ``T``; ``||w_bar - w*||`` is compared with the batch
errors-in-variables corrected least squares (known ``Sigma``, :mod:`nolo.batch`) and plain OLS on the
noisy inputs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from nolo.batch import corrected_least_squares
from nolo.experiments import plots
from nolo.experiments.play import Stream, play
from nolo.experiments.registry import experiment
from nolo.experiments.result import Claim, ExperimentResult
from nolo.learners.linear import KnownCovarianceLinearRegression, NaiveOGDRegression, TwoCopyLinearRegression

D, V, Y_NOISE, RADIUS = 5, 0.2, 0.1, 2.0


def recovery_run(seed: int, horizons: list) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    Tmax = int(max(horizons))
    w_star = rng.standard_normal(D)
    w_star /= np.linalg.norm(w_star)
    X = math.sqrt(V) * rng.standard_normal((Tmax, D))
    y = X @ w_star
    yn = y + Y_NOISE * rng.standard_normal(Tmax)
    C = X[:, None, :] + math.sqrt(V) * rng.standard_normal((Tmax, 2, D))
    Bx = math.sqrt(2 * D * V)
    Bx4 = (D * (D + 2) * (2 * V) ** 2) ** 0.25  # E||x~||^4 for x~ ~ N(0, 2V I)
    By = math.sqrt(V + Y_NOISE**2)
    rows = []
    for T in horizons:
        T = int(T)
        s1 = TwoCopyLinearRegression(radius=RADIUS, x_bound=Bx, y_bound=By, horizon=T)
        s2 = KnownCovarianceLinearRegression(noise_cov=V, radius=RADIUS, x_bound=Bx4, y_bound=By, horizon=T,
                                             sigma_bound=V)
        naive = NaiveOGDRegression(radius=RADIUS, step=s1.step_rule())
        for name, learner in (("setting1", s1), ("setting2", s2), ("naive", naive)):
            play(learner, Stream(X[:T], y[:T], copies=C[:T], seen_y=yn[:T]), "noisy_input", [T])
            rows.append({"seed": seed, "learner": name, "T": T, "error": float(np.linalg.norm(learner.average_ - w_star))})
        w_eiv = corrected_least_squares(C[:T, 0], yn[:T], V, radius=RADIUS)
        w_ols = np.linalg.lstsq(C[:T, 0], yn[:T], rcond=None)[0]
        rows.append({"seed": seed, "learner": "batch_eiv", "T": T, "error": float(np.linalg.norm(w_eiv - w_star))})
        rows.append({"seed": seed, "learner": "batch_ols", "T": T, "error": float(np.linalg.norm(w_ols - w_star))})
    return pd.DataFrame(rows)


@experiment(paper="css11", id="recovery", title="Parameter recovery: online-to-batch Settings 1-2 vs naive OGD and batch EIV",
            quick_seeds=3, full_seeds=10, takes_rounds=True)
def recovery(ctx) -> ExperimentResult:
    horizons = ctx.horizons([1000, 4000, 16000, 64000], [1000, 4000, 16000, 64000, 256000, 1024000])
    frames = ctx.map(recovery_run, [{"seed": s, "horizons": horizons} for s in ctx.seeds], name="css11-recovery")
    df = pd.concat(frames, ignore_index=True)
    mean = df.groupby(["learner", "T"], as_index=False).agg(error=("error", "mean"), se=("error", "sem"))
    fig, ax = plots.new_figure()
    for name, grp in mean.groupby("learner"):
        ax.errorbar(grp["T"], grp["error"], yerr=grp["se"], marker="o", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("T (rounds / sample size)")
    ax.set_ylabel("||w_bar - w*||")
    ax.set_title("CSS11: recovery (noise var. = signal var.)")
    ax.legend(fontsize=8)
    ctx.save_figure(fig, "recovery_vs_T")
    last = mean[mean["T"] == mean["T"].max()].set_index("learner")["error"]
    slope = {n: plots.fit_slope(g["T"], g["error"]) for n, g in mean.groupby("learner")}
    figs = {
        "setting1_error": float(last["setting1"]),
        "setting2_error": float(last["setting2"]),
        "naive_error": float(last["naive"]),
        "batch_eiv_error": float(last["batch_eiv"]),
        "batch_ols_error": float(last["batch_ols"]),
        "naive_over_setting1": float(last["naive"] / last["setting1"]),
        "naive_over_setting2": float(last["naive"] / last["setting2"]),
        "setting1_error_slope": slope["setting1"],
        "setting2_error_slope": slope["setting2"],
    }
    claims = [
        Claim("Setting 1's average converges to w* (error slope in T <= -0.2)", "setting1_error_slope", "<=", -0.2),
        Claim("Setting 2's average converges to w* (error slope in T <= -0.2)", "setting2_error_slope", "<=", -0.2),
        Claim("naive OGD stays attenuation-biased: its error is >= 2x Setting 1's at the largest T", "naive_over_setting1", ">=", 2.0),
        Claim("naive OGD error >= 2x Setting 2's at the largest T", "naive_over_setting2", ">=", 2.0),
        Claim("OLS on noisy inputs is biased too (error >= 0.2 at the largest T)", "batch_ols_error", ">=", 0.2),
    ]
    return ExperimentResult(figures=figs, claims=claims, tables={"recovery": mean})
