"""The one input converter of :mod:`nolo.sklearn_api`: repeated readings in any of three layouts -> :class:`Readings`.

Every estimator of the package takes the readings of ``n`` items, each measured ``m_i >= 1`` times, as

1. a **3-D array** ``(n, m, d)`` (the same number of readings per item);
2. a **ragged list** of ``n`` arrays of shape ``(m_i, d)``;
3. a **long (tidy) table**: ``X`` of shape ``(N, d)`` -- one row per reading, as sensor logs and
   long-format data frames store them (a pandas DataFrame of the feature columns works) -- with
   ``groups`` of length ``N`` naming the item of each row (any ints or strings).  Items are numbered in
   the order of their first row.  ``y`` then holds either one target per item (in that order) or one
   per row, constant within an item (the tidy layout: the target repeated on each row of the item).

A 2-D ``X`` *without* ``groups`` is ``n`` items of one reading each (what scikit-learn's own checks pass).
``predict`` converts the same way and uses the per-item mean of the readings as the item's input.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning

from nolo._validation import check_array
from nolo.exceptions import ParameterError

__all__ = ["Readings", "to_readings", "item_targets", "target_vector", "clean_inputs", "InputTypeError"]


@dataclass(frozen=True)
class Readings:
    """Item-contiguous readings: rows ``values[offsets[i]:offsets[i+1]]`` are the readings of item ``i``."""

    values: np.ndarray  # (N, d) float64
    offsets: np.ndarray  # (n + 1,) int64
    #: the (n, m, d) array when every item has the same number of readings (a view, no copy)
    dense: np.ndarray | None = None
    #: for the long layout: the row -> item map, used to check per-row targets
    row_item: np.ndarray | None = None

    @property
    def n_items(self) -> int:
        return int(self.offsets.shape[0] - 1)

    @property
    def n_features(self) -> int:
        return int(self.values.shape[1])

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.offsets)

    def means(self) -> np.ndarray:
        """Per-item mean of the readings, ``(n, d)``."""
        if self.dense is not None:
            return self.dense.mean(axis=1)
        sums = np.add.reduceat(self.values, self.offsets[:-1], axis=0) if self.values.shape[0] else self.values
        return sums / self.counts[:, None]

    def items(self) -> list[np.ndarray]:
        """The readings of each item, a list of ``(m_i, d)`` views."""
        return [self.values[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:])]

    def as_dense_or_items(self):
        """The ``(n, m, d)`` array when the counts agree, else the ragged list."""
        return self.dense if self.dense is not None else self.items()

    def select(self, idx: np.ndarray) -> "Readings":
        """The readings of items ``idx`` (in that order)."""
        if self.dense is not None:
            D = self.dense[idx]
            return Readings(D.reshape(-1, D.shape[2]), np.arange(len(idx) + 1, dtype=np.int64) * D.shape[1], D)
        parts = [self.values[self.offsets[i]:self.offsets[i + 1]] for i in idx]
        return _from_items(parts)


class InputTypeError(ParameterError, TypeError):
    """An input that is not numbers at all (strings, dicts, objects): a :class:`ParameterError` and a ``TypeError``."""


def _as_float(X, name: str, ndim, allow_empty: bool = False) -> np.ndarray:
    """``check_array`` with scikit-learn's wording for complex, non-numeric, empty and 1-d input."""
    kind = getattr(getattr(X, "dtype", None), "kind", None)
    if kind == "c" or (isinstance(X, (list, tuple)) and any(isinstance(v, complex) for v in np.ravel(np.asarray(X, dtype=object)))):
        raise ParameterError(f"{name} must be real: Complex data not supported")
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(f"{name} must hold numbers: {exc}") from None
    if arr.ndim == 1 and 2 in (ndim if isinstance(ndim, tuple) else (ndim,)):
        raise ParameterError(
            f"{name} must be a 2-D array of rows, got a 1-D array of shape {arr.shape}: Reshape your data either "
            f"using array.reshape(-1, 1) if it has a single feature or array.reshape(1, -1) if it is a single sample"
        )
    arr = check_array(arr, name, ndim=ndim)
    if arr.ndim >= 2 and arr.shape[-1] == 0:
        raise ParameterError(f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.")
    if arr.ndim >= 2 and arr.shape[0] == 0 and not allow_empty:
        raise ParameterError(f"{name} has 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required.")
    return arr


def _reject_unsupported(X, name: str) -> None:
    if sp.issparse(X):
        raise ParameterError(f"{name} must be a dense array: sparse input is not supported (call {name}.toarray())")
    if X is None or isinstance(X, (str, bytes, dict)):
        raise ParameterError(
            f"{name} must be an array (n, m, d), a list of (m_i, d) arrays, or a 2-D table with groups; "
            f"got {type(X).__name__}"
        )


def _from_items(parts: list[np.ndarray]) -> Readings:
    counts = np.array([p.shape[0] for p in parts], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    values = np.concatenate(parts, axis=0) if parts else np.zeros((0, 0))
    dense = None
    if parts and np.all(counts == counts[0]):
        dense = values.reshape(len(parts), int(counts[0]), values.shape[1])
    return Readings(np.ascontiguousarray(values), offsets, dense)


def _is_ragged_list(X) -> bool:
    return isinstance(X, (list, tuple)) and len(X) > 0 and all(
        isinstance(a, np.ndarray) or (isinstance(a, (list, tuple)) and len(a) > 0 and isinstance(a[0], (list, tuple, np.ndarray)))
        for a in X) and all(np.ndim(a) == 2 for a in X)


def to_readings(X, groups=None, *, name: str = "X") -> Readings:
    """Convert ``X`` (3-D array, ragged list, 2-D table with ``groups``, or 2-D one reading per item) to :class:`Readings`.

    Every reading must be finite and real; at least one item; every item at least one reading.  Raises
    :class:`ParameterError` naming ``X`` (or ``groups``).
    """
    _reject_unsupported(X, name)
    if groups is not None:
        A = _as_float(X, name, 2)
        g = np.asarray(groups)
        if g.ndim != 1 or g.shape[0] != A.shape[0]:
            raise ParameterError(
                f"groups must be 1-d with one item id per row of {name} ({A.shape[0]} rows), got shape {g.shape}"
            )
        if g.dtype.kind not in "iuUSOb" or (g.dtype.kind == "O" and not all(isinstance(v, (str, int, np.integer)) for v in g)):
            raise ParameterError(f"groups must hold item ids (integers or strings), got dtype {g.dtype}")
        if A.shape[0] == 0:
            raise ParameterError(f"{name} must hold at least one reading, got shape {A.shape}")
        uniq, first, inv = np.unique(g, return_index=True, return_inverse=True)
        rank = np.empty(len(uniq), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
        row_item = rank[inv.reshape(-1)]
        order = np.argsort(row_item, kind="stable")
        counts = np.bincount(row_item, minlength=len(uniq)).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        values = np.ascontiguousarray(A[order])
        dense = values.reshape(len(uniq), int(counts[0]), A.shape[1]) if np.all(counts == counts[0]) else None
        return Readings(values, offsets, dense, row_item)
    if _is_ragged_list(X):
        parts = [_as_float(a, f"{name}[{i}]", 2) for i, a in enumerate(X)]
        d = parts[0].shape[1]
        for i, p in enumerate(parts):
            if p.shape[1] != d:
                raise ParameterError(f"{name}[{i}] must have {d} features like {name}[0], got shape {p.shape}")
            if p.shape[0] == 0:
                raise ParameterError(f"{name}[{i}] must hold at least one reading, got shape {p.shape}")
        if d == 0:
            raise ParameterError(f"{name} must have at least one feature, got 0")
        return _from_items(parts)
    A = _as_float(X, name, (2, 3))
    if A.ndim == 3 and A.shape[1] == 0:
        raise ParameterError(f"{name} must hold at least one reading per item, got shape {A.shape}")
    D = np.ascontiguousarray(A[:, None, :] if A.ndim == 2 else A)
    n, m, d = D.shape
    return Readings(D.reshape(n * m, d), np.arange(n + 1, dtype=np.int64) * m, D)


def target_vector(y, name: str = "y"):
    """``y`` with scikit-learn's conventions: ``None`` refused, a column vector ``(n, 1)`` ravelled with a
    :class:`sklearn.exceptions.DataConversionWarning`, complex refused."""
    if y is None:
        raise ParameterError(f"this estimator requires {name} to be passed, but the target {name} is None")
    if getattr(y, "ndim", None) == 2 and y.shape[1] == 1:
        warnings.warn(f"A column-vector {name} was passed when a 1d array was expected; it was ravelled",
                      DataConversionWarning, stacklevel=4)
        y = np.ravel(y)
    if getattr(getattr(y, "dtype", None), "kind", None) == "c":
        raise ParameterError(f"{name} must be real: Complex data not supported")
    return y


def item_targets(y, readings: Readings, *, name: str = "y", labels: bool = False) -> np.ndarray:
    """One target per item: ``y`` of length ``n_items``, or (long layout) one per row, constant within an item."""
    y = target_vector(y, name)
    if labels:
        arr = np.asarray(y)
        if arr.ndim != 1:
            raise ParameterError(f"{name} must be 1-d, got shape {arr.shape}")
        if arr.dtype.kind not in "biufUS" and not (arr.dtype.kind == "O" and all(isinstance(v, str) for v in arr)):
            raise ParameterError(f"{name} must hold numbers, strings or booleans, got dtype {arr.dtype}")
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise ParameterError(f"{name} must contain only finite values (no NaN or inf)")
    else:
        arr = check_array(y, name, ndim=1)
    n = readings.n_items
    if arr.shape[0] == n:
        return arr
    if readings.row_item is not None and arr.shape[0] == readings.row_item.shape[0]:
        first = np.zeros(n, dtype=np.int64)
        first[readings.row_item[::-1]] = np.arange(arr.shape[0])[::-1]
        per_item = arr[first]
        if np.any(per_item[readings.row_item] != arr):
            raise ParameterError(f"{name} given per row must be constant within each item (group)")
        return per_item
    rows = f" or one per row ({readings.row_item.shape[0]})" if readings.row_item is not None else ""
    raise ParameterError(f"{name} must hold one target per item ({n} items){rows}, got {arr.shape[0]}")


def clean_inputs(X, groups=None, *, n_features: int | None = None, name: str = "X") -> np.ndarray:
    """Inputs to predict at, ``(n, d)``: clean rows as given, or the per-item mean of readings.

    An empty 2-D ``X`` (0 rows) is allowed here (predicting on nothing returns nothing).
    """
    _reject_unsupported(X, name)
    if groups is None and not _is_ragged_list(X):
        A = _as_float(X, name, (2, 3), allow_empty=True)
        Xc = A.mean(axis=1) if A.ndim == 3 else A
    else:
        Xc = to_readings(X, groups, name=name).means()
    if n_features is not None and Xc.shape[1] != n_features:
        raise ParameterError(f"{name} must have {n_features} features (as in fit), got {Xc.shape[1]}")
    return Xc
