"""Sparse matrices assembled from raw arrays, the way a caller (or a broken reader) can build them without scipy's
full check: a column index past the last column or negative, an ``indptr`` that decreases, is too short or does not
end at the number of stored entries, a NaN value.  Every entry point of every registered linear bandit learner that
takes a sparse X must refuse each with a ParameterError naming X and leave the learner as it was; before the check
the compiled loops indexed with these arrays unchecked (an index of 10**6 segfaulted ``predict``, a negative one
made ``run_stream`` write into another column)."""

from __future__ import annotations

import copy
import functools

import numpy as np
import pytest
import scipy.sparse as sp

from nolo.checks import _build, _Game, registered_learners, state_dump, test_params
from nolo.exceptions import ParameterError
from nolo.learners.bandit._linear import LinearMulticlassMixin
from nolo.learners.bandit.simulator import ClassificationBandit, run_stream

LEARNERS = [c for c in registered_learners() if issubclass(c, LinearMulticlassMixin)]
D = 4


def _csr(data, indices, indptr, shape=(3, D)):
    """A CSR matrix holding exactly these arrays (scipy's constructor would refuse some of them)."""
    X = sp.csr_matrix(np.eye(*shape))
    X.data, X.indices, X.indptr = np.asarray(data), np.asarray(indices), np.asarray(indptr)
    return X


CASES = {
    "column index past the last column": lambda: _csr([1.0, 1.0, 1.0], [0, 10**6, 2], [0, 1, 2, 3]),
    "column index just past the last column": lambda: _csr([1.0, 1.0, 1.0], [0, D, 2], [0, 1, 2, 3]),
    "negative column index": lambda: _csr([1.0, 1.0, 1.0], [0, -3, 2], [0, 1, 2, 3]),
    "decreasing indptr": lambda: _csr([1.0, 1.0, 1.0], [0, 1, 2], [0, 2, 1, 3]),
    "indptr one entry short": lambda: _csr([1.0, 1.0, 1.0], [0, 1, 2], [0, 1, 3]),
    "indptr ending past the stored entries": lambda: _csr([1.0, 1.0, 1.0], [0, 1, 2], [0, 1, 2, 10**6]),
    "indptr ending before the stored entries": lambda: _csr([1.0, 1.0, 1.0], [0, 1, 2], [0, 1, 2, 2]),
    "NaN value": lambda: _csr([1.0, np.nan, 1.0], [0, 1, 2], [0, 1, 2, 3]),
    "CSC row index past the last row": lambda: _csc_bad(),
    "COO column index past the last column": lambda: _coo_bad(),
}


def _csc_bad():
    X = sp.csc_matrix(np.eye(3, D))
    X.indices = np.array([0, 1, 10**6], dtype=X.indices.dtype)
    return X


def _coo_bad():
    X = sp.coo_matrix(np.eye(3, D))
    X.col = np.array([0, 1, 10**6], dtype=X.col.dtype)
    return X


def _raw(X) -> list[np.ndarray]:
    return [X.data, X.row, X.col] if X.format == "coo" else [X.data, X.indices, X.indptr]


@functools.cache
def _played(cls):
    learner = _build(cls, test_params(cls)[0])
    _Game(learner, n_features=D, n_rounds=10).play(learner, 0, 6)
    return learner


def _entry_points(learner):
    """(name, call) for every entry point of ``learner`` that takes a sparse X."""
    n_classes = int(learner.n_classes)
    out = [("predict", learner.predict), ("decision_function", learner.decision_function),
           ("run_stream", lambda X: run_stream(learner, X, np.arange(X.shape[0]) % n_classes, 5, seed=1))]
    if not isinstance(learner, LinearMulticlassMixin) or hasattr(learner, "act"):
        out.append(("action_probabilities", learner.action_probabilities))
    if hasattr(learner, "learn_many"):
        out.append(("learn_many", lambda X: learner.learn_many(X, np.zeros(X.shape[0], dtype=np.int64),
                                                                np.ones(X.shape[0], dtype=np.int64))))
    return out


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("cls", LEARNERS, ids=lambda c: c.__name__)
def test_crafted_csr_is_refused_naming_x_and_state_is_unchanged(cls, case):
    learner = copy.deepcopy(_played(cls))
    before = state_dump(learner)
    for name, call in _entry_points(learner):
        X = CASES[case]()
        arrays = [a.copy() for a in _raw(X)]
        try:
            call(X)
        except NotImplementedError:  # a learner that names no propensities (action_probabilities)
            continue
        except ParameterError as exc:
            assert str(exc).startswith("X "), f"{name}: {exc}"
        else:
            pytest.fail(f"{cls.__name__}.{name} accepted a sparse X with a {case}")
        assert state_dump(learner) == before, f"{cls.__name__}.{name} changed the learner's state"
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(arrays, _raw(X))), "the caller's X was modified"


def test_an_unfitted_learner_stays_unfitted_after_a_crafted_learn_many():
    from nolo.learners.bandit import SquareCB

    learner = SquareCB(n_classes=3, seed=1)
    with pytest.raises(ParameterError, match=r"^X .*column indices in \[0, 4\)"):
        learner.learn_many(CASES["column index past the last column"](), [0, 1, 2], [1, 0, 1])
    assert not learner.is_initialized


def test_the_environment_refuses_a_crafted_csr_before_any_round():
    with pytest.raises(ParameterError, match=r"^X .*non-decreasing indptr"):
        ClassificationBandit(CASES["decreasing indptr"](), [0, 1, 0])


def test_the_issue_reproducer_raises_instead_of_segfaulting():
    from nolo.learners.bandit import Banditron

    b = Banditron(n_classes=3, seed=1)
    b.learn(np.ones(4), 0, 1)
    X = sp.csr_matrix((np.ones(1), np.array([10**6]), np.array([0, 1])), shape=(1, 4))
    with pytest.raises(ParameterError, match=r"column indices in \[0, 4\), got indices from 1000000 to 1000000"):
        b.predict(X)


def test_the_random_feature_map_refuses_a_crafted_csr():
    from nolo.kernels.random_features import RandomFourierFeatures

    rff = RandomFourierFeatures(n_components=8, bandwidth=1.0, seed=0).fit(np.eye(3, D))
    with pytest.raises(ParameterError, match=r"^X .*column indices"):
        rff.transform(CASES["column index past the last column"]())


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "bsr", "lil", "dok", "dia"])
def test_well_formed_matrices_of_every_format_pass_unchanged(fmt):
    """The check refuses only broken arrays: every scipy format of a valid matrix converts to the same CSR."""
    from nolo._validation import check_sparse

    dense = np.array([[0.0, 2.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, -1.0, 0.0], [0.0, 5.0, 0.0, 0.0]])
    X = sp.csr_matrix(dense).asformat(fmt)
    assert np.array_equal(check_sparse(X).toarray(), dense)
    unsorted = _csr([1.0, 2.0, 3.0], [3, 0, 1], [0, 2, 2, 3], shape=(3, D))  # unsorted but in range: fine
    assert np.array_equal(check_sparse(unsorted).toarray(), unsorted.toarray())
