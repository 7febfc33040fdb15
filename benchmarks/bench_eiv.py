"""Errors-in-variables regression: throughput of the online estimator beside batch and online peers, and the
variance of the CSS11 gradient estimates against the number of copies used (issue 15 items 1-2).

Run:  python benchmarks/bench_eiv.py [--quick]

Part 1 (variance): Monte Carlo variance (trace of the covariance) of the CSS11 gradient estimates at a fixed
``w``, item ``x`` and target, as a function of the number ``m`` of noisy copies used: Setting 1 with Lemma 1's
two-copy estimate and with the U-statistic over ``m`` copies, Setting 2 with one copy and with the mean of ``m``.

Part 2 (throughput, one run, interleaved): items per second at d = 20 and d = 200 (m = 4 readings per item) of
* nolo ``BiasCompensatedRLS.learn_stream`` (repeated readings; known Sigma) -- online, O(d^2) per item;
* nolo ``CorrectedLeastSquares.fit`` (batch) and scikit-learn ``LinearRegression`` on the mean of the readings
  (batch; items/s = n / fit time, the mean included);
* River ``linear_model.LinearRegression.learn_one`` on the mean (online SGD, first order; dict inputs built
  outside the timing);
* statsmodels ``OLS`` on the mean when installed (it is optional; the run says when it is missing).
Ratios are relative to ``BiasCompensatedRLS`` (repeated).  Each rate is the median of interleaved repeats.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from nolo.batch import CorrectedLeastSquares
from nolo.learners.linear import BiasCompensatedRLS

QUICK = "--quick" in sys.argv


# -- part 1: gradient variance vs copies --------------------------------------------------------------------
def gradient_variance(ms=(2, 4, 8, 16), n=200_000, d=5, noise_var=1.0, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=d) / np.sqrt(d)
    w = rng.normal(size=d) / np.sqrt(d)
    y = float(x @ w) + 0.3
    Sigma = noise_var * np.eye(d)
    clean = 2 * (x @ w - y) * x
    rows = []
    for m in ms:
        C = x + np.sqrt(noise_var) * rng.standard_normal((n, m, d))
        lemma1 = 2 * ((C[:, 0] @ w) - y)[:, None] * C[:, 1]
        S = C.sum(axis=1)
        Uw = (S * (S @ w)[:, None] - np.einsum("nk,nki->ni", C @ w, C)) / (m * (m - 1))
        ustat = 2 * (Uw - S / m * y)
        one = 2 * ((C[:, 0] @ w) - y)[:, None] * C[:, 0] - 2 * Sigma @ w
        xb = S / m
        mean = 2 * ((xb @ w) - y)[:, None] * xb - 2 * (Sigma / m) @ w
        for name, g in (("S1 Lemma 1 (2 copies)", lemma1), (f"S1 U-statistic ({m})", ustat),
                        ("S2 one copy", one), (f"S2 mean of {m}", mean)):
            bias = np.abs(g.mean(axis=0) - clean).max()
            rows.append((m, name, float(np.trace(np.cov(g.T))), float(bias)))
    return rows


# -- part 2: throughput --------------------------------------------------------------------------------------
def _problem(n, d, m=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d) / np.sqrt(d)
    y = X @ w + 0.1 * rng.standard_normal(n)
    R = X[:, None, :] + rng.standard_normal((n, m, d))  # noise variance 1 per reading: attenuation 0.8 on the mean
    return R, y


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def throughput(d, n, repeats):
    R, y = _problem(n, d)
    methods = {}

    def bcrls(**kw):
        def run():
            BiasCompensatedRLS(**kw).learn_stream(R, y)
        return run

    methods["nolo BiasCompensatedRLS (repeated)"] = bcrls(noise="repeated")
    methods["nolo BiasCompensatedRLS (known Sigma)"] = bcrls(noise="known", noise_cov=1.0)
    methods["nolo CorrectedLeastSquares (batch)"] = lambda: CorrectedLeastSquares(noise_cov="estimate").fit(R, y)
    from sklearn.linear_model import LinearRegression

    methods["sklearn LinearRegression on the mean (batch)"] = lambda: LinearRegression().fit(R.mean(axis=1), y)
    try:
        import statsmodels.api as sm

        methods["statsmodels OLS on the mean (batch)"] = lambda: sm.OLS(y, sm.add_constant(R.mean(axis=1))).fit()
    except ImportError:
        print("  (statsmodels is not installed: its row is skipped)")
    try:
        from river import linear_model, optim

        nr = min(n, 5_000 if d == 20 else 1_000)
        dicts = [dict(enumerate(row)) for row in R[:nr].mean(axis=1)]

        def river():
            model = linear_model.LinearRegression(optimizer=optim.SGD(0.01))
            for xi, yi in zip(dicts, y[:nr]):
                model.learn_one(xi, yi)

        methods["River LinearRegression.learn_one (online SGD)"] = (river, nr)
    except ImportError:
        print("  (river is not installed: its row is skipped)")
    for f in methods.values():  # warm up (numba compile, imports)
        (f[0] if isinstance(f, tuple) else f)()
    times: dict[str, list[float]] = {k: [] for k in methods}
    for _ in range(repeats):  # interleaved
        for name, f in methods.items():
            fn, items = (f if isinstance(f, tuple) else (f, n))
            times[name].append(items / _timed(fn))
    return {k: statistics.median(v) for k, v in times.items()}


def main():
    print("Part 1: gradient-estimate variance (trace of the covariance) vs copies m, at fixed w, x, y; "
          "noise variance 1 per copy, d = 5")
    rows = gradient_variance(n=50_000 if QUICK else 200_000)
    print(f"  {'m':>3}  {'estimate':<26} {'variance':>10}  {'max |bias|':>10}")
    for m, name, var, bias in rows:
        print(f"  {m:>3}  {name:<26} {var:>10.4f}  {bias:>10.4f}")
    print("\nPart 2: items per second, m = 4 readings per item (machine shared with other jobs: ratios matter)")
    for d, n, reps in ((20, 20_000 if QUICK else 50_000, 3 if QUICK else 5), (200, 2_000 if QUICK else 5_000, 3)):
        rates = throughput(d, n, reps)
        ref = rates["nolo BiasCompensatedRLS (repeated)"]
        print(f"\n  d = {d}, n = {n}")
        print(f"  {'method':<48} {'items/s':>12}  {'ratio to BCRLS':>14}")
        for name, r in rates.items():
            print(f"  {name:<48} {r:>12,.0f}  {r / ref:>14.2f}")


if __name__ == "__main__":
    main()
