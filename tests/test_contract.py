"""The learner contract: parameters, validation leaving state unchanged, persistence format."""

import json

import numpy as np
import pytest

from nolo import ParameterError, PersistenceError
from nolo._config import Configurable
from nolo.learners.base import FullInformationLearner, Learner


class _Toy(FullInformationLearner):
    """A minimal full-information learner: w += eta * (y - <w,x>) x with a random jitter."""

    def __init__(self, eta=0.1, jitter=0.0, seed=None):
        self.eta = eta
        self.jitter = jitter
        self.seed = seed

    def _validate_params(self):
        if not (isinstance(self.eta, (int, float)) and self.eta > 0):
            raise ParameterError(f"eta must be a real number > 0, got {self.eta!r}")

    def _init_state(self, d):
        self.w_ = np.zeros(d)

    def learn(self, x, y):
        x = self._check_x(x)
        self._ensure_initialized(x.shape[0])
        self.w_ = self.w_ + self.eta * (y - self.w_ @ x) * x + self.jitter * self.rng_.standard_normal(x.shape[0])
        self.t_ += 1
        return self

    def predict(self, X):
        self._require_initialized()
        return self._check_X(X) @ self.w_


def test_params_roundtrip_and_rejection_keeps_old_value():
    m = _Toy(eta=0.5)
    assert m.get_params() == {"eta": 0.5, "jitter": 0.0, "seed": None}
    with pytest.raises(ValueError, match="eta"):
        m.set_params(eta=-1)
    assert m.eta == 0.5
    cfg = m.to_config()
    assert Configurable.from_config(json.loads(json.dumps(cfg))).get_params() == m.get_params()


def test_bad_input_leaves_state_unchanged():
    m = _Toy(seed=1).learn([1.0, 2.0], 1.0)
    w = m.w_.copy()
    for bad in ([1.0, np.nan], [1.0, 2.0, 3.0], "abc"):
        with pytest.raises(ValueError):
            m.learn(bad, 1.0)
    np.testing.assert_array_equal(m.w_, w)
    assert m.t_ == 1


def test_predict_before_learning_is_a_clear_error():
    with pytest.raises(ValueError, match="learn"):
        _Toy().predict([[1.0]])


def test_save_load_resume_equals_uninterrupted(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 3)), rng.standard_normal(40)
    a = _Toy(eta=0.05, jitter=0.01, seed=7)
    b = _Toy(eta=0.05, jitter=0.01, seed=7)
    for t in range(20):
        a.learn(X[t], y[t])
        b.learn(X[t], y[t])
    path = b.save(tmp_path / "toy")
    assert path.suffix == ".npz"
    c = Learner.load(path)
    assert type(c) is _Toy and c.get_params() == b.get_params()
    for t in range(20, 40):
        a.learn(X[t], y[t])
        c.learn(X[t], y[t])
    np.testing.assert_array_equal(a.predict(X), c.predict(X))


def test_load_rejects_foreign_files(tmp_path):
    p = tmp_path / "x.npz"
    np.savez(p, a=np.zeros(2))
    with pytest.raises(PersistenceError, match="not a nolo file"):
        Learner.load(p)
    with pytest.raises(PersistenceError, match="no saved learner"):
        Learner.load(tmp_path / "missing.npz")
