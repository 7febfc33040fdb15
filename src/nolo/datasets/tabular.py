"""CSV (or other delimited text) with one label column, via pandas."""

from __future__ import annotations

import os

import numpy as np

from nolo.datasets._checks import check_flag, check_path
from nolo.datasets.errors import DataFormatError, DatasetNotFoundError
from nolo.datasets.labels import integer_labels, relabel
from nolo.exceptions import ParameterError

__all__ = ["load_csv"]


def load_csv(
    path: str | os.PathLike,
    *,
    label_column: int | str = -1,
    header: bool = False,
    delimiter: str = ",",
    relabel_classes: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Read a delimited text file as ``(X float64 (n, d), y int64)``.

    ``label_column`` is a position (negative counts from the end; default the
    last column) or, with ``header=True``, a column name.  Every other column
    is a feature and must be numeric; missing values are rejected.  Labels must
    be integers; ``relabel_classes`` maps them to ``0..K-1``.
    """
    import pandas as pd

    path = check_path(path, "path")
    header = check_flag(header, "header")
    relabel_classes = check_flag(relabel_classes, "relabel_classes")
    if not isinstance(delimiter, str) or not delimiter:
        raise ParameterError(f"delimiter must be a non-empty string, got {delimiter!r}")
    if not path.is_file():
        raise DatasetNotFoundError(f"CSV file not found: expected {path}")
    if isinstance(label_column, str) and not header:
        raise ParameterError(f"label_column may be a column name only with header=True, got {label_column!r}")
    try:
        frame = pd.read_csv(path, header=0 if header else None, sep=delimiter)
    except (ValueError, pd.errors.ParserError) as exc:
        raise DataFormatError(f"{path}: cannot parse as delimited text (delimiter {delimiter!r}): {exc}") from None
    n_cols = frame.shape[1]
    if n_cols < 2:
        raise DataFormatError(f"{path}: need a label column and at least one feature column, found {n_cols} column(s)")
    if isinstance(label_column, str):
        if label_column not in frame.columns:
            raise ParameterError(f"label_column must be one of the header names {list(frame.columns)}, got {label_column!r}")
        pos = list(frame.columns).index(label_column)
    elif isinstance(label_column, (int, np.integer)) and not isinstance(label_column, bool) and -n_cols <= label_column < n_cols:
        pos = int(label_column) % n_cols
    else:
        raise ParameterError(f"label_column must be an integer in [-{n_cols}, {n_cols - 1}] or a header name, got {label_column!r}")
    y = integer_labels(frame.iloc[:, pos].to_numpy(), f"{path} column {pos}")
    features = frame.drop(columns=frame.columns[pos])
    columns = []
    for col in features.columns:
        values = pd.to_numeric(features[col], errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            i = int(bad[0])
            raw = features[col].iloc[i]
            what = "an empty cell" if isinstance(raw, float) and np.isnan(raw) else repr(raw)
            raise DataFormatError(f"{path}: feature column {col!r} must hold finite numbers; row {i + 1} "
                                  f"(line {i + 1 + int(header)} of the file) holds {what}")
        columns.append(values)
    X = np.column_stack(columns)
    if relabel_classes:
        y, _ = relabel(y)
    return X, y
