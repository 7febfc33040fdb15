"""The compiled regression oracles of SquareCB: ridge (Sherman-Morrison) against a direct solve, the VW-style OGD step."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nolo.learners.bandit import oracles as O


def _rows(x):
    idx = np.flatnonzero(x).astype(np.int64)
    return idx, x[idx].astype(np.float64), 0, idx.size


def test_ridge_sherman_morrison_equals_direct_solve():
    g = np.random.default_rng(0)
    K, d, lam, n = 3, 6, 0.7, 200
    st, Wt = O.ridge_oracle(K, d, lam), np.zeros((d + 1, K))
    X = g.normal(size=(n, d)) * (g.random((n, d)) < 0.6)  # sparse-ish rows, some coordinates zero
    a = g.integers(0, K, n)
    target = g.normal(size=n)
    r = np.empty(K)
    for i in range(n):
        idx, val, lo, hi = _rows(X[i])
        O.linear_predict(Wt, idx, val, lo, hi, r)
        assert O.ridge_update(st, Wt, idx, val, lo, hi, a[i], r[a[i]], target[i])
    Z = np.hstack([X, np.ones((n, 1))])
    for k in range(K):
        Zk, tk = Z[a == k], target[a == k]
        A = lam * np.eye(d + 1) + Zk.T @ Zk
        assert np.allclose(Wt[:, k], np.linalg.solve(A, Zk.T @ tk), atol=1e-10)
        assert np.allclose(st.P[k], np.linalg.inv(A), atol=1e-12)
        assert np.array_equal(st.P[k], st.P[k].T)  # the symmetric rank-one step keeps P exactly symmetric
    # predictions are theta . [x, 1]
    idx, val, lo, hi = _rows(X[0])
    O.linear_predict(Wt, idx, val, lo, hi, r)
    assert np.allclose(r, Z[0] @ Wt)


def test_ridge_one_update_by_hand():
    # d = 1, lam = 1: P = I, z = (2, 1); z'Pz = 5, theta += P z (t - 0) / 6, P -= P z z' P / 6
    st, Wt = O.ridge_oracle(1, 1, 1.0), np.zeros((2, 1))
    idx, val = np.array([0]), np.array([2.0])
    assert O.ridge_update(st, Wt, idx, val, 0, 1, 0, 0.0, 3.0)
    assert Wt[:, 0] == pytest.approx([1.0, 0.5])
    assert st.P[0] == pytest.approx(np.eye(2) - np.outer([2, 1], [2, 1]) / 6)


def test_ridge_nonfinite_update_writes_nothing():
    st, Wt = O.ridge_oracle(2, 2, 1.0), np.zeros((3, 2))
    P0 = st.P.copy()
    assert not O.ridge_update(st, Wt, np.array([0]), np.array([1.0]), 0, 1, 0, 0.0, np.inf)
    assert np.array_equal(st.P, P0) and not Wt.any()


def test_ridge_memory_refusal_message():
    assert O.ridge_bytes(10, 784) == 10 * 785 ** 2 * 8
    with pytest.raises(ValueError, match="GiB"):
        O.ridge_oracle(10, 100_000, 1.0)


def test_ogd_first_step_by_hand():
    # one feature x = 0.5 and the bias; target 1 from 0: s = (0.5, 1), G = (0.25, 1), N = 2, n = 1,
    # eta_t = eta sqrt(1/2), pred_per_update = 0.25/(0.5*0.5) + 1/(1*1) = 2, the prediction moves to 1 - exp(-2 eta_t)
    eta = 0.5
    st, Wt = O.ogd_oracle(1, 3, eta), np.zeros((4, 1))
    idx, val = np.array([1]), np.array([0.5])
    assert O.ogd_update(st, Wt, idx, val, 0, 1, 0, 0.0, 1.0)
    step = (1 - math.exp(-eta * math.sqrt(0.5) * 2)) / 2
    assert Wt[1, 0] == pytest.approx(step * 0.5 / (0.5 * 0.5))
    assert Wt[3, 0] == pytest.approx(step)
    r = np.empty(1)
    O.linear_predict(Wt, idx, val, 0, 1, r)
    assert r[0] == pytest.approx(1 - math.exp(-eta * math.sqrt(0.5) * 2))


def test_ogd_invariant_step_never_overshoots():
    g = np.random.default_rng(1)
    st, Wt = O.ogd_oracle(2, 20, 10.0), np.zeros((21, 2))  # a large rate: the invariant step still stops at the target
    r = np.empty(2)
    for i in range(500):
        # the first row sets every scale s_j = 1, so later steps start from the prediction r[0] itself (a growing
        # scale rescales w_j first, which moves the prediction the step starts from)
        x = np.ones(20) if i == 0 else g.random(20) * (g.random(20) < 0.5)
        idx, val, lo, hi = _rows(x)
        O.linear_predict(Wt, idx, val, lo, hi, r)
        t = float(g.integers(0, 2))
        old = r[0]
        assert O.ogd_update(st, Wt, idx, val, lo, hi, 0, old, t)
        O.linear_predict(Wt, idx, val, lo, hi, r)
        assert min(old, t) - 1e-9 <= r[0] <= max(old, t) + 1e-9


def test_ogd_learns_a_linear_function():
    g = np.random.default_rng(2)
    w = g.normal(size=10)
    st, Wt = O.ogd_oracle(1, 10, 0.5), np.zeros((11, 1))
    r = np.empty(1)
    errs = []
    for i in range(20_000):
        x = g.normal(size=10)
        idx, val, lo, hi = _rows(x)
        O.linear_predict(Wt, idx, val, lo, hi, r)
        errs.append((r[0] - (x @ w + 0.3)) ** 2)
        O.ogd_update(st, Wt, idx, val, lo, hi, 0, r[0], x @ w + 0.3 + 0.1 * g.normal())
    assert np.mean(errs[-2000:]) < 0.05 * np.var(g.normal(size=(1000, 10)) @ w)


def _ogd_step_reference(G, S, N, n, eta, Wt, idx, val, lo, hi, a, pred, target):
    """The OGD step as one scalar pass per stage in plain Python (the definition the compiled step's passes must
    reproduce bit for bit): scales and normaliser, then G and the rates, then the weights; each sum as four partial
    sums over the non-zeros' offsets mod 4, added as (s0 + s1) + (s2 + s3)."""
    D = G.shape[0]
    p, c = pred, [0.0] * 4  # the normaliser's four partial sums, as pred_per_update's below
    for t in range(lo, hi):
        j, v = idx[t], val[t]
        ax = abs(v)
        if ax == 0.0:
            continue
        s = S[j, a]
        if ax > s:
            if s > 0.0:
                w_old = Wt[j, a]
                Wt[j, a] = w_old * (s / ax)
                p += (Wt[j, a] - w_old) * v
            S[j, a] = s = ax
        c[(t - lo) % 4] += (v / s) * (v / s)
    nrm = 1.0 + ((c[0] + c[1]) + (c[2] + c[3]))
    S[D - 1, a] = 1.0
    err = target - p
    if err == 0.0:
        return
    g2 = err * err
    G[D - 1, a] += g2
    N[a] += nrm
    n[a] += 1.0
    eta_t = eta * math.sqrt(n[a] / N[a])
    rb = 1.0 / math.sqrt(G[D - 1, a])
    rates, q = [], [0.0] * 4  # pred_per_update's four partial sums, over the offsets t - lo = 0, 1, 2, 3 (mod 4)
    for t in range(lo, hi):
        j, v = idx[t], val[t]
        G[j, a] = G[j, a] + g2 * v * v
        rate = 1.0 / (S[j, a] * math.sqrt(G[j, a])) if v != 0.0 else 0.0
        rates.append(rate)
        q[(t - lo) % 4] += v * v * rate
    ppu = rb + ((q[0] + q[1]) + (q[2] + q[3]))
    step = err * (1.0 - math.exp(-eta_t * ppu)) / ppu
    for t in range(lo, hi):
        Wt[idx[t], a] += step * val[t] * rates[t - lo]
    Wt[D - 1, a] += step * rb


def test_ogd_step_bit_identical_to_the_scalar_definition():
    # the compiled step runs in passes over the non-zeros (gathered buffers, SIMD square roots and divisions,
    # the sums in four partial sums): every array must equal the one-pass scalar definition exactly, through growing
    # scales (rescaled weights), explicit zeros, rows at an offset lo > 0 (CSR) and a target hit exactly
    g = np.random.default_rng(7)
    K, d = 3, 40
    st = O.ogd_oracle(K, d, 0.5)
    Wt = np.zeros((d + 1, K))
    ref = [np.zeros_like(st.G), np.zeros_like(st.S), np.zeros(K), np.zeros(K)]
    Wr = np.zeros_like(Wt)
    r = np.empty(K)
    for i in range(400):
        scale = 1.0 + i / 100  # the |x_j| keep growing: rescale events all along
        x = g.normal(size=d) * scale * (g.random(d) < 0.3)
        nz = np.flatnonzero(x)
        keep = np.sort(np.concatenate([nz, g.choice(d, 2, replace=False)]))  # plus explicit zeros
        pad = int(g.integers(0, 4))  # the row sits at [lo, hi) of longer arrays
        idx = np.concatenate([np.zeros(pad, np.int64), np.unique(keep), np.zeros(2, np.int64)])
        val = np.concatenate([g.normal(size=pad), x[np.unique(keep)], g.normal(size=2)])
        lo, hi = pad, pad + np.unique(keep).size
        a = int(g.integers(0, K))
        O.linear_predict(Wt, idx, val, lo, hi, r)
        target = r[a] if i % 50 == 0 else float(g.integers(0, 2))  # err == 0 now and then (no rescale at i = 0)
        assert O.ogd_update(st, Wt, idx, val, lo, hi, a, r[a], target)
        _ogd_step_reference(*ref, 0.5, Wr, idx, val, lo, hi, a, r[a], target)
        for got, want in zip([Wt, st.G, st.S, st.N, st.n], [Wr, *ref]):
            np.testing.assert_array_equal(got, want)
    assert ref[3].sum() > 300 and np.all(ref[1][:d] > 0)  # the steps were taken and every scale was set
