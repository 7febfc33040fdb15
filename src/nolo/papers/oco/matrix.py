"""Online matrix prediction / collaborative filtering (OCO notes, section 2): regret and held-out error.

Streams from :func:`nolo.datasets.ratings.make_low_rank_ratings` (a rank-2 matrix with unit entry variance,
uniform random cells, rating noise sd 0.1).  Three parts:

* ``trace-norm`` -- :class:`~nolo.learners.convex.TraceNormOGD`, squared loss, ``tau`` = the trace norm
  of the true matrix, exact projection every round, step ``eta_t = eta0/sqrt(t)``; regret at each prefix
  against :func:`~nolo.oco.hindsight.trace_norm_hindsight` (FISTA, the Frank-Wolfe
  duality gap ``<G, W> + tau sigma_max(G)`` as certificate; ``regret_upper = regret + gap``); the bound is
  the notes' proof with decreasing steps, ``D^2/(2 eta_T) + sum_t eta_t ||g_t||^2 / 2``, ``D = 2 tau``;
* ``max-entry`` -- :class:`~nolo.learners.convex.MaxEntryOGD`, absolute loss (the notes' loss for
  this example), box ``|W_ij| <= 3``; exact hindsight (per-cell clipped median);
* ``held-out`` -- ``TraceNormOGD`` trained on one pass over the first 75% of a stream; RMSE on the last 25%
  against the per-user mean of the training ratings (the global mean for an unseen user).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nolo.datasets.ratings import make_low_rank_ratings
from nolo.papers.oco._common import regret_figure, summarise
from nolo.experiments.registry import experiment
from nolo.experiments.result import Claim, ExperimentResult
from nolo.learners.convex import MaxEntryOGD, TraceNormOGD
from nolo.oco import InverseSqrtStep, max_entry_hindsight, trace_norm_hindsight

RANK, NOISE = 2, 0.1
TRACE_SHAPE, TRACE_ETA0 = (20, 25), 10.0
BOX_SHAPE, BOX_BOUND, BOX_ETA0 = (8, 8), 3.0, 1.0


def matrix_regret_run(seed: int, checkpoints: list) -> pd.DataFrame:
    """Regret at each prefix of one stream for the trace-norm and the max-entry learners."""
    T = int(max(checkpoints))
    rows = []
    r = make_low_rank_ratings(*TRACE_SHAPE, rank=RANK, n_ratings=T, noise=NOISE, seed=seed)
    tau = float(np.linalg.svd(r.truth, compute_uv=False).sum())
    ogd = TraceNormOGD(*TRACE_SHAPE, radius=tau, loss="squared", step=InverseSqrtStep(TRACE_ETA0),
                       y_bound=float(np.abs(r.ratings).max()))
    W0, start = None, 0
    cum = 0.0
    for Tc in map(int, checkpoints):
        cum += float(ogd.learn_stream(r.users[start:Tc], r.items[start:Tc], r.ratings[start:Tc]).sum())
        sol = trace_norm_hindsight(r.users[:Tc], r.items[:Tc], r.ratings[:Tc], TRACE_SHAPE, tau, tol=1e-7, W0=W0)
        W0, start = sol.w, Tc
        reg = cum - sol.total_loss
        rows.append({"seed": seed, "learner": "trace-norm", "T": Tc, "regret": reg, "regret_upper": reg + sol.gap,
                     "certificate": sol.gap, "bound": ogd.regret_bound(), "worst_bound": ogd.regret_bound(True),
                     "rank": ogd.rank_})
    b = make_low_rank_ratings(*BOX_SHAPE, rank=RANK, n_ratings=T, noise=NOISE, seed=seed + 10_000)
    box = MaxEntryOGD(*BOX_SHAPE, bound=BOX_BOUND, loss="absolute", step=InverseSqrtStep(BOX_ETA0))
    start, cum = 0, 0.0
    for Tc in map(int, checkpoints):
        cum += float(box.learn_stream(b.users[start:Tc], b.items[start:Tc], b.ratings[start:Tc]).sum())
        start = Tc
        sol = max_entry_hindsight(b.users[:Tc], b.items[:Tc], b.ratings[:Tc], BOX_SHAPE, BOX_BOUND, "absolute")
        reg = cum - sol.total_loss
        rows.append({"seed": seed, "learner": "max-entry", "T": Tc, "regret": reg, "regret_upper": reg + sol.gap,
                     "certificate": sol.gap, "bound": box.regret_bound(), "worst_bound": box.regret_bound(True),
                     "rank": -1})
    return pd.DataFrame(rows)


def matrix_heldout_run(seed: int, shape: list, n_ratings: int, projection_every: int, step: float) -> dict:
    """Test RMSE of TraceNormOGD after one pass over 75% of the stream, and of the per-user mean."""
    M, N = int(shape[0]), int(shape[1])
    r = make_low_rank_ratings(M, N, rank=RANK, n_ratings=int(n_ratings), noise=NOISE, seed=seed + 20_000)
    train, test = r.split(int(0.75 * len(r)))
    tau = float(np.linalg.svd(r.truth, compute_uv=False).sum())
    ogd = TraceNormOGD(M, N, radius=tau, loss="squared", step=float(step), projection_every=int(projection_every))
    ogd.learn_stream(train.users, train.items, train.ratings)
    sums = np.bincount(train.users, train.ratings, M)
    cnt = np.bincount(train.users, minlength=M)
    user_mean = np.where(cnt > 0, sums / np.maximum(cnt, 1), float(train.ratings.mean()))
    rmse = float(np.sqrt(np.mean((ogd.predict(test.users, test.items) - test.ratings) ** 2)))
    base = float(np.sqrt(np.mean((user_mean[test.users] - test.ratings) ** 2)))
    return {"seed": [seed], "projection_every": [int(projection_every)], "rmse": [rmse], "user_mean_rmse": [base],
            "rank": [ogd.rank_]}


@experiment(paper="oco", id="matrix",
            title="Online matrix prediction (OCO notes): trace-norm / max-entry OGD regret, held-out error",
            quick_seeds=2, full_seeds=10, takes_rounds=True)
def matrix(ctx) -> ExperimentResult:
    checkpoints = ctx.horizons([500, 1000, 2000, 4000], [500, 1000, 2000, 4000, 8000, 16000, 32000])
    frames = ctx.map(matrix_regret_run, [{"seed": s, "checkpoints": checkpoints} for s in ctx.seeds],
                     name="oco-matrix-regret")
    df = pd.concat(frames, ignore_index=True)
    mean, slopes, ratio = summarise(df, sorted(checkpoints)[1])
    regret_figure(ctx, mean, slopes, "matrix_regret_vs_T", "Matrix prediction (OCO notes): regret vs T")
    shape, n = ctx.scale([30, 40], [100, 120]), ctx.horizon(8000, 80000)
    tasks = [{"seed": s, "shape": shape, "n_ratings": n, "projection_every": k, "step": 0.5}
             for s in ctx.seeds for k in (1, 10)]
    held = pd.concat(ctx.map(matrix_heldout_run, tasks, name="oco-matrix-heldout"), ignore_index=True)
    h = held.groupby("projection_every").agg(rmse=("rmse", "mean"), user_mean_rmse=("user_mean_rmse", "mean"),
                                             worst_ratio=("rmse", "max"), rank=("rank", "mean")).reset_index()
    exact = held[held["projection_every"] == 1]
    lazy = held[held["projection_every"] == 10]
    figs = {
        "trace_norm_slope": slopes["trace-norm"],
        "max_entry_slope": slopes["max-entry"],
        "trace_norm_regret_over_bound": ratio["trace-norm"],
        "max_entry_regret_over_bound": ratio["max-entry"],
        "trace_norm_max_certificate": float(df.loc[df["learner"] == "trace-norm", "certificate"].max()),
        "trace_norm_certificate_over_regret": float(
            (df.loc[df["learner"] == "trace-norm", "certificate"] / df.loc[df["learner"] == "trace-norm", "regret"].abs()).max()),
        "heldout_rmse": float(exact["rmse"].mean()),
        "heldout_user_mean_rmse": float(exact["user_mean_rmse"].mean()),
        "heldout_rmse_over_user_mean": float((exact["rmse"] / exact["user_mean_rmse"]).max()),
        "heldout_rmse_every10_over_exact": float(lazy["rmse"].mean() / exact["rmse"].mean()),
    }
    claims = [
        Claim("trace-norm OGD: regret (+ certificate) grows like sqrt(T) (log-log slope <= 0.6)",
              "trace_norm_slope", "<=", 0.6),
        Claim("max-entry OGD (absolute loss): regret grows like sqrt(T) (log-log slope <= 0.6)",
              "max_entry_slope", "<=", 0.6),
        Claim("trace-norm OGD: regret (+ certificate) <= the notes' bound D^2/(2 eta_T) + sum eta_t ||g_t||^2/2",
              "trace_norm_regret_over_bound", "<=", 1.0),
        Claim("max-entry OGD: regret <= the notes' bound", "max_entry_regret_over_bound", "<=", 1.0),
        Claim("the Frank-Wolfe certificate of the trace-norm hindsight solve is below 1% of the regret",
              "trace_norm_certificate_over_regret", "<=", 0.01),
        Claim("held-out RMSE of trace-norm OGD beats the per-user mean in every seed (ratio < 1)",
              "heldout_rmse_over_user_mean", "<", 1.0),
    ]
    return ExperimentResult(figures=figs, claims=claims, tables={"regret": mean, "held_out": h})
