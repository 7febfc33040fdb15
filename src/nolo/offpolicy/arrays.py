"""A log of bandit rounds as arrays -- ``(X, played, feedback[, propensity])`` -- from an ``.npz`` file, a CSV or
Parquet file, or a directory of Parquet shards, every value checked and a bad one named by its column and row.

The whole-log reader of the estimators that need every round in memory at once (``nolo estimate-noise``'s
network fits); :func:`nolo.offpolicy.logs.iter_log` is the chunked reader underneath for the tabular formats.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nolo.exceptions import ParameterError

__all__ = ["read_log_arrays"]


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _numbers(a, where: str, name: str, ndim: int, shape_what: str, dtype_what: str, bits: bool = False) -> np.ndarray:
    """``a`` as an array of ``ndim`` dimensions holding integers or floats (and booleans when ``bits``), else a
    ParameterError naming ``name`` and what it must be."""
    a = np.asarray(a)
    if a.ndim != ndim:
        raise ParameterError(f"{where}: {name} must be {shape_what}, got shape {a.shape}")
    if not ((bits and a.dtype == bool) or np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise ParameterError(f"{where}: {name} must hold {dtype_what}, got dtype {a.dtype}")
    return a


def _check_played(played: np.ndarray, where: str) -> np.ndarray:
    """Played labels as int64: integers >= 0 (floats with an integral value pass; 0.5 is rejected, not truncated)."""
    played = _numbers(played, where, "played", 1, "one label per round (1-D)", "integer labels")
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
    feedback = _numbers(feedback, where, "feedback", 1, "one bit per round (1-D)", "0/1 bits", bits=True)
    bad = ~((feedback == 0) | (feedback == 1))
    if bad.any():
        i = _first_bad(bad)
        raise ParameterError(f"{where}: feedback must hold 0/1 bits; row {i + 1} holds {feedback[i].item()!r}")
    return feedback.astype(np.int64)


def _check_features(X: np.ndarray, where: str) -> np.ndarray:
    X = _numbers(X, where, "X", 2, "a 2-D array (rounds x features)", "real numbers").astype(np.float64)
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ParameterError(f"{where}: X must be finite; row {i + 1}, column {j} holds {X[i, j].item()!r}")
    return X


def _check_propensity(p: np.ndarray, where: str) -> np.ndarray:
    p = _numbers(p, where, "propensity", 1, "one probability per round (1-D numbers)", "numbers").astype(np.float64)
    bad = ~(np.isfinite(p) & (p > 0) & (p <= 1))
    if bad.any():
        i = _first_bad(bad)
        raise ParameterError(f"{where}: propensity must hold probabilities in (0, 1]; row {i + 1} holds {p[i]!r}")
    return p


def read_log_arrays(path: str | Path, *, with_propensity: bool = False, propensity_column: str = "propensity"):
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
