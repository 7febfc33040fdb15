"""nolo.sklearn_api estimators: scale-free defaults, passes and their warnings, the errors-in-variables wrappers,
the classifier's partial_fit / predict_proba, and state left unchanged by a refused call."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.exceptions import NotFittedError as SkNotFitted
from sklearn.linear_model import LinearRegression

import nolo.sklearn_api as api
from nolo import ParameterError
from nolo.batch import CorrectedLeastSquares
from nolo.sklearn_api import (
    CorrectedLeastSquaresRegressor,
    EIVRegressor,
    KnownCovarianceRegressor,
    NoisyKernelClassifier,
    NoisyKernelRegressor,
    ProjectionWarning,
    TwoCopyRegressor,
)


def _readme(m=8, sd=0.3, n=500, seed=1):
    """The issue-15 README example: 500 items, 3 features, m readings of noise sd."""
    rng = np.random.default_rng(seed)
    clean = rng.uniform(-1, 1, size=(n, 3))
    y = clean @ np.array([1.0, -0.5, 0.2])
    return clean, y, clean[:, None, :] + sd * rng.standard_normal((n, m, 3))


LINEAR = {
    "TwoCopyRegressor": lambda sd: TwoCopyRegressor(seed=0),
    "KnownCovarianceRegressor": lambda sd: KnownCovarianceRegressor(noise_cov=sd**2, seed=0),
    "EIVRegressor": lambda sd: EIVRegressor(seed=0),
    "EIVRegressor(known)": lambda sd: EIVRegressor(noise="known", noise_cov=sd**2, seed=0),
    "CorrectedLeastSquaresRegressor": lambda sd: CorrectedLeastSquaresRegressor(),
}


@pytest.mark.parametrize("name", sorted(LINEAR))
def test_linear_estimators_on_the_readme_example_and_scale_free(name):
    clean, y, X = _readme()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r1 = LINEAR[name](0.3).fit(X, y).score(clean, y)
        r100 = LINEAR[name](0.3).fit(X, 100 * y + 7).score(clean, 100 * y + 7)
    ols_mean = LinearRegression().fit(X.mean(axis=1), y).score(clean, y)
    assert r1 > ols_mean - 0.01  # issue 15: never worse than OLS on the mean by more than 0.01 (0.999 here)
    assert abs(r1 - r100) < 0.005  # target scale does not matter


@pytest.mark.parametrize("name", sorted(api.__all__))
def test_every_estimator_is_target_scale_free(name):
    clean, y, X = _readme(n=200)
    cls = getattr(api, name)
    kw = {"seed": 0} if "seed" in cls().get_params() else {}
    if name == "KnownCovarianceRegressor":
        kw["noise_cov"] = 0.09
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if name == "NoisyKernelClassifier":
            a = cls(**kw).fit(X, y > 0).decision_function(clean)
            b = cls(**kw).fit(X * 1.0, y > 0).decision_function(clean)
            np.testing.assert_allclose(a, b)
            return
        p1 = cls(**kw).fit(X, y).predict(clean)
        p100 = cls(**kw).fit(X, 100 * y).predict(clean)
    np.testing.assert_allclose(p100, 100 * p1, rtol=1e-6, atol=1e-6 * np.max(np.abs(p100)))


def test_eiv_corrects_attenuation_where_ols_on_the_mean_fails():
    """2 readings of sd 1.0 (attenuation factor (1/3) / (1/3 + 1/2) = 0.4): EIV beats OLS-on-the-mean by >= 0.1 R^2
    and is within 0.01 of the batch corrected least squares after one pass."""
    clean, y, X = _readme(m=2, sd=1.0, n=2000)
    ols = LinearRegression().fit(X.mean(axis=1), y).score(clean, y)
    cls_known = CorrectedLeastSquares(noise_cov=1.0).fit(X - X.mean(axis=(0, 1)), y - y.mean())
    one_pass = EIVRegressor(noise="known", noise_cov=1.0, max_iter=1, seed=0).fit(X, y)
    assert one_pass.n_iter_ == 1
    r_eiv = one_pass.score(clean, y)
    r_cls = r2(clean - X.mean(axis=(0, 1)), y - y.mean(), cls_known.coef_)
    assert r_eiv > ols + 0.1, (r_eiv, ols)
    assert abs(r_eiv - r_cls) < 0.01, (r_eiv, r_cls)
    rep = EIVRegressor(seed=0).fit(X, y)  # noise unknown: from the two readings' spread
    assert rep.score(clean, y) > ols + 0.1


def r2(X, y, w):
    return 1 - np.sum((X @ w - y) ** 2) / np.sum((y - y.mean()) ** 2)


def test_eiv_equals_batch_corrected_least_squares_on_the_same_standardised_data():
    clean, y, X = _readme(m=4, sd=0.5, n=300)
    a = EIVRegressor(alpha=1e-9, sweeps=50, max_iter=1, shuffle=False).fit(X, y)
    b = CorrectedLeastSquaresRegressor().fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=2e-3)


def test_eiv_partial_fit_streams_and_ragged_items():
    clean, y, X = _readme(m=3, sd=0.5, n=600)
    est = EIVRegressor(seed=0)
    for i in range(0, 600, 100):
        est.partial_fit(X[i : i + 100], y[i : i + 100])
    assert est.n_items_seen_ == 600 and est.learner_.t_ == 600
    full = EIVRegressor(seed=0, max_iter=1).fit(X, y)
    np.testing.assert_allclose(est.coef_, full.coef_, atol=0.05)
    ragged = [X[i, : 2 + i % 2] for i in range(600)]
    r = EIVRegressor(seed=0).fit(ragged, y)
    assert r.score(clean, y) > 0.95


def test_convergence_and_projection_warnings():
    clean, y, X = _readme(m=2, sd=1.0, n=300)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        TwoCopyRegressor(max_iter=2, tol=0.0, seed=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = KnownCovarianceRegressor(noise_cov=1.0, max_iter=200, tol=1e-2, seed=0).fit(X, y)  # converges
    assert 1 < est.n_iter_ < 200
    with pytest.warns(ProjectionWarning, match="raise radius"):
        small = KnownCovarianceRegressor(noise_cov=1.0, radius=0.05, max_iter=1, seed=0).fit(X, y)
    assert small.projection_active_ > 0.5
    assert np.linalg.norm(small.learner_.w_) <= 0.05 + 1e-12


@pytest.mark.parametrize("name", api.__all__)
def test_not_fitted_error_and_refused_fit_keeps_the_fitted_model(name):
    cls = getattr(api, name)
    kw = {"seed": 0} if "seed" in cls().get_params() else {}
    clean, y, X = _readme(m=4, n=40)
    target = (y > 0) if name == "NoisyKernelClassifier" else y
    est = cls(**kw)
    with pytest.raises(SkNotFitted):
        est.predict(clean)
    with pytest.raises(ParameterError):
        est.predict(clean)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, target)
    before = est.predict(clean)
    for bad in (np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X), X + 1j, X[:, :, :2][:0]):
        with pytest.raises(ParameterError, match="X"):
            est.fit(bad, target)
        np.testing.assert_array_equal(est.predict(clean), before)


def test_classifier_partial_fit_one_class_first_batch_and_predict_proba():
    clean, y, X = _readme(m=4, n=400)
    labels = np.where(y > 0, "up", "down")
    first = labels == "up"
    clf = NoisyKernelClassifier(kernel="linear", seed=0)
    clf.partial_fit(X[first][:50], labels[first][:50], classes=["down", "up"])  # one class only
    assert list(clf.classes_) == ["down", "up"]
    with pytest.raises(ParameterError, match="classes"):
        clf.partial_fit(X[:10], labels[:10], classes=["a", "b"])
    clf.partial_fit(X, labels)
    P = clf.predict_proba(clean)
    assert P.shape == (400, 2) and np.allclose(P.sum(axis=1), 1.0) and np.all((P >= 0) & (P <= 1))
    np.testing.assert_array_equal(clf.classes_[np.argmax(P, axis=1)], clf.predict(clean))
    assert clf.score(clean, labels) > 0.75  # one pass; the standardisation was fitted on the one-class first batch
    with pytest.raises(ParameterError, match="1 class"):
        NoisyKernelClassifier().partial_fit(X[first][:50], labels[first][:50])
