"""Bandit Passive-Aggressive (BPA), Zhong & Dauce 2015 as reconstructed in docs/baselines.md, section 3."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nolo._jit import njit
from nolo.learners.bandit._explore import explore_act, explore_probs
from nolo.learners.bandit._linear import ExploringBanditLearner
from nolo.learners.base import check_state_range

__all__ = ["BPA", "BPAState"]


@njit(cache=True, nogil=True, inline="always")
def update_bpa(state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback):
    """Binary PA step on row ``played`` with sigma = 2f - 1 (docs/baselines.md, section 3); False if tau is not finite."""
    sigma = 2.0 * feedback - 1.0
    loss = 1.0 - sigma * s[played]
    if loss <= 0.0:
        return True
    nrm2 = 0.0
    for t in range(lo, hi):
        nrm2 += val[t] * val[t]
    if nrm2 == 0.0:
        return True
    tau = loss / nrm2
    if not np.isfinite(tau):
        return False
    c = tau * sigma
    for t in range(lo, hi):
        Wt[idx[t], played] += c * val[t]
    return True


class BPAState(NamedTuple):
    """BPA's record: the exploration rate (W is the only state)."""

    gamma: float
    act = explore_act
    probs = explore_probs
    update = update_bpa


class BPA(ExploringBanditLearner):
    """BPA (AM's baseline [26]; the rule is the RECONSTRUCTION of docs/baselines.md, section 3).

    Play from AM eq. (3) like Banditron; with sigma = 2 f - 1 take the binary hinge
    l = [1 - sigma w_{y~} . x]_+ and the PA step w_{y~} += (l / ||x||^2) sigma x; other rows
    unchanged.  No aggressiveness constant (none was seen in any implementation).
    A zero input (||x|| = 0) leaves W unchanged.  Under noise the flipped bit is used as is.

    Parameters
    ----------
    n_classes : int >= 2
        Number of labels K.
    gamma : float in [0, 1) or {"cor4.1", "cor4.2", "cor4.3"}
        Exploration rate of AM eq. (3).
    dtype : {"float64", "float32"}
        Precision of the weights.
    seed : int, numpy Generator or None
        The learner's generator (one uniform per played label).

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.bandit import BPA
    >>> m = BPA(n_classes=2, gamma=0.1, seed=0)
    >>> m.learn(np.array([1.0, 1.0]), 1, 0).W_  # sigma = -1, loss 1, tau = 1/||x||^2 = 0.5: row 1 -= 0.5 x
    array([[ 0. ,  0. ],
           [-0.5, -0.5]])
    """

    def __init__(self, n_classes=2, gamma=0.05, dtype="float64", seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.dtype = dtype
        self.seed = seed

    def _check_state(self) -> None:
        """Besides the exploration rate: ``|W_|`` entries at most the largest float over the number of features, so
        that the score ``w . x`` of a row with entries in [-1, 1] is finite (the hinge loss and the step need it; the
        PA step puts ``w_{y~} . x`` on the margin, so a run keeps the weights far below)."""
        super()._check_state()
        if self.is_initialized:
            top = float(np.finfo(self.W_.dtype).max) / self.W_.shape[1]
            check_state_range("W_", self.W_, -top, top, "scores of rows within [-1, 1] must be finite")

    def _state_record(self) -> BPAState:
        return BPAState(float(self.gamma_))
