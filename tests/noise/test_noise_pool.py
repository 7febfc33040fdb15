"""Finite pools of repeated measurements: no reuse, raise/drop at the cap, shortfall counting and reporting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nolo import CopiesExhausted, ParameterError
from nolo.noise import BaseOracle, PoolOracle, RepeatedMeasurements


def _pool(m=7, d=2, **kw):
    return PoolOracle(np.arange(m * d, dtype=float).reshape(m, d), **kw)


def test_hands_out_copies_in_order_and_never_reuses():
    copies = np.random.default_rng(0).normal(size=(20, 3))
    p = PoolOracle(copies)
    assert isinstance(p, BaseOracle) and p.d == 3 and p.size == 20
    got = [p.query(n) for n in (3, 0, 5, 1, 11)]
    np.testing.assert_array_equal(np.concatenate(got), copies)
    assert p.queries == 20 and p.calls == 4 and p.remaining == 0 and p.shortfalls == 0
    # a handed-out array is a copy: writing to it does not touch the pool
    q = PoolOracle(copies)
    a = q.query(2)
    a[:] = 0.0
    np.testing.assert_array_equal(q.query(1), copies[2:3])


def test_pool_holds_its_own_copy_of_the_data():
    data = np.ones((3, 2))
    p = PoolOracle(data)
    data[0, 0] = 5.0
    np.testing.assert_array_equal(p.query(1), [[1.0, 1.0]])


def test_raise_names_asked_and_left_and_changes_nothing():
    p = _pool(m=5)
    p.query(3)
    with pytest.raises(CopiesExhausted, match=r"asked for 4 noisy copies but only 2 of the pool's 5 remain"):
        p.query(4)
    assert p.queries == 3 and p.calls == 1 and p.remaining == 2 and p.shortfalls == 1
    # the copies are still there for a smaller request
    np.testing.assert_array_equal(p.query(2), [[6.0, 7.0], [8.0, 9.0]])
    with pytest.raises(CopiesExhausted, match=r"asked for 1 noisy copies but only 0"):
        p.query(1)
    assert p.shortfalls == 2
    assert p.query(0).shape == (0, 2)  # query(0) never fails


def test_drop_returns_none_and_counts_the_shortfall():
    p = _pool(m=4, on_exhausted="drop")
    assert p.query(3).shape == (3, 2)
    assert p.query(2) is None
    assert p.query(5) is None
    assert p.shortfalls == 2 and p.queries == 3 and p.calls == 1
    np.testing.assert_array_equal(p.query(1), [[6.0, 7.0]])
    assert p.query(1) is None and p.shortfalls == 3
    assert "shortfalls=3" in repr(p)


def test_drop_makes_the_random_degree_estimator_unbiased_for_the_truncated_series():
    """CSS10 Lemma 1 estimator of exp(E X) on pools of m copies with the "drop" policy.

    theta = gamma_N p^(N+1)/(p-1) prod_{i<=N} x_i with P(N=n) = (p-1)/p^(n+1) and gamma_n = 1/n!;
    a refused draw (N > m) contributes 0.  Then E theta = sum_{n<=m} mu^n/n! (the truncated series),
    the refusal rate is P(N > m) = p^-(m+1), and the bias against exp(mu) is the dropped tail.
    """
    p_geo, m, mu, sd, reps = 2.0, 2, 1.0, 0.3, 40_000
    rng = np.random.default_rng(2024)
    pools = RepeatedMeasurements(mu + sd * rng.normal(size=(reps, m, 1)), on_exhausted="drop")
    degrees = rng.geometric(1 - 1 / p_geo, size=reps) - 1
    theta = np.empty(reps)
    for i, n in enumerate(degrees):
        copies = pools.oracle(i).query(int(n))
        if copies is None:
            theta[i] = 0.0
        else:
            theta[i] = p_geo ** (n + 1) / (p_geo - 1) / math.factorial(n) * float(np.prod(copies))
    se = theta.std(ddof=1) / np.sqrt(reps)
    truncated = sum(mu**n / math.factorial(n) for n in range(m + 1))
    assert abs(theta.mean() - truncated) <= 4 * se
    assert abs(theta.mean() - math.exp(mu)) > 4 * se  # the truncation bias is real and visible
    rep = pools.report()
    q = p_geo ** -(m + 1)
    assert rep.total_shortfalls == int(np.sum(degrees > m))
    assert abs(rep.total_shortfalls / reps - q) <= 4 * np.sqrt(q * (1 - q) / reps)
    assert rep.items_short == rep.total_shortfalls  # one request per item
    assert rep.total_calls == int(np.sum((degrees > 0) & (degrees <= m)))


def test_repeated_measurements_from_a_3d_array():
    data = np.random.default_rng(1).normal(size=(4, 3, 2))
    rm = RepeatedMeasurements(data)
    assert len(rm) == 4 and rm.d == 2
    np.testing.assert_array_equal(rm.sizes, [3, 3, 3, 3])
    assert rm.oracle(2) is rm.oracle(2)  # same pool: no reuse across calls
    np.testing.assert_array_equal(rm.oracle(2).query(2), data[2, :2])
    np.testing.assert_array_equal(rm.oracle(2).query(1), data[2, 2:])
    with pytest.raises(CopiesExhausted):
        rm.oracle(2).query(1)


def test_repeated_measurements_with_varying_copies_and_report():
    items = [np.full((m, 3), float(i)) for i, m in enumerate([1, 4, 2, 6])]
    rm = RepeatedMeasurements(items, on_exhausted="drop")
    np.testing.assert_array_equal(rm.sizes, [1, 4, 2, 6])
    requests = {0: [1, 1, 2], 1: [3, 2, 1], 2: [3], 3: [2, 2, 2, 1]}
    for i, ns in requests.items():
        for n in ns:
            out = rm.oracle(i).query(n)
            assert out is None or np.all(out == i)
    rep = rm.report()
    np.testing.assert_array_equal(rep.shortfalls, [2, 1, 1, 1])
    np.testing.assert_array_equal(rep.used, [1, 4, 0, 6])
    assert rep.total_shortfalls == 5 and rep.items_short == 4 and rep.total_calls == 6
    assert rep.shortfall_rate == pytest.approx(5 / 11)
    d = rep.as_dict()
    assert d["copies_used"] == 11 and d["copies_available"] == 13 and d["policy"] == "drop"
    assert "5 refused request(s) on 4 of 4 item(s)" in str(rep)


def test_report_before_any_query():
    rep = RepeatedMeasurements(np.zeros((2, 2, 2))).report()
    assert rep.total_shortfalls == 0 and rep.shortfall_rate == 0.0 and rep.policy == "raise"


@pytest.mark.parametrize(
    "make, pattern",
    [
        (lambda: PoolOracle(np.ones(3)), r"copies must have 2 dimension"),
        (lambda: PoolOracle(np.ones((3, 0))), r"copies must have shape \(m, d\) with d >= 1"),
        (lambda: PoolOracle([[1.0, np.nan]]), r"copies must contain only finite"),
        (lambda: PoolOracle(np.ones((2, 2)), on_exhausted="truncate"), r"on_exhausted must be one of 'raise', 'drop'"),
        (lambda: _pool().query(-1), r"n must be an integer >= 0"),
        (lambda: RepeatedMeasurements(np.ones((2, 2))), r"data must have 3 dimension"),
        (lambda: RepeatedMeasurements([np.ones((2, 2)), np.ones((3, 3))]), r"data\[1\] has d=3 .* data\[0\] has d=2"),
        (lambda: RepeatedMeasurements([np.ones((2, 2)), np.array([[np.inf, 0.0]])]), r"data\[1\] must contain only finite"),
        (lambda: RepeatedMeasurements([]), r"data must hold at least one item"),
        (lambda: RepeatedMeasurements("abc"), r"data must be an \(n, m, d\) array or a list"),
        (lambda: RepeatedMeasurements(np.ones((2, 2, 2)), on_exhausted="skip"), r"on_exhausted must be one of"),
        (lambda: RepeatedMeasurements(np.ones((2, 2, 2))).oracle(2), r"i must be an integer >= 0 and <= 1"),
    ],
)
def test_bad_pool_inputs_are_named(make, pattern):
    with pytest.raises(ParameterError, match=pattern):
        make()


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(min_value=0, max_value=12),
    requests=st.lists(st.integers(min_value=0, max_value=6), max_size=15),
    policy=st.sampled_from(["raise", "drop"]),
)
def test_any_request_sequence_serves_a_prefix_without_reuse(m, requests, policy):
    """Property: whatever the request sizes, the copies served are the pool's rows in order, each once,
    and every refused request (n > remaining) is counted and changes nothing else."""
    copies = np.arange(m * 2, dtype=float).reshape(m, 2)
    pool = PoolOracle(copies, on_exhausted=policy)
    served, refused, calls = [], 0, 0
    for n in requests:
        left = m - sum(len(s) for s in served)
        if n > left:
            refused += 1
            if policy == "raise":
                with pytest.raises(CopiesExhausted):
                    pool.query(n)
            else:
                assert pool.query(n) is None
        else:
            out = pool.query(n)
            assert out.shape == (n, 2)
            served.append(out)
            calls += n > 0
    got = np.concatenate(served) if served else np.empty((0, 2))
    np.testing.assert_array_equal(got, copies[: len(got)])
    assert pool.queries == len(got) and pool.remaining == m - len(got)
    assert pool.shortfalls == refused and pool.calls == calls
