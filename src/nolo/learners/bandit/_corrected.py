"""Compiled rules of the flip-corrected AM baselines (:class:`BPAh`, :class:`SOBAh`) as bandit-core records.

They play AM eq. (3) (:func:`._explore.explore_act`, one uniform) like BPA and SOBA, and update with AM's
unbiased feedback estimate h(f_rho) = (f_rho - rho0) / kappa (AM eq. 4, Lemma 1) in place of the bit.
Their records (:class:`BPAhState`, :class:`SOBAhState`) plug into the bandit core's one stream loop
(:mod:`._stream`), so they see the same stream (same draws) as every other nolo learner.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nolo._jit import njit
from nolo.learners.bandit._explore import best_competitor, explore_act, explore_probs, play_probability

__all__ = ["BPAhState", "SOBAhState", "update_bpa_h", "update_soba_h"]


@njit(cache=True, nogil=True, inline="always")
def update_bpa_h(state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback):
    """BPA with the bit replaced by h: sigma_h = 2 h - 1 (unbiased for sigma = 2 f - 1), hinge
    l = [1 - sigma_h s_played]_+, importance-weighted PA-I step tau = min(C w, l / ||x||^2) with
    w = 1 / (K P(played)) (the PA-I solution for the loss weighted by w; C = inf is plain PA), then
    W_played += tau sigma_h x.  With rho0 = rho1 = 0 and C = inf this is BPA (docs/baselines.md, section 3)."""
    K = Wt.shape[1]
    sigma = 2.0 * ((feedback - state.rho0) / state.kappa) - 1.0
    loss = 1.0 - sigma * s[played]
    if loss <= 0.0:
        return True
    nrm2 = 0.0
    for t in range(lo, hi):
        nrm2 += val[t] * val[t]
    if nrm2 == 0.0:
        return True
    w = 1.0 / (K * play_probability(played, yhat, state.gamma, K))
    tau = min(state.C * w, loss / nrm2)
    c = tau * sigma
    if not np.isfinite(c):
        return False
    for t in range(lo, hi):
        Wt[idx[t], played] += c * val[t]
    return True


@njit(cache=True, nogil=True, inline="always")
def update_soba_h(state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback):
    """Diagonal SOBA (docs/baselines.md, section 4.2) with AM's h on the update weight: SOBA's weight 1[f = 1] / p
    becomes h / p on every round (negative on a rejection when rho0 > 0; E = f / p), its second-order term
    x^2 / p becomes h^2 x^2 / p (the diagonal of p g g^T for the gradient g = (h / p) x, always >= 0),
    and the budget increment m = h ((Delta^2 + 2 Delta) / p) / (1 + h^2 q).  With rho0 = rho1 = 0 this is
    SOBA (h = f: nothing on f = 0, the paper rule on f = 1)."""
    h = (feedback - state.rho0) / state.kappa
    if h == 0.0:
        return True
    At, budget = state.At, state.budget
    K = Wt.shape[1]
    ybar = best_competitor(s, played, K)
    p = play_probability(played, yhat, state.gamma, K)
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


class BPAhState(NamedTuple):
    """BPA-h's record: exploration rate, the target's rho0 and kappa = 1 - rho0 - rho1, the PA-I cap C."""

    gamma: float
    rho0: float
    kappa: float
    C: float
    act = explore_act
    probs = explore_probs
    update = update_bpa_h


class SOBAhState(NamedTuple):
    """SOBA-h's record: SOBA's (exploration rate, diagonal a as (d, K), budget) and the target's rho0, kappa."""

    gamma: float
    At: np.ndarray
    budget: np.ndarray
    rho0: float
    kappa: float
    act = explore_act
    probs = explore_probs
    update = update_soba_h
