"""nolo.estimators.replicates: exact identities and unbiasedness by Monte Carlo (fixed seeds, a few SEs)."""

import numpy as np
import pytest

from nolo.estimators.replicates import mean_cross, mean_noise_covariance, pairwise_outer, pairwise_outer_matvec
from nolo.exceptions import ParameterError


def test_pairwise_outer_is_the_mean_over_distinct_pairs():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 3))
    brute = np.mean([np.outer(X[i], X[j]) for i in range(5) for j in range(5) if i != j], axis=0)
    S = X.sum(axis=0)
    formula = (np.outer(S, S) - X.T @ X) / (5 * 4)
    assert np.allclose(pairwise_outer(X), brute, atol=1e-14) and np.allclose(formula, brute, atol=1e-14)
    w = rng.normal(size=3)
    assert np.allclose(pairwise_outer_matvec(X, w), brute @ w, atol=1e-14)


def test_two_readings_give_the_symmetrised_two_copy_product():
    x1, x2 = np.array([1.0, 2.0]), np.array([-3.0, 0.5])
    U = pairwise_outer(np.stack([x1, x2]))
    assert np.allclose(U, 0.5 * (np.outer(x1, x2) + np.outer(x2, x1)), atol=1e-15)


def test_batches_match_items():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(4, 3, 2))
    y = rng.normal(size=4)
    w = rng.normal(size=2)
    assert np.allclose(pairwise_outer(X), np.stack([pairwise_outer(x) for x in X]))
    assert np.allclose(pairwise_outer_matvec(X, w), np.stack([pairwise_outer_matvec(x, w) for x in X]))
    assert np.allclose(mean_cross(X, y), np.stack([mean_cross(x, yi) for x, yi in zip(X, y)]))


@pytest.mark.parametrize("m", [2, 3, 8])
def test_unbiased_by_monte_carlo(m):
    """E[U] = x x^T, E[xbar y] = x y, Cov(xbar) = Sigma/m with non-Gaussian, correlated noise (fixed seed)."""
    rng = np.random.default_rng(100 + m)
    x = np.array([1.0, -0.5, 2.0])
    y = 1.5
    Lc = np.array([[1.0, 0, 0], [0.5, 0.8, 0], [-0.3, 0.2, 0.6]])
    Sigma = Lc @ Lc.T * 3.0  # uniform(-3, 3) has variance 3
    n = 40_000
    noise = rng.uniform(-3, 3, size=(n, m, 3)) @ Lc.T
    X = x + noise
    ys = y + rng.normal(size=n)
    U = pairwise_outer(X)
    se = U.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(U.mean(axis=0) - np.outer(x, x)) < 4 * se)
    C = mean_cross(X, ys)
    assert np.all(np.abs(C.mean(axis=0) - x * y) < 4 * C.std(axis=0) / np.sqrt(n))
    xbar = X.mean(axis=1)
    corrected = np.einsum("ni,nj->nij", xbar, xbar) - mean_noise_covariance(Sigma, m)
    assert np.all(np.abs(corrected.mean(axis=0) - np.outer(x, x)) < 4 * corrected.std(axis=0) / np.sqrt(n))
    # the uncorrected square of the mean is biased by Sigma/m -- the test can fail
    naive = np.einsum("ni,nj->nij", xbar, xbar).mean(axis=0)
    assert np.abs(naive - np.outer(x, x))[0, 0] > 10 * se[0, 0]


def test_variance_falls_with_m():
    rng = np.random.default_rng(7)
    x = np.array([1.0, 2.0])
    var = {}
    for m in (2, 4, 8, 16):
        X = x + rng.normal(size=(20_000, m, 2))
        var[m] = pairwise_outer(X)[:, 0, 1].var()
    assert var[2] > 1.7 * var[4] > 1.7 ** 2 * var[8] > 1.7 ** 3 * var[16]


def test_bad_inputs_named():
    with pytest.raises(ParameterError, match="reading"):
        pairwise_outer(np.ones((1, 3)))
    with pytest.raises(ParameterError, match="w"):
        pairwise_outer_matvec(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ParameterError, match="y"):
        mean_cross(np.ones((4, 2, 3)), np.ones(3))
    with pytest.raises(ParameterError, match="m"):
        mean_noise_covariance(np.eye(2), 0)
