"""Noisy-input linear regression for practitioners: nolo's estimators against the naive baselines.

**Synthetic grid.**  ``n`` items ``x ~ N(0, I_d)``, each read ``m`` times,
``x_k = x + n_k`` with ``n_k ~ N(0, r I_d)`` where ``r`` is the
noise-to-signal ratio (noise variance of one reading over the signal variance
of a coordinate); target ``y = s (<w*, x> + e)``, ``w* ~ N(0, I_d / d)``,
``e ~ N(0, 0.1 Var<w*, x>)`` (a clean-input R^2 ceiling near 1), target scale
``s``.  The attenuation factor of least squares on the mean of the readings
is ``lambda = 1 / (1 + r / m)``.  Every estimator of :mod:`.estimators` fits
the same readings; it is scored on 2000 fresh *clean* inputs against the
noiseless target ``s <w*, x>`` (clean-input R^2) and by ``||w - s w*|| / ||s w*||``.
Both scales are fitted on the same draws, so the scale comparison is paired.

**Real dataset.**  No package nolo depends on ships genuinely repeated
measurements of a regression's inputs, so the design is simulated on a real
one: scikit-learn's bundled *diabetes* data (442 patients, 10 standardised
baseline variables, disease progression after one year).  The features are
centred and scaled to unit variance, the target centred; a seeded 70/30 split;
each training patient gets ``m`` readings ``x + N(0, r I)``; scores are R^2 on
the clean test patients against their real targets and the coefficient error
against OLS on the clean training inputs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from nolo.experiments import plots
from nolo.papers.practice.estimators import ESTIMATORS, LABELS, NOLO_ESTIMATORS, fit
from nolo.experiments.registry import experiment
from nolo.experiments.result import Claim, ExperimentResult

N_TEST = 2000
TARGET_NOISE = 0.1  # target-noise variance / signal variance of <w*, x>
CLAIM_N = 2000

#: the issue's grid (paper scale) and the quick subset (< 30 s on 2 cores with a warm numba cache)
FULL_GRID = {"m": [2, 4, 8], "nsr": [0.1, 0.5, 1.0, 2.0], "d": [3, 20], "n": [200, 2000], "scale": [1.0, 100.0]}
QUICK_GRID = {"m": [2, 8], "nsr": [0.5, 2.0], "d": [3, 20], "n": [2000], "scale": [1.0, 100.0]}
REAL_GRID = {"m": [2, 4, 8], "nsr": [0.5, 1.0, 2.0]}
QUICK_REAL_GRID = {"m": [2, 8], "nsr": [0.5, 2.0]}
DIABETES_SEED_STRIDE = 1_000  # paper scale: seeds s, s + 1000, s + 2000, s + 3000 for each of ctx.seeds


def attenuation(m: int, nsr: float) -> float:
    """``lambda = 1 / (1 + r/m)``: the factor OLS on the mean of ``m`` readings shrinks ``w`` by (isotropic x)."""
    return 1.0 / (1.0 + nsr / m)


def _r2(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    if not np.all(np.isfinite(y_pred)):
        return math.nan
    ss = float(np.sum((y_true - y_true.mean()) ** 2))
    return 1.0 - float(np.sum((y_true - y_pred) ** 2)) / ss


def _score_all(R, y, noise_var, seed, X_test, y_test, w_ref, scale, base: dict) -> list[dict]:
    from threadpoolctl import threadpool_limits

    rows = []
    for name in ESTIMATORS:
        with threadpool_limits(limits=1):  # small solves: threaded BLAS only contends with the other workers
            coef, intercept = fit(name, R, y, noise_var, seed)
        pred = X_test @ coef + intercept
        ref = scale * w_ref
        err = float(np.linalg.norm(coef - ref) / np.linalg.norm(ref)) if np.all(np.isfinite(coef)) else math.nan
        rows.append({**base, "scale": scale, "estimator": name, "r2": _r2(scale * y_test, pred), "coef_error": err})
    return rows


def synthetic_cell(m: int, nsr: float, d: int, n: int, seed: int):
    """The grid's draws (module docstring): ``(readings (n, m, d), y (n,), X_test (N_TEST, d), w* (d,))``."""
    rng = np.random.default_rng([seed, m, int(round(nsr * 1000)), d, n])
    w = rng.normal(size=d) / math.sqrt(d)
    X = rng.normal(size=(n, d))
    y = X @ w + math.sqrt(TARGET_NOISE * float(w @ w)) * rng.normal(size=n)
    R = X[:, None, :] + math.sqrt(nsr) * rng.normal(size=(n, m, d))
    return R, y, rng.normal(size=(N_TEST, d)), w


def grid_cell(m: int, nsr: float, d: int, n: int, scales: list, seed: int) -> pd.DataFrame:
    """One synthetic cell: the same draws fitted at every target scale by every estimator."""
    R, y, X_test, w = synthetic_cell(m, nsr, d, n, seed)
    base = {"dataset": "synthetic", "m": m, "nsr": nsr, "d": d, "n": n, "seed": seed,
            "attenuation": attenuation(m, nsr)}
    rows = []
    for s in scales:
        rows += _score_all(R, s * y, nsr, seed, X_test, X_test @ w, w, float(s), base)
    return pd.DataFrame(rows)


def diabetes_cell(m: int, nsr: float, seed: int) -> pd.DataFrame:
    """The simulated replicate design on scikit-learn's diabetes data (see the module docstring)."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = y - y.mean()
    rng = np.random.default_rng([seed, m, int(round(nsr * 1000)), 442])
    perm = rng.permutation(X.shape[0])
    cut = int(0.7 * X.shape[0])
    tr, te = perm[:cut], perm[cut:]
    w_clean = np.linalg.lstsq(X[tr], y[tr], rcond=None)[0]
    R = X[tr][:, None, :] + math.sqrt(nsr) * rng.normal(size=(tr.shape[0], m, X.shape[1]))
    base = {"dataset": "diabetes", "m": m, "nsr": nsr, "d": X.shape[1], "n": tr.shape[0], "seed": seed,
            "attenuation": attenuation(m, nsr)}
    return pd.DataFrame(_score_all(R, y[tr], nsr, seed, X[te], y[te], w_clean, 1.0, base))


def _paired_worst(df: pd.DataFrame, est: str, base: str, name: str) -> dict:
    """The cell where ``est`` loses most to ``base`` (mean over seeds of the paired R^2 difference), that
    difference's standard error over the seeds, and the cell's (m, nsr)."""
    w = df.pivot_table(index=["m", "nsr", "seed"], columns="estimator", values="r2")
    diff = (w[base] - w[est]).groupby(level=["m", "nsr"])
    mean, se = diff.mean(), diff.sem()
    worst = mean.idxmax()
    return {f"{name}_worst_loss_to_{base}": float(mean[worst]), f"{name}_worst_loss_se": float(se[worst]),
            f"{name}_worst_loss_m": float(worst[0]), f"{name}_worst_loss_nsr": float(worst[1])}


def _summary(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["dataset", "m", "nsr", "d", "n", "scale", "attenuation", "estimator"]
    return df.groupby(keys, as_index=False).agg(r2=("r2", "mean"), r2_se=("r2", "sem"),
                                                coef_error=("coef_error", "mean"))


def _wide(mean: pd.DataFrame, value: str = "r2") -> pd.DataFrame:
    keys = ["dataset", "m", "nsr", "d", "n", "scale", "attenuation"]
    return mean.pivot_table(index=keys, columns="estimator", values=value).reset_index()


def claim_figures(mean: pd.DataFrame) -> dict:
    """The figures the claims are decided on, from the per-cell means (synthetic grid)."""
    syn = _wide(mean[mean["dataset"] == "synthetic"])
    figs = {}
    big = syn[syn["n"] == CLAIM_N]
    for name in ("bcrls_1pass", "bcrls_converged"):
        gap = (big[name] - big["corrected_ls"]).abs()
        figs[f"{name}_max_gap_to_cls_n{CLAIM_N}"] = float(gap.max()) if len(gap) else math.nan
    loss = syn["ols_mean"] - syn["bcrls_1pass"]
    figs["bcrls_1pass_worst_loss_to_ols_mean"] = float(loss.max())
    for name in ("corrected_ls", "corrected_ls_full", "corrected_ls_fuller5", "bcrls_1pass_full", "bcrls_1pass_fuller5"):
        if name in syn:  # without the guard and with Fuller's modification alone (same cells; NaN fits skipped)
            figs[f"{name}_worst_loss_to_ols_mean"] = float((syn["ols_mean"] - syn[name]).max())
    figs[f"bcrls_1pass_worst_loss_to_ols_mean_n{CLAIM_N}"] = float(loss[syn["n"] == CLAIM_N].max())
    for guarded, full in (("bcrls_1pass", "bcrls_1pass_full"), ("corrected_ls", "corrected_ls_full")):
        if full in syn:  # the guard's price: where the full correction is the better one, by how much
            figs[f"{guarded}_worst_loss_to_full_correction"] = float((syn[full] - syn[guarded]).max())
    att = syn[syn["attenuation"] < 0.8]
    gain = att["bcrls_1pass"] - att["ols_mean"]
    figs["bcrls_1pass_min_gain_where_attenuated"] = float(gain.min()) if len(gain) else math.nan
    big_gain = gain[att["n"] == CLAIM_N]
    figs[f"bcrls_1pass_min_gain_where_attenuated_n{CLAIM_N}"] = float(big_gain.min()) if len(big_gain) else math.nan
    # the share of OLS on the mean's shortfall from a perfect fit (R^2 = 1) that the correction recovers
    share = gain / (1.0 - att["ols_mean"])
    figs["bcrls_1pass_min_share_of_gap_closed_where_attenuated"] = float(share.min()) if len(share) else math.nan
    big_share = share[att["n"] == CLAIM_N]
    figs[f"bcrls_1pass_min_share_of_gap_closed_where_attenuated_n{CLAIM_N}"] = (
        float(big_share.min()) if len(big_share) else math.nan)
    # the most any estimator can gain there: OLS on the mean keeps R^2 ~ 1 - (1 - lambda)^2
    figs["max_possible_gain_at_largest_attenuated_lambda"] = (
        float((1 - att["attenuation"].max()) ** 2) if len(att) else math.nan
    )
    figs["cells_attenuated"] = float(len(att.drop_duplicates(["m", "nsr", "d", "n"])))
    worst = 0.0
    keys = ["m", "nsr", "d", "n"]
    for name in NOLO_ESTIMATORS:
        if name not in syn:
            continue
        piv = syn.pivot_table(index=keys, columns="scale", values=name)
        change = float((piv.max(axis=1) - piv.min(axis=1)).max()) if piv.shape[1] > 1 else math.nan
        figs[f"scale_change_r2_{name}"] = change
        worst = max(worst, change) if math.isfinite(change) else math.nan
    figs["scale_change_r2_max_nolo"] = worst
    return figs


_MARKERS = ("o", "s", "^", "v", "D", "x", "+")
_STYLES = ("-", "--")


def _plot(ctx, mean: pd.DataFrame, dataset: str, d: int | None, n: int | None, name: str, title: str) -> None:
    import matplotlib.pyplot as plt

    sub = mean[(mean["dataset"] == dataset) & (mean["scale"] == 1.0)]
    if d is not None:
        sub = sub[(sub["d"] == d) & (sub["n"] == n)]
    ms = sorted(sub["m"].unique())
    fig, axes = plt.subplots(1, len(ms), figsize=(4.6 * len(ms), 4.6), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, m in zip(axes[0], ms):
        for k, est in enumerate(ESTIMATORS):
            g = sub[(sub["m"] == m) & (sub["estimator"] == est)].sort_values("nsr")
            line, = ax.plot(g["nsr"], g["r2"], marker=_MARKERS[k % len(_MARKERS)], linestyle=_STYLES[k % 2],
                            label=LABELS[est])
            ax.errorbar(g["nsr"], g["r2"], yerr=g["r2_se"], fmt="none", ecolor=line.get_color())
        ax.set_xscale("log")
        ax.set_xlabel("noise-to-signal (noise var. / signal var.)")
        ax.set_title(f"m = {m} readings per item")
        ax.set_ylim(max(-0.2, float(sub["r2"].min()) - 0.05), 1.02)
    axes[0][0].set_ylabel("clean-input R^2")
    for ax in axes[0]:
        ax.legend(fontsize=7)  # merged into one legend below the panels by save_figure
    fig.suptitle(title)
    ctx.save_figure(fig, name)


@experiment(paper="practice", id="eiv",
            title="Noisy-input regression: nolo's EIV estimators vs OLS on the mean, on a grid and on diabetes",
            quick_seeds=2, full_seeds=5)
def eiv(ctx) -> ExperimentResult:
    """The comparison: clean-input R^2 and coefficient error of OLS on the mean / one reading,
    CorrectedLeastSquares, BiasCompensatedRLS (one pass, converged) and the CSS11 OGD learners."""
    grid = ctx.scale(QUICK_GRID, FULL_GRID)
    real = ctx.scale(QUICK_REAL_GRID, REAL_GRID)
    tasks = [{"m": m, "nsr": r, "d": d, "n": n, "scales": grid["scale"], "seed": s}
             for s in ctx.seeds for m in grid["m"] for r in grid["nsr"] for d in grid["d"] for n in grid["n"]]
    frames = ctx.map(grid_cell, tasks, name="practice-eiv-grid")
    # diabetes: one 442-patient draw per seed, so its cells scatter more than the grid's; at paper scale four draws
    # per seed (20 for the default 5), fixed before the run, so that its claim is decided on a paired SE of ~0.005
    rseeds = ctx.scale(ctx.seeds, [s + DIABETES_SEED_STRIDE * k for k in range(4) for s in ctx.seeds])
    rtasks = [{"m": m, "nsr": r, "seed": s} for s in rseeds for m in real["m"] for r in real["nsr"]]
    frames += ctx.map(diabetes_cell, rtasks, name="practice-eiv-diabetes")
    df = pd.concat(frames, ignore_index=True)
    mean = _summary(df)
    d_plot, n_plot = max(grid["d"]), max(grid["n"])
    _plot(ctx, mean, "synthetic", d_plot, n_plot, "r2_vs_noise",
          f"Synthetic: clean-input R^2 vs noise-to-signal (d = {d_plot}, n = {n_plot})")
    _plot(ctx, mean, "diabetes", None, None, "diabetes_r2_vs_noise",
          "diabetes (simulated replicates): clean-test R^2 vs noise-to-signal")
    figs = claim_figures(mean)
    for name in ("corrected_ls", "corrected_ls_full"):
        figs[f"{name}_failed_fits"] = float(df[df["estimator"] == name]["r2"].isna().sum())
    dia = _wide(mean[mean["dataset"] == "diabetes"])
    for name in ("bcrls_1pass", "bcrls_1pass_full", "corrected_ls"):
        figs[f"diabetes_{name}_minus_ols_mean_min"] = float((dia[name] - dia["ols_mean"]).min())
        figs[f"diabetes_{name}_minus_ols_mean_max"] = float((dia[name] - dia["ols_mean"]).max())
    figs.update(_paired_worst(df[df["dataset"] == "diabetes"], "bcrls_1pass", "ols_mean", "diabetes_bcrls_1pass"))
    claims = [
        Claim(f"BiasCompensatedRLS after one pass is within 0.01 R^2 of CorrectedLeastSquares at n = {CLAIM_N}",
              f"bcrls_1pass_max_gap_to_cls_n{CLAIM_N}", "<=", 0.01,
              why="the one-pass fixed point lags the batch solve -- docs/practice.md#claims"),
        Claim("BiasCompensatedRLS (one pass) is never worse than OLS on the mean of readings by more than 0.01 R^2",
              "bcrls_1pass_worst_loss_to_ols_mean", "<=", 0.01,
              why="the default guard (cv_folds=5, one-standard-error rule) kept too much of the correction in an "
                  "ill-posed cell: the choice of scale is itself noisy on small samples (n = 200, d = 20) -- "
                  "docs/practice.md#claims"),
        Claim("BiasCompensatedRLS (one pass) beats OLS on the mean by >= 0.1 R^2 wherever the attenuation factor < 0.8",
              "bcrls_1pass_min_gain_where_attenuated", ">=", 0.1,
              why="at lambda = 2/3 OLS on the mean keeps R^2 ~ 1 - (1 - lambda)^2 = 0.89: at most 0.11 to gain, "
                  "less the estimator's own error; at n = 200, d = 20 the sample does not determine the full "
                  "correction (the guard turns it down: gains 0-0.06) -- docs/practice.md#claims"),
        Claim(f"BiasCompensatedRLS (one pass) closes at least half of OLS on the mean's gap to a perfect fit "
              f"(R^2 = 1) wherever the attenuation factor < 0.8, at n = {CLAIM_N} (the issue's 0.1 restated as a "
              "share of the attainable gain; fixed before the run)",
              f"bcrls_1pass_min_share_of_gap_closed_where_attenuated_n{CLAIM_N}", ">=", 0.5,
              why="the one-pass estimate or the guard leaves more than half of the attenuation loss -- "
                  "docs/practice.md#claims"),
        Claim("on diabetes (simulated replicates on a real regression design) BiasCompensatedRLS (one pass) is "
              "never worse than OLS on the mean of readings by more than 0.01 R^2 (4 draws per seed)",
              "diabetes_bcrls_1pass_worst_loss_to_ols_mean", "<=", 0.01, decidable_at="paper",
              why="309 training patients with correlated features: the cross-validated correction scale (5 folds of "
                  "~62 items) is itself noisy, and where the correction gains little a noisy scale costs a little "
                  "(see diabetes_bcrls_1pass_worst_loss_se) -- docs/practice.md#diabetes"),
        Claim("target scale (1 vs 100) changes no nolo estimator's clean-input R^2 by more than 0.005",
              "scale_change_r2_max_nolo", "<=", 0.005,
              why="an estimator's fit depends on the target's scale (the sklearn_api estimators standardise the "
                  "target; a radius of 1 could not hold ||w|| = 100) -- "
                  "docs/practice.md#claims"),
    ]
    wide_r2 = _wide(mean)
    wide_err = _wide(mean, "coef_error")
    table = wide_r2[wide_r2["scale"] == 1.0].round(3)
    err_table = wide_err[wide_err["scale"] == 1.0].round(3)
    return ExperimentResult(figures=figs, claims=claims,
                            tables={"clean_r2": table, "coef_error": err_table, "all_cells": mean.round(4)})
