"""The bandit suite (nolo.datasets.bandit_suite): shapes, dtypes, determinism, sparse form, the promised properties."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from nolo.datasets import DATASET_OPTIONS, REGISTRY, SUITE, dataset_names, load_dataset, normalize_rows, suite_info
from nolo.datasets.bandit_suite import DEFAULT_SEED, column_scale_spread
from nolo.datasets.registry import BuiltinDataset
from nolo.exceptions import ParameterError

#: name -> (n, d, K, sparse) of the defaults
EXPECTED = {
    "wine": (178, 13, 3, False),
    "breast-cancer": (569, 30, 2, False),
    "mixed-scales": (5000, 23, 5, False),
    "many-classes": (10_000, 40, 50, False),
    "rings": (5000, 10, 3, False),
    "moons": (4000, 8, 2, False),
    "imbalanced": (8000, 30, 6, False),
    "text": (10_000, 20_000, 20, True),
    "categorical": (20_000, 1488, 4, True),
}
REAL = ("wine", "breast-cancer")
GENERATED = tuple(n for n in EXPECTED if n not in REAL)

_CACHE: dict[str, tuple] = {}


def raw(name):
    """The default build, loaded once per test session (the tests must not modify it)."""
    if name not in _CACHE:
        _CACHE[name] = load_dataset(name, normalize=None)
    return _CACHE[name]


def same(a, b) -> bool:
    if sp.issparse(a) or sp.issparse(b):
        return (sp.issparse(a) and sp.issparse(b) and a.shape == b.shape
                and np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
                and np.array_equal(a.data, b.data))
    return a.shape == b.shape and np.array_equal(a, b)


def test_suite_is_registered_in_order():
    assert SUITE == tuple(EXPECTED)
    names = dataset_names()
    assert [n for n in names if n in EXPECTED] == list(SUITE)
    for name in SUITE:
        assert isinstance(REGISTRY[name], BuiltinDataset)
    for name in GENERATED:
        assert DATASET_OPTIONS[name]["seed"] == DEFAULT_SEED == 2026
        assert DATASET_OPTIONS[name]["n_samples"] == EXPECTED[name][0]
    for name in REAL:
        assert name not in DATASET_OPTIONS


@pytest.mark.parametrize("name", SUITE)
def test_shape_dtypes_classes(name):
    n, d, K, sparse = EXPECTED[name]
    X, y = raw(name)
    assert X.shape == (n, d) and y.shape == (n,)
    assert X.dtype == np.float64 and y.dtype == np.int64
    assert np.array_equal(np.unique(y), np.arange(K))  # every class present, labels 0..K-1
    if sparse:
        assert isinstance(X, sp.csr_matrix)
        assert X.has_sorted_indices and X.has_canonical_format
        assert np.all(X.data != 0)  # no explicitly stored zero
        assert np.all(np.isfinite(X.data))
    else:
        assert isinstance(X, np.ndarray) and np.all(np.isfinite(X))


@pytest.mark.parametrize("name", SUITE)
def test_defaults_are_deterministic(name):
    X, y = raw(name)
    X2, y2 = load_dataset(name, normalize=None)
    assert same(X, X2) and np.array_equal(y, y2)


@pytest.mark.parametrize("name", GENERATED)
def test_seed_option(name):
    X, y = raw(name)
    Xs, ys = load_dataset(name, normalize=None, seed=DEFAULT_SEED)
    assert same(X, Xs) and np.array_equal(y, ys)
    X1, y1 = load_dataset(name, normalize=None, seed=1)
    X1b, y1b = load_dataset(name, normalize=None, seed=1)
    assert same(X1, X1b) and np.array_equal(y1, y1b)
    assert X1.shape == X.shape
    assert not same(X, X1) and not np.array_equal(y, y1)


@pytest.mark.parametrize("name", GENERATED)
def test_n_samples_option(name):
    n, d, K, _ = EXPECTED[name]
    m = max(20 * K, 500)
    X, y = load_dataset(name, normalize=None, n_samples=m, seed=3)
    assert X.shape == (m, d) and np.array_equal(np.unique(y), np.arange(K))


def test_raw_scales_of_the_real_sets():
    X, y = raw("wine")
    assert X.max(axis=0).max() > 1000 and X.max(axis=0).min() < 1  # proline ~1680, nonflavanoid phenols < 1
    X, y = raw("breast-cancer")
    assert np.array_equal(np.bincount(y), [212, 357])
    assert X.max() > 3000 and X[:, X.max(axis=0) < 0.1].size > 0


@pytest.mark.parametrize("seed", [DEFAULT_SEED, 1, 7])
def test_mixed_scales_columns(seed):
    X, _ = load_dataset("mixed-scales", normalize=None, seed=seed)
    const = np.flatnonzero(X.max(axis=0) == X.min(axis=0))
    assert const.tolist() == [22]
    sd = np.delete(X, const, axis=1).std(axis=0)
    assert np.log10(sd.max() / sd.min()) >= 6.0
    assert column_scale_spread(X) >= 6.0
    # exactly two duplicated pairs: the appended columns 20 and 21 are copies of two distinct earlier columns
    pairs = [(j, k) for j in range(23) for k in range(j + 1, 23) if np.array_equal(X[:, j], X[:, k])]
    assert len(pairs) == 2 and sorted(k for _, k in pairs) == [20, 21] and pairs[0][0] != pairs[1][0]


def test_many_classes_and_imbalanced_class_shares():
    _, y = raw("many-classes")
    shares = np.bincount(y) / y.size
    assert shares.size == 50 and shares.min() > 0.015
    _, y = raw("imbalanced")
    shares = np.bincount(y) / y.size
    assert 0.45 < shares[0] < 0.55 and 0.01 < shares[-1] < 0.03
    assert np.all(np.diff(shares) < 0)


def test_offsets_put_columns_off_centre():
    X, _ = raw("many-classes")
    off = np.abs(X.mean(axis=0)) / X.std(axis=0)
    assert (off > 0.9).sum() >= 15  # 20 columns shifted by 1..10^4 of their spread
    X, _ = raw("moons")
    off = np.abs(X.mean(axis=0)) / X.std(axis=0)
    assert np.all(off[:2] > 1) and np.all(off[2:] < 0.2)


def test_text_corpus():
    X, y = raw("text")
    assert X.shape[1] == 20_000
    lengths = np.asarray(X.sum(axis=1)).ravel()
    assert 75 < lengths.mean() < 85 and lengths.min() >= 20  # 20 + Poisson(60) words
    nnz = np.diff(X.indptr)
    assert 50 <= nnz.mean() <= 80
    assert np.array_equal(X.data, np.round(X.data)) and X.data.min() >= 1  # raw counts
    counts = np.bincount(y)
    assert counts[0] == counts.max() and counts[0] > 5 * counts[-1]  # Zipf priors: 1/(k+1)


def test_categorical_one_hot():
    X, y = raw("categorical")
    assert np.all(np.diff(X.indptr) == 8) and np.all(X.data == 1.0)
    blocks = np.concatenate([[0], np.cumsum([3, 5, 10, 20, 50, 100, 300, 1000])])
    cols = X.indices.reshape(-1, 8)
    for a in range(8):  # one level of each attribute per row
        assert np.all((cols[:, a] >= blocks[a]) & (cols[:, a] < blocks[a + 1]))
    # popular levels repeat: many rows share their exact context
    _, counts = np.unique(cols, axis=0, return_counts=True)
    assert counts.max() > 10 and (counts[counts > 1].sum() / X.shape[0]) > 0.1


def test_normalize_unit_dense_and_sparse():
    for name in ("wine", "text", "categorical"):
        X, y = load_dataset(name)  # normalize="unit" is the default
        Xr, yr = raw(name)
        assert np.array_equal(y, yr)
        if sp.issparse(X):
            assert isinstance(X, sp.csr_matrix) and X.has_canonical_format and np.all(X.data != 0)
            norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
            assert np.array_equal(X.indices, Xr.indices) and np.array_equal(X.indptr, Xr.indptr)
        else:
            norms = np.linalg.norm(X, axis=1)
        np.testing.assert_allclose(norms, 1.0)


def test_normalize_rows_sparse_edge_cases():
    # an empty row (also the last one), duplicates, a COO input
    coo = sp.coo_matrix(([1.0, 2.0, 4.0, 0.0], ([0, 0, 0, 2], [1, 1, 2, 0])), shape=(4, 3))
    X = normalize_rows(coo)
    assert isinstance(X, sp.csr_matrix) and X.dtype == np.float64
    np.testing.assert_allclose(X.toarray(), [[0, 0.6, 0.8], [0, 0, 0], [0, 0, 0], [0, 0, 0]])
    csr = sp.csr_matrix(np.array([[1.0, 2.0], [0.0, 0.0]]))
    out = normalize_rows(csr)  # copy=True: the input is untouched
    assert out is not csr and np.array_equal(csr.toarray(), [[1, 2], [0, 0]])
    assert normalize_rows(csr, None).toarray().tolist() == [[1, 2], [0, 0]]
    normalize_rows(csr, copy=False)  # in place
    np.testing.assert_allclose(csr.toarray(), [[1 / 5**0.5, 2 / 5**0.5], [0, 0]])
    with pytest.raises(ParameterError, match="finite"):
        normalize_rows(sp.csr_matrix(np.array([[np.nan, 1.0]])))


@pytest.mark.parametrize(
    ("name", "options", "match"),
    [
        ("mixed-scales", {"seed": "x"}, "seed"),
        ("text", {"seed": -1}, "seed"),
        ("categorical", {"seed": 1.5}, "seed"),
        ("rings", {"bogus": 1}, "bogus.*'rings'.*n_samples, seed"),
        ("wine", {"seed": 1}, "unknown option.*seed.*'wine'.*none"),
        ("moons", {"n_samples": 0}, "n_samples"),
        ("many-classes", {"n_samples": 49}, "n_samples must be an integer >= 50"),
        ("imbalanced", {"n_samples": "100"}, "n_samples"),
        ("imbalanced", {"n_samples": 20}, "n_samples=20 is too small.*'imbalanced'.*class"),
    ],
)
def test_bad_options(name, options, match):
    with pytest.raises(ParameterError, match=match):
        load_dataset(name, **options)


def test_builtin_split_only_all():
    with pytest.raises(ParameterError, match="split"):
        load_dataset("moons", "train")


def test_suite_info_table():
    rows = suite_info()
    assert len(rows) == len(SUITE) and [r["name"] for r in rows] == list(SUITE)
    keys = {"name", "n", "d", "K", "sparse", "nnz_per_row", "min_class_share", "max_class_share",
            "log10_scale_ratio", "boundary", "source"}
    for r in rows:
        assert set(r) == keys
        n, d, K, sparse = EXPECTED[r["name"]]
        assert (r["n"], r["d"], r["K"], r["sparse"]) == (n, d, K, sparse)
        assert 0 < r["min_class_share"] <= 1 / K <= r["max_class_share"] < 1
        assert 0 < r["nnz_per_row"] <= d
        assert r["boundary"] in ("linear-ish", "nonlinear", "real")
        assert isinstance(r["source"], str) and r["source"]
    info = {r["name"]: r for r in rows}
    assert info["mixed-scales"]["log10_scale_ratio"] >= 6
    assert info["categorical"]["nnz_per_row"] == 8
    assert 50 <= info["text"]["nnz_per_row"] <= 80
    assert info["wine"]["boundary"] == info["breast-cancer"]["boundary"] == "real"
    assert min(r["d"] for r in rows) == 8 and max(r["d"] for r in rows) == 20_000
    assert {r["K"] for r in rows} >= {2, 50}
