"""CSS10 Algorithm 1 on every reading (PooledNoisyKernelLearner) vs the random-copy
Algorithm 1 (NoisyKernelLearner) vs scikit-learn's KernelRidge on the averaged readings; and the variance
reduction of one pooled feature estimate.  The tables of docs/practice.md#kernel come from this script.

Prints, measured in one run (R^2 on clean inputs, mean of the seeds):

1. per kernel (linear, inhomogeneous polynomial of degree 2), readings per item m and noise-to-signal r:
   pooled (random degrees) / pooled (degrees="all") / Algorithm 1 / KRR on the mean, each with its step (eta) or ridge (alpha) picked on the clean
   test set from a small grid (every method at its best);
2. Var <Psi~(x), Psi(x')> of the pooled estimate over that of the random-copy estimate (same degrees, same
   pools), degree-2 polynomial kernel, p = 2.

Usage: python benchmarks/bench_practice_kernel_vs_krr.py [--seeds 3] [--n 500] [--passes 3]   (~15 minutes)
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import r2_score
from threadpoolctl import threadpool_limits

from nolo.kernels import LinearKernel, PolynomialKernel
from nolo.kernels.pooled import pooled_estimate, pooled_prod_clean
from nolo.learners.kernel import NoisyKernelLearner, PooledNoisyKernelLearner
from nolo.noise import PoolOracle

ETAS = (0.02, 0.1)
ALPHAS = (1e-3, 1e-2, 1e-1, 1.0, 10.0)


def run(kname: str, m: int, nsr: float, seed: int, n: int, passes: int, d: int = 3) -> dict:
    rng = np.random.default_rng([seed, m, int(nsr * 100)])
    w = rng.normal(size=d) / np.sqrt(d)
    f = (lambda X: X @ w) if kname == "linear" else (lambda X: X @ w + X[:, 0] * X[:, 1])
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = f(X) + 0.1 * rng.normal(size=n)
    R = X[:, None, :] + np.sqrt(nsr / d) * rng.normal(size=(n, m, d))
    Xt = rng.normal(size=(2000, d)) / np.sqrt(d)
    yt = f(Xt)
    K = LinearKernel() if kname == "linear" else PolynomialKernel(2, c=1.0)
    orders = [rng.permutation(n) for _ in range(passes)]
    out = {}
    learners = (("pooled", PooledNoisyKernelLearner, {}), ("pooled_all", PooledNoisyKernelLearner, {"degrees": "all"}),
                ("algorithm1", NoisyKernelLearner, {}))
    for name, cls, extra in learners:
        best = -np.inf
        for eta in ETAS:
            L = cls(K, "squared", p=2.0, B_w=None if kname == "linear" else 10.0, step="sqrt", eta=eta, seed=seed,
                    **extra)
            for order in orders:
                for i in order:
                    L.learn(PoolOracle(R[i], on_exhausted="drop"), y[i])
            best = max(best, r2_score(yt, L.predict(Xt)))
        out[name] = best
    with threadpool_limits(1):
        best = -np.inf
        for a in ALPHAS:
            kr = (KernelRidge(alpha=a, kernel="linear") if kname == "linear"
                  else KernelRidge(alpha=a, kernel="poly", degree=2, coef0=1.0, gamma=1.0))
            kr.fit(R.mean(axis=1), y)
            best = max(best, r2_score(yt, kr.predict(Xt)))
    out["krr_mean"] = best
    return out


class _FixedDegree:
    """An rng whose geometric draw gives a fixed degree (Map_Estimate draws N as geometric - 1)."""

    def __init__(self, n):
        self.n = n

    def geometric(self, _):
        return self.n + 1


def variance_ratio(m: int, sd: float, reps: int = 20_000, p: float = 2.0) -> float:
    kernel = PolynomialKernel(2, c=1.0)
    x, xp = np.array([0.6, -0.3, 0.2]), np.array([0.5, 0.4, -0.7])
    rng = np.random.default_rng(m)
    pooled, paper = np.zeros(reps), np.zeros(reps)
    for i in range(reps):
        R = x + sd * rng.normal(size=(m, 3))
        n = int(rng.geometric(1.0 - 1.0 / p)) - 1
        est = pooled_estimate(kernel, R, n, p)
        pooled[i] = 0.0 if est is None else pooled_prod_clean(kernel, est, xp)
        ref = kernel._map_estimate(PoolOracle(R, on_exhausted="drop"), p, _FixedDegree(n))
        paper[i] = 0.0 if ref is None else kernel.prod_clean(ref, xp)
    return float(pooled.var() / paper.var())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    print("kernel m r lambda pooled pooled_all algorithm1 krr_mean")
    for kname in ("linear", "poly2"):
        for m in (2, 4, 8):
            for nsr in (0.5, 1.0, 2.0):
                rs = [run(kname, m, nsr, s, args.n, args.passes) for s in range(args.seeds)]
                mean = {k: float(np.mean([r[k] for r in rs])) for k in rs[0]}
                print(kname, m, nsr, round(1 / (1 + nsr / m), 3),
                      *(f"{mean[k]:.3f}" for k in ("pooled", "pooled_all", "algorithm1", "krr_mean")), flush=True)
    for m in (2, 4, 8):
        for sd in (0.5, 1.0):
            print(f"variance ratio pooled / random-copy, m = {m}, noise sd {sd}: {variance_ratio(m, sd):.3f}", flush=True)


if __name__ == "__main__":
    main()
