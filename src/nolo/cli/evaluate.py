"""``nolo evaluate LOG --policy MODEL``: off-policy estimates of a policy's clean error from a log of noisy bandit
feedback, read in chunks (Parquet file, directory of Parquet shards, or CSV), flip-corrected with known or estimated
rates.  The library function is :func:`nolo.offpolicy.file_eval.evaluate_log`; see docs/offpolicy.md.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import click

from nolo.exceptions import NumericalError, ParameterError, PersistenceError

__all__ = ["evaluate"]


def _rates_from_json(path: str, level_hint: float = 0.9):
    """(rho0, rho1, (se0, se1) or None) from ``nolo estimate-noise --json`` output: the standard errors from its
    bootstrap interval (half its width over the normal quantile of its level)."""
    from scipy import stats

    try:
        data = json.loads(Path(path).read_text())
        r0, r1 = float(data["rho0_hat"]), float(data["rho1_hat"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ParameterError(f"--rates {path}: not the JSON `nolo estimate-noise --json` writes ({exc})") from None
    se = None
    iv = data.get("interval")
    if iv:
        z = stats.norm.ppf(0.5 + float(iv.get("level", level_hint)) / 2)
        se = tuple((float(iv[k][1]) - float(iv[k][0])) / (2 * z) for k in ("rho0", "rho1"))
    return r0, r1, se


@click.command("evaluate")
@click.argument("log", type=click.Path(exists=False))
@click.option("--policy", required=True,
              help="'uniform' or a bandit learner saved with save() (e.g. model.npz): the policy to evaluate.")
@click.option("--n-classes", type=click.IntRange(min=2), default=None,
              help="Number of labels K (default: the policy's).")
@click.option("--rho0", type=click.FloatRange(0, 0.5, max_open=True), default=None,
              help="Known rate P(bit 1 | played label wrong).")
@click.option("--rho1", type=click.FloatRange(0, 0.5, max_open=True), default=None,
              help="Known rate P(bit 0 | played label right).")
@click.option("--rates", "rates_json", type=click.Path(dir_okay=False), default=None,
              help="Rates estimated by `nolo estimate-noise --json` (their interval widens ours).")
@click.option("--methods", default="ips,snips,dr,switch-dr", show_default=True,
              help="Comma-separated among dm, ips, snips, dr, switch-dr.")
@click.option("--reward-model", type=click.Choice(["ridge", "none"]), default="ridge", show_default=True,
              help="The reward model of dm/dr/switch-dr: a progressive per-label ridge of the bit on the features.")
@click.option("--level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95, show_default=True)
@click.option("--chunk-rows", type=click.IntRange(min=1), default=65_536, show_default=True,
              help="Rows read at a time (memory is bounded by one chunk).")
@click.option("--by-shard", is_flag=True,
              help="LOG is a directory of Parquet shards: evaluate each shard apart (its own reward model) and merge.")
@click.option("--scheduler", default=None,
              help="With --by-shard: the dask.distributed scheduler address to run one task per shard on (the same "
                   "estimate as without it).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of text.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def evaluate(log, policy, n_classes, rho0, rho1, rates_json, methods, reward_model, level, chunk_rows, by_shard,
             scheduler, as_json, quiet):
    """Estimate how often POLICY would err on the contexts of LOG, from the logged (played, propensity, bit) rows.

    LOG: a Parquet file, a directory of Parquet shards or a CSV, with columns played, propensity (the probability
    the logger played that label) and bit (or feedback: 1 when the played label was reported right); every other
    column except round and row is a feature.  With rates (--rho0/--rho1 or --rates) the estimates are
    flip-corrected; the uncorrected ones (what VW and OBP report) are printed beside them.
    """
    from nolo.offpolicy.file_eval import evaluate_log, evaluate_shards

    se = None
    try:
        if rates_json is not None:
            if rho0 is not None or rho1 is not None:
                raise ParameterError("give --rates or --rho0/--rho1, not both")
            rho0, rho1, se = _rates_from_json(rates_json)
        wanted = tuple(m.strip() for m in methods.split(",") if m.strip())
        options = dict(n_classes=n_classes, rho0=rho0, rho1=rho1, rate_se=se, methods=wanted,
                       reward_model=reward_model, level=level, chunk_rows=chunk_rows)
        if scheduler is not None and not by_shard:
            raise ParameterError("--scheduler runs shards as tasks: give --by-shard with it")
        if by_shard:
            res = evaluate_shards(log, policy, scheduler=scheduler, **options)
        else:
            res = evaluate_log(log, policy, progress=not quiet, **options)
    except (ParameterError, PersistenceError) as exc:
        raise click.UsageError(str(exc)) from None
    except NumericalError as exc:
        raise click.ClickException(f"numerical trouble: {exc}") from None
    if as_json:
        click.echo(json.dumps(res.as_dict()))
        return
    pct = f"{100 * level:.0f} %"
    click.echo(f"{res.n_rows} logged rows, effective sample size {res.ess:.0f}, largest importance weight "
               f"{res.max_weight:.3g}, {res.seconds:.2f} s")
    if res.rates is not None:
        click.echo(f"flip rates rho0 = {res.rates[0]:.4f}, rho1 = {res.rates[1]:.4f}"
                   + (" (estimated: intervals widened)" if se is not None else " (given)"))
    click.echo(f"{'method':<10} {'error (corrected)':>18} {pct + ' interval':>20}   {'error (uncorrected)':>19}")
    for m, raw in res.uncorrected.items():
        cor = res.corrected.get(m)
        left = f"{cor.error:>18.4f} {'[%.4f, %.4f]' % cor.error_ci:>20}" if cor else f"{'-':>18} {'-':>20}"
        tau = "" if math.isnan(raw.tau) else f"   (tau = {raw.tau:g})"
        click.echo(f"{m:<10} {left}   {raw.error:>19.4f}{tau}")
    for w in res.warnings:
        click.echo(f"warning: {w}", err=True)
