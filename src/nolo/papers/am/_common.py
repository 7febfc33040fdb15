"""Shared pieces of the AM experiments: settings, datasets, learners, the per-task run functions.

Scales (``--quick`` / paper scale); the whole ``nolo reproduce am --quick`` (default ``--jobs`` = all cores)
ran in 59 s wall on the shared 2-core machine at load average ~1 and in 79 s at ~2.4, the
Vowpal Wabbit reference included (docs/am-reproduction.md):

* rounds per run: quick 10^5 on every dataset, paper scale 10^6 (AM ran up to 10^7);
* SynSep: quick 2 x 10^4 examples, paper scale 10^5 (AM);
* processes: ``--jobs`` (``nolo reproduce`` defaults to all cores);
* gamma: for every (dataset, noise setting, algorithm) the best of ``GAMMA_GRID`` by the final
  cumulative error of a tuning run over the full horizon T with a separate seed (AM: "for other
  algorithms, the optimal value of gamma is chosen"); RCINE uses RCNBF's tuned gamma.  (Tuning on
  T/20 rounds would pick gamma = 0.25 for RCNBF almost everywhere: the best gamma shrinks with the
  horizon, Corollaries 4.1-4.3);
* RCINE: N_s = 0.3 T (quick: refits at 0.3 T, 0.6 T, 0.9 T) or 50,000 (paper scale, the authors'
  code), reservoir of 600 (quick) or 5,000 rounds, NREst MLP (16,) x 5 epochs (quick) or
  (32,) x 10 epochs, warm starts (a 10^6-round MNIST run of RCINE: 3.1 s, 2.3 s of it in NREst,
  estimates (0.22, 0.17) for true (0.2, 0.2); (64,) x 30 epochs on 10,000 rounds took 23 s, 94 % in NREst).
"""

from __future__ import annotations

import time
import warnings
from functools import lru_cache

import numpy as np

from nolo.exceptions import ParameterError
from nolo.experiments.play import BanditStream, play
from nolo.learners.bandit import BPA, RCINE, RCNBF, SOBA, Banditron, Perceptron
from nolo.noise_rates import NREst

#: AM's noise settings (rho0, rho1): Figure 2 rows and the appendix's (0.25, 0.25).
SETTINGS: tuple[tuple[float, float], ...] = ((0.0, 0.0), (0.15, 0.15), (0.25, 0.25), (0.4, 0.4), (0.2, 0.4), (0.4, 0.2))
#: AM's learners (the table every AM experiment reads), and the colour each has in every AM plot
ALGORITHMS: tuple[str, ...] = ("Banditron", "BPA", "SOBA", "RCNBF", "RCINE")
COLORS: dict[str, str] = {"Banditron": "tab:blue", "BPA": "tab:orange", "SOBA": "tab:green", "RCNBF": "tab:red",
                          "RCINE": "tab:purple", "Perceptron": "0.4"}
GAMMA_GRID: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.25)
#: candidate datasets in report order; file datasets are skipped (and said so) when absent.
DATASETS: tuple[str, ...] = ("mnist", "usps", "fashion-mnist", "iris", "synsep", "digits")
SMALL = ("iris", "digits")


def setting_label(rho0: float, rho1: float) -> str:
    return f"rho0={rho0:g}, rho1={rho1:g}"


def rounds_for(dataset: str, quick: bool) -> int:
    return 100_000 if quick else 1_000_000


def horizon(ctx, dataset: str) -> int:
    """The rounds of ``dataset``'s curves in this run: ``--rounds`` if given, else :func:`rounds_for` by scale."""
    return ctx.horizon(rounds_for(dataset, True), rounds_for(dataset, False))


@lru_cache(maxsize=8)
def load(dataset: str, quick: bool) -> tuple[np.ndarray, np.ndarray]:
    """(X unit-norm rows, y) of a dataset (cached per process); raises DatasetNotFoundError if absent."""
    from nolo.datasets import load_dataset

    opts = {}
    if dataset == "synsep":
        opts = {"n_samples": 20_000 if quick else 100_000, "seed": 2008}
    if dataset == "fashion-mnist":
        opts = {"features": "pca", "n_components": 100}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MNIST: often only the test split is present
        X, y = load_dataset(dataset, normalize="unit", **opts)
    return np.ascontiguousarray(X), y


@lru_cache(maxsize=8)
def load_stream(dataset: str, quick: bool):
    """(X, y) for the compiled stream loops: X as CSR when its non-zero share is at most AUTO_CSR_DENSITY (60 %) (converted once per
    process; the loops give identical results on either representation), else the dense array."""
    from nolo.learners.bandit.simulator import AUTO_CSR_DENSITY, canonical_csr

    X, y = load(dataset, quick)
    if np.count_nonzero(X) <= AUTO_CSR_DENSITY * X.size:
        X = canonical_csr(X)
    return X, y


def available(datasets=DATASETS, quick: bool = True) -> tuple[list[str], dict[str, str]]:
    """The datasets that load here, and the reason for each skipped one."""
    from nolo.datasets.errors import DatasetNotFoundError

    ok, skipped = [], {}
    for name in datasets:
        try:
            load(name, quick)
            ok.append(name)
        except DatasetNotFoundError as exc:
            skipped[name] = str(exc).splitlines()[0]
    return ok, skipped


def nrest_for(quick: bool, dataset: str) -> NREst:
    pct = 94.0 if dataset == "synsep" else 89.0  # AM appendix B: 94th percentile for SynSep
    if quick:
        return NREst(hidden_layer_sizes=(16,), max_iter=5, percentile=pct, warm_start=True)
    return NREst(hidden_layer_sizes=(32,), max_iter=10, percentile=pct, warm_start=True)


#: the learners of the AM experiments by name (AM Fig. 2's five and the full-information Perceptron)
LEARNERS = {"Banditron": Banditron, "BPA": BPA, "SOBA": SOBA, "RCNBF": RCNBF, "RCINE": RCINE, "Perceptron": Perceptron}


def make_learner(algo: str, K: int, gamma: float, rho0: float, rho1: float, seed: int, *, quick: bool = True,
                 rounds: int = 100_000, dataset: str = "digits"):
    """Learner ``algo`` of :data:`LEARNERS` with the parameters of this run that its class takes.

    Offered: ``n_classes``, ``seed``, ``gamma``, the true flip rates ``rho0``/``rho1`` (RCNBF) and RCINE's
    refit schedule, reservoir and NREst (see the module docstring); each class keeps those it accepts.
    """
    try:
        cls = LEARNERS[algo]
    except KeyError:
        raise ParameterError(f"algo must be one of {', '.join(LEARNERS)}, got {algo!r}") from None
    offered = {"n_classes": K, "gamma": gamma, "rho0": rho0, "rho1": rho1, "seed": seed,
               "refit_every": max(int(0.3 * rounds), 1000) if quick else 50_000,
               "reservoir_size": 600 if quick else 5_000}
    accepted = cls().get_params(deep=False)
    params = {k: v for k, v in offered.items() if k in accepted}
    if "estimator" in accepted:
        params["estimator"] = nrest_for(quick, dataset)
    return cls(**params)


def bandit_run(learner, dataset: str, quick: bool, rounds: int, rho0: float, rho1: float, seed: int,
               record="log"):
    """``play`` the learner on ``dataset``'s AM stream (uniform draws with replacement, flips (rho0, rho1),
    environment seed ``seed``)."""
    X, y = load_stream(dataset, quick)
    return play(learner, BanditStream(X, y, int(rounds), rho0, rho1, seed=seed), "bandit", record)


def tune_gamma(algo: str, dataset: str, quick: bool, rho0: float, rho1: float, rounds: int, seed: int) -> float:
    """The grid gamma with the smallest final cumulative error over ``rounds`` rounds (one run, its own seed)."""
    K = int(load_stream(dataset, quick)[1].max()) + 1
    best, best_err = GAMMA_GRID[0], np.inf
    for g in GAMMA_GRID:
        r = bandit_run(make_learner(algo, K, g, rho0, rho1, seed), dataset, quick, rounds, rho0, rho1, seed + 1,
                       record=[rounds])
        err = r.frame.error_rate.iloc[-1]
        if err < best_err:
            best, best_err = g, float(err)
    return best


def curves_task(dataset: str, rho0: float, rho1: float, seeds: list, quick: bool, rounds: int) -> dict:
    """All algorithms of AM Fig. 2 (plus the full-information Perceptron) on one dataset and noise setting."""
    K = int(load_stream(dataset, quick)[1].max()) + 1
    T = int(rounds)
    rows: dict[str, list] = {k: [] for k in ("algo", "seed", "gamma", "t", "error_rate", "greedy_error_rate",
                                             "seconds", "nrest_seconds", "rho0_hat", "rho1_hat")}
    t0 = time.perf_counter()
    gammas = {a: tune_gamma(a, dataset, quick, rho0, rho1, T, 10_000 + 7 * i)
              for i, a in enumerate(("Banditron", "BPA", "SOBA", "RCNBF"))}
    tune_seconds = time.perf_counter() - t0
    gammas["RCINE"] = gammas["RCNBF"]
    for algo in (*ALGORITHMS, "Perceptron"):
        for seed in seeds:
            g = gammas.get(algo, 0.0)
            m = make_learner(algo, K, g, rho0, rho1, int(seed), quick=quick, rounds=T, dataset=dataset)
            r = bandit_run(m, dataset, quick, T, rho0, rho1, 1_000 + int(seed))
            est = m.estimates_[-1] if algo == "RCINE" and len(m.estimates_) else (np.nan, np.nan)
            f = r.frame
            n = len(f)
            rows["algo"] += [algo] * n
            rows["seed"] += [int(seed)] * n
            rows["gamma"] += [g] * n
            rows["t"] += f.t.tolist()
            rows["error_rate"] += f.error_rate.tolist()
            rows["greedy_error_rate"] += f.greedy_error_rate.tolist()
            rows["seconds"] += [r.seconds] * n
            rows["nrest_seconds"] += [r.extra.get("nrest_seconds", 0.0)] * n
            rows["rho0_hat"] += [float(est[0])] * n
            rows["rho1_hat"] += [float(est[1])] * n
    out = {k: np.asarray(v) for k, v in rows.items()}
    out["tune_seconds"] = np.full(out["t"].shape, tune_seconds)  # the gamma tuning runs of this task, in total
    return out


def curves(ctx, datasets: list[str]):
    """Run (or load, resumably) the curves of every dataset x setting; shared by error-curves and claims
    (``ctx.map(..., shared=True)``: stored once for the paper, whichever experiment runs first)."""
    import pandas as pd

    # data sets interleaved (setting, then data set): the pool's first two tasks are on data sets of different row
    # types (DATASETS' order: Iris, dense, before SynSep, CSR), so on a cold numba cache its workers compile
    # different stream loops and read the rest from the cache, instead of both compiling the same ones first
    tasks = [{"dataset": d, "rho0": r0, "rho1": r1, "seeds": list(ctx.seeds), "quick": bool(ctx.quick),
              "rounds": horizon(ctx, d)} for (r0, r1) in SETTINGS for d in datasets]
    frames = ctx.map(curves_task, tasks, name="am_curves", shared=True)
    out = []
    for task, df in zip(tasks, frames):
        df = df.copy()
        df["dataset"] = task["dataset"]
        df["rho0"] = task["rho0"]
        df["rho1"] = task["rho1"]
        out.append(df)
    return pd.concat(out, ignore_index=True)


def final_errors(df):
    """Mean (over seeds) final cumulative error per dataset, setting and algorithm."""
    last = df[df.t == df.groupby(["dataset", "rho0", "rho1", "algo"]).t.transform("max")]
    return last.groupby(["dataset", "rho0", "rho1", "algo"]).error_rate.agg(["mean", "std", "min", "max"]).reset_index()
