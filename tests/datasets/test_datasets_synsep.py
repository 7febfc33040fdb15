"""SynSep / SynNonSep (docs/math.md, item 12): recipe, separability certificate, label noise, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from nolo.datasets import SynSepPrototypes, draw_synsep_prototypes, make_synnonsep, make_synsep, multiclass_margins
from nolo.exceptions import ParameterError

N = 20_000


@pytest.fixture(scope="module")
def synsep():
    return make_synsep(N, seed=2008, return_prototypes=True)


def test_shapes_types_binary(synsep):
    X, y, protos = synsep
    assert X.shape == (N, 400) and X.dtype == np.float64 and y.dtype == np.int64
    assert set(np.unique(X)) == {0.0, 1.0}
    assert protos.n_classes == 9 and set(np.unique(y)) == set(range(9))


def test_class_balance_within_4_standard_errors(synsep):
    _, y, _ = synsep
    counts = np.bincount(y, minlength=9)
    p = 1 / 9
    z = (counts - N * p) / np.sqrt(N * p * (1 - p))
    assert np.abs(z).max() <= 4, z


def test_prototypes_follow_the_recipe(synsep):
    _, _, protos = synsep
    for r in protos.rare_sets:
        assert 20 <= r.size <= 40 and r.min() >= 0 and r.max() < 120 and np.unique(r).size == r.size
    assert protos.is_separable()


def test_each_example_is_its_prototype_minus_5_plus_20_common(synsep):
    X, y, protos = synsep
    sizes = np.array([r.size for r in protos.rare_sets])
    rare_on = X[:, :120].sum(axis=1)
    np.testing.assert_array_equal(rare_on, sizes[y] - 5)
    np.testing.assert_array_equal(X[:, 120:].sum(axis=1), 20)
    for k, r in enumerate(protos.rare_sets):
        outside = np.setdiff1d(np.arange(120), r)
        assert not X[np.ix_(y == k, outside)].any()  # no rare word outside R_y
    nnz = (X != 0).sum(axis=1)
    assert 35 <= nnz.min() and nnz.max() <= 55  # docs/math.md, item 12: 36..55 observed with seed 2008


def test_dropped_and_common_words_are_uniform(synsep):
    X, y, protos = synsep
    r = protos.rare_sets[0]
    rows = X[np.ix_(y == 0, r)]
    p = 5 / r.size  # each prototype word is dropped with probability 5/|R_0|
    z = ((rows == 0).mean(axis=0) - p) / np.sqrt(p * (1 - p) / rows.shape[0])
    assert np.abs(z).max() <= 4, z
    q = 20 / 280
    zc = (X[:, 120:].mean(axis=0) - q) / np.sqrt(q * (1 - q) / N)
    assert np.abs(zc).max() <= 4.5, np.abs(zc).max()  # max over 280 coordinates


def test_certificate_separates_every_example(synsep):
    X, y, protos = synsep
    W = protos.certificate()
    assert W.shape == (9, 400)
    assert np.all(W[:, 120:] == 0)
    assert W[:, :120].min() == -(max(r.size for r in protos.rare_sets) + 1)
    margins = multiclass_margins(W, X, y)
    assert margins.min() > 0
    # the margin is at least 1 + the penalty for the rare words outside R_k (|R_y \ R_k| > 5)
    assert margins.min() >= -W.min()


def test_multiclass_margins_hand_case():
    W = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    X = np.array([[3.0, 1.0], [0.0, 1.0]])
    # row 0: scores 3, 2, 4 -> y=0 margin 3-4=-1 ; row 1: scores 0, 2, 1 -> y=1 margin 2-1=1
    np.testing.assert_allclose(multiclass_margins(W, X, [0, 1]), [-1.0, 1.0])


def test_deterministic_per_seed():
    a = make_synsep(500, seed=11)
    b = make_synsep(500, seed=11)
    c = make_synsep(500, seed=12)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    np.testing.assert_array_equal(make_synsep(50, g1)[0], make_synsep(50, g2)[0])


def test_separability_condition_and_resampling():
    r = (np.arange(10), np.arange(3, 13))  # |R_0 \ R_1| = 3 <= n_dropped 5
    bad = SynSepPrototypes(r, 20, 15, 5, 2)
    assert not bad.is_separable()
    assert SynSepPrototypes(r, 20, 15, 2, 2).is_separable()
    # a tight configuration where ~88% of draws fail: the returned prototypes still satisfy the condition
    tight = dict(n_classes=4, n_features=30, n_rare=20, prototype_size=(6, 9), n_dropped=3, n_common_on=2)
    for seed in range(20):
        assert draw_synsep_prototypes(seed, **tight).is_separable()
    X, y, p = make_synsep(300, 1, return_prototypes=True, **tight)
    assert multiclass_margins(p.certificate(), X, y).min() > 0


def test_impossible_recipe_is_a_parameter_error():
    with pytest.raises(ParameterError, match="could not draw separable SynSep prototypes"):
        draw_synsep_prototypes(0, n_rare=20, prototype_size=(20, 20), max_tries=5)
    with pytest.raises(ParameterError, match="n_dropped must be an integer >= 0 and <= 19"):
        draw_synsep_prototypes(0, n_dropped=20)
    with pytest.raises(ParameterError, match="n_samples must be an integer >= 1"):
        make_synsep(0, 1)


def test_synnonsep_label_noise():
    n = 10_000
    X, y, y_clean = make_synnonsep(n, seed=3, return_clean_labels=True)
    Xs, ys = make_synsep(n, seed=3)
    np.testing.assert_array_equal(X, Xs)
    np.testing.assert_array_equal(y_clean, ys)
    flipped = y != y_clean
    assert flipped.sum() == 500  # exactly 5% get a different label
    # the new label is uniform over the 8 other labels
    shift = (y[flipped] - y_clean[flipped]) % 9
    counts = np.bincount(shift, minlength=9)
    assert counts[0] == 0
    p = 1 / 8
    z = (counts[1:] - 500 * p) / np.sqrt(500 * p * (1 - p))
    assert np.abs(z).max() <= 4
    np.testing.assert_array_equal(make_synnonsep(300, seed=4, label_noise=0.0)[1], make_synsep(300, seed=4)[1])
    with pytest.raises(ParameterError, match="label_noise"):
        make_synnonsep(10, 1, label_noise=1.5)
