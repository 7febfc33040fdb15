"""Throughput of the AM bandit learners: compiled whole-stream loop vs the obvious NumPy per-round loop.

Measured in one run (so the ratios share the machine's load):

* rounds/s of Banditron and RCNBF, compiled (``nolo.learners.bandit.run_stream``) vs a plain
  NumPy per-round loop, on MNIST (d=784, K=10; the real test set when the data directory has it,
  else random data of that shape, said on stderr), SynSep (d=400, K=9: dense float64, dense float32,
  CSR), USPS (d=256, K=10; likewise random data of its shape when absent) and digits (d=64, K=10),
  the last two also in float32;
* SOBA's time per round relative to Banditron's (target: within 3x);
* RCINE with NREst refits every 50,000 rounds vs RCNBF over a 10^6-round MNIST run (target:
  >= 30 % of RCNBF's throughput), and the share of RCINE's time spent in NREst;
* optionally Vowpal Wabbit's ``--cbify`` on the same stream (``pip install vowpalwabbit``; skipped
  when absent), learning pass timed alone, features named ``f<j>`` (with bare integer names its
  default cbify does not learn), with its progressive error beside ours.

Usage: ``python benchmarks/bench_am_throughput.py [--rounds 1000000] [--repeats 3] [--quick] [--data-dir DIR]
[--markdown FILE]``.  The data directory is ``--data-dir``, else ``$NOLO_DATA_DIR``, else ``~/.cache/nolo/data``.
Each compiled figure is the best of ``--repeats`` identical runs (the machine is shared).  Prints a markdown table;
``--markdown FILE`` also writes the figures as Markdown tables stamped with the version, the machine, its load and
the command (``benchmarks/_markdown.py``): docs/benchmarks-am.md includes ``docs/_generated/bench_am_throughput.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp

from nolo.learners.bandit import RCINE, RCNBF, SOBA, Banditron, run_stream
from nolo.learners.bandit.simulator import AUTO_CSR_DENSITY


def numpy_loop(X, y, T, gamma, rho0, rho1, seed, correct=True):
    """The obvious per-round Python/NumPy implementation of Banditron (correct=False) / RCNBF (correct=True)."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    K = int(y.max()) + 1
    W = np.zeros((K, d))
    beta = 1.0 - rho0 - rho1
    mistakes = 0
    t0 = time.perf_counter()
    for _ in range(T):
        i = rng.integers(n)
        x = X[i]
        yhat = int(np.argmax(W @ x))
        P = np.full(K, gamma / K)
        P[yhat] += 1.0 - gamma
        played = int(rng.choice(K, p=P))
        truth = played == y[i]
        mistakes += not truth
        u = rng.random()
        fb = (u >= rho1) if truth else (u < rho0)
        h = (fb - rho0) / beta if correct else float(fb)
        W[played] += x * (h / P[played])
        W[yhat] -= x
    return T / (time.perf_counter() - t0), mistakes / T


REPEATS = 3


def compiled(cls, X, y, T, seed=0, representation="auto", **kw):
    """Best rounds/s of REPEATS identical runs (the machine is shared), final error, last result."""
    K = int(y.max()) + 1
    for rep in ("dense", "csr"):  # compile / load the cache outside the timing
        run_stream(cls(n_classes=K, seed=seed, **kw), X[:50], y[:50], 200, representation=rep)
    best = 0.0
    for _ in range(REPEATS):
        m = cls(n_classes=K, seed=seed, **kw)
        r = run_stream(m, X, y, T, kw.get("rho0", 0.0), kw.get("rho1", 0.0), seed=seed + 1, checkpoints=[T],
                       representation=representation)
        best = max(best, r.rounds_per_second)
    return best, float(r.error_rate[-1]), r


def _absent(name: str, data_dir) -> None:
    from nolo.datasets import resolve_data_dir

    print(f"{name} not found in {resolve_data_dir(data_dir).describe()}: random data of its shape instead",
          file=sys.stderr)


def datasets(quick: bool, data_dir=None):
    from nolo.datasets import load_dataset

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out["MNIST d=784"] = load_dataset("mnist", data_dir=data_dir)
        except FileNotFoundError:
            _absent("MNIST", data_dir)
            rng = np.random.default_rng(0)
            X = rng.random((10_000, 784))
            out["MNIST-like d=784 (random)"] = (X / np.linalg.norm(X, axis=1, keepdims=True), rng.integers(10, size=10_000))
        Xs, ys = load_dataset("synsep", normalize=None, n_samples=20_000 if quick else 100_000, seed=2008)
        out["SynSep d=400 f64"] = (Xs, ys)
        out["SynSep d=400 f32"] = (Xs.astype(np.float32), ys)
        out["SynSep d=400 CSR"] = (sp.csr_matrix(Xs), ys)
        try:
            out["USPS d=256"] = load_dataset("usps", data_dir=data_dir)
        except FileNotFoundError:
            _absent("USPS", data_dir)
            rng = np.random.default_rng(1)
            out["USPS-like d=256 (random)"] = (rng.random((9_298, 256)), rng.integers(10, size=9_298))
        name = next(k for k in out if k.startswith("USPS"))
        out[name + " f32"] = (out[name][0].astype(np.float32), out[name][1])
        out["digits d=64"] = load_dataset("digits")
        out["digits d=64 f32"] = (out["digits d=64"][0].astype(np.float32), out["digits d=64"][1])
    return out


def vw_cbify(X, y, T, K, rho0, rho1, seed=0):
    """Vowpal Wabbit --cbify K --epsilon 0.05 over the same kind of stream (with-replacement draws, noise-free: cbify derives its costs from the labels)."""
    try:
        import vowpalwabbit
    except ImportError:
        return None
    rng = np.random.default_rng(seed)
    idx = rng.integers(X.shape[0], size=T)
    Xd = X.toarray() if sp.issparse(X) else X
    with tempfile.NamedTemporaryFile("w", suffix=".vw", delete=False) as fh:
        path = fh.name
        for i in idx:
            nz = np.flatnonzero(Xd[i])
            fh.write(f"{int(y[i]) + 1} | " + " ".join(f"f{j}:{Xd[i, j]:.6g}" for j in nz) + "\n")
    try:
        t0 = time.perf_counter()  # the learning pass over the file runs inside the Workspace constructor
        ws = vowpalwabbit.Workspace(f"--cbify {K} --epsilon 0.05 -d {path} --quiet --random_seed {seed}")
        secs = time.perf_counter() - t0
        err = float(ws.get_sum_loss() / max(ws.get_weighted_examples(), 1))
        ws.finish()
    finally:
        os.unlink(path)
    return T / secs, err


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1_000_000, help="rounds per compiled run")
    ap.add_argument("--numpy-rounds", type=int, default=20_000, help="rounds of the NumPy per-round loop")
    ap.add_argument("--quick", action="store_true", help="10^5 compiled rounds, 5,000 NumPy rounds, RCINE over 2x10^5")
    ap.add_argument("--repeats", type=int, default=REPEATS, help="compiled runs per figure; the best is reported")
    ap.add_argument("--data-dir", default=None,
                    help="where MNIST and USPS are read (default: $NOLO_DATA_DIR, else ~/.cache/nolo/data)")
    ap.add_argument("--compiled-only", action="store_true",
                    help="only the compiled Banditron/RCNBF table (no NumPy loop, SOBA, RCINE, VW): for before/after "
                         "runs of two source trees, e.g. PYTHONPATH=/tmp/before/src python ... --compiled-only")
    ap.add_argument("--markdown", metavar="FILE", help="also write the figures as stamped Markdown tables")
    args = ap.parse_args(argv)
    if args.markdown:
        from _markdown import start

        start()
    globals()["REPEATS"] = max(1, args.repeats)
    T = 100_000 if args.quick else args.rounds
    Tn = 5_000 if args.quick else args.numpy_rounds
    gamma, rho = 0.05, (0.0, 0.0)
    title = (f"AM throughput (rounds/s), gamma = epsilon = {gamma}, no noise, compiled T = {T:,} (best of {REPEATS}), "
             f"NumPy loop T = {Tn:,}")
    header = ["data", "learner", "compiled, dense loop",
              f"compiled, auto (CSR loop if <= {AUTO_CSR_DENSITY:.0%} non-zeros)", "NumPy loop", "auto / NumPy",
              "final error"]
    print(f"# {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|---|---|---|---|---|---|---|")
    rows, notes = [], []
    data = datasets(args.quick, args.data_dir)
    soba_ratio = {}
    for name, (X, y) in data.items():
        dtype = "float32" if "f32" in name else "float64"
        density = (X.nnz if sp.issparse(X) else np.count_nonzero(X)) / (X.shape[0] * X.shape[1])
        for cls, correct in ((Banditron, False), (RCNBF, True)):
            dense = "" if sp.issparse(X) else f"{compiled(cls, X, y, T, gamma=gamma, dtype=dtype, representation='dense')[0]:,.0f}"
            rps, err, _ = compiled(cls, X, y, T, gamma=gamma, dtype=dtype)
            loop = "CSR" if sp.issparse(X) or density <= AUTO_CSR_DENSITY else "dense"
            if sp.issparse(X) or "f32" in name or args.compiled_only:
                ratio, nps = "", ""
            else:
                nps, _ = numpy_loop(X, y, Tn, gamma, *rho, seed=0, correct=correct)
                ratio = f"{rps / nps:.0f}x"
                nps = f"{nps:,.0f}"
            rows.append([f"{name} ({density:.0%} non-zero)", cls.__name__, dense, f"{rps:,.0f} ({loop})", nps, ratio,
                         f"{err:.3f}"])
            print("| " + " | ".join(rows[-1]) + " |")
        if "f32" not in name and not sp.issparse(X) and not args.compiled_only:
            b, _, _ = compiled(Banditron, X, y, T, gamma=gamma)
            s, err, _ = compiled(SOBA, X, y, T, gamma=gamma)
            soba_ratio[name] = b / s
    if args.compiled_only:
        _write(args.markdown, header, rows, notes, title)
        return
    print("\n| data | SOBA time per round / Banditron's |\n|---|---|")
    for name, r in soba_ratio.items():
        print(f"| {name} | {r:.2f} |")
    soba = [[name, f"{r:.2f}"] for name, r in soba_ratio.items()]

    # RCINE vs RCNBF on MNIST, refits every 50,000 rounds
    name = next(k for k in data if k.startswith("MNIST"))
    X, y = data[name]
    TR = 200_000 if args.quick else 1_000_000
    m = RCINE(n_classes=10, gamma=gamma, refit_every=50_000, seed=0)  # default NREst and reservoir
    run_stream(RCINE(n_classes=10, gamma=gamma, refit_every=100, reservoir_size=50, seed=0), X, y, 300)  # imports
    r_ine = run_stream(m, X, y, TR, 0.2, 0.2, seed=1, checkpoints=[TR])
    r_nbf = run_stream(RCNBF(n_classes=10, gamma=gamma, rho0=0.2, rho1=0.2, seed=0), X, y, TR, 0.2, 0.2, seed=1,
                       checkpoints=[TR])
    share = r_ine.extra["nrest_seconds"] / r_ine.seconds
    rcine = (f"RCINE vs RCNBF, {name}, rho = (0.2, 0.2), {TR:,} rounds, NREst every 50,000 rounds (RCINE's defaults): "
             f"RCNBF {r_nbf.rounds_per_second:,.0f} rounds/s, RCINE {r_ine.rounds_per_second:,.0f} rounds/s = "
             f"**{r_ine.rounds_per_second / r_nbf.rounds_per_second:.0%} of RCNBF** (target >= 30 %), NREst "
             f"{share:.0%} of RCINE's time; final played-label errors RCINE {r_ine.error_rate[-1]:.3f}, RCNBF "
             f"{r_nbf.error_rate[-1]:.3f}; last estimate {np.round(m.estimates_[-1], 3).tolist()} for the true [0.2, 0.2].")
    print(f"\nRCINE vs RCNBF, {name}, rho = (0.2, 0.2), {TR:,} rounds, NREst every 50,000 rounds "
          f"(RCINE defaults: NREst MLP (32,), 5 epochs then 2 per warm refit, 2,000-round reservoir):")
    print(f"  RCNBF {r_nbf.rounds_per_second:,.0f} rounds/s; RCINE {r_ine.rounds_per_second:,.0f} rounds/s "
          f"= {r_ine.rounds_per_second / r_nbf.rounds_per_second:.0%} of RCNBF; NREst share of RCINE's time {share:.0%}; "
          f"final errors RCINE {r_ine.error_rate[-1]:.3f}, RCNBF {r_nbf.error_rate[-1]:.3f}; "
          f"last estimate {np.round(m.estimates_[-1], 3).tolist()}")

    # Vowpal Wabbit (optional)
    name = "SynSep d=400 f64"
    X, y = data[name]
    for rho in ((0.0, 0.0),):
        res = vw_cbify(X, y, min(T, 100_000), 9, *rho)
        if res is None:
            vw = "Vowpal Wabbit: not installed (pip install vowpalwabbit) -- skipped"
            print("\n" + vw)
            break
        ours, err, _ = compiled(Banditron, X, y, min(T, 100_000), gamma=gamma)
        vw = (f"Vowpal Wabbit --cbify 9 --epsilon 0.05 on {name}, {min(T, 100_000):,} rounds: {res[0]:,.0f} rounds/s "
              f"(learning pass alone), progressive error {res[1]:.3f}; Banditron compiled {ours:,.0f} rounds/s, error {err:.3f}")
        print("\n" + vw)
    if args.markdown:
        from _markdown import table

        notes += ["SOBA's time per round relative to Banditron's (target: within 3x), same run:",
                  table(["data", "SOBA time per round / Banditron's"], soba, "lr"), rcine, vw]
        _write(args.markdown, header, rows, notes, title)


def _write(path, header, rows, notes, title):
    if path:
        from _markdown import package_versions, write_markdown

        path = write_markdown(path, header, rows, notes, align="llrrrrr", intro=[title + ", one run:"],
                              versions=package_versions("numpy", "numba", "scikit-learn", "vowpalwabbit"))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
