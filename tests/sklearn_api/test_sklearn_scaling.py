"""nolo.sklearn_api._scaling: the standardisation is undone exactly for coef_ / intercept_ and the noise covariance."""

import numpy as np
import pytest

from nolo.sklearn_api import EIVRegressor
from nolo.sklearn_api._scaling import Standardizer


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_back_transform_is_exact(fit_intercept):
    rng = np.random.default_rng(0)
    means = rng.normal(size=(50, 3)) * [1.0, 100.0, 0.01] + [5.0, -3.0, 0.0]
    y = rng.normal(size=50) * 40 + 7
    s = Standardizer.fit(means, y, fit_intercept)
    w_s = rng.normal(size=3)
    coef, intercept = s.linear(w_s)
    X = rng.normal(size=(10, 3))
    np.testing.assert_allclose(X @ coef + intercept, s.y_back(s.x(X) @ w_s), rtol=1e-12, atol=1e-9)
    if not fit_intercept:
        assert intercept == 0.0
    S = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 3.0]])
    D = np.diag(1 / s.x_scale)
    np.testing.assert_allclose(s.noise_cov(S), D @ S @ D)


def test_constant_feature_and_target_get_unit_scale():
    s = Standardizer.fit(np.ones((4, 2)), np.full(4, 3.0), True)
    assert s.x_scale.tolist() == [1.0, 1.0] and s.y_scale == 1.0 and s.y_mean == 3.0


def test_noise_free_exact_model_is_recovered_in_the_users_units():
    """Readings without noise and an exact linear target: coef_ and intercept_ come back to ~1e-6."""
    rng = np.random.default_rng(1)
    clean = rng.normal(size=(300, 2)) * [10.0, 0.1] + [100.0, -1.0]
    y = clean @ np.array([0.3, 40.0]) - 12.0
    X = np.repeat(clean[:, None, :], 2, axis=1)
    est = EIVRegressor(noise="known", noise_cov=0.0, alpha=1e-12, sweeps=5, max_iter=1).fit(X, y)
    np.testing.assert_allclose(est.coef_, [0.3, 40.0], rtol=1e-6)
    assert est.intercept_ == pytest.approx(-12.0, abs=1e-5)
