"""The inlined PCG64 draws of the AM stream loops are numpy's, so the fast path changes no result."""

import numpy as np
import pytest
from numba import njit

from nolo.learners.bandit import RCNBF, SOBA, Banditron, ClassificationBandit
from nolo.learners.bandit._pcg64 import pcg64_state, store_pcg64_state, uniform


@njit
def _draws(rng, n):
    out = np.empty(n)
    for i in range(n):
        out[i] = uniform(rng)
    return out


class _PCG64Generic(np.random.PCG64):
    """PCG64 under another type: the stream loops take the generic (function-pointer) path for it."""


def _generic(seed):
    return np.random.Generator(_PCG64Generic(seed))


@pytest.mark.parametrize("seed", [0, 1, 2**40 + 7, 123456789])
def test_inline_pcg64_draws_are_numpys(seed):
    g, ref = np.random.default_rng(seed), np.random.default_rng(seed)
    ref.integers(10, size=3), g.integers(10, size=3)  # any position in the stream
    st = pcg64_state(g)
    np.testing.assert_array_equal(_draws(st, 5000), ref.random(5000))
    store_pcg64_state(g, st)
    np.testing.assert_array_equal(g.random(7), ref.random(7))  # the generator continues where the loop stopped
    assert g.integers(2**32) == ref.integers(2**32)


def test_buffered_uint32_survives_the_round_trip():
    g, ref = np.random.default_rng(5), np.random.default_rng(5)
    g.integers(2**32, dtype=np.uint32), ref.integers(2**32, dtype=np.uint32)  # leaves half a uint64 buffered
    st = pcg64_state(g)
    _draws(st, 10), ref.random(10)
    store_pcg64_state(g, st)
    assert g.integers(2**32, dtype=np.uint32) == ref.integers(2**32, dtype=np.uint32)


def test_other_bit_generators_are_not_inlined():
    assert pcg64_state(np.random.Generator(np.random.Philox(1))) is None
    assert pcg64_state(_generic(1)) is None
    assert pcg64_state(np.random.default_rng(1)) is not None


def _run(cls, kw, env_rng, lrn_rng, order, X, y, T=3000):
    m = cls(n_classes=3, seed=lrn_rng, **kw)
    env = ClassificationBandit(X, y, rho0=0.1, rho1=0.2, order=order, seed=env_rng)
    r = env.run(m, T)
    return m, r, env


@pytest.mark.parametrize("order", ["replace", "permute"])
@pytest.mark.parametrize("cls,kw", [(Banditron, {}), (RCNBF, dict(rho0=0.1, rho1=0.2)), (SOBA, {})])
def test_stream_with_inline_pcg64_equals_the_generic_path(cls, kw, order):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 7)) * (rng.random((200, 7)) < 0.5)
    y = rng.integers(3, size=200)
    a, ra, env_a = _run(cls, kw, np.random.default_rng(11), np.random.default_rng(12), order, X, y)
    b, rb, env_b = _run(cls, kw, _generic(11), _generic(12), order, X, y)
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(ra.played_mistakes, rb.played_mistakes)
    np.testing.assert_array_equal(ra.greedy_mistakes, rb.greedy_mistakes)
    assert env_a.rng.random() == env_b.rng.random()  # both generators advanced by the same draws
    assert a.rng_.random() == b.rng_.random()


def test_one_generator_shared_by_environment_and_learner():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((100, 5)), rng.integers(3, size=100)
    g, h = np.random.default_rng(3), _generic(3)
    a, ra, _ = _run(Banditron, {}, g, g, "replace", X, y, 1000)
    b, rb, _ = _run(Banditron, {}, h, h, "replace", X, y, 1000)
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(ra.played_mistakes, rb.played_mistakes)
    assert g.random() == h.random()


@pytest.mark.parametrize("representation", ["dense", "csr"])
def test_prefetch_lookahead_on_large_data_changes_nothing(representation):
    """Data larger than PEEK_MIN_BYTES switch on the lookahead (a copy of the PCG64 state peeks at the rounds to
    come, for prefetching); the results equal the generic path's, which cannot peek, and the state advances alike."""
    from nolo.learners.bandit import _stream as kern

    rng = np.random.default_rng(4)
    n, d = 6000, 100
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.5)
    y = rng.integers(5, size=n)
    nbytes = X.nbytes if representation == "dense" else np.count_nonzero(X) * 12
    assert nbytes > kern.PEEK_MIN_BYTES
    out = []
    for env_rng, lrn_rng in ((np.random.default_rng(21), np.random.default_rng(22)), (_generic(21), _generic(22))):
        m = Banditron(n_classes=5, seed=lrn_rng)
        env = ClassificationBandit(X, y, rho0=0.1, rho1=0.1, seed=env_rng, representation=representation)
        first = env.run(m, 1500)
        second = env.run(m, 1500)  # a second call starts a new lookahead from the advanced state
        out.append((m.W_.copy(), first.played_mistakes, second.played_mistakes, env.rng.random()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    np.testing.assert_array_equal(out[0][2], out[1][2])
    assert out[0][3] == out[1][3]
