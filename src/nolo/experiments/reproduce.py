"""``nolo reproduce``: run the registered experiments of a paper (or all) and write the report.

Output directory layout::

    OUT/summary.json            the machine-readable verdict (fixed shape, byte-reproducible)
    OUT/timings.json            seconds per experiment, runs reused / computed, wall-clock figures
    OUT/report.md, report.html  the report (HTML embeds the figures)
    OUT/<paper>/<id>/*.png      figures
    OUT/<paper>/<id>/runs/      one Parquet file per run + _index.json
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from nolo.exceptions import ParameterError
from nolo.experiments.context import Context
from nolo.experiments.registry import PAPERS, get_experiments, load_experiment_modules
from nolo.experiments.report import (ExperimentOutcome, write_html, write_markdown, write_summary,
                                     write_timings)
from nolo.experiments.result import ExperimentResult

__all__ = ["reproduce", "ReproduceReport", "select_experiments"]


class ReproduceReport:
    """What :func:`reproduce` did: the outcomes and the files written."""

    def __init__(self, outcomes: list[ExperimentOutcome], out: Path, quick: bool):
        self.outcomes = outcomes
        self.out = out
        self.quick = quick

    @property
    def all_hold(self) -> bool:
        """No claim fails at this scale (claims not decidable at this scale do not count)."""
        return not any(st == "fails" for o in self.outcomes for _, st in o.statuses)

    @property
    def failed(self) -> list[ExperimentOutcome]:
        """The experiments that raised."""
        return [o for o in self.outcomes if o.error]


def select_experiments(paper: str = "all", only=None):
    """The experiments of ``paper`` ("all" for every paper), restricted to ``only`` (ids such as
    ``error-curves`` or keys such as ``am/error-curves``) when given."""
    if paper != "all" and paper not in PAPERS:
        raise ParameterError(f"paper must be 'all' or one of {', '.join(PAPERS)}, got {paper!r}")
    load_experiment_modules()
    exps = get_experiments(paper)
    if not exps:
        raise ParameterError(f"no experiments are registered for paper {paper!r} (its module is not written yet)")
    if only:
        wanted = [only] if isinstance(only, str) else list(only)
        chosen = [e for e in exps if e.key in wanted or e.id in wanted]
        unknown = [w for w in wanted if not any(w in (e.key, e.id) for e in exps)]
        if unknown:
            raise ParameterError(f"only: no experiment {', '.join(map(repr, unknown))} in {paper!r}; known: "
                                 + ", ".join(e.key for e in exps))
        exps = chosen
    return exps


def check_scheduler(scheduler: str, timeout: float = 5.0) -> None:
    """Connect once to the Dask scheduler; ParameterError naming the address if it does not answer."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(scheduler if "://" in scheduler else f"tcp://{scheduler}")
    if parts.scheme in ("tcp", "tls") and parts.hostname:
        try:
            with socket.create_connection((parts.hostname, parts.port or 8786), timeout=timeout):
                pass
        except OSError as exc:
            raise ParameterError(f"scheduler: nothing answers at {scheduler!r} ({exc.strerror or exc}); start one "
                                 "with 'dask scheduler' or use --backend local") from None
    try:
        from dask.distributed import Client
    except ImportError as exc:  # pragma: no cover - dask is a dependency
        raise ParameterError(f"backend 'dask' needs dask.distributed ({exc})") from None
    try:
        with Client(scheduler, timeout=timeout, set_as_default=False):
            pass
    except Exception as exc:
        raise ParameterError(f"scheduler: cannot reach the Dask scheduler at {scheduler!r} within {timeout:g} s "
                             f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None


def reproduce(paper: str = "all", *, quick: bool = False, out: str | Path = "nolo-out", jobs: int = 1,
              backend: str = "local", scheduler: str | None = None, show_progress: bool | None = None,
              echo=None, only=None, seeds=None, data_dir: str | os.PathLike | None = None,
              force: bool = False) -> ReproduceReport:
    """Run every experiment of ``paper`` ("all" for all) and write runs, figures, report, summary.json and
    timings.json.

    ``only``: experiment ids/keys to run; ``seeds``: the number of seeds (an int) or the list of seeds,
    overriding each experiment's; ``data_dir``: where the dataset files are (sets ``NOLO_DATA_DIR``);
    ``force``: recompute every run (runs made by the same code are reused otherwise).  An experiment
    that raises is recorded as failed (its traceback goes into the report) and the others still run.
    """
    from nolo.experiments.sweep import sweep_session

    exps = select_experiments(paper, only)
    if seeds is not None:
        if isinstance(seeds, int) and not isinstance(seeds, bool):
            if seeds < 1:
                raise ParameterError(f"seeds must be a number >= 1 or a list of seeds, got {seeds!r}")
            seeds = list(range(seeds))
        else:
            seeds = [int(s) for s in seeds]
            if not seeds or min(seeds) < 0:
                raise ParameterError(f"seeds must be a non-empty list of non-negative integers, got {seeds!r}")
    if backend == "dask":
        if not scheduler:
            raise ParameterError("scheduler must be a Dask scheduler address (e.g. 'tcp://127.0.0.1:8786') "
                                 "with backend='dask'")
        check_scheduler(scheduler)
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParameterError(f"out: cannot create the output directory {str(out)!r} ({exc.strerror})") from None
    saved_env = os.environ.get("NOLO_DATA_DIR")
    if data_dir is not None:
        if not Path(data_dir).is_dir():
            raise ParameterError(f"data_dir must be an existing directory of dataset files, got {str(data_dir)!r}")
        os.environ["NOLO_DATA_DIR"] = str(Path(data_dir).resolve())
    outcomes = []
    try:
        with sweep_session(force=force):
            for exp in exps:
                run_seeds = seeds if seeds is not None else list(range(exp.quick_seeds if quick else exp.full_seeds))
                ctx = Context(paper=exp.paper, id=exp.id, quick=quick, out_dir=out / exp.paper / exp.id,
                              seeds=run_seeds, jobs=jobs, backend=backend, scheduler=scheduler,
                              show_progress=show_progress)
                if echo:
                    echo(f"running {exp.key}: {exp.title} ...")
                t0 = time.perf_counter()
                with sweep_session() as stats:
                    try:
                        result = exp.func(ctx)
                        if not isinstance(result, ExperimentResult):
                            raise ParameterError(f"experiment {exp.key} must return an ExperimentResult, "
                                                 f"got {type(result).__name__}")
                        result.plots = list(dict.fromkeys([*result.plots, *ctx.plots]))
                        outcome = ExperimentOutcome(exp, result, time.perf_counter() - t0, quick=quick)
                    except Exception:  # one broken experiment must not hide the others' results
                        outcome = ExperimentOutcome(exp, ExperimentResult(), time.perf_counter() - t0,
                                                    error=traceback.format_exc(), quick=quick)
                        if echo:
                            echo(f"  {exp.key} raised: {outcome.error.strip().splitlines()[-1]} "
                                 "(traceback in the report)")
                outcome.runs_reused, outcome.runs_computed = stats.reused, stats.computed
                outcome.runs_failed = list(stats.failed)
                outcomes.append(outcome)
    finally:
        if data_dir is not None:
            if saved_env is None:
                os.environ.pop("NOLO_DATA_DIR", None)
            else:
                os.environ["NOLO_DATA_DIR"] = saved_env
    write_summary(out / "summary.json", outcomes, quick)
    write_timings(out / "timings.json", outcomes, quick)
    write_markdown(out / "report.md", outcomes, quick)
    write_html(out / "report.html", outcomes, quick)
    return ReproduceReport(outcomes, out, quick)
