"""Logs of bandit play: the table a learner's stream writes (round, row, played label, its propensity, the bit) as a
pandas DataFrame and a Parquet file, read back with every row checked, and a target policy's probabilities on the
logged contexts.

The log of ``run_stream(learner, X, y, T, ..., log=True)`` (or ``ClassificationBandit.run``) has, per round, the
index of the context in ``X``, the label played, the probability the learner drew it with (its record's ``probs``:
every nolo bandit learner states it) and the flipped bit -- what off-policy evaluation (:mod:`.estimators`) and
learning need.  A deployed learner logs the same with ``label, p = learner.act(x, return_probability=True)``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from nolo.exceptions import ParameterError

__all__ = ["LOG_COLUMNS", "log_frame", "write_log", "read_log", "policy_probabilities"]

#: the columns every log has (``row`` indexes the contexts; ``round`` counts from 1)
LOG_COLUMNS = ("round", "row", "played", "propensity", "bit")


def log_frame(result, X=None) -> pd.DataFrame:
    """The log of a stream run (``result.extra["log"]`` of ``run_stream(..., log=True)``) as a DataFrame with
    ``LOG_COLUMNS``; with ``X`` (dense, the run's rows), the context's features too, as columns ``x0, x1, ...``."""
    log = getattr(result, "extra", {}).get("log") if not isinstance(result, dict) else result
    if log is None or "played" not in log:
        raise ParameterError("result holds no log: run the stream with log=True")
    n = len(log["played"])
    prop = log.get("propensity", np.full(n, np.nan))
    df = pd.DataFrame({"round": np.arange(1, n + 1, dtype=np.int64), "row": np.asarray(log["index"], dtype=np.int64),
                       "played": np.asarray(log["played"], dtype=np.int64), "propensity": np.asarray(prop, float),
                       "bit": np.asarray(log["feedback"], dtype=np.int64)})
    if X is not None:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or (n and df["row"].max() >= X.shape[0]):
            raise ParameterError("X must be the run's (n, d) rows")
        feats = pd.DataFrame(X[df["row"].to_numpy()], columns=[f"x{j}" for j in range(X.shape[1])])
        df = pd.concat([df, feats], axis=1)
    return df


def write_log(path, frame: pd.DataFrame) -> Path:
    """Write a log (a :func:`log_frame`) to Parquet, atomically (a temporary file renamed into place)."""
    _check_columns(frame, "frame")
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, path)
    return path


def _check_columns(df: pd.DataFrame, name: str) -> None:
    missing = [c for c in ("played", "propensity", "bit") if c not in df.columns]
    if missing:
        raise ParameterError(f"{name} lacks column(s) {', '.join(missing)} (a log needs played, propensity and bit)")


def read_log(path, n_classes: int | None = None) -> pd.DataFrame:
    """Read a log (Parquet or CSV) and check every row: ``played`` an integer label (in [0, n_classes) when given),
    ``propensity`` in (0, 1], ``bit`` 0 or 1, no NaN; a bad row is named with its column in a one-line error."""
    path = Path(path)
    if not path.exists():
        raise ParameterError(f"log file {path} does not exist")
    df = pd.read_parquet(path) if path.suffix in (".parquet", ".pq") else pd.read_csv(path)
    _check_columns(df, f"log {path.name}")
    for col in ("played", "propensity", "bit"):
        bad = df[col].isna().to_numpy()
        if bad.any():
            raise ParameterError(f"log {path.name}: row {int(np.flatnonzero(bad)[0])} has no {col} (NaN)")
    played = df["played"].to_numpy()
    if not np.all(np.equal(np.mod(played, 1), 0)) or (played < 0).any() or (
            n_classes is not None and (played >= n_classes).any()):
        i = int(np.flatnonzero((np.mod(played, 1) != 0) | (played < 0) |
                               ((played >= n_classes) if n_classes is not None else False))[0])
        hi = f"[0, {n_classes - 1}]" if n_classes is not None else ">= 0"
        raise ParameterError(f"log {path.name}: row {i} column played = {played[i]!r} is not an integer label in {hi}")
    p = df["propensity"].to_numpy(dtype=np.float64)
    bad = ~((p > 0) & (p <= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParameterError(f"log {path.name}: row {i} column propensity = {p[i]!r} is outside (0, 1]")
    b = df["bit"].to_numpy()
    bad = ~np.isin(b, (0, 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParameterError(f"log {path.name}: row {i} column bit = {b[i]!r} is not 0 or 1")
    return df.astype({"played": np.int64, "bit": np.int64})


def policy_probabilities(policy, X, n_classes: int | None = None) -> np.ndarray:
    """A target policy's (n, K) probabilities on the contexts ``X``: a nolo bandit learner (its
    ``action_probabilities``, the distribution it would play from now), a callable returning (n, K) probabilities or
    (n,) labels, or an (n, K) / (n,) array already computed."""
    from nolo.offpolicy.estimators import target_matrix

    n = X.shape[0]
    if callable(getattr(policy, "action_probabilities", None)):
        return np.asarray(policy.action_probabilities(X), dtype=np.float64)
    out = policy(X) if callable(policy) else policy
    out = np.asarray(out)
    if out.ndim == 1 and n_classes is None:
        raise ParameterError("a policy that returns labels needs n_classes")
    return target_matrix(out, n, n_classes if out.ndim == 1 else out.shape[1])
