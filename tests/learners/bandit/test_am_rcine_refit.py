"""RCINE's incremental refits: the first NREst fit trains max_iter epochs, warm refits warm_refit_epochs."""

import numpy as np
import pytest

from nolo.exceptions import ParameterError
from nolo.learners.bandit import RCINE, run_stream
from nolo.noise_rates import NREst

EPOCHS: list[int] = []


class _RecordingNREst(NREst):
    def fit(self, X, played, feedback, n_classes=None, init_weights=None):
        EPOCHS.append((int(self.max_iter), init_weights is not None))
        return super().fit(X, played, feedback, n_classes=n_classes, init_weights=init_weights)


def _data(seed=0, n=300, d=6, K=3):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((K, d))
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.argmax(X @ W.T, axis=1)


@pytest.mark.parametrize("warm, expected", [(2, [(4, False), (2, True), (2, True)]),
                                            (None, [(4, False), (4, True), (4, True)])])
def test_warm_refits_train_fewer_epochs(warm, expected):
    X, y = _data()
    EPOCHS.clear()
    est = _RecordingNREst(hidden_layer_sizes=(4,), max_iter=4, warm_start=True)
    m = RCINE(n_classes=3, gamma=0.2, refit_every=200, reservoir_size=100, estimator=est,
              warm_refit_epochs=warm, seed=0)
    run_stream(m, X, y, 600, 0.1, 0.1, seed=1)
    assert EPOCHS == expected
    assert m.estimates_.shape == (3, 2)


def test_warm_refit_epochs_validated():
    with pytest.raises(ValueError, match="warm_refit_epochs must be an integer >= 1"):
        RCINE(n_classes=3, warm_refit_epochs=0).initialize(4)


def test_reservoir_row_copies_match_fancy_indexing():
    import scipy.sparse as sp

    from nolo.learners.bandit.rcine import copy_csr_rows, copy_dense_rows

    rng = np.random.default_rng(3)
    X = rng.random((40, 9)) * (rng.random((40, 9)) < 0.3)
    rows = rng.integers(40, size=12)
    slots = rng.permutation(15)[:12]
    for src, copy in ((sp.csr_matrix(X), lambda out: copy_csr_rows(C.indptr, C.indices, C.data, rows, slots, out)),
                      (X, lambda out: copy_dense_rows(X, rows, slots, out))):
        C = src
        out = np.full((15, 9), 7.0)  # stale contents must be overwritten, untouched slots kept
        copy(out)
        want = np.full((15, 9), 7.0)
        want[slots] = X[rows]
        np.testing.assert_array_equal(out, want)


def test_csr_and_dense_streams_give_identical_refits():
    """The reservoir filled from CSR rows (copy_csr_rows) equals the one filled from dense rows."""
    X, y = _data(n=400)
    X[np.abs(X) < 0.3] = 0.0
    runs = []
    for rep in ("dense", "csr"):
        m = RCINE(n_classes=3, gamma=0.2, refit_every=200, reservoir_size=100,
                  estimator=NREst(hidden_layer_sizes=(4,), max_iter=3, warm_start=True), seed=0)
        run_stream(m, X, y, 800, 0.1, 0.1, seed=1, representation=rep)
        runs.append(m)
    np.testing.assert_array_equal(runs[0].res_X_, runs[1].res_X_)
    np.testing.assert_array_equal(runs[0].estimates_, runs[1].estimates_)


def test_numpy_engine_refits_match_sklearn_engine():
    """RCINE with the default NumPy MLP engine refits to the estimates scikit-learn's MLPClassifier gives (cold
    refits: the sklearn engine cannot load the previous block's saved weights, so RCINE refuses it warm-started;
    the warm starts of the two engines are compared in tests/noise_rates/test_am_nrest_engine.py)."""
    X, y = _data(n=400, d=20)
    est = {}
    for engine in ("numpy", "sklearn"):
        m = RCINE(n_classes=3, gamma=0.2, refit_every=300, reservoir_size=200, seed=0,
                  estimator=NREst(hidden_layer_sizes=(8,), max_iter=3, warm_start=False, engine=engine))
        run_stream(m, X, y, 1500, 0.2, 0.1, seed=1)
        est[engine] = m.estimates_
    assert est["numpy"].shape == (5, 2)
    np.testing.assert_allclose(est["numpy"], est["sklearn"], atol=1e-6)
    warm = RCINE(n_classes=3, estimator=NREst(warm_start=True, engine="sklearn"))
    with pytest.raises(ParameterError, match=r"estimator: .*engine='sklearn'.*engine='numpy'"):
        run_stream(warm, X, y, 100, seed=1)
