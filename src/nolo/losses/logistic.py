"""Logistic loss l(m) = log(1 + exp(-m)) of the margin m = y <w, Psi(x)>."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit, zeta

from nolo.estimators.series import TaylorSeries
from nolo.losses.base import Loss

__all__ = ["Logistic"]

_LOG_2PI = math.log(2.0 * math.pi)


def _sign_log(n: int) -> tuple[float, float]:
    """gamma_n of l'(m) = -1/2 + tanh(m/2)/2.

    tanh(x) = sum_k 4^k (4^k - 1) B_2k x^(2k-1) / (2k)!, so gamma_0 = -1/2,
    gamma_(2k-1) = (4^k - 1) B_2k / (2k)! and the other even terms vanish.
    With |B_2k| = 2 (2k)! zeta(2k) / (2 pi)^(2k) and sign(B_2k) = (-1)^(k+1):
    |gamma_(2k-1)| = 2 (4^k - 1) zeta(2k) / (2 pi)^(2k)  -- exact and overflow-free.
    """
    if n == 0:
        return -1.0, -math.log(2.0)
    if n % 2 == 0:
        return 0.0, -math.inf
    k = (n + 1) // 2
    log_abs = (
        math.log(2.0) + 2 * k * math.log(2.0) + math.log1p(-(4.0 ** -k)) + math.log(zeta(2 * k)) - 2 * k * _LOG_2PI
    )
    return (1.0 if k % 2 == 1 else -1.0), log_abs


class Logistic(Loss):
    """Logistic loss l(m) = log(1 + e^{-m}), m = y <w, Psi(x)> (classification).

    Not among CSS10's examples, but its derivative l'(m) = -1/(1 + e^m)
    = -1/2 + tanh(m/2)/2 is analytic at 0 with **finite radius pi** (poles of
    tanh(m/2) at m = +-i pi).  Coefficients via Bernoulli numbers (exact, see
    ``_sign_log``); l'_+(a) = 1/2 + tan(a/2)/2 for 0 <= a < pi.  Lemma 1's
    estimate has finite variance only while p E[X^2] < pi^2.
    """

    name = "logistic"
    kind = "classification"

    def _value(self, z):
        return np.logaddexp(0.0, -z)

    def _derivative(self, z):
        return -expit(-z)

    def _make_series(self):
        return TaylorSeries(_sign_log, radius=math.pi, name="logistic loss derivative -1/(1+e^m)")

    def _derivative_plus(self, a):
        return 0.5 + 0.5 * np.tan(0.5 * a)
