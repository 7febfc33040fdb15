"""Where datasets live on disk: the data-directory setting.

Resolution order (the first that applies wins; no fall-through once a
directory is chosen, so the choice is always explicit):

1. the ``data_dir`` argument, when given; inside a run, the run's data directory stands for it
   (:func:`data_dir_scope`: ``nolo reproduce --data-dir DIR`` hands it to every task through the run's context, so
   a task on a Dask worker on another host sees it without the environment variable);
2. the environment variable ``NOLO_DATA_DIR``, when set and non-empty;
3. ``~/.cache/nolo/data`` (not created; it is only where files are expected).

The library never searches other folders on its own: a test suite or a CI job that keeps the files elsewhere points
at them with ``NOLO_DATA_DIR`` (the project's own ``tests/conftest.py`` does).

Inside the data directory each dataset has its own folder (``mnist/``,
``fashion-mnist/``, ``usps/``), see :mod:`nolo.datasets.registry`.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from nolo.datasets._checks import check_path

__all__ = ["ENV_VAR", "DataDir", "data_dir_scope", "resolve_data_dir"]

#: environment variable naming the data directory
ENV_VAR = "NOLO_DATA_DIR"
CACHE_DIR = Path("~") / ".cache" / "nolo" / "data"
#: the data directory of the run being executed in this thread or task (None: not in a run, or the run gave none)
_RUN_DATA_DIR: ContextVar[Path | None] = ContextVar("nolo_run_data_dir", default=None)


@dataclass(frozen=True)
class DataDir:
    """A resolved data directory and the rule that chose it (for messages)."""

    path: Path
    source: str

    def describe(self) -> str:
        return f"{self.path} (chosen from {self.source})"


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> DataDir:
    """Return the data directory following the documented resolution order.

    ``data_dir`` (or, inside a run, the run's data directory) > ``$NOLO_DATA_DIR`` > ``~/.cache/nolo/data``.  The
    returned path is absolute; it need not exist.
    """
    if data_dir is not None:
        return DataDir(check_path(data_dir, "data_dir").expanduser().resolve(), "the data_dir argument")
    run = _RUN_DATA_DIR.get()
    if run is not None:
        return DataDir(run, "the run's data directory (data_dir / --data-dir)")
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return DataDir(Path(env).expanduser().resolve(), f"the environment variable {ENV_VAR}")
    return DataDir(CACHE_DIR.expanduser().resolve(), f"the default {CACHE_DIR}")


@contextmanager
def data_dir_scope(data_dir: str | os.PathLike | None):
    """Within the block, loaders called without a ``data_dir`` argument use ``data_dir`` (None: no change).

    How a run carries its data directory to its tasks: the run's context holds it, and each task, wherever it runs
    (this process, a local worker, a Dask worker), executes inside this scope.  Nothing global is changed: the
    environment is left alone, and the setting is local to the thread (a :class:`~contextvars.ContextVar`).
    """
    if data_dir is None:
        yield None
        return
    path = check_path(data_dir, "data_dir").expanduser().resolve()
    token = _RUN_DATA_DIR.set(path)
    try:
        yield path
    finally:
        _RUN_DATA_DIR.reset(token)
