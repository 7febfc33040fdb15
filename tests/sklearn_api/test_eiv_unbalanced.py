"""Unbalanced replicate designs: items with one reading count, the noise is pooled over the replicated items."""

import numpy as np
import pytest

from nolo.exceptions import ParameterError
from nolo.sklearn_api import CorrectedLeastSquaresRegressor, EIVRegressor


def _ragged(rng, ms, d=2, noise=0.5):
    x = rng.normal(size=(len(ms), d))
    y = x @ np.array([1.0, -0.5][:d]) + 1.0 + 0.1 * rng.normal(size=len(ms))
    return [x[i] + noise * rng.normal(size=(m, d)) for i, m in enumerate(ms)], y


def test_hand_worked_unbalanced_fit():
    """w = (Xc^T Xc / (n - 1) - Sigma mean_i(1/m_i))^{-1} Xc^T yc / (n - 1) on the centred item means (their
    moments on n - 1 degrees of freedom hold the means' noise covariance Sigma mean_i(1/m_i)), Sigma the pooled
    within-item covariance of the items with 2+ readings (singles add no degrees of freedom)."""
    rng = np.random.default_rng(1)
    ms = np.array([1, 2, 3, 1, 2, 5, 1, 2, 2, 3, 1, 2])
    items, y = _ragged(rng, ms)
    xb = np.stack([a.mean(axis=0) for a in items])
    sigma = sum((a - a.mean(axis=0)).T @ (a - a.mean(axis=0)) for a in items) / int(np.sum(ms - 1))
    Xc, yc = xb - xb.mean(axis=0), y - y.mean()
    n = len(ms)
    w = np.linalg.solve(Xc.T @ Xc / (n - 1) - sigma * np.mean(1.0 / ms), Xc.T @ yc / (n - 1))
    est = CorrectedLeastSquaresRegressor(cv_folds=None).fit(items, y)
    np.testing.assert_allclose(est.coef_, w, rtol=1e-10)
    assert est.intercept_ == pytest.approx(y.mean() - xb.mean(axis=0) @ w, rel=1e-10)


def test_the_long_table_with_string_ids_and_single_readings_fits_every_item():
    rng = np.random.default_rng(7)
    n = 400
    ms = rng.choice([1, 2, 3, 5], p=[0.2, 0.4, 0.2, 0.2], size=n)
    items, y = _ragged(rng, ms)
    rows = np.concatenate(items)
    ids = np.repeat([f"sensor-{i:03d}" for i in range(n)], ms)
    est = CorrectedLeastSquaresRegressor().fit(rows, np.repeat(y, ms), groups=ids)
    assert est.n_items_seen_ == n and est.copies_per_item_ == 5  # every item (the most readings of one: 5)
    ragged = CorrectedLeastSquaresRegressor().fit(items, y)
    np.testing.assert_allclose(est.coef_, ragged.coef_, rtol=1e-9)  # the same items, whatever the layout
    assert np.all(np.abs(est.coef_ - [1.0, -0.5]) < 0.15)


def test_the_slope_is_unbiased_on_an_unbalanced_design():
    """Monte Carlo, 200 fits of 500 items with 20 % single readings: the mean slope within 4 standard errors."""
    rng = np.random.default_rng(3)
    coefs = []
    for _ in range(200):
        ms = rng.choice([1, 2, 3, 5], p=[0.2, 0.4, 0.2, 0.2], size=500)
        items, y = _ragged(rng, ms, noise=1.0)
        coefs.append(CorrectedLeastSquaresRegressor(cv_folds=None).fit(items, y).coef_)
    coefs = np.array(coefs)
    se = coefs.std(axis=0, ddof=1) / np.sqrt(len(coefs))
    assert np.all(np.abs(coefs.mean(axis=0) - [1.0, -0.5]) < 4 * se), (coefs.mean(axis=0), se)
    # least squares on the item means is attenuated far beyond that
    xb_slope = []
    for _ in range(20):
        ms = rng.choice([1, 2, 3, 5], p=[0.2, 0.4, 0.2, 0.2], size=500)
        items, y = _ragged(rng, ms, noise=1.0)
        xb = np.stack([a.mean(axis=0) for a in items])
        xb_slope.append(np.linalg.lstsq(np.c_[xb, np.ones(500)], y, rcond=None)[0][0])
    assert np.mean(xb_slope) < 0.8


def test_messages_say_what_to_pass():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 2)), rng.normal(size=50)
    for est in (CorrectedLeastSquaresRegressor(), EIVRegressor()):
        with pytest.raises(ParameterError, match="2-D array without groups.*pass groups="):
            est.fit(X, y)
    with pytest.raises(ParameterError, match="every item of X has one"):
        CorrectedLeastSquaresRegressor().fit(X, y, groups=np.arange(50))
    # known noise: one reading per item is all it needs
    CorrectedLeastSquaresRegressor(noise_cov=0.1, cv_folds=None).fit(X, y)
