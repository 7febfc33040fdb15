"""Compiled per-round pieces of the flip-corrected AM baselines (:class:`BPAh`, :class:`SOBAh`).

They play AM eq. (3) (:func:`_kernels.draw_label`, one uniform) like BPA and SOBA, and update with AM's
unbiased feedback estimate h(f_rho) = (f_rho - rho0) / kappa (AM eq. 4, Lemma 1) in place of the bit.
The records plug into SquareCB's stream loop (:func:`nolo.learners.bandit.squarecb.stream`) through
``@overload(policy_act)`` / ``@overload(policy_learn)``, so they see the same stream (same draws) as
every other nolo learner.  cfg (float64): 0 gamma, 3 rho0, 4 rho1, 9 C (BPA-h's aggressiveness; inf = plain PA).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numba.extending import overload

from nolo.learners.bandit import _kernels as kern
from nolo.learners.bandit import squarecb as S

__all__ = ["BPAhState", "SOBAhState", "bpa_h_update", "soba_h_update"]

#: Wt (d, K): the transpose of the learner's W_ (the same memory)
BPAhState = namedtuple("BPAhState", ["Wt"])
#: Wt, At (d, K): W and SOBA's diagonal a; budget (1,): the margin budget S
SOBAhState = namedtuple("SOBAhState", ["Wt", "At", "budget"])


@njit(cache=True, nogil=True, inline="always")
def _h(cfg, fb):
    return (fb - cfg[3]) / (1.0 - cfg[3] - cfg[4])


@njit(cache=True, nogil=True)
def bpa_h_update(Wt, idx, val, lo, hi, s, yhat, played, fb, cfg):
    """BPA with the bit replaced by h: sigma_h = 2 h - 1 (unbiased for sigma = 2 f - 1), hinge
    l = [1 - sigma_h s_played]_+, importance-weighted PA-I step tau = min(C w, l / ||x||^2) with
    w = 1 / (K P(played)) (the PA-I solution for the loss weighted by w; C = inf is plain PA), then
    W_played += tau sigma_h x.  With rho0 = rho1 = 0 and C = inf this is BPA (baselines.md section 3)."""
    K = Wt.shape[1]
    sigma = 2.0 * _h(cfg, fb) - 1.0
    loss = 1.0 - sigma * s[played]
    if loss <= 0.0:
        return True
    nrm2 = 0.0
    for t in range(lo, hi):
        nrm2 += val[t] * val[t]
    if nrm2 == 0.0:
        return True
    w = 1.0 / (K * kern.play_probability(played, yhat, cfg[0], K))
    tau = min(cfg[9] * w, loss / nrm2)
    c = tau * sigma
    if not np.isfinite(c):
        return False
    for t in range(lo, hi):
        Wt[idx[t], played] += c * val[t]
    return True


@njit(cache=True, nogil=True)
def soba_h_update(Wt, At, budget, idx, val, lo, hi, s, yhat, played, fb, cfg):
    """Diagonal SOBA (baselines.md 4.2) with AM's h on the update weight: SOBA's weight 1[f = 1] / p becomes
    h / p on every round (negative on a rejection when rho0 > 0; E = f / p), its second-order term
    x^2 / p becomes h^2 x^2 / p (the diagonal of p g g^T for the gradient g = (h / p) x, always >= 0),
    and the budget increment m = h ((Delta^2 + 2 Delta) / p) / (1 + h^2 q).  With rho0 = rho1 = 0 this is
    SOBA (h = f: nothing on f = 0, the paper rule on f = 1)."""
    h = _h(cfg, fb)
    if h == 0.0:
        return True
    K = Wt.shape[1]
    ybar = -1
    for k in range(K):
        if k != played and (ybar < 0 or s[k] > s[ybar]):
            ybar = k
    p = kern.play_probability(played, yhat, cfg[0], K)
    delta = s[ybar] - s[played]
    q = 0.0
    for t in range(lo, hi):
        j = idx[t]
        v = val[t]
        q += v * v * (1.0 / At[j, ybar] + 1.0 / At[j, played])
    q /= p
    m = h * ((delta * delta + 2.0 * delta) / p) / (1.0 + h * h * q)
    if not np.isfinite(m):
        return False
    if budget[0] + m < 0.0:
        return True
    wp = h / p
    w2 = h * h / p
    for t in range(lo, hi):
        j = idx[t]
        v = val[t]
        ay0, ap0 = At[j, ybar], At[j, played]
        ay = ay0 + w2 * v * v
        ap = ap0 + w2 * v * v
        At[j, ybar] = ay
        At[j, played] = ap
        Wt[j, ybar] = (Wt[j, ybar] * ay0 - wp * v) / ay  # theta = W a, rebuilt for the two entries
        Wt[j, played] = (Wt[j, played] * ap0 + wp * v) / ap
    budget[0] += m
    return True


@njit(cache=True, nogil=True, inline="always")
def _act(Wt, cfg, idx, val, lo, hi, r, u):
    kern.scores(Wt, idx, val, lo, hi, r)
    yhat = kern.argmax_first(r)
    return yhat, kern.draw_label(u, yhat, cfg[0], Wt.shape[1])


def _kind(st):
    return getattr(st, "instance_class", None)


@overload(S.policy_act, inline="always")
def _ov_act(st, est, cfg, idx, val, lo, hi, r, t, u):
    if _kind(st) in (BPAhState, SOBAhState):
        return lambda st, est, cfg, idx, val, lo, hi, r, t, u: _act(st.Wt, cfg, idx, val, lo, hi, r, u)
    return None


@overload(S.policy_learn, inline="always")
def _ov_learn(st, hist, est, cfg, idx, val, lo, hi, r, ahat, a, fb, t):
    if _kind(st) is BPAhState:
        def impl(st, hist, est, cfg, idx, val, lo, hi, r, ahat, a, fb, t):
            return S.OK if bpa_h_update(st.Wt, idx, val, lo, hi, r, ahat, a, fb, cfg) else S.NONFINITE
        return impl
    if _kind(st) is SOBAhState:
        def impl(st, hist, est, cfg, idx, val, lo, hi, r, ahat, a, fb, t):
            return S.OK if soba_h_update(st.Wt, st.At, st.budget, idx, val, lo, hi, r, ahat, a, fb, cfg) else S.NONFINITE
        return impl
    return None


@njit(cache=True, nogil=True)
def learn_bpa_h(Wt, idx, val, nnz, a, fb, cfg):
    """Per-round learn of BPA-h: the scores and greedy label of x, then :func:`bpa_h_update`."""
    r = np.empty(Wt.shape[1])
    kern.scores(Wt, idx, val, 0, nnz, r)
    return bpa_h_update(Wt, idx, val, 0, nnz, r, kern.argmax_first(r), a, fb, cfg)


@njit(cache=True, nogil=True)
def learn_soba_h(Wt, At, budget, idx, val, nnz, a, fb, cfg):
    r = np.empty(Wt.shape[1])
    kern.scores(Wt, idx, val, 0, nnz, r)
    return soba_h_update(Wt, At, budget, idx, val, 0, nnz, r, kern.argmax_first(r), a, fb, cfg)

