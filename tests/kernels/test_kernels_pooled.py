"""The pooled (U-statistic) feature estimate of CSS10 eq. (2): unbiasedness, variance reduction, fallbacks."""

import itertools
import math

import numpy as np
import pytest

from nolo.exceptions import ParameterError
from nolo.kernels import ExponentialKernel, GaussianKernel, LinearKernel, PolynomialKernel
from nolo.kernels.pooled import check_pooled_kernel, pooled_estimate, pooled_prod, pooled_prod_clean
from nolo.noise import PoolOracle


def _mc(kernel, x, xp, m, sd, p, reps, seed):
    """(pooled, random-copy) values of <Psi~(x), Psi(x')> over pools of m readings, the same degrees and pools."""
    rng = np.random.default_rng(seed)
    pooled, paper = np.zeros(reps), np.zeros(reps)
    for i in range(reps):
        R = x + sd * rng.normal(size=(m, x.shape[0]))
        n = int(rng.geometric(1.0 - 1.0 / p)) - 1
        est = pooled_estimate(kernel, R, n, p)
        pooled[i] = 0.0 if est is None else pooled_prod_clean(kernel, est, xp)
        oracle = PoolOracle(R, on_exhausted="drop")
        ref = kernel._map_estimate(oracle, p, _FixedDegree(n))
        paper[i] = 0.0 if ref is None else kernel.prod_clean(ref, xp)
    return pooled, paper


class _FixedDegree:
    """An rng whose geometric draw returns a fixed degree (Map_Estimate draws N as geometric - 1)."""

    def __init__(self, n):
        self.n = n

    def geometric(self, _):
        return self.n + 1


@pytest.mark.parametrize("m", [2, 4, 8])
def test_pooled_estimate_is_unbiased_and_has_less_variance(m):
    kernel = PolynomialKernel(2, c=1.0)
    x, xp = np.array([0.6, -0.3, 0.2]), np.array([0.5, 0.4, -0.7])
    reps = 20_000
    pooled, paper = _mc(kernel, x, xp, m, 0.5, 2.0, reps, seed=m)
    target = float(kernel(x, xp))
    for v in (pooled, paper):
        assert abs(v.mean() - target) < 4 * v.std(ddof=1) / math.sqrt(reps)
    assert pooled.var() < paper.var()


def test_pooled_estimate_is_unbiased_for_the_kernel_truncated_at_the_pool():
    """Exponential kernel, pool of 3: degrees N > 3 give None (the caller's shortfall), so the mean is sum_{n<=3}."""
    kernel = ExponentialKernel(1.0)
    x, xp = np.array([0.5, 0.5]), np.array([0.4, -0.2])
    reps = 30_000
    pooled, _ = _mc(kernel, x, xp, 3, 0.3, 3.0, reps, seed=1)
    z = float(x @ xp)
    target = sum(z**n / math.factorial(n) for n in range(4))
    assert abs(pooled.mean() - target) < 4 * pooled.std(ddof=1) / math.sqrt(reps)


def test_pooled_prod_equals_the_explicit_tensor_inner_product():
    rng = np.random.default_rng(3)
    kernel = PolynomialKernel(3, c=0.5)
    A, B = rng.normal(size=(4, 2)), rng.normal(size=(3, 2))
    a, b = pooled_estimate(kernel, A, 3, 2.0), pooled_estimate(kernel, B, 3, 2.0)

    def avg_tensor(R):
        ts = []
        for t in itertools.permutations(range(R.shape[0]), 3):
            ts.append(np.einsum("i,j,k->ijk", *R[list(t)]))
        return np.mean(ts, axis=0)

    w2 = math.exp(a.log_weight + b.log_weight)
    assert pooled_prod(a, b) == pytest.approx(w2 * float(np.sum(avg_tensor(A) * avg_tensor(B))), rel=1e-10)
    assert pooled_prod(a, pooled_estimate(kernel, B, 2, 2.0)) == 0.0  # different degrees


def test_fallbacks_and_zero_degrees():
    kernel = PolynomialKernel(2, c=0.0)
    R = np.arange(12.0).reshape(4, 3)
    assert pooled_estimate(kernel, R[:1], 2, 2.0) is None  # n > a: the caller needs fresh copies
    zero = pooled_estimate(kernel, R, 1, 2.0)  # beta_1 = 0 for the homogeneous kernel
    assert zero.is_zero and zero.readings == 0 and pooled_prod_clean(kernel, zero, R[0]) == 0.0
    fb = pooled_estimate(kernel, R, 2, 2.0, max_terms=2, rng=np.random.default_rng(0))  # m + 1 = 5 terms > 2
    assert not fb.ustat and fb.copies.shape == (1, 2, 3) and fb.readings == 2
    u = pooled_estimate(kernel, R, 2, 2.0)
    assert u.ustat and u.readings == 4 and u.points.shape == (5, 3)


def test_only_dot_product_kernels_are_pooled():
    assert isinstance(check_pooled_kernel(LinearKernel()), LinearKernel)
    with pytest.raises(ParameterError, match="dot-product kernel"):
        check_pooled_kernel(GaussianKernel(1.0))
    with pytest.raises(ParameterError, match="NoisyFeatureKernel"):
        check_pooled_kernel("linear")


def test_all_degrees_estimate_is_unbiased_without_the_random_degree():
    """sum_n sqrt(beta_n) U_n: unbiased for k(x, x') and far less variable than the random-degree estimate."""
    from nolo.kernels.pooled import pooled_estimates_all_degrees

    kernel = PolynomialKernel(2, c=1.0)
    x, xp = np.array([0.6, -0.3, 0.2]), np.array([0.5, 0.4, -0.7])
    rng = np.random.default_rng(11)
    reps = 20_000
    vals = np.zeros(reps)
    for i in range(reps):
        R = x + 0.5 * rng.normal(size=(3, 3))
        vals[i] = sum(pooled_prod_clean(kernel, e, xp) for e in pooled_estimates_all_degrees(kernel, R, [0, 1, 2]))
    assert abs(vals.mean() - float(kernel(x, xp))) < 4 * vals.std(ddof=1) / math.sqrt(reps)
    random_degree, _ = _mc(kernel, x, xp, 3, 0.5, 2.0, reps, seed=11)
    assert vals.var() < 0.25 * random_degree.var()  # measured 0.15
    with pytest.raises(ParameterError, match="needs at least 2 readings"):
        pooled_estimates_all_degrees(kernel, R[:1], [0, 1, 2])
    assert [e.degree for e in pooled_estimates_all_degrees(PolynomialKernel(2, c=0.0), R, [0, 1, 2])] == [2]
