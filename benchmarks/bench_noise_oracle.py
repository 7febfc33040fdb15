"""Cost of the oracle's hot path: Oracle.query(n) against the bare numpy draw it wraps.

Run: python benchmarks/bench_noise_oracle.py
Prints microseconds per call and the overhead ratio (query / bare draw) for a
few laws and copy counts; the per-round Oracle construction cost is printed too
(the experiment runner builds one oracle per round).
"""

from __future__ import annotations

import timeit

import numpy as np

from nolo.noise import GaussianNoise, LaplaceNoise, Oracle, PerCallSchedule, PoolOracle, UniformNoise


def _us(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main() -> None:
    d = 20
    x = np.ones(d)
    rng = np.random.default_rng(0)
    cov = np.eye(d) + 0.1
    cases = {
        "gaussian-iso": (GaussianNoise(0.5), lambda n: rng.standard_normal((n, d)) * 0.5 + x),
        "gaussian-full": (GaussianNoise(cov=cov), lambda n: rng.standard_normal((n, d)) @ cov + x),
        "uniform": (UniformNoise(1.0), lambda n: rng.uniform(-1, 1, (n, d)) + x),
        "per-call(3)": (
            PerCallSchedule([GaussianNoise(0.5), UniformNoise(1.0), LaplaceNoise(0.3)], order="random"),
            lambda n: rng.standard_normal((n, d)) * 0.5 + x,
        ),
    }
    print(f"d={d}; microseconds per call (best of 5)")
    print(f"{'law':<15}{'n':>4}{'query':>10}{'bare':>10}{'ratio':>8}")
    for name, (noise, bare) in cases.items():
        o = Oracle(x, noise, 1)
        for n in (1, 4):
            q = _us(lambda: o.query(n), 20_000)
            b = _us(lambda: bare(n), 20_000)
            print(f"{name:<15}{n:>4}{q:>10.2f}{b:>10.2f}{q / b:>8.2f}")
    build = _us(lambda: Oracle(x, GaussianNoise(0.5), rng, round=3), 20_000)
    build_full = _us(lambda: Oracle(x, GaussianNoise(cov=cov), rng, round=3), 5_000)
    print(f"Oracle construction: isotropic {build:.2f} us, full covariance (cached factor) {build_full:.2f} us")
    copies = np.random.default_rng(2).normal(size=(120_000, d))
    pool = PoolOracle(copies)
    print(f"PoolOracle.query(1): {_us(lambda: pool.query(1), 20_000):.2f} us")


if __name__ == "__main__":
    main()
