"""Inference for corrected least squares: the sandwich covariance, its intervals' coverage, the summary table."""

import numpy as np
import pytest

from nolo.batch.eiv import corrected_covariance
from nolo.sklearn_api import CorrectedLeastSquaresRegressor

TRUE = np.array([1.0, -0.5, 1.0])  # slopes, then the intercept


def _draw(rng, n, noise, m=2):
    x = rng.normal(size=(n, 2))
    y = x @ TRUE[:2] + TRUE[2] + 0.3 * rng.normal(size=n)
    return x[:, None, :] + noise * rng.normal(size=(n, m, 2)), y


@pytest.mark.parametrize("n,noise", [(100, 0.5), (100, 1.0), (500, 0.5), (500, 1.0)])
def test_95_percent_intervals_cover_in_93_to_97_percent_of_1000_fits(n, noise):
    rng = np.random.default_rng([11, n, int(noise * 10)])
    hits = np.zeros(3)
    fits = 1000
    for _ in range(fits):
        R, y = _draw(rng, n, noise)
        est = CorrectedLeastSquaresRegressor(cv_folds=None).fit(R, y)
        ci = est.conf_int(0.05)
        hits += (ci[:, 0] <= TRUE) & (TRUE <= ci[:, 1])
    cover = hits / fits
    # 1000 fits: a binomial standard error of 0.007 at 0.95; n = 100 is allowed a little more slack
    lo, hi = (0.93, 0.97) if n >= 500 else (0.92, 0.98)
    assert np.all((cover >= lo) & (cover <= hi)), cover


def test_the_sandwich_matches_the_spread_of_the_estimates():
    rng = np.random.default_rng(5)
    thetas, ses = [], []
    for _ in range(300):
        R, y = _draw(rng, 400, 1.0)
        est = CorrectedLeastSquaresRegressor(cv_folds=None).fit(R, y)
        thetas.append(np.append(est.coef_, est.intercept_))
        ses.append(est.bse_)
    ratio = np.mean(ses, axis=0) / np.std(thetas, axis=0, ddof=1)
    assert np.all(np.abs(ratio - 1.0) < 0.12), ratio


def test_known_noise_and_ragged_items_and_the_summary():
    rng = np.random.default_rng(2)
    n = 300
    ms = rng.choice([1, 2, 4], size=n)
    x = rng.normal(size=(n, 2))
    y = x @ TRUE[:2] + TRUE[2] + 0.3 * rng.normal(size=n)
    items = [x[i] + 0.7 * rng.normal(size=(ms[i], 2)) for i in range(n)]
    known = CorrectedLeastSquaresRegressor(noise_cov=0.49, cv_folds=None).fit(items, y)
    est = CorrectedLeastSquaresRegressor(cv_folds=None).fit(items, y)
    for e in (known, est):
        assert e.coef_cov_.shape == (3, 3) and np.all(e.bse_ > 0)
        assert np.allclose(e.coef_cov_, e.coef_cov_.T)
    # a known covariance removes the noise estimate's own error: no larger standard errors
    assert np.all(known.bse_ <= est.bse_ * 1.05)
    text = est.summary(names=["temperature", "pressure"])
    assert "temperature" in text and "intercept" in text and "P>|t|" in text and "[0.025" in text
    no_icpt = CorrectedLeastSquaresRegressor(cv_folds=None, fit_intercept=False).fit(items, y - TRUE[2])
    assert no_icpt.coef_cov_.shape == (2, 2)
    V = corrected_covariance(items, y - TRUE[2], no_icpt.coef_, None, "estimate")
    np.testing.assert_allclose(V, no_icpt.coef_cov_, rtol=0, atol=0)
