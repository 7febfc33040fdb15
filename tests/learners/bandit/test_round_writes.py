"""The per-round ``learn`` of the learners that name what a round writes (``_round_writes``): it saves and checks only
those entries, so they must cover every entry a round changes -- undoing them after a round gives back the state
before it byte for byte -- and a non-finite write among them is undone with the rest.  (The full-state path is the
shared contract checks', tests/test_checks.py.)"""

import numpy as np
import pytest
from sklearn.datasets import load_wine

from nolo.exceptions import NumericalError
from nolo.learners.bandit import AutoCB, FastCB, LinUCB, SquareCB


def _arrays(m):
    return {k: v.copy() for k, v in m._get_state().items() if isinstance(v, np.ndarray)}


def _wine():
    X, y = load_wine(return_X_y=True)
    X = np.round(X[:, :8], 0)  # repeated rows: AutoCB's memory finds entries as well as adding them
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


CASES = [
    (AutoCB, dict(rho0=0.1, rho1=0.2)),  # centred rows, the kernel candidate
    (AutoCB, dict(estimate_rates=True, kernel_max_features=4)),  # no kernel, rates estimated
    (AutoCB, dict(rho0=0.1, rho1=0.2, center_max_features=4)),  # rows scaled by max |x_j| only
    (SquareCB, dict(rho0=0.1, rho1=0.2)),
    (SquareCB, dict(estimate_rates=True, rate_every=100, correction="gap")),
    (FastCB, dict(estimate_rates=True, rate_every=100, correction="gap")),
    (LinUCB, dict(rho0=0.1, rho1=0.2)),
]


@pytest.mark.parametrize("cls, params", CASES, ids=lambda c: getattr(c, "__name__", None))
def test_a_rounds_writes_cover_everything_it_changes(cls, params):
    # AutoCB with a small memory, so that probes collide and the least-counted entry is replaced
    X, y = _wine()
    extra = dict(memory_size=64) if cls is AutoCB else {}
    m = cls(n_classes=3, seed=0, **params, **extra)
    g = np.random.default_rng(1)
    journaled = gathering = 0
    for t in range(1_200):
        i = g.integers(len(X))
        a = m.act(X[i])
        bit = int(a == y[i]) ^ int(g.random() < 0.2)
        idx, val, nnz = m._round_rows(X[i])
        writes = m._round_writes(idx, val, nnz, a)
        if writes is None:
            m.learn(X[i], a, bit)
            continue
        gathering += cls is AutoCB and m.kernel_on_[0] == 0.0
        before, saved = _arrays(m), [w[j].copy() for w, j in writes]
        m.learn(X[i], a, bit)
        done = [w[j].copy() for w, j in writes]
        for (w, j), s in zip(writes, saved):
            w[j] = s
        after = _arrays(m)
        assert after.keys() == before.keys()
        # rate_estimates_: the log of refreshed rates, appended by _after_round once the round has succeeded
        changed = [k for k in before if after[k].tobytes() != before[k].tobytes() and k != "rate_estimates_"]
        assert not changed, f"round {t} wrote outside _round_writes: {changed}"
        for (w, j), v in zip(writes, done):  # the round's writes again: the stream goes on from the learned state
            w[j] = v
        journaled += 1
    if cls is AutoCB:  # every round in the dense ridge regime: the memory is saved by its probe window only
        assert journaled == 1_200
        if params.get("kernel_max_features") is None:  # the rounds gathering the kernel's landmarks too
            assert gathering == m.kernel_buf_.shape[0]  # the last one builds the kernel
    assert journaled > 1_000


def test_other_oracles_save_the_whole_state():
    X, _ = _wine()
    m = SquareCB(n_classes=3, oracle="ogd", seed=0)
    m.learn(X[0], 0, 1)
    assert m._round_writes(*m._round_rows(X[1]), 1) is None


def test_a_non_finite_write_is_undone_on_the_per_round_path():
    # AutoCB: a moment about to overflow; the round's last write (after the oracles and the memory) is inf, and
    # everything it wrote before -- the played label's ridge state, the memory's probe window -- is put back
    X, _ = load_wine(return_X_y=True)
    m = AutoCB(n_classes=3, rho0=0.1, rho1=0.1, seed=0)
    for i in range(300):
        m.learn(X[i % len(X)], m.act(X[i % len(X)]), 1)
    m.norm_stats_[1, 0] = np.finfo(float).max / 2  # column 0's sum of squared deviations
    x = X[5].copy()
    x[0] = m.norm_stats_[0, 0] + 1e154  # its squared deviation overflows the sum, nothing before it does
    idx, val, nnz = m._round_rows(x)
    assert m._round_writes(idx, val, nnz, 1) is not None  # the journaled path, not the full snapshot
    before, t = _arrays(m), m.t_
    with pytest.raises(NumericalError, match="non-finite"):
        m.learn(x, 1, 1)
    after = _arrays(m)
    assert m.t_ == t and all(after[k].tobytes() == before[k].tobytes() for k in before)


def test_an_overflowing_ridge_step_is_undone():
    # SquareCB: an inverse with +-1e200 on two diagonal entries that cancel in z'Pz for a row equal in them; the weights
    # are written finite, then the rank-one step u u' overflows -- both are put back
    X, _ = _wine()
    m = SquareCB(n_classes=3, rho0=0.1, rho1=0.1, seed=0)
    for i in range(50):
        m.learn(X[i], m.act(X[i]), 1)
    P = np.eye(m.P_.shape[1])
    P[0, 0] += 1e200
    P[1, 1] -= 1e200
    m.P_[1] = P
    x = np.full(X.shape[1], 1.0 / np.sqrt(X.shape[1]))
    assert m._round_writes(*m._round_rows(x), 1) is not None
    before = _arrays(m)
    with pytest.raises(NumericalError, match="non-finite"):
        m.learn(x, 1, 0)
    after = _arrays(m)
    assert all(after[k].tobytes() == before[k].tobytes() for k in before)
