"""SOBA, the Second Order Banditron (Beygelzimer, Orabona & Zhang, ICML 2017), diagonal version."""

from __future__ import annotations

import numpy as np

from nolo._validation import check_scalar
from nolo.learners.bandit import _kernels as kern
from nolo.learners.bandit._linear import ExploringBanditLearner

__all__ = ["SOBA"]


class SOBA(ExploringBanditLearner):
    """Diagonal SOBA (Beygelzimer, Orabona & Zhang 2017, Algorithm 1 with a diagonal A), per baselines.md 4.2.

    AM cite it as their [4], which is a different paper (baselines.md section 4,
    "citation error in AM").  The rule's quantities: theta (K x d, starts 0), the diagonal a
    of A (K x d, starts ``a``), a margin budget S (starts 0); W = theta / a.  Learns only
    from confirmed rounds (f = 1, the flipped bit under noise): with ybar the best
    competitor of y~, p = P(y~), Delta = s_ybar - s_y~,
    q = (1/p) sum_j x_j^2 (1/a_{ybar,j} + 1/a_{y~,j}) and m = ((Delta^2 + 2 Delta)/p)/(1 + q),
    it updates when S + m >= 0: a_{ybar}, a_{y~} += x^2/p; theta_{ybar} -= x/p;
    theta_{y~} += x/p; S += m (the paper rule; the MATLAB variant that does not add
    m on exploration hits is not implemented).  Cost per round O(Kd), memory 2Kd: the state is
    (W, a, S) and ``theta_`` = W a is derived (the kernel rebuilds theta for the entries it
    updates, :func:`nolo.learners.bandit._kernels.update_soba`); two divisions per updated
    coordinate, for which the initial diagonal ``a`` must lie in [1e-100, 1e100].
    """

    _algo = kern.SOBA
    _fortran_state = ("W_", "a_")

    def __init__(self, n_classes=2, gamma=0.05, a=1.0, dtype="float64", seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.a = a
        self.dtype = dtype
        self.seed = seed

    def _validate_params(self) -> None:
        super()._validate_params()
        check_scalar(self.a, "a", low=1e-100, high=1e100)  # products of two entries stay normal floats

    def _init_state(self, n_features: int) -> None:
        super()._init_state(n_features)
        K = int(self.n_classes)
        self.a_ = np.full((K, n_features), float(self.a), dtype=self.dtype, order="F")
        self.budget_ = np.zeros(1)

    @property
    def theta_(self) -> np.ndarray:
        """theta = W a, the accumulated (x / p)-steps of SOBA's rule (derived from the stored W and a)."""
        self._require_initialized("theta_")
        return self.W_ * self.a_

    def _set_state(self, state) -> None:
        state = {k: v for k, v in state.items() if k != "theta_"}  # files saved when theta_ was stored
        super()._set_state(state)

    def _kernel_state(self) -> tuple:
        return (self._algo, self.W_.T, self.a_.T, self.budget_, self.gamma_, 0.0, 1.0)
