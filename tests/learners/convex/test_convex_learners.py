"""The OCO notes' example learners: exact updates, contract (validation, persistence), bitwise stream path, regret."""

import math

import numpy as np
import pytest

from nolo import NumericalError, ParameterError
from nolo.experiments import plots
from nolo.learners.base import Learner
from nolo.learners.convex import (
    MaxEntryOGD,
    OnlineLasso,
    OnlineLassoL1Ball,
    OnlineLinearSVM,
    OnlineRidgeRegression,
    TraceNormOGD,
)
from nolo.datasets.ratings import make_low_rank_ratings
from nolo.oco import Box, L1Ball, L2Ball, TheoryStep, composite_hindsight, solve_hindsight


# -- exact updates on hand-worked cases --------------------------------------------------------------
def test_svm_one_step_with_projection():
    # f_1 = 0, x = (3, 4), y = +1: hinge subgradient -y x = (-3, -4); eta = 0.5 -> v = (1.5, 2), ||v|| = 2.5 > 1
    svm = OnlineLinearSVM(step=0.5)
    svm.learn([3.0, 4.0], 1.0)
    np.testing.assert_allclose(svm.w_, [0.6, 0.8], rtol=0, atol=1e-15)
    assert svm.cumulative_loss_ == 1.0 and svm.t_ == 1
    np.testing.assert_array_equal(svm.average_, [0.0, 0.0])  # the played iterate was 0
    # second round: margin y <f, x> = 0.6*1 = 0.6 < 1 -> loss 0.4, v = (0.6, 0.8) + 0.5 (1, 0) = (1.1, 0.8)
    svm.learn([1.0, 0.0], 1.0)
    v = np.array([1.1, 0.8])
    np.testing.assert_allclose(svm.w_, v / np.linalg.norm(v), atol=1e-15)
    assert svm.cumulative_loss_ == pytest.approx(1.4, abs=1e-15)


def test_box_and_l1_ball_steps():
    svm = OnlineLinearSVM(loss="squared", constraint=Box(-0.5, 0.5), step=0.25)
    svm.learn([1.0, -2.0], 3.0)  # grad = 2 (0 - 3) x = (-6, 12); v = (1.5, -3) -> clip
    np.testing.assert_array_equal(svm.w_, [0.5, -0.5])
    lasso = OnlineLassoL1Ball(radius=1.0, step=0.25)
    lasso.learn([1.0, 0.5, 0.0], 2.0)  # grad = -4 x; v = (1, 0.5, 0) -> L1 projection theta = 0.25
    np.testing.assert_allclose(lasso.w_, [0.75, 0.25, 0.0], atol=1e-15)


def test_proximal_lasso_soft_threshold_step():
    lasso = OnlineLasso(alpha=1.0, radius=10.0, step=0.5)
    lasso.learn([1.0, 0.1, -1.0], 2.0)  # v = f - eta 2 (0 - 2) x = 2 x = (2, 0.2, -2); S_{0.5}
    np.testing.assert_allclose(lasso.w_, [1.5, 0.0, -1.5], atol=1e-15)
    assert lasso.sparsity() == pytest.approx(1 / 3)
    # the round's loss counts the penalty at the played point: (1.5 + 0.1*0 ... ) check the second round
    lasso.learn([1.0, 0.0, 0.0], 1.0)
    assert lasso.cumulative_loss_ == pytest.approx(4.0 + (1.5 - 1.0) ** 2 + 1.0 * 3.0)


def test_ridge_step_includes_penalty_gradient():
    ridge = OnlineRidgeRegression(alpha=0.5, radius=10.0, step=0.1)
    ridge.learn([1.0, 0.0], 1.0)  # f = 0.2 x = (0.2, 0)
    ridge.learn([0.0, 1.0], 0.0)  # grad = 2 * 0 * x + 0.5 f = (0.1, 0) -> f = (0.19, 0)
    np.testing.assert_allclose(ridge.w_, [0.19, 0.0], atol=1e-15)
    assert ridge.cumulative_loss_ == pytest.approx(1.0 + 0.25 * 0.04)


def test_logistic_and_smoothed_hinge_slopes_match_nolo_losses():
    from nolo.losses import get_loss
    from nolo.learners.convex._loops import loss_and_slope

    for name, code, kw in (("logistic", 1, {}), ("smoothed_hinge", 3, {"s": 2.0}), ("hinge", 0, {}),
                           ("squared", 2, {}), ("absolute", 4, {})):
        loss = get_loss(name, **kw)
        for m in (-3.0, -0.4, 0.3, 0.999, 2.5):
            for y in ((-1.0, 1.0) if loss.kind == "classification" else (0.7, -1.2)):
                v, g = loss_and_slope(code, kw.get("s", 1.0), m, y)
                assert v == pytest.approx(float(loss.loss(m, y)), rel=1e-13, abs=1e-15)
                assert g == pytest.approx(float(loss.grad_margin(m, y)), rel=1e-13, abs=1e-15)


def test_trace_norm_two_rounds_hand_worked():
    ogd = TraceNormOGD(n_rows=3, n_cols=3, radius=1.0, step=0.25)
    played = ogd.learn_stream([0, 0], [0, 1], [2.0, 2.0])
    # round 1: W00 = 0.25 * 2 * 2 = 1 (trace norm 1: inside); round 2: row (1, 1, 0) has sigma = sqrt 2 -> scaled
    np.testing.assert_allclose(ogd.W_[0], [1 / math.sqrt(2), 1 / math.sqrt(2), 0.0], atol=1e-15)
    np.testing.assert_array_equal(played, [4.0, 4.0])
    assert ogd.rank_ == 1 and ogd.n_projections_ == 2


def test_max_entry_clips_the_changed_entry():
    ogd = MaxEntryOGD(n_rows=2, n_cols=2, bound=1.0, loss="absolute", step=0.75)
    np.testing.assert_array_equal(ogd.learn_stream([1, 1, 0], [0, 0, 1], [3.0, 3.0, -0.1]), [3.0, 2.25, 0.1])
    np.testing.assert_array_equal(ogd.W_, [[0.0, -0.75], [1.0, 0.0]])


# -- the learner contract ------------------------------------------------------------------------------
def _linear_learners():
    return [
        OnlineLinearSVM(horizon=300),
        OnlineLinearSVM(loss="logistic", constraint=L1Ball(2.0)),
        OnlineLinearSVM(loss="smoothed_hinge", constraint=Box(-1.0, 1.0), step=0.3),
        OnlineRidgeRegression(alpha=0.1, y_bound=2.0),
        OnlineLasso(alpha=0.05, y_bound=2.0, horizon=300),
        OnlineLassoL1Ball(radius=1.0, y_bound=2.0),
    ]


def _stream(learner, n=300, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / math.sqrt(d)
    y = X @ rng.standard_normal(d)
    if learner._spec()[0].kind == "classification":
        y = np.where(y >= 0, 1.0, -1.0)
    else:
        y = np.clip(y, -2, 2)
    return X, y


@pytest.mark.parametrize("idx", range(6))
def test_stream_equals_per_round_bitwise_and_resume(idx, tmp_path):
    a, b, c = _linear_learners()[idx], _linear_learners()[idx], _linear_learners()[idx]
    X, y = _stream(a)
    played = a.learn_stream(X, y)
    per = []
    for t in range(150):
        b.learn(X[t], y[t])
        per.append(b.stats_[0])
    path = b.save(tmp_path / "m")
    r = Learner.load(path)
    r.learn_stream(X[150:], y[150:])
    np.testing.assert_array_equal(r.w_, a.w_)
    np.testing.assert_array_equal(r.average_, a.average_)
    np.testing.assert_array_equal(r.stats_, a.stats_)
    assert np.cumsum(played[:150]).tolist() == per  # sequential sums: bitwise
    c.learn_stream(X[:100], y[:100])
    c.learn_stream(X[100:], y[100:])
    np.testing.assert_array_equal(c.w_, a.w_)


def test_matrix_stream_equals_per_round_and_resume(tmp_path):
    r = make_low_rank_ratings(7, 9, rank=2, n_ratings=120, seed=1)
    for make in (lambda: TraceNormOGD(7, 9, radius=5.0, step=0.3, projection_every=4),
                 lambda: TraceNormOGD(7, 9, radius=5.0, loss="absolute", y_bound=3.0),
                 lambda: MaxEntryOGD(7, 9, bound=2.0, step=0.2)):
        a, b = make(), make()
        a.learn_stream(r.users, r.items, r.ratings)
        for t in range(61):
            b.learn((int(r.users[t]), int(r.items[t])), float(r.ratings[t]))
        c = Learner.load(b.save(tmp_path / "mat"))
        c.learn_stream(r.users[61:], r.items[61:], r.ratings[61:])
        np.testing.assert_array_equal(c.W_, a.W_)
        np.testing.assert_array_equal(c.stats_, a.stats_)
        assert (c.pending_, c.rank_, c.n_projections_) == (a.pending_, a.rank_, a.n_projections_)


def test_bad_input_names_the_parameter_and_keeps_state():
    svm = OnlineLinearSVM(step=0.5)
    svm.learn([1.0, 0.0], 1.0)
    w, t = svm.w_.copy(), svm.t_
    for x, y, match in (([1.0, np.nan], 1.0, "x"), ([1.0, 0.0, 0.0], 1.0, "features"), ([1.0, 0.0], 0.5, "y"),
                        ([[1.0, 0.0]], 1.0, "x")):
        with pytest.raises(ParameterError, match=match):
            svm.learn(x, y)
    with pytest.raises(ParameterError, match="y"):
        svm.learn_stream([[1.0, 0.0], [0.0, 1.0]], [1.0, 2.0])
    np.testing.assert_array_equal(svm.w_, w)
    assert svm.t_ == t
    with pytest.raises(ParameterError, match="loss"):
        OnlineLinearSVM(loss="exponential").learn([1.0], 1.0)
    with pytest.raises(ParameterError, match="y_bound"):
        OnlineRidgeRegression().learn([1.0], 1.0)
    with pytest.raises(ParameterError, match="alpha"):
        OnlineLasso(alpha=-1.0, step=0.1).learn([1.0], 1.0)
    with pytest.raises(ParameterError, match="contain 0"):
        OnlineLinearSVM(constraint=Box(0.5, 1.0), step=0.1).learn([1.0], 1.0)
    with pytest.raises(ValueError, match="radius"):
        OnlineLassoL1Ball().set_params(radius=0.0)
    m = TraceNormOGD(3, 3, radius=1.0, step=0.1)
    m.learn((0, 0), 1.0)
    W = m.W_.copy()
    for x in ((3, 0), (0, -1), (0,), "ab"):
        with pytest.raises(ParameterError):
            m.learn(x, 1.0)
    with pytest.raises(ParameterError, match="y"):
        m.learn_stream([0, 1], [0, 1], [1.0, np.inf])
    # float cells: whole numbers inside the matrix are cells; past it, infinite or fractional they are refused
    # (the float path used to skip the range check: 3.0 indexed nothing valid, -inf became an IndexError)
    for rows in ([0.0, 3.0], [0.0, np.inf], [-np.inf, 0.0], [0.0, 1.5], [0.0, np.nan]):
        with pytest.raises(ParameterError, match="rows"):
            m.learn_stream(rows, [0, 1], [1.0, 1.0])
        with pytest.raises(ParameterError, match="rows"):
            m.predict(rows, [0, 1])
    with pytest.raises(ParameterError, match="y"):
        m.learn((0, 0), [1.0])  # one round's rating is one number
    np.testing.assert_array_equal(m.W_, W)
    assert m.predict([0.0, 2.0], [0.0, 2.0]).tolist() == m.W_[[0, 2], [0, 2]].tolist()
    with pytest.raises(ParameterError, match="projection_every"):
        TraceNormOGD(3, 3, projection_every=0, step=0.1).learn((0, 0), 1.0)


def test_numerical_failure_commits_nothing():
    ridge = OnlineRidgeRegression(alpha=0.0, radius=1e308, step=1e150)
    ridge.learn([1.0], 1.0)
    w, t = ridge.w_.copy(), ridge.t_
    with pytest.raises(NumericalError):
        ridge.learn_stream([[1.0], [1e10], [1e10]], [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(ridge.w_, w)
    assert ridge.t_ == t
    m = MaxEntryOGD(2, 2, bound=1e308, step=1e300)
    m.learn((0, 0), 1.0)
    W = m.W_.copy()
    with pytest.raises(NumericalError):
        m.learn_stream([1, 0, 0], [1, 0, 0], [1.0, 1e300, 1e300])
    np.testing.assert_array_equal(m.W_, W)
    assert m.t_ == 1


def test_predict_does_not_change_state():
    svm = OnlineLinearSVM(step=0.5)
    with pytest.raises(ParameterError, match="learn"):
        svm.predict([[1.0, 0.0]])
    svm.learn([1.0, 0.0], 1.0)
    state = svm._get_state()
    svm.predict([[1.0, 2.0]]), svm.predict([[1.0, 2.0]], average=True)
    assert all(np.array_equal(v, svm._get_state()[k]) for k, v in state.items())


# -- the notes' step and bound -----------------------------------------------------------------------
def test_default_step_is_the_notes_R_over_B_sqrt_n():
    svm = OnlineLinearSVM(constraint=L2Ball(2.0), x_bound=3.0, horizon=100)
    rule = svm.step_rule(4)
    assert isinstance(rule, TheoryStep) and rule(1) == pytest.approx(2.0 / (3.0 * 10.0))
    ridge = OnlineRidgeRegression(alpha=0.5, radius=2.0, x_bound=1.0, y_bound=1.0)
    assert ridge.gradient_bound(3) == pytest.approx(2 * (2 + 1) + 0.5 * 2)
    assert OnlineLassoL1Ball(radius=1.5, y_bound=1.0).comparator_radius(7) == 1.5
    assert OnlineLinearSVM(constraint=Box([-1.0, -2.0], [3.0, 0.5]), step=1.0).comparator_radius(2) == pytest.approx(
        math.sqrt(9 + 4))


def test_hinge_regret_below_claim1_and_sqrt_growth():
    """Regret <= sqrt(T) (Claim 1) at every T, and growth like sqrt(T): log-log slope <= 0.6 over T = 500..8000
    (16x; measured 0.48, a linear regret gives 1).  T = 16,000 is left out: its exact hindsight solve took 80 % of
    the test's time and decides nothing the 16x span does not."""
    rng = np.random.default_rng(5)
    d = 8
    w_star = rng.standard_normal(d)
    X = rng.standard_normal((16000, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ w_star > 0, 1.0, -1.0)
    y[rng.random(16000) < 0.1] *= -1
    Ts, regrets = [500, 1000, 2000, 4000, 8000], []
    for T in Ts:
        svm = OnlineLinearSVM(horizon=T)
        played = svm.learn_stream(X[:T], y[:T])
        sol = solve_hindsight(X[:T], y[:T], "hinge", L2Ball(1.0), tol=1e-7)
        reg = played.sum() - sol.total_loss + sol.gap
        assert reg <= svm.regret_bound(worst_case=True) == pytest.approx(math.sqrt(T))
        assert reg <= svm.regret_bound() + 1e-9
        regrets.append(reg)
    assert plots.fit_slope(Ts, regrets) <= 0.6


def test_lasso_iterate_sparse_where_target_is():
    rng = np.random.default_rng(0)
    d = 10
    w_star = np.r_[0.7, -0.6, 0.4, np.zeros(d - 3)]
    w_star /= np.linalg.norm(w_star)
    X = rng.standard_normal((20000, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = X @ w_star + rng.uniform(-0.05, 0.05, 20000)
    lasso = OnlineLasso(alpha=0.05, radius=1.0, y_bound=1.05, horizon=20000)
    ridge = OnlineRidgeRegression(alpha=0.0, radius=1.0, y_bound=1.05, horizon=20000)
    zeros_l, zeros_r = [], []
    for chunk in np.array_split(np.arange(20000), 40):
        lasso.learn_stream(X[chunk], y[chunk])
        ridge.learn_stream(X[chunk], y[chunk])
        zeros_l.append(np.mean(lasso.w_[3:] == 0))
        zeros_r.append(np.mean(ridge.w_[3:] == 0))
    assert np.all(lasso.w_[:3] != 0)
    assert np.mean(zeros_l[20:]) >= 0.25 and max(zeros_r) == 0.0
    assert np.abs(lasso.w_[3:]).sum() <= 0.05 * np.abs(lasso.w_).sum()
    sol = composite_hindsight(X, y, "squared", L2Ball(1.0), l1=0.05)
    assert np.all(sol.w[3:] == 0)  # the hindsight lasso is exactly sparse on the null coordinates


def test_trace_norm_beats_per_user_mean_on_low_rank_stream():
    r = make_low_rank_ratings(30, 40, rank=2, n_ratings=8000, noise=0.1, seed=3)
    train, test = r.split(6000)
    tau = float(np.linalg.svd(r.truth, compute_uv=False).sum())
    ogd = TraceNormOGD(30, 40, radius=tau, step=0.5, projection_every=5)
    ogd.learn_stream(train.users, train.items, train.ratings)
    rmse = np.sqrt(np.mean((ogd.predict(test.users, test.items) - test.ratings) ** 2))
    cnt = np.bincount(train.users, minlength=30)
    um = np.bincount(train.users, train.ratings, 30) / np.maximum(cnt, 1)
    base = np.sqrt(np.mean((um[test.users] - test.ratings) ** 2))
    assert rmse < 0.5 * base
    assert np.linalg.svd(ogd.W_, compute_uv=False).sum() <= tau * (1 + 1e-9) + 0.5 * 2 * 5 * 10


def test_params_config_roundtrip_and_rejected_set_params_keeps_old_value():
    import json

    from sklearn.base import clone

    from nolo._config import Configurable

    for m in (OnlineLinearSVM(loss="logistic", constraint=L1Ball(2.0), step=0.1),
              OnlineLasso(alpha=0.2, y_bound=1.0, horizon=10), TraceNormOGD(4, 5, radius=2.0, step=0.1),
              MaxEntryOGD(3, 3, bound=1.0, loss="absolute")):
        cfg = json.loads(json.dumps(m.to_config()))
        back = Configurable.from_config(cfg)
        assert type(back) is type(m) and back.to_config() == m.to_config()
        assert clone(m).to_config() == m.to_config()
    lasso = OnlineLasso(alpha=0.2, y_bound=1.0)
    with pytest.raises(ValueError, match="alpha"):
        lasso.set_params(alpha=-0.5)
    assert lasso.alpha == 0.2
    svm = OnlineLinearSVM(step=0.5)
    svm.learn([1.0, 0.0], 1.0)
    svm.set_params(step=0.25)  # the cached plan follows a parameter change
    svm.learn([0.0, 1.0], 1.0)
    np.testing.assert_allclose(svm.w_, [0.5, 0.25])
