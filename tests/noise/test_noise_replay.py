"""ReplayOracle: fixed readings served in row order; raise / drop / cycle when they run out; bad input named."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import nolo.noise.replay
from nolo.exceptions import CopiesExhausted, ParameterError
from nolo.noise import BaseOracle, PoolOracle, ReplayOracle

ROWS = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def test_serves_rows_in_order_and_counts():
    o = ReplayOracle(ROWS)
    assert isinstance(o, BaseOracle) and (o.d, o.size, o.remaining) == (2, 3, 3)
    assert o.query(1).tolist() == [[1.0, 2.0]]
    assert o.query(0).shape == (0, 2)  # counts nothing
    assert o.query(2).tolist() == [[3.0, 4.0], [5.0, 6.0]]
    assert (o.queries, o.calls, o.remaining, o.shortfalls) == (3, 2, 0, 0)


def test_keeps_its_own_read_only_copy():
    data = np.array(ROWS)
    o = ReplayOracle(data)
    data[0, 0] = 99.0
    out = o.query(1)
    assert out.tolist() == [[1.0, 2.0]]
    out[0, 0] = -1.0  # the caller's array is its own
    assert ReplayOracle(ROWS, on_exhausted="cycle").query(4)[3].tolist() == [1.0, 2.0]


def test_raise_names_the_item_its_copies_and_consumes_nothing():
    o = ReplayOracle(ROWS, item=17)
    o.query(2)
    with pytest.raises(CopiesExhausted, match=r"item 17 has 3 copies: asked for 2 but only 1 remains \(2 already served\)"):
        o.query(2)
    assert (o.queries, o.calls, o.shortfalls, o.remaining) == (2, 1, 1, 1)
    assert o.query(1).tolist() == [[5.0, 6.0]]  # the last row is still there for a smaller request
    with pytest.raises(CopiesExhausted, match=r"round 4 has 1 copy: asked for 2 but only 1 remains \(0 already"):
        ReplayOracle([[1.0]], item="round 4").query(2)
    with pytest.raises(CopiesExhausted, match=r"the replayed item has 3 copies: asked for 4 but only 3 remain"):
        ReplayOracle(ROWS).query(4)


def test_drop_refuses_with_none_and_counts():
    o = ReplayOracle(ROWS, on_exhausted="drop")
    assert o.query(2).shape == (2, 2)
    assert o.query(2) is None
    assert o.query(5) is None
    assert (o.queries, o.calls, o.shortfalls) == (2, 1, 2)
    assert o.query(1).tolist() == [[5.0, 6.0]]


def test_cycle_wraps_around_in_order():
    o = ReplayOracle(ROWS, on_exhausted="cycle")
    assert o.query(2)[:, 0].tolist() == [1.0, 3.0]
    assert o.query(2)[:, 0].tolist() == [5.0, 1.0]  # row 3 = row 0
    assert o.query(7)[:, 0].tolist() == [3.0, 5.0, 1.0, 3.0, 5.0, 1.0, 3.0]  # more than m in one request
    assert (o.queries, o.calls, o.shortfalls, o.remaining) == (11, 3, 0, 0)


def test_same_rows_as_a_pool_under_raise_and_drop():
    """PoolOracle is the ReplayOracle that never reuses a copy: same rows, counts and refusals."""
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((6, 3))
    for policy in ("raise", "drop"):
        r, p = ReplayOracle(rows, on_exhausted=policy), PoolOracle(rows, on_exhausted=policy)
        for n in (2, 0, 3, 4, 1, 1):
            try:
                a = r.query(n)
            except CopiesExhausted:
                with pytest.raises(CopiesExhausted):
                    p.query(n)
                continue
            b = p.query(n)
            assert (a is None and b is None) or np.array_equal(a, b)
        assert (r.queries, r.calls, r.shortfalls) == (p.queries, p.calls, p.shortfalls) == (6, 3, 2)


@pytest.mark.parametrize(
    "make, pattern",
    [
        (lambda: ReplayOracle(ROWS, on_exhausted="wrap"), r"on_exhausted must be one of"),
        (lambda: ReplayOracle(np.empty((0, 2)), on_exhausted="cycle"), r"on_exhausted='cycle' needs at least one copy"),
        (lambda: ReplayOracle([1.0, 2.0]), r"copies must have 2 dimension"),
        (lambda: ReplayOracle(np.empty((3, 0))), r"copies must have shape \(m, d\) with d >= 1"),
        (lambda: ReplayOracle([[1.0, np.nan]]), r"copies must contain only finite"),
        (lambda: ReplayOracle(ROWS, item=-1), r"item must be None, an integer >= 0 or a string"),
        (lambda: ReplayOracle(ROWS, item=True), r"item must be None"),
        (lambda: ReplayOracle(ROWS, item=1.5), r"item must be None"),
        (lambda: ReplayOracle(ROWS).query(-1), r"n must be an integer >= 0"),
        (lambda: PoolOracle(ROWS, on_exhausted="cycle"), r"on_exhausted must be one of"),  # a pool never reuses
    ],
)
def test_bad_input_is_named(make, pattern):
    with pytest.raises(ParameterError, match=pattern):
        make()


def test_a_refused_query_leaves_the_oracle_unchanged():
    o = ReplayOracle(ROWS)
    o.query(1)
    before = repr(o)
    with pytest.raises(ParameterError):
        o.query(2.5)
    assert repr(o) == before


def test_repr_names_item_and_policy():
    assert repr(ReplayOracle(ROWS, item=3, on_exhausted="cycle")) == (
        "ReplayOracle(item=3, d=2, size=3, queries=0, calls=0, shortfalls=0, on_exhausted='cycle')")


def test_module_examples_run():
    res = doctest.testmod(nolo.noise.replay, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
