"""Compiled log-space quadrature of the radial surrogate kernel (CSS11 eq. (17), corrected).

``k_hat(r^2) = d * int_0^{c/d} exp(phi(u)) du`` with a smooth exponent ``phi`` is evaluated by composite
Gauss-Legendre quadrature in log space (every node value is ``exp(phi - phi_max)``; the result is
``exp(phi_max) * sum``).  The panels are placed where the mass is: with ``w = 1 / (1 - 2 sigma^2 u)``,
``phi'(u) = d sigma^2 w - r^2 w^2 - d`` is a quadratic in ``w``, so the local minimum and maximum of ``phi`` are
known in closed form; each unimodal piece is covered by panels that start at its mode with the local width
(``1/|phi'|`` at an end, ``1/sqrt(-phi'')`` inside) and double outward until the integrand has dropped by
``exp(-50)``.

A leaf module (numba and NumPy only) so that both the kernel class (:mod:`nolo.kernels.radial`) and the compiled
evaluators (:mod:`nolo.kernels.compiled`) can use it without importing each other.  No argument checks here:
:func:`nolo.kernels.radial.log_radial_surrogate` is the checked entry point.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import nolo._jit  # noqa: F401  (nolo's cache locator, before the first nb.njit)

__all__ = ["PANEL_NODES", "log_radial_surrogate_value", "log_radial_surrogate_many"]

#: Gauss-Legendre nodes per panel of the composite rule.
PANEL_NODES = 20
_GL_X, _GL_W = np.polynomial.legendre.leggauss(PANEL_NODES)
#: stop adding panels once the integrand is below exp(-_DROP) of its maximum
_DROP = 50.0
_MAX_PANELS = 64


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
    """``log k_hat`` of eq. (17) for one squared distance, compiled (``v = sigma^2``; ``v = 0`` gives eq. (16))."""
    return _log_surrogate_scalar(r2, d, c, v, _GL_X, _GL_W)


@nb.njit(cache=True)
def log_radial_surrogate_many(r2, d, c, v, out):
    """``out[i] = log k_hat(r2[i])`` for a flat array of squared distances."""
    for i in range(r2.shape[0]):
        out[i] = _log_surrogate_scalar(r2[i], d, c, v, _GL_X, _GL_W)
