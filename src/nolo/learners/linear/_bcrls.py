"""Compiled per-item update of :class:`nolo.learners.linear.BiasCompensatedRLS` (numba, cache=True).

State (updated in place): ``L`` lower Cholesky factor of ``A_t = alpha I + sum_i xbar_i xbar_i^T``
(``p x p``, ``p = d + intercept``), ``C`` the accumulated noise correction (PSD, ``p x p``), ``b`` the
accumulated ``xbar y``, ``theta`` the coefficient iterate, ``u`` the power-iteration vector of
``M = L^{-1} C L^{-T}`` and ``aux = [rho_hat, gamma]``.  Items are rows ``R[offsets[i]:offsets[i+1]]``
(ragged readings); ``mode`` 0 = known ``Sigma`` (``C += Sigma / k``), 1 = replicates (``C += sum_k (x_k - xbar)
(x_k - xbar)^T / (k (k-1))``, using at most ``k_max`` readings).  Every item costs ``O(k p^2 + sweeps p^2)``.
Returns the number of items, or ``-(i+1)`` when item ``i`` produced a non-finite value (callers work on copies).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["bcrls_loop", "chol_rank_one_update"]


@nb.njit(cache=True, inline="always")
def chol_rank_one_update(L, x, p):
    """``L L^T + x x^T`` in place (``x`` is overwritten): Givens-style update, ``O(p^2)``, PD preserved."""
    for k in range(p):
        lkk = L[k, k]
        r = math.sqrt(lkk * lkk + x[k] * x[k])
        c = r / lkk
        s = x[k] / lkk
        L[k, k] = r
        for i in range(k + 1, p):
            L[i, k] = (L[i, k] + s * x[i]) / c
            x[i] = c * x[i] - s * L[i, k]


@nb.njit(cache=True, inline="always")
def _forward(L, r, out, p):
    """Solve ``L out = r``."""
    for i in range(p):
        s = r[i]
        for j in range(i):
            s -= L[i, j] * out[j]
        out[i] = s / L[i, i]


@nb.njit(cache=True, inline="always")
def _backward(L, r, out, p):
    """Solve ``L^T out = r``."""
    for i in range(p - 1, -1, -1):
        s = r[i]
        for j in range(i + 1, p):
            s -= L[j, i] * out[j]
        out[i] = s / L[i, i]


@nb.njit(cache=True, inline="always")
def _symv(C, v, out, p):
    for i in range(p):
        s = 0.0
        for j in range(p):
            s += C[i, j] * v[j]
        out[i] = s


@nb.njit(cache=True)
def bcrls_loop(R, offsets, y, mode, k_max, Sigma, intercept, kappa, sweeps, L, C, b, theta, u, aux):
    n = offsets.shape[0] - 1
    d = R.shape[1]
    p = L.shape[0]
    xbar = np.empty(p)
    work = np.empty(p)
    v1 = np.empty(p)
    v2 = np.empty(p)
    dv = np.empty(d)
    for i in range(n):
        o0 = offsets[i]
        k = offsets[i + 1] - o0
        if mode == 1 and k > k_max:
            k = k_max
        inv_k = 1.0 / k
        for j in range(d):
            s = 0.0
            for a in range(k):
                s += R[o0 + a, j]
            xbar[j] = s * inv_k
        if intercept:
            xbar[d] = 1.0
        # A += xbar xbar^T (Cholesky factor, stays positive definite)
        for j in range(p):
            work[j] = xbar[j]
        chol_rank_one_update(L, work, p)
        # C += the item's noise correction (PSD)
        if mode == 0:
            for a in range(d):
                for c in range(d):
                    C[a, c] += Sigma[a, c] * inv_k
        else:
            w = 1.0 / (k * (k - 1.0))
            for a in range(k):
                for j in range(d):
                    dv[j] = R[o0 + a, j] - xbar[j]
                for r in range(d):
                    f = dv[r] * w
                    for c in range(r + 1):
                        C[r, c] += f * dv[c]
            for r in range(d):
                for c in range(r):
                    C[c, r] = C[r, c]
        yi = y[i]
        for j in range(p):
            b[j] += yi * xbar[j]
        for _ in range(sweeps):
            # one power step on M = L^-1 C L^-T: rho_hat = ||M u|| (u unit) <= lambda_max(M)
            _backward(L, u, v1, p)
            _symv(C, v1, v2, p)
            _forward(L, v2, v1, p)
            nrm = 0.0
            for j in range(p):
                nrm += v1[j] * v1[j]
            nrm = math.sqrt(nrm)
            if nrm > 0.0:
                for j in range(p):
                    u[j] = v1[j] / nrm
            aux[0] = nrm
            gamma = 1.0 if nrm <= kappa else kappa / nrm
            aux[1] = gamma
            # fixed-point step theta <- (A)^-1 (b + gamma C theta): contracts at rate gamma * lambda_max(M)
            _symv(C, theta, v2, p)
            for j in range(p):
                v2[j] = b[j] + gamma * v2[j]
            _forward(L, v2, v1, p)
            _backward(L, v1, theta, p)
        ok = True
        for j in range(p):
            if not math.isfinite(theta[j]) or not math.isfinite(L[j, j]) or not math.isfinite(b[j]):
                ok = False
        if not ok or not math.isfinite(aux[0]):
            return -(i + 1)
    return n
