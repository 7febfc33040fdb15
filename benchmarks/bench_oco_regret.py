"""Cost of the OCO core's whole-stream paths against their per-round / from-scratch equivalents.

Run: python benchmarks/bench_oco_regret.py
Prints (one run, this machine):
* ProjectedOGD.learn_many (compiled for the squared loss; Python loop otherwise)
  against calling learn() row by row, microseconds per round and the ratio;
* regret_curve with 20 checkpoints over T = 20,000 (incremental sufficient
  statistics for the squared loss) against recomputing best_fixed_in_hindsight
  on every prefix from scratch;
* best_fixed_in_hindsight per loss on an L2 ball (n = 5,000, d = 20): seconds and certificate.
"""

from __future__ import annotations

import time

import numpy as np

from nolo.learners import ProjectedOGD
from nolo.oco import InverseSqrtStep, L2Ball, best_fixed_in_hindsight, regret_curve, solve_hindsight


def _time(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    rng = np.random.default_rng(0)
    T, d = 20000, 10
    w_star = rng.standard_normal(d) / np.sqrt(d)
    X = rng.standard_normal((T, d))
    y = X @ w_star + 0.5 * rng.standard_normal(T)
    yc = np.where(y > 0, 1.0, -1.0)
    ball = L2Ball(1.0)

    print("learn_many vs learn row by row (us/round)")
    for loss, targets in (("squared", y), ("logistic", yc)):
        ProjectedOGD(loss=loss, step=InverseSqrtStep(0.1), constraint=ball).learn_many(X[:5], targets[:5])  # warm up
        batch, _ = _time(lambda: ProjectedOGD(loss=loss, step=InverseSqrtStep(0.1), constraint=ball).learn_many(X, targets))
        m = ProjectedOGD(loss=loss, step=InverseSqrtStep(0.1), constraint=ball)
        n = 3000
        single, _ = _time(lambda: [m.learn(X[i], targets[i]) for i in range(n)])
        print(f"  {loss:10s} learn_many {batch / T * 1e6:8.2f}   learn {single / n * 1e6:8.2f}   ratio {single / n / (batch / T):8.1f}x")

    played = ProjectedOGD(step=InverseSqrtStep(0.1), constraint=ball).learn_many(X, y)
    cps = np.unique(np.geomspace(500, T, 20).astype(int))
    inc, curve = _time(lambda: regret_curve(played, X, y, "squared", ball, cps))
    scratch, ref = _time(lambda: np.array([played[:c].sum() - best_fixed_in_hindsight(X[:c], y[:c], "squared", ball)[1] for c in cps]))
    print(f"regret_curve squared, {cps.size} checkpoints, T={T}: incremental {inc:.3f} s, from scratch {scratch:.3f} s, "
          f"ratio {scratch / inc:.1f}x, max |difference| {np.max(np.abs(curve - ref)):.2e}")

    n, d = 5000, 20
    X = rng.standard_normal((n, d))
    y = X @ (rng.standard_normal(d) / np.sqrt(d)) + 0.5 * rng.standard_normal(n)
    yc = np.where(y + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    print(f"best_fixed_in_hindsight on L2Ball(0.5), n={n}, d={d}")
    for loss, targets in (("squared", y), ("logistic", yc), ("exponential", yc), ("smoothed_hinge", yc),
                          ("smoothed_absolute", y), ("hinge", yc), ("absolute", y)):
        secs, sol = _time(lambda: solve_hindsight(X, targets, loss, L2Ball(0.5)))
        print(f"  {loss:18s} {sol.method:16s} {secs:7.3f} s   total {sol.total_loss:12.4f}   certificate {sol.gap:.1e}")


if __name__ == "__main__":
    main()
