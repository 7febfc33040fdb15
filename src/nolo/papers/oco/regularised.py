"""Regularised linear prediction (OCO notes, section 2): online ridge and the online lasso, regret and sparsity.

Data: ``x_t`` uniform on the unit sphere of ``R^10`` (``||x_t|| = 1 = x_bound``), a sparse target ``w*``
(3 nonzero coordinates, ``||w*||_2 = 1``), ``y_t = <w*, x_t> + u_t`` with ``|u_t| <= 0.05``
(``|y_t| <= y_bound = 1.05``).
Squared loss ``phi(m, y) = (m - y)^2`` throughout.  Learners, run afresh for every horizon with the
notes' step ``R/(B sqrt(T))``:

* ``ridge`` -- :class:`~nolo.learners.convex.OnlineRidgeRegression`, ``phi + (alpha/2)||f||^2`` on
  ``||f||_2 <= R``;
* ``lasso-prox`` -- :class:`~nolo.learners.convex.OnlineLasso`, ``phi + alpha ||f||_1`` by the
  proximal (soft-thresholding) step on ``||f||_2 <= R``;
* ``lasso-l1ball`` -- :class:`~nolo.learners.convex.OnlineLassoL1Ball`, ``phi`` on ``||f||_1 <= r``
  with the exact L1-ball projection.

The comparator minimises the same regularised total loss over the same set
(:func:`~nolo.oco.hindsight.composite_hindsight`, FISTA with a Frank-Wolfe certificate);
the claims use ``regret + certificate``.  Sparsity: the fraction of exactly-zero coordinates of the final
iterate on the target's zero coordinates, and the share of the iterate's L1 mass outside the target's support,
averaged over seeds and horizons (the proximal step's exact zeros come and go from round to round: a
coordinate is zero when its stochastic gradient is below ``alpha``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nolo.papers.oco._common import regret_figure, summarise, unit_sphere
from nolo.experiments.registry import experiment
from nolo.experiments.result import Claim, ExperimentResult
from nolo.learners.convex import OnlineLasso, OnlineLassoL1Ball, OnlineRidgeRegression
from nolo.oco import L1Ball, L2Ball, composite_hindsight

D, SUPPORT, NOISE, RADIUS, L1_RADIUS = 10, 3, 0.05, 1.0, 1.5
RIDGE_ALPHA, LASSO_ALPHA = 0.01, 0.05


def _data(seed: int, T: int):
    rng = np.random.default_rng(seed)
    w_star = np.zeros(D)
    w_star[:SUPPORT] = rng.choice([-1.0, 1.0], SUPPORT) * rng.uniform(0.5, 1.0, SUPPORT)
    w_star /= np.linalg.norm(w_star)
    X = unit_sphere(rng, T, D)
    y = X @ w_star + rng.uniform(-NOISE, NOISE, T)
    y_bound = 1.0 + NOISE
    return w_star, X, y, y_bound


def _learners(T: int, y_bound: float):
    common = {"x_bound": 1.0, "y_bound": y_bound, "horizon": T}
    return (
        ("ridge", OnlineRidgeRegression(alpha=RIDGE_ALPHA, radius=RADIUS, **common), L2Ball(RADIUS), RIDGE_ALPHA, 0.0),
        ("lasso-prox", OnlineLasso(alpha=LASSO_ALPHA, radius=RADIUS, **common), L2Ball(RADIUS), 0.0, LASSO_ALPHA),
        ("lasso-l1ball", OnlineLassoL1Ball(radius=L1_RADIUS, **common), L1Ball(L1_RADIUS), 0.0, 0.0),
    )


def regularised_run(seed: int, horizons: list) -> pd.DataFrame:
    w_star, X, y, y_bound = _data(seed, int(max(horizons)))
    null = w_star == 0
    rows = []
    for T in map(int, horizons):
        for name, learner, constraint, l2, l1 in _learners(T, y_bound):
            played = learner.learn_stream(X[:T], y[:T])
            sol = composite_hindsight(X[:T], y[:T], "squared", constraint, l2=l2, l1=l1, tol=1e-10)
            reg = float(played.sum() - sol.total_loss)
            w = learner.w_
            mass = float(np.abs(w).sum())
            rows.append({
                "seed": seed, "learner": name, "T": T, "regret": reg, "regret_upper": reg + sol.gap,
                "certificate": sol.gap, "bound": learner.regret_bound(), "worst_bound": learner.regret_bound(True),
                "null_zero_fraction": float(np.mean(w[null] == 0.0)),
                "null_mass_share": float(np.abs(w[null]).sum() / mass) if mass > 0 else 0.0,
                "support_kept": float(np.mean(w[~null] != 0.0)),
                "hindsight_null_zero_fraction": float(np.mean(sol.w[null] == 0.0)),
                "max_grad_norm": float(np.sqrt(learner.stats_[3])), "B": learner.gradient_bound(),
            })
    return pd.DataFrame(rows)


@experiment(paper="oco", id="regularised",
            title="Online ridge and lasso (OCO notes' regularised linear prediction): regret and sparsity",
            quick_seeds=2, full_seeds=10, takes_rounds=True)
def regularised(ctx) -> ExperimentResult:
    horizons = ctx.horizons([1000, 2000, 4000, 8000, 16000], [1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000])
    frames = ctx.map(regularised_run, [{"seed": s, "horizons": horizons} for s in ctx.seeds], name="oco-regularised")
    df = pd.concat(frames, ignore_index=True)
    mean, slopes, ratio = summarise(df, sorted(horizons)[1])
    regret_figure(ctx, mean, slopes, "regularised_regret_vs_T", "Ridge / lasso (OCO notes): regret vs T")
    sp = df.groupby("learner").agg(null_zero=("null_zero_fraction", "mean"), null_mass=("null_mass_share", "mean"),
                                   kept=("support_kept", "min"), hindsight_zero=("hindsight_null_zero_fraction", "mean"))
    figs = {f"{n.replace('-', '_')}_slope": slopes[n] for n in slopes}
    figs.update({f"{n.replace('-', '_')}_regret_over_bound": ratio[n] for n in ratio})
    for n in ("ridge", "lasso-prox", "lasso-l1ball"):
        key = n.replace("-", "_")
        figs[f"{key}_null_zero_fraction"] = float(sp.loc[n, "null_zero"])
        figs[f"{key}_null_mass_share"] = float(sp.loc[n, "null_mass"])
    figs.update({
        "lasso_support_kept": float(min(sp.loc["lasso-prox", "kept"], sp.loc["lasso-l1ball", "kept"])),
        "max_certificate": float(df["certificate"].max()),
        "max_grad_over_B": float((df["max_grad_norm"] / df["B"]).max()),
    })
    claims = [Claim(f"{n}: regret grows like sqrt(T) (log-log slope <= 0.6)", f"{n.replace('-', '_')}_slope", "<=", 0.6)
              for n in ("ridge", "lasso-prox", "lasso-l1ball")]
    claims += [Claim(f"{n}: regret (+ certificate) <= the notes' bound R^2/(2 eta) + eta/2 sum ||g_t||^2 in every run",
                     f"{n.replace('-', '_')}_regret_over_bound", "<=", 1.0) for n in ("ridge", "lasso-prox", "lasso-l1ball")]
    claims += [
        Claim("the gradient bound B of the step holds on every round (max ||g_t|| / B <= 1)", "max_grad_over_B", "<=", 1.0),
        Claim("proximal lasso: on average >= 25% of the target's zero coordinates are exactly 0 in the final iterate",
              "lasso_prox_null_zero_fraction", ">=", 0.25),
        Claim("ridge (contrast): no coordinate is ever exactly 0", "ridge_null_zero_fraction", "<=", 0.0),
        Claim("proximal lasso: on average <= 2% of the iterate's L1 mass lies off the target's support",
              "lasso_prox_null_mass_share", "<=", 0.02),
        Claim("L1-ball lasso: on average <= 2% of the iterate's L1 mass lies off the target's support",
              "lasso_l1ball_null_mass_share", "<=", 0.02),
        Claim("both lassos keep every coordinate of the target's support nonzero", "lasso_support_kept", ">=", 1.0),
    ]
    return ExperimentResult(figures=figs, claims=claims, tables={"regret": mean, "sparsity": sp.reset_index()})
