"""The one compiled projected (composite) step of nolo.oco.projected_step: hand-worked cases, the overflow path,
the log-domain ball projection of the kernel learners, and the OCO examples' stream loop against it bit for bit."""

import math

import numpy as np
import pytest

from nolo.learners.convex._loops import linear_ogd_loop, loss_and_slope
from nolo.oco import Box, L1Ball, L2Ball, Unconstrained
from nolo.oco.projected_step import (
    ball_log_scale,
    ball_scale,
    composite_step,
    overflowed_norm_step,
    project_inplace,
    projected_step,
)


def _step(w, x, c, shrink, lam, constraint):
    w = np.array(w, dtype=np.float64)
    ok = composite_step(w, np.array([x], dtype=np.float64), 0, c, shrink, lam, *constraint.compiled_spec(w.shape[0]))
    return ok, w


def test_composite_step_hand_worked():
    # ball: (1, 0) - 1 * (-2, -2) = (3, 2); ||.|| = sqrt(13) > 1 -> (3, 2)/sqrt(13)
    ok, w = _step([1.0, 0.0], [-2.0, -2.0], 1.0, 1.0, 0.0, L2Ball(1.0))
    assert ok and np.allclose(w, np.array([3.0, 2.0]) / math.sqrt(13.0), rtol=0, atol=1e-15)
    # shrink 0.5 and soft-threshold 1: 0.5 * (4, -1, 0.25) - 0 = (2, -0.5, 0.125) -> (1, 0, 0), inside the ball of 5
    ok, w = _step([4.0, -1.0, 0.25], [0.0, 0.0, 0.0], 0.0, 0.5, 1.0, L2Ball(5.0))
    assert ok and w.tolist() == [1.0, 0.0, 0.0]
    # box [-0.3, 0.5] after the step (1, -1) - 0.5 * (-1, 1) = (1.5, -1.5) -> (0.5, -0.3)
    ok, w = _step([1.0, -1.0], [-1.0, 1.0], 0.5, 1.0, 0.0, Box(-0.3, 0.5))
    assert ok and w.tolist() == [0.5, -0.3]
    # L1 ball of radius 2 after the step (3, -1, 0.5): theta = 1 -> (2, 0, 0)
    ok, w = _step([0.0, 0.0, 0.0], [-3.0, 1.0, -0.5], 1.0, 1.0, 0.0, L1Ball(2.0))
    assert ok and w.tolist() == [2.0, 0.0, 0.0]
    # projected_step is the composite step without shrink or threshold
    w = np.zeros(2)
    assert projected_step(w, np.array([-3.0, -4.0]), 1.0, *L2Ball(1.0).compiled_spec(2))
    assert np.allclose(w, [0.6, 0.8], rtol=0, atol=1e-15)


def test_non_finite_step_is_refused_and_overflowing_norm_is_projected():
    ok, _ = _step([0.0, 0.0], [np.nan, 1.0], 1.0, 1.0, 0.0, L2Ball(1.0))
    assert not ok
    ok, _ = _step([0.0], [1e308], -10.0, 1.0, 0.0, Unconstrained())  # 1e309 overflows
    assert not ok
    # entries 2e300 are finite but their squares overflow: the ball still projects exactly, a box and R^d keep them
    ok, w = _step([0.0, 0.0], [-1e300, -1e300], 2.0, 1.0, 0.0, L2Ball(1.0))
    assert ok and np.allclose(w, [math.sqrt(0.5)] * 2, rtol=1e-15)
    ok, w = _step([0.0, 0.0], [-1e300, 1e300], 2.0, 1.0, 0.0, Unconstrained())
    assert ok and w.tolist() == [2e300, -2e300]
    ok, w = _step([0.0, 0.0], [-1e300, 1e300], 2.0, 1.0, 0.0, Box(-1.0, 1.0))
    assert ok and w.tolist() == [1.0, -1.0]


def test_project_inplace_matches_the_sets_projection():
    rng = np.random.default_rng(0)
    for constraint in (L2Ball(0.7), Box(-0.2, 0.4), L1Ball(0.9), Unconstrained()):
        for _ in range(20):
            v = 2.0 * rng.standard_normal(5)
            w = v.copy()
            project_inplace(w, *constraint.compiled_spec(5))
            np.testing.assert_allclose(w, constraint.project(v), rtol=1e-14, atol=1e-15)


def test_ball_log_scale_is_the_ball_projection_in_the_log_domain():
    for nrm2, bound in ((16.0, 4.0), (3.0, 2.0), (1e-300, 1e-310), (0.5, 2.0)):
        log_s, sq = ball_log_scale(nrm2, bound)
        s, sq2 = ball_scale(nrm2, math.sqrt(bound))
        assert math.isclose(math.exp(log_s), s, rel_tol=1e-14)
        assert math.isclose(sq, sq2, rel_tol=1e-14)
    assert ball_log_scale(0.5, 2.0) == (0.0, 0.5)


@pytest.mark.parametrize("loss_code", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("constraint", [L2Ball(0.5), Box(-0.2, 0.3), L1Ball(0.6), Unconstrained()])
def test_stream_loop_step_is_composite_step_bit_for_bit(loss_code, constraint):
    """linear_ogd_loop composes composite_step's pieces inline: every round equals the function bit for bit."""
    rng = np.random.default_rng(loss_code)
    n, d = 60, 7
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    etas = 0.7 / np.sqrt(np.arange(1.0, n + 1))
    spec = constraint.compiled_spec(d)
    for l2, l1 in ((0.0, 0.0), (0.3, 0.0), (0.0, 0.05), (0.2, 0.1)):
        w_loop, avg, acc, played = np.zeros(d), np.zeros(d), np.zeros(4), np.empty(n)
        w_ref = np.zeros(d)
        for i in range(n):
            assert linear_ogd_loop(X[i:i + 1], y[i:i + 1], etas[i:i + 1], w_loop, avg, i, loss_code, 2.0, *spec,
                                   l2, l1, played[i:i + 1], acc) == 1
            m = 0.0
            for j in range(d):
                m += w_ref[j] * X[i, j]
            _, slope = loss_and_slope(loss_code, 2.0, m, y[i])
            assert composite_step(w_ref, X, i, etas[i] * slope, 1.0 - etas[i] * l2, etas[i] * l1, *spec)
            assert w_loop.tobytes() == w_ref.tobytes(), (i, l2, l1)


@pytest.mark.parametrize("module", ["nolo.oco.projections", "nolo.oco.hindsight", "nolo.oco.regret"])
def test_oco_math_module_examples_run(module):
    """The examples of the projections and solvers that moved into nolo.oco from the OCO examples."""
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0


def test_an_unknown_code_is_refused_not_run_unprojected():
    """A projection or loss code outside the tables raises instead of falling through to "unconstrained" (or to the
    last loss of the table)."""
    w, X, lo, hi = np.zeros(2), np.ones((1, 2)), np.zeros(2), np.ones(2)
    with pytest.raises(ValueError, match="unknown projection code"):
        composite_step(w, X, 0, 1.0, 1.0, 0.0, 9, 1.0, lo, hi)
    with pytest.raises(ValueError, match="unknown projection code"):
        overflowed_norm_step(np.array([1e200, 1e200]), 9, 1.0)
    with pytest.raises(ValueError, match="unknown loss code"):
        loss_and_slope(9, 1.0, 0.5, 1.0)
    with pytest.raises(ValueError, match="unknown projection code"):
        linear_ogd_loop(X, np.ones(1), np.ones(1), w, np.zeros(2), 0, 2, 1.0, 9, 1.0, lo, hi, 0.0, 0.0, np.empty(1),
                        np.zeros(4))
