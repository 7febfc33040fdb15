"""EIVRegressor: the sandwich inference of CorrectedLeastSquaresRegressor, and items read once (noise="pooled")."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from nolo.batch import CorrectedLeastSquares
from nolo.exceptions import ParameterError
from nolo.learners.linear import BiasCompensatedRLS
from nolo.sklearn_api import CorrectedLeastSquaresRegressor, EIVRegressor

TRUE = np.array([1.0, -0.5, 1.0])  # slopes, then the intercept


def _dense(rng, n, noise, m=3):
    x = rng.normal(size=(n, 2))
    y = x @ TRUE[:2] + TRUE[2] + 0.3 * rng.normal(size=n)
    return x[:, None, :] + noise * rng.normal(size=(n, m, 2)), y


def _long_table(rng, n, noise=1.0):
    counts = rng.choice([1, 2, 3, 5], p=[0.2, 0.4, 0.2, 0.2], size=n)
    x = rng.normal(size=(n, 2))
    y = x @ TRUE[:2] + TRUE[2] + 0.3 * rng.normal(size=n)
    idx = np.repeat(np.arange(n), counts)
    rows = x[idx] + noise * rng.normal(size=(idx.size, 2))
    return rows, y[idx], np.array([f"item-{i}" for i in range(n)])[idx], counts


@pytest.mark.parametrize("noise", ["repeated", "known", "two_copy"])
def test_the_online_sandwich_is_the_batch_one(noise):
    R, y = _dense(np.random.default_rng(1), 400, 0.5)
    kw = {"noise_cov": 0.25} if noise == "known" else {}
    e = EIVRegressor(noise=noise, cv_folds=None, seed=0, **kw).fit(R, y)
    c = CorrectedLeastSquaresRegressor(noise_cov=kw.get("noise_cov", "estimate"), cv_folds=None).fit(
        R[:, :2] if noise == "two_copy" else R, y)
    assert e.correction_scale_ == 1.0
    np.testing.assert_allclose(e.coef_, c.coef_, rtol=1e-6)
    np.testing.assert_allclose(e.bse_, c.bse_, rtol=1e-5)
    np.testing.assert_allclose(e.conf_int(0.1), c.conf_int(0.1), rtol=1e-5)
    assert e.summary().startswith("EIVRegressor: 400 items, correction scale 1, sandwich standard errors")


def test_per_item_noise_in_the_sandwich_for_ragged_repeated_readings():
    # noise="repeated" on ragged items: each item's own D_i / (m_i (m_i - 1)), not the pooled weights
    rng = np.random.default_rng(2)
    items = [rng.normal(size=2) + 0.6 * rng.normal(size=(k, 2)) for k in rng.integers(2, 6, size=300)]
    y = np.array([a.mean(axis=0) @ TRUE[:2] for a in items]) + 1.0 + 0.3 * rng.normal(size=300)
    e = EIVRegressor(cv_folds=None, seed=0).fit(items, y)
    from nolo.batch.eiv import corrected_covariance

    ref = corrected_covariance(items, y, e.coef_, e.intercept_, "estimate", e.correction_scale_, pooled=False)
    np.testing.assert_allclose(e.coef_cov_, ref, rtol=1e-12)
    pooled = corrected_covariance(items, y, e.coef_, e.intercept_, "estimate", e.correction_scale_)
    assert not np.allclose(ref, pooled, rtol=1e-6)


def test_pooled_mode_uses_every_item_of_an_unbalanced_long_table():
    rows, y, ids, counts = _long_table(np.random.default_rng(3), 500)
    assert np.mean(counts == 1) > 0.15
    with pytest.raises(ParameterError, match="noise='pooled'"):
        EIVRegressor().fit(rows, y, groups=ids)  # noise="repeated" needs two readings of every item
    e = EIVRegressor(noise="pooled", seed=0).fit(rows, y, groups=ids)
    c = CorrectedLeastSquaresRegressor().fit(rows, y, groups=ids)
    assert e.n_items_seen_ == 500  # the online solution to the passes' tolerance (tol=1e-3)
    np.testing.assert_allclose(e.coef_, c.coef_, rtol=1e-3)
    np.testing.assert_allclose(e.bse_, c.bse_, rtol=1e-3)
    with pytest.raises(ParameterError, match="2 or more readings"):
        EIVRegressor(noise="pooled").fit(rows[:50], y[:50], groups=np.arange(50))  # every item read once


def test_partial_fit_removes_the_sandwich_and_no_bootstrap_online():
    R, y = _dense(np.random.default_rng(4), 200, 0.5)
    e = EIVRegressor(seed=0).fit(R, y)
    with pytest.raises(ParameterError, match="has no bootstrap"):
        e.conf_int(method="bootstrap")
    e.partial_fit(R[:20], y[:20])
    assert not hasattr(e, "coef_cov_")
    with pytest.raises(NotFittedError):
        e.conf_int()


def test_pooled_online_is_the_batch_pooled_estimate():
    rng = np.random.default_rng(5)
    n, d = 300, 3
    counts = rng.choice([1, 2, 3, 5], size=n)
    counts[:4] = 1  # the first items read once: no noise estimate yet, no correction
    x = rng.normal(size=(n, d))
    y = x @ np.array([1.0, -1.0, 0.5]) + 1.0 + 0.2 * rng.normal(size=n)
    items = [x[i] + 0.7 * rng.normal(size=(counts[i], d)) for i in range(n)]
    early = BiasCompensatedRLS(noise="pooled", cv_folds=None)
    early.learn_stream(items[:4], y[:4])
    assert early.pool_dof_ == 0.0 and early.pool_inv_count_ == 4.0 and not np.any(early.correction_)
    for cv in (None, 4):
        online = BiasCompensatedRLS(noise="pooled", sweeps=30, cv_folds=cv)
        online.learn_stream(items, y)
        batch = CorrectedLeastSquares(fit_intercept=True, cv_folds=cv).fit(items, y)
        np.testing.assert_allclose(online.theta_, np.append(batch.coef_, batch.intercept_), rtol=1e-7)
        within = sum((a - a.mean(axis=0)).T @ (a - a.mean(axis=0)) for a in items)
        np.testing.assert_allclose(online.correction_[:d, :d],
                                   within / np.sum(counts - 1) * np.sum(1.0 / counts), rtol=1e-10)
    # per item == stream, bit for bit
    a = BiasCompensatedRLS(noise="pooled", cv_folds=3)
    a.learn_stream(items[:90], y[:90])
    b = BiasCompensatedRLS(noise="pooled", cv_folds=3)
    for t in range(90):
        b.learn_stream(items[t:t + 1], y[t:t + 1])
    for name in ("theta_", "chol_", "correction_", "scatter_", "fold_scatter_", "fold_pool_"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    # the correction was pooled: the mode cannot change mid-stream
    a.noise = "repeated"
    with pytest.raises(ParameterError, match="noise cannot change"):
        a.learn_stream(items[90:92], y[90:92])


def test_online_intervals_cover_in_92_to_98_percent_of_300_fits():
    rng = np.random.default_rng([41, 300])
    hits, fits = np.zeros(3), 300
    for _ in range(fits):
        R, y = _dense(rng, 300, 1.0, m=2)
        ci = EIVRegressor(seed=0).fit(R, y).conf_int(0.05)
        hits += (ci[:, 0] <= TRUE) & (TRUE <= ci[:, 1])
    cover = hits / fits  # 300 fits: a binomial standard error of 0.013 at 0.95
    assert np.all((cover >= 0.92) & (cover <= 0.98)), cover
