"""PooledNoisyKernelLearner: CSS10 Algorithm 1 on every reading of an item."""

import numpy as np
import pytest
from sklearn.metrics import r2_score

from nolo.exceptions import CopiesExhausted, ParameterError
from nolo.kernels import LinearKernel, PolynomialKernel
from nolo.learners.kernel import NoisyKernelLearner, PooledNoisyKernelLearner
from nolo.noise import GaussianNoise, Oracle, PoolOracle


def test_first_round_is_the_hand_worked_update():
    """w_0 = 0: all readings go to the stored estimate; with N = 1 the update is -eta l'(0 - y) (p^2/(p-1)) mean(R)."""
    R = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
    y, eta, p = 0.8, 0.1, 2.0
    for seed in range(12):  # some seeds draw N = 1 (an update), others N != 1 (beta_N = 0: no update)
        L = PooledNoisyKernelLearner(LinearKernel(), p=p, step="constant", eta=eta, seed=seed)
        L.learn(PoolOracle(R), y)
        xp = np.array([0.3, -0.7])
        expected = -eta * 2.0 * (0.0 - y) * (p**2 / (p - 1)) * float(R.mean(axis=0) @ xp)
        got = float(L.predict(xp[None])[0])
        assert got == pytest.approx(expected, rel=1e-12) or (got == 0.0 and L.support_size_ == 0)
        assert L.queries_ == 3 and L.t_ == 1


def _r2(cls, m, sd, seed, n=400, passes=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) / np.sqrt(3)
    w = np.array([1.0, -1.0, 0.5])
    y = X @ w
    R = X[:, None, :] + sd * rng.normal(size=(n, m, 3))
    L = cls(LinearKernel(), p=2.0, step="sqrt", eta=0.05, seed=seed)
    for _ in range(passes):
        for i in rng.permutation(n):
            L.learn(PoolOracle(R[i], on_exhausted="drop"), y[i])
    Xt = rng.normal(size=(1000, 3)) / np.sqrt(3)
    return r2_score(Xt @ w, L.predict(Xt))


def test_all_readings_learn_better_than_the_random_copies():
    """Linear kernel, 4 readings of sd 1 (noise-to-signal 3): the pooled learner clears 0.8 R^2 and beats Algorithm 1."""
    pooled = np.mean([_r2(PooledNoisyKernelLearner, 4, 1.0, s) for s in range(3)])
    paper = np.mean([_r2(NoisyKernelLearner, 4, 1.0, s) for s in range(3)])
    assert pooled > 0.8
    assert pooled > paper + 0.05


def test_unbounded_oracle_gives_pool_size_copies_and_extra_when_needed():
    rng = np.random.default_rng(0)
    L = PooledNoisyKernelLearner(PolynomialKernel(2), p=2.0, pool_size=1, seed=0)
    for t in range(50):
        L.learn(Oracle(rng.normal(size=2), GaussianNoise(0.1), rng), 0.5)
    assert L.t_ == 50 and L.shortfalls_ == 0
    assert L.queries_ >= 50  # extra copies were asked for when N + N' > 1


def test_a_short_pool_drops_the_round_or_raises():
    R = np.ones((1, 2))
    L = PooledNoisyKernelLearner(PolynomialKernel(2), p=1.5, seed=3)
    for _ in range(40):
        L.learn(PoolOracle(R, on_exhausted="drop"), 1.0)
    assert L.shortfalls_ > 0 and L.t_ == 40
    L2 = PooledNoisyKernelLearner(PolynomialKernel(2), p=1.5, seed=3)
    with pytest.raises(CopiesExhausted):
        for _ in range(40):
            L2.learn(PoolOracle(R, on_exhausted="raise"), 1.0)


def test_bad_parameters_and_inputs():
    with pytest.raises(ParameterError, match="dot-product kernel"):
        PooledNoisyKernelLearner("gaussian")._validate_params()
    with pytest.raises(ParameterError, match="polynomial of degree <= 1"):
        PooledNoisyKernelLearner(loss="smoothed_absolute")._validate_params()
    with pytest.raises(ParameterError, match="pool_size"):
        PooledNoisyKernelLearner(pool_size=0)._validate_params()
    L = PooledNoisyKernelLearner(LinearKernel(), seed=0)
    L.learn(PoolOracle(np.ones((3, 2))), 1.0)
    before = (L.t_, L.queries_, L.rng_.bit_generator.state)
    with pytest.raises(ParameterError):
        L.learn(PoolOracle(np.ones((3, 2))), float("nan"))
    with pytest.raises(ParameterError):
        L.learn(PoolOracle(np.ones((3, 4))), 1.0)
    assert (L.t_, L.queries_, L.rng_.bit_generator.state) == before


def test_all_degrees_first_round_is_deterministic_and_exact():
    """degrees='all', linear kernel, w_0 = 0: w_1 = -eta l'(0 - y) mean(R), whatever the seed."""
    R = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
    xp = np.array([0.3, -0.7])
    for seed in range(3):
        L = PooledNoisyKernelLearner(LinearKernel(), degrees="all", step="constant", eta=0.1, seed=seed)
        L.learn(PoolOracle(R), 0.8)
        assert float(L.predict(xp[None])[0]) == pytest.approx(-0.1 * 2.0 * (0.0 - 0.8) * float(R.mean(axis=0) @ xp))


def test_all_degrees_needs_a_finite_degree_kernel_and_falls_back_on_small_pools():
    from nolo.kernels import ExponentialKernel

    with pytest.raises(ParameterError, match="finite degree"):
        PooledNoisyKernelLearner(ExponentialKernel(), degrees="all")._validate_params()
    with pytest.raises(ParameterError, match="degrees"):
        PooledNoisyKernelLearner(degrees="some")._validate_params()
    L = PooledNoisyKernelLearner(PolynomialKernel(2), degrees="all", seed=0)
    rng = np.random.default_rng(0)
    for _ in range(30):  # 3 readings < 2 + 2 once w has degree-2 support: random-degree rounds
        L.learn(PoolOracle(rng.normal(size=(3, 2)), on_exhausted="drop"), 1.0)
    assert L.t_ == 30 and L.queries_ >= 90


def test_all_degrees_learns_a_polynomial_target_better_than_random_degrees():
    def r2(degrees, seed):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(400, 2)) / np.sqrt(2)
        f = lambda Z: Z[:, 0] - 0.5 * Z[:, 1] + Z[:, 0] * Z[:, 1]  # noqa: E731
        R = X[:, None, :] + 0.5 * rng.normal(size=(400, 6, 2))
        L = PooledNoisyKernelLearner(PolynomialKernel(2), degrees=degrees, B_w=10.0, eta=0.05, seed=seed)
        for _ in range(3):
            for i in rng.permutation(400):
                L.learn(PoolOracle(R[i]), f(X[i : i + 1])[0])
        Xt = rng.normal(size=(1000, 2)) / np.sqrt(2)
        return r2_score(f(Xt), L.predict(Xt))

    all_deg = np.mean([r2("all", s) for s in range(2)])
    random_deg = np.mean([r2("random", s) for s in range(2)])
    assert all_deg > 0.8 and all_deg > random_deg + 0.05
