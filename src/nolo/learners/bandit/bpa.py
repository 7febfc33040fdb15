"""Bandit Passive-Aggressive (BPA), Zhong & Dauce 2015 as reconstructed in baselines.md section 3."""

from __future__ import annotations

from nolo.learners.bandit import _kernels as kern
from nolo.learners.bandit._linear import ExploringBanditLearner

__all__ = ["BPA"]


class BPA(ExploringBanditLearner):
    """BPA (AM's baseline [26]; the rule is the RECONSTRUCTION of baselines.md section 3).

    Play from AM eq. (3) like Banditron; with sigma = 2 f - 1 take the binary hinge
    l = [1 - sigma w_{y~} . x]_+ and the PA step w_{y~} += (l / ||x||^2) sigma x; other rows
    unchanged.  No aggressiveness constant (none was seen in any implementation).
    A zero input (||x|| = 0) leaves W unchanged.  Under noise the flipped bit is used as is.
    """

    _algo = kern.BPA

    def __init__(self, n_classes=2, gamma=0.05, dtype="float64", seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.dtype = dtype
        self.seed = seed
