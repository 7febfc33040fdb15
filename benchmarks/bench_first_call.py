"""The first call: how long a new process takes to give its first answer, with numba's cache empty (cold: every
compiled loop the call needs is compiled) and then filled by that first process (warm: loaded from the cache).

Each case runs in a fresh Python process whose ``NUMBA_CACHE_DIR`` is a new temporary directory (cold), then in a
second process on the same directory (warm).  Times include starting Python and importing nolo.

* ``act+learn``: ``default_learner(10)`` on digits, 200 rounds of ``act`` then ``learn``.
* ``run_stream``: ``default_learner(10, 0.1, 0.1)`` on digits, 2,000 rounds in the compiled loop.
* ``FastCB run_stream``: the README's FastCB example shape (digits, 2,000 rounds).
* ``README 1``, ``README 2``, ...: each ```python block of README.md, in order, run as it stands (read from the file
  at run time, so the figures follow the README).
* ``FastCB every entry`` / ``AutoCB every entry``: the contract check ``stream_equals_rounds`` on each of the
  learner's test parameter sets -- the stream loop, per-round ``act`` (with its probability) and ``learn``, and
  ``learn_many``, for every state record the parameters select: what the test suite compiles per learner (not in
  the default cases: minutes cold).

Usage::

    python benchmarks/bench_first_call.py [--cases act+learn,run_stream] [--cases "FastCB every entry"] [--cases "README 1"] [--markdown FILE]

``--markdown FILE`` also writes the table stamped with the version, the machine, its load and the command
(``benchmarks/_markdown.py``); docs/performance.md includes ``docs/_generated/bench_first_call.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nolo

PRELUDE = """
import numpy as np
from sklearn.datasets import load_digits
X, y = load_digits(return_X_y=True)
X = X / np.linalg.norm(X, axis=1, keepdims=True)
"""

CASES = {
    "act+learn": PRELUDE + """
from nolo.learners.bandit import default_learner
m = default_learner(10, seed=0)
g = np.random.default_rng(0)
for i in g.integers(len(X), size=200):
    a = m.act(X[i])
    m.learn(X[i], a, int(a == y[i]))
""",
    "run_stream": PRELUDE + """
from nolo.learners.bandit import default_learner, run_stream
run_stream(default_learner(10, 0.1, 0.1, seed=0), X, y, 2000, 0.1, 0.1, seed=1)
""",
    "FastCB run_stream": PRELUDE + """
from nolo.learners.bandit import FastCB, run_stream
run_stream(FastCB(n_classes=10, rho0=0.1, rho1=0.1, seed=0), X, y, 2000, 0.1, 0.1, seed=1)
""",
}

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_examples() -> list[str]:
    """The ```python blocks of README.md, in order (none when the file is absent: an installed copy)."""
    if not README.is_file():
        return []
    return re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.M | re.S)


README_CASES = {f"README {i}": code for i, code in enumerate(readme_examples(), 1)}
CASES.update(README_CASES)

#: each case compiles every compiled entry point of the learner's test parameter sets
EVERY_ENTRY = {f"{name} every entry": f"""
from nolo.checks import check_learner
from nolo.learners.bandit import {name}
check_learner({name}, ["stream_equals_rounds"])
""" for name in ("FastCB", "AutoCB")}
DEFAULT_CASES = list(CASES)
CASES.update(EVERY_ENTRY)

#: what each case does, for the Markdown table
DESCRIPTIONS = {
    "act+learn": "`default_learner(10)`, 200 rounds of `act` + `learn` on digits",
    "run_stream": "`default_learner(10, 0.1, 0.1)` in `run_stream`, 2,000 rounds",
    "FastCB run_stream": "`FastCB` in `run_stream`, 2,000 rounds",
    **{name: f"README.md's Python example {name.split()[1]}, as it stands" for name in README_CASES},
    **{name: f"`{name.split()[0]} every entry`: stream loop, `act` with its probability, `learn`, `learn_many`, "
             "every state record of the test parameter sets" for name in EVERY_ENTRY},
}


def timed(code: str, cache_dir: str) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - t0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES), help="comma-separated, of: " + ", ".join(CASES))
    ap.add_argument("--markdown", metavar="FILE", help="also write the table as a stamped Markdown file")
    args = ap.parse_args(argv)
    names = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in names if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; choose from {list(CASES)}")
    if args.markdown:
        from _markdown import start

        start()
    print(f"nolo {nolo.__version__}, Python {platform.python_version()}, {os.cpu_count()} cores, "
          f"1-min load {os.getloadavg()[0]:.1f}")
    print(f"{'case':20s} {'cold s':>8s} {'warm s':>8s}")
    rows = []
    for name in names:
        with tempfile.TemporaryDirectory() as d:
            cold = timed(CASES[name], d)
            warm = timed(CASES[name], d)
        print(f"{name:20s} {cold:8.1f} {warm:8.1f}")
        rows.append([DESCRIPTIONS[name], f"{cold:.1f}", f"{warm:.1f}"])
    if args.markdown:
        from _markdown import package_versions, write_markdown

        path = write_markdown(args.markdown, ["case", "cold (s)", "warm (s)"], rows, align="lrr",
                              versions=package_versions("numpy", "numba", "llvmlite"))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
