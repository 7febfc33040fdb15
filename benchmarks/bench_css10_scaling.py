"""Benchmark: CSS10 Algorithm 1 costs O(T^2 d) per run (incremental norm, degree buckets), not O(T^3).

Prints, measured in one run on this machine:

1. scaling -- cumulative time after T and after 2T rounds of one run (T >= 8,000);
   the ratio is ~2-4 for a quadratic run (8 for a cubic one);
2. speed-up over a literal implementation of the printed Algorithm 1 at T = 1,000:
   the support is a list of Psi~ objects, <w, Psi~_j> is a sum of Prod calls over the
   support and the squared norm n~_t = sum_ij alpha_i alpha_j Prod(Psi~_i, Psi~_j) is
   recomputed from all pairs every round (each row of Prod values is evaluated with
   one vectorised numpy call) -- O(T^3) overall.  Both use the same random draws,
   so their predictions must agree (checked);
3. T = 100,000 rounds, d = 20, inhomogeneous polynomial kernel of degree 2, p = 2:
   wall time and peak resident memory (``--big``; ~minutes).

Usage: python benchmarks/bench_css10_scaling.py [--T 8000] [--literal-T 1000] [--big] [--markdown FILE]

``--markdown FILE`` also writes the figures as a Markdown table stamped with the version, the machine and the
command (``benchmarks/_markdown.py``); docs/benchmarks-css10.md includes ``docs/_generated/bench_css10_scaling.md``.
"""

from __future__ import annotations

import argparse
import math
import resource
import time

import numpy as np

from nolo.kernels import PolynomialKernel, grad_length_estimate
from nolo.learners.kernel import NoisyKernelLearner
from nolo.losses import get_loss
from nolo.noise import GaussianNoise, Oracle

D = 20
P = 2.0
B_W = 10.0
ETA = 0.01


def stream(T: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=D) / math.sqrt(D)
    X = rng.normal(size=(T, D)) / math.sqrt(D)
    y = X @ w + 0.5 * (X @ w) ** 2
    return X, y


class LiteralAlgorithm1:
    """CSS10 Algorithm 1 as printed (errata E1/E2 corrected): O(t) Prod calls for <w, .>, O(t^2) for the norm, each round."""

    def __init__(self, kernel, loss, p, B_w, eta, seed):
        self.kernel, self.loss, self.p, self.B_w, self.eta = kernel, loss, p, B_w, eta
        self.rng = np.random.default_rng(seed)
        self.support, self.alpha = [], []
        self.t = 0

    def inner(self, est) -> float:
        return sum(a * self.kernel.prod(s, est) for a, s in zip(self.alpha, self.support))

    def has_support(self, n: int) -> bool:
        return any(s.degree == n for s in self.support)

    def sq_norm(self) -> float:
        """n~_t = sum_i sum_j alpha_i alpha_j Prod(Psi~_i, Psi~_j), from scratch (Subroutine 3 on every pair)."""
        alpha = np.array(self.alpha)
        deg = np.array([s.degree for s in self.support])
        lw = np.array([s.log_weight for s in self.support])
        sg = np.array([s.sign for s in self.support])
        total = 0.0
        for i, s in enumerate(self.support):
            same = np.nonzero(deg == s.degree)[0]  # Prod is 0 between different degrees
            if s.degree == 0:
                row = np.ones(same.size)
            else:
                C = np.stack([self.support[j].copies for j in same])  # (m, n, d)
                row = np.prod(np.einsum("mkd,kd->mk", C, s.copies), axis=1)
            row = row * sg[same] * s.sign * np.exp(lw[same] + s.log_weight)
            total += alpha[i] * float(alpha[same] @ row)
        return total

    def learn(self, oracle, y):
        est = self.kernel.map_estimate(oracle, self.p, self.rng)
        gl = grad_length_estimate(self.loss, self.kernel, oracle, y, self.p, self.rng, self.inner,
                                  has_support=self.has_support)
        self.t += 1
        a = -self.eta / math.sqrt(self.t) * gl.value
        if a != 0.0 and est.sign != 0:
            self.support.append(est)
            self.alpha.append(a)
            n = self.sq_norm()
            if n > self.B_w:
                c = math.sqrt(self.B_w / n)
                self.alpha = [x * c for x in self.alpha]

    def predict(self, X):
        return np.array([sum(a * self.kernel.prod_clean(s, x) for a, s in zip(self.alpha, self.support)) for x in X])


def run_ours(T: int, marks=(), seed: int = 0):
    X, y = stream(T, seed)
    L = NoisyKernelLearner(PolynomialKernel(2, 1.0), "squared", p=P, B_w=B_W, step="sqrt", eta=ETA, seed=seed + 1)
    rng = np.random.default_rng(seed + 2)
    noise = GaussianNoise(0.3)
    times = {}
    t0 = time.perf_counter()
    for t in range(T):
        L.learn(Oracle(X[t], noise, rng, round=t), y[t])
        if t + 1 in marks:
            times[t + 1] = time.perf_counter() - t0
    return L, time.perf_counter() - t0, times


def warm_up():
    run_ours(200)


def bench_scaling(T: int):
    _, total, times = run_ours(2 * T, marks=(T, 2 * T))
    ratio = times[2 * T] / times[T]
    print(f"[scaling] one run, d={D}, poly-2, p={P}: time(T={T}) = {times[T]:.2f} s, time(2T={2 * T}) = {times[2 * T]:.2f} s, "
          f"ratio = {ratio:.2f}  (quadratic <= 4.4; cubic ~ 8)")
    return [f"time after T = {T:,} rounds / after 2T = {2 * T:,} rounds of the same run",
            f"{times[T]:.2f} s / {times[2 * T]:.2f} s, ratio **{ratio:.2f}**", "<= 4.4 (quadratic), not ~8"]


def bench_literal(T: int):
    X, y = stream(T)
    noise = GaussianNoise(0.3)
    kernel, loss = PolynomialKernel(2, 1.0), get_loss("squared")
    lit = LiteralAlgorithm1(kernel, loss, P, B_W, ETA, seed=1)
    rng = np.random.default_rng(2)
    t0 = time.perf_counter()
    for t in range(T):
        lit.learn(Oracle(X[t], noise, rng, round=t), y[t])
    t_lit = time.perf_counter() - t0
    ours, t_ours, _ = run_ours(T)
    Xt = X[:50]
    diff = float(np.max(np.abs(lit.predict(Xt) - ours.decision_function(Xt))))
    scale = float(np.max(np.abs(ours.decision_function(Xt))))
    print(f"[literal] T={T}: literal printed Algorithm 1 {t_lit:.2f} s, ours {t_ours:.3f} s, speed-up = {t_lit / t_ours:.1f}x; "
          f"max |prediction difference| = {diff:.2e} (predictions up to {scale:.2e})")
    return [[f"literal printed Algorithm 1 vs ours, T = {T:,}",
             f"{t_lit:.1f} s vs {t_ours:.3f} s, speed-up **{t_lit / t_ours:.0f}x**", "> 50x"],
            ["predictions of the two implementations (same random draws)", f"max abs difference {diff:.1e}",
             "identical up to rounding"]]


def bench_big(T: int = 100_000):
    _, total, _ = run_ours(T)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"[big] T={T}, d={D}, poly-2, p={P}: wall time {total:.1f} s, peak RSS {peak_mb:.0f} MB")
    return [f"T = {T:,} rounds, d = {D}, poly-2, p = {P}",
            f"wall time **{total:.1f} s**, peak RSS **{peak_mb:.0f} MB** (process total)", "< 5 min"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", type=int, default=8000)
    ap.add_argument("--literal-T", type=int, default=1000)
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--markdown", metavar="FILE", help="also write the figures as a stamped Markdown table")
    args = ap.parse_args()
    if args.markdown:
        from _markdown import start

        start()
    warm_up()
    rows = [bench_scaling(args.T), *bench_literal(args.literal_T)]
    if args.big:
        rows.append(bench_big())
    if args.markdown:
        from _markdown import write_markdown

        path = write_markdown(args.markdown, ["measurement", "figure", "target"], rows)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
