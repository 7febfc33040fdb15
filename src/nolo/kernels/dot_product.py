"""Dot-product kernels ``k(x, x') = Q(<x, x'>) = sum_n beta_n <x, x'>^n`` with ``beta_n >= 0`` (CSS10 section 5.2).

A dot-product kernel *is* its coefficient sequence (Schoelkopf & Smola,
Thm. 4.19: ``beta_n >= 0`` is necessary for ``Q(<x,x'>)`` to be a kernel on
every ``R^d``).  Its explicit feature map is indexed by ``(n, k_1..k_n)``
with entries ``sqrt(beta_n) x_{k_1} ... x_{k_n}``, which CSS10 eq. (2)
estimates without bias from ``N`` noisy copies (:meth:`map_estimate`).

Classes: :class:`DotProductKernel` (any finite user sequence, validated),
:class:`LinearKernel`, :class:`PolynomialKernel` (homogeneous ``c = 0`` or
inhomogeneous, any degree), :class:`ExponentialKernel`.
"""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_array, check_int, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.kernels.base import NoisyFeatureKernel

__all__ = ["DotProductKernel", "LinearKernel", "PolynomialKernel", "ExponentialKernel"]


class DotProductKernel(NoisyFeatureKernel):
    """``k(x, x') = sum_n beta_n <x, x'>^n`` for a finite nonnegative sequence ``beta`` (CSS10 section 5.2).

    Parameters
    ----------
    beta:
        ``beta_0, ..., beta_D``: finite, ``>= 0``, not all zero.

    ``Map_Estimate``/``Prod`` follow CSS10 eq. (2) and Subroutines 2-4
    (docs/math.md, item 2); ``E||Psi~(x)||^2 = p/(p-1) Q(p E||x~||^2)`` (Lemma 3).
    """

    def __init__(self, beta=(0.0, 1.0)):
        self.beta = beta

    def _beta_array(self) -> np.ndarray:
        b = check_array(self.beta, "beta", ndim=1)
        if b.shape[0] == 0:
            raise ParameterError("beta must be a non-empty sequence of nonnegative reals beta_0, beta_1, ...")
        if np.any(b < 0):
            raise ParameterError(
                f"beta must contain only nonnegative coefficients (a dot-product kernel needs beta_n >= 0), got {list(b)}"
            )
        if not np.any(b > 0):
            raise ParameterError("beta must have at least one positive coefficient, got all zeros")
        return b

    def _validate_params(self) -> None:
        self._beta_array()

    @property
    def max_degree(self) -> int | None:  # type: ignore[override]
        b = self._beta_array()
        return int(np.max(np.nonzero(b)[0]))

    def _log_beta(self, n: int) -> tuple[float, float]:
        b = self._beta_array()
        if n >= b.shape[0] or b[n] == 0:
            return 0.0, -math.inf
        return 1.0, math.log(b[n])

    def Q(self, z):
        """``Q(z) = sum_n beta_n z^n`` (elementwise)."""
        b = self._beta_array()
        return np.polynomial.polynomial.polyval(np.asarray(z, dtype=np.float64), b)

    def _gram(self, X, Y):
        K = self.Q(X @ Y.T)
        if not np.all(np.isfinite(K)):
            raise NumericalError(f"{type(self).__name__} overflowed float64 on these inputs; rescale them")
        return K

    def feature_norm_bound(self, p: float, B_x: float) -> float:
        """CSS10 Lemma 3: ``E||Psi~(x)||^2 <= p/(p-1) Q(p B_x)`` when ``E||x~||^2 <= B_x``."""
        p = check_scalar(p, "p", low=1.0, low_inclusive=False)
        B_x = check_scalar(B_x, "B_x", low=0.0)
        value = p / (p - 1.0) * float(self.Q(p * B_x))
        if not math.isfinite(value):
            raise NumericalError(f"the feature-norm bound p/(p-1) Q(p B_x) overflows for p={p}, B_x={B_x}")
        return value

    def expected_queries(self, p: float) -> float:
        """``E N = 1/(p-1)`` copies per Map_Estimate (without skipping zero ``beta_n``)."""
        p = check_scalar(p, "p", low=1.0, low_inclusive=False)
        return 1.0 / (p - 1.0)


class LinearKernel(DotProductKernel):
    """``k(x, x') = <x, x'>`` (``beta_1 = 1``); ``Psi`` is the identity (CSS10 section 2)."""

    def __init__(self):
        pass

    def _beta_array(self) -> np.ndarray:
        return np.array([0.0, 1.0])

    def _validate_params(self) -> None:
        return None

    def Q(self, z):
        return np.asarray(z, dtype=np.float64) * 1.0


class PolynomialKernel(DotProductKernel):
    """``k(x, x') = (c + <x, x'>)^degree``: homogeneous for ``c = 0``, inhomogeneous for ``c > 0`` (CSS10 section 2).

    ``beta_n = binom(degree, n) c^(degree - n)`` (docs/math.md, item 2).
    """

    def __init__(self, degree: int = 2, c: float = 1.0):
        self.degree = degree
        self.c = c

    def _validate_params(self) -> None:
        check_int(self.degree, "degree", low=1)
        check_scalar(self.c, "c", low=0.0)

    def _beta_array(self) -> np.ndarray:
        self._validate_params()
        D, c = int(self.degree), float(self.c)
        return np.array([math.comb(D, n) * c ** (D - n) for n in range(D + 1)], dtype=np.float64)

    def _log_beta(self, n: int) -> tuple[float, float]:
        self._validate_params()
        D, c = int(self.degree), float(self.c)
        if n > D or (c == 0 and n != D):
            return 0.0, -math.inf
        lc = (D - n) * math.log(c) if D > n else 0.0
        return 1.0, math.log(math.comb(D, n)) + lc

    def Q(self, z):
        self._validate_params()
        return (float(self.c) + np.asarray(z, dtype=np.float64)) ** int(self.degree)


class ExponentialKernel(DotProductKernel):
    """``k(x, x') = exp(kappa <x, x'>)``, ``beta_n = kappa^n / n!`` (CSS10 section 2, docs/math.md, item 2)."""

    def __init__(self, kappa: float = 1.0):
        self.kappa = kappa

    def _validate_params(self) -> None:
        check_scalar(self.kappa, "kappa", low=0.0, low_inclusive=False)

    max_degree = None  # type: ignore[assignment]

    def _log_beta(self, n: int) -> tuple[float, float]:
        self._validate_params()
        return 1.0, n * math.log(float(self.kappa)) - math.lgamma(n + 1)

    def Q(self, z):
        self._validate_params()
        with np.errstate(over="ignore"):
            return np.exp(float(self.kappa) * np.asarray(z, dtype=np.float64))

    def _beta_array(self) -> np.ndarray:  # only for messages; the sequence is infinite
        raise ParameterError("ExponentialKernel has infinitely many coefficients; use log_beta(n)")
