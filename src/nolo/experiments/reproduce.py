"""``nolo reproduce``: run the registered experiments of a paper (or all) and write the report.

Output directory layout::

    OUT/summary.json            the machine-readable verdict (fixed shape, byte-reproducible)
    OUT/timings.json            seconds per experiment, runs reused / computed, wall-clock figures
    OUT/report.md, report.html  the report (both link the figures below by relative paths)
    OUT/<paper>/<id>/*.png      figures
    OUT/<paper>/<id>/runs/      one Parquet file per run + _index.json
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from nolo._extras import require
from nolo._validation import check_writable_dir
from nolo.datasets.paths import data_dir_scope
from nolo.exceptions import ParameterError
from nolo.experiments.context import Context
from nolo.experiments.registry import check_paper, get_experiments, load_experiment_modules
from nolo.experiments.report import (ExperimentOutcome, write_html, write_markdown, write_summary,
                                     write_timings)
from nolo.experiments.result import ExperimentResult

__all__ = ["reproduce", "ReproduceReport", "select_experiments", "check_rounds"]


class ReproduceReport:
    """What :func:`reproduce` did: the outcomes and the files written."""

    def __init__(self, outcomes: list[ExperimentOutcome], out: Path, quick: bool, rounds: int | None = None,
                 not_run: dict[str, str] | None = None):
        self.outcomes = outcomes
        self.out = out
        self.quick = quick
        self.rounds = rounds
        #: experiments of the selection that were not run, with the reason (``--rounds`` does not apply)
        self.not_run = dict(not_run or {})

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
    load_experiment_modules()
    check_paper(paper)
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


def check_rounds(rounds, exps, explicit: bool, known=()):
    """Validate ``rounds`` and split ``exps`` into those that take it and ``{key: reason}`` for the others.

    An experiment without a horizon in rounds cannot honour ``rounds``: when the user named it (``explicit``,
    i.e. ``--only``) that is a ParameterError (listing those of ``known`` that take it); in a whole paper's
    selection it is left out with its reason.
    """
    if rounds is None:
        return list(exps), {}
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ParameterError(f"rounds must be an integer >= 1 (the horizon of every learning curve), got {rounds!r}")
    takers = [e for e in exps if e.takes_rounds]
    others = {e.key: "no horizon in rounds to override (its size is estimator draws or samples)"
              for e in exps if not e.takes_rounds}
    if others and (explicit or not takers):
        able = [e.key for e in [*exps, *known] if e.takes_rounds]
        hint = f"; experiments that take it: {', '.join(dict.fromkeys(able))}" if able else ""
        raise ParameterError(f"rounds: {', '.join(others)} {'has' if len(others) == 1 else 'have'} no horizon in "
                             f"rounds to override (estimator draws or samples){hint}")
    return takers, others


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
    Client = require("dask.distributed", "dask", "backend 'dask'").Client
    try:
        with Client(scheduler, timeout=timeout, set_as_default=False):
            pass
    except Exception as exc:
        raise ParameterError(f"scheduler: cannot reach the Dask scheduler at {scheduler!r} within {timeout:g} s "
                             f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None


def reproduce(paper: str = "all", *, quick: bool = False, out: str | Path = "nolo-out", jobs: int = 1,
              backend: str = "local", scheduler: str | None = None, show_progress: bool | None = None,
              echo=None, only=None, seeds=None, data_dir: str | os.PathLike | None = None,
              force: bool = False, rounds: int | None = None, embed_figures: bool = False) -> ReproduceReport:
    """Run every experiment of ``paper`` ("all" for all) and write runs, figures, report, summary.json and
    timings.json.

    ``only``: experiment ids/keys to run; ``seeds``: the number of seeds (an int) or the list of seeds,
    overriding each experiment's; ``data_dir``: where the dataset files are (the run's context hands it to every task,
    local or on Dask; the environment is not changed);
    ``force``: recompute every run (runs made by the same code are reused otherwise); ``rounds``: the
    horizon of every learning curve, overriding the scale's (experiments declared ``takes_rounds``;
    the others are refused when named in ``only`` and left out otherwise -- ``ReproduceReport.not_run``).
    A run with ``rounds`` is not a paper-scale run: claims decidable only at paper scale are reported
    ``not_at_this_scale``; claims with a horizon are decided by the rounds they were measured at.
    ``embed_figures``: put the figures inside ``report.html`` (one self-contained file) instead of linking the
    PNG files beside it.
    An experiment that raises is recorded as failed (its traceback goes into the report) and the others
    still run.
    """
    from nolo.experiments.sweep import sweep_session

    exps, not_run = check_rounds(rounds, select_experiments(paper, only), explicit=bool(only),
                                 known=select_experiments(paper) if only and rounds is not None else ())
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
    out = check_writable_dir(out, "out")  # before any run: not a PermissionError once everything is computed
    if data_dir is not None:
        if not Path(data_dir).is_dir():
            raise ParameterError(f"data_dir must be an existing directory of dataset files, got {str(data_dir)!r}")
        data_dir = Path(data_dir).resolve()
    outcomes = []
    with sweep_session(force=force):
        for exp in exps:
            run_seeds = seeds if seeds is not None else list(range(exp.quick_seeds if quick else exp.full_seeds))
            ctx = Context(paper=exp.paper, id=exp.id, quick=quick, out_dir=out / exp.paper / exp.id,
                          seeds=run_seeds, jobs=jobs, backend=backend, scheduler=scheduler,
                          show_progress=show_progress, rounds=rounds, data_dir=data_dir)
            if echo:
                echo(f"running {exp.key}: {exp.title} ...")
            t0 = time.perf_counter()
            with sweep_session() as stats:
                try:
                    with data_dir_scope(ctx.data_dir):  # the experiment's own loads (its tasks carry it too)
                        result = exp.func(ctx)
                    if not isinstance(result, ExperimentResult):
                        raise ParameterError(f"experiment {exp.key} must return an ExperimentResult, "
                                             f"got {type(result).__name__}")
                    if rounds is not None and not ctx.rounds_read:
                        raise ParameterError(f"experiment {exp.key} declares takes_rounds but never read the "
                                             "horizon (ctx.horizon / ctx.horizons): --rounds was ignored")
                    result.plots = list(dict.fromkeys([*result.plots, *ctx.plots]))
                    outcome = ExperimentOutcome(exp, result, time.perf_counter() - t0, quick=quick,
                                                rounds=rounds, rounds_base=ctx.rounds_base)
                except Exception:  # one broken experiment must not hide the others' results
                    outcome = ExperimentOutcome(exp, ExperimentResult(), time.perf_counter() - t0,
                                                error=traceback.format_exc(), quick=quick, rounds=rounds)
                    if echo:
                        echo(f"  {exp.key} raised: {outcome.error.strip().splitlines()[-1]} "
                             "(traceback in the report)")
            outcome.runs_reused, outcome.runs_computed = stats.reused, stats.computed
            outcome.runs_failed = list(stats.failed)
            outcomes.append(outcome)
    write_summary(out / "summary.json", outcomes, quick)
    write_timings(out / "timings.json", outcomes, quick)
    write_markdown(out / "report.md", outcomes, quick)
    write_html(out / "report.html", outcomes, quick, embed_figures=embed_figures)
    return ReproduceReport(outcomes, out, quick, rounds, not_run)
