"""IllPosedCorrectionWarning of the CSS11 scikit-learn estimators (issue 15, what was left): an indefinite corrected
Gram matrix or an iterate on the ball's edge is named, with the estimator to use instead."""

import math
import warnings

import numpy as np
import pytest

from nolo.batch.eiv import fuller_scale
from nolo.sklearn_api import IllPosedCorrectionWarning, KnownCovarianceRegressor, TwoCopyRegressor
from nolo.sklearn_api._inputs import to_readings
from nolo.sklearn_api._scaling import Standardizer


def _cell(seed, m, r, n, d):
    rng = np.random.default_rng([seed, m, int(r * 1000), d, n])
    w = rng.normal(size=d) / math.sqrt(d)
    X = rng.normal(size=(n, d))
    y = X @ w + math.sqrt(0.1 * float(w @ w)) * rng.normal(size=n)
    return X[:, None, :] + math.sqrt(r) * rng.normal(size=(n, m, d)), y, X


def _fit_recording(est, R, y):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est.fit(R, y)
    return [w for w in rec if issubclass(w.category, IllPosedCorrectionWarning)]


@pytest.mark.parametrize("make", [lambda: TwoCopyRegressor(seed=0), lambda: KnownCovarianceRegressor(noise_cov=2.0, seed=0)],
                         ids=["two_copy", "known_cov"])
def test_ill_posed_cell_warns_and_names_the_remedy(make):
    # the practice grid's worst cell: n = 200, d = 20, 2 readings of noise-to-signal 2 (seed 3: R^2 -60 / -70)
    R, y, X = _cell(3, 2, 2.0, 200, 20)
    hits = _fit_recording(make(), R, y)
    assert len(hits) == 1
    msg = str(hits[0].message)
    assert "indefinite" in msg and "lambda_hat" in msg and "EIVRegressor" in msg and "cross-validation" in msg


@pytest.mark.parametrize("make", [lambda: TwoCopyRegressor(seed=0), lambda: KnownCovarianceRegressor(noise_cov=0.5, seed=0)],
                         ids=["two_copy", "known_cov"])
def test_well_posed_cell_is_quiet(make):
    R, y, X = _cell(0, 4, 0.5, 300, 3)
    assert _fit_recording(make(), R, y) == []


def test_iterate_on_the_ball_edge_warns():
    R, y, X = _cell(0, 4, 0.5, 300, 3)
    hits = _fit_recording(TwoCopyRegressor(radius=0.05, seed=0), R, y)
    assert len(hits) == 1 and "on the ball ||w|| = radius = 0.05" in str(hits[0].message)
    assert "indefinite" not in str(hits[0].message)


def test_moments_are_the_corrected_gram_of_the_standardised_readings():
    R, y, X = _cell(1, 3, 1.0, 50, 2)
    est = TwoCopyRegressor()
    Rd = to_readings(R)
    sc = Standardizer.fit(Rd.means(), y, True)
    V = sc.x(R)
    M, S = est._moments(V, None, sc)
    xbar = V.mean(axis=1)
    # the U-statistic over distinct pairs: mean_{k != l} v_k v_l^T = xbar xbar^T - S_i
    U = np.mean([(np.outer(v.sum(0), v.sum(0)) - v.T @ v) / 6.0 for v in V], axis=0)
    np.testing.assert_allclose(M - S, U, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(M, xbar.T @ xbar / 50, rtol=1e-12)
    lam, _ = fuller_scale(M, S, 50, 0.0)
    assert lam > 1  # this small, mild cell is well posed
