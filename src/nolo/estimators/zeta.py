"""A degree law with polynomial tails: P(N = n) = (n + 1)**(-alpha) / zeta(alpha), n >= 0.

For the polynomial-sequence estimator (CSS10 slides) when the differences
A_n - A_(n-1) decay only polynomially, a geometric law would give infinite
variance; a power-law tail keeps 1/P(N = n) polynomial.  E[N] is finite for
alpha > 2: E[N] = zeta(alpha - 1)/zeta(alpha) - 1, and P(N >= z) = zeta(alpha, z + 1)/zeta(alpha)
(Hurwitz zeta).  Sampling: ``rng.zipf(alpha) - 1``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import zeta

from nolo._validation import check_scalar
from nolo.estimators._validated import ValidatedConfigurable
from nolo.exceptions import ParameterError
from nolo.random import as_generator

__all__ = ["ZetaDegree"]


class ZetaDegree(ValidatedConfigurable):
    """Zeta (discrete power-law) degree law P(N = n) = (n + 1)^(-alpha) / zeta(alpha), alpha > 1."""

    def __init__(self, alpha: float = 3.0):
        self.alpha = alpha
        self._validate_params()

    def _validate_params(self) -> None:
        check_scalar(self.alpha, "alpha", low=1.0, low_inclusive=False)

    def sample(self, rng, size=None):
        rng = as_generator(rng, "rng")
        n = rng.zipf(float(self.alpha), size=size) - 1
        return int(n) if size is None else np.asarray(n, dtype=np.int64)

    def log_pmf(self, n):
        arr = np.asarray(n, dtype=np.float64)
        if np.any(arr < 0) or np.any(arr != np.floor(arr)):
            raise ParameterError(f"n must be a non-negative integer (or array of them), got {n!r}")
        out = -float(self.alpha) * np.log1p(arr) - math.log(zeta(float(self.alpha)))
        return float(out) if out.ndim == 0 else out

    def pmf(self, n):
        out = np.exp(self.log_pmf(n))
        return float(out) if np.ndim(out) == 0 else out

    def tail(self, z):
        z = np.maximum(np.asarray(z, dtype=np.float64), 0.0)
        if np.any(z != np.floor(z)):
            raise ParameterError(f"z must be an integer (or array of integers), got {z!r}")
        out = zeta(float(self.alpha), z + 1.0) / zeta(float(self.alpha))
        return float(out) if np.ndim(out) == 0 else out

    @property
    def mean(self) -> float:
        a = float(self.alpha)
        return math.inf if a <= 2 else zeta(a - 1.0) / zeta(a) - 1.0

    def support_max(self) -> int | None:
        return None
