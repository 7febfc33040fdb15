"""FastCB (Foster & Krishnamurthy 2021): the first-order allocation, the compiled stream, persistence, a learning bar."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from nolo.exceptions import ParameterError
from nolo.learners.bandit import ClassificationBandit, FastCB, SquareCB, run_stream
from nolo.learners.bandit import fastcb as F
from nolo.learners.bandit import squarecb as S
from nolo.learners.base import Learner

from cb_state import assert_same  # tests/learners/bandit/cb_state.py


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


# -- the allocation ---------------------------------------------------------------------------------


def test_allocation_hand_worked():
    # losses l = 1 - r = (0.1, 0.5, 0.9), gamma = 10, K = 3, l(a_hat) = 0.1:
    # p(1) = 0.1 / (0.3 + 10 * 0.4) = 1/43, p(2) = 0.1 / (0.3 + 10 * 0.8) = 1/83, p(0) = the rest
    r = [0.9, 0.5, 0.1]
    p = F.fastcb_probabilities(r, 10.0, 0.1)
    assert p == pytest.approx([1 - 1 / 43 - 1 / 83, 1 / 43, 1 / 83], abs=1e-15)
    assert p.sum() == pytest.approx(1.0, abs=1e-15) and np.all(p > 0)
    # = inverse-gap weighting with gap weight gamma / l(a_hat); l(a_hat) = 1 is SquareCB
    assert np.array_equal(p, S.igw_probabilities(r, 100.0))
    assert np.array_equal(F.fastcb_probabilities(r, 10.0, 1.0), S.igw_probabilities(r, 10.0))


def _record(**kw):
    kw.setdefault("confidence", 0.0)  # the width is tested on its own below
    m = FastCB(n_classes=3, gamma_scale=10.0, gamma_exponent=0.5, **kw)
    m.initialize(2)
    return m._state_record()


def test_greedy_loss_on_each_scale_and_the_floor():
    s = np.array([0.2, 0.74, 0.1])  # greedy label 1
    K, t = 3, 4.0
    # raw-bit oracle (correction "gap"), rho = (0.2, 0.1): kappa = 0.7, clean r = (0.74 - 0.2) / 0.7
    st = _record(rho0=0.2, rho1=0.1, correction="gap", loss_scale="observed")
    assert F.greedy_loss(st, 0.74, K, t) == pytest.approx(0.26, abs=1e-15)  # observed: 1 - 0.74
    st = _record(rho0=0.2, rho1=0.1, correction="gap", loss_scale="clean")
    assert F.greedy_loss(st, 0.74, K, t) == pytest.approx(1 - 0.54 / 0.7, abs=1e-15)
    # clean-target oracle (correction "target"): the score is the clean reward
    st = _record(rho0=0.2, rho1=0.1, correction="target", loss_scale="observed")
    assert F.greedy_loss(st, 0.74, K, t) == pytest.approx(1 - 0.2 - 0.7 * 0.74, abs=1e-15)  # rho1 + kappa (1 - r)
    st = _record(rho0=0.2, rho1=0.1, correction="target", loss_scale="clean")
    assert F.greedy_loss(st, 0.74, K, t) == pytest.approx(0.26, abs=1e-15)
    # the floor: predictions above 1, and a non-finite score; the ceiling 1
    st = _record(loss_floor=0.05, loss_scale="clean")
    assert F.greedy_loss(st, 1.3, K, t) == 0.05 and F.greedy_loss(st, np.nan, K, t) == 0.05
    assert F.greedy_loss(st, -2.0, K, t) == 1.0
    with pytest.raises(ValueError, match="unknown correction mode"):  # no silent default scale
        F.greedy_loss(st._replace(mode=7), 0.74, K, t)
    # the weight: g_t / l_hat (t = 4: g = 10 * 2 * the correction's kappa for "target")
    st = _record(rho0=0.2, rho1=0.1, correction="target", loss_scale="clean")
    assert F.first_order_weight(st, s, 3, 1, 4.0) == pytest.approx(20.0 * 0.7 / 0.26)
    assert S.gap_weight(st, 4.0) == pytest.approx(20.0 * 0.7)


def test_confidence_width_floors_the_clean_loss():
    # (0.4, 0.4), clean target r = 0.95: l_clean = 0.05, l_obs = 0.4 + 0.2 * 0.05 = 0.41; K = 9, t = 900:
    # width = c sqrt(0.41 * 0.59 * 9 / 900) / 0.2 on the clean scale, sqrt(...) on the observed one
    K, t = 9, 900.0
    w = np.sqrt(0.41 * 0.59 / 100)
    st = _record(rho0=0.4, rho1=0.4, correction="target", loss_scale="clean", confidence=1.0)
    assert F.greedy_loss(st, 0.95, K, t) == pytest.approx(w / 0.2, abs=1e-12)  # 0.246 > 0.05
    st = _record(rho0=0.4, rho1=0.4, correction="target", loss_scale="clean", confidence=0.0)
    assert F.greedy_loss(st, 0.95, K, t) == pytest.approx(0.05, abs=1e-12)
    st = _record(rho0=0.4, rho1=0.4, correction="target", loss_scale="observed", confidence=1.0)
    assert F.greedy_loss(st, 0.95, K, t) == pytest.approx(0.41, abs=1e-12)  # w = 0.049 < 0.41
    # noise-free, late: the width is negligible next to the loss
    st = _record(loss_scale="clean", confidence=1.0)
    assert F.greedy_loss(st, 0.9, 3, 1e6) == pytest.approx(0.1, abs=1e-12)


def test_observed_scale_bounds_the_factor_by_one_over_rho1():
    # (0.4, 0.4), clean-target oracle: a perfect clean prediction r = 1 has observed loss rho1 = 0.4 (factor 2.5,
    # where the clean scale divides by the floor: factor 100)
    st = _record(rho0=0.4, rho1=0.4, correction="target", loss_scale="observed")
    assert F.greedy_loss(st, 1.0, 3, 1e4) == pytest.approx(0.4) and F.greedy_loss(st, 0.5, 3, 1e4) == pytest.approx(0.5)
    assert F.greedy_loss(_record(rho0=0.4, rho1=0.4, correction="target", loss_scale="clean"), 1.0, 3, 1e4) == 0.01


# -- the compiled stream, persistence ---------------------------------------------------------------


def test_differs_from_squarecb_and_same_seed_same_result(digits):
    X, y = digits
    r1 = run_stream(m1 := FastCB(n_classes=10, seed=1), X, y, 3_000, seed=2)
    r2 = run_stream(m2 := FastCB(n_classes=10, seed=1), X, y, 3_000, seed=2)
    assert_same(m1, m2)
    r3 = run_stream(SquareCB(n_classes=10, seed=1), X, y, 3_000, seed=2)
    assert not np.array_equal(r1.played_mistakes, r3.played_mistakes)
    assert np.array_equal(r1.played_mistakes, r2.played_mistakes)


@pytest.mark.parametrize("oracle", ["ridge", "ogd"])
def test_save_load_resume_is_uninterrupted(tmp_path, digits, oracle):
    X, y = digits
    kw = dict(n_classes=10, oracle=oracle, correction="gap", estimate_rates=True, rate_every=300, loss_floor=0.05,
              loss_scale="clean", confidence=0.5, seed=7)
    straight = FastCB(**kw)
    env1 = ClassificationBandit(X, y, 0.2, 0.3, seed=8)
    env1.run(straight, 2_000)
    env1.run(straight, 1_000)
    part = FastCB(**kw)
    env2 = ClassificationBandit(X, y, 0.2, 0.3, seed=8)
    env2.run(part, 2_000)
    part.save(tmp_path / "m.npz")
    resumed = Learner.load(tmp_path / "m.npz")
    assert isinstance(resumed, FastCB) and resumed.loss_floor == 0.05 and resumed.loss_scale == "clean"
    env2.run(resumed, 1_000)
    assert_same(straight, resumed)
    assert straight.act(X[5]) == resumed.act(X[5])


# -- validation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kw, name", [
    (dict(loss_floor=0.0), "loss_floor"), (dict(loss_floor=1.5), "loss_floor"), (dict(loss_floor=np.nan), "loss_floor"),
    (dict(loss_scale="raw"), "loss_scale"), (dict(confidence=-1.0), "confidence"), (dict(correction="both"), "correction"),
    (dict(n_classes=1), "n_classes"),
    (dict(prior_reward=1.5), "prior_reward"), (dict(prior_reward=-0.1), "prior_reward"),
])
def test_bad_parameters_are_named(kw, name):
    m = FastCB(**{"n_classes": 3, **kw})
    with pytest.raises(ParameterError, match=name):
        m.initialize(4)
    assert not m.is_initialized


# -- learning curves ---------------------------------------------------------------------------------


def test_digits_learning_curve_under_noise(digits):
    """digits, 10^5 rounds, (rho0, rho1) = (0.2, 0.2), ridge oracle: cumulative error below the bar."""
    X, y = digits
    m = FastCB(n_classes=10, rho0=0.2, rho1=0.2, seed=0)
    res = run_stream(m, X, y, 100_000, rho0=0.2, rho1=0.2, seed=1)
    assert res.error_rate[-1] < 0.06
    assert np.mean(m.predict(X) == y) > 0.93


def test_explores_less_than_squarecb_noise_free(digits):
    """Noise-free digits: where the oracle is confident the greedy label is right, FastCB plays fewer non-greedy labels
    than SquareCB with the same oracle, and errs less (the first-order allocation's point)."""
    X, y = digits
    errs = {}
    for cls in (SquareCB, FastCB):
        res = run_stream(cls(n_classes=10, seed=0), X, y, 100_000, seed=1)
        errs[cls.__name__] = res.error_rate[-1]
    assert errs["FastCB"] < 0.85 * errs["SquareCB"]  # 0.70-0.74x on three other seeds (docs/squarecb.md#fastcb)


# -- prior_reward: optimistic initialisation ---------------------------------------------------------


def test_prior_reward_is_the_oracles_initial_prediction_and_the_ridge_prior_mean():
    g = np.random.default_rng(0)
    X = g.normal(size=(60, 4))
    m = FastCB(n_classes=3, prior_reward=1.0, lam=0.5, seed=0)
    m.initialize(4)
    assert np.array_equal(m.W_[:, -1], np.ones(3)) and not m.W_[:, :-1].any()
    assert np.array_equal(m.decision_function(X[:2]), np.ones((2, 3)))  # every label predicted at 1 before any play
    # ridge: recursive least squares from theta_0 = (0, .., 0, 1) is ridge regression shrunk towards theta_0,
    # theta = (lam I + Z'Z)^-1 (lam theta_0 + Z'r), on the rounds each label was played
    acts, fbs = [], []
    for i in range(60):
        a = m.act(X[i])
        f = int(g.random() < 0.5)
        m.learn(X[i], a, f)
        acts.append(a)
        fbs.append(f)
    acts, fbs = np.array(acts), np.array(fbs, dtype=float)
    Z = np.hstack([X, np.ones((60, 1))])
    theta0 = np.r_[np.zeros(4), 1.0]
    for k in range(3):
        Zk = Z[acts == k]
        A = 0.5 * np.eye(5) + Zk.T @ Zk
        assert np.allclose(m.W_[k], np.linalg.solve(A, 0.5 * theta0 + Zk.T @ fbs[acts == k]), atol=1e-10)


def test_prior_reward_finds_each_label_sooner_on_sparse_data():
    """Optimism on a SynSep draw we may tune on (data seed 7, not the experiments' 2008), noise-free, OGD oracle: a
    label not yet played looks right, so each class's label is found by elimination -- fewer mistakes in the first
    2,000 rounds (at 10^4 rounds: 0.0090 vs 0.0215, docs/squarecb.md#synsep; here the mean over seeds 0-2)."""
    from nolo.datasets import load_dataset

    X, y = load_dataset("synsep", n_samples=5_000, seed=7, normalize="unit")
    err = {b: np.mean([run_stream(FastCB(n_classes=9, oracle="ogd", prior_reward=b, seed=s), X, y, 2_000,
                                  seed=5_000 + 1_000 * s).error_rate[-1] for s in range(3)]) for b in (0.0, 1.0)}
    assert err[1.0] < 0.6 * err[0.0], err
