"""CSS10 kernels: beta sequences, Gram matrices, Map_Estimate / Prod (both flavours) unbiasedness, Lemma 3, log-space overflow."""

import math

import numpy as np
import pytest

from nolo import NumericalError, ParameterError
from nolo.kernels import (
    DotProductKernel,
    ExponentialKernel,
    FeatureEstimate,
    GaussianKernel,
    LinearKernel,
    PolynomialKernel,
    get_kernel,
)
from nolo.noise import GaussianNoise, LaplaceNoise, Oracle, PerCallSchedule, UniformNoise

X1 = np.array([0.3, -0.2, 0.5])
X2 = np.array([0.1, 0.4, -0.3])


def zscore(v, target):
    v = np.asarray(v)
    return (v.mean() - target) / (v.std(ddof=1) / math.sqrt(v.size))


def test_polynomial_beta_and_gram():
    k = PolynomialKernel(3, 1.0)
    assert np.allclose([math.exp(k.log_beta(n)[1]) for n in range(4)], [1, 3, 3, 1])
    assert k.log_beta(4)[0] == 0
    assert k(X1, X2) == pytest.approx((1 + X1 @ X2) ** 3)
    h = PolynomialKernel(2, 0.0)
    assert h.log_beta(0)[0] == 0 and h.log_beta(1)[0] == 0 and h.log_beta(2) == (1.0, 0.0)
    assert h(X1, X2) == pytest.approx((X1 @ X2) ** 2)
    assert LinearKernel()(X1, X2) == pytest.approx(X1 @ X2)
    e = ExponentialKernel(0.5)
    assert math.exp(e.log_beta(3)[1]) == pytest.approx(0.5**3 / 6)
    G = e(np.stack([X1, X2]))
    assert G.shape == (2, 2) and G[0, 1] == pytest.approx(math.exp(0.5 * X1 @ X2))


def test_user_beta_validated():
    k = DotProductKernel([1.0, 0.0, 2.0])
    assert k(X1, X2) == pytest.approx(1 + 2 * (X1 @ X2) ** 2)
    assert k.max_degree == 2
    for bad in ([1.0, -0.1], [], [0.0, 0.0], [1.0, np.nan]):
        with pytest.raises(ParameterError, match="beta"):
            DotProductKernel(bad)(X1, X2)
    with pytest.raises(ParameterError, match="degree"):
        PolynomialKernel(0).validate()
    with pytest.raises(ParameterError, match="sigma2"):
        GaussianKernel(-1.0).validate()
    with pytest.raises(ParameterError, match="kernel"):
        get_kernel("nope")


def test_gaussian_gram():
    k = GaussianKernel(2.0)
    assert k(X1, X2) == pytest.approx(math.exp(-np.sum((X1 - X2) ** 2) / 2.0))


def test_prod_hand_worked_and_degree_mismatch():
    k = PolynomialKernel(2, 1.0)
    p = 2.0
    a_copies = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 1.0]])
    b_copies = np.array([[2.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    lw = 0.5 * math.log(1.0) + 3 * math.log(p) - math.log(p - 1)  # beta_2 = 1
    a = FeatureEstimate(2, a_copies, 1.0, lw, 2)
    b = FeatureEstimate(2, b_copies, -1.0, lw, 2)
    # beta_n p^(2n+2)/(p-1)^2 prod <a_j, b_j> = 64 * 4 * 0.5, times the signs
    assert k.prod(a, b) == pytest.approx(-64 * 4 * 0.5)
    assert k.sq_norm(a) == pytest.approx(64 * 5 * 2.25)
    xp = np.array([1.0, 0.0, 1.0])
    # beta_n p^(n+1)/(p-1) prod <a_j, x'> = 8 * 1 * 1.5
    assert k.prod_clean(a, xp) == pytest.approx(8 * 1.5)
    c = FeatureEstimate(1, a_copies[:1], 1.0, 0.0, 1)
    assert k.prod(a, c) == 0.0


def test_prod_overflow_raises_numerical_error():
    k = ExponentialKernel()
    big = np.full((3, 2), 1e120)
    a = FeatureEstimate(3, big, 1.0, 0.0, 3)
    with pytest.raises(NumericalError):
        k.prod(a, a)
    with pytest.raises(NumericalError):
        k.prod_clean(a, np.array([1e120, 1e120]))


NOISES = {
    "gaussian": GaussianNoise(0.3),
    "uniform": UniformNoise(0.52),
    "laplace": LaplaceNoise(0.2),
    "switching": PerCallSchedule([GaussianNoise(0.3), UniformNoise(0.5), LaplaceNoise(0.2)]),
}


@pytest.mark.parametrize(
    "kernel",
    [PolynomialKernel(3, 1.0), PolynomialKernel(2, 0.0), ExponentialKernel(1.0), GaussianKernel(2.0)],
    ids=["poly3", "poly2hom", "exp", "gauss"],
)
@pytest.mark.parametrize("noise", ["gaussian", "uniform", "switching"])
def test_prod_unbiased(kernel, noise):
    rng = np.random.default_rng(7)
    target = kernel(X1, X2)
    clean, pair = [], []
    for t in range(2500):
        o = Oracle(X1, NOISES[noise], rng, round=t)
        e = kernel.map_estimate(o, 2.0, rng)
        clean.append(kernel.prod_clean(e, X2))
        o2 = Oracle(X2, NOISES[noise], rng, round=t)
        pair.append(kernel.prod(e, kernel.map_estimate(o2, 2.0, rng)))
    assert abs(zscore(clean, target)) <= 4
    assert abs(zscore(pair, target)) <= 4


def test_lemma3_norm_equality_and_queries():
    rng = np.random.default_rng(3)
    k = ExponentialKernel(1.0)
    noise = GaussianNoise(0.3)
    p = 2.0
    msq = X1 @ X1 + 3 * 0.09
    sq, q = [], []
    for _ in range(8000):
        o = Oracle(X1, noise, rng)
        e = k.map_estimate(o, p, rng)
        sq.append(k.sq_norm(e))
        q.append(o.queries)
    assert abs(zscore(sq, p / (p - 1) * math.exp(p * msq))) <= 4
    assert abs(zscore(q, 1 / (p - 1))) <= 4
    assert k.feature_norm_bound(p, msq) == pytest.approx(p / (p - 1) * math.exp(p * msq))


def test_gaussian_norm_factor_and_queries():
    rng = np.random.default_rng(11)
    k = GaussianKernel(2.0)
    p = 2.0
    q = []
    for _ in range(8000):
        o = Oracle(X1, GaussianNoise(0.3), rng)
        k.map_estimate(o, p, rng)
        q.append(o.queries)
    assert abs(zscore(q, 3 / (p - 1))) <= 4
    assert k.expected_queries(p) == pytest.approx(3.0)
    # erratum E6 bound (p' = p): (p/(p-1))^2 exp(2 (sqrt p + p) B_x / sigma2)
    assert k.feature_norm_bound(2.0, 1.0) == pytest.approx(4 * math.exp((math.sqrt(2) + 2)))


def test_skip_zero_terms_saves_queries_without_bias():
    rng = np.random.default_rng(5)
    k = PolynomialKernel(2, 0.0)  # only degree 2 survives
    vals, q = [], []
    for _ in range(8000):
        o = Oracle(X1, GaussianNoise(0.3), rng)
        e = k.map_estimate(o, 2.0, rng)
        vals.append(k.prod_clean(e, X2))
        q.append(o.queries)
    assert np.mean(q) < 0.5  # 2 * P(N = 2) = 0.25 instead of E N = 1
    assert abs(zscore(vals, (X1 @ X2) ** 2)) <= 4


def test_gaussian_norm_factor_unbiased_from_pairs():
    # c~ of docs/math.md, item 5: Lemma 1 for exp(-z/sigma2) on <x~, x~'> of independent pairs
    rng = np.random.default_rng(21)
    k = GaussianKernel(2.0)
    vals = []
    for _ in range(8000):
        s, lg, q, ok = k._norm_factor_estimate(Oracle(X1, UniformNoise(0.5), rng), 2.0, rng)
        assert ok and q % 2 == 0
        vals.append(s * math.exp(lg))
    assert abs(zscore(vals, math.exp(-X1 @ X1 / 2.0))) <= 4
