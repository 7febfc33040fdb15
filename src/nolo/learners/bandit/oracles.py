"""Online regression oracles for :class:`nolo.learners.bandit.SquareCB`: one model of E[target | x, a] per class.

Each oracle is a *state record* (a namedtuple of arrays, so numba passes it by reference and the
compiled code updates it in place) and two compiled functions on rows given as ``(idx, val, lo, hi)``
-- the non-zeros ``idx[lo:hi]`` / ``val[lo:hi]`` of x, the convention of
:mod:`nolo.learners.bandit._kernels` -- with an implicit bias feature 1 at index d:

* ``predict(state, idx, val, lo, hi, r)``: r[a] = the oracle's prediction for class a, every a;
* ``update(state, idx, val, lo, hi, a, pred, target)``: one square-loss step on class ``a`` only
  (``pred`` = r[a] from the same state); returns False, and writes nothing, when a coefficient
  would not be finite.

:func:`oracle_predict` / :func:`oracle_update` dispatch on the record's type at compile time
(``numba.extending.overload``), so one stream loop serves every oracle.

Oracles
-------
``"ridge"`` -- :class:`RidgeState`: per-class ridge regression (recursive least squares) on z = [x, 1]:
    theta_a = (lam I + sum_s z_s z_s^T)^{-1} sum_s z_s r_s over the rounds s where a was played.
    Kept as P_a = (lam I + Z_a^T Z_a)^{-1} (K x D x D, D = d + 1) and theta (D x K); an update is
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
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit
from numba.extending import overload

from nolo.exceptions import ParameterError

__all__ = ["RidgeState", "OGDState", "ORACLES", "ridge_state", "ogd_state", "ridge_predict", "ridge_update",
           "ogd_predict", "ogd_update", "oracle_predict", "oracle_update", "ridge_bytes", "RIDGE_MAX_BYTES"]

ORACLES = ("ridge", "ogd")
#: the ridge oracle refuses a (K, d) whose K (d + 1)^2 float64 inverses would exceed this many bytes by default
RIDGE_MAX_BYTES = 2 * 1024 ** 3

#: P (K, D, D): the inverses (lam I + Z_a^T Z_a)^{-1}; thetaT (D, K): coefficients (row d = bias)
RidgeState = namedtuple("RidgeState", ["P", "thetaT"])
#: wT, G, S (D, K): weights, sums of squared gradients, largest |x_j| seen; N, n (K,): normaliser sums and
#: update counts; hp (1,): [eta]; buf (D,): scratch (the per-coordinate rates of the current update)
OGDState = namedtuple("OGDState", ["wT", "G", "S", "N", "n", "hp", "buf"])


def ridge_bytes(n_classes: int, n_features: int) -> int:
    """Bytes of the ridge oracle's inverses: K (d + 1)^2 float64."""
    return int(n_classes) * (int(n_features) + 1) ** 2 * 8


def ridge_state(n_classes: int, n_features: int, lam: float, max_bytes: int = RIDGE_MAX_BYTES) -> RidgeState:
    """Fresh ridge state: P_a = I / lam, theta = 0; refuses (ParameterError) more than ``max_bytes`` of inverses."""
    need = ridge_bytes(n_classes, n_features)
    if need > max_bytes:
        raise ParameterError(
            f"oracle='ridge' keeps one (d+1) x (d+1) float64 inverse per class: K={n_classes}, d={n_features} needs "
            f"{need / 2**30:.2f} GiB, more than max_bytes={max_bytes / 2**30:.2f} GiB; use oracle='ogd' (O(K d) memory) "
            "or raise max_bytes")
    D = int(n_features) + 1
    P = np.zeros((int(n_classes), D, D))
    for a in range(int(n_classes)):
        np.fill_diagonal(P[a], 1.0 / float(lam))
    return RidgeState(P, np.zeros((D, int(n_classes))))


def ogd_state(n_classes: int, n_features: int, eta: float) -> OGDState:
    D, K = int(n_features) + 1, int(n_classes)
    return OGDState(np.zeros((D, K)), np.zeros((D, K)), np.zeros((D, K)), np.zeros(K), np.zeros(K),
                    np.array([float(eta)]), np.zeros(D))


# ---------------------------------------------------------------------------------------------
# ridge / recursive least squares
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _linear_predict(thetaT, idx, val, lo, hi, r):
    """r[k] = thetaT[d, k] + sum_t thetaT[idx[t], k] val[t] (t increasing), every class k."""
    D, K = thetaT.shape
    for k in range(K):
        r[k] = thetaT[D - 1, k]
    for t in range(lo, hi):
        j = idx[t]
        v = val[t]
        for k in range(K):
            r[k] += thetaT[j, k] * v


@njit(cache=True, nogil=True, inline="always")
def ridge_predict(st, idx, val, lo, hi, r):
    _linear_predict(st.thetaT, idx, val, lo, hi, r)


@njit(cache=True, nogil=True, inline="always")
def ridge_update(st, idx, val, lo, hi, a, pred, target):
    """Sherman-Morrison step of class ``a`` on (z = [x, 1], target); False (nothing written) if not finite."""
    P = st.P[a]
    thetaT = st.thetaT
    D = P.shape[0]
    Pz = P[D - 1].copy()  # P symmetric: P z = sum_j P[j, :] z_j, the bias row first
    for t in range(lo, hi):
        j = idx[t]
        v = val[t]
        row = P[j]
        for i in range(D):
            Pz[i] += row[i] * v
    zPz = Pz[D - 1]
    for t in range(lo, hi):
        zPz += val[t] * Pz[idx[t]]
    denom = 1.0 + zPz
    err = target - pred
    if not (np.isfinite(denom) and np.isfinite(err) and denom > 0.0):
        return False
    c = 1.0 / math.sqrt(denom)
    for i in range(D):
        Pz[i] *= c  # u = P z / sqrt(1 + z'Pz)
    ce = err * c
    for i in range(D):
        thetaT[i, a] += Pz[i] * ce
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
def ogd_predict(st, idx, val, lo, hi, r):
    _linear_predict(st.wT, idx, val, lo, hi, r)


@njit(cache=True, nogil=True, inline="always")
def ogd_update(st, idx, val, lo, hi, a, pred, target):
    """One VW-style normalised adaptive invariant square-loss step on class ``a``.

    First the scales: s_j grows to |x_j| and w_j shrinks by s_old / s_new (VW's adaptive normalised
    rescaling), which moves the prediction; the step is then taken from that moved prediction, so the
    invariant step lands between it and the target.
    """
    wT, G, S, N, n = st.wT, st.G, st.S, st.N, st.n
    eta = st.hp[0]
    D = wT.shape[0]
    if not (np.isfinite(target) and np.isfinite(pred)):
        return False
    p = pred
    nrm = 1.0  # the bias feature, x = 1, scale 1
    for t in range(lo, hi):
        j = idx[t]
        v = val[t]
        ax = abs(v)
        if ax == 0.0:
            continue
        s = S[j, a]
        if ax > s:
            if s > 0.0:
                w_old = wT[j, a]
                w_new = w_old * (s / ax)
                wT[j, a] = w_new
                p += (w_new - w_old) * v
            S[j, a] = ax
            s = ax
        nrm += (v / s) * (v / s)
    S[D - 1, a] = 1.0
    err = target - p
    if err == 0.0:
        return True
    g2 = err * err
    buf = st.buf
    G[D - 1, a] += g2
    N[a] += nrm
    n[a] += 1.0
    eta_t = eta * math.sqrt(n[a] / N[a])
    # pred_per_update = sum_j x_j^2 rate_j, rate_j = 1 / (s_j sqrt(G_j)) (kept in buf for the step)
    rb = 1.0 / math.sqrt(G[D - 1, a])
    ppu = rb
    for t in range(lo, hi):
        j = idx[t]
        v = val[t]
        g = G[j, a] + g2 * v * v
        G[j, a] = g
        rate = 0.0
        if v != 0.0:
            rate = 1.0 / (S[j, a] * math.sqrt(g))
        buf[t - lo] = rate
        ppu += v * v * rate
    step = err * (1.0 - math.exp(-eta_t * ppu)) / ppu  # invariant: the prediction moves by step * ppu
    for t in range(lo, hi):
        wT[idx[t], a] += step * val[t] * buf[t - lo]
    wT[D - 1, a] += step * rb
    return True


# ---------------------------------------------------------------------------------------------
# dispatch on the state record (compile time)
# ---------------------------------------------------------------------------------------------


def oracle_predict(st, idx, val, lo, hi, r):
    """r[a] = prediction of every class (compiled code only; dispatches on the record type)."""
    raise NotImplementedError


def oracle_update(st, idx, val, lo, hi, a, pred, target):
    """One update of class ``a`` (compiled code only; dispatches on the record type)."""
    raise NotImplementedError


def _kind(st):
    return getattr(st, "instance_class", None)


@overload(oracle_predict, inline="always")
def _ov_predict(st, idx, val, lo, hi, r):
    if _kind(st) is RidgeState:
        return lambda st, idx, val, lo, hi, r: ridge_predict(st, idx, val, lo, hi, r)
    if _kind(st) is OGDState:
        return lambda st, idx, val, lo, hi, r: ogd_predict(st, idx, val, lo, hi, r)
    return None


@overload(oracle_update, inline="always")
def _ov_update(st, idx, val, lo, hi, a, pred, target):
    if _kind(st) is RidgeState:
        return lambda st, idx, val, lo, hi, a, pred, target: ridge_update(st, idx, val, lo, hi, a, pred, target)
    if _kind(st) is OGDState:
        return lambda st, idx, val, lo, hi, a, pred, target: ogd_update(st, idx, val, lo, hi, a, pred, target)
    return None
