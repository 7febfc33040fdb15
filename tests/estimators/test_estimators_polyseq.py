"""The slides' polynomial-sequence (telescoping) estimator and the zeta degree law."""

import math

import numpy as np
import pytest
from scipy.special import zeta

from nolo import NumericalError, ParameterError
from nolo.estimators import (
    ChebyshevSequence,
    GeometricDegree,
    PolynomialSequenceEstimator,
    RandomDegreeEstimator,
    TaylorSeries,
    TaylorSequence,
    ZetaDegree,
)
from nolo.losses import get_loss

M = 200_000
EXP = TaylorSeries(lambda n: (1.0, -math.lgamma(n + 1)), name="exp")


def smooth_abs(x):
    return np.sqrt(x * x + 0.25)  # |x| smoothed at scale 0.5: Taylor radius at 0 is 0.5


CASES = [
    # f, interval, kind, law, X sampler, E X, E X^2
    ("sqrt", np.sqrt, (0.05, 2.0), "truncation", GeometricDegree(1.5),
     lambda r, k: r.normal(0.6, 0.1, k), 0.6, 0.36 + 0.01),
    ("sqrt", np.sqrt, (0.05, 2.0), "interpolant", GeometricDegree(1.5),
     lambda r, k: r.laplace(0.6, 0.1, k), 0.6, 0.36 + 0.02),
    ("smoothed |x|", smooth_abs, (-2.0, 2.0), "truncation", GeometricDegree(1.5),
     lambda r, k: r.uniform(1.0 - 0.3, 1.0 + 0.3, k), 1.0, 1.0 + 0.09 / 3),
    ("smoothed |x|", smooth_abs, (-2.0, 2.0), "interpolant", ZetaDegree(3.0),
     lambda r, k: r.normal(1.0, 0.2, k), 1.0, 1.04),
]


@pytest.mark.parametrize("name,f,interval,kind,law,sample,mu,m2", CASES,
                         ids=[f"{c[0]}-{c[3]}-{type(c[4]).__name__}" for c in CASES])
def test_unbiased_for_non_taylor_functions(name, f, interval, kind, law, sample, mu, m2):
    seq = ChebyshevSequence(f, *interval, kind=kind)
    est = PolynomialSequenceEstimator(seq, law)
    batch = est.sample(np.random.default_rng(31), M, sample)
    target = float(f(mu))
    s2 = est.second_moment(mu, m2)
    se = math.sqrt((s2 - target**2) / M)
    assert abs(batch.values.mean() - target) <= 4 * se, (batch.values.mean(), target, se)
    # the exact second moment is what the sample sees (loose: theta^2 has a heavy tail)
    assert np.mean(batch.values**2) == pytest.approx(s2, rel=0.1)
    assert abs(batch.queries.mean() - est.expected_queries()) <= 4 * math.sqrt(np.var(batch.queries) / M)
    # the same criterion rejects the naive plug-in f(X) at this noise level
    if name != "sqrt":
        x = sample(np.random.default_rng(5), M)
        assert abs(np.mean(f(x)) - target) > 4 * np.std(f(x)) / math.sqrt(M)


def test_lemma1_is_the_taylor_special_case():
    e1 = PolynomialSequenceEstimator(TaylorSequence(EXP), GeometricDegree(2.0))
    e2 = RandomDegreeEstimator(EXP, 2.0)
    deg = np.array([0, 1, 2, 5, 3, 0, 7])
    x = np.random.default_rng(0).normal(size=int(deg.sum()))
    np.testing.assert_allclose(e1.evaluate(deg, x), e2.evaluate(deg, x), rtol=1e-12)
    assert e1.second_moment(0.5, 0.5) == pytest.approx(e2.second_moment(0.5), rel=1e-12)
    # zero coefficients are skipped in both
    odd = get_loss("smoothed_absolute", s=1.0)
    e3 = PolynomialSequenceEstimator(TaylorSequence(odd), GeometricDegree(2.0))
    assert e3.queries_for(np.array([0, 1, 2, 3])).tolist() == [0, 1, 0, 3]
    assert e3.expected_queries() == pytest.approx(RandomDegreeEstimator(odd, 2.0).expected_queries(), rel=1e-9)
    with pytest.raises(AssertionError):
        e3.estimate_at_degree(1, lambda n: (_ for _ in ()).throw(AssertionError("queried")))
    assert e3.estimate_at_degree(2, lambda n: (_ for _ in ()).throw(AssertionError("queried"))).queries == 0
    # heavy-tailed degrees stay cheap: beyond max_degree the Taylor sequence stops changing
    e4 = PolynomialSequenceEstimator(TaylorSequence(EXP, max_degree=50), ZetaDegree(1.2))
    assert e4.estimate_at_degree(10**9, lambda n: (_ for _ in ()).throw(AssertionError("queried"))).value == 0.0
    batch = e4.sample(np.random.default_rng(3), 20_000, lambda r, k: r.normal(0.3, 0.2, k))
    assert batch.queries.max() <= 50 and batch.degrees.max() > 50
    with pytest.raises(ParameterError, match="max_degree"):
        TaylorSequence(EXP, max_degree=-1)


def test_lift_hand_values_and_sequences():
    # Chebyshev recurrence lift: degree 3 truncation difference c_3 T_3 lifted as c_3 R_3,
    # R_3 = 2 t3 (2 t2 t1 - 1) - t1
    seq = ChebyshevSequence(np.exp, -1.0, 1.0)
    c = seq.coefficients()
    est = PolynomialSequenceEstimator(seq, GeometricDegree(2.0))
    t = np.array([0.3, -0.7, 1.5])
    r3 = 2 * t[2] * (2 * t[1] * t[0] - 1) - t[0]
    assert est.evaluate(np.array([3]), t)[0] == pytest.approx(c[3] * r3 * 2**4, rel=1e-12)
    assert est.evaluate(np.array([0]), np.zeros(0))[0] == pytest.approx(c[0] * 2, rel=1e-12)
    # truncations and interpolants converge to f; coefficients of exp are Bessel I_j(1)
    from scipy.special import iv

    np.testing.assert_allclose(c[:6], [iv(0, 1)] + [2 * iv(j, 1) for j in range(1, 6)], rtol=1e-13)
    for kind in ("truncation", "interpolant"):
        s = ChebyshevSequence(np.sqrt, 0.05, 2.0, kind=kind)
        x = np.linspace(0.05, 2.0, 9)
        np.testing.assert_allclose(s.value(s.last_degree, x), np.sqrt(x), atol=1e-13)
        assert s.is_zero(s.last_degree + 1) and not s.is_zero(3)
    # the interpolant of degree n interpolates at the Chebyshev points
    s = ChebyshevSequence(np.sqrt, 0.05, 2.0, kind="interpolant")
    n = 6
    tk = np.cos(np.pi * (2 * np.arange(n + 1) + 1) / (2 * (n + 1)))
    xk = 0.05 + (tk + 1) * 1.95 / 2
    np.testing.assert_allclose(s.value(n, xk), np.sqrt(xk), rtol=1e-12)


def test_exact_second_moment_of_the_recurrence_lift_by_monte_carlo():
    # the Gram recursion E[R_j R_k] against simulation, for one difference vector
    seq = ChebyshevSequence(smooth_abs, -2.0, 2.0, kind="interpolant")
    est = PolynomialSequenceEstimator(seq, GeometricDegree(1.5))
    n, mu, sd = 6, 1.0, 0.4
    rng = np.random.default_rng(8)
    x = rng.normal(mu, sd, (50_000, n))
    vals = est.evaluate(np.full(50_000, n), x.ravel()) * math.exp(est.degrees.log_pmf(n))
    from nolo.estimators.polyseq import _gram

    mu_t, m2_t = seq.unit_moments(mu, mu * mu + sd * sd)
    d = seq.difference(n)
    exact = float(d @ _gram("chebyshev", mu_t, m2_t, n) @ d)
    se = np.std(vals**2) / math.sqrt(vals.size)
    assert abs(np.mean(vals**2) - exact) <= 4 * se
    mean_exact = float(np.polynomial.chebyshev.chebval(mu_t, d))
    assert abs(vals.mean() - mean_exact) <= 4 * np.std(vals) / math.sqrt(vals.size)


def test_infinite_variance_is_reported():
    # sqrt on [0, 2]: singular at the endpoint, coefficients decay only like n^-2 -> the
    # geometric law's 1/p_n wins; and the resolution limit refuses the unresolved function
    with pytest.raises(ParameterError, match="not resolved"):
        ChebyshevSequence(np.sqrt, 0.0, 2.0, resolution=256).coefficients()
    # p too large for the coefficients' decay (1.28^-n): finite only through the chop, and useless
    seq = ChebyshevSequence(smooth_abs, -2.0, 2.0)
    assert PolynomialSequenceEstimator(seq, GeometricDegree(4.0)).second_moment(1.0, 1.04) > 1e30
    # logistic l' has radius pi: with p E[X^2] > pi^2 the series of E[D_n^2]/p_n diverges
    est = PolynomialSequenceEstimator(TaylorSequence(get_loss("logistic")), GeometricDegree(2.0))
    assert est.second_moment(1.0, 4.0) > 0
    with pytest.raises(NumericalError):
        est.second_moment(1.0, 6.0)


def test_pool_shortfall_and_determinism():
    seq = ChebyshevSequence(np.sqrt, 0.05, 2.0)
    est = PolynomialSequenceEstimator(seq, GeometricDegree(1.5))
    r = est.estimate_at_degree(5, lambda n: None)
    assert r.value == 0.0 and r.shortfall and r.queries == 0
    a = est.estimate(lambda n: np.full(n, 0.6), np.random.default_rng(4))
    b = est.estimate(lambda n: np.full(n, 0.6), np.random.default_rng(4))
    assert a == b and a.queries == a.degree
    # with noise-free copies every estimate is (A_N(mu) - A_(N-1)(mu)) / p_N
    n = 4
    want = (seq.value(n, 0.6) - seq.value(n - 1, 0.6)) / est.degrees.pmf(n)
    assert est.estimate_at_degree(n, lambda k: np.full(k, 0.6)).value == pytest.approx(want, rel=1e-10)


def test_zeta_law():
    law = ZetaDegree(3.0)
    n = law.sample(np.random.default_rng(2), size=M)
    assert n.min() == 0
    mean = zeta(2.0) / zeta(3.0) - 1
    assert law.mean == pytest.approx(mean)
    for z in (1, 4, 10):
        q = law.tail(z)
        assert q == pytest.approx(1 - sum(law.pmf(k) for k in range(z)), rel=1e-12)
        assert abs(np.mean(n >= z) - q) <= 4 * math.sqrt(q * (1 - q) / M)
    assert law.pmf(0) == pytest.approx(1 / zeta(3.0))
    assert ZetaDegree(1.5).mean == math.inf
    for bad in (1.0, 0.5, "3", float("nan")):
        with pytest.raises(ParameterError, match="alpha"):
            ZetaDegree(bad)


def test_validation():
    seq = ChebyshevSequence(np.sqrt, 0.05, 2.0)
    with pytest.raises(ParameterError, match="sequence"):
        PolynomialSequenceEstimator(np.sqrt, GeometricDegree(2.0))
    with pytest.raises(ParameterError, match="degrees"):
        PolynomialSequenceEstimator(seq, 2.0)
    with pytest.raises(ParameterError, match="low must be < high"):
        ChebyshevSequence(np.sqrt, 2.0, 1.0)
    with pytest.raises(ParameterError, match="function"):
        ChebyshevSequence("sqrt", 0.0, 1.0)
    with pytest.raises(ParameterError, match="kind"):
        ChebyshevSequence(np.sqrt, 0.1, 1.0, kind="bernstein")
    with pytest.raises(ParameterError, match="finite"):
        ChebyshevSequence(lambda x: np.where(x > 0.5, np.nan, x), 0.0, 1.0).coefficients()
    with pytest.raises(ParameterError):
        seq.set_params(low=5.0)
    assert seq.low == 0.05
    est = PolynomialSequenceEstimator(seq, GeometricDegree(2.0))
    with pytest.raises(ParameterError, match="copies must hold"):
        est.evaluate(np.array([2]), np.ones(3))
    with pytest.raises(ParameterError, match="shape"):
        est.estimate_at_degree(2, lambda n: np.ones(n + 1))
    with pytest.raises(ParameterError, match="series"):
        TaylorSequence(np.exp)
