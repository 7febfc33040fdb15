"""Batch errors-in-variables references and the scikit-learn-style CSS11 estimators."""

import numpy as np
import pytest
from sklearn.base import clone

from nolo import NumericalError, ParameterError
from nolo.batch import (
    CorrectedLeastSquares,
    TotalLeastSquares,
    ball_constrained_quadratic,
    corrected_least_squares,
    replicate_covariance,
    total_least_squares,
)
from nolo.sklearn_api.known_noise import GaussianNoiseKernelRegressor, KnownCovarianceRegressor, TwoCopyRegressor


def _eiv(n=20_000, d=4, m=3, var=0.5, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    X = rng.standard_normal((n, d)) * np.sqrt(0.5)
    y = X @ w + 0.1 * rng.standard_normal(n)
    C = X[:, None, :] + np.sqrt(var) * rng.standard_normal((n, m, d))
    return w, X, y, C


def test_corrected_least_squares_removes_attenuation():
    w, X, y, C = _eiv()
    ols = np.linalg.lstsq(C[:, 0], y, rcond=None)[0]
    assert np.linalg.norm(ols - w) > 0.3
    assert np.linalg.norm(corrected_least_squares(C[:, 0], y, 0.5) - w) < 0.05
    assert np.linalg.norm(corrected_least_squares(C, y, "estimate") - w) < 0.05
    np.testing.assert_allclose(replicate_covariance(C), 0.5 * np.eye(4), atol=0.02)
    assert np.linalg.norm(total_least_squares(C[:, 0], y, 0.5, 0.01) - w) < 0.05
    est = CorrectedLeastSquares(noise_cov=0.5).fit(C, y)
    assert est.score(X, y) > 0.9


def test_corrected_matrix_not_positive_definite_is_an_error_unless_constrained():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((10, 3)) * 0.1
    y = rng.standard_normal(10)
    with pytest.raises(NumericalError, match="positive definite"):
        corrected_least_squares(X, y, 1.0)
    w = corrected_least_squares(X, y, 1.0, radius=2.0)
    assert np.linalg.norm(w) == pytest.approx(2.0)


@pytest.mark.parametrize("seed", range(4))
def test_ball_constrained_quadratic_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((2, 2))
    A = M + M.T
    b = rng.standard_normal(2)
    R = 1.3
    w = ball_constrained_quadratic(A, b, R)
    r, t = np.meshgrid(np.linspace(0, R, 300), np.linspace(0, 2 * np.pi, 1000))
    G = np.stack([(r * np.cos(t)).ravel(), (r * np.sin(t)).ravel()], axis=1)
    grid_min = np.min(np.einsum("ni,ij,nj->n", G, A, G) - 2 * G @ b)
    assert np.linalg.norm(w) <= R + 1e-9
    assert w @ A @ w - 2 * b @ w <= grid_min + 1e-9


def test_hard_case_of_the_trust_region():
    A = np.diag([-1.0, 2.0])
    w = ball_constrained_quadratic(A, np.array([0.0, 1.0]), 1.0)
    assert np.linalg.norm(w) == pytest.approx(1.0)
    assert w[1] == pytest.approx(1.0 / 3.0)


def test_batch_validation():
    with pytest.raises(ParameterError, match="m >= 2"):
        replicate_covariance(np.ones((5, 1, 2)))
    with pytest.raises(ParameterError, match="'estimate'"):
        corrected_least_squares(np.ones((5, 2)), np.ones(5), "guess")
    with pytest.raises(ParameterError, match="fit"):
        TotalLeastSquares().predict(np.ones((2, 2)))


@pytest.mark.parametrize("make", [lambda: TwoCopyRegressor(seed=0),
                                  lambda: KnownCovarianceRegressor(noise_cov=0.5, seed=0)])
def test_linear_estimators_on_repeated_measurements(make):
    w, X, y, C = _eiv(n=8000, m=4)
    est = make().fit(C, y)
    assert np.linalg.norm(est.coef_ - w) < 0.25
    assert est.score(X, y) > 0.8
    np.testing.assert_allclose(est.predict(C[:5]), C[:5].mean(axis=1) @ est.coef_ + est.intercept_)
    assert abs(est.intercept_) < 0.05
    c = clone(est)
    assert c.get_params() == est.get_params() and not hasattr(c, "coef_")
    t = est.learner_.t_
    assert t == 8000 * est.n_iter_
    est.partial_fit(C[:100], y[:100])
    assert est.learner_.t_ == t + 100


def test_estimator_validation():
    w, X, y, C = _eiv(n=50, m=1)
    with pytest.raises(ParameterError, match="at least 2 readings per item"):
        TwoCopyRegressor().fit(C, y)
    with pytest.raises(ParameterError, match="not fitted"):
        KnownCovarianceRegressor().predict(X)
    with pytest.raises(ParameterError, match="kernel"):
        GaussianNoiseKernelRegressor(kernel="poly").fit(np.repeat(C, 2, axis=1), y)
    w, X, y, C4 = _eiv(n=50, m=4)
    est = KnownCovarianceRegressor(noise_cov=0.5, step=0.01).fit(C4, y)
    with pytest.raises(ParameterError, match="same number of readings"):
        est.partial_fit(C4[:, :2], y)
    with pytest.raises(ParameterError, match="isotropic"):
        GaussianNoiseKernelRegressor(kernel="radial", noise_cov=[0.1, 0.1, 0.1, 0.1]).fit(np.repeat(C, 2, axis=1), y)


def test_kernel_estimator_learns_nonlinear_target():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1.5, 1.5, (500, 3))
    f = lambda Z: np.sin(2 * Z[:, 0]) + Z[:, 1] * Z[:, 2]  # noqa: E731
    C = X[:, None, :] + np.sqrt(0.3) * rng.standard_normal((500, 4, 3))
    est = GaussianNoiseKernelRegressor(width=2.0, noise_cov=0.3, W=10.0, step=0.03, seed=0).fit(C[:400], f(X[:400]))
    assert est.score(X[400:], f(X[400:])) > 0.5
