"""Projections and proximal maps of the OCO notes' examples: hand-worked cases and references."""

import numpy as np
import pytest
from scipy import optimize

from nolo import ParameterError
from nolo.oco import (
    L1Ball,
    L2Ball,
    composite_hindsight,
    max_entry_hindsight,
    project_l1_ball,
    project_max_entry,
    project_simplex,
    project_trace_norm_ball,
    soft_threshold,
    trace_norm_hindsight,
)


def _l1_reference(v, r):
    """Projection onto the L1 ball by bisection on theta (sum max(|v| - theta, 0) = r): a slow independent reference."""
    a = np.abs(v)
    if a.sum() <= r:
        return v.copy()
    lo, hi = 0.0, a.max()
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if np.maximum(a - mid, 0).sum() > r:
            lo = mid
        else:
            hi = mid
    return np.sign(v) * np.maximum(a - hi, 0)


def test_l1_projection_hand_worked():
    # |v| = (3, 1, 0.5), r = 2: theta = 1 -> (2, 0, 0)
    np.testing.assert_array_equal(project_l1_ball([3.0, -1.0, 0.5], 2.0), [2.0, 0.0, 0.0])
    # |v| = (2, 2, 1), r = 3: theta = (5 - 3)/3 = 2/3 (1 - 2/3 > 0 keeps all three) -> (4/3, -4/3, 1/3)
    np.testing.assert_allclose(project_l1_ball([2.0, -2.0, 1.0], 3.0), [4 / 3, -4 / 3, 1 / 3], atol=1e-15)
    # |v| = (4, 1, 0.5), r = 2: theta = 2 (1 - (5 - 2)/2 < 0 drops the rest) -> (2, 0, 0)
    np.testing.assert_allclose(project_l1_ball([4.0, 1.0, -0.5], 2.0), [2.0, 0.0, 0.0], atol=1e-15)
    inside = np.array([0.1, -0.2])
    np.testing.assert_array_equal(project_l1_ball(inside, 1.0), inside)


@pytest.mark.parametrize("seed", range(20))
def test_l1_projection_matches_bisection_and_qp(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 40))
    v = rng.standard_normal(d) * rng.uniform(0.1, 5)
    r = float(rng.uniform(0.05, 3))
    w = project_l1_ball(v, r)
    np.testing.assert_allclose(w, _l1_reference(v, r), atol=1e-9)
    assert np.abs(w).sum() <= r + 1e-12
    # optimality: no feasible point is closer (checked against SLSQP on the split form w = p - n, p, n >= 0)
    if d <= 10:
        def obj(z):
            return 0.5 * np.sum((z[:d] - z[d:] - v) ** 2)

        res = optimize.minimize(obj, np.zeros(2 * d), method="SLSQP", bounds=[(0, None)] * (2 * d),
                                constraints=[{"type": "ineq", "fun": lambda z: r - z.sum()}],
                                options={"ftol": 1e-14, "maxiter": 1000})
        assert 0.5 * np.sum((w - v) ** 2) <= res.fun + 1e-8


def test_simplex_projection():
    np.testing.assert_allclose(project_simplex([0.5, 0.5, 2.0], 1.0), [0, 0, 1])
    np.testing.assert_allclose(project_simplex([0.2, 0.2], 1.0), [0.5, 0.5])
    rng = np.random.default_rng(1)
    for _ in range(10):
        v = rng.standard_normal(7)
        w = project_simplex(v, 2.0)
        assert abs(w.sum() - 2.0) < 1e-12 and np.all(w >= 0)
        # KKT: w = max(v - theta, 0) for one theta
        theta = (v - w)[w > 0]
        assert np.ptp(theta) < 1e-12


def test_soft_threshold():
    np.testing.assert_array_equal(soft_threshold([1.5, -0.2, -3.0, 0.5], 0.5), [1.0, 0.0, -2.5, 0.0])
    with pytest.raises(ParameterError, match="lam"):
        soft_threshold([1.0], -1.0)


def _trace_reference(W, tau):
    """min ||X - W||_F^2 s.t. ||X||_* <= tau via the singular values, found by bisection (independent of l1_threshold)."""
    U, s, Vt = np.linalg.svd(W, full_matrices=False)
    if s.sum() <= tau:
        return W
    return (U * _l1_reference(s, tau)) @ Vt


def test_trace_norm_projection_hand_worked_and_random():
    np.testing.assert_allclose(project_trace_norm_ball(np.diag([3.0, 1.0]), 2.0), np.diag([2.0, 0.0]), atol=1e-12)
    # singular values (3, 2), tau = 3 -> theta = 1 -> (2, 1)
    W = np.diag([3.0, 2.0])
    np.testing.assert_allclose(project_trace_norm_ball(W, 3.0), np.diag([2.0, 1.0]), atol=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(10):
        W = rng.standard_normal((6, 9))
        tau = float(rng.uniform(0.5, 8))
        P, rank = project_trace_norm_ball(W, tau, return_rank=True)
        np.testing.assert_allclose(P, _trace_reference(W, tau), atol=1e-10)
        assert np.linalg.svd(P, compute_uv=False).sum() <= tau + 1e-9
        assert rank == np.linalg.matrix_rank(P, tol=1e-10)
        # projection property: <W - P, X - P> <= 0 for X in the ball (random rank-one points tau u v^T)
        for _ in range(5):
            u, v = rng.standard_normal(6), rng.standard_normal(9)
            X = tau * np.outer(u / np.linalg.norm(u), v / np.linalg.norm(v))
            assert np.sum((W - P) * (X - P)) <= 1e-9


def test_max_entry_projection():
    np.testing.assert_array_equal(project_max_entry([[2.0, -0.5], [-4.0, 1.0]], 1.0), [[1.0, -0.5], [-1.0, 1.0]])


def test_l1_ball_constraint_set():
    b = L1Ball(2.0)
    assert b.support([1.0, -3.0]) == 6.0
    np.testing.assert_array_equal(b.argmax_linear([1.0, -3.0]), [0.0, -2.0])
    assert b.contains([1.0, -1.0]) and not b.contains([1.5, -1.0])
    assert b.diameter(3) == 4.0
    with pytest.raises(ParameterError, match="radius"):
        L1Ball(-1.0).project([1.0])


# -- certified hindsight solvers -------------------------------------------------------------------
def test_composite_hindsight_matches_slsqp_and_certificate_bounds_gap():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 4))
    y = X @ np.array([1.0, -0.5, 0.0, 0.0]) + 0.1 * rng.standard_normal(40)
    for constraint, l1, l2 in ((L2Ball(0.8), 0.05, 0.0), (L2Ball(2.0), 0.0, 0.1), (L1Ball(0.7), 0.0, 0.0)):
        sol = composite_hindsight(X, y, "squared", constraint, l1=l1, l2=l2)
        n = X.shape[0]

        def F(w):
            return np.sum((X @ w - y) ** 2) + n * (l2 / 2 * w @ w + l1 * np.abs(w).sum())

        cons = ({"type": "ineq", "fun": lambda w: constraint.radius ** 2 - w @ w} if isinstance(constraint, L2Ball)
                else {"type": "ineq", "fun": lambda w: constraint.radius - np.sqrt(w ** 2 + 1e-16).sum()})
        ref = optimize.minimize(F, np.zeros(4), method="SLSQP", constraints=[cons], options={"ftol": 1e-14})
        assert sol.total_loss <= ref.fun + 1e-5  # SLSQP on the smoothed L1 constraint is feasible only to ~1e-8
        assert abs(sol.total_loss - F(sol.w)) < 1e-9
        assert sol.gap < 1e-6 * max(1, sol.total_loss)
        assert constraint.contains(sol.w, atol=1e-9)


def test_trace_norm_hindsight_certificate():
    rng = np.random.default_rng(0)
    M, N = 6, 7
    Y = rng.standard_normal((M, 2)) @ rng.standard_normal((2, N))
    rows, cols = rng.integers(0, M, 150), rng.integers(0, N, 150)
    y = Y[rows, cols] + 0.1 * rng.standard_normal(150)
    tau = 0.5 * np.linalg.svd(Y, compute_uv=False).sum()
    sol = trace_norm_hindsight(rows, cols, y, (M, N), tau, tol=1e-9)
    assert np.linalg.svd(sol.w, compute_uv=False).sum() <= tau + 1e-8
    F = lambda W: float(np.sum((W[rows, cols] - y) ** 2))  # noqa: E731
    assert abs(F(sol.w) - sol.total_loss) < 1e-8 * F(sol.w)
    assert sol.gap <= 1e-9 * sol.total_loss * 10
    # no random feasible point beats it
    for _ in range(50):
        P = project_trace_norm_ball(sol.w + 0.1 * rng.standard_normal((M, N)), tau)
        assert F(P) >= sol.total_loss - 1e-9


def test_max_entry_hindsight_exact():
    sol = max_entry_hindsight([0, 0, 0, 1], [1, 1, 1, 0], [0.0, 1.0, 5.0, -9.0], (2, 2), 2.0, "absolute")
    np.testing.assert_array_equal(sol.w, [[0.0, 1.0], [-2.0, 0.0]])
    assert sol.total_loss == pytest.approx(1 + 0 + 4 + 7)
    sol = max_entry_hindsight([0, 0], [0, 0], [1.0, 2.0], (1, 1), 5.0, "squared")
    assert sol.w[0, 0] == 1.5 and sol.total_loss == pytest.approx(0.5)
