"""Experiment ``css10/regret``: regret growth of Algorithm 1 (~sqrt T) vs the naive one-copy learner (~T).

Regression with the squared loss and the linear kernel on ``R^3`` (the
setting of CSS10 Theorem 3 and footnote 2), so the best fixed predictor in
hindsight over ``{||w||^2 <= B_w}`` is solved exactly
(:func:`nolo.oco.regret_curve`).  Inputs ``x ~ N(0, I)``, targets
``y = <w*, x>``, Gaussian input noise of sd 1 per coordinate (the signal's
order): the naive learner's
update is biased by the noise (attenuation), so its average regret stays
bounded away from 0 and its regret grows linearly; Algorithm 1's gradient
estimates are unbiased, so its regret grows like ``sqrt(T)`` (Theorem 1).
Every learner runs once to ``T_max`` with the anytime step ``eta/sqrt(t)``; the
regret at each ``T`` is that of the prefix against the best predictor for
the prefix.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from nolo.experiments import Claim, ExperimentResult, PaperRow, experiment
from nolo.papers.css10._common import loglog_slope
from nolo.experiments.play import Stream, play
from nolo.kernels import LinearKernel
from nolo.learners.kernel import NaiveKernelOGD, NoisyKernelLearner
from nolo.losses import get_loss
from nolo.noise import GaussianNoise

B_W = 4.0
W_STAR = np.array([1.0, -1.0, 0.5])
NOISE_SD = 1.0
ETA = {"algorithm1": 0.05, "naive": 0.05}


def checkpoints(T_max: int) -> np.ndarray:
    cps = [500]
    while cps[-1] * 2 <= T_max:
        cps.append(cps[-1] * 2)
    return np.array(cps)


#: the learners by name: Algorithm 1 and kernel OGD on one noisy copy
LEARNERS = {"algorithm1": NoisyKernelLearner, "naive": NaiveKernelOGD}


def regret_task(learner: str, T: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, W_STAR.shape[0]))
    y = X @ W_STAR
    params = {"B_w": B_W, "step": "sqrt", "eta": ETA[learner]}
    if learner == "algorithm1":
        params.update(p=2.0, seed=seed + 1)
    L = LEARNERS[learner](LinearKernel(), get_loss("squared"), **params)
    r = play(L, Stream(X, y, noise=GaussianNoise(NOISE_SD), rng=rng), "noisy_input", checkpoints(T), loss=L.loss,
             regret_radius=math.sqrt(B_W))  # the linear kernel's feature map is x itself
    return {"learner": learner, "seed": seed, "T": r.frame.t.to_numpy(), "regret": r.frame.regret.to_numpy()}


@experiment(paper="css10", id="regret", title="Regret growth: Algorithm 1 ~ sqrt(T) vs naive one-copy ~ T (CSS10 Thm 1, linear kernel)",
            quick_seeds=2, full_seeds=5, description=" ".join(__doc__.split()), takes_rounds=True)
def regret(ctx):
    T = ctx.horizon(8000, 32000)
    tasks = [{"learner": le, "T": T, "seed": s} for s in ctx.seeds for le in ("algorithm1", "naive")]
    df = pd.concat(ctx.map(regret_task, tasks, name="regret"), ignore_index=True)
    mean = df.groupby(["learner", "T"]).regret.mean().unstack(0)

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for le, mk in (("algorithm1", "o-"), ("naive", "s--")):
        ax.loglog(mean.index, np.maximum(mean[le].values, 1e-3), mk, label=le)
    Ts = mean.index.to_numpy(dtype=float)
    a1 = mean["algorithm1"].values
    ax.loglog(Ts, a1[-1] * np.sqrt(Ts / Ts[-1]), ":", color="0.5", label="slope 1/2")
    ax.loglog(Ts, mean["naive"].values[-1] * Ts / Ts[-1], ":", color="0.2", label="slope 1")
    ax.set_xlabel("T")
    ax.set_ylabel("cumulative regret vs best fixed predictor (clean data)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    ctx.save_figure(fig, "regret_loglog")
    large = mean.index >= 2000
    s_alg = loglog_slope(mean.index, mean["algorithm1"].values)
    s_naive = loglog_slope(mean.index[large], mean["naive"].values[large])
    figures = {
        "slope_algorithm1": (s_alg, ""),
        "slope_naive_large_T": (s_naive, ""),
        "regret_algorithm1_Tmax": (float(a1[-1]), "loss"),
        "regret_naive_Tmax": (float(mean["naive"].values[-1]), "loss"),
        "T_max": (float(Ts[-1]), "rounds"),
    }
    claims = [
        Claim("Algorithm 1's regret grows like sqrt(T): fitted log-log slope <= 0.65 (CSS10 Thm 1)", "slope_algorithm1", "<=", 0.65),
        Claim("The naive one-copy learner's regret grows linearly: log-log slope >= 0.9 for T >= 2000 (CSS10 section 3.1, Thm 3)",
              "slope_naive_large_T", ">=", 0.9),
    ]
    paper_rows = [PaperRow(quantity="log-log slope of Algorithm 1's regret", paper=0.5, ours=s_alg, note="Thm 1: O(sqrt(T))")]
    return ExperimentResult(figures=figures, claims=claims, tables={"regret": mean.reset_index()}, paper_rows=paper_rows)
