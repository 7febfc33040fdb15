"""Experiment ``css10/learning``: learning under noise -- Algorithm 1 vs the naive one-copy learner vs clean data.

Targets come from a fixed predictor in the RKHS, ``f*(x) = sum_j a_j k(z_j, x)``
(5 centres), normalised to unit mean square (so the zero predictor has squared loss 1); inputs ``x ~ N(0, I/d)``, ``d = 3``,
and Gaussian noise of per-coordinate sd 0.8 -- the order of the signal
(per-coordinate sd 0.58).  Regression: ``y = f*(x)``, squared loss;
classification: ``y = sign f*(x)``, smoothed hinge (``s = 1``).  Kernels:
inhomogeneous polynomial of degree 2 and Gaussian (``sigma2 = 4``, of the
order of ``E||x~||^2`` as CSS10 recommends after Theorem 2, so that
``B_x / sigma2 = O(1)``).  The metric is the online average clean loss
``(1/t) sum_s l(<w_s, Psi(x_s)>, y_s)``.

What it shows: Algorithm 1 learns in every setting, and where the naive
learner's bias is large (squared loss, polynomial kernel: attenuation of the
quadratic and linear parts) it overtakes it -- on average over seeds after
roughly 5,000-10,000 rounds, so that comparison is claimed at paper scale
(T = 20,000) only; under ``--quick`` (T = 3,000) the curves are shown.
Where the naive bias is small (the smooth Gaussian-kernel target, and sign
labels in classification) the naive learner stays ahead over these horizons:
Algorithm 1 pays for unbiasedness with the variance of its estimates
(``E||Psi~||^2 = p/(p-1) Q(p E||x~||^2)``, the constants of Theorems 1-2).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from nolo.experiments import Claim, ExperimentResult, experiment
from nolo.experiments.play import Stream, play
from nolo.kernels import GaussianKernel, PolynomialKernel
from nolo.learners.kernel import CleanKernelOGD, NaiveKernelOGD, NoisyKernelLearner
from nolo.losses import get_loss
from nolo.noise import GaussianNoise

SETTINGS = {
    ("squared", "poly2"): {"eta_alg1": 0.005, "eta_ogd": 0.1},
    ("squared", "gaussian"): {"eta_alg1": 0.01, "eta_ogd": 0.2},
    ("smoothed_hinge", "poly2"): {"eta_alg1": 0.005, "eta_ogd": 0.2},
    ("smoothed_hinge", "gaussian"): {"eta_alg1": 0.005, "eta_ogd": 0.5},
}
NOISE_SD = 0.8
SIGMA2 = 4.0
D = 3


def _kernel(name: str):
    return PolynomialKernel(2, 1.0) if name == "poly2" else GaussianKernel(SIGMA2)


def make_stream(kernel_name: str, loss_name: str, T: int, seed: int):
    """Clean inputs and targets from a fixed RKHS predictor (the same predictor for every seed)."""
    k = _kernel(kernel_name)
    g = np.random.default_rng(12345)
    Z = g.normal(size=(5, D)) / math.sqrt(D)
    a = g.normal(size=5)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, D)) / math.sqrt(D)
    f = k(X, Z) @ a
    ref = k(g.normal(size=(2000, D)) / math.sqrt(D), Z) @ a
    f = f / math.sqrt(np.mean(ref**2))
    y = f if loss_name == "squared" else np.where(f >= 0, 1.0, -1.0)
    return X, y, rng


#: the learners by name: Algorithm 1 (noisy copies), kernel OGD on one noisy copy, kernel OGD on clean data
LEARNERS = {"algorithm1": NoisyKernelLearner, "naive": NaiveKernelOGD, "clean": CleanKernelOGD}


def make_learner(learner: str, kernel: str, loss: str, seed: int):
    """Learner ``learner`` of :data:`LEARNERS` with this setting's steps (B_w = 25, eta / sqrt(t))."""
    cfg = SETTINGS[(loss, kernel)]
    params = {"B_w": 25.0, "step": "sqrt", "eta": cfg["eta_ogd"]}
    if learner == "algorithm1":  # Algorithm 1's own step and its random degrees' seed
        params.update(p=2.0, eta=cfg["eta_alg1"], seed=seed + 7)
    return LEARNERS[learner](_kernel(kernel), get_loss(loss), **params)


def learning_task(loss: str, kernel: str, learner: str, T: int, seed: int) -> dict:
    X, y, rng = make_stream(kernel, loss, T, seed)
    L = make_learner(learner, kernel, loss, seed)
    every = max(1, T // 200)
    r = play(L, Stream(X, y, noise=GaussianNoise(NOISE_SD), rng=rng), L.protocol, np.arange(every, T + 1, every),
             loss=L.loss)
    return {"loss": loss, "kernel": kernel, "learner": learner, "seed": seed, "t": r.frame.t.to_numpy(),
            "avg_clean_loss": r.frame.avg_clean_loss.to_numpy()}


@experiment(paper="css10", id="learning", title="Learning under noise: Algorithm 1 vs naive one-copy vs clean (CSS10 Thms 1-2)",
            quick_seeds=1, full_seeds=5, description=" ".join(__doc__.split()), takes_rounds=True)
def learning(ctx):
    T = ctx.horizon(3000, 20000)
    tasks = [{"loss": lo, "kernel": k, "learner": le, "T": T, "seed": s}
             for s in ctx.seeds for (lo, k) in SETTINGS for le in ("algorithm1", "naive", "clean")]
    df = pd.concat(ctx.map(learning_task, tasks, name="learning"), ignore_index=True)

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(18, 4.2))
    figures, claims, rows = {}, [], []
    for ax, (lo, k) in zip(axes, SETTINGS):
        sub = df[(df.loss == lo) & (df.kernel == k)]
        for le, st in (("algorithm1", "-"), ("naive", "--"), ("clean", ":")):
            c = sub[sub.learner == le].groupby("t").avg_clean_loss.mean()
            ax.plot(c.index, c.values, st, label=le)
            final = float(c.values[-1])
            figures[f"final_{lo}_{k}_{le}"] = (final, "loss")
            rows.append({"loss": lo, "kernel": k, "learner": le, "final_avg_clean_loss": final})
        ax.set_xscale("log")
        ax.set_title(f"{lo}, {k}")
        ax.set_xlabel("round t")
        ax.set_ylabel("average clean loss")
        ax.legend(fontsize=7)
        gap = figures[f"final_{lo}_{k}_naive"][0] - figures[f"final_{lo}_{k}_algorithm1"][0]
        figures[f"naive_minus_alg1_{lo}_{k}"] = (gap, "loss")
        zero_loss = float(get_loss(lo).loss(0.0, 1.0)) if lo != "squared" else 1.0
        figures[f"zero_predictor_{lo}"] = (zero_loss, "loss")
        claims.append(Claim(f"Algorithm 1 learns from noisy copies: its average clean loss is below the zero predictor's {zero_loss:.3f} ({lo}, {k}; CSS10 Thm {1 if k == 'poly2' else 2})",
                            f"final_{lo}_{k}_algorithm1", "<", zero_loss))
        if (lo, k) == ("squared", "poly2"):  # needs the paper-scale horizon (see the docstring)
            claims.append(Claim(f"With noise of the signal's order, Algorithm 1's average clean loss ends below the biased naive one-copy learner's ({lo}, {k}; CSS10 section 3.1)",
                                f"naive_minus_alg1_{lo}_{k}", ">", 0.0, decidable_at=20_000, at=T))
    fig.tight_layout()
    ctx.save_figure(fig, "learning_curves")
    return ExperimentResult(figures=figures, claims=claims, tables={"final": pd.DataFrame(rows)})
