"""The Frequent-Directions Sketched Online Newton oracle (FD-SON) of :class:`nolo.learners.bandit.SquareCB`.

Luo, Agarwal, Cesa-Bianchi & Langford, *Efficient Second Order Online Learning by Sketching*, NeurIPS 2016:
Algorithm 1 (Sketched Online Newton, SON) with the Frequent Directions sketch of Algorithm 2 (FD-SON), per class,
on the square loss l(w) = (w . z - r)^2 / 2 of z = [x, 1].  SON keeps the Newton matrix
A = alpha I + S^T S, S an (at most) 2m x D sketch of the vectors seen, and steps w <- w - A^{-1} g.

What nolo sketches, and why it is then recursive least squares: the square loss's Hessian at any w is z z^T, so
the vector sketched is z itself (the paper's g_hat = sqrt(sigma_t + eta_t) g_t is the exp-concave surrogate of that
curvature; for the square loss the curvature is known exactly).  The sketch is updated with z *before* the step
(Algorithm 1, lines 8-9), so while no row has been shrunk away (fewer than 2m updates of the class) the step
w <- w + A^{-1} z (r - w . z) with A = alpha I + sum z z^T is exactly the ridge oracle's (recursive least squares,
:func:`nolo.learners.bandit.oracles.ridge_update`, lam = alpha) -- tested.  Then Frequent Directions keeps A close to
it in the top directions of the class's inputs: when the 2m rows are full the sketch is rotated to its singular
directions, every squared singular value is reduced by delta, the m-th largest (Liberty 2013; Ghashami et al. 2016:
the 2m-row buffer, one shrink per m rounds), which leaves m - 1 non-zero orthogonal rows.

``robust=True`` adds the shrunk mass back as regularisation: alpha <- alpha + delta / 2 at each shrink (Robust
Frequent Directions: Luo, Chen, Zhang, Li & Zhang, JMLR 20, 2019, Algorithm 3 / the RFD-SON of their section 5).
Without it the directions FD drops get the constant step 1/alpha for ever (no averaging of noisy targets there).

Per class a: S_a (2m x D, rows 0..L_a-1 in use, the rest 0), M_a = (alpha_a I + S_a S_a^T)^{-1} on the first L_a
rows (L_a x L_a; updated by the bordered inverse when a row is appended, recomputed after a shrink).
The step with b = S_a z, M_a b, k = alpha_a + z.z - b . M_a b (> 0, the Schur complement):

    A_new^{-1} z = (z - S_a^T M_a b) / k        (A_new = A_old + z z^T; Sherman-Morrison)
    w_a += (r - w_a . z) A_new^{-1} z.

Cost per update: O(L nnz + L^2 + L D) with L <= 2m, plus a shrink every m updates of the class: a 2m x 2m Gram
(O(m^2 D)), its eigendecomposition (O(m^3)) and the rotation (O(m^2 D)) -- O(m D) amortised, against the ridge
oracle's O(D^2).  Memory: K (2m D + 4m^2 + 2) float64 (MNIST-784, K = 10, m = 20: 2.5 MB; the ridge oracle: 49 MB).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

__all__ = ["FDSONOracle", "fdson_oracle", "fdson_update", "fdson_bytes", "fdson_shrink"]


class FDSONOracle(NamedTuple):
    """sketch (K, 2m, D): the rows of S_a; sketch_inv (K, 2m, 2m): (alpha_a I + S_a S_a^T)^{-1} on the first L_a rows;
    sketch_rows (K,): L_a (whole numbers, float64 as every state array of the learner); sketch_alpha (K,): alpha_a; m: the sketch size; robust: alpha_a grows by delta / 2 at each
    shrink (RFD)."""

    sketch: np.ndarray
    sketch_inv: np.ndarray
    sketch_rows: np.ndarray
    sketch_alpha: np.ndarray
    m: int
    robust: bool


def fdson_bytes(n_classes: int, n_features: int, m: int) -> int:
    """Bytes of the FD-SON oracle's state: K (2m (d + 1) + 4 m^2 + 2) float64."""
    return int(n_classes) * (2 * int(m) * (int(n_features) + 1) + 4 * int(m) ** 2 + 2) * 8


def fdson_oracle(n_classes: int, n_features: int, alpha: float, m: int, robust: bool = False) -> FDSONOracle:
    """A fresh FD-SON oracle: empty sketches (L_a = 0, A_a = alpha I); its weights (the caller's (d + 1, K)) start at 0."""
    K, D, m = int(n_classes), int(n_features) + 1, int(m)
    return FDSONOracle(np.zeros((K, 2 * m, D)), np.zeros((K, 2 * m, 2 * m)), np.zeros(K),
                       np.full(K, float(alpha)), m, bool(robust))


@njit(cache=True, nogil=True)
def _refresh_inverse(S, M, L, alpha):
    """M[:L, :L] = (alpha I + S[:L] S[:L]^T)^{-1}, the rest of M zero."""
    M[:, :] = 0.0
    if L == 0:
        return
    G = np.empty((L, L))
    for i in range(L):
        for j in range(i + 1):
            acc = 0.0
            for c in range(S.shape[1]):
                acc += S[i, c] * S[j, c]
            G[i, j] = acc
            G[j, i] = acc
        G[i, i] += alpha
    M[:L, :L] = np.linalg.inv(G)


@njit(cache=True, nogil=True)
def fdson_shrink(o, a):
    """Frequent Directions' shrink of class ``a``'s full sketch (L_a = 2m): S <- (Sigma^2 - delta)^{1/2}_+ V^T with
    delta the m-th largest squared singular value, via the eigendecomposition of the 2m x 2m Gram S S^T (the rows
    u_i^T S / sigma_i are S's right singular vectors); m - 1 non-zero orthogonal rows remain.  With ``robust``,
    alpha_a += delta / 2.  Then M_a is recomputed.  Returns delta."""
    S = o.sketch[a]
    M = o.sketch_inv[a]
    L2, D = S.shape[0], S.shape[1]
    m = o.m
    G = np.empty((L2, L2))
    for i in range(L2):
        for j in range(i + 1):
            acc = 0.0
            for c in range(D):
                acc += S[i, c] * S[j, c]
            G[i, j] = acc
            G[j, i] = acc
    lam, U = np.linalg.eigh(G)  # ascending
    delta = max(lam[L2 - m], 0.0)
    keep = m - 1
    T = np.zeros((keep, D))
    for r in range(keep):
        i = L2 - 1 - r  # descending
        li = lam[i]
        f = math.sqrt((li - delta) / li) if li > delta else 0.0
        if f == 0.0:
            continue
        for k in range(L2):
            c = U[k, i] * f
            if c != 0.0:
                Sk = S[k]
                for j in range(D):
                    T[r, j] += c * Sk[j]
    S[:, :] = 0.0
    S[:keep, :] = T
    o.sketch_rows[a] = float(keep)
    if o.robust:
        o.sketch_alpha[a] += 0.5 * delta
    _refresh_inverse(S, M, keep, o.sketch_alpha[a])
    return delta


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
    b = np.empty(L)
    for i in range(L):  # b = S z (z's bias coordinate is 1)
        Si = S[i]
        acc = Si[D - 1]
        for t in range(lo, hi):
            acc += Si[idx[t]] * val[t]
        b[i] = acc
    zz = 1.0
    for t in range(lo, hi):
        zz += val[t] * val[t]
    Mb = np.zeros(L)
    for i in range(L):
        Mi = M[i]
        acc = 0.0
        for j in range(L):
            acc += Mi[j] * b[j]
        Mb[i] = acc
    bMb = 0.0
    for i in range(L):
        bMb += b[i] * Mb[i]
    k = al + zz - bMb
    err = target - pred
    if not (np.isfinite(k) and k > 0.0 and np.isfinite(err) and np.isfinite(bMb)):
        return False
    # v = z - S^T M b (dense), the step err v / k
    v = np.zeros(D)
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
    # append z as row L; M <- [[M + Mb Mb^T / k, -Mb / k], [-Mb^T / k, 1 / k]]
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
