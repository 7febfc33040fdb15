"""Datasets shipped with scikit-learn: Iris (AM's Iris) and the UCI 8x8 optical digits (AM's "MNIST", d=64)."""

from __future__ import annotations

import numpy as np

__all__ = ["load_iris_arrays", "load_digits_arrays"]


def load_iris_arrays() -> tuple[np.ndarray, np.ndarray]:
    """Iris: ``(X float64 (150, 4), y int64 in 0..2)``, unnormalised."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)


def load_digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """UCI optical digits 8x8: ``(X float64 (1797, 64) in 0..16, y int64 in 0..9)``, unnormalised.

    docs/baselines.md, section 6.5: AM's "MNIST" (d=64, UCI) is most likely this set.
    """
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)
