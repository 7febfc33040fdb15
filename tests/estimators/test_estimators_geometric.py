"""The random degree N of CSS10: law, moments, tail and validation."""

import math

import numpy as np
import pytest

from nolo import ParameterError
from nolo.estimators import (
    GeometricDegree,
    degree_log_pmf,
    degree_pmf,
    degree_tail,
    degree_variance,
    expected_degree,
    expected_queries,
    sample_degree,
)

M = 200_000


@pytest.mark.parametrize("p", [1.25, 2.0, 4.0])
def test_mean_and_tail_by_monte_carlo(p):
    n = sample_degree(np.random.default_rng(11), p, size=M)
    assert n.dtype == np.int64 and n.min() == 0
    se = math.sqrt(degree_variance(p) / M)
    assert abs(n.mean() - expected_degree(p)) <= 4 * se
    for z in (1, 3, 5):
        q = degree_tail(z, p)
        assert q == pytest.approx(p**-z)
        assert abs(np.mean(n >= z) - q) <= 4 * math.sqrt(q * (1 - q) / M)
    # the empirical pmf at 0 and 2
    for k in (0, 2):
        q = degree_pmf(k, p)
        assert abs(np.mean(n == k) - q) <= 4 * math.sqrt(q * (1 - q) / M)


@pytest.mark.parametrize("p", [1.25, 2.0, 4.0])
def test_pmf_formulas(p):
    k = np.arange(0, 4000)
    pmf = degree_pmf(k, p)
    assert pmf[0] == pytest.approx((p - 1) / p)
    assert pmf[3] == pytest.approx((p - 1) / p**4)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    assert (k * pmf).sum() == pytest.approx(1 / (p - 1), rel=1e-10)
    assert ((k - 1 / (p - 1)) ** 2 * pmf).sum() == pytest.approx(p / (p - 1) ** 2, rel=1e-10)
    assert degree_log_pmf(7, p) == pytest.approx(math.log((p - 1) / p**8))
    # tail is 1 - cdf
    assert degree_tail(5, p) == pytest.approx(1 - pmf[:5].sum())
    assert degree_tail(0, p) == 1.0


def test_same_seed_same_draws_and_scalar_form():
    a = sample_degree(np.random.default_rng(3), 2.0, size=50)
    b = sample_degree(np.random.default_rng(3), 2.0, size=50)
    assert np.array_equal(a, b)
    assert isinstance(sample_degree(np.random.default_rng(3), 2.0), int)
    assert isinstance(sample_degree(5, 2.0), int)  # an int seed is accepted


def test_expected_queries_helper():
    assert expected_queries(2.0) == 1.0
    assert expected_queries(1.5, copies_per_degree=2, calls=3) == pytest.approx(3 * 2 * 2.0)
    with pytest.raises(ParameterError, match="copies_per_degree"):
        expected_queries(2.0, copies_per_degree=-1)


@pytest.mark.parametrize("bad", [1.0, 0.5, -2, float("nan"), float("inf"), "2", True, None])
def test_p_validation(bad):
    with pytest.raises(ParameterError, match="p must be a real number > 1"):
        sample_degree(np.random.default_rng(0), bad)
    with pytest.raises(ParameterError, match="p must"):
        GeometricDegree(bad)


def test_degree_validation():
    with pytest.raises(ParameterError, match="n must"):
        degree_pmf(-1, 2.0)
    with pytest.raises(ParameterError, match="n must"):
        degree_pmf(1.5, 2.0)
    with pytest.raises(ParameterError, match="z must"):
        degree_tail(0.5, 2.0)
    with pytest.raises(ParameterError, match="rng"):
        sample_degree("seed", 2.0)


def test_law_object_and_set_params_rejection_keeps_value():
    law = GeometricDegree(4.0)
    assert law.mean == pytest.approx(1 / 3)
    assert law.variance == pytest.approx(4 / 9)
    assert law.tail(2) == pytest.approx(1 / 16)
    assert law.pmf(1) == pytest.approx(3 / 16)
    assert law.log_pmf(1) == pytest.approx(math.log(3 / 16))
    assert law.sample(np.random.default_rng(0), size=10).shape == (10,)
    with pytest.raises(ParameterError):
        law.set_params(p=1.0)
    assert law.p == 4.0
    assert GeometricDegree.from_config(law.to_config()).p == 4.0
