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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from nolo._extras import require
from nolo.exceptions import ParameterError

__all__ = ["LOG_COLUMNS", "LogChunk", "log_frame", "write_log", "iter_log", "read_log", "policy_probabilities"]

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
    require("pyarrow", "parquet", "writing Parquet logs")  # pandas' own error would not name the extra
    tmp = path.with_name(path.name + ".tmp")
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, path)
    return path


def _check_columns(df: pd.DataFrame, name: str) -> None:
    missing = [c for c in ("played", "propensity", "bit") if c not in df.columns]
    if missing:
        raise ParameterError(f"{name} lacks column(s) {', '.join(missing)} (a log needs played, propensity and bit)")


#: columns of a log that are not features
NON_FEATURES = ("round", "row", "played", "propensity", "bit", "feedback")
#: rows per chunk when a log is read piece by piece
CHUNK_ROWS = 65_536


@dataclass(frozen=True)
class LogChunk:
    """Consecutive rows of a log, checked: ``row0`` is the first one's index in the log (0-based), ``X`` the feature
    columns (float64, (n, d); (n, 0) when the log has none), ``columns`` their names."""

    row0: int
    played: np.ndarray
    propensity: np.ndarray | None  # None only from iter_log(require_propensity=False) on a log without the column
    bit: np.ndarray
    X: np.ndarray
    columns: tuple
    frame: pd.DataFrame = field(repr=False, default=None)  # the rows as read


def _parquet_frames(path: Path, chunk_rows: int):
    """One Parquet file's rows, row group by row group: iterating the whole file at once keeps every row group read
    so far allocated in pyarrow (measured: +148 MiB per million-row group), one group at a time stays flat."""
    pq = require("pyarrow.parquet", "parquet", "reading Parquet logs")

    try:
        f = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a bad file
        raise ParameterError(f"log {path.name} is not a readable Parquet file: {exc}") from None
    for g in range(f.metadata.num_row_groups):
        for batch in f.iter_batches(batch_size=chunk_rows, row_groups=[g]):
            yield batch.to_pandas()


def _frames(path: Path, chunk_rows: int):
    """DataFrames of at most ``chunk_rows`` rows: a Parquet file, a directory of Parquet shards (in pyarrow's file
    order), or a CSV."""
    if path.is_dir():
        ds = require("pyarrow.dataset", "parquet", "reading Parquet logs")

        try:
            files = ds.dataset(path, format="parquet").files
        except Exception as exc:
            raise ParameterError(f"log directory {path} is not a Parquet dataset: {exc}") from None
        for file in files:
            yield from _parquet_frames(Path(file), chunk_rows)
    elif path.suffix in (".parquet", ".pq"):
        yield from _parquet_frames(path, chunk_rows)
    elif path.suffix == ".csv":
        try:
            yield from pd.read_csv(path, chunksize=chunk_rows)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise ParameterError(f"log {path.name} is not a readable CSV file: {exc}") from None
    else:
        raise ParameterError(f"a log must be a .parquet/.pq or .csv file or a directory of Parquet files, got {path.name}")


def _bit_column(columns) -> str:
    if "bit" in columns:
        return "bit"
    if "feedback" in columns:
        return "feedback"  # the column name `nolo estimate-noise` logs use
    raise ParameterError(f"the log has no column bit (or feedback); columns are {list(columns)}")


def _check_chunk(df: pd.DataFrame, row0: int, name: str, n_classes, features,
                 require_propensity: bool = True) -> LogChunk:
    has_p = "propensity" in df.columns
    missing = [c for c in ("played", "propensity") if c not in df.columns and (c == "played" or require_propensity)]
    if missing:
        raise ParameterError(f"log {name} lacks column(s) {', '.join(missing)} (a log needs played, propensity and "
                             f"bit); columns are {list(df.columns)}")
    bit_col = _bit_column(df.columns)

    csv = name.endswith(".csv")

    def where(i: int) -> str:  # 0-based row over the whole log; in a CSV also its line (the header is line 1)
        return f"row {row0 + i}" + (f" (line {row0 + i + 2} of the file)" if csv else "")

    def shown(raw) -> str:  # the value as the user wrote it, not numpy's repr
        if raw is None or (isinstance(raw, float) and np.isnan(raw)) or (isinstance(raw, str) and not raw.strip()):
            return "an empty cell"
        if isinstance(raw, (np.integer, np.floating)):
            raw = raw.item()
        return repr(raw)

    def numeric(col):
        v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(v)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ParameterError(f"log {name}: column {col!r} must hold finite numbers; {where(i)} holds "
                                 f"{shown(df[col].iloc[i])}")
        return v

    played = numeric("played")
    bad = (np.mod(played, 1) != 0) | (played < 0)
    if n_classes is not None:
        bad |= played >= n_classes
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        hi = f"in [0, {n_classes - 1}]" if n_classes is not None else ">= 0"
        raise ParameterError(f"log {name}: column 'played' must hold integer labels {hi} (labels are not rounded); "
                             f"{where(i)} holds {shown(df['played'].iloc[i])}")
    p = numeric("propensity") if has_p else None
    bad = ~((p > 0) & (p <= 1)) if has_p else np.zeros(0, dtype=bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParameterError(f"log {name}: column 'propensity' must hold probabilities in (0, 1]; {where(i)} holds "
                             f"{shown(df['propensity'].iloc[i])}")
    b = numeric(bit_col)
    bad = ~np.isin(b, (0, 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParameterError(f"log {name}: column {bit_col!r} must hold bits 0 or 1; {where(i)} holds "
                             f"{shown(df[bit_col].iloc[i])}")
    if features is None:
        features = tuple(c for c in df.columns if c not in NON_FEATURES)
    else:
        absent = [c for c in features if c not in df.columns]
        if absent:
            raise ParameterError(f"log {name} lacks feature column(s) {', '.join(map(str, absent))}")
    X = np.column_stack([numeric(c) for c in features]) if features else np.zeros((len(df), 0))
    return LogChunk(row0, played.astype(np.int64), p, b.astype(np.int64), X, tuple(features), df)


def iter_log(path, n_classes: int | None = None, chunk_rows: int = CHUNK_ROWS, features=None,
             require_propensity: bool = True):
    """Read a log piece by piece: :class:`LogChunk` s of at most ``chunk_rows`` rows, every row checked (``played`` an
    integer label, in [0, n_classes) when given; ``propensity`` in (0, 1]; ``bit`` -- or ``feedback`` -- 0 or 1;
    features finite), a bad one named by its row (0-based, counted over the whole log) and column in a one-line
    :class:`~nolo.exceptions.ParameterError`.  ``path``: a Parquet file, a directory of Parquet shards (read in the
    order pyarrow lists them) or a CSV with a header.  Features: every column but ``NON_FEATURES`` unless
    ``features`` names them; every chunk must carry the first chunk's.  ``require_propensity=False`` (logs read for
    the rates alone): a log without the column gives chunks whose ``propensity`` is None."""
    path = Path(path)
    if not path.exists():
        raise ParameterError(f"log file {path} does not exist")
    chunk_rows = int(chunk_rows)
    if chunk_rows < 1:
        raise ParameterError(f"chunk_rows must be a positive integer, got {chunk_rows}")
    row0 = 0
    for df in _frames(path, chunk_rows):
        chunk = _check_chunk(df, row0, path.name, n_classes, features, require_propensity)
        features = chunk.columns
        row0 += len(df)
        yield chunk
    if row0 == 0:
        raise ParameterError(f"log {path.name} has no rows")


def read_log(path, n_classes: int | None = None) -> pd.DataFrame:
    """Read a whole log (Parquet, a directory of Parquet shards, or CSV) into a DataFrame, every row checked as
    :func:`iter_log` does (a bad row is named with its column in a one-line error)."""
    frames = [c.frame for c in iter_log(path, n_classes)]
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].reset_index(drop=True)
    return df.astype({"played": np.int64, _bit_column(df.columns): np.int64})


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
