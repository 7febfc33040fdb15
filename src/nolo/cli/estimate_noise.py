"""``nolo estimate-noise LOG``: estimate the feedback flip rates (rho0, rho1) from logged bandit rounds.

Methods (``--method``, :data:`nolo.noise_rates.methods.METHODS`): ``nrest-anchors`` (default; nolo's
per-class-anchor rule, suits any share of right plays), ``nrest-pooled`` (AM Algorithm 3 as the authors'
code, what the AM reproduction uses), ``nrest-per-class`` (AM eq. 6 as the paper text), ``oracle`` (no
network: a per-class ridge regression of the raw bit, SquareCB's read-out, docs/squarecb.md; uses the
log's ``propensity`` column when there is one).  The output gives
a bootstrap interval, the log's regime (share of positive feedback, estimated share of right plays) and
a warning when the method does not suit the log.  See docs/noise-rates.md.
"""

from __future__ import annotations

import json

import click
import numpy as np

from nolo.exceptions import NumericalError, ParameterError

__all__ = ["estimate_noise"]


def _hidden_sizes(ctx, param, value) -> tuple[int, ...]:
    parts = [s.strip() for s in str(value).split(",")]
    try:
        sizes = tuple(int(s) for s in parts)
    except ValueError:
        sizes = ()
    if not sizes or any(s < 1 for s in sizes):
        raise click.BadParameter(f"must be positive integers separated by commas (e.g. 64 or 128,128), got {value!r}")
    return sizes


def _methods() -> dict:
    """The method registry with every entry registered (``oracle`` registers itself from the bandit learners)."""
    import nolo.learners.bandit.rate_oracle  # noqa: F401  -- registers "oracle"
    from nolo.noise_rates.methods import METHODS

    return METHODS


def _method_help() -> str:
    return "; ".join(f"{name}: {m.description}" for name, m in _methods().items())


def _default_method() -> str:
    from nolo.noise_rates.methods import DEFAULT_METHOD

    return DEFAULT_METHOD


def _method_names() -> list[str]:
    return list(_methods())


@click.command("estimate-noise")
@click.argument("log", type=click.Path(dir_okay=False))
@click.option("--method", type=click.Choice(_method_names()), default=_default_method(), show_default=True,
              help=_method_help())
@click.option("--n-classes", type=click.IntRange(min=2), default=None,
              help="Number of labels K (default: max played label + 1).")
@click.option("--percentile", type=click.FloatRange(50, 100, min_open=True), default=89.0, show_default=True,
              help="Percentile replacing the argmax in the pooled and per-class rules (AM: 89; SynSep 94).")
@click.option("--hidden", default="64", show_default=True, callback=_hidden_sizes,
              help="Hidden layer sizes of the MLP, comma-separated.")
@click.option("--epochs", type=click.IntRange(min=1), default=30, show_default=True, help="Maximum training epochs (AM: 70).")
@click.option("--patience", type=click.IntRange(min=1), default=None,
              help="Stop once this many epochs bring no better validation loss (the best epoch is kept); "
                   "default: train all epochs.")
@click.option("--max-rows", type=click.IntRange(min=10), default=50_000, show_default=True,
              help="Fit on a uniform subsample of at most this many rounds.")
@click.option("--bootstrap", "n_boot", type=click.IntRange(min=0), default=20, show_default=True,
              help="Refits on random halves of the log for the interval (0: no interval; each costs about half a fit).")
@click.option("--level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.9, show_default=True,
              help="Coverage of the bootstrap interval.")
@click.option("--seed", type=click.IntRange(min=0, max=2**32 - 1), default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of text.")
def estimate_noise(log, method, n_classes, percentile, hidden, epochs, patience, max_rows, n_boot, level, seed,
                   as_json):
    """Estimate rho0 = P(feedback 1 | truth 0) and rho1 = P(feedback 0 | truth 1) from LOG.

    LOG is a CSV with a header (feature columns, then `played` and `feedback`, optionally
    `propensity`) or an NPZ with arrays X, played, feedback (optionally propensity).  Prints the estimates, a bootstrap interval, the log's regime and a
    warning when the method does not suit the log (docs/noise-rates.md).
    """
    from nolo.noise_rates import bootstrap_rates, diagnose
    from nolo.noise_rates.methods import make_estimator
    from nolo.offpolicy.arrays import read_log_arrays

    _methods()

    try:
        X, played, feedback, prop = read_log_arrays(log, with_propensity=True)
        rng = np.random.default_rng(seed)
        if X.shape[0] > max_rows:
            keep = np.sort(rng.choice(X.shape[0], size=max_rows, replace=False))
            X, played, feedback = X[keep], played[keep], feedback[keep]
            prop = None if prop is None else prop[keep]
        est = make_estimator(method, hidden_layer_sizes=hidden, max_iter=epochs, percentile=percentile,
                             random_state=seed, n_iter_no_change=patience)
        fit_kw = {"propensity": prop} if method == "oracle" else {}  # the NREst rules do not use propensities
        est.fit(X, played, feedback, n_classes=n_classes, **fit_kw)
        regime = diagnose(est, X, played, feedback)
        interval = (bootstrap_rates(est, X, played, feedback, n_classes=n_classes, n_boot=n_boot, level=level, seed=seed,
                                    **fit_kw)
                    if n_boot >= 2 else None)
    except (ParameterError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None
    except NumericalError as exc:  # e.g. the network diverged: a message, not a traceback
        raise click.ClickException(f"numerical trouble: {exc}") from None
    warnings = list(regime.warnings)
    if method == "oracle" and prop is None:
        warnings.append("the log has no propensity column: rho0 is read from the other labels' predictions, which "
                        "is biased when the logger explored little (docs/squarecb.md); log the propensities")
    if n_boot == 1:
        warnings.append("--bootstrap 1 gives no interval (use 0 or at least 2)")
    out = {"rho0_hat": est.rho0_, "rho1_hat": est.rho1_, "method": method, "n_rounds": int(X.shape[0]),
           "percentile": percentile, "epochs": int(est.n_epochs_), "seconds": round(est.fit_seconds_, 3),
           "interval": interval.as_dict() if interval else None, "regime": regime.as_dict(), "warnings": warnings}
    out["regime"].pop("warnings")
    if as_json:
        click.echo(json.dumps(out))
        return
    def ci(pair):
        return f"   {100 * interval.level:.0f} % interval [{pair[0]:.3f}, {pair[1]:.3f}]" if interval else ""

    click.echo(f"rho0_hat = {est.rho0_:.4f}{ci(interval.rho0 if interval else None)}   (P(feedback 1 | truth 0))")
    click.echo(f"rho1_hat = {est.rho1_:.4f}{ci(interval.rho1 if interval else None)}   (P(feedback 0 | truth 1))")
    passes = f"{est.n_epochs_} pass{'es' if est.n_epochs_ != 1 else ''} of the oracle" if method == "oracle" else \
        f"{est.n_epochs_} epochs"
    click.echo(f"from {X.shape[0]} logged rounds, method={method}, {passes}, {est.fit_seconds_:.2f} s"
               + (f" (+ {n_boot} half-sample refits for the interval)" if interval else ""))
    click.echo(f"log: {100 * regime.positive_share:.1f} % positive feedback, about {100 * regime.correct_share:.1f} % "
               f"of the plays right (estimated)")
    for w in warnings:
        click.echo(f"warning: {w}", err=True)
