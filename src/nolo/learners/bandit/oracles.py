"""Online regression oracles for :class:`nolo.learners.bandit.SquareCB`: one model of E[target | x, a] per class.

Every oracle is linear in z = [x, 1] per class: its coefficients are the learner's weights ``Wt``
(D, K), D = d + 1, row d the bias -- the array the bandit core's stream loop scores (:mod:`._stream`;
x has d coordinates, so the scores are W x over rows 0..d-1: the core's fused multiply-adds, the same
bits on every path) to which SquareCB's ``adjust`` hook adds row d.  An oracle is a *state record*
(a ``NamedTuple`` holding whatever its step needs beyond Wt; numba passes its arrays by reference) and one
compiled step on rows given as ``(idx, val, lo, hi)`` -- the non-zeros ``idx[lo:hi]`` / ``val[lo:hi]``
of x, the core's row convention:

* ``update(oracle, Wt, idx, val, lo, hi, a, pred, target)``: one square-loss step on class ``a`` only
  (``pred`` = the current prediction for class a); returns False, and writes nothing, when a
  coefficient would not be finite.

:func:`oracle_update` dispatches on the record's type at compile time (``numba.extending.overload``);
a new oracle is a record and an ``@overload`` branch.  :func:`linear_predict` gives the predictions of
one row (the per-round arithmetic), :func:`fit_rows` runs updates over logged rows.

Oracles
-------
``"ridge"`` -- :class:`RidgeState`: per-class ridge regression (recursive least squares) on z = [x, 1]:
    theta_a = (lam I + sum_s z_s z_s^T)^{-1} sum_s z_s r_s over the rounds s where a was played.
    Kept as P_a = (lam I + Z_a^T Z_a)^{-1} (K x D x D, D = d + 1; index d is the bias) and theta = (W, bias); an
    update is
    the Sherman-Morrison rank-one step u = P_a z / sqrt(1 + z^T P_a z), theta_a += u (r - theta_a z)
    / sqrt(1 + z^T P_a z), P_a -= u u^T (exactly symmetric): O(D nnz + D^2) time on the played class,
    memory O(K D^2).
``"ogd"`` -- :class:`OGDState`: per-class normalised adaptive online gradient descent on the square loss
    in the style of Vowpal Wabbit's default (``--adaptive --normalized --invariant``; Ross, Mineiro &
    Langford 2013; Karampatziakis & Langford 2011): per coordinate the largest |x_j| seen (s_j, weights
    rescaled when it grows), the sum of squared gradients G_j, rate_j = 1 / (s_j sqrt(G_j)), the global
    normaliser sqrt(n_a / N_a) (N_a = sum of sum_j (x_j/s_j)^2 over the class's updates) and the
    importance-invariant step that moves the prediction by (r - pred)(1 - exp(-eta_t sum_j x_j^2 rate_j))
    -- it never overshoots the target.  O(nnz) per update, memory O(K D).
``"fdson"`` -- :class:`.sketch_oracle.FDSONOracle`: per-class Sketched Online Newton with a Frequent Directions
    sketch of 2m rows (Luo, Agarwal, Cesa-Bianchi & Langford, NeurIPS 2016, Algorithms 1-2; optionally the robust
    sketch of Luo et al., JMLR 2019): recursive least squares while a class has had fewer than 2m updates, then the
    Newton step with alpha I + S^T S in place of lam I + Z^T Z.  O(m D) per update amortised, memory O(K m D)
    (:mod:`.sketch_oracle`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import overload

from nolo._jit import njit
from nolo._validation import check_state_bytes
from nolo.learners.bandit._simd import scores
from nolo.learners.bandit._stream import row_of
from nolo.learners.bandit.sketch_oracle import FDSONOracle, fdson_buffer, fdson_oracle, fdson_update

__all__ = ["RidgeOracle", "OGDOracle", "FDSONOracle", "fdson_oracle", "fdson_buffer", "ORACLES", "ridge_oracle", "ogd_oracle", "ogd_buffer", "ridge_pz", "ridge_update", "ogd_update",
           "oracle_update", "linear_predict", "fit_rows", "ridge_bytes", "oracle_bytes",
           "RIDGE_MAX_BYTES"]

ORACLES = ("ridge", "ogd", "fdson")
#: the ridge oracle refuses a (K, d) whose K (d + 1)^2 float64 inverses would exceed this many bytes by default
RIDGE_MAX_BYTES = 2 * 1024 ** 3


class RidgeOracle(NamedTuple):
    """P (K, D, D): the inverses (lam I + Z_a^T Z_a)^{-1} (index d = the bias)."""

    P: np.ndarray


class OGDOracle(NamedTuple):
    """G, S (D, K): sums of squared gradients and largest |x_j| seen (row d = the bias); N, n (K,):
    normaliser sums and update counts; buf (3, D): scratch of the current step (:func:`ogd_buffer`); eta: learning
    rate."""

    G: np.ndarray
    S: np.ndarray
    N: np.ndarray
    n: np.ndarray
    buf: np.ndarray
    eta: float


def ridge_bytes(n_classes: int, n_features: int) -> int:
    """Bytes of the ridge oracle's inverses: K (d + 1)^2 float64."""
    return int(n_classes) * (int(n_features) + 1) ** 2 * 8


def oracle_bytes(kind: str, n_classes: int, n_features: int, sketch_size: int = 0) -> int:
    """Bytes of the weights on ``[x, 1]`` and the oracle's state of every class (float64), for ``kind`` in
    ``ridge``, ``ogd`` and ``fdson`` (whose sketch has ``sketch_size`` rows)."""
    D, m = int(n_features) + 1, int(sketch_size)
    per_class = {"ridge": D + D * D, "ogd": 3 * D, "fdson": D + 2 * m * D + 8 * m * m}[kind]
    return 8 * int(n_classes) * per_class


def check_ridge_bytes(n_classes: int, n_features: int, max_bytes: int = RIDGE_MAX_BYTES) -> None:
    """ParameterError when the ridge oracle's inverses would exceed ``max_bytes``."""
    check_state_bytes(ridge_bytes(n_classes, n_features), f"oracle='ridge' keeps one (d+1) x (d+1) float64 inverse "
                      f"per class: K={n_classes}, d={n_features}", max_bytes=max_bytes,
                      hint="use oracle='ogd' (O(K d) memory) or raise max_bytes")


def ridge_inverses(n_classes: int, n_features: int, lam: float, max_bytes: int = RIDGE_MAX_BYTES) -> np.ndarray:
    """Fresh P: K copies of I / lam; refuses (ParameterError) more than ``max_bytes``."""
    check_ridge_bytes(n_classes, n_features, max_bytes)
    D = int(n_features) + 1
    P = np.zeros((int(n_classes), D, D))
    for a in range(int(n_classes)):
        np.fill_diagonal(P[a], 1.0 / float(lam))
    return P


def ridge_oracle(n_classes: int, n_features: int, lam: float, max_bytes: int = RIDGE_MAX_BYTES) -> RidgeOracle:
    """A fresh ridge oracle (P_a = I / lam); its weights (the caller's (d + 1, K) array) start at 0."""
    return RidgeOracle(ridge_inverses(n_classes, n_features, lam, max_bytes))


def ogd_buffer(n_features_plus_1: int) -> np.ndarray:
    """The OGD step's scratch for weights of ``n_features_plus_1`` = d + 1 rows: three rows of length d + 1 (the
    played class's scales and squared-gradient sums gathered per non-zero, then the rates)."""
    return np.zeros((3, int(n_features_plus_1)))


def ogd_oracle(n_classes: int, n_features: int, eta: float) -> OGDOracle:
    D, K = int(n_features) + 1, int(n_classes)
    # column-major: the played class's G_j and s_j are contiguous (fewer cache lines per step; 1.08-1.15x on MNIST)
    return OGDOracle(np.zeros((D, K), order="F"), np.zeros((D, K), order="F"), np.zeros(K), np.zeros(K), ogd_buffer(D),
                     float(eta))


@njit(cache=True, nogil=True)
def linear_predict(Wt, idx, val, lo, hi, r):
    """r[k] = (W x)_k + Wt[d, k] (the bias), every class k, with the core's score arithmetic (:func:`._simd.scores`)."""
    scores(Wt, idx, val, lo, hi, r)
    d = Wt.shape[0] - 1
    for k in range(r.shape[0]):
        r[k] += Wt[d, k]


# ---------------------------------------------------------------------------------------------
# ridge / recursive least squares
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def ridge_pz(P, idx, val, lo, hi, Pz):
    """Pz <- P z for z = [x, 1] (x's non-zeros ``idx[lo:hi]``, ``val[lo:hi]``; index D - 1 of the symmetric P is the
    bias): P[D - 1] + sum_t v_t P[j_t], contiguous rows (vectorised); returns z^T P z = Pz[D - 1] + sum_t v_t Pz[j_t].
    O(nnz D).  The ridge step's first half and :class:`nolo.learners.bandit.LinUCB`'s confidence widths."""
    D = P.shape[0]
    row = P[D - 1]
    for i in range(D):
        Pz[i] = row[i]
    for t in range(lo, hi):
        row = P[idx[t]]
        v = val[t]
        for i in range(D):
            Pz[i] += row[i] * v
    zPz = Pz[D - 1]
    for t in range(lo, hi):
        zPz += val[t] * Pz[idx[t]]
    return zPz


@njit(cache=True, nogil=True, inline="always")
def ridge_update(o, Wt, idx, val, lo, hi, a, pred, target):
    """Sherman-Morrison step of class ``a`` on (z = [x, 1], target); False (nothing written) if not finite."""
    P = o.P[a]
    D = P.shape[0]
    # A fresh array rather than a scratch one from the record: LLVM then knows it does not alias P, and vectorises the
    # rank-one step (16 % faster on digits)
    Pz = np.empty(D)
    zPz = ridge_pz(P, idx, val, lo, hi, Pz)
    denom = 1.0 + zPz
    err = target - pred
    if not (np.isfinite(denom) and np.isfinite(err) and denom > 0.0):
        return False
    c = 1.0 / math.sqrt(denom)
    for i in range(D):
        Pz[i] *= c  # u = P z / sqrt(1 + z'Pz)
    ce = err * c
    for i in range(D):
        Wt[i, a] += Pz[i] * ce
    for i in range(D):
        ui = Pz[i]
        Pi = P[i]
        for j in range(D):
            Pi[j] -= ui * Pz[j]
    return True


# ---------------------------------------------------------------------------------------------
# normalised adaptive OGD (VW-style)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def ogd_update(o, Wt, idx, val, lo, hi, a, pred, target):
    """One VW-style normalised adaptive invariant square-loss step on class ``a``.

    First the scales: s_j grows to |x_j| and w_j shrinks by s_old / s_new (VW's adaptive normalised
    rescaling), which moves the prediction; the step is then taken from that moved prediction, so the
    invariant step lands between it and the target.

    Four passes over the non-zeros, so that the square roots and divisions (the step's cost: one
    division for the normaliser, a square root and a division for the rate, per coordinate) run in
    SIMD lanes: (1) the scales, gathering s_j and G_j of the played class into ``o.buf``; (2) on those
    contiguous buffers, without a reduction (which would keep the loop scalar), the new G_j, the
    normaliser's terms (x_j / s_j)^2 and the rates 1 / (s_j sqrt(G_j)) -- element-wise, IEEE-exact in
    every lane; (3) the two sums (the normaliser and sum_j x_j^2 rate_j), each as four partial sums over
    the non-zeros' offsets mod 4, added as (s0 + s1) + (s2 + s3) -- eight independent chains, 1.03-1.05x
    on MNIST over one chain per sum -- and G_j written back; (4) the weights.  Every value is defined by
    that order alone (not by the passes or the lanes), so the per-round API and the stream loops agree
    bit for bit; tests/learners/bandit/test_bandit_oracles.py checks it against a plain scalar pass.
    """
    G, S, N, n = o.G, o.S, o.N, o.n
    D = G.shape[0]
    if not (np.isfinite(target) and np.isfinite(pred)):
        return False
    m = hi - lo
    ix, vx = idx[lo:hi], val[lo:hi]  # indexed from 0 by range loops: no wrap-around, contiguous (SIMD) loads
    sb, gb, rt = o.buf[0], o.buf[1], o.buf[2]
    p = pred
    for i in range(m):  # (1) scales: s_j <- max(s_j, |x_j|), w_j rescaled (rare once the scales have settled)
        j = np.uint64(ix[i])  # unsigned: no negative-index wrap-around per access (canonical indices are >= 0)
        v = vx[i]
        ax = abs(v)
        s = S[j, a]
        if ax > s:
            if s > 0.0:
                w_old = Wt[j, a]
                w_new = w_old * (s / ax)
                Wt[j, a] = w_new
                p += (w_new - w_old) * v
            S[j, a] = ax
            s = ax
        sb[i] = s
        gb[i] = G[j, a]
    S[D - 1, a] = 1.0
    err = target - p
    if err == 0.0:
        return True
    g2 = err * err
    for i in range(m):  # (2) element-wise on contiguous buffers: vectorised (no reduction, no gather)
        v = vx[i]
        s = sb[i]
        g = gb[i] + g2 * v * v
        gb[i] = g
        nz = v != 0.0  # x_j = 0 (never in canonical rows) adds nothing and has rate 0
        sb[i] = (v / s) * (v / s) if nz else 0.0
        rt[i] = 1.0 / (s * math.sqrt(g)) if nz else 0.0
    G[D - 1, a] += g2
    rb = 1.0 / math.sqrt(G[D - 1, a])
    # (3) the two sums, each as four partial sums over the offsets i = 0, 1, 2, 3 (mod 4), in increasing i: eight
    # independent chains, so the additions do not wait for each other (a single chain of m dependent additions
    # would bound the step by the add latency); and G written back
    n0 = n1 = n2 = n3 = q0 = q1 = q2 = q3 = 0.0
    m4 = m - m % 4
    for i in range(0, m4, 4):
        n0 += sb[i]
        n1 += sb[i + 1]
        n2 += sb[i + 2]
        n3 += sb[i + 3]
        q0 += vx[i] * vx[i] * rt[i]
        q1 += vx[i + 1] * vx[i + 1] * rt[i + 1]
        q2 += vx[i + 2] * vx[i + 2] * rt[i + 2]
        q3 += vx[i + 3] * vx[i + 3] * rt[i + 3]
    if m4 < m:
        n0 += sb[m4]
        q0 += vx[m4] * vx[m4] * rt[m4]
    if m4 + 1 < m:
        n1 += sb[m4 + 1]
        q1 += vx[m4 + 1] * vx[m4 + 1] * rt[m4 + 1]
    if m4 + 2 < m:
        n2 += sb[m4 + 2]
        q2 += vx[m4 + 2] * vx[m4 + 2] * rt[m4 + 2]
    for i in range(m):
        G[np.uint64(ix[i]), a] = gb[i]
    nrm = 1.0 + ((n0 + n1) + (n2 + n3))  # the bias feature, x = 1, scale 1, plus sum_j (x_j / s_j)^2
    ppu = rb + ((q0 + q1) + (q2 + q3))  # pred_per_update = sum_j x_j^2 rate_j, the bias's rate rb included
    N[a] += nrm
    n[a] += 1.0
    eta_t = o.eta * math.sqrt(n[a] / N[a])
    step = err * (1.0 - math.exp(-eta_t * ppu)) / ppu  # invariant: the prediction moves by step * ppu
    for i in range(m):  # (4) the weights
        Wt[np.uint64(ix[i]), a] += step * vx[i] * rt[i]
    Wt[D - 1, a] += step * rb
    return True


# ---------------------------------------------------------------------------------------------
# dispatch on the oracle record (compile time), and a pass over logged rows
# ---------------------------------------------------------------------------------------------


def oracle_update(o, Wt, idx, val, lo, hi, a, pred, target):
    """One update of class ``a`` (compiled code only; dispatches on the oracle record's type)."""
    raise NotImplementedError("compiled code only")


@overload(oracle_update, inline="always")
def _ov_update(o, Wt, idx, val, lo, hi, a, pred, target):
    kind = getattr(o, "instance_class", None)
    if kind is RidgeOracle:
        return lambda o, Wt, idx, val, lo, hi, a, pred, target: ridge_update(o, Wt, idx, val, lo, hi, a, pred, target)
    if kind is OGDOracle:
        return lambda o, Wt, idx, val, lo, hi, a, pred, target: ogd_update(o, Wt, idx, val, lo, hi, a, pred, target)
    if kind is FDSONOracle:
        return lambda o, Wt, idx, val, lo, hi, a, pred, target: fdson_update(o, Wt, idx, val, lo, hi, a, pred, target)
    return None


@njit(cache=True, nogil=True)
def fit_rows(o, Wt, rows, played, target):
    """One pass of oracle updates over the rows (a :class:`._stream.DenseRows`/``CsrRows``) in order: class
    ``played[i]`` on ``target[i]``; False on a non-finite step."""
    r = np.empty(Wt.shape[1])
    for i in range(played.shape[0]):
        idx, val, lo, hi = row_of(rows, i)
        linear_predict(Wt, idx, val, lo, hi, r)
        a = played[i]
        if not oracle_update(o, Wt, idx, val, lo, hi, a, r[a], target[i]):
            return False
    return True
