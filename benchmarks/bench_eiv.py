"""Errors-in-variables regression: throughput of the online estimator beside batch and online peers, and the
variance of the CSS11 gradient estimates against the number of copies used.

Run:  python benchmarks/bench_eiv.py [--quick] [--throughput]   (--throughput: part 2 only)

Part 1 (variance): Monte Carlo variance (trace of the covariance) of the CSS11 gradient estimates at a fixed
``w``, item ``x`` and target, as a function of the number ``m`` of noisy copies used: Setting 1 with Lemma 1's
two-copy estimate and with the U-statistic over ``m`` copies, Setting 2 with one copy and with the mean of ``m``.

Part 2 (throughput, one run, interleaved): items per second at d = 20 and d = 200 (m = 4 readings per item) of
* nolo ``BiasCompensatedRLS.learn_stream`` (repeated readings; known Sigma; each with its default guard, the
  cross-validated correction scale ``cv_folds=5``, and without it, ``cv_folds=None``) -- online, O(d^2) per item;
* nolo ``CorrectedLeastSquares.fit`` (batch; default and ``cv_folds=None``) and scikit-learn ``LinearRegression`` on the mean of the readings
  (batch; items/s = n / fit time, the mean included);
* River ``linear_model.LinearRegression.learn_one`` on the mean (online SGD, first order; dict inputs built
  outside the timing);
* statsmodels ``OLS`` and ``WLS`` (weights ``m_i``, the readings per item) on the mean, with a constant
  (``pip install nolo[bench]``; the run says when it is missing).
Ratios are relative to ``BiasCompensatedRLS`` (repeated, defaults).  Each rate is the median of interleaved repeats.

Part 3 (accuracy, one pass, n = 2000): clean-input R^2 of BiasCompensatedRLS (repeated readings), of
CorrectedLeastSquares (noise_cov="estimate", the batch solution it tracks) and of scikit-learn's
LinearRegression on the mean of the readings, over m readings x noise-to-signal ratio (noise variance per
reading / signal variance per feature) x d; intercept 1, target noise sd 0.1.

Part 4 (stress, ``--stress``): 40 random problems (d = 2..29, m = 2..4, noise variance 0.1-4 per reading,
n = 400) fed item by item; the largest ||coef_|| / ||w|| seen along the way, and the gap to
CorrectedLeastSquares at the end for sweeps = 1 and 3 (problems the batch estimator refuses are counted).
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


#: the reference row: the online estimator with its defaults (the cross-validated guard cv_folds=5); the
#: cv_folds=None rows are the full correction without the guard
REF = "nolo BiasCompensatedRLS (repeated)"


def throughput(d, n, repeats):
    R, y = _problem(n, d)
    methods = {}

    def bcrls(**kw):
        def run():
            BiasCompensatedRLS(**kw).learn_stream(R, y)
        return run

    methods[REF] = bcrls(noise="repeated")
    methods["nolo BiasCompensatedRLS (repeated, cv_folds=None)"] = bcrls(noise="repeated", cv_folds=None)
    methods["nolo BiasCompensatedRLS (known Sigma)"] = bcrls(noise="known", noise_cov=1.0)
    methods["nolo BiasCompensatedRLS (known Sigma, cv_folds=None)"] = bcrls(noise="known", noise_cov=1.0,
                                                                           cv_folds=None)
    methods["nolo CorrectedLeastSquares (batch)"] = lambda: CorrectedLeastSquares(noise_cov="estimate").fit(R, y)
    methods["nolo CorrectedLeastSquares (batch, cv_folds=None)"] = lambda: CorrectedLeastSquares(
        noise_cov="estimate", cv_folds=None).fit(R, y)
    from sklearn.linear_model import LinearRegression

    methods["sklearn LinearRegression on the mean (batch)"] = lambda: LinearRegression().fit(R.mean(axis=1), y)
    try:
        import statsmodels.api as sm

        methods["statsmodels OLS on the mean (batch)"] = lambda: sm.OLS(y, sm.add_constant(R.mean(axis=1))).fit()
        weights = np.full(n, float(R.shape[1]))  # readings per item: the mean's precision
        methods["statsmodels WLS on the mean (batch)"] = lambda: sm.WLS(y, sm.add_constant(R.mean(axis=1)),
                                                                        weights=weights).fit()
    except ImportError:
        if d == 20:
            print("  (statsmodels is not installed: its rows are skipped)")
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


# -- part 3: accuracy ---------------------------------------------------------------------------------------
def accuracy(n=2000, seed=0):
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score

    rows = []
    for d in (3, 20):
        for m in (2, 4, 8):
            for nsr in (0.5, 2.0):
                rng = np.random.default_rng(seed)
                w = rng.standard_normal(d)
                X = rng.standard_normal((n, d))
                y = X @ w + 1.0 + 0.1 * rng.standard_normal(n)
                R = X[:, None, :] + np.sqrt(nsr) * rng.standard_normal((n, m, d))
                Xt = rng.standard_normal((5000, d))
                yt = Xt @ w + 1.0
                bc = BiasCompensatedRLS()
                bc.learn_stream(R, y)
                Ra = np.concatenate([R, np.ones((n, m, 1))], axis=2)
                cls = CorrectedLeastSquares(noise_cov="estimate").fit(Ra, y).coef_
                ols = LinearRegression().fit(R.mean(axis=1), y)
                rows.append((d, m, nsr, 1 / (1 + nsr / m), r2_score(yt, bc.predict(Xt)),
                             r2_score(yt, Xt @ cls[:d] + cls[d]), r2_score(yt, ols.predict(Xt))))
    return rows


# -- part 4: stress ------------------------------------------------------------------------------------------
def stress(sweeps, seeds=range(40), n=400):
    from nolo.exceptions import NumericalError

    worst_norm, refused, full, partial = 0.0, 0, [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        d, m = int(rng.integers(2, 30)), int(rng.integers(2, 5))
        var = float(rng.choice([0.1, 1.0, 4.0]))
        X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2, size=d)
        w = rng.normal(size=d)
        y = X @ w + 0.1 * rng.normal(size=n)
        R = X[:, None, :] + np.sqrt(var) * rng.normal(size=(n, m, d))
        model = BiasCompensatedRLS(fit_intercept=False, sweeps=sweeps)
        for t in range(n):
            model.learn_stream(R[t : t + 1], y[t : t + 1])
            worst_norm = max(worst_norm, float(np.linalg.norm(model.coef_) / np.linalg.norm(w)))
        try:
            ref = CorrectedLeastSquares(noise_cov="estimate").fit(R, y).coef_
        except NumericalError:
            refused += 1
            continue
        gap = float(np.linalg.norm(model.coef_ - ref) / np.linalg.norm(ref))
        (full if model.gamma_ == 1.0 else partial).append(gap)
    return worst_norm, refused, full, partial


def part2():
    print("\nPart 2: items per second, m = 4 readings per item (machine shared with other jobs: ratios matter)")
    for d, n, reps in ((20, 20_000 if QUICK else 50_000, 3 if QUICK else 5), (200, 2_000 if QUICK else 5_000, 3)):
        rates = throughput(d, n, reps)
        ref = rates[REF]
        print(f"\n  d = {d}, n = {n}")
        print(f"  {'method':<56} {'items/s':>12}  {'ratio to BCRLS':>14}")
        for name, r in rates.items():
            print(f"  {name:<56} {r:>12,.0f}  {r / ref:>14.2f}")


def main():
    if "--throughput" in sys.argv:
        return part2()
    print("Part 1: gradient-estimate variance (trace of the covariance) vs copies m, at fixed w, x, y; "
          "noise variance 1 per copy, d = 5")
    rows = gradient_variance(n=50_000 if QUICK else 200_000)
    print(f"  {'m':>3}  {'estimate':<26} {'variance':>10}  {'max |bias|':>10}")
    for m, name, var, bias in rows:
        print(f"  {m:>3}  {name:<26} {var:>10.4f}  {bias:>10.4f}")
    part2()
    print("\nPart 3: clean-input R^2 after one pass, n = 2000 (attenuation = 1 / (1 + nsr / m))")
    print(f"  {'d':>3} {'m':>3} {'nsr':>5} {'atten.':>6}  {'BCRLS':>7} {'CLS':>7} {'OLS-mean':>8}")
    for d, m, nsr, att, bc, cls, ols in accuracy():
        print(f"  {d:>3} {m:>3} {nsr:>5} {att:>6.2f}  {bc:>7.4f} {cls:>7.4f} {ols:>8.4f}")
    if "--stress" in sys.argv:
        print("\nPart 4: stress, 40 random problems fed item by item")
        for sweeps in (1, 3):
            worst, refused, full, partial = stress(sweeps)
            print(f"  sweeps={sweeps}: max ||coef||/||w|| on the way {worst:.1f}; CLS refused {refused}; "
                  f"gap to CLS where gamma reached 1: max {max(full):.4f} over {len(full)}; "
                  f"partial correction (rho >= max_correction) on {len(partial)}")


if __name__ == "__main__":
    main()
