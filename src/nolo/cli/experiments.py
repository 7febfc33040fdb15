"""``nolo run``, ``nolo reproduce`` and ``nolo results``: thin wrappers over :mod:`nolo.experiments`."""

from __future__ import annotations

import logging
import os
import sys

import click

from nolo.exceptions import ParameterError

_BACKENDS = click.Choice(["local", "dask"])


def _check_backend(backend: str, scheduler: str | None) -> None:
    if backend == "dask" and not scheduler:
        raise click.UsageError("--backend dask needs --scheduler ADDRESS (e.g. tcp://127.0.0.1:8786)")


def _summary_table(df) -> str:
    from nolo.experiments.store import aggregate

    agg = aggregate(df, at="final")
    if agg.empty:
        return "(no runs)"
    keep = ["spec_name", "setting", "learner", "n_seeds"]
    for base in ("t", "avg_clean_loss", "error_rate", "mistakes", "regret", "queries", "time_per_round", "value"):
        for suffix in ("_mean", "_se"):
            if f"{base}{suffix}" in agg:
                keep.append(f"{base}{suffix}")
    extra = [c for c in agg.columns if c not in keep and (c.endswith("_mean") or c.endswith("_se"))]
    cols = keep + (extra if len(keep) <= 4 else [])
    return agg[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}")


@click.command()
@click.argument("spec", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "out", default="nolo-out/runs", show_default=True, type=click.Path(file_okay=False),
              help="Directory for the Parquet runs (existing complete runs are skipped).")
@click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(min=1), help="Parallel processes.")
@click.option("--backend", default="local", show_default=True, type=_BACKENDS)
@click.option("--scheduler", default=None, help="Dask scheduler address (with --backend dask).")
@click.option("--seeds", default=None, help="Comma-separated seeds, overriding the spec's.")
def run(spec, out, jobs, backend, scheduler, seeds):
    """Run the experiment SPEC (a YAML or TOML file): every learner x grid setting x seed."""
    from nolo.experiments.spec import ExperimentSpec, SpecError
    from nolo.experiments.sweep import run_sweep

    _check_backend(backend, scheduler)
    try:
        parsed = ExperimentSpec.from_file(spec)
    except SpecError as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)
    seed_list = None
    if seeds is not None:
        try:
            seed_list = [int(s) for s in seeds.split(",") if s.strip()]
        except ValueError:
            raise click.BadParameter(f"must be comma-separated non-negative integers, got {seeds!r}",
                                     param_hint="--seeds") from None
        if not seed_list or min(seed_list) < 0:
            raise click.BadParameter(f"must be comma-separated non-negative integers, got {seeds!r}",
                                     param_hint="--seeds")
    df = run_sweep(parsed, out, seeds=seed_list, jobs=jobs, backend=backend, scheduler=scheduler)
    click.echo(_summary_table(df))
    click.echo(f"runs in {out}")


@click.command()
@click.argument("paper", type=click.Choice(["all", "css10", "css11", "am", "oco", "demo"]))
@click.option("--quick", is_flag=True, help="Reduced version (fewer rounds and seeds); minutes on 2 cores.")
@click.option("--out", "out", default="nolo-out", show_default=True, type=click.Path(file_okay=False),
              help="Output directory (runs, figures, report.md/html, summary.json).")
@click.option("--jobs", "-j", default=os.cpu_count() or 1, show_default="all cores", type=click.IntRange(min=1),
              help="Parallel processes.")
@click.option("--backend", default="local", show_default=True, type=_BACKENDS)
@click.option("--scheduler", default=None, help="Dask scheduler address (with --backend dask).")
@click.option("--strict", is_flag=True, help="Exit with status 1 if any claim fails.")
def reproduce(paper, quick, out, jobs, backend, scheduler, strict):
    """Reproduce PAPER's experiments (or all): runs, figures, report and DIR/summary.json."""
    from nolo.experiments.report import fmt_number
    from nolo.experiments.reproduce import reproduce as _reproduce

    _check_backend(backend, scheduler)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    try:
        rep = _reproduce(paper, quick=quick, out=out, jobs=jobs, backend=backend, scheduler=scheduler,
                         echo=lambda m: click.echo(m, err=True))
    except ParameterError as exc:
        raise click.UsageError(str(exc)) from None
    rows = []
    for o in rep.outcomes:
        key = f"{o.experiment.paper}/{o.experiment.id}"
        if o.error:
            rows.append((key, "ERROR", f"{o.seconds:.1f}", []))
            continue
        failing = [f"{c.figure} = {fmt_number(o.result.figures[c.figure].value)}, required {c.op} "
                   f"{fmt_number(c.threshold)}" for c, h in o.verdicts if not h]
        rows.append((key, f"{sum(h for _, h in o.verdicts)}/{len(o.verdicts)}", f"{o.seconds:.1f}", failing))
    w0 = max([len(r[0]) for r in rows] + [10])
    click.echo(f"{'experiment':<{w0}}  {'claims':>7}  {'seconds':>7}")
    for key, claims, seconds, failing in rows:
        click.echo(f"{key:<{w0}}  {claims:>7}  {seconds:>7}")
        for f in failing:
            click.echo(f"{'':<{w0}}    FAILS: {f}")
    held = sum(h for o in rep.outcomes for _, h in o.verdicts)
    total = sum(len(o.verdicts) for o in rep.outcomes)
    click.echo(f"{held}/{total} claims hold; report: {rep.out / 'report.html'}; summary: {rep.out / 'summary.json'}")
    if rep.failed:
        sys.exit(1)
    if strict and not rep.all_hold:
        sys.exit(1)


@click.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--at", "at", default="final", show_default=True, type=click.Choice(["final", "all"]),
              help="Aggregate each run's last recorded row, or every recorded round.")
@click.option("--csv", "csv_path", default=None, type=click.Path(dir_okay=False),
              help="Also write the aggregated table as CSV.")
def results(directory, at, csv_path):
    """List and aggregate the runs stored under DIRECTORY: mean and standard error over seeds."""
    from nolo.experiments.store import aggregate, load_results

    df = load_results(directory)
    if df.empty:
        click.echo(f"no runs under {directory}")
        return
    agg = aggregate(df, at=at)
    click.echo(f"{df['run_id'].nunique()} runs under {directory}")
    if at == "final":
        click.echo(_summary_table(df))
    else:
        click.echo(agg.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if csv_path:
        agg.to_csv(csv_path, index=False)
        click.echo(f"wrote {csv_path}")
