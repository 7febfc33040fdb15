"""CSS10 Lemma 1: unbiasedness, exact second moment, query skipping, pools, overflow."""

import math

import numpy as np
import pytest
from scipy.special import erf, i0

from nolo import NumericalError, ParameterError
from nolo.estimators import RandomDegreeEstimator, TaylorSeries, signed_exp
from nolo.losses import get_loss

M = 200_000

EXP = TaylorSeries(lambda n: (1.0, -math.lgamma(n + 1)), name="exp")
COS = TaylorSeries(
    lambda n: (0.0, -math.inf) if n % 2 else ((1.0 if n % 4 == 0 else -1.0), -math.lgamma(n + 1)), name="cos"
)


def gaussian(mu, sd):
    return (lambda rng, k: rng.normal(mu, sd, k)), mu, mu * mu + sd * sd


def uniform(mu, half):
    return (lambda rng, k: rng.uniform(mu - half, mu + half, k)), mu, mu * mu + half * half / 3


def laplace(mu, b):
    return (lambda rng, k: rng.laplace(mu, b, k)), mu, mu * mu + 2 * b * b


CASES = [
    # (series-or-loss, f, X law, p)
    ("exp", EXP, np.exp, gaussian(0.5, 0.5), 2.0),
    ("exp", EXP, np.exp, laplace(-0.8, 0.4), 3.0),
    ("cos (non-monotone)", COS, np.cos, uniform(1.2, 0.6), 2.0),
    ("cos (non-monotone)", COS, np.cos, laplace(2.0, 0.3), 4.0),
    ("erf = smoothed-absolute l'", get_loss("smoothed_absolute", s=1.0), lambda x: erf(x), uniform(0.5, 0.8), 2.0),
    ("smoothed-hinge l'", get_loss("smoothed_hinge", s=2.0), lambda x: (erf(2 * (x - 1)) - 1) / 2,
     gaussian(0.5, 0.5), 2.0),
    ("logistic l'", get_loss("logistic"), lambda x: -1 / (1 + np.exp(x)), laplace(0.7, 0.3), 1.25),
]


@pytest.mark.parametrize("label,series,f,law,p", CASES, ids=[f"{c[0]}-p{c[4]}-{i}" for i, c in enumerate(CASES)])
def test_unbiased_and_exact_second_moment(label, series, f, law, p):
    sample, mu, m2 = law
    est = RandomDegreeEstimator(series, p)
    batch = est.sample(np.random.default_rng(2024), M, sample)
    v = batch.values
    target = float(f(mu))
    exact2 = est.second_moment(m2)
    se = math.sqrt((exact2 - target**2) / M)
    assert abs(v.mean() - target) <= 4 * se, (label, v.mean(), target, se)
    # the sample second moment against the exact one, with the exact SE of theta^2:
    # E[theta^4] = (p/(p-1))^3 sum_n gamma_n^4 (p^3 E[X^4])^n; E[X^4] from a large sample
    x4 = float(np.mean(sample(np.random.default_rng(7), 2_000_000) ** 4))
    ts = est.taylor_series
    e4 = (p / (p - 1)) ** 3 * sum(
        math.exp(4 * ts.sign_log(n)[1] + n * math.log(p**3 * x4)) for n in range(200) if not ts.is_zero(n)
    )
    se2 = math.sqrt((e4 - exact2**2) / M)
    assert abs(np.mean(v**2) - exact2) <= 4 * se2
    assert exact2 <= est.second_moment_bound(m2)
    # query count: only degrees with gamma_N != 0 query
    q = est.expected_queries()
    assert q <= 1 / (p - 1) + 1e-12
    assert abs(batch.queries.mean() - q) <= 4 * math.sqrt(p / (p - 1) ** 2 / M)


def test_exp_second_moment_is_bessel():
    for p, m2 in [(2.0, 0.5), (3.0, 1.64), (1.25, 0.1)]:
        est = RandomDegreeEstimator(EXP, p)
        assert est.second_moment(m2) == pytest.approx(p / (p - 1) * i0(2 * math.sqrt(p * m2)), rel=1e-12)
        assert est.second_moment_bound(m2) == pytest.approx(p / (p - 1) * math.exp(2 * math.sqrt(p * m2)))
    # docs/math.md, item 1 table: exp, p=2, N(0.5, 0.5^2): exact 4.559, bound 14.78
    est = RandomDegreeEstimator(EXP, 2.0)
    assert est.second_moment(0.5) == pytest.approx(4.559, abs=1e-3)
    assert est.second_moment_bound(0.5) == pytest.approx(14.78, abs=1e-2)


def test_single_estimates_agree_with_batch_and_hand_values():
    est = RandomDegreeEstimator(EXP, 2.0)
    # theta at N=3 with copies (1, -2, 0.5): gamma_3 p^4/(p-1) prod = (1/6) * 16 * (-1)
    assert est.value_at_degree(3, [1.0, -2.0, 0.5]) == pytest.approx(-16 / 6)
    assert est.value_at_degree(0, []) == pytest.approx(2.0)
    assert est.value_at_degree(2, [0.0, 5.0]) == 0.0
    rng = np.random.default_rng(5)
    deg = np.array([0, 3, 1, 2, 0, 4])
    x = rng.normal(size=int(deg.sum()))
    vals = est.evaluate(deg, x)
    ends = np.cumsum(deg)
    for i, n in enumerate(deg):
        assert vals[i] == pytest.approx(est.value_at_degree(int(n), x[ends[i] - n : ends[i]]), rel=1e-12)
    # estimate(): same seed, same result; draw() sees exactly N
    seen = []

    def draw(n):
        seen.append(n)
        return np.full(n, 0.5)

    r1 = est.estimate(draw, np.random.default_rng(9))
    r2 = est.estimate(lambda n: np.full(n, 0.5), np.random.default_rng(9))
    assert r1 == r2
    assert r1.queries == r1.degree and not r1.shortfall
    assert seen == ([r1.degree] if r1.degree > 0 else [])
    assert r1.value == pytest.approx(2.0**(r1.degree + 1) * 0.5**r1.degree / math.factorial(r1.degree))


def test_zero_coefficient_makes_no_draw():
    est = RandomDegreeEstimator(get_loss("smoothed_absolute", s=1.0), 2.0)  # erf: odd-only

    def forbidden(n):
        raise AssertionError("the oracle must not be queried when gamma_N = 0")

    for n in (0, 2, 4, 10):
        r = est.estimate_at_degree(n, forbidden)
        assert r.value == 0.0 and r.queries == 0 and r.degree == n
    calls = []
    rng = np.random.default_rng(1)
    for _ in range(3000):
        r = est.estimate(lambda n: calls.append(n) or np.full(n, 0.3), rng)
        assert (r.degree % 2 == 1) == (r.queries > 0)
    assert calls and all(n % 2 == 1 for n in calls)
    # squared loss: only N = 1 queries
    sq = RandomDegreeEstimator(get_loss("squared"), 2.0)
    assert sq.expected_queries() == pytest.approx(0.25)
    assert sq.queries_for(np.array([0, 1, 2, 3])).tolist() == [0, 1, 0, 0]


def test_finite_pool_truncation_policy():
    """A pool of K copies: unbiased for the series truncated at degree K (module docstring)."""
    est = RandomDegreeEstimator(EXP, 1.25)
    K, mu, sd = 2, 0.9, 0.3
    rng = np.random.default_rng(77)
    draws = [
        est.estimate(lambda n: rng.normal(mu, sd, n) if n <= K else None, rng) for _ in range(40_000)
    ]
    v = np.array([d.value for d in draws])
    short = np.array([d.shortfall for d in draws])
    deg = np.array([d.degree for d in draws])
    assert np.array_equal(short, deg > K)
    assert np.all(v[short] == 0.0) and all(d.queries == 0 for d in draws if d.shortfall)
    truncated = 1 + mu + mu**2 / 2
    se = v.std() / math.sqrt(v.size)
    assert abs(v.mean() - truncated) <= 4 * se
    assert abs(v.mean() - math.exp(mu)) > 4 * se  # and visibly not f(mu) = e^0.9


def test_overflow_is_handled_in_log_space_or_raised():
    est = RandomDegreeEstimator(EXP, 2.0)
    # docs/math.md, item 10 demo: naive p**(N+1) * prod(X) overflows, the estimate does not
    with np.errstate(over="ignore"):
        assert not np.isfinite(2.0**151 * np.prod(np.full(150, 120.0)))
    assert est.value_at_degree(150, np.full(150, 120.0)) == pytest.approx(3.7655e94, rel=1e-4)
    assert est.evaluate(np.array([150]), np.full(150, 120.0))[0] == pytest.approx(3.7655e94, rel=1e-4)
    with pytest.raises(NumericalError, match="not representable"):
        est.value_at_degree(150, np.full(150, -1e4))
    with pytest.raises(NumericalError, match="not representable"):
        est.evaluate(np.array([1, 150]), np.concatenate([[1.0], np.full(150, 1e4)]))
    assert signed_exp(-1.0, math.log(2.0)) == pytest.approx(-2.0)


def test_second_moment_divergence_and_finite_radius():
    est = RandomDegreeEstimator(get_loss("logistic"), 2.0)
    est.second_moment(4.0)  # p E X^2 = 8 < pi^2
    with pytest.raises(ParameterError, match="infinite"):
        est.second_moment(5.0)  # 10 > pi^2
    with pytest.raises(ParameterError, match="radius"):
        est.second_moment_bound(5.0)


def test_validation():
    with pytest.raises(ParameterError, match="p must be a real number > 1"):
        RandomDegreeEstimator(EXP, 1.0)
    with pytest.raises(ParameterError, match="series must be"):
        RandomDegreeEstimator(np.exp, 2.0)
    with pytest.raises(ParameterError, match="no Taylor series"):
        RandomDegreeEstimator(get_loss("hinge"), 2.0)
    est = RandomDegreeEstimator(EXP, 2.0)
    with pytest.raises(ParameterError):
        est.set_params(p=0.9)
    assert est.p == 2.0
    with pytest.raises(ParameterError, match="shape"):
        est.estimate_at_degree(2, lambda n: np.ones(n + 1))
    with pytest.raises(ParameterError, match="finite"):
        est.estimate_at_degree(2, lambda n: np.full(n, np.nan))
    with pytest.raises(ParameterError, match="n must"):
        est.estimate_at_degree(-1, lambda n: np.ones(n))
    with pytest.raises(ParameterError, match="copies must hold"):
        est.evaluate(np.array([2, 1]), np.ones(2))
    with pytest.raises(ParameterError, match="degrees"):
        est.evaluate(np.array([1.5]), np.ones(1))
    with pytest.raises(ParameterError, match="mean_square"):
        est.second_moment(-1.0)


def test_config_roundtrip_with_a_loss():
    est = RandomDegreeEstimator(get_loss("smoothed_hinge", s=2.0), 3.0)
    back = RandomDegreeEstimator.from_config(est.to_config())
    assert back.p == 3.0 and back.series.s == 2.0
    assert back.taylor_series.coefficient(3) == pytest.approx(est.taylor_series.coefficient(3))


def test_power_negative_control_plug_in_is_biased():
    """The 4-SE criterion detects the bias of the naive plug-in f(X) (so the tests above can fail)."""
    sample, mu, m2 = uniform(1.2, 0.6)
    x = sample(np.random.default_rng(2024), M)
    plug = np.cos(x)
    assert abs(plug.mean() - math.cos(mu)) > 4 * plug.std() / math.sqrt(M)
