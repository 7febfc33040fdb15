"""SquareCB: inverse-gap weighting, the flip corrections, per-round == stream, persistence, validation, learning."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits

from nolo.exceptions import ParameterError
from nolo.learners.bandit import ClassificationBandit, FastCB, SquareCB, run_stream
from nolo.learners.bandit import squarecb as S
from nolo.learners.bandit.squarecb import igw_probabilities
from nolo.learners.base import Learner

from cb_state import assert_same, per_round, state  # tests/learners/bandit/cb_state.py


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


# -- inverse-gap weighting ------------------------------------------------------------------------


def test_igw_probabilities_hand_worked():
    # r = (0.9, 0.5, 0.1), gamma = 10, K = 3: p(1) = 1/(3 + 4) = 1/7, p(2) = 1/(3 + 8) = 1/11, p(0) = 59/77
    p = igw_probabilities([0.9, 0.5, 0.1], 10.0)
    assert p == pytest.approx([59 / 77, 1 / 7, 1 / 11], abs=1e-15)
    # gamma = 0: uniform
    assert igw_probabilities([0.9, 0.5, 0.1], 0.0) == pytest.approx([1 / 3] * 3, abs=1e-15)
    # the greedy label need not be first; ties go to the smallest label
    p = igw_probabilities([0.2, 0.7, 0.7, 0.0], 4.0)
    assert p[2] == pytest.approx(1 / 4) and p[0] == pytest.approx(1 / 6) and p[3] == pytest.approx(1 / 6.8)
    assert p[1] == pytest.approx(1 - 1 / 4 - 1 / 6 - 1 / 6.8)


def test_igw_draw_intervals_and_frequencies():
    r = np.array([0.9, 0.5, 0.1])
    # non-greedy labels own [0, 1/7) and [1/7, 1/7 + 1/11) in index order; the rest plays the greedy label
    assert S.igw_draw(0.0, r, 3, 0, 10.0) == 1
    assert S.igw_draw(1 / 7 - 1e-12, r, 3, 0, 10.0) == 1
    assert S.igw_draw(1 / 7 + 1e-12, r, 3, 0, 10.0) == 2
    assert S.igw_draw(1 / 7 + 1 / 11 + 1e-12, r, 3, 0, 10.0) == 0
    u = np.random.default_rng(0).random(200_000)
    draws = np.array([S.igw_draw(v, r, 3, 0, 10.0) for v in u])
    freq = np.bincount(draws, minlength=3) / u.size
    p = igw_probabilities(r, 10.0)
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / u.size))
    for a in range(3):
        assert S.igw_prob(r, 3, 0, 10.0, a) == pytest.approx(p[a], abs=1e-15)


def test_gap_weight_schedule_and_corrections():
    m = SquareCB(n_classes=3, gamma_scale=10.0, gamma_exponent=0.5, rho0=0.2, rho1=0.2, correction="gap")
    m.initialize(2)
    assert S.gap_weight(m._state_record(), 4.0) == pytest.approx(20.0 / 0.6)
    m.set_params(correction="target")
    assert S.gap_weight(m._state_record(), 4.0) == pytest.approx(20.0 * 0.6)
    assert S.correction(m._state_record()) == pytest.approx((0.6, 0.2, 0.6))
    m.set_params(correction="none")
    assert S.correction(m._state_record()) == pytest.approx((1.0, 0.0, 1.0))
    with pytest.raises(ValueError, match="unknown correction mode"):  # no silent default correction
        S.correction(m._state_record()._replace(mode=7))


# -- the corrections: Lemma 1 through the learner, and the affine-flip identity -----------------------


@pytest.mark.parametrize("truth", [0, 1])
def test_target_correction_unbiased_monte_carlo(truth):
    """AM Lemma 1 end to end: with x = 0 the ridge oracle's bias is the mean of its targets (up to lam),
    so the learner's fitted value estimates E[h(f_rho)] = f under "target" and E[f_rho] under "none"."""
    rho0, rho1, n = 0.3, 0.2, 20_000
    g = np.random.default_rng(5)
    u = g.random(n)
    bits = np.where(u < (rho1 if truth else rho0), 1 - truth, truth)
    x = np.zeros(3)
    fitted = {}
    for corr in ("target", "none"):
        m = SquareCB(n_classes=2, rho0=rho0, rho1=rho1, correction=corr, lam=1e-9, seed=0)
        for b in bits:
            m.learn(x, 1, int(b))
        fitted[corr] = float(m.decision_function(x[None, :])[0, 1])
    kappa = 1 - rho0 - rho1
    h = (bits - rho0) / kappa
    se = h.std() / math.sqrt(n)
    assert fitted["target"] == pytest.approx(h.mean(), abs=1e-6)  # the oracle fits exactly h
    assert abs(fitted["target"] - truth) < 4 * se  # and E[h] = f (Lemma 1)
    raw_mean = rho0 + kappa * truth
    assert abs(fitted["none"] - raw_mean) < 4 * bits.std() / math.sqrt(n)


def test_affine_flip_identity_by_simulation():
    """E[f_rho | x, a] = rho0 + kappa P(y = a | x): four contexts with known class posteriors, uniform plays."""
    rho0, rho1 = 0.25, 0.15
    kappa = 1 - rho0 - rho1
    post = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [1 / 3, 1 / 3, 1 / 3], [0.0, 0.05, 0.95]])
    g = np.random.default_rng(11)
    n = 400_000
    ctx = g.integers(0, 4, n)
    y = (g.random(n)[:, None] > np.cumsum(post[ctx], axis=1)).sum(axis=1)
    a = g.integers(0, 3, n)
    f = (a == y).astype(int)
    u = g.random(n)
    f_rho = np.where(f == 1, (u >= rho1).astype(int), (u < rho0).astype(int))  # the channel's rule
    for c in range(4):
        for b in range(3):
            sel = (ctx == c) & (a == b)
            m, se = f_rho[sel].mean(), f_rho[sel].std() / math.sqrt(sel.sum())
            assert abs(m - (rho0 + kappa * post[c, b])) < 4.5 * se + 1e-12


# -- per-round == stream, dense == CSR, same seed, persistence --------------------------------------


@pytest.mark.parametrize("oracle", ["ridge", "ogd"])
@pytest.mark.parametrize("cls,kw", [
    (SquareCB, dict(correction="target", rho0=0.2, rho1=0.1)),
    (SquareCB, dict(correction="gap", estimate_rates=True, rate_every=200)),
    (FastCB, dict(correction="target", rho0=0.2, rho1=0.1, loss_scale="observed")),
    (FastCB, dict(correction="none", confidence=1.0, rho0=0.2, rho1=0.1)),
    (FastCB, dict(correction="gap", estimate_rates=True, rate_every=200)),
], ids=["squarecb-target", "squarecb-gap-est", "fastcb-observed", "fastcb-none-width", "fastcb-gap-est"])
def test_per_round_equals_stream_bitwise(digits, oracle, cls, kw):
    """SquareCB and FastCB (SquareCB's subclass with its own allocation): per-round == compiled stream, bitwise."""
    X, y = digits
    X, y = X[:300], y[:300]
    n = 1_500
    m1 = cls(n_classes=10, oracle=oracle, seed=3, **kw)
    mistakes, env1 = per_round(m1, X, y, n, 0.2, 0.1, seed=4)
    for rep in ("dense", "csr"):
        m2 = cls(n_classes=10, oracle=oracle, seed=3, **kw)
        res = run_stream(m2, X, y, n, rho0=0.2, rho1=0.1, seed=4, representation=rep)
        assert_same(m1, m2)
        assert res.played_mistakes[-1] == mistakes
    if kw.get("estimate_rates"):
        assert m1.rate_estimates_.shape == (n // 200, 3)
        assert np.array_equal(m1.rate_estimates_, m2.rate_estimates_)
        assert np.array_equal(res.extra["rate_estimates"], m2.rate_estimates_)


def test_stream_takes_sparse_input_and_same_seed_same_result(digits):
    X, y = digits
    r1 = run_stream(m1 := SquareCB(n_classes=10, oracle="ogd", seed=1), sp.csr_matrix(X), y, 5_000, 0.1, 0.1, seed=2)
    r2 = run_stream(m2 := SquareCB(n_classes=10, oracle="ogd", seed=1), X, y, 5_000, 0.1, 0.1, seed=2)
    assert_same(m1, m2)
    assert np.array_equal(r1.played_mistakes, r2.played_mistakes)
    r3 = run_stream(m3 := SquareCB(n_classes=10, oracle="ogd", seed=9), X, y, 5_000, 0.1, 0.1, seed=2)
    assert not np.array_equal(m3.W_, m2.W_)
    assert r3.n_rounds == 5_000


@pytest.mark.parametrize("oracle", ["ridge", "ogd", "fdson"])
def test_save_load_resume_is_uninterrupted(tmp_path, digits, oracle):
    X, y = digits
    kw = dict(n_classes=10, oracle=oracle, correction="gap", estimate_rates=True, rate_every=300, seed=7)
    straight = SquareCB(**kw)
    env1 = ClassificationBandit(X, y, 0.2, 0.3, seed=8)
    env1.run(straight, 2_000)
    env1.run(straight, 1_000)
    part = SquareCB(**kw)
    env2 = ClassificationBandit(X, y, 0.2, 0.3, seed=8)
    env2.run(part, 2_000)
    part.save(tmp_path / "m.npz")
    resumed = Learner.load(tmp_path / "m.npz")
    assert isinstance(resumed, SquareCB)
    env2.run(resumed, 1_000)
    assert_same(straight, resumed)
    # and per round after loading, too
    x = X[5]
    assert straight.act(x) == resumed.act(x)


def test_bias_is_the_last_column_and_predictions_match_the_stream(digits):
    """decision_function = W [x, 1] with the stream's arithmetic: the greedy labels the stream plays are predict's."""
    X, y = digits
    m = SquareCB(n_classes=10, seed=1)
    res = run_stream(m, X, y, 3_000, seed=2, log=True)
    assert m.W_.shape == (10, 65) and np.shares_memory(m.bias_, m.W_)
    R = m.decision_function(X[:50])
    assert np.allclose(R, X[:50] @ m.W_[:, :64].T + m.bias_, atol=1e-12)
    assert np.array_equal(m.predict(X), np.argmax(m.decision_function(X), axis=1))
    assert np.array_equal(m.predict(sp.csr_matrix(X)), m.predict(X))
    assert res.extra["log"]["index"].shape == (3_000,)


# -- validation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kw, name", [
    (dict(n_classes=1), "n_classes"), (dict(oracle="lasso"), "oracle"), (dict(gamma_scale=-1.0), "gamma_scale"),
    (dict(gamma_exponent=1.5), "gamma_exponent"), (dict(rho0=0.6, rho1=0.5), "rho"),
    (dict(correction="both"), "correction"), (dict(estimate_rates=1), "estimate_rates"),
    (dict(estimate_rates=True, correction="target"), "correction"), (dict(rate_every=5), "rate_every"),
    (dict(pct_top=100.0), "pct_top"), (dict(rho_max=0.5), "rho_max"), (dict(lam=0.0), "lam"),
    (dict(eta=0.0), "eta"), (dict(max_bytes=0), "max_bytes"),
])
def test_bad_parameters_are_named(kw, name):
    with pytest.raises(ParameterError, match=name):
        SquareCB(**{"n_classes": 3, **kw}).initialize(4)


def test_bad_rounds_leave_state_unchanged():
    m = SquareCB(n_classes=3, seed=0)
    x = np.array([0.5, 0.0, 0.5, 0.1])
    m.learn(x, m.act(x), 1)
    before = {k: v.copy() for k, v in state(m).items()}
    t, rng = m.t_, m.rng_.bit_generator.state
    for args in [(x, 3, 1), (x, -1, 0), (x, 1.0, 1), (x, 0, 2), (x[:3], 0, 1), (np.array([np.nan, 0, 0, 0]), 0, 1)]:
        with pytest.raises(ParameterError):
            m.learn(*args)
    with pytest.raises(ParameterError):
        m.act(x[:2])
    after = state(m)
    assert all(np.array_equal(before[k], after[k]) for k in before) and m.t_ == t
    assert m.rng_.bit_generator.state == rng


def test_ridge_refuses_a_dimension_that_does_not_fit():
    m = SquareCB(n_classes=10, oracle="ridge", max_bytes=10**6)
    with pytest.raises(ParameterError, match=r"oracle='ridge'.*GiB.*oracle='ogd'"):
        m.initialize(784)
    assert not m.is_initialized
    SquareCB(n_classes=10, oracle="ogd", max_bytes=10**6).initialize(784)  # O(K d): fine


# -- learning curves ---------------------------------------------------------------------------------


@pytest.mark.parametrize("oracle, bar", [("ridge", 0.06), ("ogd", 0.1)])
def test_digits_learning_curve_under_noise(digits, oracle, bar):
    """digits, 10^5 rounds, (rho0, rho1) = (0.2, 0.2): cumulative error of the played label below the bar."""
    X, y = digits
    m = SquareCB(n_classes=10, oracle=oracle, rho0=0.2, rho1=0.2, seed=0)
    res = run_stream(m, X, y, 100_000, rho0=0.2, rho1=0.2, seed=1)
    assert res.error_rate[-1] < bar
    assert res.error_rate[-1] < res.error_rate[np.searchsorted(res.checkpoints, 10_000)]  # still learning
    assert np.mean(m.predict(X) == y) > 0.93


def test_estimated_rates_track_the_truth(digits):
    X, y = digits
    m = SquareCB(n_classes=10, correction="gap", estimate_rates=True, rate_every=10_000, seed=0)
    res = run_stream(m, X, y, 100_000, rho0=0.2, rho1=0.3, seed=1)
    r0, r1 = m.rates_
    assert abs(r0 - 0.2) < 0.06 and abs(r1 - 0.3) < 0.03
    assert m.rate_estimates_.shape == (10, 3)
    known = run_stream(SquareCB(n_classes=10, correction="gap", rho0=0.2, rho1=0.3, seed=0), X, y, 100_000,
                       rho0=0.2, rho1=0.3, seed=1)
    assert abs(res.error_rate[-1] - known.error_rate[-1]) < 0.02
