"""Sweeps: settings x learners x seeds, run on a local process pool (joblib/loky) or a Dask cluster.

Every run has a deterministic id, a hash of the concrete spec, the learner's
name and the seed (for :func:`run_map` tasks: of the function's import path,
the task and the sweep name).  A run whose Parquet file already exists
complete in the output directory is skipped, so rerunning an interrupted sweep
finishes only the missing runs; each run is a pure function of its id (apart
from timing columns), so the result equals an uninterrupted sweep.

Backends: ``"local"`` -- ``jobs == 1`` runs in this process, ``jobs > 1`` on a
joblib ``loky`` process pool (workers write their own files); ``"dask"`` --
tasks are submitted to the ``dask.distributed`` scheduler at ``scheduler``
and the results are shipped back and written here, so workers need no shared
file system.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from nolo import __version__
from nolo.exceptions import ParameterError
from nolo.experiments.spec import ExperimentSpec, load_spec
from nolo.experiments.store import cleanup_tmp, is_complete, utc_now, write_index, write_run

__all__ = ["plan_sweep", "run_sweep", "run_map", "execute_tasks", "run_id_for"]


def _hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:20]


def run_id_for(spec: ExperimentSpec, learner: str, seed: int) -> str:
    """The deterministic id of the run of ``learner`` on concrete ``spec`` with ``seed``.

    The spec's ``seeds`` list is not part of it: adding seeds to a spec reuses the runs already made.
    """
    data = json.loads(spec.canonical_json())
    data.pop("seeds", None)
    return _hash({"spec": data, "learner": learner, "seed": int(seed)})


def plan_sweep(specs, seeds: Iterable[int] | None = None) -> list[dict]:
    """The tasks of a sweep (one dict per run) in a deterministic order: spec, setting, learner, seed."""
    if isinstance(specs, (ExperimentSpec, dict, str, os.PathLike)):
        specs = [specs]
    tasks = []
    for s in specs:
        spec = load_spec(s)
        run_seeds = list(spec.seeds if seeds is None else seeds)
        for label, concrete in spec.settings():
            for lr in concrete.learners:
                for seed in run_seeds:
                    tasks.append({
                        "kind": "run",
                        "run_id": run_id_for(concrete, lr.name, seed),
                        "spec": concrete.to_dict(),
                        "spec_name": concrete.name,
                        "setting": label,
                        "learner": lr.name,
                        "seed": int(seed),
                    })
    ids = [t["run_id"] for t in tasks]
    if len(set(ids)) != len(ids):
        raise ParameterError("the sweep has duplicate runs (the same spec, learner and seed twice); "
                             "give the specs distinct names or settings")
    return tasks


def _compute(task: dict, progress=None) -> tuple[pd.DataFrame, dict]:
    started = utc_now()
    t0 = time.perf_counter()
    if task["kind"] == "run":
        from nolo.experiments.runner import run_learner

        spec = ExperimentSpec.from_dict(task["spec"], check_components=False)
        frame = run_learner(spec, task["learner"], task["seed"], progress=progress).frame
    else:
        module, _, qualname = task["func"].partition(":")
        func = importlib.import_module(module)
        for part in qualname.split("."):
            func = getattr(func, part)
        out = func(**task["task"])
        frame = out if isinstance(out, pd.DataFrame) else _as_frame(out, task["func"])
    meta = {k: task.get(k) for k in ("kind", "run_id", "spec_name", "setting", "learner", "seed")}
    meta["spec"] = task.get("spec", task.get("task"))
    meta["func"] = task.get("func")
    meta["nolo_version"] = __version__
    meta["timing"] = {"started": started, "finished": utc_now(), "seconds": time.perf_counter() - t0}
    return frame, meta


def _as_frame(out: Any, where: str) -> pd.DataFrame:
    if not isinstance(out, dict):
        raise ParameterError(f"{where} must return a pandas DataFrame or a dict of arrays/scalars, "
                             f"got {type(out).__name__}")
    cols = {k: np.atleast_1d(np.asarray(v)) for k, v in out.items()}
    n = max((len(v) for v in cols.values()), default=0)
    for k, v in cols.items():
        if len(v) not in (1, n):
            raise ParameterError(f"{where} returned columns of different lengths ({k!r} has {len(v)}, expected {n})")
    return pd.DataFrame({k: (np.repeat(v, n) if len(v) == 1 and n > 1 else v) for k, v in cols.items()})


def _run_and_write(task: dict, path: str, progress=None) -> str:
    frame, meta = _compute(task, progress)
    write_run(path, frame, meta)
    return path


def execute_tasks(tasks: list[dict], out_dir: str | os.PathLike, *, jobs: int = 1, backend: str = "local",
                  scheduler: str | None = None, show_progress: bool | None = None) -> list[Path]:
    """Run the tasks whose files are missing; returns every task's file path (in task order)."""
    from nolo.experiments.context import progress

    if backend not in ("local", "dask"):
        raise ParameterError(f"backend must be 'local' or 'dask', got {backend!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ParameterError(f"jobs must be an integer >= 1, got {jobs!r}")
    if backend == "dask" and not scheduler:
        raise ParameterError("scheduler must be a Dask scheduler address (e.g. 'tcp://127.0.0.1:8786') "
                             "with backend='dask'")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cleanup_tmp(out_dir)
    paths = [out_dir / f"{t['run_id']}.parquet" for t in tasks]
    todo = [(t, p) for t, p in zip(tasks, paths) if not is_complete(p)]
    bar = progress(total=len(todo), desc=f"sweep {out_dir.name}", enabled=show_progress)
    try:
        if not todo:
            pass
        elif backend == "dask":
            from dask.distributed import Client, as_completed

            with Client(scheduler, set_as_default=False) as client:
                futures = client.map(_compute, [t for t, _ in todo], pure=False)
                where = {f.key: p for f, (_, p) in zip(futures, todo)}
                for fut in as_completed(futures, loop=client.loop):
                    frame, meta = fut.result()
                    write_run(where[fut.key], frame, meta)
                    bar.update(1)
        elif jobs == 1 or len(todo) == 1:
            for t, p in todo:
                label = f"{t['learner']} seed {t['seed']}" if t["kind"] == "run" else t["spec_name"]

                def rounds_bar(total, label=label):
                    return progress(total=total, desc=label, enabled=show_progress)

                _run_and_write(t, str(p), rounds_bar)
                bar.update(1)
        else:
            from joblib import Parallel, delayed

            par = Parallel(n_jobs=min(jobs, len(todo)), backend="loky", return_as="generator_unordered")
            for _ in par(delayed(_run_and_write)(t, str(p)) for t, p in todo):
                bar.update(1)
    finally:
        bar.close()
        write_index(out_dir)
    return paths


def _load_runs(paths: list[Path]) -> pd.DataFrame:
    from nolo.experiments.store import ID_COLUMNS, read_run_meta
    import pyarrow.parquet as pq

    frames = []
    for p in paths:
        meta = read_run_meta(p)
        df = pq.read_table(p).to_pandas()
        for col in reversed(ID_COLUMNS):
            df.insert(0, col, meta.get(col))
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def run_sweep(specs, out_dir: str | os.PathLike, *, seeds: Iterable[int] | None = None, jobs: int = 1,
              backend: str = "local", scheduler: str | None = None, show_progress: bool | None = None) -> pd.DataFrame:
    """Plan, run (skipping finished runs) and load a sweep; returns the long metrics table of its runs.

    ``seeds`` overrides every spec's ``seeds``.
    """
    tasks = plan_sweep(specs, seeds)
    paths = execute_tasks(tasks, out_dir, jobs=jobs, backend=backend, scheduler=scheduler,
                          show_progress=show_progress)
    return _load_runs(paths)


def run_map(func: Callable, tasks: list[dict], out_dir: str | os.PathLike, *, name: str | None = None,
            jobs: int = 1, backend: str = "local", scheduler: str | None = None,
            show_progress: bool | None = None) -> list[pd.DataFrame]:
    """Run ``func(**task)`` for every task through the engine; returns one DataFrame per task, in order."""
    qualname = getattr(func, "__qualname__", "")
    module = getattr(func, "__module__", None)
    if not module or "<" in qualname:
        raise ParameterError(f"func must be a module-level function (importable by name), got {func!r}")
    path = f"{module}:{qualname}"
    label = name or qualname
    planned = []
    for i, task in enumerate(tasks):
        if not isinstance(task, dict):
            raise ParameterError(f"tasks[{i}] must be a dict of keyword arguments, got {type(task).__name__}")
        try:
            key = _hash({"func": path, "task": task, "name": label})
        except TypeError:
            raise ParameterError(f"tasks[{i}] must be JSON-serialisable (numbers, strings, lists, dicts)") from None
        planned.append({"kind": "map", "run_id": key, "func": path, "task": task, "spec_name": label,
                        "setting": json.dumps(task, sort_keys=True), "learner": None,
                        "seed": task.get("seed")})
    paths = execute_tasks(planned, out_dir, jobs=jobs, backend=backend, scheduler=scheduler,
                          show_progress=show_progress)
    import pyarrow.parquet as pq

    return [pq.read_table(p).to_pandas() for p in paths]
