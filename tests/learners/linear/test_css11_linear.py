"""CSS11 linear learners: Settings 1-2 (Algorithm 1) and naive OGD -- exact updates, stream = per-round,
validation leaving state unchanged, persistence, and learning bars."""

import math

import numpy as np
import pytest

from nolo import CopiesExhausted, NumericalError, ParameterError
from nolo.learners.base import Learner
from nolo.learners.linear import (
    KnownCovarianceLinearRegression,
    NaiveOGDRegression,
    TwoCopyLinearRegression,
    setting1_G,
    setting2_G,
)
from nolo.noise import GaussianNoise, Oracle, ReplayOracle
from nolo.learners import ProjectedOGD
from nolo.oco import L2Ball


def test_setting1_hand_worked_rounds_and_projection():
    m = TwoCopyLinearRegression(radius=1.0, step=0.25)
    m.learn(ReplayOracle([[1.0, 0.0], [0.0, 2.0]]), 1.0)
    # w1 = 0: grad = 2(0 - 1)(0, 2) = (0, -4); w2 = (0, 1) (norm 1, no projection)
    np.testing.assert_allclose(m.w_, [0.0, 1.0])
    m.learn(ReplayOracle([[0.0, 1.0], [1.0, 1.0]]), -1.0)
    # grad = 2(1 + 1)(1, 1) = (4, 4); w' = (0, 1) - (1, 1) = (-1, 0), norm 1
    np.testing.assert_allclose(m.w_, [-1.0, 0.0])
    np.testing.assert_allclose(m.average_, [0.0, 0.5])  # mean of the played w1 = 0, w2 = (0, 1)
    m.learn(ReplayOracle([[-1.0, 0.0], [-3.0, 4.0]]), 0.0)
    # grad = 2(1 - 0)(-3, 4); w' = (-1, 0) - 0.25 (-6, 8) = (0.5, -2) -> projected to norm 1
    np.testing.assert_allclose(m.w_, np.array([0.5, -2.0]) / math.hypot(0.5, 2.0))
    assert m.t_ == 3


def test_setting2_hand_worked_round_with_corrected_bias_term():
    m = KnownCovarianceLinearRegression(noise_cov=np.diag([1.0, 2.0]), radius=10.0, step=0.5)
    m.learn(ReplayOracle([[1.0, 0.0]]), 1.0)  # w1 = 0: grad = (-2, 0), w2 = (1, 0)
    m.learn(ReplayOracle([[1.0, 1.0]]), 0.0)  # grad = 2(1)(1, 1) - 2 (1, 0) = (0, 2); w3 = (1, -1)
    np.testing.assert_allclose(m.w_, [1.0, -1.0])
    np.testing.assert_allclose(m.covariance(1), np.diag([1.0, 2.0]))


def _stream(T=300, d=4, seed=0, m=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, d)) / 2
    w = np.linspace(-0.5, 0.5, d)
    y = X @ w
    C = X[:, None, :] + 0.4 * rng.standard_normal((T, m, d))
    return X, y, C, y + 0.1 * rng.standard_normal(T)


def _per_round(learner, C, yn):
    for t in range(C.shape[0]):
        learner.learn(ReplayOracle(C[t]), yn[t])
    return learner


@pytest.mark.parametrize(
    "make",
    [
        lambda d, T: TwoCopyLinearRegression(radius=0.8, step=0.05),
        lambda d, T: NaiveOGDRegression(radius=0.8, step=0.05),
        lambda d, T: KnownCovarianceLinearRegression(noise_cov=0.16, radius=0.8, step=0.05),
        lambda d, T: KnownCovarianceLinearRegression(noise_cov=0.16 * np.eye(d) + 0.02, radius=0.8, step=0.05),
        lambda d, T: KnownCovarianceLinearRegression(
            noise_cov=np.random.default_rng(3).uniform(0.05, 0.3, (T, d)), radius=0.8, step=0.05),
        lambda d, T: KnownCovarianceLinearRegression(noise_cov=lambda t: (0.1 + 0.001 * t) * np.eye(d), radius=0.8,
                                                     step=0.05),
        lambda d, T: KnownCovarianceLinearRegression(noise_cov=GaussianNoise(std=0.4), radius=0.8, step=0.05),
    ],
)
def test_compiled_stream_equals_per_round(make):
    X, y, C, yn = _stream()
    a = _per_round(make(4, 300), C, yn)
    b = make(4, 300)
    b.learn_stream(C[:100], yn[:100])
    pred = b.learn_stream(C[100:], yn[100:], clean=X[100:])
    np.testing.assert_allclose(b.w_, a.w_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.average_, a.average_, rtol=1e-10, atol=1e-12)
    assert b.t_ == a.t_ == 300
    assert pred.shape == (200,) and np.all(np.isfinite(pred))
    assert np.linalg.norm(b.w_) <= 0.8 + 1e-12


def test_naive_on_clean_data_equals_projected_ogd():
    X, y, _, _ = _stream(T=200)
    naive = NaiveOGDRegression(radius=0.5, step=0.05)
    naive.learn_stream(X, y)
    ogd = ProjectedOGD(loss="squared", step=0.05, constraint=L2Ball(0.5))
    ogd.learn_many(X, y)
    np.testing.assert_allclose(naive.w_, ogd.w_, rtol=1e-10)
    np.testing.assert_allclose(naive.average_, ogd.average_, rtol=1e-10)


def test_theory_steps_and_bounds():
    s1 = TwoCopyLinearRegression(radius=2.0, x_bound=1.5, y_bound=0.5, horizon=400)
    G1 = setting1_G(2.0, 1.5, 0.5)
    assert s1.step_rule()(1) == pytest.approx(2.0 / math.sqrt(G1 * 400))
    assert s1.regret_bound() == pytest.approx(2.0 * math.sqrt(G1 * 400))
    s2 = KnownCovarianceLinearRegression(noise_cov=[[0.5, 0.2], [0.2, 0.5]], radius=1.0, x_bound=2.0, y_bound=1.0,
                                         horizon=100).initialize(2)
    assert s2.variance_constant() == pytest.approx(setting2_G(1.0, 2.0, 1.0, 0.7))
    with pytest.raises(ParameterError, match="x_bound, y_bound, horizon"):
        TwoCopyLinearRegression(radius=1.0).learn(ReplayOracle([[1.0], [1.0]]), 0.0)


def test_validation_leaves_state_unchanged():
    X, y, C, yn = _stream(T=20)
    m = KnownCovarianceLinearRegression(noise_cov=0.16, radius=1.0, step=0.1)
    m.learn_stream(C[:10], yn[:10])
    w, avg, t = m.w_.copy(), m.average_.copy(), m.t_
    with pytest.raises(ParameterError, match="y"):
        m.learn(ReplayOracle(C[10]), float("nan"))
    with pytest.raises(ParameterError, match="features"):
        m.learn(ReplayOracle(np.ones((1, 5))), 0.0)
    bad = C[10:].copy()
    bad[3, 0, 1] = np.nan
    with pytest.raises(ParameterError, match="finite"):
        m.learn_stream(bad, yn[10:])
    with pytest.raises(ParameterError, match="shape"):
        m.learn_stream(C[10:], yn[10:15])
    with pytest.raises(CopiesExhausted):
        # one copy where two are needed: the oracle refuses (None) and the learner raises without playing
        TwoCopyLinearRegression(step=0.1).learn(ReplayOracle(C[0][:1], on_exhausted="drop"), 0.0)
    with pytest.raises(ValueError, match="radius"):
        m.set_params(radius=-1.0)
    np.testing.assert_array_equal(m.w_, w)
    np.testing.assert_array_equal(m.average_, avg)
    assert m.t_ == t and m.radius == 1.0


@pytest.mark.parametrize(
    "cov,match",
    [([[1.0, 0.5], [0.0, 1.0]], "symmetric"), ([[1.0, 2.0], [2.0, 1.0]], "positive semidefinite"),
     (np.ones((3, 3)), "shape"), ([-0.1, 0.2], ">= 0")],
)
def test_bad_covariances_rejected(cov, match):
    with pytest.raises(ParameterError, match=match):
        KnownCovarianceLinearRegression(noise_cov=cov, step=0.1).learn(ReplayOracle([[1.0, 1.0]]), 0.0)


def test_covariance_sequence_and_callable_checked_per_round():
    seq = np.stack([np.eye(2), np.array([[1.0, 3.0], [3.0, 1.0]])])
    m = KnownCovarianceLinearRegression(noise_cov=seq, step=0.1)
    with pytest.raises(ParameterError, match=r"noise_cov\[1\]"):
        m.learn(ReplayOracle([[1.0, 1.0]]), 0.0)
    m2 = KnownCovarianceLinearRegression(noise_cov=np.ones((1, 2)), step=0.1)
    m2.learn(ReplayOracle([[1.0, 1.0]]), 0.0)
    with pytest.raises(ParameterError, match="round 2"):
        m2.learn(ReplayOracle([[1.0, 1.0]]), 0.0)
    m3 = KnownCovarianceLinearRegression(noise_cov=lambda t: -np.eye(2), step=0.1)
    with pytest.raises(ParameterError, match="semidefinite"):
        m3.learn(ReplayOracle([[1.0, 1.0]]), 0.0)


def test_divergence_is_a_numerical_error_not_nan():
    m = KnownCovarianceLinearRegression(noise_cov=1.0, radius=1e308, step=1e300)
    with pytest.raises(NumericalError):
        m.learn_stream(np.full((3, 1, 2), 1e10), np.ones(3))
    assert not m.is_initialized or m.t_ == 0


def test_save_load_resume_equals_uninterrupted(tmp_path):
    X, y, C, yn = _stream(T=200)
    a = KnownCovarianceLinearRegression(noise_cov=0.16 * np.eye(4), radius=1.0, step=0.05, seed=3)
    b = KnownCovarianceLinearRegression(noise_cov=0.16 * np.eye(4), radius=1.0, step=0.05, seed=3)
    a.learn_stream(C, yn)
    b.learn_stream(C[:120], yn[:120])
    c = Learner.load(b.save(tmp_path / "s2"))
    c.learn_stream(C[120:], yn[120:])
    np.testing.assert_array_equal(a.predict(X), c.predict(X))
    np.testing.assert_array_equal(a.predict(X, average=True), c.predict(X, average=True))


def test_learning_bar_settings_recover_w_and_naive_is_attenuated():
    rng = np.random.default_rng(42)
    T, d, v = 40_000, 5, 0.2
    w_star = rng.standard_normal(d)
    w_star /= np.linalg.norm(w_star)
    X = math.sqrt(v) * rng.standard_normal((T, d))
    yn = X @ w_star + 0.1 * rng.standard_normal(T)
    C = X[:, None, :] + math.sqrt(v) * rng.standard_normal((T, 2, d))
    err = {}
    for name, m in (("s1", TwoCopyLinearRegression(radius=2.0, step=0.01)),
                    ("s2", KnownCovarianceLinearRegression(noise_cov=v, radius=2.0, step=0.01)),
                    ("naive", NaiveOGDRegression(radius=2.0, step=0.01))):
        m.learn_stream(C, yn)
        err[name] = np.linalg.norm(m.average_ - w_star)
    assert err["s1"] < 0.12 and err["s2"] < 0.12
    assert err["naive"] > 0.35  # shrunk by about a half


def test_per_round_with_a_real_oracle_counts_two_queries():
    rng = np.random.default_rng(0)
    m = TwoCopyLinearRegression(radius=1.0, step=0.1)
    o = Oracle(np.ones(3), GaussianNoise(std=0.1), rng)
    m.learn(o, 1.0)
    assert o.queries == 2 and m.t_ == 1
