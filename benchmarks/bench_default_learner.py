"""Throughput of nolo's default bandit learner (AutoCB, ``default_learner``) beside Vowpal Wabbit's own driver, in one
run per data set.

For each data set (the bandit suite, and AM's digits, Iris, SynSep; USPS and MNIST with ``--data-dir``), on one
stream of ``--rounds`` rounds under flips (0.15, 0.15):

* ``nolo``: rounds/s of ``default_learner(K, 0.15, 0.15)`` in the compiled stream loop
  (:func:`nolo.learners.bandit.run_stream`), best of ``--repeats`` (compiled once before timing);
* ``VW native``: VW's own driver (``vw -d FILE --cb_explore_adf --squarecb -q sa``, run in-process through
  ``vowpalwabbit.Workspace``, which reads the file and learns in C++) on a cb_adf text file of the same rounds -- the
  contexts nolo saw, the labels it played and the flipped bits as costs, with propensity 1/K -- best of
  ``--repeats``; and the same reading VW's binary cache (``--cache_file``, written by a first pass, then timed);
* ``VW python``: VW driven one example at a time from Python (predict, draw, learn: what an interactive
  simulation needs), on the first ``--vw-python-rounds`` rounds;
* the ratios nolo / VW native, nolo / VW cache, nolo / VW python -- measured in the same run, so they share the
  machine's load (read the ratios; absolute figures move with the machine).

The native driver learns from the logged rounds (it does not choose the actions), so it is the fastest VW can
possibly go on this stream: an upper bound on its interactive speed.

Usage: ``python benchmarks/bench_default_learner.py [--rounds 100000] [--repeats 3] [--datasets a,b]
[--data-dir DIR] [--no-vw] [--markdown FILE]``.  Prints a stamp (nolo and VW versions, CPU, date, the command) and a
markdown table; ``--markdown FILE`` also writes the table stamped with the version, the machine, its load and the
command (``benchmarks/_markdown.py``): docs/performance.md includes ``docs/_generated/bench_default_learner.md``.
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
from _markdown import processor as cpu_name

RATES = (0.15, 0.15)
SUITE = ("wine", "breast-cancer", "mixed-scales", "many-classes", "rings", "moons", "imbalanced", "text", "categorical")
AM = ("digits", "iris", "synsep", "usps", "mnist")


def load(name: str, data_dir: str | None):
    """The rows vs-peers plays: the suite's raw rows, AM's unit-norm rows (None when the files are absent)."""
    from nolo.datasets import load_dataset
    from nolo.datasets.errors import DatasetNotFoundError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if name in SUITE:
                return load_dataset(name, normalize=None)
            if name == "synsep":
                return load_dataset("synsep", normalize="unit", n_samples=20_000, seed=2008)
            return load_dataset(name, normalize="unit", data_dir=data_dir)
        except DatasetNotFoundError:
            return None


def nolo_rate(X, y, T: int, repeats: int):
    from nolo.learners.bandit import default_learner, run_stream

    K = int(y.max()) + 1
    run_stream(default_learner(K, *RATES, seed=0), X, y, min(T, 3_000), *RATES, seed=1)  # compile / load the cache
    best, res = 0.0, None
    for _ in range(repeats):
        r = run_stream(default_learner(K, *RATES, seed=0), X, y, T, *RATES, seed=1, checkpoints=[T], log=True)
        if r.rounds_per_second > best:
            best, res = r.rounds_per_second, r
    return best, res


def write_adf(path: str, X, y, log, K: int) -> None:
    """The logged rounds as VW cb_adf text: a shared line of the context, one line per action (the played one with
    ``0:cost:1/K``), a blank line."""
    from nolo.papers.am import vw as V

    lines = V.feature_lines(X)
    acts = [f"|a a{k}" for k in range(K)]
    with open(path, "w") as f:
        for i, a, fb in zip(log["index"], log["played"], log["feedback"]):
            f.write("shared |s " + lines[i][2:] + "\n")
            for k in range(K):
                f.write((f"0:{1 - int(fb)}:{1.0 / K:.6g} " if k == a else "") + acts[k] + "\n")
            f.write("\n")


def vw_native(path: str, T: int, repeats: int, cache: bool) -> float:
    import vowpalwabbit

    args = f"-d {path} --cb_explore_adf --squarecb -q sa --quiet"
    if cache:
        cpath = path + ".cache"
        if os.path.exists(cpath):
            os.remove(cpath)
        vowpalwabbit.Workspace(args + f" --cache_file {cpath}").finish()  # first pass writes the cache
        args += f" --cache_file {cpath}"
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        ws = vowpalwabbit.Workspace(args)  # the driver runs the whole file here
        dt = time.perf_counter() - t0
        n = ws.get_weighted_examples()
        ws.finish()
        if n != T:
            raise RuntimeError(f"VW read {n} examples of {T}")
        best = max(best, T / dt)
    return best


def vw_python(X, y, T: int) -> float:
    from nolo.papers.am.vs_peers_vw import _vw_adf

    r = _vw_adf(X, y, T, *RATES, env_seed=1, seed=0, args="--cb_explore_adf --squarecb -q sa", checkpoints=[T])
    return T / float(r["seconds"][0])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=100_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--datasets", default=",".join(SUITE + AM))
    p.add_argument("--data-dir", default=None)
    p.add_argument("--vw-python-rounds", type=int, default=5_000)
    p.add_argument("--no-vw", action="store_true")
    p.add_argument("--markdown", metavar="FILE", help="also write the table as a stamped Markdown file")
    a = p.parse_args(argv)
    if a.markdown:
        from _markdown import start

        start()
    import nolo

    have_vw = not a.no_vw
    vw_version = "absent"
    if have_vw:
        try:
            import vowpalwabbit

            vw_version = getattr(vowpalwabbit, "__version__", "?")
        except ImportError:
            have_vw = False
    print(f"nolo {nolo.__version__}, vowpalwabbit {vw_version}, numpy {np.__version__}; {cpu_name()}, "
          f"{os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("command: python " + " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]))
    print(f"stream: {a.rounds:,} rounds, flips {RATES}; nolo and VW native best of {a.repeats}\n")
    header = ["data set", "n x d, K", "nolo rounds/s", "VW native", "VW cache", "VW python", "nolo / native",
              "nolo / cache", "nolo / python"]
    print("| " + " | ".join(header) + " |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.datasets.split(","):
            data = load(name, a.data_dir)
            if data is None:
                rows.append([name, "files absent (--data-dir)"] + [""] * 7)
                print("| " + " | ".join(rows[-1]) + " |")
                continue
            X, y = data
            if sp.issparse(X):
                X = X.tocsr()
            K = int(y.max()) + 1
            rate, res = nolo_rate(X, y, a.rounds, a.repeats)
            cells = [f"{rate:,.0f}", "", "", "", "", "", ""]
            if have_vw:
                path = os.path.join(tmp, f"{name}.txt")
                write_adf(path, X, y, res.extra["log"], K)
                nat = vw_native(path, a.rounds, a.repeats, cache=False)
                cac = vw_native(path, a.rounds, a.repeats, cache=True)
                py = vw_python(X, y, min(a.vw_python_rounds, a.rounds))
                os.remove(path)
                cells = [f"{rate:,.0f}", f"{nat:,.0f}", f"{cac:,.0f}", f"{py:,.0f}", f"{rate / nat:.1f}x",
                         f"{rate / cac:.1f}x", f"{rate / py:.0f}x"]
            rows.append([name, f"{X.shape[0]:,} x {X.shape[1]:,}, {K}", *cells])
            print("| " + " | ".join(rows[-1]) + " |", flush=True)
    if a.markdown:
        from _markdown import package_versions, write_markdown

        intro = [f"{a.rounds:,} rounds per data set under flips {RATES}; nolo and VW native best of {a.repeats}, VW "
                 f"python over {min(a.vw_python_rounds, a.rounds):,} rounds; one run:"]
        path = write_markdown(a.markdown, header, rows, align="llrrrrrrr", intro=intro,
                              versions=package_versions("numpy", "numba", "vowpalwabbit"))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
