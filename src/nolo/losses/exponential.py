"""Exponential loss l(m) = exp(-m) of the margin m = y <w, Psi(x)> (CSS10 Example 2, erratum E3)."""

from __future__ import annotations

import math

import numpy as np

from nolo.estimators.series import TaylorSeries
from nolo.losses.base import Loss

__all__ = ["Exponential"]


def _sign_log(n: int) -> tuple[float, float]:
    # l'(m) = -exp(-m) = sum_n (-1)^(n+1) m^n / n!
    return (1.0 if n % 2 == 1 else -1.0), -math.lgamma(n + 1)


class Exponential(Loss):
    """Exponential loss l(m) = e^{-m}, m = y <w, Psi(x)> (CSS10 Example 2; classification).

    Erratum E3 (docs/math.md, item 10): the paper prints e^{y <w, x>}, which penalises
    correct margins; the loss is e^{-y <w, x>}.  gamma_n = (-1)^(n+1) / n!,
    the series is entire and l'_+(a) = e^a (unchanged by the erratum).
    """

    name = "exponential"
    kind = "classification"

    def _value(self, z):
        with np.errstate(over="ignore"):
            return np.exp(-z)

    def _derivative(self, z):
        with np.errstate(over="ignore"):
            return -np.exp(-z)

    def _make_series(self):
        return TaylorSeries(_sign_log, radius=math.inf, name="exponential loss derivative -exp(-m)")

    def _derivative_plus(self, a):
        with np.errstate(over="ignore"):
            return np.exp(a)
