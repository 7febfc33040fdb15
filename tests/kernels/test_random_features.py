"""RandomFourierFeatures (Rahimi & Recht 2007): unbiased kernel estimate, the median heuristic, seeds, input forms,
errors that leave a fitted map as it was."""

import numpy as np
import pytest
import scipy.sparse as sp

from nolo.exceptions import ParameterError
from nolo.kernels import RandomFourierFeatures, median_sq_distance


def _pair():
    rng = np.random.default_rng(3)
    return rng.normal(size=(2, 6)) * 0.5


def test_inner_product_is_unbiased_for_the_gaussian_kernel():
    """E[phi(x).phi(x')] = exp(-||x - x'||^2 / (2 s^2)) over the draws of the map (unnormalised features): the mean
    over 400 independent maps lies within 4 standard errors of the kernel, for three bandwidths."""
    X = _pair()
    sq = float(np.sum((X[0] - X[1]) ** 2))
    for s2 in (0.5, 2.0, 8.0):
        vals = []
        for seed in range(400):
            F = RandomFourierFeatures(n_components=20, bandwidth=s2, normalize=False, seed=seed).fit_transform(X)
            vals.append(F[0] @ F[1])
        vals = np.array(vals)
        se = vals.std(ddof=1) / np.sqrt(vals.size)
        assert abs(vals.mean() - np.exp(-sq / (2 * s2))) < 4 * se, (s2, vals.mean(), np.exp(-sq / (2 * s2)), se)


def test_self_inner_product_and_normalisation():
    X = np.random.default_rng(0).normal(size=(50, 4))
    F = RandomFourierFeatures(n_components=3000, bandwidth=1.0, normalize=False, seed=0).fit_transform(X)
    # k(x, x) = 1: the unnormalised squared norms concentrate at 1 (2/D sum cos^2, variance O(1/D))
    assert np.allclose(np.einsum("ij,ij->i", F, F), 1.0, atol=0.1)
    G = RandomFourierFeatures(n_components=3000, bandwidth=1.0, seed=0).fit_transform(X)
    assert np.allclose(np.linalg.norm(G, axis=1), 1.0, atol=1e-12)
    assert np.allclose(G, F / np.linalg.norm(F, axis=1, keepdims=True), atol=1e-12)


def test_median_heuristic_by_hand():
    X = np.array([[0.0, 0.0], [3.0, 4.0]])  # the only pair of distinct rows: squared distance 25
    assert median_sq_distance(X, n_pairs=7, seed=1) == 25.0
    rff = RandomFourierFeatures(n_components=5, seed=2).fit(X)
    assert rff.bandwidth_ == 25.0
    # three rows on a line: squared distances 1, 4, 9; the median of many random pairs is one of them
    assert median_sq_distance(np.array([[0.0], [1.0], [3.0]]), n_pairs=999, seed=0) in (1.0, 4.0, 9.0)
    # the omegas have variance 1 / s^2
    big = RandomFourierFeatures(n_components=200_000, bandwidth=4.0, seed=0).fit(np.zeros((1, 1)) + [[1.0]])
    assert abs(big.omega_.var() - 0.25) < 0.005
    assert 0.0 <= big.offset_.min() and big.offset_.max() < 2 * np.pi


def test_same_seed_same_map_and_input_forms():
    X = np.random.default_rng(1).random((30, 8))
    X[X < 0.6] = 0.0
    a = RandomFourierFeatures(n_components=64, seed=5).fit(X)
    b = RandomFourierFeatures(n_components=64, seed=5).fit(sp.csr_matrix(X))
    c = RandomFourierFeatures(n_components=64, seed=6).fit(X)
    assert np.array_equal(a.omega_, b.omega_) and a.bandwidth_ == b.bandwidth_
    assert not np.array_equal(a.omega_, c.omega_)
    Fd, Fs = a.transform(X), a.transform(sp.csr_matrix(X))
    assert Fd.flags.c_contiguous and Fd.dtype == np.float64 and Fd.shape == (30, 64)
    assert np.allclose(Fd, Fs, atol=1e-12)
    assert np.allclose(a.transform(X[4]), Fd[4], atol=1e-12)  # one row, 1-D in, 1-D out (BLAS may round apart)
    g = np.random.default_rng(9)
    assert RandomFourierFeatures(8, bandwidth=1.0, seed=g).fit(X).omega_.shape == (8, 8)


@pytest.mark.parametrize("kw, match", [
    (dict(n_components=0), "n_components"),
    (dict(n_components=2.5), "n_components"),
    (dict(bandwidth=-1.0), "bandwidth"),
    (dict(bandwidth="mean"), "bandwidth"),
    (dict(bandwidth=float("nan")), "bandwidth"),
    (dict(normalize="yes"), "normalize"),
    (dict(n_pairs=0), "n_pairs"),
    (dict(seed=-1), "seed"),
])
def test_bad_parameters_are_named(kw, match):
    with pytest.raises(ParameterError, match=match):
        RandomFourierFeatures(**kw).fit(np.eye(3))


def test_bad_input_is_refused_and_leaves_a_fitted_map_as_it_was():
    X = np.random.default_rng(2).normal(size=(10, 3))
    with pytest.raises(ParameterError, match="not fitted"):
        RandomFourierFeatures().transform(X)
    rff = RandomFourierFeatures(n_components=16, seed=0).fit(X)
    before = (rff.omega_.copy(), rff.offset_.copy(), rff.bandwidth_)
    bad = X.copy()
    bad[0, 0] = np.nan
    for args in ((bad,), (np.ones((3, 3, 3)),), (np.ones((1, 3)),)):
        with pytest.raises(ParameterError):
            rff.fit(*args)
    with pytest.raises(ParameterError, match="3 columns"):
        rff.transform(np.ones((2, 4)))
    with pytest.raises(ParameterError, match="finite"):
        rff.transform(bad)
    with pytest.raises(ParameterError, match="rows that differ"):
        rff.fit(np.ones((5, 3)))
    assert np.array_equal(rff.omega_, before[0]) and np.array_equal(rff.offset_, before[1])
    assert rff.bandwidth_ == before[2]
