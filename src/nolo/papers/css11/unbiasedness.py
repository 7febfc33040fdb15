"""CSS11 unbiasedness checks: every estimator's Monte Carlo mean against its clean target (|z| <= 4).

* Lemma 1 (two copies) and Lemma 2 (known covariance, corrected ``-2 Sigma w``, E9) gradient estimates,
  under Gaussian and non-Gaussian (mixed uniform) noise with a full covariance; the printed ``-Sigma w``
  version as a negative control;
* the Gaussian surrogate kernel eq. (5), diagonal noise and full ``Sigma`` through the rotation;
* the radial surrogate eq. (17) with ``sigma^2`` the variance (E12) against the approximate kernel (16);
* quadrature accuracy: closed form (16) and the surrogate (17) against adaptive ``scipy.integrate.quad``;
* the counter-example to the printed variance constant of Lemma 1 (E10).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.integrate import quad

from nolo.experiments import plots
from nolo.papers.css11._common import example_covariance, mixed_noise, zscores
from nolo.experiments.registry import experiment
from nolo.experiments.result import Claim, ExperimentResult
from nolo.kernels.radial import approx_radial_kernel, log_radial_surrogate, radial_surrogate
from nolo.kernels.surrogate import GaussianSurrogateKernel
from nolo.learners.linear.gradients import (
    clean_gradient,
    known_covariance_gradient,
    setting1_G,
    two_copy_gradient,
)


def gradient_checks(n: int, seed: int, noise: str) -> dict:
    """Max |z| of the Lemma 1 / Lemma 2 estimates (and the printed Lemma 2 as control), d = 4, full Sigma."""
    rng = np.random.default_rng(seed)
    d = 4
    Sigma = example_covariance(d, [0.1, 0.5, 1.2, 2.4])
    w = np.array([0.6, -0.5, 0.4, 0.5])
    x = np.array([0.5, 1.0, -0.3, 0.8])
    y = 0.7
    target = clean_gradient(w, x, y)
    X1 = x + mixed_noise(rng, n, Sigma, noise)
    X2 = x + mixed_noise(rng, n, Sigma, noise)
    Y = y + 0.5 * rng.standard_normal(n)
    g1 = two_copy_gradient(w, X1, X2, Y)
    g2 = known_covariance_gradient(w, X1, Y, Sigma)
    printed = g2 + Sigma @ w  # the paper's "- Sigma w"
    return {
        "noise": [noise],
        "setting1_max_abs_z": [float(np.max(np.abs(zscores(g1, target))))],
        "setting2_max_abs_z": [float(np.max(np.abs(zscores(g2, target))))],
        "printed_min_abs_z": [float(np.min(np.abs(zscores(printed, target))))],
    }


def kernel_checks(n: int, seed: int) -> dict:
    """z of the Gaussian surrogate (diagonal, full Sigma rotated) and the radial surrogate."""
    rng = np.random.default_rng(seed)
    d, s2 = 4, 3.0
    a = np.array([0.3, -0.2, 0.5, 0.1])
    x = np.array([-0.4, 0.6, 0.2, 0.9])
    target = np.exp(-np.sum((a - x) ** 2) / s2)
    var = np.array([0.2, 0.5, 0.8, 1.2])
    kd = GaussianSurrogateKernel(width=s2, noise_cov=var)
    Xd = x + rng.standard_normal((n, d)) * np.sqrt(var)
    z_diag = zscores(kd.surrogate_pairs(np.tile(a, (n, 1)), Xd), target)[0]
    z_naive = zscores(kd.original_pairs(np.tile(a, (n, 1)), Xd), target)[0]
    Sigma = example_covariance(d, [0.0025, 0.14, 0.47, 1.2], seed=5)
    kf = GaussianSurrogateKernel(width=s2, noise_cov=Sigma)
    Xf = x + mixed_noise(rng, n, Sigma, "gaussian")
    z_full = zscores(kf.surrogate_pairs(np.tile(a, (n, 1)), Xf), target)[0]
    # radial surrogate, d = 3, sigma^2 = 0.3, c = 2 (docs/math.md, item 9)
    dr, v, c = 3, 0.3, 2.0
    ar = np.array([0.2, -0.4, 0.3])
    xr = np.array([-0.5, 0.1, 0.6])
    Xr = xr + np.sqrt(v) * rng.standard_normal((n, dr))
    kr = radial_surrogate(np.sum((Xr - ar) ** 2, axis=1), dr, c, v)
    z_rad = zscores(kr, approx_radial_kernel(np.sum((xr - ar) ** 2), dr, c))[0]
    return {"gauss_diag_z": [float(z_diag)], "gauss_full_z": [float(z_full)], "naive_kernel_z": [float(z_naive)],
            "radial_z": [float(z_rad)]}


def _quad_surrogate(r2, d, c, v):
    f = lambda u: d * (1 - 2 * v * u) ** (-d / 2) * np.exp(-u * r2 / (1 - 2 * v * u) - u * d)  # noqa: E731
    U = c / d
    pts = [U * 2.0**-k for k in range(1, 40) if U * 2.0**-k > 0]
    return quad(f, 0, U, epsabs=0, epsrel=1e-13, limit=400, points=sorted(pts))[0]


def quadrature_checks() -> dict:
    """Max relative error of the closed form (16) and of the surrogate quadrature (17) against scipy quad."""
    worst_k, worst_hat = 0.0, 0.0
    for d in (3, 10, 100):
        for c in (2.0, 4.0):
            for r2 in (0.0, 0.5, 3.0, 40.0, 400.0):
                ref = quad(lambda u: d * np.exp(-u * r2 - u * d), 0, c / d, epsabs=0, epsrel=1e-13)[0]
                worst_k = max(worst_k, abs(approx_radial_kernel(r2, d, c) / ref - 1))
            v = 0.3
            if c < d / (4 * v):
                for r2 in (0.0, 0.5, 3.0, 40.0, 400.0):
                    ref = _quad_surrogate(r2, d, c, v)
                    worst_hat = max(worst_hat, abs(np.expm1(log_radial_surrogate(r2, d, c, v) - np.log(ref))))
    return {"closed_form_rel_err": [float(worst_k)], "surrogate_rel_err": [float(worst_hat)]}


def variance_counterexample(n: int, seed: int) -> dict:
    """E||grad~||^2 of Lemma 1 at w = x = e1, y = -1, noise sd 0.05 (docs/math.md, item 7)."""
    rng = np.random.default_rng(seed)
    d = 2
    w = x = np.array([1.0, 0.0])
    X1 = x + 0.05 * rng.standard_normal((n, d))
    X2 = x + 0.05 * rng.standard_normal((n, d))
    g = two_copy_gradient(w, X1, X2, -1.0)
    sq = np.sum(g * g, axis=1)
    v = 0.05**2
    # exact: 4 E(<w,x~> - y)^2 E||x~'||^2 = 4 ((<w,x> - y)^2 + w^T Sigma w) (||x||^2 + tr Sigma)
    exact = 4.0 * ((1.0 + 1.0) ** 2 + v) * (1.0 + d * v)
    Bx = float(np.sqrt(1 + d * v))
    return {"second_moment_mc": [float(sq.mean())], "second_moment_exact": [exact],
            "mc_z": [float(zscores(sq, exact)[0])],
            "printed_G": [setting1_G(1.0, Bx, 1.0) / 2.0], "corrected_G": [setting1_G(1.0, Bx, 1.0)]}


def run_checks(part: str, n: int, seed: int, noise: str = "gaussian") -> pd.DataFrame:
    """One Monte Carlo task (module level, for ``ctx.map``)."""
    if part == "gradient":
        return pd.DataFrame(gradient_checks(n, seed, noise))
    if part == "kernel":
        return pd.DataFrame(kernel_checks(n, seed))
    if part == "quadrature":
        return pd.DataFrame(quadrature_checks())
    return pd.DataFrame(variance_counterexample(n, seed))


@experiment(paper="css11", id="unbiasedness", title="Unbiased estimates: Lemmas 1-2, surrogate kernels eq. (5) and (17)",
            quick_seeds=1, full_seeds=1)
def unbiasedness(ctx) -> ExperimentResult:
    n = ctx.scale(200_000, 4_000_000)
    seed = ctx.seeds[0]
    tasks = [
        {"part": "gradient", "n": n, "seed": seed, "noise": "gaussian"},
        {"part": "gradient", "n": n, "seed": seed + 1, "noise": "uniform"},
        {"part": "kernel", "n": n, "seed": seed + 2},
        {"part": "quadrature", "n": 0, "seed": 0},
        {"part": "variance", "n": n, "seed": seed + 3},
    ]
    g_gauss, g_unif, kern, quadr, var = ctx.map(run_checks, tasks, name="css11-unbiasedness")
    figs = {
        "setting1_max_abs_z": max(float(g_gauss.setting1_max_abs_z[0]), float(g_unif.setting1_max_abs_z[0])),
        "setting2_max_abs_z": max(float(g_gauss.setting2_max_abs_z[0]), float(g_unif.setting2_max_abs_z[0])),
        "printed_setting2_min_abs_z": min(float(g_gauss.printed_min_abs_z[0]), float(g_unif.printed_min_abs_z[0])),
        "gauss_diag_abs_z": abs(float(kern.gauss_diag_z[0])),
        "gauss_full_abs_z": abs(float(kern.gauss_full_z[0])),
        "naive_kernel_abs_z": abs(float(kern.naive_kernel_z[0])),
        "radial_abs_z": abs(float(kern.radial_z[0])),
        "closed_form_rel_err": float(quadr.closed_form_rel_err[0]),
        "surrogate_rel_err": float(quadr.surrogate_rel_err[0]),
        "lemma1_second_moment_exact": float(var.second_moment_exact[0]),
        "lemma1_second_moment_abs_z": abs(float(var.mc_z[0])),
        "printed_G_minus_moment": float(var.printed_G[0]) - float(var.second_moment_exact[0]),
        "corrected_G_minus_moment": float(var.corrected_G[0]) - float(var.second_moment_exact[0]),
    }
    claims = [
        Claim("Lemma 1: the two-copy gradient is unbiased (|z| <= 4, Gaussian and uniform noise)", "setting1_max_abs_z", "<=", 4.0),
        Claim("Lemma 2 corrected (-2 Sigma w, E9): unbiased (|z| <= 4)", "setting2_max_abs_z", "<=", 4.0),
        Claim("Lemma 2 as printed (-Sigma w) is biased (|z| >= 5 on every coordinate)", "printed_setting2_min_abs_z", ">=", 5.0),
        Claim("eq. (5): surrogate Gaussian kernel unbiased, diagonal Sigma (|z| <= 4)", "gauss_diag_abs_z", "<=", 4.0),
        Claim("eq. (5) + rotation: unbiased for a full Sigma (|z| <= 4)", "gauss_full_abs_z", "<=", 4.0),
        Claim("the naive kernel on a noisy point is biased (|z| >= 5)", "naive_kernel_abs_z", ">=", 5.0),
        Claim("eq. (17) with sigma^2 the variance (E12): radial surrogate unbiased (|z| <= 4)", "radial_abs_z", "<=", 4.0),
        Claim("eq. (16): closed form equals its integral (rel. err <= 1e-10)", "closed_form_rel_err", "<=", 1e-10),
        Claim("eq. (17) by log-space Gauss-Legendre matches scipy quad (rel. err <= 1e-8)", "surrogate_rel_err", "<=", 1e-8),
        Claim("E||grad||^2 of Lemma 1: Monte Carlo agrees with the exact value (|z| <= 4)", "lemma1_second_moment_abs_z", "<=", 4.0),
        Claim("E10: the printed Lemma 1 constant is exceeded by E||grad||^2 (printed G - moment < 0)", "printed_G_minus_moment", "<", 0.0),
        Claim("E10: the corrected G = 8(...) bounds E||grad||^2", "corrected_G_minus_moment", ">=", 0.0),
    ]
    table = pd.DataFrame([{"figure": k, "value": v} for k, v in figs.items()])
    zs = {k.replace("_abs_z", "").replace("_max", ""): v for k, v in figs.items() if k.endswith("_z") and "printed" not in k
          and "naive" not in k}
    fig, ax = plots.new_figure()
    ax.barh(list(zs), list(zs.values()), color="C0")
    ax.axvline(4.0, color="C3", linestyle="--", label="|z| = 4")
    ax.set_xlabel("|z| of the Monte Carlo mean vs its target")
    ax.set_title("CSS11 unbiasedness checks")
    ax.legend()
    ctx.save_figure(fig, "unbiasedness_z")
    return ExperimentResult(figures=figs, claims=claims, tables={"checks": table},
                            notes=f"{n} Monte Carlo replicates per check.")
