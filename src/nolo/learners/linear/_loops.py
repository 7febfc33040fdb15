"""Compiled whole-stream loops of projected OGD with the CSS11 gradient estimates (numba, cache=True).

Each loop plays rounds ``t0+1 .. t0+n`` in place on ``w`` (the iterate to
play next) and ``avg`` (running mean of the played iterates, the
online-to-batch average), with step sizes ``etas`` and projection on the
ball of radius ``radius`` (``w <- min(1, radius/||w'||) w'``, Algorithm 1), the
shared compiled rule :func:`nolo.oco.projected_step.ball_scale` applied to the
squared norm accumulated in the same pass as the step.
``C`` holds the noisy copies, shape ``(n, m, d)``; copy ``a`` of round ``i``
is ``C[i, a]``.  If ``Xeval`` has ``n`` rows, ``pred[i] = <w_t, Xeval[i]>``
records the prediction of the played iterate (e.g. on the clean instance,
for regret).  The passes over the ``d`` coordinates are fused (two per round
plus one when the projection is active).  A loop returns ``n``, or
``-(i+1)`` if round ``i`` produced a non-finite iterate (callers work on
copies and commit nothing then).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import nolo._jit  # noqa: F401  (nolo's cache locator, before the first nb.njit)
from nolo.oco.projected_step import ball_scale

__all__ = ["two_copy_loop", "ustat_loop", "mean_copies", "known_cov_diag_loop", "known_cov_full_loop", "rotate_rows"]


_ROW_TILE = 32


@nb.njit(cache=True)
def rotate_rows(A, Q):
    """``A @ Q`` computed row by row in one fixed summation order (``k = 0..d-1``).

    Unlike a BLAS product, row ``i`` of the result depends only on ``A[i]``
    and ``Q`` -- not on how many rows are rotated together -- so a stream
    played in the noise eigenframe gives the same bits however it is chunked.
    """
    n, d = A.shape
    m = Q.shape[1]
    out = np.zeros((n, m))
    # tiles of rows share each row of Q while it is in cache; every entry still accumulates k = 0..d-1 in order
    for i0 in range(0, n, _ROW_TILE):
        i1 = min(i0 + _ROW_TILE, n)
        for k in range(d):
            for i in range(i0, i1):
                a = A[i, k]
                for j in range(m):
                    out[i, j] += a * Q[k, j]
    return out


@nb.njit(cache=True, inline="always")
def _record_and_residual(w, avg, inv, C, i, a, yi, Xeval, pred, d):
    """Update the running average with w, record <w, Xeval[i]>, return <w, C[i, a]> - y_i."""
    r = -yi
    for j in range(d):
        wj = w[j]
        avg[j] += (wj - avg[j]) * inv
        r += wj * C[i, a, j]
    if Xeval.shape[0] > 0:
        s = 0.0
        for j in range(d):
            s += w[j] * Xeval[i, j]
        pred[i] = s
    return r


@nb.njit(cache=True, inline="always")
def _scale_to_ball(w, nrm2, radius, d):
    """Project ``w`` (with ``||w||^2 = nrm2``) on the ball with the shared compiled rule; False if not finite."""
    scale, _ = ball_scale(nrm2, radius)
    if scale != 1.0:
        for j in range(d):
            w[j] *= scale
    return math.isfinite(nrm2)


@nb.njit(cache=True, inline="always")
def _step_and_project(w, coef, g, radius, d):
    """``w <- Pi_ball(w - coef g)`` in one fused pass (norm accumulated with the step); False if not finite."""
    nrm2 = 0.0
    for j in range(d):
        v = w[j] - coef * g[j]
        w[j] = v
        nrm2 += v * v
    return _scale_to_ball(w, nrm2, radius, d)


@nb.njit(cache=True)
def two_copy_loop(C, a1, a2, y, etas, radius, w, avg, t0, Xeval, pred):
    """Step along ``2(<w, C[i,a1]> - y[i]) C[i,a2]``: Setting 1 (a1=0, a2=1), naive/clean OGD (a1=a2=0)."""
    n = C.shape[0]
    d = C.shape[2]
    for i in range(n):
        r = _record_and_residual(w, avg, 1.0 / (t0 + i + 1), C, i, a1, y[i], Xeval, pred, d)
        if not _step_and_project(w, 2.0 * etas[i] * r, C[i, a2], radius, d):
            return -(i + 1)
    return n


@nb.njit(cache=True)
def ustat_loop(C, y, etas, radius, w, avg, t0, Xeval, pred):
    """Setting 1 with all ``k = C.shape[1] >= 2`` copies: step along ``2 (U w - xbar y)``, ``U`` the U-statistic.

    ``U w = (S (S.w) - sum_a x_a (x_a.w)) / (k (k-1))`` with ``S = sum_a x_a`` (``O(k d)``); unbiased for the
    clean gradient ``2 (x x^T w - x y)`` (:mod:`nolo.estimators.replicates`), and by Rao-Blackwell its second
    moment is at most that of Lemma 1's two-copy estimate (it averages that estimate over the ordered pairs).
    """
    n = C.shape[0]
    k = C.shape[1]
    d = C.shape[2]
    S = np.empty(d)
    g = np.empty(d)
    inv_pairs = 1.0 / (k * (k - 1.0))
    for i in range(n):
        inv = 1.0 / (t0 + i + 1)
        for j in range(d):
            avg[j] += (w[j] - avg[j]) * inv
        if Xeval.shape[0] > 0:
            s = 0.0
            for j in range(d):
                s += w[j] * Xeval[i, j]
            pred[i] = s
        for j in range(d):
            S[j] = 0.0
            g[j] = 0.0
        for a in range(k):
            pa = 0.0
            for j in range(d):
                xa = C[i, a, j]
                S[j] += xa
                pa += xa * w[j]
            for j in range(d):
                g[j] -= pa * C[i, a, j]
        sw = 0.0
        for j in range(d):
            sw += S[j] * w[j]
        ybar = y[i] / k
        for j in range(d):
            g[j] = (S[j] * sw + g[j]) * inv_pairs - S[j] * ybar  # U w - xbar y
        if not _step_and_project(w, 2.0 * etas[i], g, radius, d):
            return -(i + 1)
    return n


@nb.njit(cache=True)
def mean_copies(C):
    """``(n, 1, d)`` means of the ``k`` copies of each round, summed in copy order (the same bits per row whatever ``n``)."""
    n, k, d = C.shape
    out = np.zeros((n, 1, d))
    inv = 1.0 / k
    for i in range(n):
        for a in range(k):
            for j in range(d):
                out[i, 0, j] += C[i, a, j]
        for j in range(d):
            out[i, 0, j] *= inv
    return out


@nb.njit(cache=True)
def known_cov_diag_loop(C, y, etas, radius, w, avg, t0, S, Xeval, pred):
    """Setting 2, diagonal ``Sigma_t`` (``S`` (n, d) or (1, d)): step along ``2(<w,x>-y) x - 2 Sigma_t w``."""
    n = C.shape[0]
    d = C.shape[2]
    shared = S.shape[0] == 1
    for i in range(n):
        k = 0 if shared else i
        r = _record_and_residual(w, avg, 1.0 / (t0 + i + 1), C, i, 0, y[i], Xeval, pred, d)
        coef = 2.0 * etas[i] * r
        two_eta = 2.0 * etas[i]
        nrm2 = 0.0
        for j in range(d):
            v = w[j] * (1.0 + two_eta * S[k, j]) - coef * C[i, 0, j]
            w[j] = v
            nrm2 += v * v
        if not _scale_to_ball(w, nrm2, radius, d):
            return -(i + 1)
    return n


@nb.njit(cache=True)
def known_cov_full_loop(C, y, etas, radius, w, avg, t0, S, Xeval, pred):
    """Setting 2, full ``Sigma_t`` (``S`` (n, d, d) or (1, d, d)); ``O(d^2)`` per round for ``Sigma_t w``."""
    n = C.shape[0]
    d = C.shape[2]
    shared = S.shape[0] == 1
    sw = np.empty(d)
    for i in range(n):
        k = 0 if shared else i
        r = _record_and_residual(w, avg, 1.0 / (t0 + i + 1), C, i, 0, y[i], Xeval, pred, d)
        for p in range(d):
            s = 0.0
            for q in range(d):
                s += S[k, p, q] * w[q]
            sw[p] = s
        coef = 2.0 * etas[i] * r
        two_eta = 2.0 * etas[i]
        nrm2 = 0.0
        for j in range(d):
            v = w[j] + two_eta * sw[j] - coef * C[i, 0, j]
            w[j] = v
            nrm2 += v * v
        if not _scale_to_ball(w, nrm2, radius, d):
            return -(i + 1)
    return n
