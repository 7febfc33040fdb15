"""Interleaved A/B of the AM stream loops of several git revisions, in one process.

The machine is shared and its speed drifts by 10-30 % between minutes, so comparing two runs of
``bench_am_throughput.py`` taken minutes apart cannot resolve a 5 % change.  This script extracts the
whole ``src/nolo/learners/bandit`` package of each revision (``git archive``) into a temporary package
of its own name (its imports of ``nolo.learners.bandit`` rewritten to it; its own numba cache), warms
each up, and then calls each revision's compiled stream loop in turn, repeat after repeat, on the same
data and seeds -- the variants share the machine's state -- and prints the best and median rounds/s per
revision, each one's ratio to the first, and the median of the per-repeat ratios (pairs run back to back).

Two layouts of the package are understood: the bandit core's ``_stream.run_rounds`` with the algorithm's
state record, and, for revisions from before the bandit core, the ``_kernels.stream_csr`` loop with an
integer algorithm code.

Usage (``HEAD``: the last commit; ``.``: the working tree; any git revision works)::

    python benchmarks/bench_am_kernel_ab.py HEAD .                       # digits, Banditron, 10^7 rounds
    python benchmarks/bench_am_kernel_ab.py HEAD . --data mnist --rounds 1000000 --algo soba

``--data`` other than digits and synsep reads the files from ``$NOLO_DATA_DIR`` (else ``~/.cache/nolo/data``)
and stops with an error naming the missing files when they are absent.

Same seeds for every revision: the mistake counts printed first agree unless a revision changes the
arithmetic (a change meant to be bit-identical must leave them equal).
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
PACKAGE = "src/nolo/learners/bandit"
ALGOS = ("banditron", "soba")


def load_revision(rev: str, workdir: Path):
    """The bandit package of ``rev`` (``"."``: the working tree; a directory: a copy of the package) as a fresh
    package ``bandit_<rev>``."""
    import io
    import tarfile

    name = "bandit_" + ("worktree" if rev == "." else "".join(c if c.isalnum() else "_" for c in rev))
    dest = workdir / name
    dest.mkdir()
    if rev == "." or Path(rev).is_dir():  # the working tree, or a directory holding a copy of the package
        files = {f.name: f.read_text() for f in (REPO / PACKAGE if rev == "." else Path(rev)).glob("*.py")}
    else:
        tar = subprocess.run(["git", "-C", str(REPO), "archive", rev, PACKAGE], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            files = {Path(m.name).name: tf.extractfile(m).read().decode() for m in tf.getmembers()
                     if m.isfile() and m.name.endswith(".py") and Path(m.name).parent.as_posix() == PACKAGE}
    for fname, text in files.items():
        (dest / fname).write_text(text.replace("nolo.learners.bandit", name))
    if str(workdir) not in sys.path:
        sys.path.insert(0, str(workdir))
    return importlib.import_module(name)


def stream_call(pkg, algo: str, X, y, T: int):
    """A function running one compiled stream of ``T`` rounds of ``pkg``'s loop (exploration 0.05, no noise)."""
    from nolo.learners.bandit._pcg64 import pcg64_state
    from nolo.noise.feedback_laws import ClassFlips

    K, d = int(y.max()) + 1, X.shape[1]
    out_p, out_g = np.zeros(1, np.int64), np.zeros(1, np.int64)
    nolog = np.zeros(0, np.int64)
    perm, pos = np.arange(X.shape[0]), np.zeros(1, np.int64)
    if hasattr(pkg, "_kernels"):  # revisions from before the bandit core: integer algorithm codes
        kern = pkg._kernels
        code = {"banditron": kern.EXP_H, "soba": kern.SOBA}[algo]

        def call():
            Wt = np.zeros((K, d), dtype=X.dtype, order="F").T
            At = np.ones((K, d), dtype=X.dtype, order="F").T if algo == "soba" else np.zeros((1, 1), X.dtype)
            env, lrn = pcg64_state(np.random.default_rng(1)), pcg64_state(np.random.default_rng(0))
            counters = np.zeros(4, np.int64)
            kern.stream_csr(code, Wt, At, np.zeros(1), X.indptr, X.indices, X.data, y, T, 0, perm, pos, env, lrn,
                            0.05, 0.0, 1.0, 0.0, 0.0, np.array([T]), out_p, out_g, counters, nolog, nolog, nolog)
            return int(out_p[0])
        return call
    st = pkg._stream
    rows = st.csr_rows(X)

    def call():
        Wt = np.zeros((K, d), dtype=X.dtype, order="F").T
        if algo == "soba":
            rec = pkg.soba.SOBAState(0.05, np.ones((K, d), dtype=X.dtype, order="F").T, np.zeros(1))
        else:
            rec = pkg.rcnbf.exp_h_record(0.05, 0.0, 1.0, K)
        law = (0.0, 0.0) if "rho0" in st.EnvState._fields else (ClassFlips(0.0, 0.0),)  # two rates / a law record
        env = st.EnvState(0, perm, pos, pcg64_state(np.random.default_rng(1)), *law)
        recorder = st.Recorder(np.array([T]), out_p, out_g, np.zeros(4, np.int64), nolog, nolog, nolog)
        st.run_rounds(rec, Wt, rows, y, T, env, pcg64_state(np.random.default_rng(0)), recorder)
        return int(out_p[0])
    return call


def load_data(name: str, dtype):
    import scipy.sparse as sp

    from nolo.datasets import load_dataset
    from nolo.learners.bandit.simulator import canonical_csr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "synsep":
            X, y = load_dataset("synsep", normalize=None, n_samples=100_000, seed=2008)[:2]
        else:
            X, y = load_dataset(name)[:2]
    X = canonical_csr(sp.csr_matrix(np.asarray(X, dtype=dtype)))
    return X, np.asarray(y, dtype=np.int64)


def run(call, T: int):
    """Rounds/s and played mistakes of one call."""
    t0 = time.perf_counter()
    mistakes = call()
    return T / (time.perf_counter() - t0), mistakes


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("revs", nargs="+", help="git revisions to compare (the first is the baseline); '.' is the working tree")
    ap.add_argument("--data", default="digits", help="digits, usps, mnist or synsep (default digits)")
    ap.add_argument("--rounds", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    ap.add_argument("--algo", choices=ALGOS, default="banditron")
    args = ap.parse_args(argv)
    X, y = load_data(args.data, np.dtype(args.dtype))
    with tempfile.TemporaryDirectory() as tmp:
        pkgs = [load_revision(r, Path(tmp)) for r in args.revs]
        warm = min(args.rounds, 200_000)
        for r, pkg in zip(args.revs, pkgs):  # compile outside the timing
            t0 = time.perf_counter()
            _, mistakes = run(stream_call(pkg, args.algo, X, y, warm), warm)
            print(f"{r:>12}: compiled in {time.perf_counter() - t0:.1f} s (cold cache); "
                  f"played mistakes in the first {warm:,} rounds: {mistakes:,}")
        calls = [stream_call(pkg, args.algo, X, y, args.rounds) for pkg in pkgs]
        rates = {r: [] for r in args.revs}
        for rep in range(args.repeats):
            order = list(zip(args.revs, calls))
            for r, c in (order if rep % 2 == 0 else order[::-1]):  # alternate who goes first
                rates[r].append(run(c, args.rounds)[0])
    print(f"\n{args.algo}, {args.data} ({args.dtype}, CSR), {args.rounds:,} rounds, best/median of {args.repeats} "
          "interleaved runs:")
    base = max(rates[args.revs[0]])
    for r in args.revs:
        ratios = [a / b for a, b in zip(rates[r], rates[args.revs[0]])]
        print(f"{r:>12}: best {max(rates[r]):>12,.0f} rounds/s  median {statistics.median(rates[r]):>12,.0f}  "
              f"best / first's best {max(rates[r]) / base:.3f}  median of paired ratios {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
