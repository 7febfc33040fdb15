"""Processes starting together on a cold cache: the compile of a loop they all need, done once or by each.

A sweep's workers (``nolo reproduce -j N``) and the test suite's workers start on the same loops at the same time.
``nolo._compiling.compile_once`` has the first process compile under a lock file while the others wait and then load
numba's cache; ``NOLO_COMPILE_LOCK=0`` turns that off (each process compiles, as numba alone does).  This runs
``--procs`` fresh processes at once, each playing FastCB's stream loop on digits (2,000 rounds), on an empty numba
cache, with the lock and without it, and prints each case's wall time and the CPU time of all its processes, and how
many processes loaded the loop instead of compiling it.  Usage::

    python benchmarks/bench_compile_once.py [--procs 2]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

import nolo

CODE = (
    "import numpy as np; from sklearn.datasets import load_digits; from nolo.learners.bandit import FastCB, run_stream;"
    "from nolo.learners.bandit import _stream;"
    "X, y = load_digits(return_X_y=True); X = X / np.linalg.norm(X, axis=1, keepdims=True);"
    "m = FastCB(n_classes=10, rho0=0.1, rho1=0.1, seed=0); r = run_stream(m, X, y, 2000, 0.1, 0.1, seed=1);"
    "f = _stream._run_rounds_cached; print(sum(f.stats.cache_hits.values()), r.error_rate[-1])"
)


def case(procs: int, lock: bool) -> tuple[float, float, int, set]:
    """(wall s, CPU s of all processes, processes that loaded the loop, their final error rates)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="nolo-bench-cache-"), NOLO_COMPILE_NOTE="0",
               NOLO_COMPILE_LOCK="1" if lock else "0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    ps = [subprocess.Popen([sys.executable, "-c", CODE], env=env, stdout=subprocess.PIPE, text=True)
          for _ in range(procs)]
    outs = [p.communicate()[0].split() for p in ps]
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if any(p.returncode for p in ps):
        raise SystemExit(f"a process failed: {[p.returncode for p in ps]}")
    return wall, cpu, sum(int(o[0]) for o in outs), {o[1] for o in outs}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=2, help="processes started together")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    print(f"nolo {nolo.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, 1-min load {load0:.2f}; {args.procs} processes at once, empty numba cache")
    rows = {}
    for lock in (True, False):
        wall, cpu, loaded, errs = case(args.procs, lock)
        rows[lock] = (wall, cpu)
        print(f"{'compile once (lock)' if lock else 'each compiles (NOLO_COMPILE_LOCK=0)':38s} wall {wall:7.1f} s  "
              f"CPU {cpu:7.1f} s  loaded by {loaded} of {args.procs}  error {sorted(errs)}")
    print(f"CPU with the lock / without: {rows[True][1] / rows[False][1]:.2f}; wall: {rows[True][0] / rows[False][0]:.2f}"
          f" (1-min load at the end {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
