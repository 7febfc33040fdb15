"""A diagonal noise covariance (a scalar variance or a vector of variances) stays its ``d`` variances in the
estimators of :mod:`nolo.sklearn_api`: checking ``noise_cov`` and fitting with it build no ``d x d`` matrix, give
the results of the equivalent ``(d, d)`` diagonal matrix bit for bit, and a bad vector is refused naming
``noise_cov``."""

import tracemalloc
import warnings

import numpy as np
import pytest

from nolo import ParameterError
from nolo._validation import state_bytes_bound
from nolo.kernels.surrogate import compact_noise_covariance
from nolo.learners.linear.covariance import CovarianceSchedule
from nolo.sklearn_api import (
    CorrectedLeastSquaresRegressor,
    EIVRegressor,
    GaussianNoiseKernelRegressor,
    KnownCovarianceRegressor,
)
from nolo.sklearn_api.scoring import corrected_risk

#: d * d * 8 bytes = 32 GiB for the d x d matrix; the readings below are 3 MiB
BIG_D = 2**16

ESTIMATORS = {
    "KnownCovarianceRegressor": lambda nc: KnownCovarianceRegressor(noise_cov=nc, seed=0, max_iter=3),
    "GaussianNoiseKernelRegressor": lambda nc: GaussianNoiseKernelRegressor(noise_cov=nc, width=100.0, seed=0),
    "EIVRegressor": lambda nc: EIVRegressor(noise="known", noise_cov=nc, seed=0),
    "CorrectedLeastSquaresRegressor": lambda nc: CorrectedLeastSquaresRegressor(noise_cov=nc),
}


def _data(seed=1, n=60, d=4):
    rng = np.random.default_rng(seed)
    clean = rng.normal(size=(n, d))
    y = clean @ rng.normal(size=d) + 0.5
    dense = clean[:, None, :] + 0.3 * rng.normal(size=(n, 3, d))
    ragged = [clean[i] + 0.3 * rng.normal(size=(1 + i % 3, d)) for i in range(n)]
    return clean, y, dense, ragged


def _fit(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return est, [str(w.message) for w in caught]


def _same_fit(a, b, clean, X, y):
    for attr in ("coef_", "intercept_", "coef_cov_", "bse_", "correction_scale_"):
        if hasattr(a, attr):
            assert np.array_equal(np.asarray(getattr(a, attr)), np.asarray(getattr(b, attr)), equal_nan=True), attr
    assert np.array_equal(a.predict(clean), b.predict(clean))
    if hasattr(a, "coef_"):
        assert corrected_risk(a, X, y) == corrected_risk(b, X, y)


# -- the vector gives what the diagonal matrix gives (what it was expanded to before) ---------------------------

VARIANCES = np.array([0.05, 0.09, 0.0, 0.2])


@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("layout", ["dense", "ragged"])
def test_variances_fit_bit_identical_to_their_diagonal_matrix(name, layout):
    clean, y, dense, ragged = _data()
    X = dense if layout == "dense" else ragged
    if name == "GaussianNoiseKernelRegressor" and layout == "ragged":
        X = [a for a in ragged if a.shape[0] >= 2]
        y = y[[i for i, a in enumerate(ragged) if a.shape[0] >= 2]]
    a, wa = _fit(ESTIMATORS[name](VARIANCES), X, y)
    if name == "GaussianNoiseKernelRegressor":  # its kernel reads the variances itself; same as a list of them
        b, wb = _fit(ESTIMATORS[name](list(VARIANCES)), X, y)
    else:
        b, wb = _fit(ESTIMATORS[name](np.diag(VARIANCES)), X, y)
    _same_fit(a, b, clean, X, y)
    assert wa == wb


@pytest.mark.parametrize("name", ["KnownCovarianceRegressor", "EIVRegressor", "CorrectedLeastSquaresRegressor"])
def test_a_scalar_variance_is_its_vector_and_its_isotropic_matrix(name):
    clean, y, dense, _ = _data(seed=2)
    fits = [_fit(ESTIMATORS[name](nc), dense, y)[0] for nc in (0.07, np.full(4, 0.07), 0.07 * np.eye(4))]
    _same_fit(fits[0], fits[1], clean, dense, y)
    _same_fit(fits[0], fits[2], clean, dense, y)


@pytest.mark.parametrize("combine_copies", [True, False])
@pytest.mark.parametrize("step", [None, "theory"])
def test_known_covariance_regressor_variants_bit_identical(combine_copies, step):
    """Equal and unequal reading counts (per-item noise ``Sigma / m_i``), the theory step, partial_fit."""
    clean, y, dense, ragged = _data(seed=3)
    for X in (dense, ragged):
        a, b = (KnownCovarianceRegressor(noise_cov=nc, combine_copies=combine_copies, step=step, seed=0, max_iter=4)
                for nc in (VARIANCES, np.diag(VARIANCES)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for est in (a, b):
                est.fit(X[:30], y[:30]).partial_fit(X[30:], y[30:])
        _same_fit(a, b, clean, X, y)


def test_fewer_items_than_features_warns_as_before():
    """``n < d``: the corrected Gram matrix is singular; the diagnosis says so without the d x d moments."""
    _, y, dense, _ = _data(seed=4)
    for nc in (VARIANCES, np.diag(VARIANCES)):
        _, caught = _fit(KnownCovarianceRegressor(noise_cov=nc, seed=0, max_iter=2), dense[:3], y[:3])
        assert any("ill-posed errors-in-variables fit" in m for m in caught), caught
    _, caught = _fit(KnownCovarianceRegressor(noise_cov=np.zeros(4), seed=0, max_iter=2), dense[:3], y[:3])
    assert not any("corrected Gram matrix" in m for m in caught), caught  # no noise: nothing to correct


def test_schedule_keeps_variances_from_a_callable():
    """A callable giving variances (the per-item noise of unequal reading counts) gives diagonal blocks of variances,
    the values the d x d matrices' diagonals held."""
    v = np.array([0.5, 0.25, 0.0])
    sched = CovarianceSchedule(lambda t: v / t, 3)
    kind, block = sched.block(0, 4)
    assert kind == "diag" and block.shape == (4, 3)
    assert np.array_equal(block, np.stack([np.diag(sched.at(t)) for t in range(1, 5)]))
    assert np.array_equal(CovarianceSchedule(lambda t: np.diag(v / t), 3).block(0, 4)[1], block)
    assert CovarianceSchedule(lambda t: v, 3).block(0, 0)[1].shape == (0, 3)


def test_compact_noise_covariance_forms():
    assert np.array_equal(compact_noise_covariance(0.5), [0.5])
    assert np.array_equal(compact_noise_covariance(0.5, 3), [0.5, 0.5, 0.5])
    assert np.array_equal(compact_noise_covariance([1.0, 2.0]), [1.0, 2.0])
    assert np.array_equal(compact_noise_covariance([[2.0, 1.0], [1.0, 2.0]], 2), [[2.0, 1.0], [1.0, 2.0]])
    with pytest.raises(ParameterError, match="noise_cov"):
        compact_noise_covariance([[1.0, 2.0], [2.0, 1.0]])  # not PSD: the matrix path still checks it


# -- a large d: no d x d matrix -----------------------------------------------------------------------------------

def _peak(fn):
    """Peak traced bytes of ``fn()``; inside a 64 MiB state bound, so that a d x d expansion that is size-checked
    first is refused instead of allocated."""
    tracemalloc.start()
    try:
        with state_bytes_bound(64 * 2**20, "the test's bound"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3, 2, BIG_D))  # 3 items, 2 readings: 3 MiB
    return X, rng.normal(size=3), np.full(BIG_D, 0.01)


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    """Compile the learners' loops before anything is measured (numba's compiler allocates traced memory)."""
    _, y, dense, ragged = _data(seed=6, n=8, d=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for nc in (0.01, np.full(3, 0.01)):
            for X in (dense, ragged):
                KnownCovarianceRegressor(noise_cov=nc, seed=0, max_iter=2).fit(X, y)
            GaussianNoiseKernelRegressor(noise_cov=nc, width=100.0, seed=0).fit(dense, y)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_checking_a_large_vector_builds_no_matrix(big, name):
    *_, v = big
    est = ESTIMATORS[name](v)
    _, peak = _peak(est._validate_params)
    assert peak < 2 * 2**20, f"checking noise_cov of {BIG_D} variances took {peak / 2**20:.1f} MiB"
    _, peak = _peak(lambda: est.set_params(noise_cov=v * 2)._validate_params())
    assert peak < 2 * 2**20, f"{peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("layout", ["dense", "ragged"])
@pytest.mark.parametrize("name", ["KnownCovarianceRegressor", "GaussianNoiseKernelRegressor"])
def test_fitting_with_a_large_vector_builds_no_matrix(big, name, layout):
    """The CSS11 estimators' state is O(d): a fit on a few items with a 2**16-variance noise_cov (32 GiB as a
    matrix) stays within a few times the readings' 3 MiB (the copies of the readings the fit makes)."""
    X, y, v = big
    if layout == "ragged":  # a list; unequal reading counts: the per-item noise Sigma / m_i of the known-covariance learner
        X = [X[0], X[1, :1], X[2]] if name == "KnownCovarianceRegressor" else list(X)  # the kernel: equal counts
    est, peak = _peak(lambda: ESTIMATORS[name](v).fit(X, y))
    assert peak < 24 * 2**20, f"fitting with noise_cov of {BIG_D} variances took {peak / 2**20:.1f} MiB"  # 10-15
    assert np.all(np.isfinite(est.predict(np.zeros((2, BIG_D)))))
    if name == "KnownCovarianceRegressor":
        _, peak = _peak(lambda: corrected_risk(est, X, y))
        assert peak < 16 * 2**20, f"corrected_risk took {peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("bad, words", [
    ("negative", "must all be >= 0"),
    ("nan", "finite"),
    ("inf", "finite"),
    ("long", f"has {BIG_D + 1} variances but the inputs have d={BIG_D}"),
    ("short", f"has {BIG_D - 1} variances but the inputs have d={BIG_D}"),
])
def test_a_bad_large_vector_is_refused_naming_noise_cov(big, name, bad, words):
    X, y, v = big
    v = v.copy()
    if bad == "negative":
        v[-1] = -1e-9
    elif bad == "nan":
        v[BIG_D // 2] = np.nan
    elif bad == "inf":
        v[0] = np.inf
    elif bad == "long":
        v = np.append(v, 0.01)
    else:
        v = v[:-1]
    est = ESTIMATORS[name](v)
    if bad in ("negative", "nan", "inf"):  # refused by the parameter check, before any data
        with pytest.raises(ParameterError, match="noise_cov") as info:
            _peak(est._validate_params)
        assert words in str(info.value)
    with pytest.raises(ParameterError, match="noise_cov") as info:
        _peak(lambda: est.fit(X, y))
    assert words in str(info.value)
    assert not hasattr(est, "coef_") and not hasattr(est, "learner_")
