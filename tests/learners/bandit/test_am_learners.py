"""AM learners: hand-worked exact updates (K=3, d=2), validation leaving state unchanged, persistence."""

import numpy as np
import pytest

from nolo import NumericalError, ParameterError
from nolo.learners.base import Learner
from nolo.learners.bandit import BPA, RCINE, RCNBF, SOBA, Banditron, Perceptron, corollary_gamma, theorem4_bound
from nolo.noise_rates import NREst


def test_perceptron_hand_worked():
    p = Perceptron(n_classes=3)
    p.learn([1.0, 2.0], 1)  # scores all 0 -> yhat = 0 != 1: row 1 += x, row 0 -= x
    np.testing.assert_array_equal(p.W_, [[-1, -2], [1, 2], [0, 0]])
    p.learn([1.0, 0.0], 1)  # scores (-1, 1, 0) -> yhat = 1 = y: no change
    np.testing.assert_array_equal(p.W_, [[-1, -2], [1, 2], [0, 0]])
    p.learn([0.0, 1.0], 2)  # scores (-2, 2, 0) -> yhat = 1: row 2 += x, row 1 -= x
    np.testing.assert_array_equal(p.W_, [[-1, -2], [1, 1], [0, 1]])


def test_banditron_hand_worked():
    b = Banditron(n_classes=3, gamma=0.3)
    # W = 0 -> yhat = 0; played 2 with P(2) = 0.3/3 = 0.1, feedback 1: row 2 += x/0.1, row 0 -= x
    b.learn([1.0, 2.0], 2, 1)
    np.testing.assert_allclose(b.W_, [[-1, -2], [0, 0], [10, 20]], rtol=0, atol=1e-12)
    # scores of (0,1): (-2, 0, 20) -> yhat = 2 = played, feedback 0: only row 2 -= x
    b.learn([0.0, 1.0], 2, 0)
    np.testing.assert_allclose(b.W_, [[-1, -2], [0, 0], [10, 19]], rtol=0, atol=1e-12)
    # played = yhat = 2 with feedback 1: P(2) = 0.7 + 0.1 = 0.8, row 2 += x/0.8 - x
    b.learn([1.0, 0.0], 2, 1)
    np.testing.assert_allclose(b.W_, [[-1, -2], [0, 0], [10.25, 19]], rtol=0, atol=1e-12)


def test_rcnbf_hand_worked():
    r = RCNBF(n_classes=3, gamma=0.3, rho0=0.2, rho1=0.2)  # kappa = 0.6, h(1) = 0.8/0.6, h(0) = -0.2/0.6
    r.learn([1.0, 2.0], 2, 1)  # yhat 0, P(2) = 0.1: row 2 += x (4/3)/0.1, row 0 -= x
    np.testing.assert_allclose(r.W_, [[-1, -2], [0, 0], [40 / 3, 80 / 3]], rtol=1e-14)
    r.learn([0.0, 1.0], 1, 0)  # scores (-2, 0, 80/3): yhat 2; played 1, P = 0.1: row 1 += x (-1/3)/0.1
    np.testing.assert_allclose(r.W_, [[-1, -2], [0, -10 / 3], [40 / 3, 80 / 3 - 1]], rtol=1e-14)


def test_rcnbf_without_noise_is_banditron():
    rng = np.random.default_rng(1)
    a, b = Banditron(n_classes=3, gamma=0.2, seed=4), RCNBF(n_classes=3, gamma=0.2, seed=4)
    for _ in range(200):
        x = rng.standard_normal(2)
        pa, pb = a.act(x), b.act(x)
        assert pa == pb
        f = int(rng.random() < 0.5)
        a.learn(x, pa, f)
        b.learn(x, pb, f)
    np.testing.assert_array_equal(a.W_, b.W_)


@pytest.mark.parametrize("cls, kw", [(Banditron, {}), (RCNBF, {"rho0": 0.1, "rho1": 0.2}), (RCINE, {})])
def test_gamma_zero_learns_greedily_and_refuses_a_label_it_never_plays(cls, kw):
    """gamma = 0 (a valid rate) plays the greedy label; its step table has inf for the labels played with
    probability 0, which no own round reads (every round used to fail: the table was checked as state)."""
    m = cls(n_classes=3, gamma=0.0, seed=0, **kw)
    rng = np.random.default_rng(1)
    for _ in range(20):
        x = rng.normal(size=2)
        a = m.act(x)
        assert a == int(np.argmax(m.decision_function(x[None])[0]))
        m.learn(x, a, int(rng.random() < 0.5))
    assert m.t_ == 20 and np.any(m.W_ != 0)
    x = rng.normal(size=2)
    other = (m.act(x) + 1) % 3
    before = m.W_.copy()
    with pytest.raises(NumericalError):
        m.learn(x, other, 1)  # another policy's label: importance weight 1/0
    np.testing.assert_array_equal(m.W_, before)


def test_decision_function_refuses_an_overflowed_score():
    """A Perceptron that took a row of 1.7e308 holds weights whose scores overflow: NumericalError, not inf."""
    p = Perceptron(n_classes=3).learn(np.full(2, 1.7e308), 1)
    assert np.all(np.isfinite(p.W_))
    with pytest.raises(NumericalError, match="decision_function"):
        p.decision_function(np.ones((1, 2)))


def test_bpa_hand_worked():
    b = BPA(n_classes=3, gamma=0.1)
    b.learn([1.0, 2.0], 1, 1)  # sigma=+1, loss 1, tau = 1/5: row 1 += x/5
    np.testing.assert_allclose(b.W_, [[0, 0], [0.2, 0.4], [0, 0]], rtol=1e-14)
    b.learn([2.0, 0.0], 1, 0)  # s_1 = 0.4, sigma=-1, loss 1.4, tau = 0.35: row 1 -= 0.35 x
    np.testing.assert_allclose(b.W_, [[0, 0], [-0.5, 0.4], [0, 0]], rtol=1e-14)
    b.learn([0.0, 1.0], 1, 1)  # s_1 = 0.4, loss 0.6, tau 0.6: row 1 += 0.6 x
    np.testing.assert_allclose(b.W_, [[0, 0], [-0.5, 1.0], [0, 0]], rtol=1e-14)
    b.learn([0.0, 1.0], 1, 1)  # s_1 = 1 -> loss 0, no change
    np.testing.assert_allclose(b.W_, [[0, 0], [-0.5, 1.0], [0, 0]], rtol=1e-14)


def test_soba_hand_worked():
    s = SOBA(n_classes=3, gamma=0.3, a=1.0)
    # W = 0 -> yhat 0; played 1 confirmed, p = 0.1; ybar = 0 (tie, smallest); Delta 0 -> m = 0 >= -S: update
    s.learn([1.0, 2.0], 1, 1)
    np.testing.assert_allclose(s.a_, [[11, 41], [11, 41], [1, 1]])
    np.testing.assert_allclose(s.theta_, [[-10, -20], [10, 20], [0, 0]])
    np.testing.assert_allclose(s.W_, [[-10 / 11, -20 / 41], [10 / 11, 20 / 41], [0, 0]], rtol=1e-14)
    assert s.budget_[0] == 0.0
    # x=(1,0): scores (-10/11, 10/11, 0), yhat = played = 1, p = 0.8, ybar = 2, Delta = -10/11:
    # m = ((Delta^2 + 2 Delta)/p) / (1 + q) with q = (1/0.8)(1 + 1/11) -> m < 0 = -S: no update
    delta, p = -10 / 11, 0.8
    m = (delta**2 + 2 * delta) / p / (1 + (1 + 1 / 11) / p)
    assert m < 0
    W = s.W_.copy()
    s.learn([1.0, 0.0], 1, 1)
    np.testing.assert_array_equal(s.W_, W)
    s.learn([1.0, 0.0], 2, 0)  # unconfirmed: SOBA never updates
    np.testing.assert_array_equal(s.W_, W)


def _soba_reference(K, gamma, a, rounds):
    """docs/baselines.md, section 4.2 written plainly, keeping theta as state (the learner keeps W and a,
    theta = W a)."""
    d = rounds[0][0].shape[0]
    W, th, A, S = np.zeros((K, d)), np.zeros((K, d)), np.full((K, d), a), 0.0
    for x, played, f in rounds:
        s = W @ x
        yhat = int(np.argmax(s))
        if f != 1:
            continue
        others = [k for k in range(K) if k != played]
        ybar = others[int(np.argmax(s[others]))]
        p = gamma / K + (1 - gamma) * (played == yhat)
        delta = s[ybar] - s[played]
        q = np.sum(x**2 * (1 / A[ybar] + 1 / A[played])) / p
        m = (delta**2 + 2 * delta) / p / (1 + q)
        if S + m < 0:
            continue
        for k, sign in ((ybar, -1.0), (played, 1.0)):
            A[k] += x**2 / p
            th[k] += sign * x / p
            W[k] = th[k] / A[k]
        S += m
    return W, A, th, S


def test_soba_matches_a_reference_that_keeps_theta_and_bad_a_is_rejected():
    """300 rounds of SOBA (state W and a, theta rebuilt as W a) against the rule written with theta as state:
    the same decisions, W, a and theta to ~1e-12; a too small or too large initial a is rejected."""
    rng = np.random.default_rng(0)
    s = SOBA(n_classes=4, gamma=0.2, a=0.5, seed=1)
    rounds = []
    for _ in range(300):
        x = rng.standard_normal(6)
        p = s.act(x)
        f = int(rng.random() < 0.6)
        s.learn(x, p, f)
        rounds.append((x, p, f))
    W, A, th, S = _soba_reference(4, 0.2, 0.5, rounds)
    assert A.max() > 10  # many updates happened
    np.testing.assert_allclose(s.a_, A, rtol=1e-12)
    np.testing.assert_allclose(s.W_, W, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s.theta_, th, rtol=1e-10, atol=1e-12)
    assert s.budget_[0] == pytest.approx(S, rel=1e-10)
    for bad in (0.0, 1e-200, 1e200, -1.0):
        with pytest.raises(ParameterError, match="a must be"):
            SOBA(n_classes=3, a=bad).act([1.0, 2.0])


@pytest.mark.parametrize("cls", [Banditron, RCNBF, BPA, SOBA, RCINE])
def test_bad_round_input_rejected_state_unchanged(cls):
    m = cls(n_classes=3, gamma=0.2, seed=0)
    m.learn([1.0, 2.0], 1, 1)
    W, t = m.W_.copy(), m.t_
    for bad in (([1.0, np.nan], 1, 1), ([1.0, 2.0, 3.0], 1, 1), ([1.0, 2.0], 3, 1), ([1.0, 2.0], -1, 1),
                ([1.0, 2.0], 1, 2), ([1.0, 2.0], 1.5, 1)):
        with pytest.raises(ParameterError):
            m.learn(*bad)
    np.testing.assert_array_equal(m.W_, W)
    assert m.t_ == t


def test_perceptron_bad_label_rejected_state_unchanged():
    p = Perceptron(n_classes=3).learn([1.0, 2.0], 1)
    W = p.W_.copy()
    for bad in (3, -1, 1.0, True):
        with pytest.raises(ParameterError, match="y must be"):
            p.learn([1.0, 2.0], bad)
    with pytest.raises(ParameterError):
        p.learn([1.0, np.inf], 1)
    np.testing.assert_array_equal(p.W_, W)
    assert p.t_ == 1


@pytest.mark.parametrize("kw,word", [(dict(rho0=0.5, rho1=0.5), "rho0 \\+ rho1"), (dict(rho0=0.7, rho1=0.4), "rho0 \\+ rho1"),
                                     (dict(rho0=-0.1), "rho0"), (dict(gamma=1.0), "gamma"), (dict(gamma="cor4.2"), "horizon"),
                                     (dict(n_classes=1), "n_classes"), (dict(dtype="int8"), "dtype")])
def test_bad_parameters_rejected(kw, word):
    with pytest.raises(ParameterError, match=word):
        RCNBF(**{"n_classes": 3, **kw}).initialize(2)


def test_set_params_rejection_keeps_old_value():
    r = RCNBF(n_classes=3, rho0=0.1, rho1=0.1)
    with pytest.raises(ParameterError):
        r.set_params(rho1=0.95)
    assert r.rho1 == 0.1


def test_corollary_gamma_and_theorem4():
    assert corollary_gamma("cor4.1", 10_000) == pytest.approx(0.01)
    assert corollary_gamma("cor4.2", 10_000, complexity=4.0, kappa=0.5) == pytest.approx(0.04)
    assert corollary_gamma("cor4.3", 1_000, kappa=0.5) == pytest.approx(0.2)
    assert corollary_gamma("cor4.3", 8, kappa=0.1) < 0.5  # clipped into (0, 0.5)
    r = RCNBF(n_classes=3, gamma="cor4.3", rho0=0.1, rho1=0.1, horizon=1000).initialize(2)
    assert r.gamma_ == pytest.approx(0.1 / 0.8)
    # separable, no noise: bound = 3 max(A1 D, sqrt(A2 D T)) + gamma T with A1 = 2K/gamma, A2 = 2 gamma
    K, g, T, D = 3, 0.1, 1000, 2.0
    assert theorem4_bound(T, K, g, 0.0, 0.0, D, 0.0) == pytest.approx(3 * max(2 * K / g * D, (2 * g * D * T) ** 0.5) + g * T)


def test_predict_never_changes_state_and_matches_scores():
    rng = np.random.default_rng(0)
    m = RCNBF(n_classes=4, gamma=0.2, rho0=0.1, rho1=0.1, seed=0)
    X = rng.standard_normal((50, 5))
    for x in X:
        p = m.act(x)
        m.learn(x, p, int(rng.random() < 0.3))
    W, state = m.W_.copy(), m.rng_.bit_generator.state
    pred = m.predict(X)
    np.testing.assert_array_equal(pred, np.argmax(X @ m.W_.T, axis=1))
    np.testing.assert_array_equal(m.W_, W)
    assert m.rng_.bit_generator.state == state


@pytest.mark.parametrize("cls,kw", [(SOBA, {}), (RCNBF, dict(rho0=0.2, rho1=0.1)), (Banditron, {}), (BPA, {}),
                                    (RCINE, dict(refit_every=40, reservoir_size=20,
                                                 estimator=NREst(hidden_layer_sizes=(4,), max_iter=3, warm_start=True)))])
def test_save_load_resume_equals_uninterrupted(tmp_path, cls, kw):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 4))
    y = np.argmax(X[:, :3], axis=1)
    a, b = cls(n_classes=3, gamma=0.3, seed=9, **kw), cls(n_classes=3, gamma=0.3, seed=9, **kw)

    def play(m, x, yy):
        p = m.act(x)
        m.learn(x, p, int(p == yy))

    for t in range(100):
        play(a, X[t], y[t])
        play(b, X[t], y[t])
    c = Learner.load(b.save(tmp_path / "m"))
    assert type(c) is cls and c.W_.flags.f_contiguous
    for t in range(100, 200):
        play(a, X[t], y[t])
        play(c, X[t], y[t])
    np.testing.assert_array_equal(a.W_, c.W_)
    if cls is RCINE:
        assert a.estimates_.shape[0] == 5
        np.testing.assert_array_equal(a.estimates_, c.estimates_)


@pytest.mark.parametrize("rho_max", [0.5, -0.1, 0.6])
def test_rcine_rate_cap_below_one_half(rho_max):
    """Estimates capped at 0.5 each could sum to 1, where kappa = 1 - rho0_hat - rho1_hat = 0 divides."""
    with pytest.raises(ParameterError, match="rho_max"):
        RCINE(n_classes=3, rho_max=rho_max).initialize(2)
    RCINE(n_classes=3, rho_max=0.499).initialize(2)
