"""Label checks shared by the text-format readers."""

from __future__ import annotations

import numpy as np

from nolo.datasets.errors import DataFormatError

__all__ = ["integer_labels", "relabel"]


def integer_labels(values, source: str) -> np.ndarray:
    """Return ``values`` as int64, raising :class:`DataFormatError` (naming ``source``) if any is not an integer."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    try:
        f = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise DataFormatError(f"{source}: labels must be integers, got non-numeric values such as {arr[:3].tolist()}") from None
    bad = ~np.isfinite(f) | (f != np.round(f))
    if bad.any():
        raise DataFormatError(f"{source}: labels must be integers, got {f[bad][:3].tolist()} (first non-integer values)")
    return f.astype(np.int64)


def relabel(y) -> tuple[np.ndarray, np.ndarray]:
    """Map labels to ``0..K-1`` in sorted order: returns ``(codes int64, classes)`` with ``classes[codes] == y``."""
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    return codes.astype(np.int64), classes
