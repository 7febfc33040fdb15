"""The FD-SON oracle (Luo et al. 2016, Algorithms 1-2, per class): ridge exactly until the first shrink, the Frequent
Directions shrink by hand, its error bound, per-round == stream, validation, learning (resume == uninterrupted:
test_squarecb.py, oracle="fdson")."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from nolo.exceptions import ParameterError, PersistenceError
from nolo.learners.bandit import FastCB, SquareCB, run_stream
from nolo.learners.bandit import oracles as O
from nolo.learners.bandit.sketch_oracle import fdson_bytes, fdson_oracle, fdson_shrink, fdson_update
from nolo.learners.base import Learner
from cb_state import assert_same, per_round  # SquareCB's state comparison and per-round play


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def _rows(x):
    idx = np.flatnonzero(x).astype(np.int64)
    return idx, x[idx].astype(np.float64), 0, idx.size


def _fit(o, Wt, X, played, target):
    r = np.empty(Wt.shape[1])
    for i in range(X.shape[0]):
        idx, val, lo, hi = _rows(X[i])
        O.linear_predict(Wt, idx, val, lo, hi, r)
        assert fdson_update(o, Wt, idx, val, lo, hi, played[i], r[played[i]], target[i])


def test_one_update_by_hand():
    # d = 1, alpha = 1, z = (2, 1), target 3 from 0: k = alpha + z.z = 6, w = z 3 / 6; the sketch holds z and
    # M = (alpha + z.z)^-1 = 1/6 -- the ridge oracle's step (test_bandit_oracles.test_ridge_one_update_by_hand)
    o, Wt = fdson_oracle(1, 1, 1.0, 2), np.zeros((2, 1))
    assert fdson_update(o, Wt, np.array([0]), np.array([2.0]), 0, 1, 0, 0.0, 3.0)
    assert Wt[:, 0] == pytest.approx([1.0, 0.5])
    assert o.sketch_rows[0] == 1 and o.sketch[0, 0] == pytest.approx([2.0, 1.0]) and not o.sketch[0, 1:].any()
    assert o.sketch_inv[0, 0, 0] == pytest.approx(1 / 6) and not o.sketch_inv[0, 1:].any()
    # a second update, z = (1, 1), target 0 from the prediction 1.5: b = S z = 3, M b = 1/2, k = 1 + 2 - 3/2 = 1.5,
    # A^-1 z = (z - S^T M b) / k = ((1, 1) - (1, 0.5)) / 1.5 = (0, 1/3): w += -1.5 (0, 1/3)
    assert fdson_update(o, Wt, np.array([0]), np.array([1.0]), 0, 1, 0, 1.5, 0.0)
    assert Wt[:, 0] == pytest.approx([1.0, 0.0])
    assert o.sketch_inv[0, :2, :2] == pytest.approx(np.linalg.inv(np.eye(2) + np.array([[5.0, 3.0], [3.0, 2.0]])))


@pytest.mark.parametrize("robust", [False, True])
def test_equals_ridge_until_the_first_shrink(robust):
    """While a class has had fewer than 2m updates its sketch is exact: SON's step is recursive least squares."""
    g = np.random.default_rng(0)
    K, d, lam, n, m = 3, 6, 0.7, 40, 10
    o, Ws = fdson_oracle(K, d, lam, m, robust), np.zeros((d + 1, K))
    ro, Wr = O.ridge_oracle(K, d, lam), np.zeros((d + 1, K))
    X = g.normal(size=(n, d)) * (g.random((n, d)) < 0.6)
    a = g.integers(0, K, n)
    assert np.bincount(a).max() <= 2 * m  # the first shrink comes with update 2m + 1
    tg = g.normal(size=n)
    _fit(o, Ws, X, a, tg)
    r = np.empty(K)
    for i in range(n):
        idx, val, lo, hi = _rows(X[i])
        O.linear_predict(Wr, idx, val, lo, hi, r)
        O.ridge_update(ro, Wr, idx, val, lo, hi, a[i], r[a[i]], tg[i])
    np.testing.assert_allclose(Ws, Wr, atol=1e-12)
    assert np.array_equal(o.sketch_rows, np.bincount(a, minlength=K).astype(float))
    for k in range(K):  # M = (alpha I + S S^T)^-1 and A^-1 = P of ridge
        L = int(o.sketch_rows[k])
        S, M = o.sketch[k, :L], o.sketch_inv[k, :L, :L]
        np.testing.assert_allclose(M, np.linalg.inv(lam * np.eye(L) + S @ S.T), atol=1e-12)
        np.testing.assert_allclose(o.sketch_gram[k, :L, :L], S @ S.T, atol=1e-12)
        Ainv = (np.eye(d + 1) - S.T @ M @ S) / lam
        np.testing.assert_allclose(Ainv, ro.P[k], atol=1e-12)


@pytest.mark.parametrize("robust", [False, True])
def test_shrink_by_hand(robust):
    """2m = 4 rows full: the 5th update first rotates S to its singular directions and subtracts delta = the m-th
    (2nd) largest squared singular value; m - 1 = 1 row stays (RFD: alpha += delta / 2), then z is appended."""
    g = np.random.default_rng(3)
    d, m, alpha = 5, 2, 0.5
    o, Wt = fdson_oracle(1, d, alpha, m, robust), np.zeros((d + 1, 1))
    X = g.normal(size=(4, d))
    _fit(o, Wt, X, np.zeros(4, np.int64), g.normal(size=4))
    Z = np.hstack([X, np.ones((4, 1))])
    np.testing.assert_allclose(o.sketch[0], Z, atol=0)
    sig2, V = np.linalg.svd(Z, full_matrices=False)[1] ** 2, np.linalg.svd(Z, full_matrices=False)[2]
    delta = fdson_shrink(o, 0)
    assert delta == pytest.approx(sig2[1])
    assert o.sketch_rows[0] == 1 and not o.sketch[0, 1:].any()
    want = (sig2[0] - sig2[1]) * np.outer(V[0], V[0])
    np.testing.assert_allclose(o.sketch[0, :1].T @ o.sketch[0, :1], want, atol=1e-10)
    a_new = alpha + (sig2[1] / 2 if robust else 0.0)
    assert o.sketch_alpha[0] == pytest.approx(a_new)
    assert o.sketch_inv[0, 0, 0] == pytest.approx(1 / (a_new + sig2[0] - sig2[1]))
    assert o.sketch_gram[0, 0, 0] == pytest.approx(sig2[0] - sig2[1]) and np.count_nonzero(o.sketch_gram[0]) == 1
    # the next update appends z with the Gram kept: it equals S S^T of the rows again
    idx, val, lo, hi = _rows(g.normal(size=d))
    assert fdson_update(o, Wt, idx, val, lo, hi, 0, 0.0, 1.0)
    S = o.sketch[0, :2]
    np.testing.assert_allclose(o.sketch_gram[0, :2, :2], S @ S.T, atol=1e-10)
    np.testing.assert_allclose(o.sketch_inv[0, :2, :2], np.linalg.inv(a_new * np.eye(2) + S @ S.T), atol=1e-12)


def test_frequent_directions_error_bound():
    """0 <= Z^T Z - S^T S <= (sum of the deltas) I <= ||Z||_F^2 / m I (each shrink removes >= m delta of mass)."""
    g = np.random.default_rng(5)
    d, m, n = 30, 4, 300
    o, Wt = fdson_oracle(1, d, 1.0, m, True), np.zeros((d + 1, 1))
    X = g.normal(size=(n, d)) @ np.diag(np.linspace(3, 0.1, d))  # a decaying spectrum
    _fit(o, Wt, X, np.zeros(n, np.int64), g.normal(size=n))
    Z = np.hstack([X, np.ones((n, 1))])
    L = int(o.sketch_rows[0])
    S = o.sketch[0, :L]
    ev = np.linalg.eigvalsh(Z.T @ Z - S.T @ S)
    deltas = 2 * (o.sketch_alpha[0] - 1.0)  # robust: alpha grew by half of each delta
    assert ev.min() > -1e-8 and ev.max() <= deltas + 1e-8 and deltas <= (Z ** 2).sum() / m


def test_nonfinite_update_writes_nothing():
    o, Wt = fdson_oracle(2, 2, 1.0, 2), np.zeros((3, 2))
    before = [a.copy() for a in o[:5]]
    assert not fdson_update(o, Wt, np.array([0]), np.array([1.0]), 0, 1, 0, 0.0, np.inf)
    assert not fdson_update(o, Wt, np.array([0]), np.array([1.0]), 0, 1, 0, np.nan, 1.0)
    assert all(np.array_equal(a, b) for a, b in zip(o[:5], before)) and not Wt.any()


def test_learns_a_linear_function_on_a_low_rank_input():
    """Inputs in a 5-dimensional subspace of R^40: a sketch of m = 8 directions holds it, so FD-SON converges like
    least squares (the noise level), where plain first-order steps would still be adapting."""
    g = np.random.default_rng(2)
    B = g.normal(size=(5, 40))
    w = g.normal(size=40)
    o, Wt = fdson_oracle(1, 40, 1.0, 8), np.zeros((41, 1))
    r = np.empty(1)
    errs = []
    for _ in range(3_000):
        x = g.normal(size=5) @ B / 5
        idx, val, lo, hi = _rows(x)
        O.linear_predict(Wt, idx, val, lo, hi, r)
        errs.append((r[0] - (x @ w + 0.3)) ** 2)
        fdson_update(o, Wt, idx, val, lo, hi, 0, r[0], x @ w + 0.3 + 0.1 * g.normal())
    assert np.mean(errs[-500:]) < 0.02 < np.mean(errs[:50])


def test_scratch_buffer_carries_nothing_between_updates():
    # the update's b, M b and dense v live in the record's scratch rows (fdson_buffer): whatever an earlier update
    # (or garbage) left there, every update writes before it reads -- same bits as with a fresh zeroed buffer,
    # through shrinks (m = 3: one every 4 updates of a class)
    g = np.random.default_rng(5)
    K, d, m = 2, 12, 3
    fresh, dirty = fdson_oracle(K, d, 1.0, m, True), fdson_oracle(K, d, 1.0, m, True)
    assert fresh.buf.shape == (3, max(2 * m, d + 1))
    Wf, Wd = np.zeros((d + 1, K)), np.zeros((d + 1, K))
    r = np.empty(K)
    for i in range(60):
        x = g.normal(size=d) * (g.random(d) < 0.6)
        idx, val, lo, hi = _rows(x)
        a, target = int(g.integers(0, K)), float(g.integers(0, 2))
        fresh.buf[:] = 0.0
        dirty.buf[:] = np.nan if i % 2 else 1e300
        O.linear_predict(Wf, idx, val, lo, hi, r)
        assert fdson_update(fresh, Wf, idx, val, lo, hi, a, r[a], target)
        assert fdson_update(dirty, Wd, idx, val, lo, hi, a, r[a], target)
        for u, v in zip([Wf, *fresh[:5]], [Wd, *dirty[:5]]):
            np.testing.assert_array_equal(u, v)
    assert np.all(fresh.sketch_alpha > 1.0)  # both classes shrank (robust: alpha grew by delta / 2)


def test_memory_is_stated():
    assert fdson_bytes(10, 784, 20) == 10 * (40 * 785 + 3200 + 2) * 8
    o = fdson_oracle(10, 784, 1.0, 20)
    assert sum(a.nbytes for a in o[:5]) == fdson_bytes(10, 784, 20)


# -- the learners with oracle="fdson" -----------------------------------------------------------------


@pytest.mark.parametrize("cls,kw", [
    (SquareCB, dict(correction="target", rho0=0.2, rho1=0.1)),
    (FastCB, dict(correction="gap", estimate_rates=True, rate_every=200, sketch_robust=False)),
])
def test_per_round_equals_stream_bitwise(digits, cls, kw):
    X, y = digits
    X, y = X[:300], y[:300]
    n = 1_500
    m1 = cls(n_classes=10, oracle="fdson", sketch_size=5, seed=3, **kw)  # 10 rows: many shrinks in 1,500 rounds
    mistakes, _ = per_round(m1, X, y, n, 0.2, 0.1, seed=4)
    assert m1.sketch_alpha_.min() > 1.0 if m1.sketch_robust else np.all(m1.sketch_alpha_ == 1.0)
    for rep in ("dense", "csr"):
        m2 = cls(n_classes=10, oracle="fdson", sketch_size=5, seed=3, **kw)
        res = run_stream(m2, X, y, n, rho0=0.2, rho1=0.1, seed=4, representation=rep)
        assert_same(m1, m2)
        assert res.played_mistakes[-1] == mistakes


def test_a_loaded_sketch_is_checked(tmp_path):
    m = SquareCB(n_classes=3, oracle="fdson", sketch_size=2, seed=0)
    x = np.array([0.5, 0.0, 0.5, 0.1])
    m.learn(x, m.act(x), 1)
    m.sketch_rows_[0] = 9.0  # more rows than the 2m = 4 the sketch holds
    m.save(tmp_path / "bad.npz")
    with pytest.raises(PersistenceError, match="sketch"):
        Learner.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("kw, name", [(dict(sketch_size=1), "sketch_size"), (dict(sketch_size=2.5), "sketch_size"),
                                      (dict(sketch_robust="yes"), "sketch_robust"), (dict(lam=0.0), "lam")])
def test_bad_parameters_are_named(kw, name):
    m = SquareCB(n_classes=3, oracle="fdson", **kw)
    with pytest.raises(ParameterError, match=name):
        m.initialize(4)
    assert not m.is_initialized


def test_digits_learning_curve_under_noise(digits):
    """digits, 10^5 rounds, (0.2, 0.2), m = 20 (2m = 40 < d + 1 = 65: the sketch shrinks): below SquareCB-ogd's bar
    of test_squarecb (0.1) and near the full ridge oracle's (0.06)."""
    X, y = digits
    m = SquareCB(n_classes=10, oracle="fdson", rho0=0.2, rho1=0.2, seed=0)
    res = run_stream(m, X, y, 100_000, rho0=0.2, rho1=0.2, seed=1)
    assert res.error_rate[-1] < 0.07
    assert res.error_rate[-1] < res.error_rate[np.searchsorted(res.checkpoints, 10_000)]
    assert np.mean(m.predict(X) == y) > 0.93
