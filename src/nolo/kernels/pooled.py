"""CSS10's feature estimate ``Psi~(x)`` from a pool of readings: the U-statistic form of eq. (2).

Given the degree ``N = n`` (drawn as in Subroutine 2, ``P(N = n) = (p-1)/p^(n+1)``),
CSS10 eq. (2) multiplies ``n`` independent copies: ``Psi~ = sqrt(beta_n)
p^(n+1)/(p-1) x~_1 (x) ... (x) x~_n``.  With a pool ``A`` of ``a >= n`` i.i.d.
readings of the item this module replaces the product by its average over all
ordered ``n``-tuples of distinct readings (:mod:`nolo.estimators.ustat`): the
conditional expectation of the random-copy estimate given the pool, so it is
unbiased for the same ``Psi(x)`` and has no more variance (Rao-Blackwell).
The averaged tensor is kept as a signed sum of symmetric powers
``sum_r c_r z_r^{(x) n}`` (:func:`~nolo.estimators.ustat.symmetric_power_terms`),
so ``Prod`` with a clean point is ``sum_r c_r <z_r, x'>^n`` and ``Prod`` of two
estimates ``sum_{r,s} c_r c'_s <z_r, z'_s>^n``.

**Where the degree does not allow it** -- ``n > a`` (no ``n`` distinct
readings), or more than ``max_terms`` symmetric powers (large ``n`` on a large
pool) -- the estimate falls back to CSS10's random-copy estimator: ``n``
readings drawn without replacement from the pool when it holds them, else
the caller supplies fresh copies (:func:`pooled_estimate` returns ``None``
and the learner asks its oracle).

Only kernels whose feature map has no norm factor qualify (the dot-product
kernels of CSS10 section 5.2): the Gaussian kernel's factor ``c~`` needs
further independent pairs of copies (docs/math.md, item 5) and is not pooled here.

Examples
--------
>>> import numpy as np
>>> from nolo.kernels import PolynomialKernel
>>> from nolo.kernels.pooled import pooled_estimate, pooled_prod_clean
>>> A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])          # three readings of one item
>>> est = pooled_estimate(PolynomialKernel(2, c=0.0), A, 2, p=2.0)
>>> est.degree, est.points.shape                                   # degree 2: the sum and the 3 readings
(2, (4, 2))
>>> x = np.array([1.0, 2.0])
>>> # <a_i, x> = 1, 2, 3: mean over i != j of their products is 11/3, times the weight p^3/(p-1) = 8
>>> round(float(pooled_prod_clean(PolynomialKernel(2, c=0.0), est, x)), 6)
29.333333
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from nolo._validation import check_array, check_int, check_scalar
from nolo.estimators.ustat import symmetric_power_count, symmetric_power_terms
from nolo.exceptions import NumericalError, ParameterError
from nolo.kernels.base import NoisyFeatureKernel
from nolo.kernels.estimates import degree_weight

__all__ = [
    "PooledFeatureEstimate",
    "check_pooled_kernel",
    "pooled_estimate",
    "pooled_estimates_all_degrees",
    "pooled_prod",
    "pooled_prod_clean",
    "MAX_TERMS",
]

#: default cap on the symmetric powers of one estimate (beyond: the random-copy fallback).
MAX_TERMS = 256


@dataclass(frozen=True)
class PooledFeatureEstimate:
    """``Psi~(x) = sign * exp(log_weight) * sum_r coefs[r] * (copies[r, 0] (x) ... (x) copies[r, n-1])``.

    ``copies`` is ``(r, n, d)``: for the U-statistic each row repeats one
    point ``z_r`` ``n`` times (a symmetric power); for the random-copy
    fallback ``r = 1`` and the row holds ``n`` distinct readings.  ``ustat``
    says which; ``readings`` how many readings of the pool it consumed.
    """

    degree: int
    copies: np.ndarray
    coefs: np.ndarray
    sign: float
    log_weight: float
    readings: int
    ustat: bool

    @property
    def is_zero(self) -> bool:
        return self.sign == 0

    @property
    def points(self) -> np.ndarray:
        """The first copy of every term, ``(r, d)`` (the points ``z_r`` of a U-statistic estimate)."""
        if self.degree == 0:
            return np.zeros((self.copies.shape[0], self.copies.shape[2]))
        return self.copies[:, 0, :]


def check_pooled_kernel(kernel) -> NoisyFeatureKernel:
    """``kernel`` if its feature estimate has no norm factor (a dot-product kernel), else ParameterError."""
    if not isinstance(kernel, NoisyFeatureKernel):
        raise ParameterError(f"kernel must be a nolo NoisyFeatureKernel, got {kernel!r}")
    if type(kernel)._norm_factor_estimate is not NoisyFeatureKernel._norm_factor_estimate:
        raise ParameterError(
            f"kernel must be a dot-product kernel (linear, polynomial, exponential) for the pooled estimate; "
            f"{type(kernel).__name__} needs extra independent copies for its norm factor -- use NoisyKernelLearner"
        )
    kernel.validate()
    return kernel


def pooled_estimate(kernel, readings, n: int, p: float, *, max_terms: int = MAX_TERMS,
                    rng: np.random.Generator | None = None) -> PooledFeatureEstimate | None:
    """``Psi~(x)`` at degree ``n`` from the pool ``readings`` (``(a, d)``), unbiased given ``N = n``.

    The U-statistic when ``n <= a`` and it has at most ``max_terms`` terms;
    else the random-copy estimator on ``n`` readings drawn without replacement
    (``rng`` picks them; the first ``n`` rows without ``rng``) when ``n <= a``;
    ``None`` when ``n > a`` (the caller needs ``n`` fresh copies).  A degree
    with ``beta_n = 0`` gives the zero estimate (no reading used).
    """
    A = check_array(readings, "readings", ndim=2)
    n = check_int(n, "n", low=0)
    p = check_scalar(p, "p", low=1.0, low_inclusive=False)
    a, d = A.shape
    sb, lb = kernel.log_beta(n)
    if sb == 0:
        return PooledFeatureEstimate(n, np.zeros((0, n, d)), np.zeros(0), 0.0, 0.0, 0, True)
    lw = degree_weight(lb, n, p)
    if n > a:
        return None
    if symmetric_power_count(a, n) <= max_terms:
        Z, c = symmetric_power_terms(A, n)
        copies = np.repeat(Z[:, None, :], n, axis=1)
        return PooledFeatureEstimate(n, copies, c, 1.0, lw, a, True)
    idx = rng.choice(a, size=n, replace=False) if rng is not None else np.arange(n)
    return PooledFeatureEstimate(n, A[idx][None, :, :].copy(), np.ones(1), 1.0, lw, n, False)


def pooled_estimates_all_degrees(kernel, readings, degrees, *, max_terms: int = MAX_TERMS,
                                 rng: np.random.Generator | None = None) -> list[PooledFeatureEstimate]:
    """``Psi~(x)`` of a finite-degree kernel without the random degree: one block per degree ``n`` of ``degrees``.

    Block ``n`` is ``sqrt(beta_n) U_n(readings)`` (weight ``sqrt(beta_n)``, no ``p`` factors): its
    expectation is the degree-``n`` block ``sqrt(beta_n) x^{(x) n}`` of ``Psi(x)``, so the sum over all
    degrees with ``beta_n != 0`` is unbiased for ``Psi(x)`` -- the random-degree construction of CSS10 eq. (2)
    with the degree averaged out, possible once the pool holds ``max(degrees)`` readings
    (ParameterError otherwise).  Blocks with ``beta_n = 0`` are omitted.
    """
    A = check_array(readings, "readings", ndim=2)
    out = []
    for n in degrees:
        n = check_int(n, "degree", low=0)
        sb, lb = kernel.log_beta(n)
        if sb == 0:
            continue
        if n > A.shape[0]:
            raise ParameterError(f"degree {n} needs at least {n} readings, got {A.shape[0]}")
        est = pooled_estimate(kernel, A, n, 2.0, max_terms=max_terms, rng=rng)
        out.append(PooledFeatureEstimate(est.degree, est.copies, est.coefs, est.sign, 0.5 * lb, est.readings,
                                         est.ustat))
    return out


def _check_finite(v, what: str):
    if not np.all(np.isfinite(v)):
        raise NumericalError(f"{what} is not representable in float64 (overflow); rescale the inputs or raise p")
    return v


def pooled_prod_clean(kernel, est: PooledFeatureEstimate, X) -> np.ndarray | float:
    """``<Psi~(x), Psi(x')>`` for each clean row of ``X``: ``sqrt(beta_n) w sum_r c_r prod_k <copies[r,k], x'>``."""
    Xa = check_array(X, "X", ndim=(1, 2))
    X2 = Xa[None, :] if Xa.ndim == 1 else Xa
    if est.is_zero:
        out = np.zeros(X2.shape[0])
    else:
        _, lb = kernel.log_beta(est.degree)
        dots = np.einsum("rkd,bd->brk", est.copies, X2)  # (B, r, n)
        with np.errstate(over="ignore", invalid="ignore"):
            out = est.sign * math.exp(est.log_weight + 0.5 * lb) * (np.prod(dots, axis=2) @ est.coefs)
        _check_finite(out, "Prod(Psi~, x')")
    return float(out[0]) if Xa.ndim == 1 else out


def pooled_prod(a: PooledFeatureEstimate, b: PooledFeatureEstimate) -> float:
    """``<Psi~(x), Psi~(x')>``: 0 unless the degrees agree, else ``w w' sum_{r,s} c_r c'_s prod_k <a_rk, b_sk>``."""
    if a.degree != b.degree or a.is_zero or b.is_zero:
        return 0.0
    G = np.einsum("rkd,skd->rsk", a.copies, b.copies)
    with np.errstate(over="ignore", invalid="ignore"):
        v = a.sign * b.sign * math.exp(a.log_weight + b.log_weight) * float(a.coefs @ np.prod(G, axis=2) @ b.coefs)
    return float(_check_finite(v, "Prod(Psi~, Psi~')"))
