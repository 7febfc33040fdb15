"""AM Lemma 1 (E[h(f_rho) | f] = f) and Lemma 2 (E[H] = U) by exact enumeration and by Monte Carlo."""

import numpy as np
import pytest

from nolo.learners.bandit import RCNBF, unbiased_feedback
from nolo.learners.bandit import _explore
from nolo.noise import FlipChannel
from nolo.noise.feedback_laws import flip_rates

RATES = [(0.15, 0.15), (0.2, 0.4), (0.4, 0.2), (0.4, 0.4)]


@pytest.mark.parametrize("rho0,rho1", RATES)
def test_lemma1_exact(rho0, rho1):
    h1, h0 = unbiased_feedback(1, rho0, rho1), unbiased_feedback(0, rho0, rho1)
    assert (1 - rho1) * h1 + rho1 * h0 == pytest.approx(1.0, abs=1e-14)  # truth 1
    assert rho0 * h1 + (1 - rho0) * h0 == pytest.approx(0.0, abs=1e-14)  # truth 0
    # the paper's printed form ((1 - rho_{f'}) f - rho_f f') / beta (AM eq. 4)
    rho = {0: rho0, 1: rho1}
    for f in (0, 1):
        printed = ((1 - rho[1 - f]) * f - rho[f] * (1 - f)) / (1 - rho0 - rho1)
        assert unbiased_feedback(f, rho0, rho1) == pytest.approx(printed, abs=1e-14)


@pytest.mark.parametrize("rho0,rho1", RATES)
def test_lemma1_monte_carlo_through_the_channel(rho0, rho1):
    rng = np.random.default_rng(11)
    n = 200_000
    for truth in (0, 1):
        u = rng.random(n)
        fb = np.array([flip_rates(truth, ui, rho0, rho1) for ui in u[:2000]])  # the compiled channel ...
        np.testing.assert_array_equal(fb, np.where(truth == 1, u[:2000] >= rho1, u[:2000] < rho0))  # ... is this rule
        chan = FlipChannel(rho0, rho1)
        g1, g2 = np.random.default_rng(truth), np.random.default_rng(truth)
        assert all(chan.transmit(truth, g1) == flip_rates(truth, g2.random(), rho0, rho1) for _ in range(2000))
        fb = np.where(truth == 1, u >= rho1, u < rho0).astype(float)
        h = unbiased_feedback(fb, rho0, rho1)
        z = (h.mean() - truth) / (h.std(ddof=1) / np.sqrt(n))
        assert abs(z) <= 4, (truth, h.mean(), z)


def _setup(K=4, d=3, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((K, d))
    x = rng.standard_normal(d)
    return W, x


def _H(W, x, played, fb, gamma, rho0, rho1):
    m = RCNBF(n_classes=W.shape[0], gamma=gamma, rho0=rho0, rho1=rho1).initialize(W.shape[1])
    m.W_[:] = W
    m.learn(x, played, fb)
    return m.W_ - W


CASES = [(0.1, 0.15, 0.15), (0.3, 0.2, 0.4), (0.05, 0.4, 0.4)]


@pytest.mark.parametrize("gamma,rho0,rho1", CASES)
@pytest.mark.parametrize("greedy_right", [True, False])
def test_lemma2_exact_enumeration(gamma, rho0, rho1, greedy_right):
    W, x = _setup()
    K = W.shape[0]
    yhat = int(np.argmax(W @ x))
    y = yhat if greedy_right else (yhat + 1) % K
    EH = np.zeros_like(W)
    for r in range(K):
        P = (1 - gamma) * (r == yhat) + gamma / K
        f = int(r == y)
        p1 = (1 - rho1) if f else rho0  # P(feedback 1 | played r)
        EH += P * (p1 * _H(W, x, r, 1, gamma, rho0, rho1) + (1 - p1) * _H(W, x, r, 0, gamma, rho0, rho1))
    U = np.zeros_like(W)
    U[y] += x
    U[yhat] -= x
    np.testing.assert_allclose(EH, U, atol=1e-12)


@pytest.mark.parametrize("gamma,rho0,rho1", CASES[:2])
def test_lemma2_monte_carlo_with_act_and_channel(gamma, rho0, rho1):
    W, x = _setup(seed=1)
    K = W.shape[0]
    yhat = int(np.argmax(W @ x))
    y = (yhat + 1) % K
    m = RCNBF(n_classes=K, gamma=gamma, rho0=rho0, rho1=rho1, seed=5).initialize(W.shape[1])
    m.W_[:] = W
    rng = np.random.default_rng(6)
    n = 40_000
    # H depends on (played, feedback) only; tabulate H per outcome, then sample outcomes with act() and the channel
    table = {(r, f): _H(W, x, r, f, gamma, rho0, rho1) for r in range(K) for f in (0, 1)}
    samples = np.empty((n,) + W.shape)
    for i in range(n):
        r = m.act(x)
        f = int(flip_rates(int(r == y), rng.random(), rho0, rho1))
        samples[i] = table[(r, f)]
    np.testing.assert_array_equal(m.W_, W)  # act() never changes W
    U = np.zeros_like(W)
    U[y] += x
    U[yhat] -= x
    se = samples.std(axis=0, ddof=1) / np.sqrt(n)
    z = (samples.mean(axis=0) - U) / np.where(se > 0, se, 1.0)
    assert np.max(np.abs(z)) <= 4, z
    # negative control: the Banditron update fed the noisy bit is biased, detectably
    bt = {(r, f): (lambda M: M)(np.outer(np.eye(K)[r], x) * f / ((1 - gamma) * (r == yhat) + gamma / K)
                                 - np.outer(np.eye(K)[yhat], x)) for r in range(K) for f in (0, 1)}
    rng2 = np.random.default_rng(7)
    m2 = RCNBF(n_classes=K, gamma=gamma, seed=5).initialize(W.shape[1])
    m2.W_[:] = W
    s2 = np.empty_like(samples)
    for i in range(n):
        r = m2.act(x)
        s2[i] = bt[(r, int(flip_rates(int(r == y), rng2.random(), rho0, rho1)))]
    z2 = (s2.mean(axis=0) - U) / (s2.std(axis=0, ddof=1) / np.sqrt(n) + 1e-300)
    assert np.max(np.abs(z2)) > 6


def test_draw_label_distribution_is_eq3():
    # one uniform per decision: exact probabilities of AM eq. (3) over a fine grid of u
    K, gamma, yhat = 5, 0.3, 2
    u = (np.arange(1_000_000) + 0.5) / 1_000_000
    labels = np.array([_explore.draw_label(ui, yhat, gamma, K) for ui in u[::10]])
    freq = np.bincount(labels, minlength=K) / labels.size
    want = np.full(K, gamma / K)
    want[yhat] += 1 - gamma
    np.testing.assert_allclose(freq, want, atol=2e-4)
