"""Hostile model files (issue 14): truncations, bit flips, tampered headers and arrays of a saved model of every
learner class.  Each case must be rejected with PersistenceError, or load into a learner that then predicts and
learns without a crash, a non-nolo exception or a silent non-finite value.  Each class runs in a subprocess
(tests/fuzz/hostile_files.py) so that a segfault fails its test instead of killing the suite."""

import collections
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nolo.checks import registered_learners

HERE = Path(__file__).parent
SRC = HERE.parent.parent / "src"

#: known failures in files other helpers own (strict: remove the marker with the fix)
KNOWN: dict[str, str] = {}


def run_corpus(name: str, n_bitflips: int = 30) -> tuple[int, collections.Counter, list[str], str | None]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, str(HERE / "hostile_files.py"), name, str(n_bitflips)], capture_output=True,
                         text=True, timeout=600, env=env)
    counts: collections.Counter = collections.Counter()
    failures, last = [], None
    for line in res.stdout.splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if "try" in d:
            last = d["try"]
            continue
        last = None
        outcome = d["outcome"]
        counts[outcome.split(":")[0]] += 1
        if outcome.startswith("FAIL"):
            failures.append(f"{d['case']}: {outcome}")
    return res.returncode, counts, failures, last if res.returncode else None


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [pytest.param(c.__name__, marks=[pytest.mark.xfail(strict=True, reason=KNOWN[c.__name__])] if c.__name__ in KNOWN
                  else []) for c in registered_learners()],
)
def test_hostile_files(name):
    rc, counts, failures, crashed_on = run_corpus(name)
    census = HERE / "census-hostile.json"
    record = json.loads(census.read_text()) if census.exists() else {}
    record[name] = {"exit": rc, **counts, "crashed_on": crashed_on}
    census.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    assert rc == 0, f"the process died (exit {rc}) on case {crashed_on!r}"
    assert not failures, "\n".join(failures[:20])
    assert counts["rejected"] >= 100  # the corpus really ran (and most tamperings are refused)
