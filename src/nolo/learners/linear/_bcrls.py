"""Compiled per-item update of :class:`nolo.learners.linear.BiasCompensatedRLS` (numba, cache=True).

State (updated in place): ``U`` upper Cholesky factor of ``A_t = alpha I + sum_i xbar_i xbar_i^T = U^T U``
(``p x p``, ``p = d + intercept``), ``C`` the accumulated noise correction (PSD, ``p x p``), ``b`` the
accumulated ``xbar y``, ``theta`` the coefficient iterate, ``u`` the power-iteration vector of
``M = U^{-T} C U^{-1}`` and ``aux = [rho_hat, gamma]``.  The solved matrix is ``A - gamma cs C`` with ``cs = (t -
1)/t`` when ``intercept`` (the share of the noise in the centred moments, :func:`nolo.batch.eiv.centred_noise_share`;
``t`` the items so far, at most ``n_distinct`` when that is positive: replayed items are not new) and 1 without;
``gamma`` is the share of that consistent correction.  Items are rows ``R[offsets[i]:offsets[i+1]]``
(ragged readings); ``mode`` 0 = known ``Sigma`` (``C += Sigma / k``), 1 = replicates (``C += sum_k (x_k - xbar)
(x_k - xbar)^T / (k (k-1))``, using at most ``k_max`` readings), 2 = pooled (``W += sum_k (x_k - xbar)(x_k -
xbar)^T``, ``dof += k - 1``, ``h += 1/k`` -- items read once add to ``h`` only -- and ``C = (h / dof) W``, the
pooled within-item covariance times ``sum_i 1/m_i``; per fold ``FW``, ``FP = [dof, h]``).  ``fuller`` >= 0 caps
the correction scale by
Fuller's small-sample rule ``gamma cs <= max(0, min((nu - fuller)/t, lambda_J - (1 + fuller)/t))`` (``t`` as above,
``nu = t - intercept``; negative: off), ``lambda_J = 1 / rho_J`` from the joint moments of ``(y, xbar)``: ``rho_J``
the largest root of ``C`` against ``A - b b^T / yy``, tracked by a second power vector ``uj`` (generalised power
steps ``uj <- Q^-1 M uj`` with ``Q = I - v v^T / yy``, ``v = U^-T b``, and their Rayleigh quotient, at least
``rho_hat``).  ``aux = [rho_hat, gamma, yy, rho_J, dof, h]``, ``yy`` the running sum of ``y^2``.
``folds`` > 0 also accumulates item ``t``'s moments in fold ``t mod folds`` (``FG`` sum xbar xbar^T, ``FC`` its
corrections, ``Fb`` sum xbar y, ``Fn`` items) for the cross-validated correction scale, and caps
``gamma <= gcap``.  Every item costs ``O(k p^2 + sweeps p^2)``.
Returns the number of items, or ``-(i+1)`` when item ``i`` produced a non-finite value (callers work on copies).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import nolo._jit  # noqa: F401  (nolo's cache locator, before the first nb.njit)
from nolo.oco.projected_step import ball_scale

__all__ = ["bcrls_loop", "chol_rank_one_update"]


@nb.njit(cache=True, inline="always")
def chol_rank_one_update(U, x, p):
    """``U^T U + x x^T`` in place for the UPPER factor ``U`` (``x`` is overwritten): ``O(p^2)``, row-contiguous,
    positive definiteness preserved (the classical LINPACK ``dchud`` rotations)."""
    for k in range(p):
        ukk = U[k, k]
        r = math.sqrt(ukk * ukk + x[k] * x[k])
        c = r / ukk
        s = x[k] / ukk
        U[k, k] = r
        inv_c = 1.0 / c
        for i in range(k + 1, p):
            uki = (U[k, i] + s * x[i]) * inv_c
            U[k, i] = uki
            x[i] = c * x[i] - s * uki


@nb.njit(cache=True, inline="always")
def _solve_upper_t(U, r, out, p):
    """Solve ``U^T out = r`` (forward substitution, row axpys)."""
    for i in range(p):
        out[i] = r[i]
    for i in range(p):
        zi = out[i] / U[i, i]
        out[i] = zi
        for j in range(i + 1, p):
            out[j] -= zi * U[i, j]


@nb.njit(cache=True, inline="always")
def _solve_upper(U, r, out, p):
    """Solve ``U out = r`` (back substitution, row dot products)."""
    for i in range(p - 1, -1, -1):
        s = r[i]
        for j in range(i + 1, p):
            s -= U[i, j] * out[j]
        out[i] = s / U[i, i]


@nb.njit(cache=True, inline="always")
def _symv(C, v, out, p):
    """``out = C v`` for symmetric ``C`` as a sum of its rows (contiguous axpys)."""
    for i in range(p):
        out[i] = 0.0
    for j in range(p):
        vj = v[j]
        for i in range(p):
            out[i] += vj * C[j, i]


@nb.njit(cache=True)
def bcrls_loop(R, offsets, y, mode, k_max, Sigma, intercept, kappa, fuller, sweeps, warmup, t0, U, C, b, theta, u,
               uj, aux, folds, FG, FC, Fb, Fn, gcap, W, FW, FP, n_distinct):
    if mode != 0 and mode != 1 and mode != 2:
        # the branches below test 0 and 2 and treat any other value as replicates
        raise ValueError("unknown noise mode: must be 0 (known Sigma), 1 (replicates) or 2 (pooled)")
    n = offsets.shape[0] - 1
    d = R.shape[1]
    p = U.shape[0]
    xbar = np.empty(p)
    work = np.empty(p)
    v1 = np.empty(p)
    v2 = np.empty(p)
    vb = np.empty(p)
    dv = np.empty(d)
    Ci = np.empty((d, d)) if folds > 0 and mode == 1 else np.empty((0, 0))
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
        # A += xbar xbar^T (upper Cholesky factor, stays positive definite)
        for j in range(p):
            work[j] = xbar[j]
        chol_rank_one_update(U, work, p)
        f_i = (t0 + i) % folds if folds > 0 else -1
        if f_i >= 0:
            Fn[f_i] += 1.0
            yi = y[i]
            for r in range(p):
                xr = xbar[r]
                Fb[f_i, r] += yi * xr
                for c in range(p):
                    FG[f_i, r, c] += xr * xbar[c]
        # C += the item's noise correction (PSD); with folds, its fold's FC too (separate branch-free loops)
        if mode == 0:
            for a in range(d):
                for c in range(d):
                    C[a, c] += Sigma[a, c] * inv_k
            if f_i >= 0:
                for a in range(d):
                    for c in range(d):
                        FC[f_i, a, c] += Sigma[a, c] * inv_k
        elif mode == 2:
            # pooled: the item's scatter into W (and its fold's), then C = (h / dof) W on the noisy block
            aux[5] += inv_k
            if k >= 2:
                aux[4] += k - 1.0
                for a in range(k):
                    for j in range(d):
                        dv[j] = R[o0 + a, j] - xbar[j]
                    for r in range(d):
                        f = dv[r]
                        for c in range(d):
                            W[r, c] += f * dv[c]
                            if f_i >= 0:
                                FW[f_i, r, c] += f * dv[c]
            if f_i >= 0:
                FP[f_i, 0] += k - 1.0
                FP[f_i, 1] += inv_k
            if aux[4] > 0.0:
                sc = aux[5] / aux[4]
                for r in range(d):
                    for c in range(d):
                        C[r, c] = sc * W[r, c]
        elif f_i < 0:
            sq = math.sqrt(1.0 / (k * (k - 1.0)))
            for a in range(k):
                for j in range(d):
                    dv[j] = (R[o0 + a, j] - xbar[j]) * sq
                for r in range(d):  # C += dv dv^T: bitwise symmetric (dv[r] * dv[c] == dv[c] * dv[r])
                    f = dv[r]
                    for c in range(d):
                        C[r, c] += f * dv[c]
        else:
            # the item's correction once (k d^2, rows contiguous), then added to C and to FC[f_i] (2 d^2): Ci is
            # bitwise symmetric (dv[r] * dv[c] == dv[c] * dv[r]), so C and FC stay so
            sq = math.sqrt(1.0 / (k * (k - 1.0)))
            for r in range(d):
                for c in range(d):
                    Ci[r, c] = 0.0
            for a in range(k):
                for j in range(d):
                    dv[j] = (R[o0 + a, j] - xbar[j]) * sq
                for r in range(d):
                    f = dv[r]
                    for c in range(d):
                        Ci[r, c] += f * dv[c]
            for r in range(d):
                for c in range(d):
                    C[r, c] += Ci[r, c]
            for r in range(d):
                for c in range(d):
                    FC[f_i, r, c] += Ci[r, c]
        yi = y[i]
        for j in range(p):
            b[j] += yi * xbar[j]
        aux[2] += yi * yi
        # the corrected solution lies in the A-norm ball ||U theta|| <= ||U^-T b|| / (1 - kappa) (when
        # A - gamma C >= (1 - kappa) A); the iterate is kept in it, so a lagging rho_hat cannot blow it up
        _solve_upper_t(U, b, vb, p)
        vv = 0.0
        for j in range(p):
            vv += vb[j] * vb[j]
        cap = math.sqrt(vv) / (1.0 - kappa)
        resid = aux[2] - vv  # y^T y - b^T A^-1 b >= 0: the ridge residual sum of squares
        for _ in range(sweeps):
            # one power step on M = U^-T C U^-1: rho_hat = ||M u|| (u unit) <= lambda_max(M)
            _solve_upper(U, u, v1, p)
            _symv(C, v1, v2, p)
            _solve_upper_t(U, v2, v1, p)
            nrm = 0.0
            for j in range(p):
                nrm += v1[j] * v1[j]
            nrm = math.sqrt(nrm)
            if nrm > 0.0:
                for j in range(p):
                    u[j] = v1[j] / nrm
            aux[0] = nrm
            # the items' count for the centred share c = (t - 1)/t and Fuller's d.f. (a replayed item is not new)
            tf = float(t0 + i + 1)
            if n_distinct > 0 and tf > n_distinct:
                tf = float(n_distinct)
            nu = tf - (1.0 if intercept else 0.0)
            cs = nu / tf  # the share of C in the centred moments: the solved matrix is A - gamma cs C
            gamma = 1.0 if cs * nrm <= kappa else kappa / (cs * nrm)
            if fuller >= 0.0:
                # Fuller (1987, section 2.5.1): lambda_J = 1 / rho_J, the smallest root of the joint moments
                # |[[yy, b^T], [b, A]] - lambda blockdiag(0, C)| = 0, i.e. of |A - b b^T / yy - lambda C|
                rj = nrm
                if resid <= 1e-12 * aux[2]:
                    rj = 1e300  # y explained exactly: the joint root is 0 (kept finite for the saved state)
                else:
                    # a generalised power step on (M, Q): w = M uj, Rayleigh quotient uj^T w / uj^T Q uj (a lower
                    # bound on rho_J), then uj <- Q^-1 w = w + v (v . w) / resid, normalised
                    _solve_upper(U, uj, v1, p)
                    _symv(C, v1, v2, p)
                    _solve_upper_t(U, v2, v1, p)
                    num = 0.0
                    uv = 0.0
                    wv = 0.0
                    for j in range(p):
                        num += uj[j] * v1[j]
                        uv += uj[j] * vb[j]
                        wv += v1[j] * vb[j]
                    den = 1.0 - uv * uv / aux[2]
                    if den > 0.0 and num / den > rj:
                        rj = num / den
                    f = wv / resid
                    nj = 0.0
                    for j in range(p):
                        v1[j] += f * vb[j]
                        nj += v1[j] * v1[j]
                    nj = math.sqrt(nj)
                    if nj > 0.0 and math.isfinite(nj):
                        for j in range(p):
                            uj[j] = v1[j] / nj
                aux[3] = rj
                # Fuller's g of C, min((nu - alpha)/t, lambda_J - (1 + alpha)/t), as a share of cs C
                gf = 0.0
                if nu > 0.0:
                    gf = (nu - fuller) / tf
                    if rj > 0.0:
                        gf = min(gf, 1.0 / rj - (1.0 + fuller) / tf)
                    gf = gf / cs
                gamma = min(gamma, max(gf, 0.0))
            if gamma > gcap:
                gamma = gcap  # the cross-validated correction scale
            if t0 + i + 1 < warmup:
                gamma = 0.0  # warm-up: ridge least squares while rho_hat is unreliable (A near rank deficient)
            aux[1] = gamma
            # fixed-point step theta <- (A)^-1 (b + gamma cs C theta): contracts at rate gamma cs lambda_max(M)
            gc = gamma * cs
            _symv(C, theta, v2, p)
            for j in range(p):
                v2[j] = b[j] + gc * v2[j]
            _solve_upper_t(U, v2, v1, p)
            # over-relaxation in phi = U theta, optimal for the spectrum [1 - gc rho, 1] of I - gc M (gc = gamma cs):
            # phi <- phi + omega (phi_fp - phi), omega = 2 / (2 - gc rho_hat), rate gc rho / (2 - gc rho)
            omega = 2.0 / (2.0 - gc * nrm)  # gamma * cs * rho_hat <= max_correction < 1
            nrm2 = 0.0
            for r in range(p):
                s = 0.0
                for c in range(r, p):
                    s += U[r, c] * theta[c]
                v = s + omega * (v1[r] - s)
                v1[r] = v
                nrm2 += v * v
            f, _ = ball_scale(nrm2, cap)  # U theta = v1: the A-norm ball is a Euclidean ball for v1
            if f != 1.0:
                for j in range(p):
                    v1[j] *= f
            _solve_upper(U, v1, theta, p)
        ok = True
        for j in range(p):
            if not math.isfinite(theta[j]) or not math.isfinite(U[j, j]) or not math.isfinite(b[j]):
                ok = False
        if not ok or not math.isfinite(aux[0]) or not math.isfinite(aux[2]):
            return -(i + 1)
    return n
