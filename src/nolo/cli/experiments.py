"""``nolo run``, ``nolo reproduce`` and ``nolo results``: thin wrappers over :mod:`nolo.experiments`.

User errors (a bad spec, a missing dataset, an output directory that cannot be
created or written to -- checked before any run --, an unreachable Dask
scheduler) print one message and exit with status 2, without a traceback.

Stopping a run: Ctrl-C or SIGTERM (what batch schedulers send) stops the
sweep and its worker processes (exit status 130 / 143); after ``kill -9`` of
the command the ``--jobs`` workers notice within a second and exit.  Rerun
the same command to resume: the runs already written are reused.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import signal
import sys
import warnings
from pathlib import Path

import click

from nolo._validation import check_writable_dir, check_writable_file
from nolo.exceptions import NoloError
# without the platform's extra this import fails, and nolo.cli._group lists these commands as stand-ins naming the pip
# command
from nolo.experiments.registry import check_paper, load_experiment_modules

_BACKENDS = click.Choice(["local", "dask"])
_log = logging.getLogger("nolo.cli")


def _check_backend(backend: str, scheduler: str | None) -> None:
    if backend == "dask" and not scheduler:
        raise click.UsageError("--backend dask needs --scheduler ADDRESS (e.g. tcp://127.0.0.1:8786)")
    if scheduler and backend != "dask":
        raise click.UsageError("--scheduler is only used with --backend dask")


def _fail(message: str, code: int = 2):
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _setup_logging(quiet: bool, verbose: bool) -> None:
    level = logging.WARNING if quiet else (logging.DEBUG if verbose else logging.INFO)
    logging.basicConfig(level=level, format="%(name)s: %(message)s", force=True)
    if not verbose:  # third-party chatter (distributed, numba) only with --verbose
        for name in ("distributed", "numba", "matplotlib", "asyncio"):
            logging.getLogger(name).setLevel(max(level, logging.WARNING))
        # loky replaces a worker whose memory grew (a cache filling up) and says so: harmless for a sweep
        warnings.filterwarnings("ignore", message="A worker stopped while some jobs were given to the executor")


def numba_cache_is_cold() -> bool:
    """True when no compiled kernel of nolo is cached yet (the first compiled call will take a while)."""
    root = Path(importlib.util.find_spec("nolo").origin).parent
    dirs = [root]
    if os.environ.get("NUMBA_CACHE_DIR"):
        dirs.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    return not any(next(d.rglob("*.nbi"), None) for d in dirs if d.is_dir())


def _say_compiling(echo) -> None:
    os.environ["NOLO_COMPILE_NOTE"] = "0"  # said here once, not by every worker's first call (nolo._compiling)
    if numba_cache_is_cold():
        echo("compiling nolo's numba kernels, once (about a minute; cached for every later run) ...")


class _Terminated(KeyboardInterrupt):
    """SIGTERM, delivered as an interruption so that the sweep stops its workers on the way out."""


@contextlib.contextmanager
def _interruptible():
    """SIGTERM -> an interruption; Ctrl-C / SIGTERM exit 130 / 143 with a one-line message, no traceback."""
    def on_term(signum, frame):
        raise _Terminated()

    old = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    except KeyboardInterrupt as exc:
        code = 143 if isinstance(exc, _Terminated) else 130
        click.echo("interrupted: the runs written so far are kept; rerun the same command to resume", err=True)
        sys.exit(code)
    finally:
        signal.signal(signal.SIGTERM, old)


def _make_out(out: str) -> None:
    """Create ``--out`` and check that files can be written in it, before any run."""
    try:
        check_writable_dir(out, "--out")
    except NoloError as exc:
        _fail(str(exc))


def _parse_seeds(seeds: str | None, count_ok: bool = False):
    """``--seeds``: "0,1,2" (a list) or, where ``count_ok``, "5" (that many seeds, 0..4)."""
    if seeds is None:
        return None
    try:
        parts = [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError:
        parts = []
    if not parts or min(parts) < 0:
        raise click.BadParameter(f"must be comma-separated non-negative integers, got {seeds!r}",
                                 param_hint="--seeds")
    if count_ok and len(parts) == 1 and "," not in seeds:
        if parts[0] < 1:
            raise click.BadParameter(f"a number of seeds must be >= 1, got {seeds!r}", param_hint="--seeds")
        return parts[0]
    return parts


def _readable_settings(df):
    """Map tasks' ``setting`` (the task as JSON) as columns -- the task keys that vary between runs -- and
    the group keys to aggregate by (those, and recorded text columns such as ``algo``)."""
    import json

    import pandas as pd

    keys = [c for c in df.columns if c not in ("experiment", "kind", "spec_name", "setting", "learner", "seed",
                                                 "run_id") and not pd.api.types.is_numeric_dtype(df[c]) and 1 < df[c].nunique() <= 50]
    if "setting" not in df or "kind" not in df or not (df["kind"] == "map").any():
        return df, keys
    try:
        tasks = df["setting"].map(lambda s: json.loads(s) if isinstance(s, str) else {})
    except ValueError:
        return df, keys
    table = pd.DataFrame(tasks.tolist(), index=df.index)
    out = df.drop(columns=["setting"])
    for c in table.columns:
        if c == "seed" or table[c].astype(str).nunique() <= 1:
            continue
        if c not in out.columns:
            out[c] = table[c].astype(str)
        if c not in keys:
            keys.append(c)
    return out, keys


def _summary_table(df) -> str:
    from nolo.experiments.store import aggregate

    df, by = _readable_settings(df)
    agg = aggregate(df, at="final", by=by)
    if agg.empty:
        return "(no runs)"
    keys = [c for c in agg.columns if not c.endswith(("_mean", "_se")) and c != "n_seeds"]
    keep = [c for c in keys if agg[c].notna().any() and agg[c].astype(str).nunique() > 1] or keys[:1]
    keep.append("n_seeds")
    for base in ("t", "avg_clean_loss", "error_rate", "mistakes", "regret", "queries", "time_per_round", "value"):
        for suffix in ("_mean", "_se"):
            if f"{base}{suffix}" in agg:
                keep.append(f"{base}{suffix}")
    extra = [c for c in agg.columns if c not in keep and c.endswith("_mean")]
    cols = keep + (extra[:6] if not any(c.endswith("_mean") for c in keep) else [])
    return agg[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}")


def _overview(df, failed) -> str:
    """One line per experiment directory: runs, failed runs, recorded columns."""
    lines = []
    w = max([len(str(e)) for e in df["experiment"].unique()] + [10])
    lines.append(f"{'experiment':<{w}}  {'kind':<4}  {'runs':>5}  {'failed':>6}  columns")
    for exp, part in df.groupby("experiment", sort=True):
        cols = [c for c in part.columns if c not in ("experiment", "kind", "spec_name", "setting", "learner",
                                                      "seed", "run_id") and part[c].notna().any()]
        nf = int((failed["experiment"] == exp).sum()) if len(failed) else 0
        kinds = "/".join(sorted(part["kind"].dropna().unique()))
        shown = ", ".join(cols[:8]) + (", ..." if len(cols) > 8 else "")
        lines.append(f"{exp:<{w}}  {kinds:<4}  {part['run_id'].nunique():>5}  {nf:>6}  {shown}")
    return "\n".join(lines)


_verbosity = [click.option("--quiet", "-q", is_flag=True, help="Only warnings, errors and the final summary."),
              click.option("--verbose", "-v", is_flag=True, help="Debug messages, including other libraries'.")]


def _with_verbosity(f):
    for opt in reversed(_verbosity):
        f = opt(f)
    return f


_STOPPING = ("Stopping: Ctrl-C or SIGTERM stops the workers too; after kill -9 they exit within a second. "
             "Rerun the same command to resume (finished runs are reused).")


@click.command(epilog=_STOPPING)
@click.argument("spec", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "out", default="nolo-out/runs", show_default=True, type=click.Path(file_okay=False),
              help="Directory for the Parquet runs (complete runs made by the same code are reused).")
@click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(min=1), help="Parallel processes.")
@click.option("--backend", default="local", show_default=True, type=_BACKENDS)
@click.option("--scheduler", default=None, help="Dask scheduler address (with --backend dask).")
@click.option("--seeds", default=None, help="Comma-separated seeds, overriding the spec's.")
@click.option("--force", is_flag=True, help="Recompute every run, even those already in --out.")
@_with_verbosity
def run(spec, out, jobs, backend, scheduler, seeds, force, quiet, verbose):
    """Run the experiment SPEC (a YAML or TOML file): every learner x grid setting x seed."""
    from nolo.experiments.spec import ExperimentSpec, SpecError
    from nolo.experiments.sweep import run_sweep, sweep_session

    _check_backend(backend, scheduler)
    _setup_logging(quiet, verbose)
    try:
        parsed = ExperimentSpec.from_file(spec)
    except SpecError as exc:
        _fail(str(exc))
    seed_list = _parse_seeds(seeds)
    _make_out(out)
    if backend == "dask":
        from nolo.experiments.reproduce import check_scheduler

        try:
            check_scheduler(scheduler)
        except NoloError as exc:
            _fail(str(exc))
    if not quiet:
        _say_compiling(lambda m: click.echo(m, err=True))
    with _interruptible(), sweep_session() as stats:
        try:
            df = run_sweep(parsed, out, seeds=seed_list, jobs=jobs, backend=backend, scheduler=scheduler,
                           force=force)
        except (NoloError, FileNotFoundError) as exc:  # a missing dataset, a bad component, ...
            _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    click.echo(_summary_table(df) if not df.empty else "(no rows: every run failed)")
    for path, error in stats.failed:
        click.echo(f"failed run {Path(path).name}: {error}", err=True)
    click.echo(f"{stats.reused} runs reused, {stats.computed} computed"
               + (f", {len(stats.failed)} failed" if stats.failed else "") + f"; runs in {out}")


@click.command(epilog=_STOPPING)
@click.argument("paper", metavar="PAPER")
@click.option("--quick", is_flag=True, help="Reduced version (fewer rounds and seeds); minutes on 2 cores.")
@click.option("--out", "out", default="nolo-out", show_default=True, type=click.Path(file_okay=False),
              help="Output directory (runs, figures, report.md/html, summary.json, timings.json).")
@click.option("--only", "only", multiple=True, metavar="EXPERIMENT",
              help="Run only this experiment (an id such as error-curves, or paper/id); repeatable.")
@click.option("--seeds", default=None, metavar="N|LIST",
              help="Number of seeds (e.g. 3) or a comma-separated list, overriding each experiment's.")
@click.option("--rounds", "rounds", default=None, type=click.IntRange(min=1), metavar="N",
              help="Horizon of every learning curve (N rounds), overriding the scale's; experiments without "
                   "one (estimator draws) are refused with --only and left out otherwise. Claims decided only "
                   "at paper scale are then reported as not decidable.")
@click.option("--data-dir", "data_dir", default=None, type=click.Path(file_okay=False),
              help="Directory of the dataset files (MNIST, USPS, ...); default: $NOLO_DATA_DIR, "
                   "else ~/.cache/nolo/data.")
@click.option("--jobs", "-j", default=os.cpu_count() or 1, show_default="all cores", type=click.IntRange(min=1),
              help="Parallel processes.")
@click.option("--backend", default="local", show_default=True, type=_BACKENDS)
@click.option("--scheduler", default=None, help="Dask scheduler address (with --backend dask).")
@click.option("--force", is_flag=True, help="Recompute every run instead of reusing those already in --out.")
@click.option("--strict", is_flag=True,
              help="Exit with status 1 if any claim fails (deferred claims and claims within noise do not).")
@click.option("--embed-figures", "embed_figures", is_flag=True,
              help="Put the figures inside report.html (one self-contained, larger file) instead of linking "
                   "the PNG files beside it.")
@_with_verbosity
def reproduce(paper, quick, out, only, seeds, rounds, data_dir, jobs, backend, scheduler, force, strict,
              embed_figures, quiet, verbose):
    """Reproduce PAPER's experiments (or all): runs, figures, report and OUT/summary.json.

    PAPER is all, demo, css10, css11, am, oco or practice, or a paper that another installed package adds
    (entry point group nolo.papers)."""
    from nolo.experiments.report import console_summary
    from nolo.experiments.reproduce import reproduce as _reproduce

    load_experiment_modules()  # the installed papers (entry points): nolo's and any other package's
    try:
        check_paper(paper)
    except NoloError as exc:
        raise click.BadParameter(str(exc), param_hint="PAPER") from None
    _check_backend(backend, scheduler)
    _setup_logging(quiet, verbose)
    seed_arg = _parse_seeds(seeds, count_ok=True)
    if data_dir is not None and not Path(data_dir).is_dir():
        raise click.BadParameter(f"no such directory: {data_dir!r}", param_hint="--data-dir")
    _make_out(out)
    err = (lambda m: None) if quiet else (lambda m: click.echo(m, err=True))
    _say_compiling(err)
    with _interruptible():
        try:
            rep = _reproduce(paper, quick=quick, out=out, jobs=jobs, backend=backend, scheduler=scheduler,
                             echo=err, only=list(only) or None, seeds=seed_arg, data_dir=data_dir, force=force,
                             rounds=rounds, embed_figures=embed_figures)
        except NoloError as exc:
            _fail(str(exc))
    for line in console_summary(rep.outcomes, rep.quick, rep.out, not_run=rep.not_run):
        click.echo(line)
    if paper in ("all", "am") and importlib.util.find_spec("vowpalwabbit") is None and not quiet:
        click.echo("note: the Vowpal Wabbit reference curves were skipped; pip install 'nolo[bench]' adds them")
    if rep.failed:
        sys.exit(1)
    if strict and not rep.all_hold:
        sys.exit(1)


@click.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--at", "at", default="final", show_default=True, type=click.Choice(["final", "all"]),
              help="Aggregate each run's last recorded row, or every recorded round.")
@click.option("--kind", default="all", show_default=True, type=click.Choice(["all", "run", "map"]),
              help="Learner runs of specs ('run'), experiment tasks ('map'), or both.")
@click.option("--csv", "csv_path", default=None, type=click.Path(dir_okay=False),
              help="Also write the aggregated table as CSV.")
def results(directory, at, kind, csv_path):
    """List and aggregate the runs stored under DIRECTORY (any nolo output directory, searched
    recursively): mean and standard error over seeds."""
    import warnings

    from nolo.experiments.store import aggregate, load_results

    if csv_path:
        try:
            check_writable_file(csv_path, "--csv")
        except NoloError as exc:
            _fail(str(exc))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            df = load_results(directory, kind=kind)
            failed = load_results(directory, kind=kind, failed=True)
        except NoloError as exc:
            _fail(str(exc))
    for message in dict.fromkeys(str(w.message) for w in caught):  # both loads read each file's metadata: once each
        click.echo(f"warning: {message}", err=True)
    if df.empty and failed.empty:
        click.echo(f"no runs under {directory}")
        return
    try:
        agg = aggregate(df, at=at) if not df.empty else df
    except NoloError as exc:
        _fail(str(exc))
    click.echo(f"{df['run_id'].nunique()} runs under {directory}" + (f", {len(failed)} failed" if len(failed) else ""))
    if not df.empty and df["experiment"].nunique() > 1:
        click.echo(_overview(df, failed))
        click.echo(f"for one experiment's table: nolo results {Path(directory) / 'EXPERIMENT'}; "
                   f"curves: nolo plot {Path(directory) / 'EXPERIMENT'}; all rows in Python: "
                   f"nolo.experiments.load_results({str(directory)!r})")
    elif not df.empty:
        if at == "final":
            click.echo(_summary_table(df))
        else:
            click.echo(agg.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    for _, r in failed.iterrows():
        click.echo(f"failed: {r['experiment']} {r['run_id']}: {r['error']}")
    if csv_path:
        agg.to_csv(csv_path, index=False)
        click.echo(f"wrote {csv_path}")
