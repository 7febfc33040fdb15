"""``nolo plot``: a metric against rounds for the runs of any nolo output directory."""

from __future__ import annotations

import sys
import warnings

import click

from nolo.exceptions import NoloError


@click.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--metric", "-m", default=None,
              help="Recorded column to plot against t (default: the first of avg_clean_loss, error_rate, regret, "
                   "mistakes found).")
@click.option("--by", "by", default=None,
              help="Comma-separated columns whose values make the curves (default: setting and learner, or the "
                   "experiment's own columns such as algo).")
@click.option("--out", "out", default=None, type=click.Path(dir_okay=False),
              help="PNG file to write (default: DIRECTORY/<metric>.png).")
@click.option("--linear", is_flag=True, help="Linear axes instead of log-log.")
def plot(directory, metric, by, out, linear):
    """Plot METRIC vs rounds (mean over seeds, +-1 standard error) for every run under DIRECTORY."""
    from pathlib import Path

    from nolo._validation import check_writable_dir, check_writable_file
    from nolo.experiments import plots
    from nolo.experiments.store import load_results

    try:  # before reading the runs: the figure is written last
        if out is not None:
            check_writable_file(out, "--out")
        else:
            check_writable_dir(directory, "DIRECTORY (where the figure goes without --out)")
    except NoloError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            df = load_results(directory)
        except NoloError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
    for w in caught:
        click.echo(f"warning: {w.message}", err=True)
    if df.empty or "t" not in df:
        click.echo(f"error: no runs with a round column 't' under {directory}", err=True)
        sys.exit(2)
    if metric is None:
        metric = next((m for m in ("avg_clean_loss", "error_rate", "regret", "mistakes") if m in df), None)
        if metric is None:
            click.echo("error: give --metric (recorded columns: " + ", ".join(map(str, df.columns)) + ")", err=True)
            sys.exit(2)
    if metric not in df:
        click.echo(f"error: --metric must be a recorded column ({', '.join(map(str, df.columns))}), got {metric!r}",
                   err=True)
        sys.exit(2)
    groups = [c.strip() for c in by.split(",")] if by else None
    if groups:
        missing = [g for g in groups if g not in df]
        if missing:
            click.echo(f"error: --by: no column {', '.join(missing)}", err=True)
            sys.exit(2)
    try:
        fig = plots.metric_vs_rounds(df.dropna(subset=[metric]), metric, by=groups, loglog=not linear,
                                     title=str(directory))
    except NoloError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    path = plots.save_figure(fig, out or Path(directory) / f"{metric}.png")
    click.echo(f"wrote {path}")
