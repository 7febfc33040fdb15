"""CSS11 Algorithm 2 under Gaussian input noise: surrogate-kernel learning vs naive and clean kernel OGD.

Nonlinear target ``f(x) = sin(2 x_1) + x_2 x_3`` on ``x ~ U[-1.5, 1.5]^3``, target noise sd 0.1,
input noise ``N(0, sigma^2 I)`` at several levels relative to the kernel width ``s^2 = 2``
(``2 sigma^2 / s^2`` from 0.1 to 0.6; Algorithm 2 needs it < 1, and ``c = 1 < d / (4 sigma^2)``).  Learners (same step and ``W``):

* ``alg2_gaussian`` -- Algorithm 2 with the surrogate of eq. (5) (two copies per round);
* ``alg2_radial`` -- Algorithm 2 with the radial approximation (16)/(17), ``c = 1``;
* ``naive_gaussian`` / ``naive_radial`` -- kernel OGD with the original kernel on one noisy copy;
* ``clean_gaussian`` -- kernel OGD on the clean instances (the reference no noisy learner can beat).

Figures: the average clean loss of the played predictors over the rounds and the test MSE of the
final predictor on clean points, against the noise level.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nolo.experiments import plots
from nolo.experiments.play import Stream, play
from nolo.experiments.registry import experiment
from nolo.experiments.result import Claim, ExperimentResult
from nolo.kernels.radial import RadialKernelApproximation
from nolo.kernels.surrogate import GaussianSurrogateKernel
from nolo.learners.kernel.gaussian_noise import GaussianNoiseKernelRegression, KernelOGDRegression

D, WIDTH, C_RADIAL, STEP, W = 3, 2.0, 1.0, 0.03, 10.0


def target(X: np.ndarray) -> np.ndarray:
    return np.sin(2.0 * X[:, 0]) + X[:, 1] * X[:, 2]


def kernel_run(seed: int, T: int, noise_var: float, n_test: int = 500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.5, 1.5, (T, D))
    y = target(X)
    yn = y + 0.1 * rng.standard_normal(T)
    C = X[:, None, :] + np.sqrt(noise_var) * rng.standard_normal((T, 2, D))
    Xt = rng.uniform(-1.5, 1.5, (n_test, D))
    yt = target(Xt)
    gauss = GaussianSurrogateKernel(width=WIDTH, noise_cov=noise_var)
    radial = RadialKernelApproximation(c=C_RADIAL, noise_variance=noise_var)
    stream = Stream(X, y, copies=C, seen_y=yn)  # two noisy copies per round; the naive learners take the first
    learners = {
        "alg2_gaussian": (GaussianNoiseKernelRegression(kernel=gauss, W=W, step=STEP), stream),
        "alg2_radial": (GaussianNoiseKernelRegression(kernel=radial, W=W, step=STEP), stream),
        "naive_gaussian": (KernelOGDRegression(kernel=GaussianSurrogateKernel(width=WIDTH), W=W, step=STEP), stream),
        "naive_radial": (KernelOGDRegression(kernel=RadialKernelApproximation(c=C_RADIAL), W=W, step=STEP), stream),
        "clean_gaussian": (KernelOGDRegression(kernel=GaussianSurrogateKernel(width=WIDTH), W=W, step=STEP),
                           Stream(X, y, seen_y=yn)),
    }
    rows = []
    for name, (learner, data) in learners.items():
        r = play(learner, data, learner.protocol, [T], loss="squared")
        rows.append({"seed": seed, "noise_var": noise_var, "learner": name,
                     "avg_clean_loss": float(np.mean(r.losses)),
                     "test_mse": float(np.mean((learner.predict(Xt) - yt) ** 2))})
    return pd.DataFrame(rows)


@experiment(paper="css11", id="kernel-noise", title="Algorithm 2 (Gaussian and radial surrogates) vs naive and clean kernel OGD",
            quick_seeds=3, full_seeds=10, takes_rounds=True)
def kernel_noise(ctx) -> ExperimentResult:
    T = ctx.horizon(500, 3000)
    levels = ctx.scale([0.1, 0.3, 0.6], [0.1, 0.2, 0.3, 0.45, 0.6])  # noise variance; 2 sigma^2 / s^2 = sigma^2
    tasks = [{"seed": s, "T": T, "noise_var": v} for v in levels for s in ctx.seeds]
    df = pd.concat(ctx.map(kernel_run, tasks, name="css11-kernel-noise"), ignore_index=True)
    mean = df.groupby(["learner", "noise_var"], as_index=False).agg(
        avg_clean_loss=("avg_clean_loss", "mean"), test_mse=("test_mse", "mean"), test_se=("test_mse", "sem"))
    fig, axes = plots.new_figure(width=9.0)
    ax = axes
    for name, grp in mean.groupby("learner"):
        ax.errorbar(2 * grp["noise_var"] / WIDTH, grp["test_mse"], yerr=grp["test_se"], marker="o", label=name,
                    linestyle="-" if name.startswith("alg2") else "--")
    ax.set_xlabel("2 sigma^2 / s^2 (noise level relative to the kernel width)")
    ax.set_ylabel("test MSE on clean points")
    ax.set_title(f"CSS11 Algorithm 2, T = {T}")
    ax.legend(fontsize=8)
    ctx.save_figure(fig, "kernel_test_mse_vs_noise")
    top = mean[mean["noise_var"] == max(levels)].set_index("learner")
    figs = {f"{n}_test_mse": float(top.loc[n, "test_mse"]) for n in top.index}
    figs.update({f"{n}_avg_clean_loss": float(top.loc[n, "avg_clean_loss"]) for n in top.index})
    figs["naive_minus_alg2_gaussian"] = figs["naive_gaussian_test_mse"] - figs["alg2_gaussian_test_mse"]
    figs["naive_minus_alg2_gaussian_avg_clean_loss"] = (figs["naive_gaussian_avg_clean_loss"]
                                                        - figs["alg2_gaussian_avg_clean_loss"])
    paired = df[df.noise_var == max(levels)].pivot_table(index="seed", columns="learner", values="test_mse")
    diff = paired["naive_gaussian"] - paired["alg2_gaussian"]
    figs["naive_minus_alg2_gaussian_se"] = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else float("nan")
    figs["naive_minus_alg2_radial"] = figs["naive_radial_test_mse"] - figs["alg2_radial_test_mse"]
    figs["alg2_minus_clean_gaussian"] = figs["alg2_gaussian_test_mse"] - figs["clean_gaussian_test_mse"]
    claims = [
        # Theorem 3 bounds the regret of the played predictors on the clean loss, so the claim is on their average
        # clean loss; the final predictor's test MSE is reported beside it (figure + paired standard error over
        # seeds): at the highest noise level it is a tie at paper scale (-0.002 +- 0.028 over 10 seeds, where the
        # average clean loss separates by 0.069 +- 0.010) -- docs/benchmarks-css11.md#kernel-noise
        Claim("Theorem 3: at the highest noise level, Algorithm 2 (Gaussian) beats naive kernel OGD on the average "
              "clean loss of its played predictors", "naive_minus_alg2_gaussian_avg_clean_loss", ">", 0.0),
        Claim("Theorem 5 (App. E): Algorithm 2 with the radial surrogate beats naive radial kernel OGD",
              "naive_minus_alg2_radial", ">", 0.0),
        Claim("clean-data kernel OGD remains the lower reference (Algorithm 2 Gaussian test MSE above it)",
              "alg2_minus_clean_gaussian", ">", 0.0),
    ]
    return ExperimentResult(figures=figs, claims=claims, tables={"kernel": mean})
