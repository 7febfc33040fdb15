"""Sweeps: resumable after a kill (identical to an uninterrupted sweep), Dask LocalCluster == local pool,
the results store, ``nolo results`` and ``run_map``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from nolo import __version__
from nolo.experiments import load_results
from nolo.papers.demo import demo_spec
from nolo.experiments.runner import TIMING_COLUMNS
from nolo.experiments.store import aggregate, read_index, read_run_meta
from nolo.experiments.sweep import plan_sweep, run_map, run_sweep


def _spec(rounds=1500, seeds=(0, 1, 2, 3, 4)):
    spec = demo_spec(rounds=rounds, record_every=50)
    return spec.model_copy(update={"seeds": list(seeds)})


def _numbers(df: pd.DataFrame) -> pd.DataFrame:
    """The deterministic part of a sweep's table, in a canonical order."""
    return (df.drop(columns=[c for c in (*TIMING_COLUMNS, "experiment") if c in df])
              .sort_values(["run_id", "t"]).reset_index(drop=True))


#: runs ``nolo run`` with the sweep paused for good after its second finished run (a file says so), so that
#: the test interrupts it at a known point instead of racing the sweep (issue 13.4).
_PAUSED_RUN = """
import pathlib, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C works even when started from a background job
import nolo.experiments.sweep as sweep
flag = pathlib.Path(sys.argv[1])
original, done = sweep._run_and_write, []
def run_then_pause(*args, **kwargs):
    out = original(*args, **kwargs)
    done.append(out)
    if len(done) == 2:
        flag.write_text("2 runs written")
        time.sleep(600)
    return out
sweep._run_and_write = run_then_pause
from nolo.cli import main
main(sys.argv[2:])
"""


def test_plan_has_deterministic_distinct_ids():
    a = plan_sweep(_spec())
    b = plan_sweep(_spec())
    assert [t["run_id"] for t in a] == [t["run_id"] for t in b]
    assert len({t["run_id"] for t in a}) == 15  # 3 learners x 5 seeds
    fewer = plan_sweep(_spec(seeds=(0, 1)))  # adding seeds to a spec reuses the runs already made
    assert {t["run_id"] for t in fewer} < {t["run_id"] for t in a}
    other = plan_sweep(demo_spec(rounds=1501, record_every=50).model_copy(update={"seeds": [0, 1, 2, 3, 4]}))
    assert not {t["run_id"] for t in a} & {t["run_id"] for t in other}


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["kill", "ctrl-c"])
def test_killed_sweep_resumes_to_identical_results(tmp_path, sig):
    spec = _spec()
    spec_file = spec.to_file(tmp_path / "sweep.yaml")
    out = tmp_path / "killed"
    runs = out
    flag = tmp_path / "paused"
    proc = subprocess.Popen([sys.executable, "-c", _PAUSED_RUN, str(flag), "run", str(spec_file), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "CI": "1"})
    deadline = time.time() + 300
    try:
        while time.time() < deadline and proc.poll() is None and not flag.exists():
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
            pytest.fail(f"the sweep did not stop within 60 s of {signal.Signals(sig).name}")
    stderr = proc.stderr.read().decode(errors="replace")
    assert flag.exists(), f"the sweep stopped before its second run: {stderr}"
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:
        assert proc.returncode == 130, stderr
        assert "Traceback" not in stderr and "rerun the same command to resume" in stderr
    done = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.parquet")}
    assert len(done) == 2
    for p in runs.glob("*.parquet"):
        assert read_run_meta(p)["complete"] is True  # only complete files carry the final name

    resumed = run_sweep(spec, out, jobs=1)
    after = {p.name: p.stat().st_mtime_ns for p in runs.glob("*.parquet")}
    assert len(after) == 15
    assert all(after[name] == mtime for name, mtime in done.items()), "finished runs must not be redone"
    assert not list(runs.glob("*.tmp-*"))

    fresh = run_sweep(spec, tmp_path / "uninterrupted", jobs=1)
    pd.testing.assert_frame_equal(_numbers(resumed), _numbers(fresh))
    assert len(read_index(out)) == 15


def test_dask_local_cluster_gives_the_local_pool_numbers(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    spec = _spec(rounds=600, seeds=(0, 1))
    local = run_sweep(spec, tmp_path / "local", jobs=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as cluster:
        dask = run_sweep(spec, tmp_path / "dask", backend="dask", scheduler=cluster.scheduler_address)
    assert len(dask) == len(local) > 0
    pd.testing.assert_frame_equal(_numbers(dask), _numbers(local))


def test_store_metadata_index_and_aggregation(tmp_path):
    spec = _spec(rounds=200, seeds=(0, 1, 2))
    df = run_sweep(spec, tmp_path / "runs", jobs=1)
    files = sorted((tmp_path / "runs").glob("*.parquet"))
    assert len(files) == 9
    meta = read_run_meta(files[0])
    assert meta["nolo_version"] == __version__
    assert meta["complete"] is True and meta["kind"] == "run"
    assert meta["timing"]["seconds"] > 0 and meta["timing"]["started"] <= meta["timing"]["finished"]
    assert meta["spec"]["name"] == "demo-noisy-regression" and meta["seed"] in (0, 1, 2)
    assert pq.read_table(files[0]).num_rows == 4
    idx = read_index(tmp_path / "runs")
    assert sorted(e["file"] for e in idx) == [f.name for f in files]

    loaded = load_results(tmp_path)
    pd.testing.assert_frame_equal(_numbers(loaded), _numbers(df))
    agg = aggregate(loaded)
    row = agg[agg.learner == "unbiased"].iloc[0]
    final = loaded[(loaded.learner == "unbiased") & (loaded.t == 200)]["avg_clean_loss"]
    assert row["n_seeds"] == 3
    assert row["avg_clean_loss_mean"] == pytest.approx(final.mean())
    assert row["avg_clean_loss_se"] == pytest.approx(final.std(ddof=1) / np.sqrt(3))

    from click.testing import CliRunner

    from nolo.cli.experiments import results

    res = CliRunner().invoke(results, [str(tmp_path), "--csv", str(tmp_path / "agg.csv")])
    assert res.exit_code == 0, res.output
    assert "9 runs" in res.output and "unbiased" in res.output and "avg_clean_loss_mean" in res.output
    assert pd.read_csv(tmp_path / "agg.csv").shape[0] == 3


def square_and_count(x, seed, counter):
    """A map task: appends to ``counter`` (a file) so the test sees how often it ran."""
    with open(counter, "a") as fh:
        fh.write("x")
    rng = np.random.default_rng(seed)
    return {"x": x, "y": x * x, "noise": rng.standard_normal(3)}


def test_run_map_stores_and_skips_finished_tasks(tmp_path):
    counter = tmp_path / "count"
    tasks = [{"x": x, "seed": s, "counter": str(counter)} for x in (1.0, 2.0) for s in (0, 1)]
    first = run_map(square_and_count, tasks, tmp_path / "m", name="squares")
    again = run_map(square_and_count, tasks, tmp_path / "m", name="squares")
    assert counter.read_text() == "xxxx"
    assert [f["y"].tolist() for f in first] == [[1.0] * 3, [1.0] * 3, [4.0] * 3, [4.0] * 3]
    for a, b in zip(first, again):
        pd.testing.assert_frame_equal(a, b)
    assert load_results(tmp_path, kind="map")["spec_name"].unique().tolist() == ["squares"]
    assert load_results(tmp_path, kind="run").empty
    assert len(load_results(tmp_path)) == 12  # kind="all" by default: the map tasks too


def test_run_map_code_scope_keys_runs_by_the_named_sources_only(tmp_path, monkeypatch):
    """A map with ``code_scope`` stores the hash of those files only: a change elsewhere in nolo (simulated by
    shifting the whole-package hash) reuses its runs; a change inside the scope recomputes them."""
    from nolo.experiments import sweep

    counter = tmp_path / "count"
    tasks = [{"x": 3.0, "seed": 0, "counter": str(counter)}]
    scope = ["papers/am/vw.py", "datasets/"]
    run_map(square_and_count, tasks, tmp_path / "m", name="sq", code_scope=scope)
    from nolo.experiments.store import read_run_meta_or_none

    (path,) = (tmp_path / "m").glob("*.parquet")
    stored = read_run_meta_or_none(path)["code_version"]
    assert stored == sweep.code_version(tuple(sorted(scope))) and "scoped-" in stored
    assert stored != sweep.code_version()
    real = sweep.code_version

    def other_code(scope=None):  # every file outside the scope changed
        return real(scope) if scope is not None else "0.0.0+elsewhere"

    monkeypatch.setattr(sweep, "code_version", other_code)
    run_map(square_and_count, tasks, tmp_path / "m", name="sq", code_scope=scope)
    assert counter.read_text() == "x"  # reused
    run_map(square_and_count, tasks, tmp_path / "m", name="sq")  # unscoped: keyed by the (changed) package hash
    assert counter.read_text() == "xx"
    monkeypatch.setattr(sweep, "code_version", lambda scope=None: "0.0.0+inside")
    run_map(square_and_count, tasks, tmp_path / "m", name="sq", code_scope=scope)
    assert counter.read_text() == "xxx"  # a change inside the scope recomputes


def test_run_map_packages_join_the_key(tmp_path, monkeypatch):
    """``packages``: a peer library's version is part of the stored code version, so upgrading it recomputes the
    runs; the same version reuses them; a name that is not installed is keyed as absent."""
    from importlib import metadata

    from nolo.experiments import sweep
    from nolo.experiments.store import read_run_meta_or_none

    counter = tmp_path / "count"
    tasks = [{"x": 2.0, "seed": 0, "counter": str(counter)}]
    run_map(square_and_count, tasks, tmp_path / "m", name="sq", code_scope=["datasets/"], packages=["numpy"])
    (path,) = (tmp_path / "m").glob("*.parquet")
    stored = read_run_meta_or_none(path)["code_version"]
    assert stored.endswith(f"+numpy-{metadata.version('numpy')}") and "scoped-" in stored
    run_map(square_and_count, tasks, tmp_path / "m", name="sq", code_scope=["datasets/"], packages=["numpy"])
    assert counter.read_text() == "x"  # same version: reused
    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: "999.0" if name == "numpy" else real(name))
    sweep.package_versions.cache_clear()  # looked up once per process; an upgrade shows in the next process
    run_map(square_and_count, tasks, tmp_path / "m", name="sq", code_scope=["datasets/"], packages=["numpy"])
    assert counter.read_text() == "xx"  # upgraded: recomputed
    sweep.package_versions.cache_clear()
    assert sweep.package_versions(("no-such-dist-nolo",)) == "+no-such-dist-nolo-absent"


@pytest.mark.parametrize("packages", ["numpy", [], [""], [3]])
def test_run_map_packages_is_validated(tmp_path, packages):
    from nolo.exceptions import ParameterError

    with pytest.raises(ParameterError, match="packages must be"):
        run_map(square_and_count, [{"x": 1.0, "seed": 0, "counter": str(tmp_path / "c")}], tmp_path / "m",
                packages=packages)
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("scope, match", [(["no/such/file.py"], "matches none"), ("datasets/", "list of path"),
                                          ([], "list of path"), ([3], "list of path")])
def test_run_map_code_scope_is_validated(tmp_path, scope, match):
    from nolo.exceptions import ParameterError

    with pytest.raises(ParameterError, match=match):
        run_map(square_and_count, [{"x": 1.0, "seed": 0, "counter": str(tmp_path / "c")}], tmp_path / "m",
                code_scope=scope)
    assert not (tmp_path / "c").exists()
