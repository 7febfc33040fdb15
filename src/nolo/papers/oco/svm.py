"""Online linear SVM (OCO notes, section 2) by projected OGD: regret vs sqrt(T) and the notes' bound (Claim 1).

Data: ``x_t`` uniform on the unit sphere of ``R^10`` (``B = ||x_t|| = 1`` for 1-Lipschitz losses),
``y_t = sign(<w*, x_t>)`` flipped with probability 0.1, ``||w*|| = 1``.  Two learners, each run afresh
for every horizon ``T`` with the notes' step ``eta = R/(B sqrt(T))``:

* ``hinge-l2`` -- hinge loss over ``{||f||_2 <= 1}`` (the notes' example); comparator from
  :func:`nolo.oco.solve_hindsight` (exact LP / minimax dual with its certificate);
* ``logistic-l1`` -- logistic loss over ``{||f||_1 <= 1}`` (the notes' "change the loss ... and the
  constraint"); comparator from :func:`~nolo.oco.hindsight.composite_hindsight`
  (FISTA, Frank-Wolfe certificate).

``regret_upper = regret + certificate`` bounds the regret against the true optimum from above; it is what
the claims use.  The bound is Claim 1's ``R B sqrt(T)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nolo.papers.oco._common import regret_figure, summarise, unit_sphere
from nolo.experiments.registry import experiment
from nolo.experiments.result import Claim, ExperimentResult
from nolo.learners.convex import OnlineLinearSVM
from nolo.oco import L1Ball, L2Ball, composite_hindsight, solve_hindsight

D, FLIP = 10, 0.1


def svm_run(seed: int, horizons: list) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    Tmax = int(max(horizons))
    w_star = unit_sphere(rng, 1, D)[0]
    X = unit_sphere(rng, Tmax, D)
    y = np.where(X @ w_star >= 0, 1.0, -1.0)
    y[rng.random(Tmax) < FLIP] *= -1.0
    rows = []
    for T in map(int, horizons):
        for name, loss, constraint in (("hinge-l2", "hinge", L2Ball(1.0)), ("logistic-l1", "logistic", L1Ball(1.0))):
            learner = OnlineLinearSVM(loss=loss, constraint=constraint, x_bound=1.0, horizon=T)
            played = learner.learn_stream(X[:T], y[:T])
            if name == "hinge-l2":
                sol = solve_hindsight(X[:T], y[:T], loss, constraint, tol=1e-7)
            else:
                sol = composite_hindsight(X[:T], y[:T], loss, constraint, tol=1e-9)
            reg = float(played.sum() - sol.total_loss)
            rows.append({"seed": seed, "learner": name, "T": T, "regret": reg, "regret_upper": reg + sol.gap,
                         "certificate": sol.gap, "bound": learner.regret_bound(worst_case=True),
                         "worst_bound": learner.regret_bound(worst_case=True),
                         "accuracy": float(np.mean(np.sign(learner.predict(X[:T], average=True)) == y[:T]))})
    return pd.DataFrame(rows)


@experiment(paper="oco", id="svm", title="Online linear SVM: regret ~ sqrt(T) below the notes' R B sqrt(T) (Claim 1)",
            quick_seeds=2, full_seeds=10, takes_rounds=True)
def svm(ctx) -> ExperimentResult:
    horizons = ctx.horizons([500, 1000, 2000, 4000, 8000], [500, 1000, 2000, 4000, 8000, 16000, 32000, 64000])
    frames = ctx.map(svm_run, [{"seed": s, "horizons": horizons} for s in ctx.seeds], name="oco-svm")
    df = pd.concat(frames, ignore_index=True)
    min_t = sorted(horizons)[1]
    mean, slopes, ratio = summarise(df, min_t)
    regret_figure(ctx, mean, slopes, "svm_regret_vs_T", "Online linear SVM (OCO notes): regret vs T")
    figs = {
        "hinge_l2_slope": slopes["hinge-l2"],
        "logistic_l1_slope": slopes["logistic-l1"],
        "hinge_l2_regret_over_bound": ratio["hinge-l2"],
        "logistic_l1_regret_over_bound": ratio["logistic-l1"],
        "max_certificate": float(df["certificate"].max()),
    }
    claims = [
        Claim("hinge over the L2 ball: regret grows like sqrt(T) (log-log slope <= 0.6)", "hinge_l2_slope", "<=", 0.6),
        Claim("logistic over the L1 ball: regret grows like sqrt(T) (log-log slope <= 0.6)", "logistic_l1_slope",
              "<=", 0.6),
        Claim("Claim 1: regret (+ certificate) <= R B sqrt(T) in every run (hinge, L2 ball)",
              "hinge_l2_regret_over_bound", "<=", 1.0),
        Claim("Claim 1: regret (+ certificate) <= R B sqrt(T) in every run (logistic, L1 ball)",
              "logistic_l1_regret_over_bound", "<=", 1.0),
    ]
    return ExperimentResult(figures=figs, claims=claims, tables={"regret": mean})
