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

``k_hat`` is a one-dimensional integral of ``exp(phi(u))`` with a smooth
exponent ``phi``; it is evaluated by composite Gauss-Legendre quadrature in
log space (every node value is ``exp(phi - phi_max)``; the result is
``exp(phi_max) * sum``).  The panels are placed where the mass is: with
``w = 1 / (1 - 2 sigma^2 u)``, ``phi'(u) = d sigma^2 w - r^2 w^2 - d`` is a
quadratic in ``w``, so the local minimum and maximum of ``phi`` are known in
closed form; each unimodal piece is covered by panels that start at its mode
with the local width (``1/|phi'|`` at an end, ``1/sqrt(-phi'')`` inside) and
double outward until the integrand has dropped by ``exp(-50)``.  Accuracy is
better than 1e-8 relative against adaptive ``scipy.integrate.quad`` over
``d`` from 1 to 1000, ``r^2`` from 0 to 1e7 and ``c`` up to 0.99 of its limit
(``tests/kernels/test_css11_kernels.py::test_radial_surrogate_matches_scipy_quad_to_1e8``), and the evaluation is
vectorised over pairs.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from nolo._validation import check_array, check_int, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.kernels.surrogate import SurrogateKernelPair, pairwise_sq_dists

__all__ = [
    "approx_radial_kernel",
    "radial_surrogate",
    "log_radial_surrogate",
    "radial_g",
    "RadialKernelApproximation",
    "check_radial_c",
]

#: Gauss-Legendre nodes per panel of the composite rule.
PANEL_NODES = 20
_GL_X, _GL_W = np.polynomial.legendre.leggauss(PANEL_NODES)
#: stop adding panels once the integrand is below exp(-_DROP) of its maximum
_DROP = 50.0
_MAX_PANELS = 64


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


@nb.njit(cache=True, inline="always")
def _phi(u, r2, d, v):
    """Exponent of the surrogate integrand (without the constant log d)."""
    a = 1.0 - 2.0 * v * u
    return -0.5 * d * math.log1p(-2.0 * v * u) - u * r2 / a - u * d


@nb.njit(cache=True, inline="always")
def _dphi(u, r2, d, v):
    w = 1.0 / (1.0 - 2.0 * v * u)
    return d * v * w - r2 * w * w - d


@nb.njit(cache=True, inline="always")
def _d2phi(u, r2, d, v):
    w = 1.0 / (1.0 - 2.0 * v * u)
    # dw/du = 2 v w^2
    return (d * v - 2.0 * r2 * w) * 2.0 * v * w * w


@nb.njit(cache=True)
def _panel(a, b, r2, d, v, ref, gx, gw):
    """Gauss-Legendre integral of exp(phi - ref) over [a, b]."""
    half = 0.5 * (b - a)
    mid = 0.5 * (b + a)
    s = 0.0
    for k in range(gx.shape[0]):
        s += gw[k] * math.exp(_phi(mid + half * gx[k], r2, d, v) - ref)
    return s * half


@nb.njit(cache=True)
def _unimodal(A, B, m, r2, d, v, ref, gx, gw):
    """Integral of exp(phi - ref) over [A, B] where phi is unimodal with its maximum at m in [A, B]."""
    if B <= A:
        return 0.0
    g1 = abs(_dphi(m, r2, d, v))
    g2 = math.sqrt(abs(_d2phi(m, r2, d, v)))
    scale = g1 if g1 > g2 else g2
    h = (B - A) if scale * (B - A) <= 1.0 else 1.0 / scale
    top = _phi(m, r2, d, v)
    total = 0.0
    # rightwards from m
    lo = m
    step = h
    for _ in range(_MAX_PANELS):
        if lo >= B:
            break
        hi = lo + step
        if hi > B:
            hi = B
        total += _panel(lo, hi, r2, d, v, ref, gx, gw)
        if _phi(hi, r2, d, v) < top - _DROP:
            break
        lo = hi
        step *= 2.0
    # leftwards from m
    hi = m
    step = h
    for _ in range(_MAX_PANELS):
        if hi <= A:
            break
        lo = hi - step
        if lo < A:
            lo = A
        total += _panel(lo, hi, r2, d, v, ref, gx, gw)
        if _phi(lo, r2, d, v) < top - _DROP:
            break
        hi = lo
        step *= 2.0
    return total


@nb.njit(cache=True)
def _log_surrogate_scalar(r2, d, c, v, gx, gw):
    """log k_hat(r^2) for one pair (d, c, v = sigma^2 fixed)."""
    U = c / d
    if v == 0.0:
        # no noise: k_hat = k, closed form
        g = 1.0 / (1.0 + r2 / d)
        return math.log(g) + math.log(-math.expm1(-c / g))
    # critical points of phi: roots of r2 w^2 - d v w + d = 0, w = 1/(1 - 2 v u) in [1, wU]
    wU = 1.0 / (1.0 - 2.0 * v * U)
    u_min = -1.0  # local minimum of phi (split point), if inside (0, U)
    u_max = 0.0  # local maximum of phi inside the right piece
    if r2 == 0.0:
        # phi' = d v w - d: phi' > 0 iff w > 1/v
        if d * v * wU - d <= 0.0:
            u_max = 0.0  # decreasing: mode at 0 (handled by the right piece with A=0)
        else:
            w0 = 1.0 / v
            if w0 > 1.0:
                u_min = (1.0 - 1.0 / w0) / (2.0 * v)
            u_max = U
    else:
        disc = d * d * v * v - 4.0 * r2 * d
        if disc <= 0.0:
            u_max = 0.0
        else:
            sq = math.sqrt(disc)
            wm = (d * v - sq) / (2.0 * r2)
            wp = (d * v + sq) / (2.0 * r2)
            if wp <= 1.0 or wm >= wU:
                u_max = 0.0  # phi' < 0 on the whole interval
            else:
                if wm > 1.0:
                    u_min = (1.0 - 1.0 / wm) / (2.0 * v)
                if wp >= wU:
                    u_max = U
                else:
                    u_max = (1.0 - 1.0 / wp) / (2.0 * v)
    # pieces: [0, u_min] decreasing (mode 0) and [max(u_min,0), U] with mode u_max
    A = u_min if u_min > 0.0 else 0.0
    if u_max < A:
        u_max = A
    ref = _phi(u_max, r2, d, v)
    if u_min > 0.0:
        p0 = _phi(0.0, r2, d, v)
        if p0 > ref:
            ref = p0
    total = _unimodal(A, U, u_max, r2, d, v, ref, gx, gw)
    if u_min > 0.0:
        total += _unimodal(0.0, u_min, 0.0, r2, d, v, ref, gx, gw)
    return math.log(d) + ref + math.log(total)


@nb.njit(cache=True)
def log_radial_surrogate_value(r2, d, c, v):
    """``log k_hat`` of eq. (17) for one squared distance, compiled (``v = sigma^2``; ``v = 0`` gives eq. (16)).

    The scalar evaluator behind :mod:`nolo.kernels.compiled`; no argument checks.
    """
    return _log_surrogate_scalar(r2, d, c, v, _GL_X, _GL_W)


@nb.njit(cache=True)
def _log_surrogate_many(r2, d, c, v, gx, gw, out):
    for i in range(r2.shape[0]):
        out[i] = _log_surrogate_scalar(r2[i], d, c, v, gx, gw)


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
    _log_surrogate_many(flat, float(d), c, variance, _GL_X, _GL_W, out)
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

    def spec(self, d: int):
        """:class:`nolo.kernels.compiled.KernelSpec` of the surrogate eq. (17) for the compiled loops."""
        from nolo.kernels.compiled import RADIAL, KernelSpec

        self.validate(d)
        return KernelSpec(RADIAL, np.ones(d), np.array([float(d), float(self.c), float(self.noise_variance)]))

    def original_spec(self, d: int):
        """:class:`nolo.kernels.compiled.KernelSpec` of the original kernel eq. (16) (zero variance: closed form)."""
        from nolo.kernels.compiled import RADIAL, KernelSpec

        self.validate(d)
        return KernelSpec(RADIAL, np.ones(d), np.array([float(d), float(self.c), 0.0]))

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
