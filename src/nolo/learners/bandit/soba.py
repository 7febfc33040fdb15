"""SOBA, the Second Order Banditron (Beygelzimer, Orabona & Zhang, ICML 2017), diagonal version."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nolo._jit import njit
from nolo._validation import check_scalar
from nolo.exceptions import PersistenceError
from nolo.learners.base import check_state_range, check_state_sqnorm
from nolo.learners.bandit._explore import best_competitor, explore_act, explore_probs, play_probability
from nolo.learners.bandit._linear import ExploringBanditLearner

__all__ = ["SOBA", "SOBAState", "A_RANGE"]

#: allowed initial diagonal ``a`` per dtype: products of two entries stay normal floats (the update divides by them)
A_RANGE = {"float64": (1e-100, 1e100), "float32": (1e-18, 1e18)}


@njit(cache=True, nogil=True, inline="always")
def update_soba(state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback):
    """Diagonal SOBA (docs/baselines.md, section 4.2, paper rule): learn only from confirmed labels.

    ybar = best competitor of ``played``; p = P(played); Delta = s[ybar] - s[played];
    q = (1/p) sum x_j^2 (1/a[ybar,j] + 1/a[played,j]); m = ((Delta^2 + 2 Delta)/p) / (1 + q);
    update when budget + m >= 0: a rows += x^2/p, theta[ybar] -= x/p, theta[played] += x/p,
    W = theta / a on the two rows, budget += m.  False (nothing written) when m is not finite.

    The state is (W, a): theta = W a is not stored but rebuilt for the two updated entries of each
    coordinate (theta' = W a -+ x/p), which saves a third array's loads and stores (SOBA 1.24x
    faster on MNIST) at a few roundings per update (W a equals theta to ~2 ulp; tested against a
    reference that keeps theta).  Two divisions per coordinate instead of four:
    1/a_ybar + 1/a_played = (a_ybar + a_played) / (a_ybar a_played) in q, and with
    r = 1/(a_ybar a_played), W = theta a_other r on the two updated rows (:data:`A_RANGE`
    keeps the products normal floats).
    """
    if feedback != 1:
        return True
    At, budget = state.At, state.budget
    K = Wt.shape[1]
    ybar = best_competitor(s, played, K)
    p = play_probability(played, yhat, state.gamma, K)
    delta = s[ybar] - s[played]
    q = 0.0
    for t in range(lo, hi):
        j = np.uintp(idx[t])  # unsigned: no negative-index wrap-around per access
        v = val[t]
        ay, ap = At[j, ybar], At[j, played]
        q += v * v * ((ay + ap) / (ay * ap))
    q /= p
    m = (delta * delta + 2.0 * delta) / p / (1.0 + q)
    if not np.isfinite(m):
        return False
    if budget[0] + m < 0.0:
        return True
    inv_p = 1.0 / p
    for t in range(lo, hi):
        j = np.uintp(idx[t])
        v = val[t]
        v2 = v * v * inv_p
        ay0, ap0 = At[j, ybar], At[j, played]
        ay = ay0 + v2
        ap = ap0 + v2
        At[j, ybar] = ay
        At[j, played] = ap
        ty = Wt[j, ybar] * ay0 - v * inv_p  # theta rebuilt from W a
        tp = Wt[j, played] * ap0 + v * inv_p
        r = 1.0 / (ay * ap)
        Wt[j, ybar] = ty * ap * r
        Wt[j, played] = tp * ay * r
    budget[0] += m
    return True


class SOBAState(NamedTuple):
    """SOBA's record: exploration rate, the diagonal a as (d, K) (the transpose view of ``a_``), the budget S."""

    gamma: float
    At: np.ndarray
    budget: np.ndarray
    act = explore_act
    probs = explore_probs
    update = update_soba


class SOBA(ExploringBanditLearner):
    """Diagonal SOBA (Beygelzimer, Orabona & Zhang 2017, Algorithm 1, diagonal A; docs/baselines.md, section 4.2).

    AM cite it as their [4], which is a different paper (docs/baselines.md, section 4,
    "citation error in AM").  The rule's quantities: theta (K x d, starts 0), the diagonal a
    of A (K x d, starts ``a``), a margin budget S (starts 0); W = theta / a.  Learns only
    from confirmed rounds (f = 1, the flipped bit under noise): with ybar the best
    competitor of y~, p = P(y~), Delta = s_ybar - s_y~,
    q = (1/p) sum_j x_j^2 (1/a_{ybar,j} + 1/a_{y~,j}) and m = ((Delta^2 + 2 Delta)/p)/(1 + q),
    it updates when S + m >= 0: a_{ybar}, a_{y~} += x^2/p; theta_{ybar} -= x/p;
    theta_{y~} += x/p; S += m (the paper rule; the MATLAB variant that does not add
    m on exploration hits is not implemented).  Cost per round O(Kd), memory 2Kd: the state is
    (W, a, S) and ``theta_`` = W a is derived (the update rebuilds theta for the entries it
    updates, :func:`update_soba`); two divisions per updated coordinate.

    Parameters
    ----------
    n_classes : int >= 2
        Number of labels K.
    gamma : float in [0, 1) or {"cor4.1", "cor4.2", "cor4.3"}
        Exploration rate of AM eq. (3).
    a : float
        Initial diagonal of A, in [1e-100, 1e100] for float64 and [1e-18, 1e18] for float32
        (:data:`A_RANGE`: the update divides by products of two entries).
    dtype : {"float64", "float32"}
        Precision of W and a.
    seed : int, numpy Generator or None
        The learner's generator (one uniform per played label).

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.bandit import SOBA
    >>> m = SOBA(n_classes=2, gamma=0.5, a=1.0, seed=0)
    >>> m.learn(np.array([1.0, 0.0]), 1, 1)  # p = 1/4, Delta = 0, m = 0 >= 0: a += x^2/p, theta = -+ x/p
    SOBA(gamma=0.5, seed=0)
    >>> m.a_
    array([[5., 1.],
           [5., 1.]])
    >>> m.W_                                  # W = theta / a = -+ 4/5
    array([[-0.8,  0. ],
           [ 0.8,  0. ]])
    """

    _fortran_state = ("W_", "a_")

    def __init__(self, n_classes=2, gamma=0.05, a=1.0, dtype="float64", seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.a = a
        self.dtype = dtype
        self.seed = seed

    def _validate_params(self) -> None:
        super()._validate_params()
        lo, hi = A_RANGE[self.dtype]  # dtype checked above
        check_scalar(self.a, "a", low=lo, high=hi)

    def _init_state(self, n_features: int) -> None:
        super()._init_state(n_features)
        K = int(self.n_classes)
        self.a_ = np.full((K, n_features), float(self.a), dtype=self.dtype, order="F")
        self.budget_ = np.zeros(1)

    def _check_state(self) -> None:
        """The diagonal ``a_`` only grows from ``a``, at least the smallest value :data:`A_RANGE` allows for the
        dtype (the update divides by products of two entries: below it they underflow to 0), and stays below half
        the largest float (the update divides by the sum of two entries, which must be finite), the budget S never
        goes below 0 (an update is taken only when S + m >= 0), and ``||W_||^2`` is finite (W = theta / a stays far
        below 1e154: larger scores overflow the margin's square)."""
        super()._check_state()
        if not self.is_initialized:  # an unfitted learner holds no state
            return
        lo, top = A_RANGE[str(self.a_.dtype)][0], float(np.finfo(self.a_.dtype).max) / 2.0
        check_state_range("a_", self.a_, low=lo, high=top,
                          what=f"the diagonal of A grows from a >= {lo:g}; the update adds two entries")
        check_state_sqnorm("W_", self.W_, "the weights theta / a")
        if not self.budget_[0] >= 0.0:
            raise PersistenceError(f"budget_ (SOBA's margin budget S) must be >= 0, got {self.budget_[0]!r}")

    @property
    def theta_(self) -> np.ndarray:
        """theta = W a, the accumulated (x / p)-steps of SOBA's rule (derived from the stored W and a)."""
        self._require_initialized("theta_")
        return self.W_ * self.a_

    def _set_state(self, state) -> None:
        state = {k: v for k, v in state.items() if k != "theta_"}  # files saved when theta_ was stored
        super()._set_state(state)

    def _state_record(self) -> SOBAState:
        return SOBAState(float(self.gamma_), self.a_.T, self.budget_)
