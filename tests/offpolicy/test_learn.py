"""Learning from another policy's log: which learners may, importance weighting by replication, and the warm start."""

import numpy as np
import pytest

from nolo.exceptions import ParameterError
from nolo.learners.bandit import (BPA, RCNBF, SOBA, AutoCB, Banditron, FastCB, KernelLabelTS, LinUCB, Perceptron,
                                  SquareCB, default_learner, run_stream)
from nolo.offpolicy.learn import check_learns_off_policy, importance_counts, learn_log


@pytest.mark.parametrize("cls", [FastCB, SquareCB, LinUCB, AutoCB, KernelLabelTS])
def test_regression_learners_with_known_rates_learn_off_policy(cls):
    check_learns_off_policy(cls(n_classes=3, rho0=0.1, rho1=0.1))


@pytest.mark.parametrize("make", [lambda: Banditron(n_classes=3), lambda: Perceptron(n_classes=3),
                                  lambda: BPA(n_classes=3), lambda: SOBA(n_classes=3), lambda: RCNBF(n_classes=3),
                                  lambda: default_learner(3)])
def test_learners_whose_update_uses_their_own_probabilities_are_refused(make):
    learner = make()
    with pytest.raises(ParameterError, match="cannot learn soundly from another policy's log"):
        learn_log(learner, np.ones((2, 3)), [0, 1], [1, 0])
    assert not learner.is_initialized  # refused before any update


def test_importance_counts_are_unbiased_for_the_clipped_weights():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.01, 1.0, size=200)
    draws = np.stack([importance_counts(p, 4, rng=s) for s in range(2000)])
    w = np.minimum(1.0 / (4 * p), 50.0)
    se = np.sqrt(np.maximum(draws.var(axis=0), 1e-12) / draws.shape[0])
    assert np.all(np.abs(draws.mean(axis=0) - w) < 5 * se + 1e-9)
    # the integer part is certain, the fraction a coin: counts are floor(w) or floor(w) + 1
    assert np.all((draws >= np.floor(w)) & (draws <= np.floor(w) + 1))
    with pytest.raises(ParameterError, match="propensity must be"):
        importance_counts([0.5, 0.0], 4)


def test_a_learned_log_warm_starts_online_learning():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    rng = np.random.default_rng(3)
    n = 8_000
    idx = rng.integers(len(y), size=n)
    played = rng.integers(10, size=n)
    u = rng.random(n)
    bit = np.where(played == y[idx], u >= 0.2, u < 0.1).astype(int)
    warm = learn_log(FastCB(n_classes=10, rho0=0.1, rho1=0.2, seed=1), X[idx], played, bit, np.full(n, 0.1),
                     weighting="importance", seed=0)
    assert warm.t_ == n  # uniform logger: every weight is 1
    cold = FastCB(n_classes=10, rho0=0.1, rho1=0.2, seed=1)
    # continue online on the same kind of stream: the warm learner errs less over the next 2,000 rounds
    errs = [float(run_stream(m, X, y, 2_000, 0.1, 0.2, seed=9).error_rate[-1]) for m in (warm, cold)]
    assert errs[0] < errs[1] - 0.1, errs
