"""nolo.sklearn_api.eiv: ragged readings for CorrectedLeastSquaresRegressor, Fuller's option through the estimators."""

import numpy as np
import pytest

from nolo.sklearn_api import CorrectedLeastSquaresRegressor, EIVRegressor


def _ragged(seed=0, n=60, d=3):
    rng = np.random.default_rng(seed)
    counts = rng.integers(2, 7, size=n)
    X = rng.normal(size=(n, d))
    items = [x + 0.6 * rng.normal(size=(k, d)) for x, k in zip(X, counts)]
    y = X @ np.array([1.0, -2.0, 0.5]) + 3.0 + 0.1 * rng.normal(size=n)
    return items, y, counts


def _direct(items, y, counts, Sigma=None):
    """Corrected least squares with an intercept, computed from its definition: the centred moments hold the share
    (n - 1)/n of the means' noise covariance Sigma mean_i(1/m_i)."""
    n = len(items)
    means = np.array([a.mean(axis=0) for a in items])
    if Sigma is None:
        Sigma = sum((a - a.mean(axis=0)).T @ (a - a.mean(axis=0)) for a in items) / float(np.sum(counts - 1))
    d = means.shape[1]
    Ma = np.c_[means, np.ones(n)]
    Sa = np.zeros((d + 1, d + 1))
    Sa[:d, :d] = Sigma * np.mean(1.0 / counts) * (n - 1) / n
    return np.linalg.solve(Ma.T @ Ma / n - Sa, Ma.T @ y / n)


def test_ragged_list_matches_direct_computation():
    items, y, counts = _ragged()
    est = CorrectedLeastSquaresRegressor().fit(items, y)
    ref = _direct(items, y, counts)
    np.testing.assert_allclose(np.append(est.coef_, est.intercept_), ref, rtol=1e-9, atol=1e-12)
    K = np.diag([0.3, 0.36, 0.4])
    est = CorrectedLeastSquaresRegressor(noise_cov=K).fit(items, y)
    np.testing.assert_allclose(np.append(est.coef_, est.intercept_), _direct(items, y, counts, K), rtol=1e-9)


def test_ragged_long_table_with_groups_matches_the_list():
    items, y, counts = _ragged(seed=1)
    X_long = np.vstack(items)
    ids = np.repeat(np.array([f"item{i}" for i in range(len(items))]), counts)
    y_rows = np.repeat(y, counts)  # the tidy layout: the target on each row of its item
    a = CorrectedLeastSquaresRegressor().fit(X_long, y_rows, groups=ids)
    b = CorrectedLeastSquaresRegressor().fit(items, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    assert a.intercept_ == pytest.approx(b.intercept_, rel=1e-12)
    np.testing.assert_allclose(np.append(a.coef_, a.intercept_), _direct(items, y, counts), rtol=1e-9)


def test_fuller_alpha_through_the_sklearn_estimators():
    from nolo.batch import CorrectedLeastSquares

    rng = np.random.default_rng([0, 2, 2000, 20, 200])
    X = rng.normal(size=(200, 20))
    y = X @ (rng.normal(size=20) / np.sqrt(20))
    R = X[:, None, :] + np.sqrt(2.0) * rng.normal(size=(200, 2, 20))
    est = CorrectedLeastSquaresRegressor(fuller_alpha=5.0).fit(R, y)
    ref = CorrectedLeastSquares(fit_intercept=True, fuller_alpha=5.0).fit(R, y)  # affine-equivariant
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-7, atol=1e-9)
    assert est.learner_.lambda_hat_ == pytest.approx(ref.lambda_hat_, rel=1e-9)
    e = EIVRegressor(fuller_alpha=5.0, max_iter=1, seed=0).fit(R, y)
    assert e.learner_.fuller_alpha == 5.0 and np.all(np.isfinite(e.coef_))
    with pytest.raises(ValueError, match="fuller_alpha"):
        CorrectedLeastSquaresRegressor(fuller_alpha=-2).fit(R, y)


def test_cv_folds_through_the_sklearn_estimator():
    from nolo.batch import CorrectedLeastSquares

    items, y, counts = _ragged(seed=2, n=80)
    est = CorrectedLeastSquaresRegressor(cv_folds=4).fit(items, y)
    ref = CorrectedLeastSquares(fit_intercept=True, cv_folds=4).fit(items, y)
    assert est.learner_.correction_scale_ == ref.correction_scale_
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-7)
    with pytest.raises(ValueError, match="cv_folds"):
        CorrectedLeastSquaresRegressor(cv_folds=0).fit(items, y)


def _ill_posed(seed=0, n=200, d=20, m=2, r=2.0):
    """The practice grid's generator with seeds 200+ (not the experiment's)."""
    from nolo.papers.practice.eiv import synthetic_cell

    R, y, Xt, w = synthetic_cell(m, r, d, n, 200 + seed)
    return R, y, Xt, Xt @ w


def test_eiv_regressor_cv_folds_default_guard():
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score

    R, y, Xt, yt = _ill_posed()
    est = EIVRegressor(seed=0).fit(R, y)
    assert est.cv_folds == 5 and est.learner_.cv_folds == 5
    # fit's later passes replay the items: the scale chosen on the first pass is kept (frozen), not re-chosen on
    # folds that hold every item twice
    assert est.n_iter_ > 1 and est.learner_.cv_next_ > 10**18 and est.learner_.cv_scale_ < 0.9
    assert not hasattr(est.learner_, "_fit_items")
    ols = r2_score(yt, LinearRegression().fit(R.mean(axis=1), y).predict(Xt))
    assert r2_score(yt, est.predict(Xt)) > ols - 0.01  # 0.762 against 0.757 (scale 0.6)
    off = EIVRegressor(cv_folds=None, seed=0).fit(R, y)  # the full correction under max_correction: -0.75
    assert off.learner_.cv_folds is None and r2_score(yt, off.predict(Xt)) < ols - 0.5
    with pytest.raises(ValueError, match="cv_folds"):
        EIVRegressor(cv_folds=1).fit(R, y)


def test_eiv_regressor_one_pass_keeps_choosing_in_partial_fit():
    R, y, _, _ = _ill_posed(n=400, d=5, r=1.0)
    est = EIVRegressor(max_iter=1, seed=0).fit(R[:200], y[:200])
    assert est.learner_.cv_next_ < 10**6  # one pass: nothing replayed, nothing frozen
    est.partial_fit(R[200:], y[200:])
    assert est.learner_.t_ == 400 and est.learner_.fold_count_.sum() == 400 and est.learner_.cv_next_ < 10**6


def test_eiv_regressor_passes_count_distinct_items_for_fuller_and_the_centred_share():
    # 40 items replayed over 10 passes (400 items played): Fuller's degrees of freedom and the centred share are
    # those of the 40 distinct items, so the online fit is the batch one; here Fuller's scale is 1 - alpha/nu with
    # nu = 39 (the large-root branch), 0.97436
    import warnings

    rng = np.random.default_rng(3)
    n = 40
    x = rng.normal(size=(n, 2))
    y = x @ np.array([1.0, -0.5]) + 1.0 + 0.2 * rng.normal(size=n)
    R = x[:, None, :] + 0.8 * rng.normal(size=(n, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tol=0: every pass is played
        e = EIVRegressor(fuller_alpha=1.0, cv_folds=None, max_correction=0.99, sweeps=20, max_iter=10, tol=0.0,
                         shuffle=False).fit(R, y)
    c = CorrectedLeastSquaresRegressor(fuller_alpha=1.0, cv_folds=None).fit(R, y)
    assert e.learner_.t_ == 400
    assert e.correction_scale_ == pytest.approx(c.correction_scale_, rel=1e-9)
    assert c.correction_scale_ == pytest.approx(1.0 - 1.0 / 39.0, rel=1e-12)
    np.testing.assert_allclose(e.coef_, c.coef_, rtol=1e-7)
