"""The plain hinge and absolute losses: baselines without a Taylor series (CSS10 section 3.2)."""

from __future__ import annotations

import numpy as np

from nolo.losses.base import Loss

__all__ = ["Absolute", "Hinge"]


class Hinge(Loss):
    """Hinge loss max(0, 1 - m) of the margin m = y <w, x> (classification baseline).

    Its derivative jumps at m = 1, so by CSS10 section 3.2 (citing [2]) no
    unbiased estimate of it exists under unknown noise: ``has_series`` is False
    and :attr:`series` raises :class:`~nolo.losses.NoSeriesError`.  For use with
    clean inputs (full-information and bandit baselines); ``derivative`` returns
    the subgradient -1 for m < 1 and 0 for m >= 1.
    """

    name = "hinge"
    kind = "classification"
    has_series = False

    def _value(self, z):
        return np.maximum(0.0, 1.0 - z)

    def _derivative(self, z):
        return np.where(z < 1.0, -1.0, 0.0)


class Absolute(Loss):
    """Absolute loss ``|a|`` of a = <w, x> - y (regression baseline; no Taylor series, see :class:`Hinge`).

    ``derivative`` returns the subgradient sign(a) (0 at a = 0).
    """

    name = "absolute"
    kind = "regression"
    has_series = False

    def _value(self, z):
        return np.abs(z)

    def _derivative(self, z):
        return np.sign(z)
