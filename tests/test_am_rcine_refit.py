"""RCINE's incremental refits: the first NREst fit trains max_iter epochs, warm refits warm_refit_epochs."""

import numpy as np
import pytest

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
