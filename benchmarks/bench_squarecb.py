"""Throughput of SquareCB with each oracle beside Banditron's compiled loop and Vowpal Wabbit, in one run.

Measured in one process so that the ratios share the machine's load (the machine is shared: read the
ratios, not the absolute figures):

* rounds/s of ``SquareCB(oracle="ridge")``, ``SquareCB(oracle="ogd")`` and ``SquareCB(oracle="fdson")`` (compiled
  stream loop, :func:`nolo.learners.bandit.run_stream`, the bandit core), Banditron (the same loop) and VW
  ``--cb_explore_adf --squarecb -q sa`` driven from Python (optional; a few thousand rounds), all on the
  same stream (digits d = 64; MNIST d = 784 -- the real test set when the data directory has it, else
  random data of that shape, said on stderr; SynSep d = 400);
* ``x Banditron``: SquareCB's rounds/s over Banditron's on the same stream in the same run (the ratio that
  survives a loaded machine); ``x VW``: over VW's;
* the ridge oracle's memory traffic on MNIST: bytes moved per round (the played class's inverse P_a is
  read and written once, 2 (d+1)^2 8 bytes, plus the nnz rows of P_a read for P_a z) and the share of a
  STREAM-like copy bandwidth (``np.copyto`` of a 256 MiB array: 2 x 256 MiB moved) measured in the
  same run.

Usage: ``python benchmarks/bench_squarecb.py [--rounds 1000000] [--repeats 3] [--quick] [--no-vw] [--data-dir DIR]``.
The data directory is ``--data-dir``, else ``$NOLO_DATA_DIR``, else ``~/.cache/nolo/data``.
Each figure is the best of ``--repeats`` identical runs.  Prints a markdown table (docs/squarecb.md).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from nolo.learners.bandit import Banditron, SquareCB
from nolo.learners.bandit import run_stream
from nolo.learners.bandit.simulator import AUTO_CSR_DENSITY


def copy_bandwidth(mib: int = 256, repeats: int = 5) -> float:
    """Bytes/s of a STREAM-like copy: best of ``repeats`` np.copyto of ``mib`` MiB (read + write counted)."""
    src = np.ones(mib * 2**20 // 8)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return 2 * src.nbytes / best


def load(name: str, quick: bool, data_dir=None):
    from nolo.datasets import load_dataset, resolve_data_dir

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if name == "synsep":
                X, y = load_dataset("synsep", normalize="unit", n_samples=20_000, seed=2008)
            else:
                X, y = load_dataset(name, normalize="unit", data_dir=data_dir)
            return np.ascontiguousarray(X), y, name
        except FileNotFoundError:  # MNIST absent: random data of its shape
            print(f"{name} not found in {resolve_data_dir(data_dir).describe()}: random data of its shape instead",
                  file=sys.stderr)
            g = np.random.default_rng(0)
            X = g.random((10_000, 784)) * (g.random((10_000, 784)) < 0.19)
            return X / np.linalg.norm(X, axis=1, keepdims=True), g.integers(0, 10, 10_000), f"{name} (random stand-in)"


def best_rate(make, X, y, T, repeats, runner=run_stream) -> tuple[float, float]:
    runner(make(), X, y, min(T, 2_000), 0.2, 0.2, seed=1)  # compile / load the cache
    best, err = 0.0, np.nan
    for _ in range(repeats):
        r = runner(make(), X, y, T, 0.2, 0.2, seed=1, checkpoints=[T])
        if r.rounds_per_second > best:
            best, err = r.rounds_per_second, float(r.error_rate[-1])
    return best, err


def vw_rate(X, y, T: int) -> tuple[float, float]:
    from nolo.papers.am.vs_peers_vw import _vw_adf

    r = _vw_adf(X, y, T, 0.2, 0.2, env_seed=1, seed=0, args="--cb_explore_adf --squarecb -q sa", checkpoints=[T])
    return T / float(r["seconds"][0]), float(r["error_rate"][0])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10^5 rounds, 1 repeat")
    ap.add_argument("--no-vw", action="store_true")
    ap.add_argument("--data-dir", default=None,
                    help="where MNIST is read (default: $NOLO_DATA_DIR, else ~/.cache/nolo/data)")
    args = ap.parse_args(argv)
    T = 100_000 if args.quick else args.rounds
    reps = 1 if args.quick else args.repeats
    vw = not args.no_vw
    if vw:
        from nolo.papers.am import vw as V

        vw = V.available()
    bw = copy_bandwidth()
    rows = []
    for name in ("digits", "mnist", "synsep"):
        X, y, label = load(name, args.quick, args.data_dir)
        K, d = int(y.max()) + 1, X.shape[1]
        # run_stream's representation="auto": rows with at most AUTO_CSR_DENSITY non-zeros are read as CSR
        label += " (CSR rows)" if np.count_nonzero(X) <= AUTO_CSR_DENSITY * X.size else " (dense rows)"
        res = {}
        res["Banditron"] = best_rate(lambda: Banditron(n_classes=K, gamma=0.05, seed=0), X, y, T, reps)
        res["SquareCB ogd"] = best_rate(lambda: SquareCB(n_classes=K, oracle="ogd", seed=0), X, y, T, reps)
        Tr = T if d <= 100 else max(2_000, T // 200)  # the ridge oracle is O(d^2) per round
        res["SquareCB ridge"] = best_rate(lambda: SquareCB(n_classes=K, oracle="ridge", seed=0), X, y, Tr, reps)
        Tf = T if d <= 100 else max(2_000, T // 20)  # FD-SON: O(m d) per round, m = 20
        res["SquareCB fdson"] = best_rate(lambda: SquareCB(n_classes=K, oracle="fdson", seed=0), X, y, Tf, reps)
        if vw:
            res["VW squarecb (Python)"] = vw_rate(X, y, 3_000 if args.quick else 10_000)
        nnz = np.count_nonzero(X) / X.shape[0]
        D = d + 1
        ridge_bytes = 2 * D * D * 8 + nnz * D * 8 + 2 * D * 8  # P_a read + written, nnz rows of P_a, theta column
        for k, (rate, err) in res.items():
            row = {"data": label, "d": d, "learner": k, "rounds/s": rate, "error (0.2,0.2)": err}
            if k == "SquareCB ridge":
                row["bytes/round"] = ridge_bytes
                row["% of copy bandwidth"] = 100 * ridge_bytes * rate / bw
            if k.startswith("SquareCB"):
                row["x Banditron"] = rate / res["Banditron"][0]
            if vw and k.startswith("SquareCB"):
                row["x VW"] = rate / res["VW squarecb (Python)"][0]
            rows.append(row)
    import os

    print(f"STREAM-like copy bandwidth (np.copyto, 256 MiB, best of 5): {bw / 1e9:.2f} GB/s; rounds {T:,}, best of "
          f"{reps}; load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    cols = ["data", "d", "learner", "rounds/s", "error (0.2,0.2)", "bytes/round", "% of copy bandwidth", "x Banditron",
            "x VW"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c, "")
            if isinstance(v, float):
                v = f"{v:,.0f}" if c in ("rounds/s", "bytes/round", "x VW") and v >= 10 else f"{v:.3g}"
            cells.append(str(v))
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
