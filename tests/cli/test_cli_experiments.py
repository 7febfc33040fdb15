"""The command line of the experiments: user errors without tracebacks, SIGTERM and kill -9 leave no worker
behind (issue 14.5), ``nolo results`` / ``nolo plot`` on any output directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from nolo.papers.demo import demo_spec
from nolo.experiments.sweep import run_map, run_sweep

CLI = [sys.executable, "-c", "from nolo.cli import main; main()"]

MNIST_SPEC = """\
name: mnist-banditron
protocol: bandit
rounds: 1000
seeds: [0]
environment:
  dataset: mnist
learners:
  - name: banditron
    class: nolo.learners.bandit.Banditron
    params: {n_classes: 10, gamma: 0.05}
"""


def _cli(args, tmp_path, **env):
    return subprocess.run(CLI + args, capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**os.environ, "CI": "1", **env})


def test_user_errors_are_one_line_without_traceback(tmp_path):
    spec = tmp_path / "mnist.yaml"
    spec.write_text(MNIST_SPEC)
    (tmp_path / "empty").mkdir()
    missing = _cli(["run", str(spec), "--out", str(tmp_path / "o")], tmp_path, NOLO_DATA_DIR=str(tmp_path / "empty"))
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr and "mnist" in missing.stderr and "NOLO_DATA_DIR" in missing.stderr
    (tmp_path / "afile").write_text("")
    bad_out = _cli(["run", str(spec), "--out", str(tmp_path / "afile" / "sub")], tmp_path)
    assert bad_out.returncode == 2 and "Traceback" not in bad_out.stderr and "--out" in bad_out.stderr
    t0 = time.monotonic()
    no_sched = _cli(["reproduce", "demo", "--quick", "--out", str(tmp_path / "r"), "--backend", "dask",
                     "--scheduler", "tcp://127.0.0.1:9"], tmp_path)
    assert no_sched.returncode == 2 and "Traceback" not in no_sched.stderr
    assert no_sched.stderr.count("scheduler") >= 1 and "127.0.0.1:9" in no_sched.stderr
    assert time.monotonic() - t0 < 60
    only = _cli(["reproduce", "demo", "--quick", "--only", "nope", "--out", str(tmp_path / "r")], tmp_path)
    assert only.returncode == 2 and "no experiment 'nope'" in only.stderr and "demo/noisy-regression" in only.stderr


def _loky_children(pid: int) -> list[psutil.Process]:
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [k for k in kids if "loky" in " ".join(k.cmdline())]


def _start_long_parallel_sweep(tmp_path):
    spec = demo_spec(rounds=3_000_000, record_every=1_000_000).model_copy(update={"seeds": [0, 1, 2, 3]})
    spec_file = spec.to_file(tmp_path / "long.yaml")
    proc = subprocess.Popen(CLI + ["run", str(spec_file), "--out", str(tmp_path / "runs"), "--jobs", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "CI": "1"})
    deadline = time.time() + 120
    workers = []
    while time.time() < deadline and proc.poll() is None:
        workers = [w for w in _loky_children(proc.pid) if "resource_tracker" not in " ".join(w.cmdline())]
        if len(workers) >= 2:
            break
        time.sleep(0.1)
    assert len(workers) >= 2, proc.stderr.read().decode() if proc.poll() is not None else "no loky workers"
    time.sleep(1.0)  # the workers are inside their first runs
    return proc, _loky_children(proc.pid)


def _gone_within(procs, seconds: float) -> list[psutil.Process]:
    deadline = time.time() + seconds
    alive = list(procs)
    while alive and time.time() < deadline:
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.2)
    return alive


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
def test_workers_do_not_outlive_the_parent(tmp_path, sig):
    proc, children = _start_long_parallel_sweep(tmp_path)
    try:
        os.kill(proc.pid, sig)  # the parent only, as a batch scheduler or the OOM killer would
        proc.wait(timeout=60)
        alive = _gone_within(children, 15)
        assert not alive, f"still running after the parent died: {[p.cmdline() for p in alive]}"
        if sig == signal.SIGTERM:
            stderr = proc.stderr.read().decode()
            assert proc.returncode == 143 and "Traceback" not in stderr and "resume" in stderr
        files = sorted(p.name for p in (tmp_path / "runs").glob("*.parquet"))
        time.sleep(1.0)
        assert sorted(p.name for p in (tmp_path / "runs").glob("*.parquet")) == files  # nobody writes any more
    finally:
        for c in children:
            try:
                c.kill()
            except psutil.NoSuchProcess:
                pass


def table_task(x, seed):
    return {"t": [1, 2, 3], "error_rate": [0.5 / (1 + x), 0.4 / (1 + x), 0.3 / (1 + x)], "algo": f"a{x}",
            "seed": seed}


def test_results_and_plot_work_on_any_output_directory(tmp_path):
    from nolo.cli.experiments import results
    from nolo.cli.plot import plot

    run_sweep(demo_spec(rounds=200, record_every=50).model_copy(update={"seeds": [0, 1]}), tmp_path / "demo" / "runs")
    run_map(table_task, [{"x": x, "seed": s} for x in (0, 1) for s in (0, 1)], tmp_path / "am" / "_curves",
            name="curves")
    res = CliRunner().invoke(results, [str(tmp_path / "am" / "_curves")])
    assert res.exit_code == 0, res.output
    assert "4 runs" in res.output
    res = CliRunner().invoke(results, [str(tmp_path)])
    assert res.exit_code == 0 and "10 runs" in res.output
    res = CliRunner().invoke(plot, [str(tmp_path / "am" / "_curves"), "--metric", "error_rate"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "am" / "_curves" / "error_rate.png").stat().st_size > 1000
    res = CliRunner().invoke(plot, [str(tmp_path / "demo"), "--out", str(tmp_path / "demo.png")])
    assert res.exit_code == 0 and Path(tmp_path / "demo.png").is_file(), res.output
    res = CliRunner().invoke(plot, [str(tmp_path / "demo"), "--metric", "nope"])
    assert res.exit_code == 2 and "--metric must be a recorded column" in res.output


def test_results_warns_once_per_unreadable_file(tmp_path):
    from nolo.cli.experiments import results

    run_map(table_task, [{"x": x, "seed": s} for x in (0, 1) for s in (0, 1)], tmp_path / "runs", name="curves")
    bad = sorted((tmp_path / "runs").glob("*.parquet"))[0]
    bad.write_bytes(b"garbage")
    res = CliRunner().invoke(results, [str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert res.output.count(f"skipping {bad}") == 1 and "3 runs" in res.output


def test_aggregate_of_a_wide_table_does_not_warn(recwarn):
    import numpy as np
    import pandas as pd

    from nolo.experiments.store import aggregate

    df = pd.DataFrame({"learner": ["a", "a", "b"], "run_id": ["r0", "r1", "r2"], "seed": [0, 1, 0], "t": [1, 1, 1]})
    df = pd.concat([df, pd.DataFrame(np.arange(3 * 150.0).reshape(3, 150), columns=[f"m{i}" for i in range(150)])], axis=1)
    out = aggregate(df)
    assert not [w for w in recwarn if issubclass(w.category, pd.errors.PerformanceWarning)]
    assert out.loc[out.learner == "a", "m0_mean"].item() == 75.0 and out.loc[out.learner == "a", "n_seeds"].item() == 2
