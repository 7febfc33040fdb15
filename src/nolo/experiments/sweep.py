"""Sweeps: settings x learners x seeds, run on a local process pool (joblib/loky) or a Dask cluster.

Every run has a deterministic id, a hash of the concrete spec, the learner's
name and the seed (for :func:`run_map` tasks: of the function's import path,
the task and the sweep name).  A run whose Parquet file already exists
complete in the output directory, written by the same code (the package
version and a hash of nolo's source files, :func:`code_version`, are in its
metadata), is reused, so rerunning an interrupted sweep finishes only the
missing runs; each run is a pure function of its id (apart from timing
columns), so the result equals an uninterrupted sweep.  A file written by
other code is recomputed; ``force=True`` (``--force``) recomputes every run
once.  A stored run is reused only if its bytes match its content checksum
(:func:`nolo.experiments.store.verify_run`): a corrupted file is recomputed
with a warning naming it, and runs stored without a checksum (by an earlier
nolo) are recomputed with one line saying so.  A run that raises :class:`~nolo.exceptions.NumericalError` is stored
as a failed run (its metadata has ``status: "failed"`` and the error, no rows)
and the sweep goes on.

Process pools: the workers of ``jobs > 1`` watch their parent and exit
within a second when it dies (even by ``kill -9``), and an interrupted sweep
(Ctrl-C, SIGTERM) shuts its pool down before it returns.

Backends: ``"local"`` -- ``jobs == 1`` runs in this process, ``jobs > 1`` on a
joblib ``loky`` process pool (workers write their own files); ``"dask"`` --
tasks are submitted to the ``dask.distributed`` scheduler at ``scheduler``
and the results are shipped back and written here, so workers need no shared
file system.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from nolo import __version__
from nolo._extras import installed_versions, require
from nolo.datasets.paths import data_dir_scope
from nolo.exceptions import NumericalError, ParameterError, PersistenceError
from nolo.experiments.spec import ExperimentSpec, load_spec
from nolo.experiments.store import (CorruptRunError, UncheckedRunError, cleanup_tmp, read_run, utc_now, verify_run,
                                    write_index, write_run)

__all__ = ["plan_sweep", "run_sweep", "run_map", "execute_tasks", "run_id_for", "code_version", "RunStats",
           "sweep_session", "current_stats"]

logger = logging.getLogger("nolo.sweep")

#: files whose changes do not change a run's numbers: the command line, the report, plots, verdicts
#: (computed afresh from the figures on every reproduction), the registry and the store's reading side.
_CODE_EXCLUDE = ("cli/", "experiments/report.py", "experiments/plots.py", "experiments/reproduce.py",
                 "experiments/templates/", "experiments/result.py", "experiments/registry.py",
                 "experiments/store.py")


@lru_cache(maxsize=16)
def code_version(scope: tuple[str, ...] | None = None) -> str:
    """``"<version>+<hash>"``: the package version and a hash of nolo's source files (those of
    ``_CODE_EXCLUDE`` aside; of their code, :func:`source_digest`, not of their comments and docstrings), stored with every run so that a run made by other code is recomputed.

    ``scope``: only the files whose path (relative to the package, e.g. ``"papers/am/vw.py"`` or
    ``"datasets/"``) starts with one of these prefixes -- for tasks whose numbers depend on a known part of the
    package (a peer library's runs: ``ctx.map(..., code_scope=...)``), so that a change elsewhere does not
    recompute them.  Every prefix must match a file (a misspelt one would silently drop a dependency)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    files = [p for p in sorted(root.rglob("*.py")) if not p.relative_to(root).as_posix().startswith(_CODE_EXCLUDE)]
    if scope is not None:
        rels = [p.relative_to(root).as_posix() for p in files]
        for prefix in scope:
            if not isinstance(prefix, str) or not any(r.startswith(prefix) for r in rels):
                raise ParameterError(f"code_scope entries must be path prefixes of nolo's source files (such as "
                                     f"'papers/am/vw.py' or 'datasets/'), got {prefix!r}, which matches none")
        files = [p for p, r in zip(files, rels) if r.startswith(tuple(scope))]
    for p in files:
        h.update(p.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(source_digest(p.read_bytes()))
        h.update(b"\0")
    return f"{__version__}+{'scoped-' if scope is not None else ''}{h.hexdigest()[:16]}"


def source_digest(source: bytes) -> bytes:
    """What :func:`code_version` hashes of one source file: its syntax tree without docstrings (``ast.dump``,
    no line numbers), so editing a comment, a docstring or the layout does not recompute the runs it stamps
    (at paper scale, VW's alone take about 27 min); a file that does not parse is hashed as its bytes.

    >>> source_digest(b"x = 1  # one") == source_digest(b"'Doc.'\\n\\nx = (1)\\n")
    True
    >>> source_digest(b"x = 1") == source_digest(b"x = 2")
    False
    """
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return hashlib.sha256(source).digest()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:]
    return hashlib.sha256(ast.dump(tree).encode()).digest()


@lru_cache(maxsize=16)
def package_versions(packages: tuple[str, ...] | None = None) -> str:
    """``"+name-version"`` for each installed distribution of ``packages`` (``"+name-absent"`` if not installed),
    appended to a map's :func:`code_version` (``run_map(..., packages=...)``): runs that call a peer library are
    recomputed when it is upgraded.  ``""`` for None.

    >>> package_versions(("numpy",)).startswith("+numpy-"), package_versions(None)
    (True, '')
    """
    if not packages:
        return ""
    return "+" + "+".join(f"{name}-{v}" for name, v in installed_versions(packages))


@dataclass
class RunStats:
    """What the sweeps of a session did: runs reused, computed, and the ones that failed."""

    reused: int = 0
    computed: int = 0
    failed: list = field(default_factory=list)


@dataclass
class _Session:
    force_since: float | None = None
    stats: RunStats = field(default_factory=RunStats)
    #: one-time messages already logged (shared with the sessions nested in this one)
    said: set = field(default_factory=set)


_SESSION = _Session()


@contextlib.contextmanager
def sweep_session(force: bool = False):
    """Count the runs of every sweep inside the block (yields a :class:`RunStats`); with ``force``,
    recompute every run once (files written before the block started are not reused)."""
    global _SESSION
    saved = _SESSION
    _SESSION = _Session(force_since=time.time() if force else saved.force_since, said=saved.said)
    try:
        yield _SESSION.stats
    finally:
        inner = _SESSION.stats
        _SESSION = saved
        _SESSION.stats.reused += inner.reused
        _SESSION.stats.computed += inner.computed
        _SESSION.stats.failed += inner.failed


def current_stats() -> RunStats:
    return _SESSION.stats


def _reusable(path: Path, force_since: float | None, version: str, unchecked: list | None = None) -> dict | None:
    """The metadata of ``path`` if it is a complete run written by this code (``version``, and after
    ``force_since``) whose bytes match its content checksum.  A corrupted file is logged (it is recomputed);
    a run stored without a checksum is appended to ``unchecked`` (the caller says so once)."""
    if not path.is_file():
        return None
    try:
        meta = verify_run(path)
    except CorruptRunError as exc:
        logger.warning("recomputing a corrupted stored run: %s", exc)
        return None
    except UncheckedRunError:
        if unchecked is not None:
            unchecked.append(path)
        return None
    except PersistenceError as exc:
        logger.warning("recomputing a stored run that cannot be read: %s", exc)
        return None
    if not meta.get("complete") or meta.get("code_version") != version:
        return None
    if force_since is not None and path.stat().st_mtime < force_since:
        return None
    return meta


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


def _compute_frame(task: dict, progress=None) -> pd.DataFrame:
    """One task's table: a spec's learner run, or a mapped function's call."""
    if task["kind"] == "run":
        from nolo.experiments.runner import run_learner

        spec = ExperimentSpec.from_dict(task["spec"], check_components=False)
        return run_learner(spec, task["learner"], task["seed"], progress=progress).frame
    module, _, qualname = task["func"].partition(":")
    func = importlib.import_module(module)
    for part in qualname.split("."):
        func = getattr(func, part)
    out = func(**task["task"])
    return out if isinstance(out, pd.DataFrame) else _as_frame(out, task["func"])


def _compute(task: dict, progress=None) -> tuple[pd.DataFrame, dict]:
    started = utc_now()
    t0 = time.perf_counter()
    error = None
    try:
        with data_dir_scope(task.get("data_dir")):  # the run's data directory, on whichever host runs the task
            frame = _compute_frame(task, progress)
    except NumericalError as exc:  # the data or parameters drove the run to inf/NaN: a failed run, not a crash
        frame, error = pd.DataFrame(), f"NumericalError: {exc}"
    meta = {k: task.get(k) for k in ("kind", "run_id", "spec_name", "setting", "learner", "seed")}
    meta["spec"] = task.get("spec", task.get("task"))
    meta["func"] = task.get("func")
    meta["nolo_version"] = __version__
    # the version the parent checks against (a pool worker started after an edit would hash other code)
    meta["code_version"] = task.get("code_version") or code_version()
    meta["status"] = "failed" if error else "ok"
    if error:
        meta["error"] = error
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


_WATCHDOG: list = []


def _watch_parent(parent: int, period: float = 0.5) -> None:
    """In a pool worker: exit as soon as the parent process ``parent`` is gone.

    loky workers otherwise outlive a parent killed with SIGKILL (2 workers and their resource trackers
    were still running 60 s later) and go on writing run files; the parent's death reparents the worker,
    which this daemon thread notices within ``period`` seconds."""
    if _WATCHDOG or os.getpid() == parent:
        return

    def watch():
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(period)

    t = threading.Thread(target=watch, name="nolo-parent-watchdog", daemon=True)
    t.start()
    _WATCHDOG.append(t)


def _run_and_write(task: dict, path: str, progress=None, parent: int | None = None) -> tuple[str, str | None]:
    if parent is not None:
        _watch_parent(parent)
    frame, meta = _compute(task, progress)
    write_run(path, frame, meta)
    return path, meta.get("error")


def _shutdown_pool() -> None:
    """Kill the reusable loky pool's workers (after an interrupted parallel sweep)."""
    try:
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=False, kill_workers=True)
    except Exception:  # pragma: no cover - best effort on the way out
        pass


class _ProgressLog:
    """Progress lines for logs (when no progress bar is shown): at most one every ``every`` seconds."""

    def __init__(self, name: str, total: int, every: float = 15.0):
        self.name, self.total, self.every = name, total, every
        self.done = 0
        self.t0 = self.last = time.monotonic()

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.done == self.total or now - self.last >= self.every:
            self.last = now
            el = now - self.t0
            eta = el / self.done * (self.total - self.done) if self.done else float("nan")
            logger.info("%s: %d/%d runs done, %.0f s elapsed, ~%.0f s left", self.name, self.done, self.total,
                        el, eta)


def execute_tasks(tasks: list[dict], out_dir: str | os.PathLike, *, jobs: int = 1, backend: str = "local",
                  scheduler: str | None = None, show_progress: bool | None = None,
                  force: bool = False, data_dir: str | os.PathLike | None = None) -> list[Path]:
    """Run the tasks whose files are missing (or written by other code); returns every task's file path
    (in task order).  ``force``: recompute every task.  ``data_dir``: the run's data directory, handed to each task
    (it runs inside :func:`nolo.datasets.paths.data_dir_scope` wherever it runs); it is not part of a run's id."""
    from nolo.experiments.progress import progress, progress_enabled

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
    data_dir = None if data_dir is None else str(Path(data_dir).expanduser().resolve())
    tasks = [{**t, "code_version": code_version(_scope(t.get("code_scope"))) + package_versions(t.get("packages")),
              "data_dir": data_dir} for t in tasks]
    force_since = time.time() if force else _SESSION.force_since
    stats = _SESSION.stats
    todo, unchecked = [], []
    for t, p in zip(tasks, paths):
        meta = _reusable(p, force_since, t["code_version"], unchecked)
        if meta is None:
            todo.append((t, p))
        else:
            stats.reused += 1
            if meta.get("status") == "failed":
                stats.failed.append((str(p), meta.get("error")))
    if unchecked:
        first = "unchecked" not in _SESSION.said
        _SESSION.said.add("unchecked")
        logger.log(logging.WARNING if first else logging.DEBUG,
                   "%d stored run(s) in %s have no content checksum (written by an earlier nolo): they cannot be "
                   "verified and are recomputed%s", len(unchecked), out_dir,
                   " (said once: other directories' such runs are recomputed too)" if first else "")
    bar = progress(total=len(todo), desc=f"sweep {out_dir.name}", enabled=show_progress)
    bar_on = progress_enabled() if show_progress is None else bool(show_progress)
    log = _ProgressLog(f"sweep {out_dir.parent.name}/{out_dir.name}", len(todo)) if todo and not bar_on else None

    def done(path, error):
        stats.computed += 1
        if error:
            stats.failed.append((str(path), error))
            logger.warning("run %s failed: %s", Path(path).name, error)
        bar.update(1)
        if log:
            log.update(1)

    try:
        if not todo:
            pass
        elif backend == "dask":
            dd = require("dask.distributed", "dask", "backend 'dask'")
            Client, as_completed = dd.Client, dd.as_completed

            with Client(scheduler, set_as_default=False) as client:
                futures = client.map(_compute, [t for t, _ in todo], pure=False)
                where = {f.key: p for f, (_, p) in zip(futures, todo)}
                for fut in as_completed(futures, loop=client.loop):
                    frame, meta = fut.result()
                    write_run(where[fut.key], frame, meta)
                    done(where[fut.key], meta.get("error"))
        elif jobs == 1 or len(todo) == 1:
            for t, p in todo:
                label = f"{t['learner']} seed {t['seed']}" if t["kind"] == "run" else t["spec_name"]

                def rounds_bar(total, label=label):
                    return progress(total=total, desc=label, enabled=show_progress)

                done(*_run_and_write(t, str(p), rounds_bar))
        else:
            from joblib import Parallel, delayed

            par = Parallel(n_jobs=min(jobs, len(todo)), backend="loky", return_as="generator_unordered")
            try:
                for path, error in par(delayed(_run_and_write)(t, str(p), None, os.getpid()) for t, p in todo):
                    done(path, error)
            except BaseException:
                _shutdown_pool()  # Ctrl-C / SIGTERM / an error: no worker may go on writing run files
                raise
    finally:
        bar.close()
        write_index(out_dir)
    return paths


def _load_runs(paths: list[Path]) -> pd.DataFrame:
    from nolo.experiments.store import ID_COLUMNS

    frames = []
    for p in paths:
        df, meta = read_run(p)
        for col in reversed(ID_COLUMNS):
            if col not in df:
                df.insert(0, col, meta.get(col))
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def run_sweep(specs, out_dir: str | os.PathLike, *, seeds: Iterable[int] | None = None, jobs: int = 1,
              backend: str = "local", scheduler: str | None = None, show_progress: bool | None = None,
              force: bool = False, data_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """Plan, run (reusing finished runs of the same code) and load a sweep; returns the long metrics
    table of its runs (a failed run contributes no rows).

    ``seeds`` overrides every spec's ``seeds``; ``force`` recomputes every run; ``data_dir``: where every run's
    loaders look for dataset files (see :func:`execute_tasks`).
    """
    tasks = plan_sweep(specs, seeds)
    paths = execute_tasks(tasks, out_dir, jobs=jobs, backend=backend, scheduler=scheduler,
                          show_progress=show_progress, force=force, data_dir=data_dir)
    return _load_runs(paths)


def _scope(scope) -> tuple[str, ...] | None:
    if scope is None:
        return None
    if isinstance(scope, str) or not all(isinstance(x, str) for x in scope) or not len(scope):
        raise ParameterError(f"code_scope must be None or a non-empty list of path prefixes, got {scope!r}")
    return tuple(sorted(scope))


def _packages(packages) -> tuple[str, ...] | None:
    if packages is None:
        return None
    if isinstance(packages, str) or not len(packages) or not all(isinstance(x, str) and x for x in packages):
        raise ParameterError(f"packages must be None or a non-empty list of distribution names, got {packages!r}")
    return tuple(sorted(packages))


def run_map(func: Callable, tasks: list[dict], out_dir: str | os.PathLike, *, name: str | None = None,
            jobs: int = 1, backend: str = "local", scheduler: str | None = None,
            show_progress: bool | None = None, force: bool = False, code_scope=None,
            packages=None, data_dir: str | os.PathLike | None = None) -> list[pd.DataFrame]:
    """Run ``func(**task)`` for every task through the engine; returns one DataFrame per task, in order.
    ``code_scope``: the source files (path prefixes, :func:`code_version`) the tasks' numbers depend on; None: all
    of nolo.  ``packages``: names of other installed distributions they depend on (a peer library), whose versions
    join the stored code version (:func:`package_versions`).  ``data_dir``: where the tasks' loaders look for
    dataset files (see :func:`execute_tasks`)."""
    code_scope, packages = _scope(code_scope), _packages(packages)
    if code_scope is not None:
        code_version(code_scope)  # refuses a prefix that matches no file, before any run
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
                        "seed": task.get("seed"), "code_scope": code_scope, "packages": packages})
    paths = execute_tasks(planned, out_dir, jobs=jobs, backend=backend, scheduler=scheduler,
                          show_progress=show_progress, force=force, data_dir=data_dir)
    return [read_run(p)[0] for p in paths]
