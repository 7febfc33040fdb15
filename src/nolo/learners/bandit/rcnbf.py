"""RCNBF: Robust Classifier for Noisy Bandit Feedback (AM Algorithm 1) -- and the AM eq. (5) update rule it shares
with Banditron (rates 0) and RCINE (estimated rates)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nolo._jit import njit
from nolo._validation import check_flip_rates
from nolo.learners.bandit._explore import explore_act, explore_probs, play_probability
from nolo.learners.bandit._linear import ExploringBanditLearner
from nolo.learners.bandit._simd import add_sub_columns
from nolo.noise import FlipChannel

__all__ = ["RCNBF", "ExpHState", "unbiased_feedback", "exp_h_coefficients", "exp_h_record"]


def unbiased_feedback(feedback, rho0: float, rho1: float):
    """AM eq. (4), Lemma 1: h(f_rho) = (f_rho - rho0) / (1 - rho0 - rho1), so E[h | f] = f (docs/math.md, item 11)."""
    return FlipChannel(rho0, rho1).unbias(feedback)


@njit(cache=True, nogil=True, error_model="numpy")
def exp_h_coefficients(gamma, rho0a, kappa_a, K):
    """The four step coefficients h(f)/P(played) of AM eq. (5), indexed ``2 f + (played == yhat)``.

    h(f) = (f - rho0)/kappa (docs/math.md, item 11), P from AM eq. (3).  Computed once per record so the
    update looks the coefficient up instead of paying two dependent divisions per round.  A division
    by zero (gamma = 0, where only the ``played == yhat`` entries are ever used) gives inf, which the
    update reports as non-finite if a round ever needs it.
    """
    c = np.empty(4)
    for f in range(2):
        h = (f - rho0a) / kappa_a
        c[2 * f] = h / play_probability(1, 0, gamma, K)
        c[2 * f + 1] = h / play_probability(0, 0, gamma, K)
    return c


@njit(cache=True, nogil=True, inline="always")
def update_exp_h(state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback):
    """AM eq. (5): row played += x h(f)/P(played), row yhat -= x (Banditron when rho0 = 0, kappa = 1).

    Each ``w + c x_j`` is rounded once (a fused multiply-add); False (nothing written) when c is not finite.
    """
    c = state.coef[2 * feedback + (played == yhat)]
    if not np.isfinite(c):
        return False
    add_sub_columns(Wt, idx, val, lo, hi, played, c, yhat)
    return True


class ExpHState(NamedTuple):
    """Record of the AM eq. (3)/(5) learners: exploration rate and the step table of :func:`exp_h_coefficients`."""

    gamma: float
    coef: np.ndarray
    constants = ("coef",)  # read only; with gamma = 0 its entries for played != yhat are inf (never used)
    act = explore_act
    probs = explore_probs
    update = update_exp_h


def exp_h_record(gamma: float, rho0: float, kappa: float, n_classes: int) -> ExpHState:
    return ExpHState(float(gamma), exp_h_coefficients(float(gamma), float(rho0), float(kappa), int(n_classes)))


class RCNBF(ExploringBanditLearner):
    """RCNBF, AM Algorithm 1 with the update of AM eq. (5).

    As Banditron, but the bit enters through the unbiased estimate
    h(f_rho) = (f_rho - rho0) / kappa, kappa = 1 - rho0 - rho1 (the paper's beta; AM eq. (4); written in
    the simplified form of docs/math.md, item 11, identical to the paper's
    ((1 - rho_{f'}) f - rho_f f') / kappa): row y~ gets + x h / P(y~) and row yhat gets - x
    (when y~ = yhat both apply).  Lemma 2: E[H] = the Perceptron update U.
    Erratum E14 (docs/math.md, errata): only in the proof of Theorem 4; the update is as printed.

    Feedback laws: the flip correction assumes class-conditional flips with known constant rates
    (:class:`nolo.noise.FlipChannel` with this learner's ``rho0``/``rho1``) and is unbiased only there;
    under :class:`nolo.noise.FlipMatrix` or :class:`nolo.noise.ContextFlips` it is biased, and
    ``run_stream``/``ClassificationBandit.run`` warn (:class:`nolo.exceptions.FeedbackLawWarning`).

    Parameters
    ----------
    n_classes : int >= 2
        Number of labels K.
    gamma : float in [0, 1) or {"cor4.1", "cor4.2", "cor4.3"}
        Exploration rate of AM eq. (3); the paper's domain is (0, 0.5).  A corollary name takes
        gamma from AM Corollaries 4.1-4.3 with kappa = 1 - rho0 - rho1 (needs ``horizon``).
    rho0, rho1 : float
        The *known* flip rates of the channel, rho0 = P(feedback 1 | truth 0),
        rho1 = P(feedback 0 | truth 1); rho0 + rho1 >= 1 is rejected.
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
    >>> from nolo.learners.bandit import RCNBF
    >>> m = RCNBF(n_classes=2, gamma=0.5, rho0=0.2, rho1=0.3, seed=0)
    >>> m.learn(np.array([1.0, 1.0]), 1, 1).W_  # yhat = 0, P(1) = 1/4, h(1) = (1 - 0.2)/0.5 = 1.6: row 1 += 6.4 x
    array([[-1. , -1. ],
           [ 6.4,  6.4]])
    """

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

    def _kappa_for_schedule(self) -> float:
        return 1.0 - float(self.rho0) - float(self.rho1)

    def _state_record(self) -> ExpHState:
        r0, r1 = float(self.rho0), float(self.rho1)
        return exp_h_record(self.gamma_, r0, 1.0 - r0 - r1, self.W_.shape[0])
