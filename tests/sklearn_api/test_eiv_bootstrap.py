"""CorrectedLeastSquaresRegressor.bootstrap: items resampled with replacement, seeded, beside the sandwich."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from nolo.exceptions import ParameterError
from nolo.sklearn_api import CorrectedLeastSquaresRegressor

TRUE = np.array([1.0, -0.5, 1.0])  # slopes, then the intercept


def _draw(rng, n, noise, m=2):
    x = rng.normal(size=(n, 2))
    y = x @ TRUE[:2] + TRUE[2] + 0.3 * rng.normal(size=n)
    return x[:, None, :] + noise * rng.normal(size=(n, m, 2)), y


def test_the_same_seed_gives_the_same_replicates():
    R, y = _draw(np.random.default_rng(0), 120, 0.5)
    a = CorrectedLeastSquaresRegressor(cv_folds=None).fit(R, y).bootstrap(R, y, n_boot=30, random_state=7)
    b = CorrectedLeastSquaresRegressor(cv_folds=None).fit(R, y).bootstrap(R, y, n_boot=30, random_state=7)
    c = CorrectedLeastSquaresRegressor(cv_folds=None).fit(R, y).bootstrap(R, y, n_boot=30, random_state=8)
    assert np.array_equal(a.bootstrap_coefs_, b.bootstrap_coefs_)
    assert np.array_equal(a.conf_int(method="bootstrap"), b.conf_int(method="bootstrap"))
    assert not np.array_equal(a.bootstrap_coefs_, c.bootstrap_coefs_)
    assert a.bootstrap_coefs_.shape == (30, 3) and a.bootstrap_failed_ == 0


def test_a_replicate_resamples_whole_items_of_a_long_table():
    # string item ids, 1/2/3/5 readings per item: replicate b is the estimator refitted on the items drawn by
    # default_rng(seed).integers(0, n, n) -- every reading of a drawn item, the draws of the b-th call in turn
    rng = np.random.default_rng(3)
    n = 60
    counts = rng.choice([1, 2, 3, 5], size=n)
    x = rng.normal(size=(n, 2))
    y = x @ TRUE[:2] + TRUE[2] + 0.3 * rng.normal(size=n)
    idx = np.repeat(np.arange(n), counts)
    rows = x[idx] + 0.5 * rng.normal(size=(idx.size, 2))
    ids = np.array([f"item-{i:03d}" for i in range(n)])[idx]
    est = CorrectedLeastSquaresRegressor(fuller_alpha=1.0, cv_folds=None).fit(rows, y[idx], groups=ids)
    est.bootstrap(rows, y[idx], groups=ids, n_boot=3, random_state=11)
    draws = np.random.default_rng(11)
    items = [rows[idx == i] for i in range(n)]
    for b in range(3):
        pick = draws.integers(0, n, size=n)
        try:
            ref = CorrectedLeastSquaresRegressor(fuller_alpha=1.0, cv_folds=None).fit([items[i] for i in pick], y[pick])
        except ParameterError:  # a resample without an item read twice: a failed replicate
            assert np.all(np.isnan(est.bootstrap_coefs_[b]))
            continue
        np.testing.assert_allclose(est.bootstrap_coefs_[b], np.append(ref.coef_, ref.intercept_), rtol=1e-10)


def test_bootstrap_standard_errors_within_20_percent_of_the_sandwich_at_n500():
    R, y = _draw(np.random.default_rng(21), 500, 0.5)
    est = CorrectedLeastSquaresRegressor(cv_folds=None).fit(R, y).bootstrap(R, y, n_boot=400, random_state=0)
    ratio = est.bootstrap_bse_ / est.bse_
    assert np.all(np.abs(ratio - 1.0) < 0.2), ratio
    lo, hi = est.conf_int(method="bootstrap").T
    theta = np.append(est.coef_, est.intercept_)
    assert np.all(lo < theta) and np.all(theta < hi)
    assert "bootstrap over items (400 resamples" in est.summary(method="bootstrap")


def test_the_cross_validated_scale_is_held_and_the_estimator_untouched():
    R, y = _draw(np.random.default_rng(4), 200, 1.0)
    est = CorrectedLeastSquaresRegressor().fit(R, y)
    params, coef = est.get_params(), est.coef_.copy()
    est.bootstrap(R, y, n_boot=5, random_state=0)
    assert est.get_params() == params and np.array_equal(est.coef_, coef)
    assert est._fixed_scale is None and est.learner_._fixed_scale is None
    assert np.array_equal(est.fit(R, y).coef_, coef)


def test_bad_calls_are_named():
    R, y = _draw(np.random.default_rng(5), 80, 0.5)
    with pytest.raises(NotFittedError):
        CorrectedLeastSquaresRegressor().bootstrap(R, y)
    est = CorrectedLeastSquaresRegressor(cv_folds=None).fit(R, y)
    with pytest.raises(ParameterError, match="method='bootstrap' needs bootstrap"):
        est.conf_int(method="bootstrap")
    with pytest.raises(ParameterError, match="method must be"):
        est.conf_int(method="jackknife")
    with pytest.raises(ParameterError, match="n_boot"):
        est.bootstrap(R, y, n_boot=1)
    with pytest.raises(ParameterError, match="data of fit"):
        est.bootstrap(R[:70], y[:70], n_boot=5)
    with pytest.raises(ParameterError, match="data of fit"):
        est.bootstrap(R, y + 1.0, n_boot=5)
