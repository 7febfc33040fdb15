"""The context an experiment function receives.

It carries the run settings chosen on the command line (``quick``, output
directory, seeds, jobs, backend/scheduler, the ``--rounds`` override) and the helpers an experiment
needs: run a sweep of declarative specs (:meth:`Context.sweep`) or of any
module-level function (:meth:`Context.map`) through the resumable sweep
engine, save a matplotlib figure (:meth:`Context.save_figure`), log, and show
progress.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from nolo.exceptions import ParameterError
from nolo.experiments.progress import progress, progress_enabled

__all__ = ["Context", "progress_enabled", "progress"]


@dataclass
class Context:
    """Settings and helpers handed to ``func(ctx)`` of a registered experiment.

    Attributes: ``quick`` (reduced version requested), ``out_dir`` (this
    experiment's directory, ``OUT/<paper>/<id>``), ``seeds`` (list of ints),
    ``jobs`` (parallel processes), ``backend`` ("local" or "dask"),
    ``scheduler`` (Dask scheduler address or None), ``rounds`` (the
    ``--rounds`` override of the horizon, or None), ``data_dir`` (where the
    dataset files are, ``--data-dir``; None: each loader's own resolution), ``plots`` (PNG files
    saved so far; the platform adds them to the result).

    ``data_dir`` travels with every task of :meth:`sweep` and :meth:`map` (to local and Dask workers alike),
    and each task's loaders use it as their data directory (:func:`nolo.datasets.paths.data_dir_scope`).

    Examples
    --------
    >>> ctx = Context(paper="demo", id="x", quick=True, out_dir="out", seeds=[0], rounds=3000)
    >>> ctx.horizon(2_000, 100_000)
    3000
    >>> ctx.horizons([500, 1000, 2000, 4000], [500, 1000, 2000, 4000, 8000])
    [375, 750, 1500, 3000]
    >>> Context(paper="demo", id="x", quick=False, out_dir="out", seeds=[0]).horizon(2_000, 100_000)
    100000
    """

    paper: str
    id: str
    quick: bool
    out_dir: Path
    seeds: list[int]
    jobs: int = 1
    backend: str = "local"
    scheduler: str | None = None
    show_progress: bool | None = None
    rounds: int | None = None
    data_dir: Path | None = None
    plots: list[Path] = field(default_factory=list)
    rounds_read: bool = field(default=False, repr=False)
    rounds_base: int | None = field(default=None, repr=False)

    def __post_init__(self):
        self.out_dir = Path(self.out_dir)
        if self.data_dir is not None:
            self.data_dir = Path(self.data_dir).expanduser().resolve()
        if self.backend not in ("local", "dask"):
            raise ParameterError(f"backend must be 'local' or 'dask', got {self.backend!r}")
        if self.backend == "dask" and not self.scheduler:
            raise ParameterError("scheduler must be a Dask scheduler address (e.g. 'tcp://127.0.0.1:8786') with backend='dask'")
        if isinstance(self.jobs, bool) or not isinstance(self.jobs, int) or self.jobs < 1:
            raise ParameterError(f"jobs must be an integer >= 1, got {self.jobs!r}")
        self.seeds = [int(s) for s in self.seeds]
        if self.rounds is not None and (isinstance(self.rounds, bool) or not isinstance(self.rounds, int)
                                        or self.rounds < 1):
            raise ParameterError(f"rounds must be None or an integer >= 1, got {self.rounds!r}")

    # -- settings --------------------------------------------------------------------
    @property
    def runs_dir(self) -> Path:
        """Where this experiment's Parquet runs go (``out_dir/runs``)."""
        return self.out_dir / "runs"

    def scale(self, quick: Any, full: Any) -> Any:
        """``quick`` under ``--quick``, else ``full`` (e.g. ``T = ctx.scale(2_000, 100_000)``)."""
        return quick if self.quick else full

    def horizon(self, quick: int, full: int) -> int:
        """The horizon in rounds: the ``--rounds`` override if given, else ``quick`` / ``full`` by scale."""
        self._read(int(self.scale(quick, full)))
        return int(self.rounds) if self.rounds is not None else int(self.scale(quick, full))

    def _read(self, base: int) -> None:
        """Note that the horizon was read; ``rounds_base`` keeps the largest horizon of this scale read."""
        self.rounds_read = True
        self.rounds_base = max(self.rounds_base or 0, base)

    def horizons(self, quick: list[int], full: list[int]) -> list[int]:
        """Increasing horizons (e.g. for a regret-vs-T fit): the list of this scale, or, under ``--rounds N``,
        that list rescaled to end at ``N`` (same ratios; duplicates after rounding dropped)."""
        base = sorted(int(h) for h in self.scale(quick, full))
        self._read(base[-1])
        if self.rounds is None:
            return base
        top = base[-1]
        return sorted({max(1, round(h * self.rounds / top)) for h in base[:-1]} | {int(self.rounds)})

    # -- logging and progress ----------------------------------------------------------
    @property
    def logger(self) -> logging.Logger:
        return logging.getLogger(f"nolo.experiments.{self.paper}.{self.id}")

    def log(self, message: str) -> None:
        """Log an informational message under ``nolo.experiments.<paper>.<id>``."""
        self.logger.info(message)

    def progress(self, iterable: Iterable | None = None, *, total: int | None = None, desc: str | None = None):
        """A progress bar (quiet when not on a terminal or under CI)."""
        return progress(iterable, total=total, desc=desc or f"{self.paper}/{self.id}", enabled=self.show_progress)

    # -- running -------------------------------------------------------------------------
    def sweep(self, specs, seeds: Iterable[int] | None = None):
        """Run every spec (an :class:`~nolo.experiments.spec.ExperimentSpec`, or a list of them) x
        every learner x every setting of its ``grid`` x every seed (``seeds`` defaults to ``ctx.seeds``)
        through the resumable sweep engine; returns the metrics of all runs as one pandas DataFrame
        (columns ``spec``, ``setting``, ``learner``, ``seed``, ``run_id``, ``t`` and the metrics)."""
        from nolo.experiments.sweep import run_sweep

        return run_sweep(
            specs,
            self.runs_dir,
            seeds=self.seeds if seeds is None else list(seeds),
            jobs=self.jobs,
            backend=self.backend,
            scheduler=self.scheduler,
            show_progress=self.show_progress,
            data_dir=self.data_dir,
        )

    @property
    def shared_runs_dir(self) -> Path:
        """Where ``map(..., shared=True)`` stores runs that several experiments of the paper use (``OUT/<paper>/_shared``)."""
        return self.out_dir.parent / "_shared"

    def map(self, func: Callable, tasks: list[dict], *, name: str | None = None, shared: bool = False,
            code_scope=None, packages=None):
        """Run ``func(**task)`` for each task (a JSON-able dict) through the sweep engine; returns the
        results as a list of pandas DataFrames, in task order.

        ``func`` must be a module-level function returning a pandas DataFrame or a dict of equal-length
        1-D arrays / scalars.  Each call is stored as one Parquet file whose id is derived from the
        function's name and the task, so a rerun skips finished tasks.  ``shared=True`` stores them in
        :attr:`shared_runs_dir`, so another experiment of the paper mapping the same tasks reuses them.
        ``code_scope``: the path prefixes of the source files the tasks' numbers depend on (default: all of nolo;
        a stored run is reused only while they are unchanged, :func:`nolo.experiments.sweep.code_version`);
        ``packages``: other installed distributions they depend on (a peer library: its version joins the key).
        """
        from nolo.experiments.sweep import run_map

        return run_map(
            func,
            tasks,
            self.shared_runs_dir if shared else self.runs_dir,
            name=name,
            jobs=self.jobs,
            backend=self.backend,
            scheduler=self.scheduler,
            show_progress=self.show_progress,
            code_scope=code_scope,
            packages=packages,
            data_dir=self.data_dir,
        )

    # -- output --------------------------------------------------------------------------
    def save_figure(self, fig, name: str) -> Path:
        """Save a matplotlib figure as ``out_dir/<name>.png`` (and close it); records it in ``plots``."""
        from nolo.experiments.plots import save_figure

        path = save_figure(fig, self.out_dir / f"{name}.png")
        if path not in self.plots:
            self.plots.append(path)
        return path
