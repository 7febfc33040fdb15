"""Issue 14 in the CSS11 code: chunk-independent streams with a constant full Sigma (item 7), overflow and
messages naming the user's parameter (item 9), complex input refused (item 11).  Each test failed before the fix."""

import numpy as np
import pytest

from nolo import ParameterError
from nolo.kernels import GaussianSurrogateKernel
from nolo.learners.kernel.gaussian_noise import GaussianNoiseKernelRegression
from nolo.learners.linear import KnownCovarianceLinearRegression, NaiveOGDRegression, TwoCopyLinearRegression
from nolo.sklearn_api import GaussianNoiseKernelRegressor, KnownCovarianceRegressor, TwoCopyRegressor


class _Fixed:
    def __init__(self, copies):
        self.copies = np.asarray(copies, dtype=float)
        self.d = self.copies.shape[1]

    def query(self, n):
        return self.copies[:n].copy()


def _stream(d=8, T=400, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    C = X[:, None, :] + 0.3 * rng.normal(size=(T, 2, d))
    M = rng.normal(size=(d, d))
    return C, X @ rng.normal(size=d), X, 0.02 * (M @ M.T) / d


@pytest.mark.parametrize("d", [5, 8, 20])
def test_constant_full_sigma_stream_is_chunk_independent_and_equals_per_round_learns(d):
    C, y, X, S = _stream(d)
    make = lambda: KnownCovarianceLinearRegression(noise_cov=S, radius=100.0, step=0.01)  # noqa: E731
    one = make()
    p_one = one.learn_stream(C[:, :1], y, clean=X)
    two = make()
    p_two = np.concatenate([two.learn_stream(C[:200, :1], y[:200], clean=X[:200]),
                            two.learn_stream(C[200:, :1], y[200:], clean=X[200:])])
    odd = make()
    for a, b in ((0, 1), (1, 38), (38, 251), (251, 400)):
        odd.learn_stream(C[a:b, :1], y[a:b])
    per_round = make()
    for i in range(C.shape[0]):
        per_round.learn(_Fixed(C[i, :1]), y[i])
    for m in (two, odd, per_round):
        np.testing.assert_array_equal(m.w_, one.w_)
        np.testing.assert_array_equal(m.average_, one.average_)
    np.testing.assert_array_equal(p_two, p_one)


def test_frame_state_survives_save_and_load(tmp_path):
    from nolo.learners.base import Learner

    C, y, _, S = _stream(6)
    ref = KnownCovarianceLinearRegression(noise_cov=S, radius=100.0, step=0.01)
    ref.learn_stream(C[:, :1], y)
    m = KnownCovarianceLinearRegression(noise_cov=S, radius=100.0, step=0.01)
    m.learn_stream(C[:150, :1], y[:150])
    m.save(tmp_path / "m.npz")
    r = Learner.load(tmp_path / "m.npz")
    r.learn_stream(C[150:, :1], y[150:])
    np.testing.assert_array_equal(r.w_, ref.w_)


@pytest.mark.parametrize("make", [TwoCopyLinearRegression, NaiveOGDRegression,
                                  lambda **k: KnownCovarianceLinearRegression(noise_cov=0.05, **k)])
def test_per_round_learn_equals_learn_stream(make):
    C, y, _, _ = _stream(5)
    a, b = make(radius=1.0, step=0.05), make(radius=1.0, step=0.05)
    a.learn_stream(C, y)
    for i in range(C.shape[0]):
        b.learn(_Fixed(C[i]), y[i])
    np.testing.assert_array_equal(a.w_, b.w_)
    np.testing.assert_array_equal(a.average_, b.average_)


def test_huge_radius_is_a_named_parameter_error_not_overflow():
    C, y, _, _ = _stream(3, T=20)
    for est in (KnownCovarianceRegressor(radius=1e300), TwoCopyRegressor(radius=1e300)):
        with pytest.raises(ParameterError, match="radius must be .* got 1e\\+300"):
            est.fit(C, y)
    m = KnownCovarianceLinearRegression(radius=1e200, x_bound=1e200, y_bound=1.0, horizon=10)
    with pytest.raises(ParameterError, match="radius=1e\\+200, x_bound=1e\\+200"):
        m.learn_stream(C[:, :1], y)
    k = GaussianNoiseKernelRegression(kernel=GaussianSurrogateKernel(width=2.0, noise_cov=0.1), W=1e300,
                                      y_bound=1e300, horizon=10)
    with pytest.raises(ParameterError, match="W=1e\\+300"):
        k.learn_stream(C, y)


def test_huge_data_with_theory_step_names_x_and_y():
    C, y, _, _ = _stream(3, T=20)
    with pytest.raises(ParameterError, match="X and y"):
        TwoCopyRegressor().fit(C * 1e200, y)


@pytest.mark.parametrize("est", [TwoCopyRegressor(), KnownCovarianceRegressor(noise_cov=0.01),
                                 GaussianNoiseKernelRegressor(width=4.0, noise_cov=0.01)])
def test_complex_input_is_refused_not_truncated(est):
    C, y, X, _ = _stream(3, T=20)
    with pytest.raises(ParameterError, match="X must be real"):
        est.fit(C.astype(np.complex128), y)
    with pytest.raises(ParameterError, match="y must be real"):
        est.fit(C, y.astype(np.complex128))
    est.fit(C, y)
    with pytest.raises(ParameterError, match="X must be real"):
        est.predict(X.astype(np.complex128))


def test_complex_input_refused_by_the_learners():
    C, y, _, _ = _stream(3, T=20)
    m = TwoCopyLinearRegression(step=0.1)
    with pytest.raises(ParameterError, match="copies must be real"):
        m.learn_stream(C.astype(np.complex64), y)
    with pytest.raises(ParameterError, match="real"):
        m.learn(_Fixed(C[0]), np.complex128(1 + 1j))
    assert not m.is_initialized
