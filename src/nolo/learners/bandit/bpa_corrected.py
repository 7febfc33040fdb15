"""BPA-h: Bandit Passive-Aggressive with AM's flip correction, importance-weighted."""

from __future__ import annotations

import numpy as np

from nolo._validation import check_scalar
from nolo.learners.bandit._corrected import BPAhState
from nolo.learners.bandit._corrected_base import FlipCorrectedMixin
from nolo.learners.bandit.bpa import BPA

__all__ = ["BPAh"]


class BPAh(FlipCorrectedMixin, BPA):
    """BPA (docs/baselines.md, section 3) fed AM's unbiased estimate h(f_rho) = (f_rho - rho0)/kappa (AM eq. 4,
    Lemma 1) instead of the flipped bit, with an importance-weighted PA-I step.

    Plays AM eq. (3) like BPA.  With sigma_h = 2 h - 1 (E[sigma_h] = 2 f - 1), l = [1 - sigma_h w_played . x]_+
    and w = 1 / (K P(played)) (1 under uniform play), the step is tau = min(C w, l / ||x||^2) -- the PA-I
    solution for the loss weighted by w -- and W_played += tau sigma_h x.  With rho0 = rho1 = 0 and
    C = inf it is BPA exactly (tested bit for bit on a stream).  Its record :class:`._corrected.BPAhState`
    runs in the bandit core like BPA's (:func:`nolo.learners.bandit.run_stream`, ``act``/``learn``).

    Feedback laws: the flip correction assumes class-conditional flips with known constant rates
    (:class:`nolo.noise.FlipChannel` with this learner's ``rho0``/``rho1``) and is unbiased only there;
    under :class:`nolo.noise.FlipMatrix` or :class:`nolo.noise.ContextFlips` it is biased, and
    ``run_stream``/``ClassificationBandit.run`` warn (:class:`nolo.exceptions.FeedbackLawWarning`).

    Parameters
    ----------
    n_classes : int >= 2
    gamma : exploration rate of AM eq. (3), in [0, 1)
    rho0, rho1 : known flip rates, rho0 + rho1 < 1
    C : PA-I aggressiveness (> 0; ``np.inf`` = the plain PA step), default 1
    dtype : {"float64", "float32"}
    seed : the learner's generator

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from nolo.learners.bandit import BPAh, run_stream
    >>> X, y = load_digits(return_X_y=True); X = X / np.linalg.norm(X, axis=1, keepdims=True)
    >>> r = run_stream(BPAh(n_classes=10, gamma=0.05, rho0=0.2, rho1=0.2, seed=0), X, y, 20_000, 0.2, 0.2, seed=1)
    >>> bool(r.error_rate[-1] < 0.9)
    True
    """

    def __init__(self, n_classes=2, gamma=0.05, rho0=0.0, rho1=0.0, C=1.0, dtype="float64", seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.rho0 = rho0
        self.rho1 = rho1
        self.C = C
        self.dtype = dtype
        self.seed = seed

    @classmethod
    def _test_params(cls) -> list[dict]:
        return [{"n_classes": 3, "rho0": 0.1, "rho1": 0.2}, {"n_classes": 3, "C": np.inf, "dtype": "float32"}]

    def _scale_reference(self):
        """PA-I's cap: a step moves the weights by at most C ||x||, so rows with C ||x||^2 << 1 never reach a unit
        margin; with C = inf the step is BPA's, scale-free."""
        C = float(self.C)
        return None if C == np.inf else (1.0 / C, f"the PA-I cap's scale (1 / C = {1.0 / C:.3g})", False)

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.C != np.inf:
            check_scalar(self.C, "C", low=0.0, low_inclusive=False)

    def _state_record(self) -> BPAhState:
        return BPAhState(float(self.gamma_), *self._target(), float(self.C))
