"""SOBA-h: diagonal SOBA with AM's flip correction on the update weight."""

from __future__ import annotations

from nolo.learners.bandit._corrected import SOBAhState
from nolo.learners.bandit._corrected_base import FlipCorrectedMixin
from nolo.learners.bandit.soba import SOBA

__all__ = ["SOBAh"]


class SOBAh(FlipCorrectedMixin, SOBA):
    """Diagonal SOBA (docs/baselines.md, section 4.2; Beygelzimer et al. 2017) with AM's h on the update weight.

    SOBA learns from confirmed rounds only, with weight 1[f = 1] / p; SOBA-h uses h(f_rho) / p on every
    round, h = (f_rho - rho0)/kappa (AM eq. 4; E[h] = f, Lemma 1): theta_played += (h/p) x,
    theta_ybar -= (h/p) x, a += (h^2/p) x^2 on both rows (the diagonal of p g g^T, g = (h/p) x), budget
    increment m = h ((Delta^2 + 2 Delta)/p) / (1 + h^2 q).  With rho0 = rho1 = 0 it is SOBA's paper rule
    (to rounding: W is rebuilt as theta / a directly).  Its record :class:`._corrected.SOBAhState` runs in
    the bandit core like SOBA's (:func:`nolo.learners.bandit.run_stream`, ``act``/``learn``).

    Feedback laws: the flip correction assumes class-conditional flips with known constant rates
    (:class:`nolo.noise.FlipChannel` with this learner's ``rho0``/``rho1``) and is unbiased only there;
    under :class:`nolo.noise.FlipMatrix` or :class:`nolo.noise.ContextFlips` it is biased, and
    ``run_stream``/``ClassificationBandit.run`` warn (:class:`nolo.exceptions.FeedbackLawWarning`).

    Parameters
    ----------
    n_classes : int >= 2
    gamma : exploration rate of AM eq. (3), in [0, 1)
    rho0, rho1 : known flip rates, rho0 + rho1 < 1
    a : initial diagonal, default 1
    dtype : {"float64", "float32"}
    seed : the learner's generator

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from nolo.learners.bandit import SOBAh, run_stream
    >>> X, y = load_digits(return_X_y=True); X = X / np.linalg.norm(X, axis=1, keepdims=True)
    >>> r = run_stream(SOBAh(n_classes=10, gamma=0.05, rho0=0.2, rho1=0.2, seed=0), X, y, 20_000, 0.2, 0.2, seed=1)
    >>> bool(r.error_rate[-1] < 0.9)
    True
    """

    def __init__(self, n_classes=2, gamma=0.05, rho0=0.0, rho1=0.0, a=1.0, dtype="float64", seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.rho0 = rho0
        self.rho1 = rho1
        self.a = a
        self.dtype = dtype
        self.seed = seed

    @classmethod
    def _test_params(cls) -> list[dict]:
        return [{"n_classes": 3, "rho0": 0.1, "rho1": 0.2}, {"n_classes": 3, "dtype": "float32"}]

    def _state_record(self) -> SOBAhState:
        return SOBAhState(float(self.gamma_), self.a_.T, self.budget_, *self._target())
