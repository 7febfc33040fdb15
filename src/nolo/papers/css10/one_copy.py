"""Experiment ``css10/one-copy``: one noisy copy is not enough (CSS10 Theorem 3, the two-world construction of section 5.3).

``y_t = 1``, squared loss ``(w x - 1)^2``, ``|w|^2 <= B_w = 4``, ``d = 1``.

* World A: ``x_t`` uniform on ``{3, -1}``, no noise.  Best fixed ``w = 0.2``.
* World B: ``x_t = 1`` (the mean of A), noise uniform on ``{+2, -2}``.  Best ``w = 1``.

A single copy has the same law in both worlds (uniform on ``{3, -1}``), so
any single-copy learner behaves identically in both and keeps a constant
average regret in at least one of them (here: the naive learner settles at
``w = 0.2`` and pays ``(0.2 - 1)^2 = 0.64`` per round in world B).  With two
independent copies the footnote-2 estimator ``2(w x~ - 1) x~'`` is unbiased
in both worlds and drives the average regret to 0 in each.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nolo._validation import check_scalar
from nolo.experiments import Claim, ExperimentResult, experiment
from nolo.experiments.play import Stream, play
from nolo.learners.linear import NaiveOGDRegression, TwoCopyLinearRegression
from nolo.noise import NoiseModel, ZeroNoise
from nolo.oco import InverseSqrtStep

B_W = 4.0


class TwoPointNoise(NoiseModel):
    """World B's noise: every coordinate ``+scale`` or ``-scale`` with probability 1/2 (zero mean, variance scale^2)."""

    def __init__(self, scale=2.0):
        self.scale = scale

    def _validate_params(self, d=None):
        check_scalar(self.scale, "scale", low=0.0)

    def _make_sampler(self, d):
        a = float(self.scale)
        return lambda rng, size, round, call: a * rng.choice([-1.0, 1.0], size=(size, d))

    def _covariance(self, d, round, call):
        return float(self.scale) ** 2 * np.eye(d)


#: the learners by name (CSS10's B_w bounds the squared norm; the linear learners take the radius sqrt(B_w))
LEARNERS = {"one-copy": NaiveOGDRegression, "two-copy": TwoCopyLinearRegression}
#: the worlds' input noise: A none (copies equal the instance), B two-point noise of scale 2
WORLD_NOISE = {"A": ZeroNoise, "B": TwoPointNoise}


def _avg_regret(played: np.ndarray, x: np.ndarray, cps: np.ndarray) -> np.ndarray:
    """Average regret at each checkpoint against the best |w| <= 2 for the prefix (closed form in 1-D)."""
    out = []
    for T in cps:
        xs = x[:T]
        w = np.clip(xs.sum() / (xs @ xs), -np.sqrt(B_W), np.sqrt(B_W))
        best = np.sum((w * xs - 1.0) ** 2)
        out.append((played[:T].sum() - best) / T)
    return np.array(out)


def one_copy_task(world: str, learner: str, T: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    L = LEARNERS[learner](radius=float(np.sqrt(B_W)), step=InverseSqrtStep(0.05))
    x = rng.choice([3.0, -1.0], size=T) if world == "A" else np.ones(T)
    r = play(L, Stream(x[:, None], np.ones(T), noise=WORLD_NOISE[world](), rng=rng), "noisy_input", T,
             loss="squared")  # y_t = 1: the loss (w x_t - 1)^2
    cps = np.unique(np.geomspace(50, T, 12).astype(int))
    return {"world": world, "learner": learner, "seed": seed, "T": cps, "avg_regret": _avg_regret(r.losses, x, cps),
            "final_w": float(L.w_[0])}


@experiment(paper="css10", id="one-copy", title="One noisy copy is not enough: the two worlds of CSS10 Thm 3 (section 5.3)",
            quick_seeds=2, full_seeds=10, description=" ".join(__doc__.split()), takes_rounds=True)
def one_copy(ctx):
    T = ctx.horizon(8000, 50000)
    tasks = [{"world": w, "learner": le, "T": T, "seed": s}
             for s in ctx.seeds for w in ("A", "B") for le in ("one-copy", "two-copy")]
    df = pd.concat(ctx.map(one_copy_task, tasks, name="one_copy"), ignore_index=True)
    mean = df.groupby(["world", "learner", "T"]).avg_regret.mean()

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    styles = {("A", "one-copy"): "o-", ("B", "one-copy"): "s-", ("A", "two-copy"): "o--", ("B", "two-copy"): "s--"}
    for (w, le), st in styles.items():
        s = mean.loc[(w, le)]
        ax.semilogx(s.index, s.values, st, label=f"world {w}: {le}")
    ax.axhline(0.0, color="0.6", lw=0.8)
    ax.set_xlabel("T")
    ax.set_ylabel("average regret (1/T) Regret_T")
    ax.set_title("A: x ~ U{3, -1}, no noise    B: x = 1, noise U{+2, -2}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    ctx.save_figure(fig, "one_copy_two_worlds")
    last = df[df["T"] == df["T"].max()].groupby(["world", "learner"]).avg_regret.mean()
    finals = df[df["T"] == df["T"].max()].groupby(["world", "learner"]).final_w.mean()
    figures = {f"avg_regret_{w}_{le}": (float(last[(w, le)]), "loss/round") for w in ("A", "B") for le in ("one-copy", "two-copy")}
    figures["one_copy_worst_world_avg_regret"] = (float(max(last[("A", "one-copy")], last[("B", "one-copy")])), "loss/round")
    figures["two_copy_worst_world_avg_regret"] = (float(max(last[("A", "two-copy")], last[("B", "two-copy")])), "loss/round")
    figures.update({f"final_w_{w}_{le}": (float(finals[(w, le)]), "") for w in ("A", "B") for le in ("one-copy", "two-copy")})
    claims = [
        Claim("A single-copy learner keeps a constant average regret in one of the two worlds (CSS10 Thm 3): >= 0.3 per round",
              "one_copy_worst_world_avg_regret", ">=", 0.3),
        Claim("With two copies (footnote 2) the average regret vanishes in both worlds: <= 0.05 per round at T_max",
              "two_copy_worst_world_avg_regret", "<=", 0.05),
    ]
    return ExperimentResult(figures=figures, claims=claims, tables={"final": last.reset_index()})
