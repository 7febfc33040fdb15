"""The run's data directory travels with its context to every task (in this process, a local worker pool, Dask
workers), so a task's loaders find the files without ``NOLO_DATA_DIR`` being set, and the environment is left
alone.  Outside a run the resolution order is unchanged: argument > $NOLO_DATA_DIR > ~/.cache/nolo/data."""

import os

import pytest

from nolo.datasets.paths import ENV_VAR, data_dir_scope, resolve_data_dir
from nolo.experiments.context import Context
from nolo.experiments.sweep import run_map


def where_data(i):
    """A task: where its loaders would look for dataset files, and whether the environment named it."""
    d = resolve_data_dir()
    return {"i": [i], "path": [str(d.path)], "source": [d.source], "env": [os.environ.get(ENV_VAR, "")],
            "pid": [os.getpid()]}


def _ctx(tmp_path, data, **kw):
    return Context(paper="demo", id="data-dir", quick=True, out_dir=tmp_path / "out", seeds=[0], data_dir=data, **kw)


def test_a_task_sees_the_contexts_data_dir_without_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    data = tmp_path / "data"
    data.mkdir()
    frames = _ctx(tmp_path, data).map(where_data, [{"i": 0}, {"i": 1}])
    for f in frames:
        assert f["path"].iloc[0] == str(data.resolve()) and f["env"].iloc[0] == ""
        assert "run's data directory" in f["source"].iloc[0]
    assert ENV_VAR not in os.environ
    # the same context without a data directory: the loader's own default (nothing left behind by the run)
    plain = Context(paper="demo", id="plain", quick=True, out_dir=tmp_path / "plain", seeds=[0]).map(
        where_data, [{"i": 0}])
    assert plain[0]["path"].iloc[0] == str(resolve_data_dir().path) != str(data.resolve())


def test_a_worker_pool_task_sees_the_contexts_data_dir(tmp_path, monkeypatch):
    """A pool worker may have been started earlier with another NOLO_DATA_DIR: the run's directory wins there too."""
    decoy = tmp_path / "decoy"
    monkeypatch.setenv(ENV_VAR, str(decoy))
    data = tmp_path / "data"
    data.mkdir()
    frames = _ctx(tmp_path, data, jobs=2).map(where_data, [{"i": i} for i in range(4)])
    assert {f["path"].iloc[0] for f in frames} == {str(data.resolve())}
    assert any(f["pid"].iloc[0] != os.getpid() for f in frames)  # computed in the pool, not here


def test_a_dask_task_sees_the_contexts_data_dir(tmp_path, monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    monkeypatch.delenv(ENV_VAR, raising=False)
    data = tmp_path / "data"
    data.mkdir()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as cluster:
        ctx = _ctx(tmp_path, data, backend="dask", scheduler=cluster.scheduler_address)
        frames = ctx.map(where_data, [{"i": 0}, {"i": 1}])
    assert {f["path"].iloc[0] for f in frames} == {str(data.resolve())}
    assert {f["env"].iloc[0] for f in frames} == {""}


def test_resolution_order_outside_and_inside_a_scope(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env"))
    assert resolve_data_dir().path == (tmp_path / "env").resolve()
    with data_dir_scope(tmp_path / "run"):
        assert resolve_data_dir().path == (tmp_path / "run").resolve()
        assert resolve_data_dir(tmp_path / "arg").path == (tmp_path / "arg").resolve()  # the argument still wins
        assert os.environ[ENV_VAR] == str(tmp_path / "env")  # the environment is not touched
    assert resolve_data_dir().path == (tmp_path / "env").resolve()
    with data_dir_scope(None):
        assert resolve_data_dir().path == (tmp_path / "env").resolve()
