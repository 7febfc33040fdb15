"""The erf-smoothed hinge and absolute losses of CSS10 Examples 3-4 (docs/math.md, item 10)."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf, erfc, erfi

from nolo.estimators.series import TaylorSeries
from nolo.losses.base import LOG_SQRT_PI, Loss, check_sharpness

__all__ = ["SmoothedAbsolute", "SmoothedHinge", "ierfc"]

_SQRT_PI = math.sqrt(math.pi)


def ierfc(z):
    """ierfc(z) = e^{-z^2}/sqrt(pi) - z erfc(z): positive, decreasing, ierfc(0) = 1/sqrt(pi)."""
    z = np.asarray(z, dtype=np.float64)
    return np.exp(-z * z) / _SQRT_PI - z * erfc(z)


class _HermiteRatios:
    """g_m = H_m(s)/m! (physicists' Hermite) as (sign, log|g_m|), by the stable forward recursion

    g_0 = 1, g_1 = 2s, g_(m+1) = (2s g_m - 2 g_(m-1)) / (m + 1),

    carried as a mantissa pair times a common scale e^L that is renormalised
    whenever the mantissas leave [1e-100, 1e100] (g_m underflows near m = 335).
    """

    def __init__(self, s: float):
        self.s = s
        self.prev, self.cur, self.log_scale = 1.0, 2.0 * s, 0.0  # g_0, g_1 at scale 0
        self.m = 1
        self.table: list[tuple[float, float]] = [(1.0, 0.0)]

    def _push(self, v: float) -> None:
        self.table.append((0.0, -math.inf) if v == 0 else (math.copysign(1.0, v), math.log(abs(v)) + self.log_scale))

    def sign_log(self, m: int) -> tuple[float, float]:
        if len(self.table) == 1:
            self._push(self.cur)
        while len(self.table) <= m:
            nxt = (2.0 * self.s * self.cur - 2.0 * self.prev) / (self.m + 1)
            self.prev, self.cur, self.m = self.cur, nxt, self.m + 1
            big = max(abs(self.prev), abs(self.cur))
            if big != 0 and not 1e-100 <= big <= 1e100:
                self.prev, self.cur = self.prev / big, self.cur / big
                self.log_scale += math.log(big)
            self._push(self.cur)
        return self.table[m]


class SmoothedHinge(Loss):
    """Smoothed hinge loss of the margin m = y <w, Psi(x)> (CSS10 Example 4; classification).

    l_s(m) = (1 - m)/2 erfc(s(m - 1)) + e^{-s^2 (m-1)^2} / (2 s sqrt(pi)),
    l_s'(m) = (erf(s(m - 1)) - 1)/2 in (-1, 0), and
    0 < l_s(m) - max(0, 1 - m) = ierfc(s|m - 1|)/(2s) <= 1/(2 s sqrt(pi)).

    Taylor coefficients of l_s' (docs/math.md, item 10): gamma_0 = -(1 + erf s)/2,
    gamma_n = e^{-s^2} s^n H_(n-1)(s) / (sqrt(pi) n!) = e^{-s^2} s^n g_(n-1) / (sqrt(pi) n)
    with g_m = H_m(s)/m! from a renormalised recursion.  l'_+ has no closed
    form and is summed exactly as the positive series.  Erratum E5: the paper's
    bound 2/(z sqrt(pi)) (e^{z^2} - 1) on l'_+ is false for small arguments.
    """

    name = "smoothed_hinge"
    kind = "classification"

    def __init__(self, s: float = 1.0):
        self.s = s
        self._validate_params()

    def _validate_params(self) -> None:
        check_sharpness(self.s)

    def _value(self, z):
        s = float(self.s)
        u = z - 1.0
        return 0.5 * (1.0 - z) * erfc(s * u) + np.exp(-(s * u) ** 2) / (2.0 * s * _SQRT_PI)

    def _derivative(self, z):
        return -0.5 * erfc(float(self.s) * (z - 1.0))  # = (erf(s(m-1)) - 1)/2 without cancellation

    def _make_series(self):
        s = float(self.s)
        g = _HermiteRatios(s)
        g0 = -(1.0 + math.erf(s)) / 2.0
        log_s = math.log(s)

        def sign_log(n: int) -> tuple[float, float]:
            if n == 0:
                return -1.0, math.log(-g0)
            sg, lg = g.sign_log(n - 1)
            if sg == 0:
                return 0.0, -math.inf
            return sg, -s * s + n * log_s + lg - LOG_SQRT_PI - math.log(n)

        return TaylorSeries(sign_log, radius=math.inf, name=f"smoothed hinge derivative (s={s:g})")


class SmoothedAbsolute(Loss):
    """Smoothed absolute loss of a = <w, Psi(x)> - y (CSS10 Example 3; regression).

    l_s(a) = a erf(sa) + e^{-s^2 a^2} / (s sqrt(pi)), l_s'(a) = erf(sa), and
    0 < l_s(a) - ``|a|`` = ierfc(s|a|)/s <= 1/(s sqrt(pi)) (integration constant 0,
    the unique one with l_s - ``|a|`` -> 0).  gamma_(2k+1) = 2 (-1)^k s^(2k+1) / (sqrt(pi) k! (2k+1)),
    gamma_(2k) = 0, and l'_+(a) = erfi(sa) exactly.  Erratum E4: the paper's
    bound 1/2 + (e^{z^2} - 1)/(z sqrt(pi)) on l'_+ is false for z > 0.792.
    """

    name = "smoothed_absolute"
    kind = "regression"

    def __init__(self, s: float = 1.0):
        self.s = s
        self._validate_params()

    def _validate_params(self) -> None:
        check_sharpness(self.s)

    def _value(self, z):
        s = float(self.s)
        return z * erf(s * z) + np.exp(-(s * z) ** 2) / (s * _SQRT_PI)

    def _derivative(self, z):
        return erf(float(self.s) * z)

    def _make_series(self):
        s = float(self.s)
        log_s = math.log(s)
        log_2 = math.log(2.0)

        def sign_log(n: int) -> tuple[float, float]:
            if n % 2 == 0:
                return 0.0, -math.inf
            k = (n - 1) // 2
            return (1.0 if k % 2 == 0 else -1.0), log_2 + n * log_s - LOG_SQRT_PI - math.lgamma(k + 1) - math.log(n)

        return TaylorSeries(sign_log, radius=math.inf, name=f"smoothed absolute derivative erf({s:g} a)")

    def _derivative_plus(self, a):
        with np.errstate(over="ignore"):
            return erfi(float(self.s) * a)
