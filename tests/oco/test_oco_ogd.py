"""ProjectedOGD (OCO notes, lecture 14, section 3): hand-worked steps, batched paths, persistence, validation."""

import numpy as np
import pytest

from nolo import NumericalError, ParameterError
from nolo.learners.base import Learner
from nolo.losses import get_loss
from nolo.learners import ProjectedOGD
from nolo.oco import Box, ConstantStep, InverseSqrtStep, L2Ball, Unconstrained, online_to_batch

S5 = np.sqrt(5.0)


def test_two_hand_worked_rounds_with_ball_projection():
    # squared loss l(a) = a^2 (CSS10 Example 1), eta = 0.1, ball of radius 1, w_1 = 0
    m = ProjectedOGD(loss="squared", step=ConstantStep(0.1), constraint=L2Ball(1.0))
    m.learn([1.0, 2.0], 3.0)  # grad = 2(0-3)[1,2] = [-6,-12]; w - 0.1 g = [0.6, 1.2], norm sqrt(1.8) > 1
    np.testing.assert_allclose(m.w_, [1 / S5, 2 / S5], rtol=1e-15)
    m.learn([1.0, -1.0], 0.0)  # margin -1/sqrt5, grad -2/sqrt5 [1,-1]; w = [1.2, 1.8]/sqrt5, norm < 1: no projection
    np.testing.assert_allclose(m.w_, [1.2 / S5, 1.8 / S5], rtol=1e-15)
    np.testing.assert_allclose(m.average_, [0.5 / S5, 1.0 / S5], rtol=1e-15)  # mean of the played w_1, w_2
    assert m.t_ == 2 and m.cumulative_loss_ == pytest.approx(9.0 + 0.2, rel=1e-15)
    np.testing.assert_allclose(m.predict([[1.0, 1.0]]), [3.0 / S5], rtol=1e-15)
    np.testing.assert_allclose(m.predict([[1.0, 1.0]], average=True), [1.5 / S5], rtol=1e-15)


def test_box_projection_step_and_first_iterate_is_projection_of_zero():
    m = ProjectedOGD(loss="squared", step=0.1, constraint=Box(-0.5, 0.5)).learn([1.0, 2.0], 3.0)
    np.testing.assert_array_equal(m.w_, [0.5, 0.5])
    m2 = ProjectedOGD(constraint=Box(1.0, [2.0, 3.0])).initialize(2)
    np.testing.assert_array_equal(m2.w_, [1.0, 1.0])


def test_gradient_step_on_a_linear_loss():
    m = ProjectedOGD(step=ConstantStep(1.0), constraint=L2Ball(1.0))
    m.gradient_step([3.0, 4.0])
    np.testing.assert_allclose(m.w_, [-0.6, -0.8], rtol=1e-15)
    m.gradient_step([0.0, 0.5])
    np.testing.assert_allclose(m.w_, [-0.6, -1.3] / np.hypot(0.6, 1.3), rtol=1e-15)
    np.testing.assert_allclose(m.average_, [-0.3, -0.4], rtol=1e-15)


@pytest.mark.parametrize("constraint", [L2Ball(0.7), Box(-0.2, [0.3, 0.1, 0.5, 1.0]), Unconstrained()])
def test_play_linear_equals_gradient_steps(constraint):
    rng = np.random.default_rng(1)
    G = rng.standard_normal((60, 4))
    a = ProjectedOGD(step=InverseSqrtStep(0.3), constraint=constraint)
    b = ProjectedOGD(step=InverseSqrtStep(0.3), constraint=constraint).initialize(4)
    played = a.play_linear(G[:25])
    played = np.concatenate([played, a.play_linear(G[25:])])
    expect = []
    for g in G:
        expect.append(g @ b.w_)
        b.gradient_step(g)
    np.testing.assert_allclose(played, expect, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.w_, b.w_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.average_, b.average_, rtol=1e-12, atol=1e-14)
    assert a.t_ == b.t_ == 60


@pytest.mark.parametrize("loss_name", ["squared", "logistic", "hinge"])
def test_learn_many_equals_learn(loss_name):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(40)
    if get_loss(loss_name).kind == "classification":
        y = np.where(y > 0, 1.0, -1.0)
    a = ProjectedOGD(loss=loss_name, step=InverseSqrtStep(0.2), constraint=L2Ball(1.5))
    b = ProjectedOGD(loss=loss_name, step=InverseSqrtStep(0.2), constraint=L2Ball(1.5))
    played = a.learn_many(X, y)
    for x_t, y_t in zip(X, y):
        b.learn(x_t, y_t)
    np.testing.assert_allclose(a.w_, b.w_, rtol=1e-13)
    np.testing.assert_allclose(a.average_, b.average_, rtol=1e-13)
    assert played.sum() == pytest.approx(b.cumulative_loss_, rel=1e-13)


def test_save_load_mid_stream_resumes_identically(tmp_path):
    rng = np.random.default_rng(4)
    X, y = rng.standard_normal((80, 5)), rng.standard_normal(80)
    kw = dict(loss=get_loss("squared"), step=InverseSqrtStep(0.1), constraint=Box(-0.3, 0.3), seed=5)
    a, b = ProjectedOGD(**kw), ProjectedOGD(**kw)
    a.learn_many(X[:40], y[:40])
    b.learn_many(X[:40], y[:40])
    c = Learner.load(b.save(tmp_path / "ogd"))
    assert type(c) is ProjectedOGD and isinstance(c.constraint, Box) and c.t_ == 40
    a.learn_many(X[40:], y[40:])
    c.learn_many(X[40:], y[40:])
    np.testing.assert_array_equal(a.w_, c.w_)
    np.testing.assert_array_equal(a.average_, c.average_)
    np.testing.assert_array_equal(a.predict(X), c.predict(X))
    assert a.cumulative_loss_ == c.cumulative_loss_


def test_online_to_batch_returns_the_average_of_played_iterates():
    rng = np.random.default_rng(6)
    X, y = rng.standard_normal((30, 2)), rng.standard_normal(30)
    m = ProjectedOGD(step=ConstantStep(0.05), constraint=L2Ball(1.0))
    ref = ProjectedOGD(step=ConstantStep(0.05), constraint=L2Ball(1.0)).initialize(2)
    played_iterates = []
    for x_t, y_t in zip(X, y):
        played_iterates.append(ref.w_.copy())
        ref.learn(x_t, y_t)
    np.testing.assert_allclose(online_to_batch(m, X, y), np.mean(played_iterates, axis=0), rtol=1e-13)


def test_online_to_batch_excess_risk_decreases_on_iid_data():
    # x ~ N(0, I_d), y = <w*, x> + N(0, s^2): the squared-loss risk is ||w - w*||^2 + s^2 exactly
    d, s = 5, 0.5
    w_star = np.array([0.6, -0.4, 0.3, 0.2, -0.1])
    excess = {n: [] for n in (100, 1000, 10000)}
    for seed in range(3):
        rng = np.random.default_rng(100 + seed)
        X = rng.standard_normal((10000, d))
        y = X @ w_star + s * rng.standard_normal(10000)
        m = ProjectedOGD(step=InverseSqrtStep(0.1), constraint=L2Ball(2.0))
        done = 0
        for n in excess:
            m.learn_many(X[done:n], y[done:n])
            done = n
            excess[n].append(float(np.sum((m.average_ - w_star) ** 2)))
    means = [np.mean(v) for v in excess.values()]
    assert means[0] > means[1] > means[2]
    assert means[2] < 0.01 * means[0]


def test_validation_names_parameters_and_leaves_state_unchanged():
    with pytest.raises(ParameterError, match="loss must be"):
        ProjectedOGD(loss=3.0).initialize(2)
    with pytest.raises(ParameterError, match="step must be"):
        ProjectedOGD(step="big").initialize(2)
    with pytest.raises(ParameterError, match="eta must be"):
        ProjectedOGD(step=ConstantStep(-1.0)).initialize(2)
    with pytest.raises(ParameterError, match="constraint must be"):
        ProjectedOGD(constraint="ball").initialize(2)
    with pytest.raises(ParameterError, match="radius"):
        ProjectedOGD(constraint=L2Ball(0.0)).initialize(2)
    with pytest.raises(ParameterError, match="low must be a scalar or have 2 entries"):
        ProjectedOGD(constraint=Box([0.0, 0.0, 0.0], 1.0)).initialize(2)
    m = ProjectedOGD(loss="logistic", step=0.1, constraint=L2Ball(1.0)).learn([1.0, 0.5], 1.0)
    w, avg, t = m.w_.copy(), m.average_.copy(), m.t_
    for args, match in ((([1.0, 0.5], 0.5), "y must be -1 or \\+1"), (([1.0, np.nan], 1.0), "x must contain"),
                        (([1.0, 0.5, 2.0], 1.0), "x must have 2 features")):
        with pytest.raises(ParameterError, match=match):
            m.learn(*args)
    with pytest.raises(ParameterError, match="y must have 2 entries"):
        m.learn_many([[1.0, 0.0], [0.0, 1.0]], [1.0])
    with pytest.raises(ParameterError, match="gradient must have 2 features"):
        m.gradient_step([1.0])
    with pytest.raises(ParameterError, match="average must be True or False"):
        m.predict([[1.0, 0.0]], average="yes")
    with pytest.raises(ParameterError, match="step must be"):
        m.set_params(step=-2.0)
    assert m.step == 0.1
    np.testing.assert_array_equal(m.w_, w)
    np.testing.assert_array_equal(m.average_, avg)
    assert m.t_ == t
    m.predict([[3.0, 4.0]], average=True)
    np.testing.assert_array_equal(m.w_, w)


def test_diverging_step_raises_numerical_error_without_committing():
    m = ProjectedOGD(loss="squared", step=ConstantStep(1e200), constraint=Unconstrained())
    m.learn([1e100], 1.0)  # w_2 = 2e300, still finite
    w, t = m.w_.copy(), m.t_
    with pytest.raises(NumericalError):
        m.learn([1e100], 1.0)  # margin 2e400 overflows
    with pytest.raises(NumericalError):
        m.learn_many([[1e100], [1e100]], [1.0, 1.0])
    with pytest.raises(NumericalError):
        m.gradient_step([1e300])
    np.testing.assert_array_equal(m.w_, w)
    assert m.t_ == t


def test_compiled_squared_path_is_accurate_for_large_targets():
    rng = np.random.default_rng(12)
    X = rng.standard_normal((50, 3))
    y = 1e3 + X @ [1.0, 2.0, 3.0]
    a = ProjectedOGD(step=InverseSqrtStep(1e-3), constraint=Unconstrained())
    b = ProjectedOGD(step=InverseSqrtStep(1e-3), constraint=Unconstrained()).initialize(3)
    played = a.learn_many(X, y)
    expect = []
    for x_t, y_t in zip(X, y):
        expect.append((b.w_ @ x_t - y_t) ** 2)
        b.learn(x_t, y_t)
    np.testing.assert_allclose(played, expect, rtol=1e-12)
    np.testing.assert_allclose(a.w_, b.w_, rtol=1e-12)


def test_default_parameters_persist_and_seed_is_validated(tmp_path):
    m = ProjectedOGD().learn([1.0, 0.0], 0.5)
    c = Learner.load(m.save(tmp_path / "default"))
    assert c.get_params() == m.get_params() and c.loss == "squared" and c.step is None and c.constraint is None
    np.testing.assert_array_equal(c.w_, m.w_)
    with pytest.raises(ParameterError, match="seed"):
        ProjectedOGD(seed=-1).initialize(2)


def test_online_to_batch_loops_over_learn_when_there_is_no_batch_path():
    class RowByRow:
        def __init__(self):
            self.inner = ProjectedOGD(step=0.1, constraint=L2Ball(1.0))

        def learn(self, x, y):
            self.inner.learn(x, y)

        @property
        def average_(self):
            return self.inner.average_

    rng = np.random.default_rng(13)
    X, y = rng.standard_normal((20, 2)), rng.standard_normal(20)
    ref = ProjectedOGD(step=0.1, constraint=L2Ball(1.0))
    ref.learn_many(X, y)
    np.testing.assert_allclose(online_to_batch(RowByRow(), X, y), ref.average_, rtol=1e-13)
    with pytest.raises(ParameterError, match="learner must be"):
        online_to_batch(object(), X, y)
