"""The all-copies option of the CSS11 linear learners (issue 15 item 1): Setting 1 with the U-statistic over
k copies, Setting 2 with the mean of k copies and Sigma/k; the papers' defaults unchanged."""

import numpy as np
import pytest

from nolo.checks import state_dump
from nolo.estimators.replicates import mean_cross, pairwise_outer_matvec
from nolo.exceptions import ParameterError
from nolo.learners.linear import KnownCovarianceLinearRegression, TwoCopyLinearRegression
from nolo.noise import GaussianNoise, Oracle, PoolOracle


def _stream(T=3000, m=8, d=3, var=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d)) / np.sqrt(d)
    w = np.array([0.6, -0.4, 0.3])[:d]
    y = X @ w
    C = X[:, None, :] + np.sqrt(var) * rng.normal(size=(T, m, d))
    return X, y, C, w


def test_defaults_are_the_papers_bits():
    _, y, C, _ = _stream(T=200)
    a, b = TwoCopyLinearRegression(step=0.02), TwoCopyLinearRegression(step=0.02, copies=2)
    a.learn_stream(C, y)
    b.learn_stream(C[:, :2], y)
    assert np.array_equal(a.w_, b.w_) and np.array_equal(a.average_, b.average_)
    a, b = KnownCovarianceLinearRegression(noise_cov=1.0, step=0.02), KnownCovarianceLinearRegression(noise_cov=1.0, step=0.02, copies=1)
    a.learn_stream(C, y)
    b.learn_stream(C[:, :1], y)
    assert np.array_equal(a.w_, b.w_)


def test_setting1_ustat_step_by_hand():
    rng = np.random.default_rng(1)
    C = rng.normal(size=(2, 3, 2))
    y = np.array([0.7, -0.2])
    eta = 0.1
    m = TwoCopyLinearRegression(radius=100.0, step=eta, copies=3)
    m.learn_stream(C, y)
    w1 = -eta * 2 * (pairwise_outer_matvec(C[0], np.zeros(2)) - mean_cross(C[0], y[0]))
    w2 = w1 - eta * 2 * (pairwise_outer_matvec(C[1], w1) - mean_cross(C[1], y[1]))
    assert np.allclose(m.w_, w2, rtol=1e-14, atol=1e-15)
    assert np.allclose(m.average_, (0 + w1) / 2, atol=1e-15)


def test_setting2_mean_step_by_hand():
    rng = np.random.default_rng(2)
    C = rng.normal(size=(2, 4, 2))
    y = np.array([0.7, -0.2])
    eta, S = 0.1, np.array([[0.5, 0.1], [0.1, 0.3]])
    m = KnownCovarianceLinearRegression(noise_cov=S, radius=100.0, step=eta, copies=4)
    m.learn_stream(C, y)
    w = np.zeros(2)
    for t in range(2):
        xb = C[t].mean(axis=0)
        w = w - eta * (2 * (xb @ w - y[t]) * xb - 2 * (S / 4) @ w)
    assert np.allclose(m.w_, w, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("make", [
    lambda: TwoCopyLinearRegression(step=0.05, copies="all", seed=0),
    lambda: KnownCovarianceLinearRegression(noise_cov=[0.5, 0.4, 0.3], step=0.05, copies="all", seed=0),
    lambda: KnownCovarianceLinearRegression(noise_cov=np.array([[0.5, 0.1, 0], [0.1, 0.4, 0], [0, 0, 0.3]]),
                                            step=0.05, copies="all", seed=0),
])
def test_all_copies_from_pools_equals_the_stream(make):
    _, y, C, _ = _stream(T=40, m=5)
    a, b = make(), make()
    a.learn_stream(C, y)
    for t in range(40):
        pool = PoolOracle(C[t])
        b.learn(pool, y[t])
        assert pool.remaining == 0
    assert state_dump(a) == state_dump(b)


def test_all_needs_a_finite_pool_and_int_copies_a_long_enough_stream():
    m = TwoCopyLinearRegression(step=0.05, copies="all")
    m.learn(PoolOracle(np.ones((3, 2))), 1.0)
    before = state_dump(m)
    with pytest.raises(ParameterError, match="copies"):
        m.learn(Oracle(np.ones(2), GaussianNoise(std=0.1), 0), 1.0)
    assert state_dump(m) == before
    k = KnownCovarianceLinearRegression(noise_cov=0.1, step=0.05, copies=4)
    with pytest.raises(ParameterError, match="copies"):
        k.learn_stream(np.ones((5, 3, 2)), np.ones(5))
    with pytest.raises(ParameterError, match="copies"):
        TwoCopyLinearRegression(step=0.1, copies=1).initialize(2)
    with pytest.raises(ParameterError, match="copies"):
        KnownCovarianceLinearRegression(step=0.1, copies="every").initialize(2)


@pytest.mark.parametrize("setting", [1, 2])
def test_all_copies_learn_better(setting):
    """Same data, same step: using all 8 copies gives a closer online-to-batch average than the paper's 2 (1)."""
    X, y, C, w = _stream(T=3000, m=8, var=1.0, seed=4)
    errs = {}
    for copies in ("paper", "all"):
        if setting == 1:
            m = TwoCopyLinearRegression(radius=2.0, step=0.01, copies=2 if copies == "paper" else "all")
        else:
            m = KnownCovarianceLinearRegression(noise_cov=1.0, radius=2.0, step=0.01, copies=1 if copies == "paper" else "all")
        m.learn_stream(C, y)
        errs[copies] = np.linalg.norm(m.average_ - w)
    assert errs["all"] < (0.5 if setting == 1 else 0.75) * errs["paper"]


@pytest.mark.parametrize("k", [2, 3, 6])
def test_ustat_second_moment_at_most_lemma1(k):
    """Rao-Blackwell: the U-statistic gradient's E||g||^2 is <= Lemma 1's (so G and the theory step stay valid)."""
    rng = np.random.default_rng(20 + k)
    d, n = 4, 100_000
    x, w, y = rng.normal(size=d) / 2, rng.normal(size=d) / 2, 0.7
    C = x + rng.standard_t(5, size=(n, k, d))  # heavy-ish tails
    lemma1 = 2 * ((C[:, 0] @ w) - y)[:, None] * C[:, 1]
    ustat = 2 * (pairwise_outer_matvec(C, w) - mean_cross(C, np.full(n, y)))
    m1, mu = (lemma1 ** 2).sum(axis=1), (ustat ** 2).sum(axis=1)
    assert mu.mean() < m1.mean()
    clean = 2 * (x @ w - y) * x
    assert np.all(np.abs(ustat.mean(axis=0) - clean) < 4 * ustat.std(axis=0) / np.sqrt(n))
