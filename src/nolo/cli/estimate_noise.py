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
from pathlib import Path

import click
import numpy as np

from nolo.exceptions import NumericalError, ParameterError

__all__ = ["estimate_noise", "read_log"]


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _check_played(played: np.ndarray, where: str) -> np.ndarray:
    """Played labels as int64: integers >= 0 (floats with an integral value pass; 0.5 is rejected, not truncated)."""
    played = np.asarray(played)
    if played.ndim != 1:
        raise ParameterError(f"{where}: played must be one label per round (1-D), got shape {played.shape}")
    if played.dtype == bool or not (np.issubdtype(played.dtype, np.integer) or np.issubdtype(played.dtype, np.floating)):
        raise ParameterError(f"{where}: played must hold integer labels, got dtype {played.dtype}")
    if np.issubdtype(played.dtype, np.floating):
        bad = ~np.isfinite(played) | (played != np.round(played))
        if bad.any():
            i = _first_bad(bad)
            raise ParameterError(f"{where}: played must hold integer labels; row {i + 1} holds {played[i].item()!r} "
                                 "(labels are not rounded or truncated)")
    if played.size and played.min() < 0:
        i = _first_bad(played < 0)
        raise ParameterError(f"{where}: played labels must be >= 0; row {i + 1} holds {played[i].item()!r}")
    return played.astype(np.int64)


def _check_feedback(feedback: np.ndarray, where: str) -> np.ndarray:
    feedback = np.asarray(feedback)
    if feedback.ndim != 1:
        raise ParameterError(f"{where}: feedback must be one bit per round (1-D), got shape {feedback.shape}")
    if not (feedback.dtype == bool or np.issubdtype(feedback.dtype, np.integer) or np.issubdtype(feedback.dtype, np.floating)):
        raise ParameterError(f"{where}: feedback must hold 0/1 bits, got dtype {feedback.dtype}")
    bad = ~((feedback == 0) | (feedback == 1))
    if bad.any():
        i = _first_bad(bad)
        raise ParameterError(f"{where}: feedback must hold 0/1 bits; row {i + 1} holds {feedback[i].item()!r}")
    return feedback.astype(np.int64)


def _check_features(X: np.ndarray, where: str) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2:
        raise ParameterError(f"{where}: X must be a 2-D array (rounds x features), got shape {X.shape}")
    if X.dtype == bool or not (np.issubdtype(X.dtype, np.integer) or np.issubdtype(X.dtype, np.floating)):
        raise ParameterError(f"{where}: X must hold real numbers, got dtype {X.dtype}")
    X = X.astype(np.float64)
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ParameterError(f"{where}: X must be finite; row {i + 1}, column {j} holds {X[i, j].item()!r}")
    return X


def _check_propensity(p: np.ndarray, where: str) -> np.ndarray:
    p = np.asarray(p)
    if p.ndim != 1 or p.dtype == bool or not (np.issubdtype(p.dtype, np.integer) or np.issubdtype(p.dtype, np.floating)):
        raise ParameterError(f"{where}: propensity must be one probability per round (1-D numbers), got shape "
                             f"{p.shape}, dtype {p.dtype}")
    p = p.astype(np.float64)
    bad = ~(np.isfinite(p) & (p > 0) & (p <= 1))
    if bad.any():
        i = _first_bad(bad)
        raise ParameterError(f"{where}: propensity must hold probabilities in (0, 1]; row {i + 1} holds {p[i]!r}")
    return p


def read_log(path: str | Path, *, with_propensity: bool = False, propensity_column: str = "propensity"):
    """Read a log of rounds: returns (X float64 (n, d), played int64 (n,), feedback int64 (n,)), and with
    ``with_propensity=True`` a fourth item, the logger's propensities float64 (n,) or None when the log has none.

    * ``.npz``: arrays ``X`` (n, d), ``played`` (n,), ``feedback`` (n,), optionally ``propensity`` (n,);
    * ``.csv`` (with a header row), ``.parquet``, or a directory of Parquet shards: read by
      :func:`nolo.offpolicy.logs.iter_log` (the reader of ``nolo evaluate`` and ``nolo learn``), the bit in column
      ``feedback`` or ``bit``; every column other than those, ``played``, ``propensity``, ``round`` and ``row`` is a
      feature.

    Played labels must be integers >= 0 (0.5 is rejected, not truncated); feedback 0/1; features finite
    numbers.  A bad value is reported with its column and row (``ParameterError``; rows 0-based in CSV/Parquet
    logs).
    """
    path = Path(path)
    if not path.exists():
        raise ParameterError(f"LOG file {path} does not exist")
    if path.suffix == ".npz":
        try:
            data = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ParameterError(f"{path} is not a readable .npz file: {exc}") from None
        with data:
            missing = {"X", "played", "feedback"} - set(data.files)
            if missing:
                raise ParameterError(f"{path} must hold arrays X, played, feedback; missing {sorted(missing)}")
            try:
                X, played, feedback = data["X"], data["played"], data["feedback"]
                prop = data[propensity_column] if propensity_column in data.files else None
            except ValueError as exc:  # object arrays need pickle, which is refused
                raise ParameterError(f"{path}: {exc}") from None
        X = _check_features(X, str(path))
        played = _check_played(played, str(path))
        feedback = _check_feedback(feedback, str(path))
        if not (X.shape[0] == played.shape[0] == feedback.shape[0]):
            raise ParameterError(f"{path}: X, played and feedback must have one row per round; got "
                                 f"{X.shape[0]}, {played.shape[0]} and {feedback.shape[0]} rows")
        if prop is not None:
            prop = _check_propensity(prop, str(path))
            if prop.shape[0] != X.shape[0]:
                raise ParameterError(f"{path}: propensity must have one row per round; got {prop.shape[0]} for "
                                     f"{X.shape[0]} rounds")
        return (X, played, feedback, prop) if with_propensity else (X, played, feedback)
    if path.is_dir() or path.suffix in (".csv", ".parquet", ".pq"):
        # the reader `nolo evaluate` and `nolo learn` use: chunked, every row checked, bad rows named by row and column
        from nolo.offpolicy.logs import iter_log

        chunks = list(iter_log(path, require_propensity=False))
        if not chunks[0].columns:
            raise ParameterError(f"{path} has no feature columns")
        X = np.concatenate([c.X for c in chunks])
        played = np.concatenate([c.played for c in chunks])
        feedback = np.concatenate([c.bit for c in chunks])
        prop = None if chunks[0].propensity is None else np.concatenate([c.propensity for c in chunks])
        return (X, played, feedback, prop) if with_propensity else (X, played, feedback)
    raise ParameterError(f"LOG must be a .csv, .parquet or .npz file or a directory of Parquet shards, got {path.name}")


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


def _method_names() -> list[str]:
    return list(_methods())


@click.command("estimate-noise")
@click.argument("log", type=click.Path(dir_okay=False))
@click.option("--method", type=click.Choice(_method_names()), default="nrest-anchors", show_default=True,
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

    _methods()

    try:
        X, played, feedback, prop = read_log(log, with_propensity=True)
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
