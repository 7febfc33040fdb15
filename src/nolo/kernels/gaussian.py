"""The Gaussian kernel with unknown noise (CSS10 Theorem 2; construction of docs/math.md, item 5).

``k(x, x') = exp(-||x - x'||^2 / sigma2)`` factorises as
``exp(-||x||^2/sigma2) exp(-||x'||^2/sigma2) exp(2<x, x'>/sigma2)``, so
``Psi(x) = c(x) Phi(x)`` with ``c(x) = exp(-||x||^2/sigma2)`` and ``Phi`` the
feature map of the dot-product kernel with ``beta_n = (2/sigma2)^n / n!``.
The estimate is ``Psi~(x) = c~ Phi~(x)`` where ``Phi~`` is CSS10 eq. (2) and
``c~`` is the Lemma-1 estimator of ``f(||x||^2)``, ``f(z) = exp(-z/sigma2)``,
from ``2N'`` *further* copies taken in independent pairs
(``X = <x~^(2j-1), x~^(2j)>`` has mean ``||x||^2`` for any zero-mean noise;
a single copy would be biased by ``E||Z||^2``).

The construction is not printed in CSS10 (it lives in the unavailable tech
report); it reproduces Theorem 2's query count ``3p/(p-1)^2`` exactly.
Erratum E6: Theorem 2's constant ``u`` is not a bound for it; the derived
bound ``E||Psi~||^2 <= (p/(p-1))^2 exp(2(sqrt(p) + p) B_x / sigma2)`` is used
for the theory step instead.
"""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_scalar
from nolo.exceptions import NumericalError
from nolo.kernels.base import NoisyFeatureKernel
from nolo.kernels.estimates import log_abs_dots

__all__ = ["GaussianKernel"]


class GaussianKernel(NoisyFeatureKernel):
    """``k(x, x') = exp(-||x - x'||^2 / sigma2)`` with the unbiased estimate of docs/math.md, item 5.

    Parameters
    ----------
    sigma2:
        The width ``sigma^2 > 0`` (CSS10's notation; ``s^2`` in the notes).
    p_norm:
        The ``p'`` of the norm-factor estimate ``c~`` (``None``: the learner's ``p``).
    """

    max_degree = None

    def __init__(self, sigma2: float = 1.0, p_norm: float | None = None):
        self.sigma2 = sigma2
        self.p_norm = p_norm

    def _validate_params(self) -> None:
        check_scalar(self.sigma2, "sigma2", low=0.0, low_inclusive=False)
        if self.p_norm is not None:
            check_scalar(self.p_norm, "p_norm", low=1.0, low_inclusive=False)

    def _p_norm(self, p: float) -> float:
        return float(p if self.p_norm is None else self.p_norm)

    def _log_beta(self, n: int) -> tuple[float, float]:
        self._validate_params()
        return 1.0, n * math.log(2.0 / float(self.sigma2)) - math.lgamma(n + 1)

    def log_clean_factor(self, X: np.ndarray) -> np.ndarray:
        return -np.einsum("ij,ij->i", X, X) / float(self.sigma2)

    def _gram(self, X, Y):
        self._validate_params()
        sq = np.einsum("ij,ij->i", X, X)[:, None] + np.einsum("ij,ij->i", Y, Y)[None, :] - 2.0 * (X @ Y.T)
        return np.exp(-np.maximum(sq, 0.0) / float(self.sigma2))

    def _norm_factor_estimate(self, oracle, p, rng):
        """``c~`` of docs/math.md, item 5: Lemma 1 for ``exp(-z/sigma2)`` on ``N'`` pairs of fresh copies."""
        pp = self._p_norm(p)
        m = int(rng.geometric(1.0 - 1.0 / pp)) - 1  # Geom(p') as nolo.estimators.sample_degree
        s2 = float(self.sigma2)
        log_gamma = -m * math.log(s2) - math.lgamma(m + 1)
        sign = -1.0 if m % 2 else 1.0
        log_c = log_gamma + (m + 1) * math.log(pp) - math.log(pp - 1.0)
        if m == 0:
            return sign, log_c, 0, True
        copies = oracle.query(2 * m)
        if copies is None:
            return 0.0, 0.0, 0, False
        copies = np.asarray(copies, dtype=np.float64)
        dots = np.einsum("jd,jd->j", copies[0::2], copies[1::2])
        s, lg = log_abs_dots(dots)
        return sign * float(s), log_c + float(lg), 2 * m, True

    def feature_norm_bound(self, p: float, B_x: float) -> float:
        """``E||Psi~||^2 <= p'/(p'-1) e^(2 sqrt(p') B_x/sigma2) * p/(p-1) e^(2 p B_x/sigma2)`` (erratum E6; ``p' = p``: E6 exactly)."""
        p = check_scalar(p, "p", low=1.0, low_inclusive=False)
        B_x = check_scalar(B_x, "B_x", low=0.0)
        pp = self._p_norm(p)
        s2 = float(self.sigma2)
        log_b = (
            math.log(pp / (pp - 1.0)) + 2.0 * math.sqrt(pp) * B_x / s2 + math.log(p / (p - 1.0)) + 2.0 * p * B_x / s2
        )
        if log_b > 709.0:
            raise NumericalError(f"the Gaussian feature-norm bound overflows for p={p}, B_x={B_x}, sigma2={s2}")
        return math.exp(log_b)

    def expected_queries(self, p: float) -> float:
        """``E[n + 2N'] = 1/(p-1) + 2/(p'-1)`` copies per Map_Estimate (``3/(p-1)`` for ``p' = p``)."""
        p = check_scalar(p, "p", low=1.0, low_inclusive=False)
        return 1.0 / (p - 1.0) + 2.0 / (self._p_norm(p) - 1.0)
