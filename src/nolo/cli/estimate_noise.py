"""``nolo estimate-noise LOG``: estimate the feedback flip rates (rho0, rho1) from logged bandit rounds (NREst)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np

from nolo.exceptions import ParameterError

__all__ = ["estimate_noise", "read_log"]


def read_log(path: str | Path, played_column: str = "played", feedback_column: str = "feedback"):
    """Read a log of rounds: returns (X, played, feedback).

    * ``.npz``: arrays ``X`` (n, d), ``played`` (n,), ``feedback`` (n,);
    * ``.csv`` (with a header row): every column other than ``played``/``feedback`` is a feature.
    """
    path = Path(path)
    if not path.exists():
        raise ParameterError(f"LOG file {path} does not exist")
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as data:
            missing = {"X", "played", "feedback"} - set(data.files)
            if missing:
                raise ParameterError(f"{path} must hold arrays X, played, feedback; missing {sorted(missing)}")
            return data["X"], data["played"], data["feedback"]
    if path.suffix == ".csv":
        import pandas as pd

        df = pd.read_csv(path)
        for col in (played_column, feedback_column):
            if col not in df.columns:
                raise ParameterError(f"{path} has no column {col!r}; columns are {list(df.columns)}")
        feats = [c for c in df.columns if c not in (played_column, feedback_column)]
        if not feats:
            raise ParameterError(f"{path} has no feature columns")
        return (df[feats].to_numpy(dtype=np.float64), df[played_column].to_numpy(dtype=np.int64),
                df[feedback_column].to_numpy(dtype=np.int64))
    raise ParameterError(f"LOG must be a .csv or .npz file, got {path.name}")


@click.command("estimate-noise")
@click.argument("log", type=click.Path(dir_okay=False))
@click.option("--n-classes", type=int, default=None, help="Number of labels K (default: max played label + 1).")
@click.option("--percentile", type=float, default=89.0, show_default=True, help="Percentile replacing the argmax (AM: 89; SynSep 94).")
@click.option("--rule", type=click.Choice(["pooled", "per_class"]), default="pooled", show_default=True)
@click.option("--hidden", default="64", show_default=True, help="Hidden layer sizes of the MLP, comma-separated.")
@click.option("--epochs", type=int, default=30, show_default=True, help="Maximum training epochs (AM: 70).")
@click.option("--patience", type=int, default=None,
              help="Stop once this many epochs bring no better validation loss (the best epoch is kept); "
                   "default: train all epochs.")
@click.option("--max-rows", type=int, default=50_000, show_default=True, help="Fit on a uniform subsample of at most this many rounds.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of text.")
def estimate_noise(log, n_classes, percentile, rule, hidden, epochs, patience, max_rows, seed, as_json):
    """Estimate rho0 = P(feedback 1 | truth 0) and rho1 = P(feedback 0 | truth 1) from LOG (AM Algorithm 3).

    LOG is a CSV with a header (feature columns, then `played` and `feedback`) or an NPZ with
    arrays X, played, feedback.
    """
    from nolo.noise_rates import NREst

    try:
        X, played, feedback = read_log(log)
        sizes = tuple(int(s) for s in str(hidden).split(",") if s.strip())
        rng = np.random.default_rng(seed)
        if X.shape[0] > max_rows:
            keep = np.sort(rng.choice(X.shape[0], size=max_rows, replace=False))
            X, played, feedback = X[keep], played[keep], feedback[keep]
        est = NREst(hidden_layer_sizes=sizes, max_iter=epochs, percentile=percentile, rule=rule, random_state=seed,
                    n_iter_no_change=patience)
        est.fit(X, played, feedback, n_classes=n_classes)
    except (ParameterError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None
    out = {"rho0_hat": est.rho0_, "rho1_hat": est.rho1_, "n_rounds": int(X.shape[0]), "rule": rule,
           "percentile": percentile, "epochs": int(est.n_epochs_), "seconds": round(est.fit_seconds_, 3)}
    if as_json:
        click.echo(json.dumps(out))
    else:
        click.echo(f"rho0_hat = {est.rho0_:.4f}   (P(feedback 1 | truth 0))")
        click.echo(f"rho1_hat = {est.rho1_:.4f}   (P(feedback 0 | truth 1))")
        click.echo(f"from {X.shape[0]} logged rounds, rule={rule}, percentile={percentile}, {est.n_epochs_} epochs, "
                   f"{est.fit_seconds_:.2f} s")
