"""U-statistics over a pool of readings (nolo.estimators.ustat): exact identities and Monte Carlo unbiasedness."""

import itertools
import math

import numpy as np
import pytest

from nolo.estimators.ustat import (
    elementary_symmetric,
    monomial_ustat,
    symmetric_power_count,
    symmetric_power_terms,
)
from nolo.exceptions import ParameterError


def _tensor(vectors):
    t = np.array(1.0)
    for v in vectors:
        t = np.multiply.outer(t, v)
    return t


@pytest.mark.parametrize("m, n", [(m, n) for m in range(1, 6) for n in range(0, m + 1)])
def test_symmetric_power_terms_equal_the_average_over_ordered_distinct_tuples(m, n):
    rng = np.random.default_rng(10 * m + n)
    A = rng.normal(size=(m, 2))
    brute = np.mean([_tensor(A[list(t)]) for t in itertools.permutations(range(m), n)], axis=0)
    Z, c = symmetric_power_terms(A, n)
    assert len(c) == symmetric_power_count(m, n)
    terms = sum(cr * _tensor([z] * n) for z, cr in zip(Z, c))
    np.testing.assert_allclose(terms, brute, atol=1e-12)


@pytest.mark.parametrize("m, n", [(3, 0), (3, 1), (4, 2), (5, 3), (6, 6)])
def test_monomial_ustat_is_the_mean_over_distinct_tuples(m, n):
    z = np.random.default_rng(m + n).normal(size=m)
    brute = np.mean([np.prod(z[list(t)]) for t in itertools.permutations(range(m), n)])
    assert monomial_ustat(z, n) == pytest.approx(brute, rel=1e-12, abs=1e-14)
    e = elementary_symmetric(z, n)
    assert e[0] == 1.0 and e[-1] == pytest.approx(brute * math.comb(m, n), rel=1e-12, abs=1e-14)


def test_monomial_ustat_vectorises_over_leading_axes():
    z = np.random.default_rng(0).normal(size=(3, 4, 5))
    out = monomial_ustat(z, 2)
    assert out.shape == (3, 4)
    assert out[1, 2] == pytest.approx(monomial_ustat(z[1, 2], 2))


def test_bad_degrees_and_pools_raise():
    with pytest.raises(ParameterError, match="n must be <="):
        monomial_ustat(np.ones(2), 3)
    with pytest.raises(ParameterError, match="n must be <="):
        symmetric_power_terms(np.ones((2, 2)), 3)
    with pytest.raises(ParameterError, match="n must be"):
        elementary_symmetric(np.ones(3), -1)


def test_monomial_ustat_is_unbiased_and_beats_the_random_copy_product():
    """mu^3 from pools of m = 5 readings: mean within 4 SE of mu^3, variance below one product of 3 readings."""
    rng = np.random.default_rng(2024)
    mu, sd, m, reps = 0.7, 1.0, 5, 40_000
    Z = mu + sd * rng.normal(size=(reps, m))
    u = monomial_ustat(Z, 3)
    single = np.prod(Z[:, :3], axis=1)  # CSS10's random-copy estimate on the same pools
    for est in (u, single):
        assert abs(est.mean() - mu**3) < 4 * est.std(ddof=1) / math.sqrt(reps)
    assert u.var() < 0.6 * single.var()
