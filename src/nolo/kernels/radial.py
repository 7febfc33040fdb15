"""Radial-kernel approximation of CSS11 appendix E and its Gaussian-noise surrogate.

The radial kernel ``g(x, x') = (1 + ||x - x'||^2 / d)^(-1)`` is approximated
(CSS11 eq. (16)) by

    k(x, x') = d * int_0^{c/d} exp(-u r^2 - u d) du = g (1 - exp(-c / g)),   r^2 = ||x - x'||^2,

with ``1 - exp(-c) <= k / g <= 1``; its surrogate for noise ``N(0, sigma^2 I)``
(CSS11 eq. (17), *corrected*: docs/math.md, item 9 / erratum E12 -- the paper's
``sigma`` is the variance ``sigma^2``) is

    k_hat(x, x') = d * int_0^{c/d} (1 - 2 sigma^2 u)^(-d/2) exp(-u r^2 / (1 - 2 sigma^2 u) - u d) du,

so that ``E_n k_hat(x + n, a) = k(x, a)`` (Lemma 8).  ``c`` must lie in
``(0, d / (4 sigma^2))`` (the range of Lemma 7 and Theorem 5, erratum E12).

``k_hat`` is a one-dimensional integral of ``exp(phi(u))``, evaluated by the
panelled Gauss-Legendre rule of :mod:`nolo.kernels.radial_quadrature`.  Accuracy
is better than 1e-8 relative against adaptive ``scipy.integrate.quad`` over
``d`` from 1 to 1000, ``r^2`` from 0 to 1e7 and ``c`` up to 0.99 of its limit
(``tests/kernels/test_css11_kernels.py::test_radial_surrogate_matches_scipy_quad_to_1e8``), and the evaluation is
vectorised over pairs.
"""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_array, check_int, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.kernels.compiled import RadialSpec
from nolo.kernels.radial_quadrature import log_radial_surrogate_many
from nolo.kernels.surrogate import SurrogateKernelPair, pairwise_sq_dists

__all__ = [
    "approx_radial_kernel",
    "radial_surrogate",
    "log_radial_surrogate",
    "radial_g",
    "RadialKernelApproximation",
    "check_radial_c",
]


def radial_g(r2):
    """The radial kernel ``g = (1 + r^2/d)^(-1)`` as a function of ``r^2/d`` -- see :func:`approx_radial_kernel`."""
    return 1.0 / (1.0 + np.asarray(r2, dtype=np.float64))


def approx_radial_kernel(r2, d: int, c: float) -> np.ndarray:
    """Closed form of CSS11 eq. (16): ``k = g (1 - exp(-c/g))`` with ``g = (1 + r^2/d)^(-1)``.

    ``r2`` is the squared distance ``||x - x'||^2`` (any shape); computed with
    ``-expm1`` so that it is accurate to rounding for every ``r2 >= 0``.
    """
    r2 = np.asarray(r2, dtype=np.float64)
    g = 1.0 / (1.0 + r2 / d)
    return g * -np.expm1(-c / g)


def check_radial_c(c, d: int, variance: float) -> float:
    """Validate ``c`` in ``(0, d / (4 sigma^2))`` (CSS11 App. E with erratum E12: sigma^2 is the variance)."""
    limit = math.inf if variance == 0.0 else d / (4.0 * variance)
    try:
        return check_scalar(c, "c", low=0.0, low_inclusive=False, high=limit, high_inclusive=False)
    except ParameterError as exc:
        raise ParameterError(
            f"{exc} (CSS11 App. E: 0 < c < d / (4 sigma^2) with sigma^2 the noise variance; here d={d}, sigma^2={variance})"
        ) from None


def _check_r2(r2) -> np.ndarray:
    arr = check_array(r2, "r2")
    if np.any(arr < 0):
        raise ParameterError("r2 (squared distances) must be >= 0")
    return arr


def log_radial_surrogate(r2, d: int, c: float, variance: float) -> np.ndarray:
    """``log k_hat`` of CSS11 eq. (17) (corrected) at squared distances ``r2`` (any shape), vectorised over pairs."""
    d = check_int(d, "d", low=1)
    variance = check_scalar(variance, "variance", low=0.0)
    c = check_radial_c(c, d, variance)
    arr = _check_r2(r2)
    flat = np.ascontiguousarray(arr, dtype=np.float64).ravel()
    out = np.empty_like(flat)
    log_radial_surrogate_many(flat, float(d), c, variance, out)
    return out.reshape(arr.shape)


def radial_surrogate(r2, d: int, c: float, variance: float) -> np.ndarray:
    """``k_hat`` of CSS11 eq. (17) with ``sigma^2`` the noise variance (erratum E12), vectorised over pairs.

    Raises :class:`NumericalError` if a value does not fit in float64 (``c``
    too close to ``d / (4 sigma^2)`` in high dimension).
    """
    lg = log_radial_surrogate(r2, d, c, variance)
    if np.any(lg > 709.0):
        raise NumericalError(
            f"radial surrogate kernel overflows float64 (log k_hat up to {float(np.max(lg)):.1f}); "
            f"choose c well below d/(4 sigma^2) = {d / (4 * variance):.4g}"
        )
    return np.exp(lg)


class RadialKernelApproximation(SurrogateKernelPair):
    """The approximate radial kernel of CSS11 eq. (16) and its surrogate eq. (17) (App. E, corrected).

    Original kernel (used for predictions): ``k = g (1 - exp(-c/g))`` with
    ``g = (1 + ||x - x'||^2 / d)^(-1)``.  Surrogate (used for training by
    Algorithm 2): ``k_hat`` of eq. (17) with ``(1 - 2 sigma^2 u)`` -- the
    paper prints ``sigma`` where the variance is meant (docs/math.md, item 9,
    erratum E12).  Noise must be isotropic Gaussian ``N(0, sigma^2 I)``.

    Parameters
    ----------
    c : float
        Approximation parameter in ``(0, d / (4 sigma^2))``; larger ``c``
        approximates ``g`` better (``k/g >= 1 - exp(-c)``) but inflates the
        surrogate norm ``k_hat(x, x) <= exp(2 sigma^2 c)`` (Lemma 7).
    noise_variance : float
        ``sigma^2 >= 0``, the per-coordinate variance of the input noise.
    """

    def __init__(self, c=2.0, noise_variance=0.0):
        self.c = c
        self.noise_variance = noise_variance

    def _validate_params(self, d: int | None = None) -> None:
        v = check_scalar(self.noise_variance, "noise_variance", low=0.0)
        if d is None:
            check_scalar(self.c, "c", low=0.0, low_inclusive=False)
            return
        check_radial_c(self.c, check_int(d, "d", low=1), v)

    def frame(self, X: np.ndarray) -> np.ndarray:
        return X

    def spec(self, d: int) -> RadialSpec:
        """The compiled record (:class:`nolo.kernels.compiled.RadialSpec`) of the surrogate eq. (17)."""
        self.validate(d)
        return RadialSpec(np.ones(d), float(d), float(self.c), float(self.noise_variance))

    def original_spec(self, d: int) -> RadialSpec:
        """The compiled record of the original kernel eq. (16) (zero variance: the closed form)."""
        self.validate(d)
        return RadialSpec(np.ones(d), float(d), float(self.c), 0.0)

    def original_from_sq(self, r2, d):
        return approx_radial_kernel(r2, d, float(self.c))

    def surrogate_from_sq(self, r2, d):
        return radial_surrogate(r2, d, float(self.c), float(self.noise_variance))

    def original(self, A, B) -> np.ndarray:
        A, B = self._pair_args(A, B)
        return self.original_from_sq(pairwise_sq_dists(A, B), A.shape[1])

    def surrogate(self, A, B) -> np.ndarray:
        A, B = self._pair_args(A, B)
        return self.surrogate_from_sq(pairwise_sq_dists(A, B), A.shape[1])

    def original_pairs(self, A, B) -> np.ndarray:
        A, B = self._rows_args(A, B)
        return self.original_from_sq(np.sum((A - B) ** 2, axis=1), A.shape[1])

    def surrogate_pairs(self, A, B) -> np.ndarray:
        A, B = self._rows_args(A, B)
        return self.surrogate_from_sq(np.sum((A - B) ** 2, axis=1), A.shape[1])

    def surrogate_norm_bound(self, d: int) -> float:
        """``exp(2 sigma^2 c)``, the bound of Lemma 7 (variance form) on ``k_hat(x, x)``."""
        return math.exp(2.0 * float(self.noise_variance) * float(self.c))
