"""nolo.oco projections and step rules: exact hand-worked values, support functions, validation."""

import json
import math

import numpy as np
import pytest

from nolo import ParameterError
from nolo._config import Configurable
from nolo.oco import Box, ConstantStep, InverseSqrtStep, L2Ball, TheoryStep, Unconstrained
from nolo.oco.steps import check_step


def test_l2ball_projection_hand_worked():
    ball = L2Ball(2.0)
    np.testing.assert_allclose(ball.project([3.0, 4.0]), [1.2, 1.6], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(ball.project([0.6, -0.8]), [0.6, -0.8])  # inside: unchanged
    np.testing.assert_array_equal(ball.project([0.0, 0.0]), [0.0, 0.0])
    assert ball.contains([1.2, 1.6]) and not ball.contains([1.2, 1.7])
    assert ball.diameter(7) == 4.0
    assert ball.support([3.0, 4.0]) == 10.0
    np.testing.assert_allclose(ball.argmax_linear([3.0, 4.0]), [1.2, 1.6], atol=1e-15)


def test_box_projection_hand_worked_scalar_and_vector_bounds():
    box = Box(low=-1.0, high=[1.0, 2.0, 3.0])
    np.testing.assert_array_equal(box.project([-5.0, 1.5, 7.0]), [-1.0, 1.5, 3.0])
    assert box.contains([-1.0, 2.0, 0.0]) and not box.contains([-1.1, 0.0, 0.0])
    assert box.diameter(3) == pytest.approx(math.sqrt(4 + 9 + 16))
    # support: sum_j max(g_j low_j, g_j high_j)
    assert box.support([1.0, -2.0, 0.5]) == pytest.approx(1.0 + 2.0 + 1.5)
    np.testing.assert_array_equal(box.argmax_linear([1.0, -2.0, 0.5]), [1.0, -1.0, 3.0])
    np.testing.assert_array_equal(Box(0.0, 1.0).project([-2.0, 0.25, 9.0]), [0.0, 0.25, 1.0])


def test_unconstrained():
    u = Unconstrained()
    np.testing.assert_array_equal(u.project([1e9, -3.0]), [1e9, -3.0])
    assert u.contains([1e300]) and u.diameter(3) == math.inf
    assert u.support([0.0, 0.0]) == 0.0 and u.support([0.0, 1.0]) == math.inf


@pytest.mark.parametrize("cset", [L2Ball(1.5), Box(-0.5, [1.0, 2.0, 0.0]), Box(-1.0, 1.0)])
def test_projection_is_the_nearest_point_and_support_is_attained(cset):
    rng = np.random.default_rng(3)
    for _ in range(20):
        v = 3.0 * rng.standard_normal(3)
        p = cset.project(v)
        assert cset.contains(p)
        # variational inequality of the Euclidean projection: <v - p, u - p> <= 0 for all u in the set
        for _ in range(50):
            u = cset.project(3.0 * rng.standard_normal(3))
            assert (v - p) @ (u - p) <= 1e-12
            assert v @ u <= cset.support(v) + 1e-12
        assert v @ cset.argmax_linear(v) == pytest.approx(cset.support(v), rel=1e-12)


def test_constraint_validation_names_parameters():
    with pytest.raises(ParameterError, match="radius"):
        L2Ball(-1.0).project([1.0])
    with pytest.raises(ParameterError, match="low and high"):
        Box([0.0, 0.0], [1.0]).project([0.0, 0.0])
    with pytest.raises(ParameterError, match="low must be <= high"):
        Box(1.0, 0.0).project([0.0])
    with pytest.raises(ParameterError, match="low must be a scalar or have 3 entries"):
        Box([0.0, 0.0], 1.0).project([0.0, 0.0, 0.0])
    with pytest.raises(ParameterError, match="finite"):
        Box(-np.inf, 1.0).project([0.0])
    with pytest.raises(ParameterError, match="w must contain only finite"):
        L2Ball(1.0).project([np.nan])
    with pytest.raises(ParameterError, match="d must be a positive integer"):
        L2Ball(1.0).diameter(0)


def test_constraints_and_steps_config_roundtrip():
    for obj in (L2Ball(2.5), Box([-1.0, 0.0], [1.0, 2.0]), Unconstrained(), ConstantStep(0.3),
                InverseSqrtStep(2.0), TheoryStep(2.0, 4.0, 100)):
        back = Configurable.from_config(json.loads(json.dumps(obj.to_config())))
        assert type(back) is type(obj)
        assert json.dumps(back.to_config()) == json.dumps(obj.to_config())


def test_step_rules_hand_worked():
    assert ConstantStep(0.3)(5) == 0.3
    assert InverseSqrtStep(2.0)(4) == 1.0
    # the OCO notes' Claim 1: eta = R / (B sqrt(n)); bound R B sqrt(n)
    rule = TheoryStep(R=2.0, B=4.0, T=100)
    assert rule(1) == pytest.approx(0.05, rel=1e-15) and rule(100) == rule(1)
    assert rule.regret_bound() == pytest.approx(80.0, rel=1e-15)
    # and the step minimises the proof's bound R^2/(2 eta) + eta n B^2 / 2, whose minimum is R B sqrt(n)
    eta = rule(1)
    assert 4.0 / (2 * eta) + eta * 100 * 16.0 / 2 == pytest.approx(80.0, rel=1e-15)
    np.testing.assert_allclose(InverseSqrtStep(3.0).schedule(4, 3), 3.0 / np.sqrt([4.0, 5.0, 6.0]), rtol=1e-15)
    assert isinstance(check_step(0.2), ConstantStep) and isinstance(check_step(None), InverseSqrtStep)


def test_step_validation_names_parameters():
    with pytest.raises(ParameterError, match="t must be"):
        ConstantStep(0.1)(0)
    with pytest.raises(ParameterError, match="eta must be"):
        ConstantStep(0.0)(1)
    with pytest.raises(ParameterError, match="eta0 must be"):
        InverseSqrtStep(-1.0)(1)
    with pytest.raises(ParameterError, match="R must be"):
        TheoryStep(R=-1.0)(1)
    with pytest.raises(ParameterError, match="B must be"):
        TheoryStep(B=0.0)(1)
    with pytest.raises(ParameterError, match="T must be"):
        TheoryStep(T=0)(1)
    with pytest.raises(ParameterError, match="step must be"):
        check_step("fast")
