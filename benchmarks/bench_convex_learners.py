"""Throughput of the OCO notes' example learners beside scikit-learn and River, and the matrix learners' costs.

Linear learners (d = 20, unit-norm rows): rounds/s of

* nolo ``OnlineLinearSVM`` (hinge, L2 ball) / ``OnlineLasso`` (proximal step) -- ``learn`` one example
  per call, and ``learn_stream`` on the whole stream (one compiled loop);
* scikit-learn ``SGDClassifier(loss="hinge")`` / ``SGDRegressor(penalty="l1")`` -- ``partial_fit`` one
  example per call, and ``partial_fit`` on the whole stream in one call (one SGD epoch, compiled);
* River ``LogisticRegression(loss=Hinge())`` / ``LinearRegression(l1=...)`` -- ``learn_one`` per example.

The contenders are timed interleaved (each repeat runs all of them in turn) and the script prints the
median rounds/s and each one's ratio to nolo's per-call path.  The machine is shared: read the ratios.

Matrix learners: ``TraceNormOGD`` rounds/s with the exact projection every round and every k rounds,
the cost of one trace-norm projection (a full SVD) from 250 x 425 to (M, N) = (2000, 3400), and
``MaxEntryOGD`` / ``TraceNormOGD`` gradient-step rounds/s at (1000, 1700) and (10^4, 10^4) (the learners
keep a dense ``M x N`` iterate: 800 MB at 10^4 x 10^4, allocated lazily, only touched pages are used).
The projection at (10^4, 10^4) is a 10^4 x 10^4 SVD (about 10^12 flops, 2.4 GB of workspace); it is timed
only with ``--large``, otherwise extrapolated from the CPU time of the two largest sizes (a fitted power
of ``M N min(M, N)``).  Run it with ``OPENBLAS_NUM_THREADS=1`` on a shared machine.

Usage::

    python benchmarks/bench_convex_learners.py            # ~1-2 minutes on 2 loaded cores
    python benchmarks/bench_convex_learners.py --large    # also time the 10^4 x 10^4 projection
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np


def _rate(fn, n):
    t = time.perf_counter()
    fn()
    return n / (time.perf_counter() - t)


def linear_bench(n_call: int, n_stream: int, repeats: int) -> None:
    from river import linear_model, optim
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    from nolo.learners.convex import OnlineLasso, OnlineLinearSVM

    rng = np.random.default_rng(0)
    d = 20
    X = rng.standard_normal((n_stream, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.standard_normal(d)
    yc = np.where(X @ w > 0, 1.0, -1.0)
    yr = X @ w / np.linalg.norm(w)
    dicts = [dict(enumerate(row)) for row in X[:n_call]]

    def per_call(learner, y):
        def run():
            for t in range(n_call):
                learner.learn(X[t], y[t])
        return run

    def sk_per_call(model, y, classes=None):
        def run():
            for t in range(n_call):
                if classes is not None:
                    model.partial_fit(X[t:t + 1], y[t:t + 1], classes=classes)
                else:
                    model.partial_fit(X[t:t + 1], y[t:t + 1])
        return run

    def river_per_call(model, y):
        def run():
            for t in range(n_call):
                model.learn_one(dicts[t], float(y[t]) if not isinstance(model, linear_model.LogisticRegression) else bool(y[t] > 0))
        return run

    for task, y in (("svm (hinge, L2 ball)", yc), ("lasso (proximal, squared + l1)", yr)):
        results: dict[str, list[float]] = {}
        for _ in range(repeats):
            if task.startswith("svm"):
                cont = {
                    "nolo learn (1/call)": (per_call(OnlineLinearSVM(step=0.1), yc), n_call),
                    "nolo learn_stream": (lambda: OnlineLinearSVM(step=0.1).learn_stream(X, yc), n_stream),
                    "sklearn partial_fit (1/call)": (sk_per_call(SGDClassifier(loss="hinge", penalty=None), yc, np.array([-1.0, 1.0])), n_call),
                    "sklearn partial_fit (stream)": (lambda: SGDClassifier(loss="hinge", penalty=None).partial_fit(X, yc, classes=np.array([-1.0, 1.0])), n_stream),
                    "river learn_one": (river_per_call(linear_model.LogisticRegression(loss=optim.losses.Hinge()), yc), n_call),
                }
            else:
                cont = {
                    "nolo learn (1/call)": (per_call(OnlineLasso(alpha=0.01, step=0.1), yr), n_call),
                    "nolo learn_stream": (lambda: OnlineLasso(alpha=0.01, step=0.1).learn_stream(X, yr), n_stream),
                    "sklearn partial_fit (1/call)": (sk_per_call(SGDRegressor(penalty="l1", alpha=0.01), yr), n_call),
                    "sklearn partial_fit (stream)": (lambda: SGDRegressor(penalty="l1", alpha=0.01).partial_fit(X, yr), n_stream),
                    "river learn_one": (river_per_call(linear_model.LinearRegression(l1=0.01), yr), n_call),
                }
            for name, (fn, n) in cont.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    results.setdefault(name, []).append(_rate(fn, n))
        base = statistics.median(results["nolo learn (1/call)"])
        print(f"\n{task}: d = {d}, median of {repeats} interleaved repeats")
        for name, rates in results.items():
            med = statistics.median(rates)
            print(f"  {name:32s} {med:14,.0f} rounds/s   x{med / base:8.2f}")


def matrix_bench(large: bool) -> None:
    from nolo.learners.convex import MaxEntryOGD, TraceNormOGD
    from nolo.oco import project_trace_norm_ball

    rng = np.random.default_rng(1)
    print("\nmatrix learners")
    proj = {}
    project_trace_norm_ball(rng.standard_normal((20, 30)), 1.0)  # load the compiled threshold
    sizes = ((250, 425), (500, 850), (1000, 1700), (2000, 3400)) + (((10_000, 10_000),) if large else ())
    for M, N in sizes:
        W = rng.standard_normal((M, N)) * 0.01
        t, c = time.perf_counter(), time.process_time()
        project_trace_norm_ball(W, 1.0)
        proj[(M, N)] = (time.perf_counter() - t, time.process_time() - c)
        print(f"  trace-norm projection (full SVD) at {M} x {N}: {proj[(M, N)][0]:.3f} s wall, "
              f"{proj[(M, N)][1]:.3f} s CPU")
    if not large:
        # CPU time against the flop count M N min(M, N), fitted on the two largest sizes (the small ones are
        # dominated by overheads); the CPU time is what a loaded machine does not inflate
        (m1, n1), (m2, n2) = sizes[-2], sizes[-1]
        f1, f2 = m1 * n1 * min(m1, n1), m2 * n2 * min(m2, n2)
        p = np.log(proj[(m2, n2)][1] / proj[(m1, n1)][1]) / np.log(f2 / f1)
        est = proj[(m2, n2)][1] * (1e12 / f2) ** p
        print(f"  trace-norm projection at 10000 x 10000: ~{est:,.0f} s CPU (extrapolated: time ~ (M N min(M, N))^{p:.2f},"
              f" fitted on {m1} x {n1} and {m2} x {n2})")
    M, N = 1000, 1700
    users, items = rng.integers(0, M, 20_000), rng.integers(0, N, 20_000)
    ys = rng.standard_normal(20_000)
    for k, rounds in ((1, 3), (100, 200), (10_000, 20_000)):
        ogd = TraceNormOGD(M, N, radius=50.0, step=0.1, projection_every=k)
        ogd.learn_stream(users[:1], items[:1], ys[:1])  # compile / warm up
        r = _rate(lambda: ogd.learn_stream(users[:rounds], items[:rounds], ys[:rounds]), rounds)
        print(f"  TraceNormOGD {M} x {N}, projection every {k:>6d} rounds: {r:12,.1f} rounds/s")
    for (M, N) in ((1000, 1700), (10_000, 10_000)):
        users, items = rng.integers(0, M, 1_000_000), rng.integers(0, N, 1_000_000)
        ys = rng.standard_normal(1_000_000)
        box = MaxEntryOGD(M, N, bound=5.0, step=0.1)
        box.learn_stream(users[:1], items[:1], ys[:1])
        r = _rate(lambda: box.learn_stream(users, items, ys), 1_000_000)
        r1 = _rate(lambda: [box.learn((int(users[t]), int(items[t])), float(ys[t])) for t in range(20_000)], 20_000)
        print(f"  MaxEntryOGD  {M} x {N}: learn_stream {r:14,.0f} rounds/s; learn (1/call) {r1:10,.0f} rounds/s")
        ogd = TraceNormOGD(M, N, radius=50.0, step=0.1, projection_every=10**9)
        ogd.learn_stream(users[:1], items[:1], ys[:1])
        r = _rate(lambda: ogd.learn_stream(users, items, ys), 1_000_000)
        print(f"  TraceNormOGD {M} x {N}, gradient steps only (no projection): {r:14,.0f} rounds/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20_000, help="rounds of the per-call paths")
    ap.add_argument("--stream", type=int, default=200_000, help="rounds of the whole-stream paths")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--large", action="store_true", help="time the 10^4 x 10^4 trace-norm projection (minutes)")
    args = ap.parse_args()
    linear_bench(args.rounds, args.stream, args.repeats)
    matrix_bench(args.large)


if __name__ == "__main__":
    main()
