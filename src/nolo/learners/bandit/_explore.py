"""The play rules shared by the linear bandit learners: greedy (Perceptron) and AM eq. (3) exploration.

Each is a compiled ``act(state, sp, K, rng) -> (greedy label, played label)`` for a state record
(see :mod:`._stream`): ``sp`` holds the K scores padded to a multiple of LANES (zeros beyond K).
"""

from __future__ import annotations

from nolo._jit import njit
from nolo.learners.bandit._pcg64 import uniform
from nolo.learners.bandit._simd import argmax_padded

__all__ = ["draw_label", "play_probability", "greedy_act", "explore_act", "greedy_probs", "explore_probs"]


@njit(cache=True, nogil=True, inline="always")
def draw_label(u, yhat, gamma, K):
    """Play from P(r) = (1 - gamma) 1[r = yhat] + gamma / K with the single uniform ``u`` (AM eq. 3).

    ``u < 1 - gamma`` plays ``yhat``; otherwise the label ``floor((u - (1 - gamma)) / gamma * K)``,
    uniform over all K labels.
    """
    keep = 1.0 - gamma
    if u < keep:
        return yhat
    r = int((u - keep) / gamma * K)
    if r >= K:
        r = K - 1
    return r


@njit(cache=True, nogil=True, inline="always")
def play_probability(r, yhat, gamma, K):
    """P(r) of AM eq. (3)."""
    p = gamma / K
    if r == yhat:
        p += 1.0 - gamma
    return p


@njit(cache=True, nogil=True, inline="always")
def best_competitor(s, played, K):
    """ybar = argmax_{k != played} s_k (ties to the smallest k): SOBA's competing label."""
    ybar = -1
    for k in range(K):
        if k != played and (ybar < 0 or s[k] > s[ybar]):
            ybar = k
    return ybar


@njit(cache=True, nogil=True, inline="always")
def greedy_act(state, sp, K, rng):
    """Play the greedy label argmax_k s_k (ties to the smallest k); draws nothing."""
    yhat = argmax_padded(sp, K)
    return yhat, yhat


@njit(cache=True, nogil=True, inline="always")
def greedy_probs(state, sp, K, out):
    """:func:`greedy_act`'s distribution: all mass on the greedy label."""
    yhat = argmax_padded(sp, K)
    for k in range(K):
        out[k] = 0.0
    out[yhat] = 1.0


@njit(cache=True, nogil=True, inline="always")
def explore_probs(state, sp, K, out):
    """:func:`explore_act`'s distribution, AM eq. (3): (1 - gamma) 1[r = yhat] + gamma / K."""
    yhat = argmax_padded(sp, K)
    for k in range(K):
        out[k] = play_probability(k, yhat, state.gamma, K)


@njit(cache=True, nogil=True, inline="always")
def explore_act(state, sp, K, rng):
    """AM eq. (3): the greedy label and a label drawn with one uniform from ``rng``; reads ``state.gamma``."""
    yhat = argmax_padded(sp, K)
    return yhat, draw_label(uniform(rng), yhat, state.gamma, K)
