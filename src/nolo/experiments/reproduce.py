"""``nolo reproduce``: run the registered experiments of a paper (or all) and write the report.

Output directory layout::

    OUT/summary.json            the machine-readable verdict (fixed shape)
    OUT/report.md, report.html  the report (HTML embeds the figures)
    OUT/<paper>/<id>/*.png      figures
    OUT/<paper>/<id>/runs/      one Parquet file per run + index.json
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path

from nolo.exceptions import ParameterError
from nolo.experiments.context import Context
from nolo.experiments.registry import PAPERS, get_experiments, load_experiment_modules
from nolo.experiments.report import ExperimentOutcome, write_html, write_markdown, write_summary
from nolo.experiments.result import ExperimentResult

__all__ = ["reproduce", "ReproduceReport"]


class ReproduceReport:
    """What :func:`reproduce` did: the outcomes and the files written."""

    def __init__(self, outcomes: list[ExperimentOutcome], out: Path, quick: bool):
        self.outcomes = outcomes
        self.out = out
        self.quick = quick

    @property
    def all_hold(self) -> bool:
        return all(h for o in self.outcomes for _, h in o.verdicts)

    @property
    def failed(self) -> list[ExperimentOutcome]:
        return [o for o in self.outcomes if o.error]


def reproduce(paper: str = "all", *, quick: bool = False, out: str | Path = "nolo-out", jobs: int = 1,
              backend: str = "local", scheduler: str | None = None, show_progress: bool | None = None,
              echo=None) -> ReproduceReport:
    """Run every experiment of ``paper`` ("all" for all) and write runs, figures, report and summary.json.

    An experiment that raises is recorded as failed (its traceback goes into the report) and the
    others still run.
    """
    if paper != "all" and paper not in PAPERS:
        raise ParameterError(f"paper must be 'all' or one of {', '.join(PAPERS)}, got {paper!r}")
    load_experiment_modules()
    exps = get_experiments(paper)
    if not exps:
        raise ParameterError(f"no experiments are registered for paper {paper!r} (its module is not written yet)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    outcomes = []
    for exp in exps:
        n_seeds = exp.quick_seeds if quick else exp.full_seeds
        ctx = Context(paper=exp.paper, id=exp.id, quick=quick, out_dir=out / exp.paper / exp.id,
                      seeds=list(range(n_seeds)), jobs=jobs, backend=backend, scheduler=scheduler,
                      show_progress=show_progress)
        if echo:
            echo(f"running {exp.key}: {exp.title} ...")
        t0 = time.perf_counter()
        try:
            result = exp.func(ctx)
            if not isinstance(result, ExperimentResult):
                raise ParameterError(f"experiment {exp.key} must return an ExperimentResult, "
                                     f"got {type(result).__name__}")
            result.plots = list(dict.fromkeys([*result.plots, *ctx.plots]))
            outcome = ExperimentOutcome(exp, result, time.perf_counter() - t0)
        except Exception:  # one broken experiment must not hide the others' results
            outcome = ExperimentOutcome(exp, ExperimentResult(), time.perf_counter() - t0,
                                        error=traceback.format_exc())
            if echo:
                echo(f"  {exp.key} FAILED:\n{outcome.error}")
        outcomes.append(outcome)
    write_summary(out / "summary.json", outcomes, quick)
    write_markdown(out / "report.md", outcomes, quick)
    write_html(out / "report.html", outcomes, quick)
    return ReproduceReport(outcomes, out, quick)
