"""The fast paths of the AM stream loops (SIMD score blocks, straight-line update, padded weights,
prefetch with the next index drawn one round ahead) give exactly the per-round API's results."""

import numpy as np
import pytest
import scipy.sparse as sp
from numba import njit

from nolo import NumericalError
from nolo.learners.bandit import BPA, RCNBF, SOBA, Banditron, ClassificationBandit, run_stream
from nolo.learners.bandit import _simd as kern
from nolo.learners.bandit.rcnbf import exp_h_coefficients


@njit
def _padded_scores(Wt, idx, val, lo, hi):
    Wp, sp_ = kern.padded(Wt)
    kern.scores_padded(Wp, idx, val, lo, hi, sp_)
    return sp_[:Wt.shape[1]].copy()


@njit
def _two_rows(Wt, idx, val, lo, hi, a, c, b):
    kern.add_sub_columns(Wt, idx, val, lo, hi, a, c, b)


def _round(exact, dtype):
    """The float of ``dtype`` nearest to the Fraction ``exact`` (ties to even): one correct rounding."""
    from fractions import Fraction

    x = dtype(float(exact))
    cands = [np.nextafter(x, dtype(-np.inf)), x, np.nextafter(x, dtype(np.inf))]
    err = [abs(Fraction(float(c)) - exact) for c in cands]
    best = min(err)
    ties = [c for c, e in zip(cands, err) if e == best]
    return ties[0] if len(ties) == 1 else next(c for c in ties if int(c.view(np.int32 if dtype == np.float32
                                                                                    else np.int64)) % 2 == 0)


def _fma(a, b, c, dtype):
    """a * b + c rounded once to dtype, exactly (fractions)."""
    from fractions import Fraction

    return _round(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)), dtype)


def _data(n=150, d=13, K=5, density=0.4, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = ((rng.random((n, d)) < density) * rng.standard_normal((n, d))).astype(dtype)
    return X, rng.integers(K, size=n)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("K", [2, 16, 17, 40])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_simd_scores_are_the_paired_sequential_sums(dtype, K, index_dtype):
    """Each class's score is a0 + a1, a0 = fma(w_j3, x_j3, fma(w_j1, x_j1, 0)) ... over the non-zeros at even
    offsets, a1 likewise over the odd ones, each fused multiply-add rounded once in the dtype (computed exactly
    here), for 1, 2 and 3 blocks of 16 classes, odd and even counts -- the same bits from the SIMD blocks and from
    the per-round scalar ``scores``."""
    rng = np.random.default_rng(K)
    d = 30
    Wt = rng.standard_normal((d, K)).astype(dtype)
    idx = np.sort(rng.choice(d, size=23, replace=False)).astype(index_dtype)
    val = rng.standard_normal(23).astype(dtype)
    for lo, hi in ((0, 23), (5, 6), (7, 7), (3, 20), (2, 5)):
        a = [np.zeros(K, dtype=dtype), np.zeros(K, dtype=dtype)]
        for t in range(lo, hi):
            acc = a[(t - lo) % 2]
            for k in range(K):
                acc[k] = _fma(Wt[idx[t], k], val[t], acc[k], dtype)
        want = (a[0] + a[1]).astype(dtype)
        np.testing.assert_array_equal(_padded_scores(Wt, idx, val, lo, hi), want)
        got = np.empty(K, dtype=dtype)
        kern.scores(Wt, idx, val, lo, hi, got)
        np.testing.assert_array_equal(got, want)
    single = np.zeros(K, dtype=dtype)  # the test tells the pairing and the fusing from one unfused running sum
    for t in range(23):
        single = (single + Wt[idx[t]] * val[t]).astype(dtype)
    assert not np.array_equal(single, _padded_scores(Wt, idx, val, 0, 23))


@njit
def _argmax_padded(s):
    sp_ = np.zeros(16 * ((s.shape[0] + 15) // 16), dtype=s.dtype)
    sp_[:s.shape[0]] = s
    return kern.argmax_padded(sp_, s.shape[0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_vector_argmax_is_the_first_index_of_the_maximum(dtype):
    """argmax_padded = argmax_first (ties to the smallest index; a NaN at 0 wins, NaNs elsewhere never do;
    -0.0 ties with 0.0; all -inf gives 0), for 1 to 3 blocks of 16 classes, padding lanes never chosen."""
    rng = np.random.default_rng(7)
    cases = [np.array([-1.0, -3.0, -2.0]), np.array([0.5, 2.0, 2.0, 1.0]), np.array([-0.0, 0.0, -1.0]),
             np.array([np.nan, 5.0, 1.0]), np.array([1.0, np.nan, 5.0, 5.0]), np.full(5, -np.inf),
             np.array([-np.inf, np.nan, -np.inf]), np.array([np.inf, np.inf]), np.array([-5.0])]
    for K in (2, 9, 10, 16, 17, 33, 40):
        s = np.round(rng.standard_normal(K), 1)  # rounding makes ties
        cases += [s, -np.abs(s), np.where(rng.random(K) < 0.2, np.nan, s)]
    for s in cases:
        s = s.astype(dtype)
        assert _argmax_padded(s) == kern.argmax_first(s), s


def test_exp_h_coefficient_table_is_the_per_round_step():
    """The stream loops' table holds exactly update_exp_h's h(f)/P(played) for f in {0, 1}, played == yhat or not."""
    for gamma, rho0a, beta_a, K in ((0.05, 0.0, 1.0, 10), (0.3, 0.15, 0.55, 9), (1.0, 0.4, 0.2, 3)):
        c = exp_h_coefficients(gamma, rho0a, beta_a, K)
        for f in (0, 1):
            for same in (0, 1):
                p = gamma / K + (1.0 - gamma) * same
                assert c[2 * f + same] == (f - rho0a) / beta_a / p


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("a,b", [(1, 3), (2, 2)])
def test_two_row_update_rounds_in_the_weights_dtype(dtype, a, b):
    """Wt[j, a] = fma(c, x_j, Wt[j, a]) (one rounding), then Wt[j, b] -= x_j, all in the weights' dtype (c rounded
    to float32 for float32); the fused result is computed exactly here with fractions."""
    rng = np.random.default_rng(3)
    W0 = rng.standard_normal((12, 4)).astype(dtype)
    idx = np.array([0, 4, 5, 11], dtype=np.int32)
    val = rng.standard_normal(4).astype(dtype)
    c = 1.0 / 0.9625  # a play probability's inverse, not representable in float32
    want = W0.copy()
    for j, v in zip(idx[1:3], val[1:3]):
        want[j, a] = _fma(dtype(c), v, want[j, a], dtype)
        want[j, b] = want[j, b] - v
    W = W0.copy()
    _two_rows(W, idx, val, 1, 3, a, c, b)
    np.testing.assert_array_equal(W, want)


def _per_round(learner, X, y, T, seed):
    env = ClassificationBandit(X, y, rho0=0.1, rho1=0.2, order="permute", seed=seed, representation="dense")
    for _ in range(T):
        x = env.next()
        p = learner.act(x)
        learner.learn(x, p, env.feedback(p))
    return env


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("K", [3, 17, 33])
@pytest.mark.parametrize("cls,kw", [(Banditron, {}), (RCNBF, dict(rho0=0.1, rho1=0.2)), (SOBA, dict(a=0.5))])
def test_stream_equals_per_round_api_for_many_classes_and_float32(dtype, K, cls, kw):
    X, y = _data(K=K, dtype=np.float64)
    a = cls(n_classes=K, gamma=0.3, dtype=dtype, seed=5, **kw)
    env_a = _per_round(a, X, y, 400, seed=8)
    b = cls(n_classes=K, gamma=0.3, dtype=dtype, seed=5, **kw)
    env_b = ClassificationBandit(X, y, rho0=0.1, rho1=0.2, order="permute", seed=8)
    env_b.run(b, 150)
    env_b.run(b, 250)  # a split run continues the same stream
    np.testing.assert_array_equal(a.W_, b.W_)
    assert a.W_.dtype == b.W_.dtype == np.dtype(dtype)
    assert a.rng_.bit_generator.state == b.rng_.bit_generator.state
    assert env_a.rng.bit_generator.state == env_b.rng.bit_generator.state  # no index drawn beyond the last round
    np.testing.assert_array_equal(env_a.pos, env_b.pos)


def test_csr_with_int64_indices_equals_dense():
    X, y = _data(K=4)
    C = sp.csr_matrix(X)
    C.indices = C.indices.astype(np.int64)
    C.indptr = C.indptr.astype(np.int64)
    a, b = RCNBF(n_classes=4, gamma=0.2, rho0=0.1, rho1=0.1, seed=1), RCNBF(n_classes=4, gamma=0.2, rho0=0.1, rho1=0.1, seed=1)
    ra = run_stream(a, X, y, 2000, 0.1, 0.1, seed=2, representation="dense")
    rb = run_stream(b, C, y, 2000, 0.1, 0.1, seed=2, representation="csr")
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(ra.played_mistakes, rb.played_mistakes)


@pytest.mark.parametrize("representation", ["dense", "csr"])
def test_nonfinite_step_raises_and_leaves_the_weights(representation):
    """BPA's step loss/||x||^2 overflows on a subnormal ||x||^2: NumericalError, that round not applied."""
    X = np.full((5, 3), 1e-160)
    y = np.arange(5) % 2
    m = BPA(n_classes=2, gamma=0.1, seed=0)
    with pytest.raises(NumericalError):
        run_stream(m, X, y, 10, seed=1, representation=representation)
    assert m.t_ == 0
    np.testing.assert_array_equal(m.W_, np.zeros((2, 3)))
