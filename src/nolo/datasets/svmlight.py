"""LIBSVM / SVMlight text format (``<label> <index>:<value> ...`` per line), via scikit-learn's parser."""

from __future__ import annotations

import os

import numpy as np

from nolo._validation import check_choice, check_int
from nolo.datasets._checks import check_flag, check_path
from nolo.datasets.errors import DataFormatError, DatasetNotFoundError
from nolo.datasets.labels import integer_labels, relabel

__all__ = ["load_svmlight"]


def load_svmlight(
    path: str | os.PathLike,
    *,
    n_features: int | None = None,
    zero_based: bool | str = "auto",
    dense: bool = True,
    relabel_classes: bool = False,
):
    """Read a LIBSVM/SVMlight file as ``(X, y int64)``.

    ``X`` is a float64 NumPy array, or a SciPy CSR matrix with ``dense=False``
    (for wide sparse sets such as RCV1).  ``n_features`` fixes the width
    (needed when a file's largest index is smaller than the true dimension);
    ``zero_based`` is passed to :func:`sklearn.datasets.load_svmlight_file`.
    Labels must be integers; they are returned as stored unless
    ``relabel_classes`` maps them to ``0..K-1`` in sorted order.
    """
    from sklearn.datasets import load_svmlight_file

    path = check_path(path, "path")
    dense = check_flag(dense, "dense")
    relabel_classes = check_flag(relabel_classes, "relabel_classes")
    if not isinstance(zero_based, (bool, np.bool_)):
        check_choice(zero_based, "zero_based", (True, False, "auto"))
    if not path.is_file():
        raise DatasetNotFoundError(f"LIBSVM/SVMlight file not found: expected {path}")
    if n_features is not None:
        n_features = check_int(n_features, "n_features", low=1)
    try:
        X, y = load_svmlight_file(str(path), n_features=n_features, zero_based=zero_based, dtype=np.float64)
    except ValueError as exc:
        raise DataFormatError(f"{path}: not a valid LIBSVM/SVMlight file: {exc}") from None
    if X.shape[0] == 0:  # scikit-learn reads an empty (or comment-only) file as 0 rows: not a data set
        raise DataFormatError(f"{path}: not a valid LIBSVM/SVMlight file: it holds no data line")
    if not np.all(np.isfinite(X.data)):
        raise DataFormatError(f"{path}: not a valid LIBSVM/SVMlight file: a feature value is NaN or inf")
    y = integer_labels(y, str(path))
    if relabel_classes:
        y, _ = relabel(y)
    return (X.toarray() if dense else X.tocsr()), y
