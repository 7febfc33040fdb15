"""CSS10 scikit-learn-style estimators: repeated measurements, varying copies, oracles, shortfall reporting, validation."""

import numpy as np
import pytest
from sklearn.base import clone

from nolo import CopiesExhausted, ParameterError
from nolo.noise import GaussianNoise, Oracle
from nolo.sklearn_api.noisy_kernel import NoisyKernelClassifier, NoisyKernelRegressor


def _data(n=1200, m=6, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = X @ np.array([1.0, -1.0, 0.5]) + 0.5 * X[:, 0] ** 2
    M = X[:, None, :] + 0.3 * rng.normal(size=(n, m, d))
    return X, y, M


def test_regressor_learns_from_measurements_and_reports_pools():
    X, y, M = _data()
    r = NoisyKernelRegressor(seed=0).fit(M, y)
    assert r.score(X, y) > 0.5
    assert r.pool_report_.sizes.tolist() == [6] * len(y)
    assert 0.0 <= r.shortfall_rate_ < 0.05
    assert r.predict(M[:5]).shape == (5,)  # measurements -> per-item means
    r2 = clone(r)
    assert r2.get_params()["eta"] == "auto" and not hasattr(r2, "learner_")


def test_varying_copies_short_pools_dropped_and_counted():
    X, y, M = _data(n=300)
    items = [M[i, : 1 + (i % 2)] for i in range(len(y))]  # 1 or 2 copies per item
    r = NoisyKernelRegressor(kernel="exponential", p=1.5, eta=0.01, seed=1).fit(items, y)
    rep = r.pool_report_
    assert rep.total_shortfalls > 0 and rep.items_short > 0
    assert r.shortfall_rate_ == pytest.approx(r.learner_.shortfalls_ / r.learner_.t_)  # per round, all passes
    assert 0 < r.shortfall_rate_ < 1
    with pytest.raises(CopiesExhausted):
        NoisyKernelRegressor(kernel="exponential", p=1.5, on_exhausted="raise", seed=1).fit(items, y)


def test_fit_on_oracles_and_partial_fit():
    X, y, _ = _data(n=400)
    rng = np.random.default_rng(3)
    oracles = [Oracle(x, GaussianNoise(0.3), rng) for x in X]
    r = NoisyKernelRegressor(kernel="linear", eta=0.02, max_iter=1, seed=2).fit(oracles[:200], y[:200])
    r.partial_fit(oracles[200:], y[200:])
    assert r.n_items_seen_ == 400 and r.pool_report_ is None
    assert r.learner_.t_ == 400


def test_classifier_with_arbitrary_labels():
    X, y, M = _data()
    labels = np.where(y > 0, "pos", "neg")
    c = NoisyKernelClassifier(eta=0.005, B_w=4.0, seed=0).fit(list(M), labels)
    assert list(c.classes_) == ["neg", "pos"]
    assert c.score(X, labels) > 0.8
    assert set(c.predict(X[:20])) <= {"neg", "pos"}


def test_validation():
    X, y, M = _data(n=20)
    with pytest.raises(ParameterError, match="regression loss"):
        NoisyKernelRegressor(loss="logistic").fit(M, y)
    with pytest.raises(ParameterError, match="two classes"):
        NoisyKernelClassifier().fit(M, np.arange(20))
    with pytest.raises(ParameterError, match="items"):
        NoisyKernelRegressor().fit(M, y[:5])
    with pytest.raises(ParameterError, match="on_exhausted"):
        NoisyKernelRegressor(on_exhausted="reuse").fit(M, y)
    with pytest.raises(ParameterError, match="not fitted"):
        NoisyKernelRegressor().predict(X)
