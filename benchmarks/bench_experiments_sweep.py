"""Benchmark: a sweep of 8 identical runs (same spec and size, seeds 0..7) on --jobs 2 vs --jobs 1.

Prints both wall times and the ratio jobs2 / jobs1 (target on 2 cores: < 0.65).  Each measurement
uses a fresh output directory, so nothing is skipped; the jobs-2 time includes starting the
process pool.  Run:  python benchmarks/bench_experiments_sweep.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from nolo.papers.demo import demo_spec
from nolo.experiments.sweep import run_sweep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=50000)
    args = ap.parse_args()
    spec = demo_spec(rounds=args.rounds, record_every=100)
    spec = spec.model_copy(update={"learners": spec.learners[:1], "seeds": list(range(8))})
    times = {}
    load_before = os.getloadavg()[0]
    for jobs in (1, 2):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            df = run_sweep(spec, os.path.join(d, "runs"), jobs=jobs, show_progress=False)
            times[jobs] = time.perf_counter() - t0
            assert df["run_id"].nunique() == 8
    print(f"8 runs x {args.rounds} rounds: jobs=1 {times[1]:.2f} s, jobs=2 {times[2]:.2f} s, "
          f"ratio jobs2/jobs1 = {times[2] / times[1]:.3f} (target < 0.65; cores: {os.cpu_count()}; "
          f"1-min load average before/after: {load_before:.1f}/{os.getloadavg()[0]:.1f} -- other processes "
          f"competing for the cores inflate the ratio)")


if __name__ == "__main__":
    main()
