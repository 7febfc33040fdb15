"""Squared loss l(a) = a^2 of a = margin - y (CSS10 Example 1)."""

from __future__ import annotations

from nolo.estimators.series import TaylorSeries
from nolo.losses.base import Loss

__all__ = ["Squared"]


class Squared(Loss):
    """Squared loss l(a) = a^2, a = <w, Psi(x)> - y (CSS10 Example 1; regression).

    l'(a) = 2a, so gamma_1 = 2 and all other gamma_n = 0, and l'_+(a) = 2a.
    With the random-degree estimator only N = 1 contributes (docs/math.md, item
    10): unbiased but wasteful compared with the single-copy estimate 2(X - y).
    """

    name = "squared"
    kind = "regression"

    def _value(self, z):
        return z * z

    def _derivative(self, z):
        return 2.0 * z

    def _make_series(self):
        return TaylorSeries(coefficients=[0.0, 2.0], name="squared loss derivative 2a")

    def _derivative_plus(self, a):
        return 2.0 * a
