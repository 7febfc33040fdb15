"""Compiled whole-stream loops of the OCO notes' examples (numba, ``cache=True``).

:func:`linear_ogd_loop` plays rounds ``t0+1 .. t0+n`` of projected (composite)
online gradient descent on a linear predictor, in place on ``w`` (the iterate
to play next) and ``avg`` (running mean of the played iterates):

    played_t = phi(<w_t, x_t>, y_t) + (l2/2) ||w_t||_2^2 + l1 ||w_t||_1
    v        = w_t - eta_t (phi'(<w_t, x_t>, y_t) x_t + l2 w_t)
    w_{t+1}  = Pi_F(S_{eta_t l1}(v))

(``S`` the soft-threshold; ``l1 = 0`` gives plain projected OGD, OCO notes
section 3).  The step and projection are the shared compiled step
:func:`nolo.oco.projected_step.composite_step` (which says why ``Pi_F(S(.))``
is the exact proximal map of ``eta l1 ||.||_1 + indicator(F)`` for these sets),
its pieces composed inline.

Loss codes: 0 hinge ``max(0, 1 - y m)``, 1 logistic ``log(1 + e^{-y m})``,
2 squared ``(m - y)^2``, 3 smoothed hinge with sharpness ``s`` (CSS10 Example
4, docs/math.md, item 10), 4 absolute ``|m - y|``.  The set is coded as for the
shared step (``ConstraintSet.compiled_spec(d)``).  ``acc`` holds running sums
updated round by round (so one call on ``n`` rows and ``n`` calls on one row
give bitwise the same state): ``acc[0] += played_t``, ``acc[1] += ||g_t||^2``,
``acc[2] += eta_t ||g_t||^2``, ``acc[3] = max ||g_t||^2``, where ``g_t =
phi' x_t + l2 w_t`` is the gradient of the smooth part (the data-dependent
regret bound uses them).
A loop returns ``n``, or ``-(i+1)`` if round ``i`` produced a non-finite value
(callers work on copies and commit nothing then).
"""

from __future__ import annotations

import math

from nolo._jit import njit
from nolo.oco.projected_step import (
    BALL,
    L1_BALL,
    ball_scale,
    check_set_code,
    overflowed_norm_step,
    project_l1_inplace,
    prox_coordinate,
)

__all__ = ["LOSS_CODES", "linear_ogd_loop", "loss_and_slope", "matrix_ogd_loop", "undo_matrix_rounds"]

LOSS_CODES = {"hinge": 0, "logistic": 1, "squared": 2, "smoothed_hinge": 3, "absolute": 4}

_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


@njit(cache=True)
def loss_and_slope(code, s, m, y):
    """(phi(m, y), d phi / d m) for the loss ``code`` at margin ``m`` (see the module docstring)."""
    if code == 0:
        z = y * m
        if z < 1.0:
            return 1.0 - z, -y
        return 0.0, 0.0
    if code == 1:
        z = y * m
        if z > 0.0:
            e = math.exp(-z)
            return math.log1p(e), -y * e / (1.0 + e)
        e = math.exp(z)
        return -z + math.log1p(e), -y / (1.0 + e)
    if code == 2:
        a = m - y
        return a * a, 2.0 * a
    if code == 3:
        z = y * m
        u = s * (z - 1.0)
        val = 0.5 * (1.0 - z) * math.erfc(u) + math.exp(-u * u) * _INV_SQRT_PI / (2.0 * s)
        return val, -y * 0.5 * math.erfc(u)  # = y (erf(u) - 1)/2 without cancellation
    if code == 4:
        a = m - y
        if a > 0.0:
            return a, 1.0
        if a < 0.0:
            return -a, -1.0
        return 0.0, 0.0
    raise ValueError("unknown loss code: must be one of LOSS_CODES (nolo.learners.convex._loops)")


@njit(cache=True)
def linear_ogd_loop(X, y, etas, w, avg, t0, loss_code, s, set_code, radius, low, high, l2, l1, played, acc):
    check_set_code(set_code)
    n, d = X.shape
    for i in range(n):
        inv = 1.0 / (t0 + i + 1)
        m = 0.0
        xx = 0.0
        wsq = 0.0
        wabs = 0.0
        for j in range(d):
            wj = w[j]
            avg[j] += (wj - avg[j]) * inv
            m += wj * X[i, j]
            xx += X[i, j] * X[i, j]
            wsq += wj * wj
            wabs += abs(wj)
        val, slope = loss_and_slope(loss_code, s, m, y[i])
        played[i] = val + 0.5 * l2 * wsq + l1 * wabs
        eta = etas[i]
        # ||slope x + l2 w||^2 = slope^2 ||x||^2 + 2 slope l2 m + l2^2 ||w||^2
        if slope == 0.0:  # the same bits for finite x; no 0 * inf = NaN when ||x||^2 overflows
            gsq = l2 * l2 * wsq
        else:
            gsq = slope * slope * xx + 2.0 * slope * l2 * m + l2 * l2 * wsq
        if not math.isfinite(gsq):  # the regret statistics would hold inf/NaN
            return -(i + 1)
        acc[0] += played[i]
        acc[1] += gsq
        acc[2] += eta * gsq
        if gsq > acc[3]:
            acc[3] = gsq
        # w <- Pi_F(S_{eta l1}((1 - eta l2) w - eta slope x)): nolo.oco.projected_step.composite_step, its
        # pieces composed in place of the call (a call per round costs 7-10% here; tested bitwise equal)
        shrink = 1.0 - eta * l2
        c = eta * slope
        lam = eta * l1
        nrm2 = 0.0
        for j in range(d):
            v = prox_coordinate(shrink * w[j] - c * X[i, j], lam, set_code, low[j], high[j])
            w[j] = v
            nrm2 += v * v
        if not math.isfinite(played[i]):
            return -(i + 1)
        if not math.isfinite(nrm2):
            if not overflowed_norm_step(w, set_code, radius):
                return -(i + 1)
        elif set_code == BALL:
            scale, _ = ball_scale(nrm2, radius)
            if scale != 1.0:
                for j in range(d):
                    w[j] *= scale
        elif set_code == L1_BALL:
            project_l1_inplace(w, radius)
    return n


@njit(cache=True)
def matrix_ogd_loop(W, rows, cols, y, etas, absolute, clip, old, played, acc):
    """Rounds of OGD on a matrix with one revealed entry per round (OCO notes' matrix prediction).

    Round ``t``: play ``W[i, j]`` for the cell ``(i, j) = (rows[t], cols[t])``,
    suffer ``(W_ij - y)^2`` (``absolute=False``) or ``|W_ij - y|``, and step
    ``W_ij -= eta_t phi'`` -- the gradient ``phi' e_i e_j^T`` is rank one, so
    the step costs O(1).  ``clip > 0`` projects the entry onto ``[-clip, clip]``
    (the max-entry box, whose projection only moves the changed entry).
    ``old[t]`` keeps the entry's previous value (for rollback).  ``acc`` as in
    :func:`linear_ogd_loop`, plus ``acc[4]`` = sum of ``eta_t |phi'|`` since the
    last projection and ``acc[5]`` its maximum (the iterate's Frobenius drift
    between projections).
    """
    n = rows.shape[0]
    for t in range(n):
        i = rows[t]
        j = cols[t]
        wij = W[i, j]
        old[t] = wij
        a = wij - y[t]
        if absolute:
            val = abs(a)
            g = 1.0 if a > 0.0 else (-1.0 if a < 0.0 else 0.0)
        else:
            val = a * a
            g = 2.0 * a
        played[t] = val
        eta = etas[t]
        v = wij - eta * g
        if clip > 0.0:
            if v > clip:
                v = clip
            elif v < -clip:
                v = -clip
        if not (math.isfinite(v) and math.isfinite(val)):
            return -(t + 1)
        W[i, j] = v
        g2 = g * g
        acc[0] += val
        acc[1] += g2
        acc[2] += eta * g2
        if g2 > acc[3]:
            acc[3] = g2
        acc[4] += eta * abs(g)
        if acc[4] > acc[5]:
            acc[5] = acc[4]
    return n


@njit(cache=True)
def undo_matrix_rounds(W, rows, cols, old, n):
    """Restore the entries changed by the first ``n`` rounds of :func:`matrix_ogd_loop` (in reverse order)."""
    for t in range(n - 1, -1, -1):
        W[rows[t], cols[t]] = old[t]
