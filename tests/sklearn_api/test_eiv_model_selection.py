"""Model selection on replicate data: the corrected-risk scorer is unbiased for the clean-input error, and a grid
search on it picks the correction where the default R^2 picks the uncorrected fit."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

from nolo.exceptions import ParameterError
from nolo.sklearn_api import CorrectedLeastSquaresRegressor, corrected_risk, corrected_risk_scorer, to_items

W = np.array([1.0, -0.5])


def _long_table(rng, n=600, noise=1.0):
    ms = rng.choice([1, 2, 3], p=[0.2, 0.5, 0.3], size=n)
    x = rng.normal(size=(n, 2))
    y = x @ W + 1.0 + 0.3 * rng.normal(size=n)
    idx = np.repeat(np.arange(n), ms)
    rows = x[idx] + noise * rng.normal(size=(idx.size, 2))
    return rows, y[idx], np.array([f"item-{i}" for i in range(n)])[idx], x, y


def test_the_corrected_risk_is_unbiased_for_the_clean_input_error():
    rng = np.random.default_rng(0)
    rows, y_rows, ids, _, _ = _long_table(rng)
    est = CorrectedLeastSquaresRegressor(cv_folds=None).fit(rows, y_rows, groups=ids)
    # the clean-input error of this fixed fit, and its estimates on fresh held-out replicate tables
    x = rng.normal(size=(200_000, 2))
    clean = np.mean((x @ W + 1.0 + 0.3 * rng.normal(size=x.shape[0]) - est.predict(x)) ** 2)
    risks = []
    for _ in range(200):
        r, yr, g, _, _ = _long_table(rng)
        risks.append(corrected_risk(est, r, yr, groups=g))
    se = np.std(risks, ddof=1) / np.sqrt(len(risks))
    assert abs(np.mean(risks) - clean) < 4 * se, (np.mean(risks), clean, se)


def test_a_grid_search_on_the_corrected_risk_picks_the_correction_where_r2_picks_least_squares():
    rng = np.random.default_rng(1)
    rows, y_rows, ids, _, _ = _long_table(rng, n=800)
    items, y_items = to_items(rows, y_rows, groups=ids)
    assert len(items) == 800 and y_items.shape == (800,)
    grid = {"noise_cov": ["estimate", 1e-9]}  # the correction, or (in effect) least squares on the item means
    cv = KFold(5, shuffle=True, random_state=0)
    by_risk = GridSearchCV(CorrectedLeastSquaresRegressor(cv_folds=None), grid, scoring=corrected_risk_scorer,
                           cv=cv).fit(items, y_items)
    by_r2 = GridSearchCV(CorrectedLeastSquaresRegressor(cv_folds=None), grid, cv=cv).fit(items, y_items)
    assert by_risk.best_params_ == {"noise_cov": "estimate"}
    assert by_r2.best_params_ == {"noise_cov": 1e-9}
    # and the corrected choice is the better one at clean inputs
    x = rng.normal(size=(50_000, 2))
    truth = x @ W + 1.0
    err = {k: np.mean((m.best_estimator_.predict(x) - truth) ** 2) for k, m in (("risk", by_risk), ("r2", by_r2))}
    assert err["risk"] < 0.5 * err["r2"], err
    scores = cross_val_score(CorrectedLeastSquaresRegressor(), items, y_items, scoring=corrected_risk_scorer, cv=cv)
    assert scores.shape == (5,) and np.all(np.isfinite(scores))


def test_held_out_items_need_a_replicate_or_a_known_noise():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 2))
    est = CorrectedLeastSquaresRegressor(noise_cov=0.5, cv_folds=None).fit(X, X @ W)
    assert np.isfinite(corrected_risk(est, X, X @ W))  # known noise: single readings are fine
    est2 = CorrectedLeastSquaresRegressor(cv_folds=None).fit(X[:, None, :] + rng.normal(size=(30, 2, 2)), X @ W)
    with pytest.raises(ParameterError, match="all have one reading"):
        corrected_risk(est2, X, X @ W)
