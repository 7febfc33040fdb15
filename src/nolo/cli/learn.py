"""``nolo learn LOG --out model.npz``: train a policy from a log of noisy bandit feedback (Parquet file, directory of
Parquet shards, or CSV), read in chunks, each chunk through the learner's compiled batch update (``learn_many``);
``--resume`` continues a saved learner (warm start), and the saved model goes on learning online with ``act``/``learn``
or is evaluated with ``nolo evaluate``.  See docs/offpolicy.md#learning-from-a-log.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from nolo.exceptions import NumericalError, ParameterError, PersistenceError
from nolo.offpolicy.learn import WEIGHTINGS

__all__ = ["learn", "LEARNERS"]

#: the learners whose update is a regression of the bit on (context, label): sound on another policy's log
LEARNERS = ("default", "fastcb", "squarecb", "linucb")


def _build(name: str, K: int, rho0: float, rho1: float, seed: int):
    from nolo.learners import bandit as B

    if name == "default":
        return B.default_learner(K, rho0=rho0, rho1=rho1, seed=seed)
    cls = {"fastcb": B.FastCB, "squarecb": B.SquareCB, "linucb": B.LinUCB}[name]
    return cls(n_classes=K, rho0=rho0, rho1=rho1, seed=seed)


@click.command("learn")
@click.argument("log", type=click.Path(exists=False))
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="Where to save the learner (.npz).")
@click.option("--learner", type=click.Choice(LEARNERS), default="default", show_default=True,
              help="default: default_learner (AutoCB); the others as named.  Only learners whose update regresses "
                   "the bit on (context, label) learn soundly from another policy's log.")
@click.option("--resume", type=click.Path(dir_okay=False), default=None,
              help="Continue a learner saved earlier (warm start) instead of a new one.")
@click.option("--n-classes", type=click.IntRange(min=2), default=None, help="Number of labels K (new learner).")
@click.option("--rho0", type=click.FloatRange(0, 0.5, max_open=True), default=None, help="Flip rate P(bit 1 | wrong).")
@click.option("--rho1", type=click.FloatRange(0, 0.5, max_open=True), default=None, help="Flip rate P(bit 0 | right).")
@click.option("--rates", "rates_json", type=click.Path(dir_okay=False), default=None,
              help="Rates estimated by `nolo estimate-noise --json`.")
@click.option("--weighting", type=click.Choice(WEIGHTINGS), default="none", show_default=True,
              help="importance: learn row i about 1/(K p_i) times, so a non-uniform "
                   "logger's log weighs like a uniform one's (docs/offpolicy.md#learning-from-a-log).")
@click.option("--seed", type=click.IntRange(min=0, max=2**32 - 1), default=0, show_default=True)
@click.option("--chunk-rows", type=click.IntRange(min=1), default=65_536, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of text.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def learn(log, out, learner, resume, n_classes, rho0, rho1, rates_json, weighting, seed, chunk_rows, as_json,
          quiet):
    """Learn a policy from LOG (columns played, bit or feedback, features; propensity optional) and save it to OUT.

    The flip rates must be given (--rho0/--rho1 or --rates): a learner that estimated them online would read them
    through its own exploration probabilities, which are not the logger's.
    """
    from nolo.cli.evaluate import _rates_from_json
    from nolo.learners.base import Learner
    from nolo.offpolicy.file_eval import _row_count
    from nolo.offpolicy.learn import check_learns_off_policy, learn_log
    from nolo.offpolicy.logs import iter_log
    from nolo.random import as_generator

    from nolo._validation import check_writable_file

    t0 = time.perf_counter()
    try:
        check_writable_file(out, "--out")  # before any learning: the model is saved only at the end
        if rates_json is not None:
            if rho0 is not None or rho1 is not None:
                raise ParameterError("give --rates or --rho0/--rho1, not both")
            rho0, rho1, _ = _rates_from_json(rates_json)
        if resume is not None:
            model = Learner.load(resume)
            if not hasattr(model, "learn_many"):
                raise ParameterError(f"--resume {resume}: a {type(model).__name__} cannot learn from a log")
            check_learns_off_policy(model)
            K = int(model.n_classes)
            if n_classes is not None and n_classes != K:
                raise ParameterError(f"--n-classes {n_classes} but the resumed learner plays {K} labels")
        else:
            if rho0 is None or rho1 is None:
                raise ParameterError("the flip rates are needed: --rho0 and --rho1, or --rates (nolo estimate-noise "
                                     "--json); a learner estimating them online reads them through its own "
                                     "exploration, not the logger's")
            if n_classes is None:
                raise ParameterError("--n-classes is needed for a new learner")
            K = n_classes
            model = _build(learner, K, rho0, rho1, seed)
        bar = None
        if not quiet:
            from tqdm import tqdm

            bar = tqdm(total=_row_count(Path(log)), unit=" rows", unit_scale=True, desc="learn", leave=False)
        n = 0
        rng = as_generator(seed)  # the replication draws of --weighting importance
        try:
            for chunk in iter_log(log, n_classes=K, chunk_rows=chunk_rows):
                learn_log(model, chunk.X, chunk.played, chunk.bit, chunk.propensity, weighting=weighting,
                          seed=rng)
                n += chunk.played.shape[0]
                if bar is not None:
                    bar.update(chunk.played.shape[0])
        finally:
            if bar is not None:
                bar.close()
        path = model.save(out)
    except (ParameterError, PersistenceError) as exc:
        raise click.UsageError(str(exc)) from None
    except NumericalError as exc:
        raise click.ClickException(f"numerical trouble: {exc}") from None
    seconds = time.perf_counter() - t0
    res = {"rows": n, "seconds": seconds, "rows_per_second": n / seconds if seconds > 0 else None,
           "learner": type(model).__name__, "rounds_learned": int(model.t_), "out": str(path)}
    if as_json:
        click.echo(json.dumps(res))
        return
    click.echo(f"{type(model).__name__} learned {n} logged rows ({int(model.t_)} in total) in {seconds:.1f} s; "
               f"saved to {path}")
    click.echo(f"evaluate it on a held-out log: nolo evaluate HELDOUT --policy {path} --rho0 R0 --rho1 R1")
