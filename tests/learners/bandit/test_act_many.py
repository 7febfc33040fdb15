"""``act_many``: a batch of arriving contexts acted on in one compiled call (the equality with ``act`` row by row, and
the rejection of bad batches with the state unchanged, are contract checks of every bandit learner: nolo.checks)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits

from nolo.exceptions import ParameterError
from nolo.learners.bandit import FastCB, default_learner
from nolo.checks import state_dump


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def test_batches_with_feedback_at_the_batch_end_learn(digits):
    """Contexts in batches of 100, bits flipped (0.1, 0.1) and learned only when the batch is done: the default
    learner's played labels err below 0.2 over rounds 3,001-4,000 (0.9 for a uniform policy)."""
    X, y = digits
    g = np.random.default_rng(0)
    learner = default_learner(10, 0.1, 0.1, seed=0)
    errors = []
    for _ in range(40):
        i = g.integers(len(X), size=100)
        a = learner.act_many(X[i])
        right = a == y[i]
        errors.append(1.0 - right.mean())
        bits = right.astype(np.int64) ^ (g.random(100) < 0.1)
        learner.learn_many(X[i], a, bits)
    assert np.mean(errors[30:]) < 0.2, errors
    assert np.mean(errors[:3]) > 0.5  # it did learn: the first batches are near uniform


def test_first_call_initializes_csr_equals_dense_and_an_empty_batch_changes_nothing(digits):
    X, y = digits
    a, b = FastCB(n_classes=10, seed=3), FastCB(n_classes=10, seed=3)
    la, pa = a.act_many(X[:30], return_probability=True)
    lb, pb = b.act_many(sp.csr_matrix(X[:30]), return_probability=True)
    assert a.n_features_in_ == 64 and la.dtype == np.int64 and la.shape == (30,)
    assert la.tolist() == lb.tolist() and pa.tobytes() == pb.tobytes()
    assert np.all((pa > 0) & (pa <= 1))
    before = state_dump(a)
    labels, probs = a.act_many(np.zeros((0, 64)), return_probability=True)
    assert labels.shape == (0,) and probs.shape == (0,) and state_dump(a) == before


def test_bad_batch_names_the_parameter(digits):
    X, _ = digits
    learner = FastCB(n_classes=10, seed=3)
    learner.act_many(X[:5])
    with pytest.raises(ParameterError, match="X"):
        learner.act_many(np.ones((2, 65)))
    with pytest.raises(ParameterError, match="return_probability"):
        learner.act_many(X[:2], return_probability=1)
