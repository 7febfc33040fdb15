"""Lemma-1 estimator: per-call cost versus the vectorised batch path (prints measured ratios).

Run: python benchmarks/bench_estimators_lemma1.py
"""

import time

import numpy as np

from nolo.estimators import RandomDegreeEstimator
from nolo.losses import get_loss


def main(m: int = 20_000) -> None:
    est = RandomDegreeEstimator(get_loss("smoothed_hinge", s=1.0), 2.0)
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    loop = [est.estimate(lambda n: rng.normal(0.5, 0.5, n), rng).value for _ in range(m)]
    t_loop = time.perf_counter() - t0
    t0 = time.perf_counter()
    batch = est.sample(np.random.default_rng(0), m, lambda r, k: r.normal(0.5, 0.5, k))
    t_batch = time.perf_counter() - t0
    print(f"per-call estimate(): {1e6 * t_loop / m:.1f} us  (mean {np.mean(loop):+.4f})")
    print(f"batch sample():      {1e6 * t_batch / m:.2f} us per estimate  (mean {batch.values.mean():+.4f})")
    print(f"batch speed-up:      {t_loop / t_batch:.0f}x")
    loss = get_loss("smoothed_hinge", s=1.0)
    t0 = time.perf_counter()
    for _ in range(m):
        loss.grad_margin(0.3, -1.0)
    print(f"Loss.grad_margin (scalar): {1e6 * (time.perf_counter() - t0) / m:.1f} us")


if __name__ == "__main__":
    main()
