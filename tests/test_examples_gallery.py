"""The examples gallery: every script in examples/ runs as a user would run it and prints what it found.

Each script runs in its own process (a first run compiles numba's loops; later runs load them from the cache) with
the checkout's ``src`` first on the path, and any figure goes to a temporary directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

#: script -> lines its output must hold (regular expressions, searched line by line)
EXPECTED = {
    "bandit_feedback_digits.py": [r"^default_learner \(rates unknown\) +error rate .*: 0\.[01]\d\d$",
                                  r"^Banditron +error rate .*: 0\.\d+$", r"^figure: .*bandit_feedback_digits\.png$"],
    "offpolicy_flip_rates.py": [r"^estimated rates: rho0 = 0\.(0[5-9]|1[0-5])\d, rho1 = 0\.(1[5-9]|2[0-5])\d",
                                r"^snips flip-corrected error estimate: ", r"^snips uncorrected"],
    "eiv_replicates.py": [r"^CorrectedLeastSquaresRegressor: \[", r"^intercept +3\.0",
                          r"^  x0: 95 % interval .* covers 1\.0: True$"],
    "dict_contexts_stream.py": [r"^share of right offers, first 500 rounds: ",
                                r"^held-out accuracy of the greedy offer: (0\.9\d\d|1\.000)$"],
    "online_to_batch_ogd.py": [r"^test accuracy, average of the iterates: 0\.9\d\d$", r"^averaged regret bound"],
}


def test_every_script_is_tested_and_shown_in_the_docs():
    scripts = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert scripts == sorted(EXPECTED)
    page = (REPO / "docs" / "examples.md").read_text()
    for name in scripts:
        assert f"../examples/{name}" in page, f"docs/examples.md does not include {name}"


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_example_runs_and_prints_its_finding(script, tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg", "NOLO_EXAMPLES_OUT": str(tmp_path),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, str(EXAMPLES / script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=540)  # within the suite's per-test timeout (600 s)
    assert proc.returncode == 0, f"{script} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    for pattern in EXPECTED[script]:
        assert re.search(pattern, proc.stdout, flags=re.M), f"{script}: no line matches {pattern!r} in\n{proc.stdout}"
    if script == "bandit_feedback_digits.py":
        assert (tmp_path / "bandit_feedback_digits.png").stat().st_size > 0
