"""RCNBF: Robust Classifier for Noisy Bandit Feedback (AM Algorithm 1)."""

from __future__ import annotations

from nolo._validation import check_flip_rates
from nolo.learners.bandit import _kernels as kern
from nolo.learners.bandit._linear import ExploringBanditLearner
from nolo.noise import FlipChannel

__all__ = ["RCNBF", "unbiased_feedback"]


def unbiased_feedback(feedback, rho0: float, rho1: float):
    """AM eq. (4), Lemma 1: h(f_rho) = (f_rho - rho0) / (1 - rho0 - rho1), so E[h | f] = f (math-notes item 11)."""
    return FlipChannel(rho0, rho1).unbias(feedback)


class RCNBF(ExploringBanditLearner):
    """RCNBF, AM Algorithm 1 with the update of AM eq. (5).

    As Banditron, but the bit enters through the unbiased estimate
    h(f_rho) = (f_rho - rho0) / beta, beta = 1 - rho0 - rho1 (AM eq. (4); written in
    the simplified form of math-notes item 11, identical to the paper's
    ((1 - rho_{f'}) f - rho_f f') / beta): row y~ gets + x h / P(y~) and row yhat gets - x
    (when y~ = yhat both apply).  Lemma 2: E[H] = the Perceptron update U.

    The rates are the *known* flip rates of the channel, rho0 = P(feedback 1 | truth 0),
    rho1 = P(feedback 0 | truth 1); rho0 + rho1 >= 1 is rejected.  The paper's
    domain for gamma is (0, 0.5); gamma may also be "cor4.1"/"cor4.2"/"cor4.3"
    (AM Corollaries 4.1-4.3 with beta = 1 - rho0 - rho1, horizon T, complexity D).
    Erratum (math-notes item 14): only in the proof of Theorem 4; the update is as printed.
    """

    _algo = kern.EXP_H

    def __init__(self, n_classes=2, gamma=0.05, rho0=0.0, rho1=0.0, horizon=None, complexity=1.0,
                 dtype="float64", seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.rho0 = rho0
        self.rho1 = rho1
        self.horizon = horizon
        self.complexity = complexity
        self.dtype = dtype
        self.seed = seed

    def _validate_params(self) -> None:
        super()._validate_params()
        check_flip_rates(self.rho0, self.rho1)

    def _beta_for_schedule(self) -> float:
        return 1.0 - float(self.rho0) - float(self.rho1)

    def _rates_assumed(self) -> tuple[float, float]:
        r0, r1 = float(self.rho0), float(self.rho1)
        return r0, 1.0 - r0 - r1
