"""Banditron (Kakade, Shalev-Shwartz & Tewari, ICML 2008), as restated in AM section 2."""

from __future__ import annotations

from nolo.learners.bandit import _kernels as kern
from nolo.learners.bandit._linear import ExploringBanditLearner

__all__ = ["Banditron"]


class Banditron(ExploringBanditLearner):
    """Banditron: Kakade et al. (ICML 2008) Algorithm 1; AM eq. (3) and the update after it.

    Each round: yhat = argmax_r w_r . x; play y~ ~ P with P(r) = (1 - gamma) 1[r = yhat] + gamma/K;
    receive f = 1[y~ = y] (under noise the flipped bit, used as if it were f --
    baselines.md section 0); update row y~ by + x f / P(y~) and row yhat by - x.
    Equal to :class:`RCNBF` with rho0 = rho1 = 0.

    Parameters
    ----------
    n_classes : int >= 2
    gamma : float in [0, 1) or "cor4.1"/"cor4.2"/"cor4.3" (AM Corollaries, needs ``horizon``)
    horizon, complexity : T and D for a corollary gamma
    dtype : "float64" or "float32"
    seed : seed of the learner's generator (one uniform per played label)
    """

    _algo = kern.EXP_H

    def __init__(self, n_classes=2, gamma=0.05, horizon=None, complexity=1.0, dtype="float64", seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.horizon = horizon
        self.complexity = complexity
        self.dtype = dtype
        self.seed = seed
