"""The Frequent-Directions Sketched Online Newton oracle (FD-SON) of :class:`nolo.learners.bandit.SquareCB`.

Luo, Agarwal, Cesa-Bianchi & Langford, *Efficient Second Order Online Learning by Sketching*, NeurIPS 2016:
Algorithm 1 (Sketched Online Newton, SON) with the Frequent Directions sketch of Algorithm 2 (FD-SON), per class,
on the square loss l(w) = (w . z - r)^2 / 2 of z = [x, 1].  SON keeps the Newton matrix
A = alpha I + S^T S, S an (at most) 2m x D sketch of the vectors seen, and steps w <- w - A^{-1} g.

What nolo sketches, and why it is then recursive least squares: the square loss's Hessian at any w is z z^T, so
the vector sketched is z itself (the paper's g_hat = sqrt(sigma_t + eta_t) g_t is the exp-concave surrogate of that
curvature; for the square loss the curvature is known exactly).  The sketch is updated with z *before* the step,
as in Algorithm 1, so while no row has been shrunk away (fewer than 2m updates of the class) the step
w <- w + A^{-1} z (r - w . z) with A = alpha I + sum z z^T is exactly the ridge oracle's (recursive least squares,
:func:`nolo.learners.bandit.oracles.ridge_update`, lam = alpha) -- tested.  Then Frequent Directions keeps A close to
it in the top directions of the class's inputs: when the 2m rows are full the sketch is rotated to its singular
directions, every squared singular value is reduced by delta, the m-th largest (Liberty 2013; Ghashami et al. 2016:
the 2m-row buffer, one shrink per m + 1 updates of the class), which leaves m - 1 non-zero orthogonal rows.

``robust=True`` adds the shrunk mass back as regularisation: alpha <- alpha + delta / 2 at each shrink (Robust
Frequent Directions, Luo, Chen, Zhang, Li & Zhang, JMLR 20, 2019, and their RFD-based online Newton step).
Without it the directions FD drops get the constant step 1/alpha for ever (no averaging of noisy targets there).

Per class a: S_a (2m x D, rows 0..L_a-1 in use, the rest 0), its Gram S_a S_a^T and M_a = (alpha_a I + S_a S_a^T)^{-1}
on the first L_a rows (L_a x L_a; bordered by one row and column when a row is appended; diagonal after a shrink,
which leaves orthogonal rows).
The step with b = S_a z, M_a b, k = alpha_a + z.z - b . M_a b (> 0, the Schur complement):

    A_new^{-1} z = (z - S_a^T M_a b) / k        (A_new = A_old + z z^T; Sherman-Morrison)
    w_a += (r - w_a . z) A_new^{-1} z.

Cost per update: O(L nnz + L^2 + L D) with L <= 2m, plus a shrink every m + 1 updates of the class: the
eigendecomposition of the 2m x 2m Gram (kept up to date, O(m^3)) and the rotation of the rows (O(m^2 D)) -- O(m D)
amortised, against the ridge oracle's O(D^2).  Memory: K (2m D + 8m^2 + 2) float64 (D = d + 1; MNIST-784, K = 10,
m = 20: 2.6 MB; the ridge oracle: 49 MB).

Differences from the paper: the sketched vector is z (the square loss's exact curvature, see above), not
sqrt(sigma_t + eta_t) g_t; no projection step (Algorithm 1's |w . x| <= C; the targets are bounded and the step is
the least-squares one); Algorithm 2 shrinks at every update (O(m^2 D) each), nolo keeps Ghashami et al.'s
2m-row buffer and shrinks when it is full (the same guarantee with m - 1 rows kept: 0 <= Z^T Z - S^T S <=
(||Z||_F^2 / m) I, tested).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import types

from numba.extending import overload

from nolo._jit import njit

__all__ = ["FDSONOracle", "fdson_oracle", "fdson_buffer", "fdson_update", "fdson_bytes", "fdson_shrink"]


class FDSONOracle(NamedTuple):
    """sketch (K, 2m, D): the rows of S_a; sketch_inv (K, 2m, 2m): (alpha_a I + S_a S_a^T)^{-1} on the first L_a rows;
    sketch_gram (K, 2m, 2m): S_a S_a^T (its new row and column are the b = S_a z of each update: no O(m^2 D) Gram at
    a shrink); sketch_rows (K,): L_a (whole numbers, float64 as every state array of the learner); sketch_alpha (K,):
    alpha_a; m: the sketch size; robust: alpha_a grows by delta / 2 at each shrink (RFD); buf (3, max(2m, D)): scratch
    of the current update (:func:`fdson_buffer`; not state)."""

    sketch: np.ndarray
    sketch_inv: np.ndarray
    sketch_gram: np.ndarray
    sketch_rows: np.ndarray
    sketch_alpha: np.ndarray
    m: int
    robust: bool
    buf: np.ndarray


def fdson_bytes(n_classes: int, n_features: int, m: int) -> int:
    """Bytes of the FD-SON oracle's state: K (2m (d + 1) + 8 m^2 + 2) float64."""
    return int(n_classes) * (2 * int(m) * (int(n_features) + 1) + 8 * int(m) ** 2 + 2) * 8


def fdson_buffer(m: int, n_features_plus_1: int) -> np.ndarray:
    """The FD-SON update's scratch for a sketch of size ``m`` on weights of ``n_features_plus_1`` = d + 1 rows: the
    update's b = S z and M b (2m each) and its dense direction v (d + 1), so that no array is allocated per round."""
    return np.zeros((3, max(2 * int(m), int(n_features_plus_1))))


def fdson_oracle(n_classes: int, n_features: int, alpha: float, m: int, robust: bool = False) -> FDSONOracle:
    """A fresh FD-SON oracle: empty sketches (L_a = 0, A_a = alpha I); its weights (the caller's (d + 1, K)) start
    at 0."""
    K, D, m = int(n_classes), int(n_features) + 1, int(m)
    return FDSONOracle(np.zeros((K, 2 * m, D)), np.zeros((K, 2 * m, 2 * m)), np.zeros((K, 2 * m, 2 * m)), np.zeros(K),
                       np.full(K, float(alpha)), m, bool(robust), fdson_buffer(m, D))


@njit(cache=True, nogil=True)
def fdson_shrink(o, a):
    """Frequent Directions' shrink of class ``a``'s full sketch (L_a = 2m): S <- (Sigma^2 - delta)^{1/2}_+ V^T with
    delta the m-th largest squared singular value, from the eigendecomposition S S^T = U Lambda U^T of the kept Gram
    (the rows u_i^T S / sqrt(lambda_i) are S's right singular vectors); m - 1 non-zero orthogonal rows remain, so the
    new Gram is diag(lambda_i - delta) and M_a = diag(1 / (alpha_a + lambda_i - delta)).  With ``robust``,
    alpha_a += delta / 2 first.  O(m^2 D + m^3).  Returns delta."""
    S = o.sketch[a]
    M = o.sketch_inv[a]
    G = o.sketch_gram[a]
    L2, D = S.shape[0], S.shape[1]
    m = o.m
    lam, U = np.linalg.eigh(G.copy())  # ascending
    delta = max(lam[L2 - m], 0.0)
    keep = m - 1
    T = np.zeros((keep, D))
    f = np.zeros(keep)
    for r in range(keep):
        i = L2 - 1 - r  # descending
        li = lam[i]
        f[r] = li - delta if li > delta else 0.0
        c0 = math.sqrt(f[r] / li) if f[r] > 0.0 else 0.0
        if c0 == 0.0:
            continue
        Tr = T[r]
        for k in range(L2):
            c = U[k, i] * c0
            Sk = S[k]
            for j in range(D):
                Tr[j] += c * Sk[j]
    S[:, :] = 0.0
    S[:keep, :] = T
    o.sketch_rows[a] = float(keep)
    if o.robust:
        o.sketch_alpha[a] += 0.5 * delta
    al = o.sketch_alpha[a]
    M[:, :] = 0.0
    G[:, :] = 0.0
    for r in range(keep):
        G[r, r] = f[r]
        M[r, r] = 1.0 / (al + f[r])
    return delta


def _column(ix, t):
    """Column of term t of :func:`_dot_rows`: ``ix[t]`` (a sparse vector's indices), or t itself for ``ix=None`` (a
    dense vector) (compiled code only)."""
    raise NotImplementedError("compiled code only")


@overload(_column, inline="always")
def _ov_column(ix, t):
    if isinstance(ix, types.NoneType):
        return lambda ix, t: t
    return lambda ix, t: np.uint64(ix[t])  # unsigned: no negative-index wrap-around per access


@njit(cache=True, nogil=True, inline="always")
def _dot_rows(R, L, ix, vx, first, out):
    """out[i] = R[i, first] (0.0 for ``first`` < 0) + sum_t R[i, col(t)] vx[t] for the first L rows of R, each sum in
    increasing t, col(t) = ix[t] (or t for ``ix=None``) -- four rows at a time: four independent chains of additions
    instead of one, which waits on the adder's latency at every term (each row's operations in the same order: the
    same bits as row by row).  b = S z (x's non-zeros, ``first`` = the bias column) and M b (``ix=None``)."""
    n = vx.shape[0]
    i = 0
    while i + 4 <= L:
        R0, R1, R2, R3 = R[i], R[i + 1], R[i + 2], R[i + 3]
        a0 = a1 = a2 = a3 = 0.0
        if first >= 0:
            a0, a1, a2, a3 = R0[first], R1[first], R2[first], R3[first]
        for t in range(n):
            j = _column(ix, t)
            v = vx[t]
            a0 += R0[j] * v
            a1 += R1[j] * v
            a2 += R2[j] * v
            a3 += R3[j] * v
        out[i], out[i + 1], out[i + 2], out[i + 3] = a0, a1, a2, a3
        i += 4
    while i < L:
        Ri = R[i]
        acc = Ri[first] if first >= 0 else 0.0
        for t in range(n):
            acc += Ri[_column(ix, t)] * vx[t]
        out[i] = acc
        i += 1


@njit(cache=True, nogil=True, inline="always")
def sketch_solve(o, a, idx, val, lo, hi, b, Mb):
    """For z = [x, 1] (x's non-zeros ``idx[lo:hi]``, ``val[lo:hi]``) and class ``a``'s sketch (L = L_a rows in use):
    b = S_a z and M_a b into ``b[:L]`` and ``Mb[:L]``; returns (z.z, b^T M_a b).  The step's first half
    (:func:`fdson_update`) and the confidence width z^T A_a^{-1} z = (z.z - b^T M_a b) / alpha_a of
    :class:`nolo.learners.bandit.LinUCB` (Woodbury).  O(L nnz + L^2)."""
    S = o.sketch[a]
    M = o.sketch_inv[a]
    L = int(o.sketch_rows[a])
    D = S.shape[1]
    _dot_rows(S, L, idx[lo:hi], val[lo:hi], D - 1, b)  # b = S z (z's bias coordinate is 1)
    zz = 1.0
    for t in range(lo, hi):
        zz += val[t] * val[t]
    _dot_rows(M, L, None, b[:L], -1, Mb)  # M b
    bMb = 0.0
    for i in range(L):
        bMb += b[i] * Mb[i]
    return zz, bMb


# not inline="always" (unlike the ridge and OGD steps): inlined into the bandit core's stream loop, its store to
# o.sketch_rows[a] was lost (numba 0.68; the per-round path kept it) -- caught by per-round == stream; a call per
# update costs nothing beside its O(m d) work
@njit(cache=True, nogil=True)
def fdson_update(o, Wt, idx, val, lo, hi, a, pred, target):
    """SON's step of class ``a`` on (z = [x, 1], target) with the FD sketch updated by z first; False (nothing
    written) if not finite.  (A shrink of a full sketch, which changes only the sketch, happens before the check.)"""
    if not (np.isfinite(target) and np.isfinite(pred)):
        return False
    if int(o.sketch_rows[a]) == o.sketch.shape[1]:
        fdson_shrink(o, a)
    S = o.sketch[a]
    M = o.sketch_inv[a]
    L = int(o.sketch_rows[a])
    al = o.sketch_alpha[a]
    D = S.shape[1]
    buf = o.buf
    b, Mb, v = buf[0, :L], buf[1, :L], buf[2, :D]  # scratch from the record: no allocation per round
    zz, bMb = sketch_solve(o, a, idx, val, lo, hi, b, Mb)
    k = al + zz - bMb
    err = target - pred
    if not (np.isfinite(k) and k > 0.0 and np.isfinite(err) and np.isfinite(bMb)):
        return False
    # v = z - S^T M b (dense), the step err v / k
    v[:] = 0.0
    for t in range(lo, hi):
        v[idx[t]] += val[t]
    v[D - 1] += 1.0
    for i in range(L):
        c = Mb[i]
        Si = S[i]
        for j in range(D):
            v[j] -= c * Si[j]
    ce = err / k
    for j in range(D):
        Wt[j, a] += ce * v[j]
    # append z as row L: the Gram's new row and column are b and z.z;
    # M <- [[M + Mb Mb^T / k, -Mb / k], [-Mb^T / k, 1 / k]]
    G = o.sketch_gram[a]
    for i in range(L):
        G[L, i] = b[i]
        G[i, L] = b[i]
    G[L, L] = zz
    row = S[L]
    for t in range(lo, hi):
        row[idx[t]] += val[t]
    row[D - 1] = 1.0
    ik = 1.0 / k
    for i in range(L):
        Mi = M[i]
        ci = Mb[i] * ik
        for j in range(L):
            Mi[j] += ci * Mb[j]
        Mi[L] = -ci
        M[L, i] = -ci
    M[L, L] = ik
    o.sketch_rows[a] = float(L + 1)
    return True
