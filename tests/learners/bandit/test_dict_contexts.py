"""Contexts as dicts, one at a time, with late feedback; a single sparse row to act/learn."""

import hashlib
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits

from nolo.exceptions import ParameterError
from nolo.learners.bandit import Banditron, FastCB, default_learner
from nolo.learners.bandit.dict_features import DictContexts, hash_features


def test_hashing_is_the_same_in_every_process_and_categories_are_one_hot():
    x = {"age": 31.0, "country": "fr", "device": "mobile", "clicks": 0, "missing": None}
    v = hash_features(x, 64)
    code = ("from nolo.learners.bandit.dict_features import hash_features; "
            "print(list(hash_features({'age': 31.0, 'country': 'fr', 'device': 'mobile'}, 64)))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert np.array_equal(v, np.array(eval(other.strip())))  # no per-process salt
    assert np.count_nonzero(v) <= 3 and np.isclose(np.abs(v).sum(), 31.0 + 1.0 + 1.0)  # zero and None are absent
    a, b = hash_features({"country": "fr"}, 2**20), hash_features({"country": "de"}, 2**20)
    assert np.abs(a).sum() == 1.0 and np.abs(b).sum() == 1.0 and not np.array_equal(np.abs(a), np.abs(b))
    with pytest.raises(ParameterError, match="'age' must be finite"):
        hash_features({"age": float("nan")}, 8)
    for not_a_dict in ([1, 2], 7):
        with pytest.raises(ParameterError, match="must be a dict"):
            hash_features(not_a_dict, 8)
        with pytest.raises(ParameterError, match="must be a dict"):
            hash_features(not_a_dict, 2**20)
    # the wide vector (built from its touched columns only) against the definition, a signed sum per bucket
    y = {"a": 1.5, "b": -2.0, "c": "x", "d": 4.0, "e": 0.25}
    for n in (8, 2**20):  # the narrow and the wide path
        ref = np.zeros(n)
        for name, value in [("a", 1.5), ("b", -2.0), ("c=x", 1.0), ("d", 4.0), ("e", 0.25)]:
            h = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8, key=b"nolo-features").digest(), "little")
            ref[(h >> 1) % n] += value if h & 1 else -value
        assert np.array_equal(hash_features(y, n), ref)
    # every kind of number the same way: plain floats and ints (the fast path), NumPy scalars, booleans as one-hot
    assert np.array_equal(hash_features({"a": 2, "b": 0.5}, 64), hash_features({"a": np.int64(2), "b": np.float32(0.5)}, 64))
    assert np.array_equal(hash_features({"on": True}, 64), hash_features({"on": "True"}, 64))
    for bad in (float("inf"), -float("inf"), 10 ** 400, np.float64("nan")):
        with pytest.raises(ParameterError, match="'n' must be finite"):
            hash_features({"n": bad}, 8)


def test_a_vocabulary_fixes_the_columns_and_counts_unknown_names():
    bandit = DictContexts(FastCB(n_classes=2, seed=0), vocabulary=["age", "country=fr", "country=de"])
    np.testing.assert_array_equal(bandit.vector({"age": 2.0, "country": "de", "zip": "75001"}), [2.0, 0.0, 1.0])
    assert bandit.unknown_ == 1
    # a refused dict counts nothing, even when an unknown name comes before the bad value
    with pytest.raises(ParameterError, match="'age' must be finite"):
        bandit.vector({"zip": "75001", "age": float("nan")})
    assert bandit.unknown_ == 1


def test_a_single_sparse_row_acts_and_learns_as_its_dense_twin():
    dense = np.array([0.0, 1.5, 0.0, -2.0])
    twins = [FastCB(n_classes=3, rho0=0.1, rho1=0.1, seed=4) for _ in range(2)]
    for t in range(20):
        for m, x in zip(twins, (dense, sp.csr_matrix(dense[None, :]))):
            a = m.act(x)
            m.learn(x, a, int(a == t % 3))
    np.testing.assert_array_equal(twins[0].W_, twins[1].W_)
    with pytest.raises(ParameterError, match="one row of shape"):
        twins[1].act(sp.csr_matrix(np.ones((2, 4))))


def _digits_dicts():
    X, y = load_digits(return_X_y=True)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    return [{f"px{j}": float(v) for j, v in enumerate(row) if v} for row in X], y


@pytest.mark.parametrize("delay", [0, 300])
def test_late_feedback_teaches_a_regression_learner_what_immediate_feedback_does(delay):
    dicts, y = _digits_dicts()
    rng = np.random.default_rng(0)
    bandit = DictContexts(default_learner(10, rho0=0.1, rho1=0.1, seed=1), n_features=256)
    pending, mistakes, T = [], 0, 4000
    for t in range(T):
        i = int(rng.integers(len(y)))
        label, p = bandit.act_one(dicts[i])
        mistakes += label != y[i]
        u = rng.random()
        bit = int(u >= 0.1) if label == y[i] else int(u < 0.1)
        pending.append((dicts[i], label, bit))
        while len(pending) > delay:  # the bit of the round played `delay` rounds ago arrives now
            bandit.learn_one(*pending.pop(0))
    held = rng.integers(len(y), size=500)
    err = np.mean([bandit.predict_one(dicts[i]) != y[i] for i in held])
    assert err < 0.2, (delay, err)


def test_learners_biased_by_a_delay_are_refused_unless_feedback_is_immediate():
    with pytest.raises(ParameterError, match="late bit biases it"):
        DictContexts(Banditron(n_classes=3))
    DictContexts(Banditron(n_classes=3), allow_delay=False).learn_one({"a": 1.0}, 0, 1)
    with pytest.raises(ParameterError, match="nolo bandit learner"):
        DictContexts(object())
