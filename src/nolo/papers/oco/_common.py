"""Shared pieces of the OCO-notes experiments: data streams, slopes and the regret table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from nolo.experiments import plots


def unit_sphere(rng, n: int, d: int) -> np.ndarray:
    """``n`` points uniform on the unit sphere of ``R^d`` (so ``||x_t|| = 1 = x_bound``)."""
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def summarise(df: pd.DataFrame, min_t) -> tuple[pd.DataFrame, dict, dict]:
    """Mean regret/bound per (learner, T) over seeds; log-log slope per learner; max regret/bound ratio."""
    mean = df.groupby(["learner", "T"], as_index=False).agg(
        regret=("regret", "mean"), regret_upper=("regret_upper", "mean"), se=("regret", "sem"),
        bound=("bound", "mean"), worst_bound=("worst_bound", "mean"), certificate=("certificate", "max"))
    slopes = {n: plots.fit_slope(g["T"], g["regret_upper"], min_t=min_t) for n, g in mean.groupby("learner")}
    ratio = {n: float((g["regret_upper"] / g["bound"]).max()) for n, g in df.groupby("learner")}
    return mean, slopes, ratio


def regret_figure(ctx, mean: pd.DataFrame, slopes: dict, name: str, title: str) -> None:
    fig, ax = plots.new_figure()
    for k, (learner, grp) in enumerate(mean.groupby("learner")):
        ax.errorbar(grp["T"], grp["regret_upper"], yerr=grp["se"], marker="o", color=f"C{k}",
                    label=f"{learner} (slope {slopes[learner]:.2f})")
        ax.plot(grp["T"], grp["bound"], "--", color=f"C{k}", label=f"{learner}: notes' bound")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("T (rounds)")
    ax.set_ylabel("regret vs best fixed in hindsight")
    ax.set_title(title)
    ax.legend(fontsize=7)
    ctx.save_figure(fig, name)
