"""Interleaved A/B of SquareCB's whole-stream throughput between two revisions, in one process.

Revision A (default ``HEAD``, the last commit) against B (default ``.``, the working tree), each running
SquareCB through its package's stream loop (``nolo.learners.bandit.run_stream``; for revisions from before
SquareCB ran on the bandit core, SquareCB's own compiled loop ``squarecb.run_stream``).  Each revision's
``src/nolo/learners/bandit`` is loaded as a package of its own name (:func:`bench_am_kernel_ab.load_revision`);
after one warm-up run each, the runs alternate revision by revision on the same data and seeds, so they share
the machine's load.  Prints best and median rounds/s per revision and oracle, and the median of the paired
ratios B/A.

Usage::

    python benchmarks/bench_squarecb_ab.py                         # digits, the three oracles, 10^5 / 10^6 rounds
    python benchmarks/bench_squarecb_ab.py HEAD~1 . --repeats 7
    python benchmarks/bench_squarecb_ab.py HEAD . --oracles ogd --data digits mnist   # the OGD step, d = 64 and 784
    python benchmarks/bench_squarecb_ab.py HEAD . --oracles fdson --data mnist        # the FD-SON step

``--data mnist`` reads the MNIST test set with ``nolo.datasets`` (from ``$NOLO_DATA_DIR``, else
``~/.cache/nolo/data``; an error names the missing files), unit rows, as ``run_stream``'s
``representation="auto"`` does (CSR rows); each round count is per data set and oracle (``ROUNDS``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_am_kernel_ab import load_revision  # noqa: E402

ROUNDS = {"ridge": 100_000, "ogd": 1_000_000, "fdson": 100_000}
#: rounds on MNIST (d = 784; the ridge oracle is O(d^2) per round there, FD-SON O(m d))
MNIST_ROUNDS = {"ridge": 2_000, "ogd": 300_000, "fdson": 20_000}


def load(name: str):
    """(X, y) of ``digits`` (scikit-learn) or ``mnist`` (nolo.datasets), rows scaled to unit norm."""
    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return X / np.linalg.norm(X, axis=1, keepdims=True), y
    from nolo.datasets import load_dataset

    X, y = load_dataset(name, normalize="unit")
    return np.ascontiguousarray(X), y


def stream_call(pkg, oracle: str, X, y, T: int):
    """One compiled SquareCB stream of ``T`` rounds under (rho0, rho1) = (0.2, 0.2); returns played mistakes."""
    K = int(y.max()) + 1
    runner = pkg.squarecb.run_stream if hasattr(pkg.squarecb, "run_stream") else pkg.run_stream

    def call():
        m = pkg.SquareCB(n_classes=K, oracle=oracle, rho0=0.2, rho1=0.2, seed=0)
        res = runner(m, X, y, T, 0.2, 0.2, seed=1, checkpoints=[T])
        return int(res.played_mistakes[-1])
    return call


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("revs", nargs="*", default=["HEAD", "."],
                    help="git revisions to compare (the first is the baseline); '.' is the working tree")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the rounds (10^5 ridge and fdson, 10^6 ogd)")
    ap.add_argument("--oracles", nargs="+", default=list(ROUNDS), choices=list(ROUNDS))
    ap.add_argument("--data", nargs="+", default=["digits"], choices=["digits", "mnist"])
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        pkgs = [load_revision(r, Path(tmp)) for r in args.revs]
        for data, oracle in [(dn, o) for dn in args.data for o in args.oracles]:
            X, y = load(data)
            T = int((MNIST_ROUNDS if data == "mnist" else ROUNDS)[oracle] * args.scale)
            calls = [stream_call(p, oracle, X, y, T) for p in pkgs]
            for r, c in zip(args.revs, calls):
                t0 = time.perf_counter()
                mis = c()
                print(f"{oracle:>5} {r:>12}: warm-up (compile) {time.perf_counter() - t0:.1f} s, played mistakes {mis:,}")
            rates = {r: [] for r in args.revs}
            for rep in range(args.repeats):
                order = list(zip(args.revs, calls))
                for r, c in (order if rep % 2 == 0 else order[::-1]):
                    t0 = time.perf_counter()
                    c()
                    rates[r].append(T / (time.perf_counter() - t0))
            print(f"\nSquareCB oracle={oracle}, {data}, {T:,} rounds, best/median of {args.repeats} interleaved runs:")
            for r in args.revs:
                ratios = [a / b for a, b in zip(rates[r], rates[args.revs[0]])]
                print(f"{r:>12}: best {max(rates[r]):>11,.0f} rounds/s  median {statistics.median(rates[r]):>11,.0f}  "
                      f"median of paired ratios to {args.revs[0]} {statistics.median(ratios):.3f}")
            print()


if __name__ == "__main__":
    main()
