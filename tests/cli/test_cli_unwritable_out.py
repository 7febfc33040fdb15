"""An existing output location the command cannot write to is refused before any work, in one line naming the
option (it was a raw PermissionError traceback once everything had been computed): ``nolo run``, ``nolo
reproduce`` and the library's ``reproduce``, ``nolo learn``, ``nolo plot``, ``nolo results --csv``, ``nolo data
fetch``.  (``nolo evaluate`` and ``nolo estimate-noise`` write no file.)"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import nolo.cli.data
import nolo.cli.evaluate
import nolo.cli.experiments
import nolo.cli.learn
import nolo.cli.plot
import nolo.datasets.fetch
import nolo.experiments.reproduce
import nolo.experiments.sweep
import nolo.offpolicy.file_eval
import nolo.offpolicy.learn
import nolo.offpolicy.logs
from nolo.cli import main
from nolo.exceptions import ParameterError
from nolo.papers.demo import demo_spec
from nolo.experiments.reproduce import reproduce, select_experiments

NOBODY = 65534


@contextlib.contextmanager
def unprivileged():
    """Run the block as an ordinary user.  Root writes into a mode-0555 directory all the same, so a test running
    as root drops its effective uid and gid to nobody's for the block (and takes them back after)."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.fixture
def place():
    """(a world-readable directory, a directory in it that no ordinary user may write to).  Not under tmp_path,
    whose parents only root may enter."""
    base = Path(tempfile.mkdtemp(prefix="nolo-unwritable-"))
    base.chmod(0o755)
    locked = base / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    yield base, locked
    locked.chmod(0o755)
    shutil.rmtree(base)


@pytest.fixture
def no_work(monkeypatch):
    """Every entry point of real work fails the test if reached."""
    def forbidden(*args, **kwargs):
        raise AssertionError("work started before the output location was checked")

    for module, name in [(nolo.experiments.sweep, "run_sweep"), (nolo.experiments.reproduce, "reproduce"),
                         (nolo.offpolicy.learn, "learn_log"), (nolo.datasets.fetch, "fetch")]:
        monkeypatch.setattr(module, name, forbidden)


def _invoke(args):
    select_experiments("demo")  # every module a command imports is imported before the privileges are dropped
    with unprivileged():
        return CliRunner().invoke(main, [str(a) for a in args])


def _refused(res, option: str, path: Path) -> None:
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "Traceback" not in res.output and option in res.output and str(path) in res.output
    assert "cannot write" in res.output


def test_run_and_reproduce_refuse_an_unwritable_out_before_any_run(place, no_work):
    base, locked = place
    spec = base / "demo.yaml"
    spec.write_text(json.dumps(demo_spec(rounds=200).to_dict()))  # YAML reads JSON
    spec.chmod(0o644)
    _refused(_invoke(["run", spec, "--out", locked]), "--out", locked)
    _refused(_invoke(["run", spec, "--out", locked / "runs"]), "--out", locked / "runs")  # a directory to create
    _refused(_invoke(["reproduce", "demo", "--quick", "--out", locked]), "--out", locked)
    assert not any(locked.iterdir())


def test_the_library_reproduce_refuses_an_unwritable_out_before_any_experiment(place, monkeypatch):
    _, locked = place
    exps = select_experiments("demo")
    monkeypatch.setattr(nolo.experiments.reproduce, "Context", lambda *a, **k: pytest.fail("an experiment ran"))
    with unprivileged(), pytest.raises(ParameterError, match=r"^out: cannot write to the directory"):
        reproduce("demo", quick=True, out=locked, only=[exps[0].id])


def test_learn_plot_results_and_fetch_refuse_unwritable_outputs_before_any_work(place, no_work, tmp_path):
    base, locked = place
    log = base / "log.csv"
    log.write_text("x0,played,bit\n0.5,0,1\n")
    log.chmod(0o644)
    model = locked / "model.npz"
    _refused(_invoke(["learn", log, "--out", model, "--n-classes", 3, "--rho0", 0.1, "--rho1", 0.1, "--quiet"]),
             "--out", locked)
    _refused(_invoke(["plot", base, "--out", locked / "curve.png"]), "--out", locked)
    _refused(_invoke(["plot", locked]), "DIRECTORY", locked)
    _refused(_invoke(["results", base, "--csv", locked / "table.csv"]), "--csv", locked)
    _refused(_invoke(["data", "fetch", "mnist", "--data-dir", locked]), "--data-dir", locked)
    assert not any(locked.iterdir())
