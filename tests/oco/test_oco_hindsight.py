"""The best fixed predictor in hindsight: exactness (KKT, multiplier), comparison with independent solvers
(scipy SLSQP, bounded-variable least squares), the interior case, certificates and their failure."""

import numpy as np
import pytest
from scipy import optimize

from nolo import NumericalError, ParameterError
from nolo._config import Configurable
from nolo.losses import get_loss
from nolo.oco import Box, L2Ball, Unconstrained, best_fixed_in_hindsight, solve_hindsight
from nolo.oco.hindsight import frank_wolfe_gap
from nolo.oco.structure import loss_structure


class _HalfSquared(Configurable):
    """A local regression loss 0.5 (m - y)^2 (another scaling than nolo's a^2)."""

    kind = "regression"

    def loss(self, margin, y):
        return 0.5 * (np.asarray(margin) - y) ** 2

    def grad_margin(self, margin, y):
        return np.asarray(margin) - y


class _ClassificationSquared(Configurable):
    """A local classification loss (1 - y m)^2."""

    kind = "classification"

    def loss(self, margin, y):
        return (1.0 - y * np.asarray(margin)) ** 2

    def grad_margin(self, margin, y):
        return -2.0 * y * (1.0 - y * np.asarray(margin))


def _regression(seed, n=60, d=6, noise=0.3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, X @ rng.standard_normal(d) + noise * rng.standard_normal(n)


def _classification(seed, n=60, d=4, flip=0.8):
    X, y = _regression(seed, n, d, noise=flip)
    return X, np.where(y > 0, 1.0, -1.0)


def _slsqp_ball(fun, jac, d, R, start):
    cons = {"type": "ineq", "fun": lambda w: R * R - w @ w, "jac": lambda w: -2.0 * w}
    res = optimize.minimize(fun, start, jac=jac, method="SLSQP", constraints=[cons],
                            options={"ftol": 1e-14, "maxiter": 2000})
    return res.x, res.fun


@pytest.mark.parametrize("seed", range(4))
def test_squared_loss_on_ball_satisfies_kkt_to_machine_precision(seed):
    X, y = _regression(seed)
    R = 0.5  # well inside the unconstrained solution's norm: the constraint is active
    sol = solve_hindsight(X, y, "squared", L2Ball(R))
    w, mu = sol.w, sol.multiplier
    g = 2.0 * X.T @ (X @ w - y)  # gradient of sum (m - y)^2
    assert sol.method == "quadratic" and mu > 0
    assert abs(np.linalg.norm(w) - R) <= 1e-12 * R
    assert np.linalg.norm(g + 2.0 * mu * w) <= 1e-10 * np.linalg.norm(g)  # stationarity with multiplier mu
    assert sol.gap <= 1e-9 * sol.total_loss
    # an independent solver does not find anything better
    f = lambda v: float(np.sum((X @ v - y) ** 2))
    _, ref = _slsqp_ball(f, lambda v: 2.0 * X.T @ (X @ v - y), X.shape[1], R, np.zeros(X.shape[1]))
    assert sol.total_loss <= ref + 1e-9 * abs(ref)
    assert sol.total_loss == pytest.approx(ref, rel=1e-7)
    # no point of the sphere near w does better (local exhaustive check)
    rng = np.random.default_rng(seed)
    for _ in range(200):
        v = w + 1e-3 * rng.standard_normal(w.shape)
        assert f(R * v / np.linalg.norm(v)) >= sol.total_loss - 1e-9


def test_interior_case_is_the_least_squares_solution():
    X, y = _regression(7)
    w_ls = np.linalg.lstsq(X, y, rcond=None)[0]
    sol = solve_hindsight(X, y, "squared", L2Ball(10.0 * np.linalg.norm(w_ls)))
    assert sol.multiplier == 0.0
    np.testing.assert_allclose(sol.w, w_ls, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(solve_hindsight(X, y, "squared", Unconstrained()).w, w_ls, rtol=1e-10, atol=1e-12)


def test_rank_deficient_case_minimum_norm_inside_and_boundary():
    X, y = _regression(9, n=5, d=12)  # d > n: infinitely many interpolants
    w_mn = np.linalg.pinv(X) @ y
    inside = solve_hindsight(X, y, "squared", L2Ball(2.0 * np.linalg.norm(w_mn)))
    np.testing.assert_allclose(inside.w, w_mn, rtol=1e-9, atol=1e-12)
    assert inside.total_loss <= 1e-18 * max(1.0, float(y @ y)) + 1e-20
    R = 0.5 * np.linalg.norm(w_mn)
    sol = solve_hindsight(X, y, "squared", L2Ball(R))
    f = lambda v: float(np.sum((X @ v - y) ** 2))
    _, ref = _slsqp_ball(f, lambda v: 2.0 * X.T @ (X @ v - y), 12, R, np.zeros(12))
    assert abs(np.linalg.norm(sol.w) - R) <= 1e-12 * R
    assert sol.total_loss <= ref + 1e-9 * max(1.0, ref)


@pytest.mark.parametrize("seed", range(3))
def test_squared_loss_on_box_matches_bounded_variable_least_squares(seed):
    X, y = _regression(seed, n=80, d=7)
    low, high = -0.3 * np.ones(7), np.linspace(0.1, 0.8, 7)
    w, total = best_fixed_in_hindsight(X, y, "squared", Box(low, high))
    ref = optimize.lsq_linear(X, y, bounds=(low, high), method="bvls", tol=1e-14)
    np.testing.assert_allclose(w, ref.x, atol=1e-9)
    assert total == pytest.approx(float(np.sum((X @ ref.x - y) ** 2)), rel=1e-12)
    assert Box(low, high).contains(w, atol=0.0)


def test_quadratic_structure_is_probed_for_any_scaling_and_kind():
    X, y = _regression(3)
    Xc, yc = _classification(3, d=6)
    assert loss_structure(_HalfSquared(), y) == "quadratic"
    assert loss_structure(_ClassificationSquared(), yc) == "quadratic"
    for name, kind_y in (("squared", y), ("hinge", yc), ("absolute", y), ("logistic", yc),
                         ("exponential", yc), ("smoothed_hinge", yc), ("smoothed_absolute", y)):
        expect = {"squared": "quadratic", "hinge": "piecewise_linear", "absolute": "piecewise_linear"}.get(name, "smooth")
        assert loss_structure(get_loss(name), kind_y) == expect
    # 0.5 (m - y)^2 has the same minimiser as (m - y)^2 and half the total
    w1, t1 = best_fixed_in_hindsight(X, y, _HalfSquared(), L2Ball(0.5))
    w2, t2 = best_fixed_in_hindsight(X, y, "squared", L2Ball(0.5))
    np.testing.assert_allclose(w1, w2, rtol=1e-10)
    assert t1 == pytest.approx(0.5 * t2, rel=1e-12)
    # (1 - y m)^2 = (m - y)^2 for y in {-1, +1}
    wc, tc = best_fixed_in_hindsight(Xc, yc, _ClassificationSquared(), L2Ball(0.4))
    wr, tr = best_fixed_in_hindsight(Xc, yc, "squared", L2Ball(0.4))
    np.testing.assert_allclose(wc, wr, rtol=1e-10)
    assert tc == pytest.approx(tr, rel=1e-12)


@pytest.mark.parametrize("name", ["logistic", "exponential", "smoothed_hinge", "smoothed_absolute"])
@pytest.mark.parametrize("constraint", [L2Ball(0.6), Box(-0.25, 0.4)])
def test_smooth_losses_against_slsqp_with_certificate(name, constraint):
    loss = get_loss(name)
    X, y = _regression(2, n=80, d=4) if loss.kind == "regression" else _classification(2, n=80, d=4)
    sol = solve_hindsight(X, y, loss, constraint)
    assert sol.method == "smooth" and constraint.contains(sol.w, atol=1e-12)
    g = X.T @ loss.grad_margin(X @ sol.w, y)
    assert frank_wolfe_gap(sol.w, g, constraint) == pytest.approx(sol.gap) and sol.gap <= 1e-9 * max(1, sol.total_loss)
    f = lambda v: float(np.sum(loss.loss(X @ v, y)))
    jac = lambda v: X.T @ loss.grad_margin(X @ v, y)
    if isinstance(constraint, L2Ball):
        _, ref = _slsqp_ball(f, jac, 4, constraint.radius, np.zeros(4))
    else:
        ref = optimize.minimize(f, np.zeros(4), jac=jac, method="SLSQP", bounds=[(-0.25, 0.4)] * 4,
                                options={"ftol": 1e-14, "maxiter": 2000}).fun
    assert sol.total_loss <= ref + 1e-9 * abs(ref)
    assert sol.total_loss == pytest.approx(ref, rel=1e-6)


@pytest.mark.parametrize("name", ["hinge", "absolute"])
@pytest.mark.parametrize("constraint", [L2Ball(0.5), L2Ball(50.0), Box(-0.2, 0.3)])
def test_piecewise_linear_losses_against_the_epigraph_solved_by_slsqp(name, constraint):
    loss = get_loss(name)
    n, d = 40, 3
    X, y = _regression(4, n=n, d=d) if loss.kind == "regression" else _classification(4, n=n, d=d)
    sol = solve_hindsight(X, y, loss, constraint)
    assert sol.method == "piecewise_linear" and constraint.contains(sol.w, atol=1e-12)
    assert sol.gap <= 1e-9 * max(1.0, sol.total_loss)
    # epigraph: min sum s_i, s_i >= pieces of the loss at m_i, over (w, s)
    if name == "hinge":
        pieces = [lambda z: -y[:, None] * X, lambda z: np.zeros((n, d))]
        offsets = [np.ones(n), np.zeros(n)]
    else:
        pieces = [lambda z: X, lambda z: -X]
        offsets = [-y, y]
    cons = [{"type": "ineq", "fun": (lambda v, P=P, o=o: v[d:] - (P(0) @ v[:d] + o)),
             "jac": (lambda v, P=P: np.hstack([-P(0), np.eye(n)]))} for P, o in zip(pieces, offsets)]
    bounds = None
    if isinstance(constraint, L2Ball):
        R = constraint.radius
        cons.append({"type": "ineq", "fun": lambda v: R * R - v[:d] @ v[:d],
                     "jac": lambda v: np.concatenate([-2.0 * v[:d], np.zeros(n)])})
    else:
        bounds = [(-0.2, 0.3)] * d + [(None, None)] * n
    start = np.concatenate([np.zeros(d), loss.loss(np.zeros(n), y) + 1.0])
    ref = optimize.minimize(lambda v: v[d:].sum(), start, jac=lambda v: np.concatenate([np.zeros(d), np.ones(n)]),
                            method="SLSQP", constraints=cons, bounds=bounds, options={"ftol": 1e-14, "maxiter": 3000})
    w_ref = constraint.project(ref.x[:d])  # SLSQP may stop with a tiny infeasibility; evaluate a feasible point
    f_ref = float(np.sum(loss.loss(X @ w_ref, y)))
    assert sol.total_loss <= f_ref + 1e-9 * abs(f_ref)
    assert sol.total_loss == pytest.approx(f_ref, rel=1e-6)


def test_certificate_failure_raises_numerical_error():
    X, y = _classification(1, n=50, d=3)
    with pytest.raises(NumericalError, match="did not certify"):
        solve_hindsight(X, y, "logistic", L2Ball(100.0), tol=1e-30)  # interior optimum: gap = R ||g|| > 1e-30
    assert solve_hindsight(X, y, "logistic", L2Ball(1.0)).gap <= 1e-9 * 50


def test_separable_unconstrained_logistic_reaches_the_unattained_infimum():
    # separable data: inf_w sum log(1 + e^{-y <w,x>}) = 0 is not attained; the value is still right
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    _, total = best_fixed_in_hindsight(X, y, "logistic", Unconstrained())
    assert 0.0 <= total <= 1e-6


def test_hindsight_validation_names_parameters():
    X, y = _regression(0, n=5, d=2)
    with pytest.raises(ParameterError, match="method='quadratic' needs"):
        solve_hindsight(X, np.sign(y), "logistic", L2Ball(1.0), method="quadratic")
    with pytest.raises(ParameterError, match="method='piecewise_linear' needs"):
        solve_hindsight(X, y, "squared", L2Ball(1.0), method="piecewise_linear")
    with pytest.raises(ParameterError, match="tol must be"):
        solve_hindsight(X, y, "squared", L2Ball(1.0), tol=0.0)
    with pytest.raises(ParameterError, match="X must have 2 dimension"):
        solve_hindsight(y, y, "squared", L2Ball(1.0))
    with pytest.raises(ParameterError, match="X must have at least one row"):
        solve_hindsight(np.zeros((0, 2)), np.zeros(0), "squared", L2Ball(1.0))
    with pytest.raises(ParameterError, match="low must be a scalar or have 2 entries"):
        solve_hindsight(X, y, "squared", Box([0.0, 0.0, 0.0], 1.0))
    with pytest.raises(ParameterError, match="loss must be"):
        solve_hindsight(X, y, object(), L2Ball(1.0))
