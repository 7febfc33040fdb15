"""Interleaved A/B of the AM stream kernels of several git revisions, in one process.

The machine is shared and its speed drifts by 10-30 % between minutes, so comparing two runs of
``bench_am_throughput.py`` taken minutes apart cannot resolve a 5 % change.  This script extracts
``src/nolo/learners/bandit/_kernels.py`` of each revision (``git show REV:PATH``) into a temporary
module, warms each up, and then calls each revision's compiled ``stream_csr`` in turn, repeat after
repeat, on the same data and seeds -- the variants share the machine's state -- and prints the best
and median rounds/s per revision and each one's ratio to the first.

Usage::

    python benchmarks/bench_am_kernel_ab.py ba8458b HEAD                 # digits, Banditron, 10^7 rounds
    python benchmarks/bench_am_kernel_ab.py HEAD~1 HEAD --data usps --rounds 3000000 --algo soba
    python benchmarks/bench_am_kernel_ab.py HEAD . --data mnist --rounds 1000000 --algo soba   # uncommitted work

The stream-loop signature is the same from ba8458b on, except that SOBA's theta array was dropped
after c15eaeb; the script passes whichever the revision takes.  Revisions with the inline PCG64 path get the generators' state arrays,
older ones numpy Generators (the draws are the same).  Same seeds for every revision: the mistake
counts printed first agree unless a revision changes the arithmetic of the scores (argmax ties).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
KERNELS = "src/nolo/learners/bandit/_kernels.py"
ALGOS = {"banditron": 1, "soba": 3}


def load_revision(rev: str, workdir: Path):
    """The _kernels module of ``rev`` as a fresh module (its own numba cache directory)."""
    if rev == ".":  # the working tree's file, uncommitted changes included
        src = (REPO / KERNELS).read_text()
    else:
        src = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{KERNELS}"], check=True, capture_output=True,
                             text=True).stdout
    name = "am_kernels_" + ("worktree" if rev == "." else "".join(c if c.isalnum() else "_" for c in rev))
    path = workdir / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_data(name: str, dtype):
    import scipy.sparse as sp

    from nolo.datasets import load_dataset
    from nolo.learners.bandit.environment import canonical_csr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "synsep":
            X, y = load_dataset("synsep", normalize=None, n_samples=100_000, seed=2008)[:2]
        else:
            X, y = load_dataset(name)[:2]
    X = canonical_csr(sp.csr_matrix(np.asarray(X, dtype=dtype)))
    return X, np.asarray(y, dtype=np.int64)


def run(mod, X, y, T: int, algo: int):
    """Rounds/s and played mistakes of one compiled stream of ``T`` rounds (exploration 0.05, no noise)."""
    from nolo.learners.bandit._pcg64 import pcg64_state

    K, d = int(y.max()) + 1, X.shape[1]
    Wt = np.zeros((K, d), dtype=X.dtype, order="F").T
    dummy = np.zeros((1, 1), dtype=X.dtype)
    At = np.ones((K, d), dtype=X.dtype, order="F").T if algo == ALGOS["soba"] else dummy
    # revisions before SOBA dropped theta from its state (c15eaeb and older) take a theta array before a
    state = (np.zeros((K, d), dtype=X.dtype, order="F").T if algo == ALGOS["soba"] else dummy, At) \
        if "Tht" in mod.stream_csr.py_func.__code__.co_varnames else (At,)
    env, lrn = np.random.default_rng(1), np.random.default_rng(0)
    if hasattr(mod, "uniform"):  # the revision steps PCG64 inline
        env, lrn = pcg64_state(env), pcg64_state(lrn)
    out_p, out_g, counters = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(4, np.int64)
    nolog = np.zeros(0, np.int64)
    t0 = time.perf_counter()
    mod.stream_csr(algo, Wt, *state, np.zeros(1), X.indptr, X.indices, X.data, y, T, 0, np.arange(X.shape[0]),
                   np.zeros(1, np.int64), env, lrn, 0.05, 0.0, 1.0, 0.0, 0.0, np.array([T]), out_p, out_g, counters,
                   nolog, nolog, nolog)
    return T / (time.perf_counter() - t0), int(out_p[0])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("revs", nargs="+", help="git revisions to compare (the first is the baseline); '.' is the working tree")
    ap.add_argument("--data", default="digits", help="digits, usps, mnist or synsep (default digits)")
    ap.add_argument("--rounds", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    ap.add_argument("--algo", choices=tuple(ALGOS), default="banditron")
    args = ap.parse_args(argv)
    X, y = load_data(args.data, np.dtype(args.dtype))
    algo = ALGOS[args.algo]
    with tempfile.TemporaryDirectory() as tmp:
        mods = [load_revision(r, Path(tmp)) for r in args.revs]
        for r, m in zip(args.revs, mods):  # compile outside the timing
            _, mistakes = run(m, X, y, min(args.rounds, 200_000), algo)
            print(f"{r:>12}: compiled; played mistakes in the first {min(args.rounds, 200_000):,} rounds: {mistakes:,}")
        rates = {r: [] for r in args.revs}
        for _ in range(args.repeats):
            for r, m in zip(args.revs, mods):
                rates[r].append(run(m, X, y, args.rounds, algo)[0])
    print(f"\n{args.algo}, {args.data} ({args.dtype}, CSR), {args.rounds:,} rounds, best/median of {args.repeats} "
          "interleaved runs:")
    base = max(rates[args.revs[0]])
    for r in args.revs:
        print(f"{r:>12}: best {max(rates[r]):>12,.0f} rounds/s  median {statistics.median(rates[r]):>12,.0f}  "
              f"best / first's best {max(rates[r]) / base:.2f}")


if __name__ == "__main__":
    main()
