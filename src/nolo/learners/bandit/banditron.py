"""Banditron (Kakade, Shalev-Shwartz & Tewari, ICML 2008), as restated in AM section 2."""

from __future__ import annotations

from nolo.learners.bandit._linear import ExploringBanditLearner
from nolo.learners.bandit.rcnbf import ExpHState, exp_h_record

__all__ = ["Banditron"]


class Banditron(ExploringBanditLearner):
    """Banditron: Kakade et al. (ICML 2008) Algorithm 1; AM eq. (3) and the update after it.

    Each round: yhat = argmax_r w_r . x; play y~ ~ P with P(r) = (1 - gamma) 1[r = yhat] + gamma/K;
    receive f = 1[y~ = y] (under noise the flipped bit, used as if it were f --
    docs/baselines.md, section 0); update row y~ by + x f / P(y~) and row yhat by - x.
    Equal to :class:`RCNBF` with rho0 = rho1 = 0 (the same compiled rule, :class:`ExpHState`).

    Parameters
    ----------
    n_classes : int >= 2
        Number of labels K.
    gamma : float in [0, 1) or {"cor4.1", "cor4.2", "cor4.3"}
        Exploration rate of AM eq. (3), or an AM corollary's rate (needs ``horizon``).
    horizon : int or None
        T, for a corollary gamma.
    complexity : float > 0
        D, for a corollary gamma.
    dtype : {"float64", "float32"}
        Precision of the weights.
    seed : int, numpy Generator or None
        The learner's generator (one uniform per played label).

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.bandit import Banditron
    >>> m = Banditron(n_classes=2, gamma=0.5, seed=0)
    >>> m.learn(np.array([1.0, 2.0]), 1, 1).W_  # yhat = 0, P(1) = gamma/K = 0.25: row 1 += 4 x, row 0 -= x
    array([[-1., -2.],
           [ 4.,  8.]])
    >>> m.predict(np.array([[1.0, 2.0]]))
    array([1])
    """

    def __init__(self, n_classes=2, gamma=0.05, horizon=None, complexity=1.0, dtype="float64", seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.horizon = horizon
        self.complexity = complexity
        self.dtype = dtype
        self.seed = seed

    def _state_record(self) -> ExpHState:
        return exp_h_record(self.gamma_, 0.0, 1.0, self.W_.shape[0])
