"""Result records shared by the random-degree estimators."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Estimate", "EstimateBatch"]


class Estimate(NamedTuple):
    """One estimate: its value, the degree N drawn, the copies queried, and whether a finite
    pool fell short (then the value is 0; see :mod:`nolo.estimators.lemma1`, truncation policy)."""

    value: float
    degree: int
    queries: int
    shortfall: bool = False


class EstimateBatch(NamedTuple):
    """Many independent estimates (arrays of equal length)."""

    values: np.ndarray
    degrees: np.ndarray
    queries: np.ndarray
