"""CSS11 Algorithm 2 (surrogate-kernel OGD) and the kernel OGD baseline: exact rounds, incremental norm,
projection, rotation for a full Sigma, stream = per-round, validation, persistence, learning bar."""

import math

import numpy as np
import pytest

from nolo import ParameterError
from nolo.kernels.radial import RadialKernelApproximation
from nolo.kernels.surrogate import GaussianSurrogateKernel
from nolo.papers.css11._common import example_covariance
from nolo.learners.base import Learner
from nolo.learners.kernel.gaussian_noise import GaussianNoiseKernelRegression, KernelOGDRegression
from nolo.noise import ReplayOracle


def _khat(a, b, s2=2.0, v=0.25):
    return math.sqrt(s2 / (s2 - 2 * v)) * math.exp(-((a - b) ** 2) / (s2 - 2 * v))


def test_two_hand_worked_rounds_then_projection():
    k = GaussianSurrogateKernel(width=2.0, noise_cov=0.25)
    m = GaussianNoiseKernelRegression(kernel=k, W=10.0, step=0.1)
    m.learn(ReplayOracle([[0.0], [0.5]]), 1.0)
    a1 = -0.1 * 2 * (0.0 - 1.0)
    m.learn(ReplayOracle([[1.0], [1.5]]), 0.0)
    a2 = -0.1 * 2 * (a1 * _khat(0.0, 1.5) - 0.0)  # gradient uses the SECOND copy 1.5
    np.testing.assert_allclose(m.alpha_, [a1, a2], rtol=1e-14)
    np.testing.assert_allclose(m.support_[:, 0], [0.0, 1.0])  # the FIRST copies are stored
    r = a1 * a1 * _khat(0, 0) + 2 * a1 * a2 * _khat(0, 1) + a2 * a2 * _khat(1, 1)
    assert m.norm2_ == pytest.approx(r, rel=1e-13)
    # predictions use the ORIGINAL kernel on the stored noisy points
    x = np.array([[0.3]])
    assert m.predict(x)[0] == pytest.approx(a1 * math.exp(-0.09 / 2) + a2 * math.exp(-0.49 / 2), rel=1e-13)
    # projection: W^2 < r_t rescales every alpha by W / sqrt(r_t)
    p = GaussianNoiseKernelRegression(kernel=k, W=0.05, step=0.1)
    p.learn(ReplayOracle([[0.0], [0.5]]), 1.0)
    assert p.alpha_[0] == pytest.approx(a1 * 0.05 / math.sqrt(a1 * a1 * _khat(0, 0)), rel=1e-13)
    assert p.norm2_ == pytest.approx(0.05**2, rel=1e-13)


def _data(T=120, d=3, var=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.5, 1.5, (T, d))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]
    C = X[:, None, :] + math.sqrt(var) * rng.standard_normal((T, 2, d))
    return X, y, C, y + 0.1 * rng.standard_normal(T)


@pytest.mark.parametrize("kernel", [GaussianSurrogateKernel(width=2.0, noise_cov=[0.2, 0.3, 0.4]),
                                    RadialKernelApproximation(c=1.0, noise_variance=0.3)])
def test_incremental_norm_stream_equals_per_round(kernel):
    X, y, C, yn = _data()
    a = GaussianNoiseKernelRegression(kernel=kernel, W=2.0, step=0.05)
    for t in range(60):
        a.learn(ReplayOracle(C[t]), yn[t])
    a.learn_stream(C[60:], yn[60:])
    b = GaussianNoiseKernelRegression(kernel=kernel, W=2.0, step=0.05)
    pred = b.learn_stream(C, yn, clean=X)
    np.testing.assert_allclose(a.alpha_, b.alpha_, rtol=1e-10, atol=1e-14)
    assert a.norm2_ == pytest.approx(b.surrogate_norm2(), rel=1e-9)
    assert b.norm2_ <= 4.0 * (1 + 1e-12)
    # pred[t] is the played predictor w_t at x_t (before round t's update)
    c = GaussianNoiseKernelRegression(kernel=kernel, W=2.0, step=0.05)
    c.learn_stream(C[:50], yn[:50])
    assert pred[50] == pytest.approx(c.predict(X[50:51])[0], rel=1e-10)


def test_full_sigma_equals_rotated_diagonal_run():
    Sigma = example_covariance(3, [0.05, 0.2, 0.45], seed=3)
    X, y, C, yn = _data(var=0.0)
    rng = np.random.default_rng(1)
    lam, Q = np.linalg.eigh(Sigma)
    C = C + rng.standard_normal(C.shape) @ (Q * np.sqrt(lam)).T
    full = GaussianNoiseKernelRegression(kernel=GaussianSurrogateKernel(width=2.0, noise_cov=Sigma), W=3.0, step=0.05)
    full.learn_stream(C, yn)
    diag = GaussianNoiseKernelRegression(kernel=GaussianSurrogateKernel(width=2.0, noise_cov=lam), W=3.0, step=0.05)
    diag.learn_stream(C @ Q, yn)
    np.testing.assert_allclose(full.alpha_, diag.alpha_, rtol=1e-9)
    np.testing.assert_allclose(full.predict(X[:20]), diag.predict(X[:20] @ Q), rtol=1e-9)


def test_validation_and_state_unchanged():
    X, y, C, yn = _data(T=20)
    m = GaussianNoiseKernelRegression(kernel=GaussianSurrogateKernel(width=2.0, noise_cov=0.3), W=2.0, step=0.05)
    m.learn_stream(C[:10], yn[:10])
    alpha, t = m.alpha_.copy(), m.t_
    with pytest.raises(ParameterError, match="2 copies"):
        m.learn_stream(C[10:, :1], yn[10:])
    with pytest.raises(ParameterError, match="features"):
        m.learn_stream(np.ones((2, 2, 4)), np.ones(2))
    with pytest.raises(ParameterError, match="y"):
        m.learn(ReplayOracle(C[10]), float("inf"))
    with pytest.raises(ValueError, match="2 \\* max"):
        m.set_params(kernel=GaussianSurrogateKernel(width=0.5, noise_cov=0.3))
    np.testing.assert_array_equal(m.alpha_, alpha)
    assert m.t_ == t
    with pytest.raises(ParameterError, match="surrogate kernel pair"):
        GaussianNoiseKernelRegression(kernel="rbf", step=0.1).learn(ReplayOracle(C[0]), 0.0)
    with pytest.raises(ParameterError, match="y_bound and horizon"):
        GaussianNoiseKernelRegression(kernel=GaussianSurrogateKernel(width=2.0)).learn(ReplayOracle(C[0]), 0.0)
    with pytest.raises(ParameterError, match="c must be"):
        GaussianNoiseKernelRegression(kernel=RadialKernelApproximation(c=3.0, noise_variance=0.3), step=0.1).learn(
            ReplayOracle(C[0]), 0.0)


def test_theory_step_uses_corrected_constant():
    k = GaussianSurrogateKernel(width=2.0, noise_cov=0.25)
    m = GaussianNoiseKernelRegression(kernel=k, W=3.0, y_bound=1.0, horizon=100)
    R2 = k.r_squared(1)
    G = 8 * R2 * (9 * R2 + 1)
    assert m.step_rule(1)(1) == pytest.approx(3.0 / math.sqrt(G * 100))
    assert m.regret_bound(1) == pytest.approx(3.0 * math.sqrt(G * 100))


def test_save_load_resume(tmp_path):
    X, y, C, yn = _data(T=80)
    k = RadialKernelApproximation(c=1.0, noise_variance=0.3)
    a = GaussianNoiseKernelRegression(kernel=k, W=2.0, step=0.05).initialize(3)
    b = GaussianNoiseKernelRegression(kernel=k, W=2.0, step=0.05)
    a.learn_stream(C, yn)
    b.learn_stream(C[:30], yn[:30])
    c = Learner.load(b.save(tmp_path / "alg2"))
    c.learn_stream(C[30:], yn[30:])
    np.testing.assert_array_equal(a.predict(X), c.predict(X))


def test_baseline_kernel_ogd_hand_round_and_original_kernel_only():
    k = GaussianSurrogateKernel(width=2.0, noise_cov=0.4)  # noise ignored by the baseline
    m = KernelOGDRegression(kernel=k, W=10.0, step=0.1)
    m.learn([0.0], 1.0)
    m.learn([1.0], 0.0)
    a1 = 0.2
    a2 = -0.1 * 2 * (a1 * math.exp(-0.5))
    np.testing.assert_allclose(m.alpha_, [a1, a2], rtol=1e-14)
    assert m.norm2_ == pytest.approx(a1**2 + 2 * a1 * a2 * math.exp(-0.5) + a2**2, rel=1e-13)


def test_learning_bar_algorithm2_beats_naive_under_heavy_noise():
    X, y, C, yn = _data(T=400, var=0.6, seed=4)
    rng = np.random.default_rng(5)
    Xt = rng.uniform(-1.5, 1.5, (400, 3))
    yt = np.sin(2 * Xt[:, 0]) + Xt[:, 1] * Xt[:, 2]
    alg2 = GaussianNoiseKernelRegression(kernel=GaussianSurrogateKernel(width=2.0, noise_cov=0.6), W=10.0, step=0.03)
    alg2.learn_stream(C, yn)
    naive = KernelOGDRegression(kernel=GaussianSurrogateKernel(width=2.0), W=10.0, step=0.03)
    naive.learn_stream(C[:, 0], yn)
    mse = lambda m: float(np.mean((m.predict(Xt) - yt) ** 2))  # noqa: E731
    assert mse(alg2) < 0.9 * mse(naive)
    assert mse(alg2) < np.var(yt)


def test_per_round_with_a_real_gaussian_oracle_full_covariance():
    from nolo.noise import GaussianNoise, Oracle

    Sigma = example_covariance(3, [0.05, 0.2, 0.45], seed=3)
    noise = GaussianNoise(cov=Sigma)
    rng = np.random.default_rng(0)
    m = GaussianNoiseKernelRegression(kernel=GaussianSurrogateKernel(width=2.0, noise_cov=Sigma), W=3.0, step=0.05)
    for t in range(30):
        o = Oracle(rng.uniform(-1, 1, 3), noise, rng, round=t)
        m.learn(o, 0.5)
        assert o.queries == 2
    assert m.t_ == 30 and m.n_support == 30
    assert m.norm2_ == pytest.approx(m.surrogate_norm2(), rel=1e-9)
