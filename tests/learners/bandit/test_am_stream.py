"""Compiled whole-stream path: identical to the per-round API, dense = CSR, float32, O(1) metrics, learning bars."""

import numpy as np
import pytest
import scipy.sparse as sp

from nolo import ParameterError
from nolo.learners.base import Learner
from nolo.learners.bandit import (BPA, RCINE, RCNBF, SOBA, Banditron, ClassificationBandit, Perceptron,
                                  log_checkpoints, run_stream)
from nolo.noise_rates import NREst

from cb_state import per_round  # tests/learners/bandit/cb_state.py


def _separable(K=4, d=20, n=3000, margin=0.3, seed=0):
    """Unit-norm x, labels of a random linear W*, multiclass margin >= margin (docs/baselines.md, section 8 toy)."""
    rng = np.random.default_rng(seed)
    Ws = rng.standard_normal((K, d))
    X = rng.standard_normal((4 * n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    S = X @ Ws.T
    o = np.sort(S, axis=1)
    keep = (o[:, -1] - o[:, -2]) >= margin
    return X[keep][:n], np.argmax(S[keep][:n], axis=1)


def _sparse_data(n=400, d=30, K=3, seed=1):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.2) * rng.random((n, d))
    y = np.argmax(X[:, :K], axis=1)
    return X, y


LEARNERS = [
    (Banditron, dict(gamma=0.2)),
    (RCNBF, dict(gamma=0.2, rho0=0.2, rho1=0.1)),
    (BPA, dict(gamma=0.2)),
    (SOBA, dict(gamma=0.2, a=0.5)),
    (RCINE, dict(gamma=0.2, refit_every=150, reservoir_size=60,
                 estimator=NREst(hidden_layer_sizes=(4,), max_iter=3, warm_start=True))),
]


@pytest.mark.parametrize("cls,kw", LEARNERS)
@pytest.mark.parametrize("order", ["replace", "permute"])
def test_compiled_stream_equals_per_round_api(cls, kw, order):
    X, y = _sparse_data()
    T = 500
    a = cls(n_classes=3, seed=7, **kw)
    mist, _ = per_round(a, X, y, T, 0.2, 0.1, seed=3, order=order)
    b = cls(n_classes=3, seed=7, **kw)
    res = run_stream(b, X, y, T, rho0=0.2, rho1=0.1, order=order, seed=3)
    np.testing.assert_array_equal(a.W_, b.W_)
    assert res.played_mistakes[-1] == mist and res.checkpoints[-1] == T
    assert a.rng_.bit_generator.state == b.rng_.bit_generator.state
    if cls is RCINE:
        assert a.estimates_.shape == (3, 2)
        np.testing.assert_array_equal(a.estimates_, b.estimates_)
        assert 0 < res.extra["nrest_share"] < 1 and res.extra["nrest_seconds"] > 0


def test_perceptron_stream_is_full_information():
    X, y = _separable(n=500)
    a = Perceptron(n_classes=4)
    res = run_stream(a, X, y, 2000, order="cycle")
    b = Perceptron(n_classes=4).initialize(X.shape[1])
    greedy = 0
    for t in range(2000):
        greedy += int(np.argmax(X[t % 500] @ b.W_.T)) != y[t % 500]
        b.learn(X[t % 500], int(y[t % 500]))
    np.testing.assert_array_equal(a.W_, b.W_)
    assert res.played_mistakes[-1] == res.greedy_mistakes[-1] == greedy
    assert (a.predict(X) == y).mean() > 0.97


@pytest.mark.parametrize("cls,kw", LEARNERS[:4])
def test_csr_equals_dense(cls, kw):
    X, y = _sparse_data()
    a, b, c = (cls(n_classes=3, seed=1, **kw) for _ in range(3))
    ra = run_stream(a, X, y, 3000, 0.1, 0.1, seed=2, representation="dense")
    rb = run_stream(b, sp.csr_matrix(X), y, 3000, 0.1, 0.1, seed=2)
    rc = run_stream(c, X, y, 3000, 0.1, 0.1, seed=2)  # auto: 20 % non-zeros -> the CSR loop
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.W_, c.W_)
    np.testing.assert_array_equal(ra.played_mistakes, rb.played_mistakes)
    np.testing.assert_array_equal(ra.played_mistakes, rc.played_mistakes)
    np.testing.assert_array_equal(a.predict(X), b.predict(sp.csr_matrix(X)))


def test_csr_input_with_explicit_zeros_and_unsorted_indices():
    """A user's CSR with explicit zeros and unsorted indices is read as the dense rows' non-zeros in order
    (the scores pair non-zeros by position), the same stream results, and the user's matrix is left untouched."""
    from nolo.learners.bandit.simulator import canonical_csr

    X, y = _sparse_data()
    M = sp.csr_matrix(X)
    rows = np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))
    extra_r, extra_c = np.arange(0, 60, 3), np.arange(0, 60, 3) % X.shape[1]
    keep = X[extra_r, extra_c] == 0  # add explicit zeros where X is zero, list every row's entries reversed
    r_all = np.r_[rows, extra_r[keep]]
    c_all = np.r_[M.indices, extra_c[keep]]
    v_all = np.r_[M.data, np.zeros(keep.sum())]
    order = np.lexsort((-c_all, r_all))
    U = sp.csr_matrix((v_all[order], c_all[order], np.r_[0, np.cumsum(np.bincount(r_all, minlength=X.shape[0]))]),
                      shape=X.shape)
    assert not U.has_sorted_indices and np.any(U.data == 0)
    before = (U.data.copy(), U.indices.copy())
    C = canonical_csr(U)
    np.testing.assert_array_equal(C.indptr, M.indptr)
    np.testing.assert_array_equal(C.indices, M.indices)
    np.testing.assert_array_equal(C.data, M.data)
    np.testing.assert_array_equal(U.data, before[0])
    np.testing.assert_array_equal(U.indices, before[1])
    a, b = Banditron(n_classes=3, seed=1), Banditron(n_classes=3, seed=1)
    ra = run_stream(a, X, y, 2000, 0.1, 0.1, seed=2, representation="dense")
    rb = run_stream(b, U, y, 2000, 0.1, 0.1, seed=2)
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(ra.greedy_mistakes, rb.greedy_mistakes)
    np.testing.assert_array_equal(a.predict(U), a.predict(X))


def test_float32_path_and_split_runs_continue_the_stream(tmp_path):
    X, y = _separable(n=1000)
    a = RCNBF(n_classes=4, gamma=0.1, rho0=0.1, rho1=0.1, dtype="float32", seed=0)
    env = ClassificationBandit(X, y, 0.1, 0.1, seed=4)
    env.run(a, 3000)
    c = Learner.load(a.save(tmp_path / "a"))
    assert c.W_.dtype == np.float32
    env.run(c, 3000)
    b = RCNBF(n_classes=4, gamma=0.1, rho0=0.1, rho1=0.1, dtype="float32", seed=0)
    run_stream(b, X, y, 6000, 0.1, 0.1, seed=4)
    np.testing.assert_array_equal(b.W_, c.W_)
    d64 = RCNBF(n_classes=4, gamma=0.1, rho0=0.1, rho1=0.1, seed=0)
    run_stream(d64, X, y, 6000, 0.1, 0.1, seed=4)
    assert np.mean(d64.predict(X) == b.predict(X)) > 0.95


def test_metrics_are_log_spaced_not_per_round():
    X, y = _separable(n=200)
    cps = log_checkpoints(10**7, 40)
    assert cps[-1] == 10**7 and len(cps) <= 41 and cps[0] == 1
    res = run_stream(Banditron(n_classes=4, gamma=0.1, seed=0), X, y, 200_000)
    assert res.checkpoints.size <= 61 and res.played_mistakes.size == res.checkpoints.size
    assert np.all(np.diff(res.played_mistakes) >= 0) and np.all(res.played_mistakes <= res.checkpoints)
    assert np.all(np.diff(res.played_mistakes) <= np.diff(res.checkpoints))


def test_stream_input_validation():
    X, y = _separable(n=50)
    with pytest.raises(ParameterError, match="rho0 \\+ rho1"):
        run_stream(RCNBF(n_classes=4), X, y, 10, rho0=0.6, rho1=0.4)
    with pytest.raises(ParameterError, match="order"):
        run_stream(RCNBF(n_classes=4), X, y, 10, order="shuffle")
    with pytest.raises(ParameterError, match="n_classes"):
        run_stream(RCNBF(n_classes=3), X, y, 10)
    with pytest.raises(ParameterError, match="checkpoints"):
        run_stream(RCNBF(n_classes=4), X, y, 10, checkpoints=[5, 3])
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ParameterError, match="finite"):
        run_stream(RCNBF(n_classes=4), Xn, y, 10)


def test_learning_curve_bar_rcnbf_beats_banditron_under_noise():
    """Separable toy (K=4, d=20, margin 0.3), flips (0.2, 0.2), gamma = 0.1, 50k rounds, 2 seeds.

    Measured when writing the test (3 seeds): RCNBF 0.262 +- 0.004, Banditron 0.477 +- 0.009,
    chance 0.75, exploration floor 0.075.  Bars: RCNBF < 0.32 and at least 0.1 below Banditron.
    """
    X, y = _separable(n=5000)
    for s in range(2):
        r = run_stream(RCNBF(n_classes=4, gamma=0.1, rho0=0.2, rho1=0.2, seed=s), X, y, 50_000, 0.2, 0.2, seed=10 + s)
        b = run_stream(Banditron(n_classes=4, gamma=0.1, seed=s), X, y, 50_000, 0.2, 0.2, seed=10 + s)
        assert r.error_rate[-1] < 0.32
        assert r.error_rate[-1] < b.error_rate[-1] - 0.1


def test_learning_curve_bar_noise_free():
    """Without noise every bandit learner gets well below chance (0.75) on the separable toy in 50k rounds.

    Measured (seed 0): Banditron 0.098, BPA 0.24 (BPA needs one-vs-rest separability,
    docs/baselines.md, section 8), SOBA 0.115; bars 0.2 / 0.45 / 0.2.
    """
    X, y = _separable(n=5000)
    bars = {Banditron: 0.2, BPA: 0.45, SOBA: 0.2}
    for cls, bar in bars.items():
        r = run_stream(cls(n_classes=4, gamma=0.05, seed=0), X, y, 50_000, seed=1)
        assert r.error_rate[-1] < bar, (cls.__name__, r.error_rate[-1])
        assert r.error_rate[-1] < r.error_rate[len(r.error_rate) // 2]  # still improving
