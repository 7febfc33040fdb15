"""The flip-corrected baselines BPA-h and SOBA-h: reduction to BPA/SOBA, per-round == stream, validation."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from nolo.exceptions import ParameterError
from nolo.learners.bandit import BPA, SOBA, BPAh, ClassificationBandit, SOBAh
from nolo.learners.bandit import run_stream
from nolo.learners.bandit import run_stream as am_run_stream
from nolo.learners.base import Learner


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def test_bpa_h_without_noise_and_cap_is_bpa_bit_for_bit(digits):
    X, y = digits
    a = run_stream(m1 := BPAh(n_classes=10, gamma=0.1, C=np.inf, seed=2), X, y, 20_000, 0.0, 0.0, seed=3)
    b = am_run_stream(m2 := BPA(n_classes=10, gamma=0.1, seed=2), X, y, 20_000, 0.0, 0.0, seed=3)
    assert np.array_equal(m1.W_, m2.W_)
    assert np.array_equal(a.played_mistakes, b.played_mistakes)


def test_soba_h_without_noise_is_soba_to_rounding(digits):
    X, y = digits
    a = run_stream(m1 := SOBAh(n_classes=10, gamma=0.1, seed=2), X, y, 3_000, 0.0, 0.0, seed=3)
    b = am_run_stream(m2 := SOBA(n_classes=10, gamma=0.1, seed=2), X, y, 3_000, 0.0, 0.0, seed=3)
    assert np.allclose(m1.W_, m2.W_, rtol=1e-9, atol=1e-12) and np.allclose(m1.a_, m2.a_)
    assert np.array_equal(a.played_mistakes, b.played_mistakes)


@pytest.mark.parametrize("cls", [BPAh, SOBAh])
def test_per_round_equals_stream_and_resume(tmp_path, digits, cls):
    X, y = digits
    m1 = cls(n_classes=10, gamma=0.05, rho0=0.2, rho1=0.1, seed=4)
    env = ClassificationBandit(X, y, 0.2, 0.1, seed=5)
    for _ in range(1_000):
        x = env.next()
        p = m1.act(x)
        m1.learn(x, p, env.feedback(p))
    m2 = cls(n_classes=10, gamma=0.05, rho0=0.2, rho1=0.1, seed=4)
    env2 = ClassificationBandit(X, y, 0.2, 0.1, seed=5)
    env2.run(m2, 600)
    m2.save(tmp_path / "m.npz")
    m3 = Learner.load(tmp_path / "m.npz")
    env2.run(m3, 400)
    for k in ("W_", "budget_", "a_"):
        if hasattr(m1, k):
            assert np.array_equal(getattr(m1, k), getattr(m3, k)), k
    assert m1.rng_.bit_generator.state == m3.rng_.bit_generator.state and m1.t_ == m3.t_ == 1_000


@pytest.mark.parametrize("cls", [BPAh, SOBAh])
def test_validation_and_float32(digits, cls):
    X, y = digits
    with pytest.raises(ParameterError, match="rho"):
        cls(n_classes=10, rho0=0.5, rho1=0.5).initialize(64)
    with pytest.raises(ParameterError, match="dtype"):
        cls(n_classes=10, dtype="float16").initialize(64)
    m32 = cls(n_classes=10, dtype="float32", rho0=0.1, rho1=0.1, seed=0)
    run_stream(m32, X, y, 2_000, 0.1, 0.1, seed=1)
    assert m32.W_.dtype == np.float32 and np.all(np.isfinite(m32.W_)) and m32.t_ == 2_000
    m = cls(n_classes=10, seed=0)
    m.learn(X[0], 1, 1)
    W = m.W_.copy()
    with pytest.raises(ParameterError):
        m.learn(X[0], 10, 1)
    assert np.array_equal(W, m.W_)


def test_bpa_h_c_must_be_positive():
    with pytest.raises(ParameterError, match="C"):
        BPAh(n_classes=3, C=0.0).initialize(2)


def test_corrections_help_under_heavy_noise(digits):
    """Under (0.3, 0.3) the h-corrected SOBA ends below SOBA fed the raw bit (same stream, same gamma)."""
    X, y = digits
    T = 100_000
    e = {}
    for name, m, run in (("SOBA", SOBA(n_classes=10, gamma=0.05, seed=0), am_run_stream),
                         ("SOBAh", SOBAh(n_classes=10, gamma=0.05, rho0=0.3, rho1=0.3, seed=0), run_stream)):
        e[name] = run(m, X, y, T, 0.3, 0.3, seed=1, checkpoints=[T]).error_rate[-1]
    assert e["SOBAh"] < e["SOBA"]
