"""NystroemFeatures (Williams & Seeger 2001, truncated to kernel PCA on the landmarks): exact on the landmarks, the
Nyström formula K_nm K_mm^-1 K_mn, truncation error falling with the components, the median heuristic shared with
RandomFourierFeatures, seeds, dense and CSR input, chunking, errors that leave a fitted map as it was."""

import doctest

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits
from sklearn.metrics.pairwise import rbf_kernel

import nolo.kernels.nystroem as nystroem_module
from nolo.exceptions import NumericalError, ParameterError
from nolo.kernels import NystroemFeatures, RandomFourierFeatures


def _gauss(A, B, s2):
    """The exact Gaussian kernel matrix, by scikit-learn (gamma = 1 / (2 s^2))."""
    return rbf_kernel(A, B, gamma=1.0 / (2.0 * s2))


@pytest.fixture(scope="module")
def digits():
    return load_digits().data[:500]


def test_all_rows_and_all_components_reproduce_the_kernel_matrix():
    X = np.random.default_rng(0).normal(size=(60, 5))
    nys = NystroemFeatures(n_landmarks=60, n_components=60, bandwidth=3.0, normalize=False, seed=2).fit(X)
    assert nys.n_components_ == 60 and nys.landmarks_.shape == (60, 5) and nys.projection_.shape == (60, 60)
    F = nys.transform(X)
    assert np.allclose(F @ F.T, _gauss(X, X, 3.0), rtol=0.0, atol=1e-8)
    # the eigenvalues are K's, decreasing; projection_ = U / sqrt(lambda) with U orthonormal
    lam = np.linalg.eigvalsh(_gauss(X, X, 3.0))[::-1]
    assert np.allclose(nys.eigenvalues_, lam, rtol=1e-10, atol=1e-12)
    assert np.all(np.diff(nys.eigenvalues_) <= 0.0)
    U = nys.projection_ * np.sqrt(nys.eigenvalues_)
    assert np.allclose(U.T @ U, np.eye(60), atol=1e-8)


def test_untruncated_map_is_the_nystroem_formula_and_exact_on_the_landmarks():
    """With r = m < n: phi(X) phi(X)^T = K_nm K_mm^-1 K_mn (Williams & Seeger), and phi(z) . phi(z') = k(z, z')
    on the landmarks z, z'."""
    X = np.random.default_rng(1).normal(size=(120, 4))
    nys = NystroemFeatures(n_landmarks=25, n_components=25, bandwidth=2.0, normalize=False, seed=0).fit(X)
    Z = nys.landmarks_
    assert Z.shape == (25, 4) and Z.dtype == np.float64 and Z.flags.c_contiguous
    assert len({tuple(z) for z in Z}) == 25 and all((X == z).all(axis=1).any() for z in Z)  # distinct rows of X
    F = nys.transform(X)
    K_nm, K_mm = _gauss(X, Z, 2.0), _gauss(Z, Z, 2.0)
    assert np.allclose(F @ F.T, K_nm @ np.linalg.solve(K_mm, K_nm.T), atol=1e-8)
    FZ = nys.transform(Z)
    assert np.allclose(FZ @ FZ.T, K_mm, rtol=0.0, atol=1e-8)


def test_truncation_error_falls_with_the_components_and_rows_have_unit_norm(digits):
    X = digits
    errors = []
    for r in (10, 50, 200):
        nys = NystroemFeatures(n_landmarks=300, n_components=r, normalize=False, seed=0).fit(X)
        assert nys.n_components_ == r
        F = nys.transform(X)
        errors.append(np.linalg.norm(_gauss(X, X, nys.bandwidth_) - F @ F.T))
    assert errors[0] > errors[1] > errors[2], errors
    # measured (seed 0): relative errors 0.036, 0.0060, 0.0017; bars with room
    rel = np.array(errors) / np.linalg.norm(_gauss(X, X, nys.bandwidth_))
    assert rel[0] < 0.1 and rel[2] < 0.01, rel
    G = NystroemFeatures(n_landmarks=300, n_components=50, seed=0).fit_transform(X)
    assert G.shape == (500, 50) and G.dtype == np.float64 and G.flags.c_contiguous
    assert np.allclose(np.linalg.norm(G, axis=1), 1.0, rtol=0.0, atol=1e-12)


def test_rank_deficient_landmarks_drop_their_null_components():
    """Repeated rows make K_mm singular: the eigenvalues at rounding level are dropped, fewer components kept."""
    base = np.random.default_rng(4).normal(size=(5, 3))
    X = np.repeat(base, 4, axis=0)  # 20 rows, 5 distinct: K_mm has rank 5
    nys = NystroemFeatures(n_landmarks=20, n_components=20, bandwidth=1.0, normalize=False, seed=0).fit(X)
    assert nys.n_components_ == 5 and nys.projection_.shape == (20, 5) and nys.eigenvalues_.shape == (5,)
    F = nys.transform(X)
    assert F.shape == (20, 5) and np.all(np.isfinite(F))
    assert np.allclose(F @ F.T, _gauss(X, X, 1.0), atol=1e-8)


def test_median_heuristic_is_random_fourier_features_one():
    X = np.random.default_rng(5).normal(size=(80, 3))
    for seed in (0, 7):
        nys = NystroemFeatures(n_landmarks=10, n_components=4, n_pairs=300, seed=seed).fit(X)
        rff = RandomFourierFeatures(n_components=4, n_pairs=300, seed=seed).fit(X)
        assert nys.bandwidth_ == rff.bandwidth_
    by_hand = NystroemFeatures(n_landmarks=2, n_components=2, seed=3).fit(np.array([[0.0, 0.0], [3.0, 4.0]]))
    assert by_hand.bandwidth_ == 25.0  # the only pair of distinct rows


def test_dense_and_csr_input_agree_and_transform_is_chunked(monkeypatch):
    X = np.random.default_rng(1).random((70, 12))
    X[X < 0.6] = 0.0
    a = NystroemFeatures(n_landmarks=30, n_components=20, seed=5).fit(X)
    b = NystroemFeatures(n_landmarks=30, n_components=20, seed=5).fit(sp.csr_matrix(X))
    assert np.array_equal(a.landmarks_, b.landmarks_) and a.bandwidth_ == b.bandwidth_
    assert np.allclose(a.projection_, b.projection_, rtol=0.0, atol=1e-10)
    for nys in (a, b):
        Fd, Fs = nys.transform(X), nys.transform(sp.csr_matrix(X))
        assert Fs.flags.c_contiguous and Fs.dtype == np.float64 and Fs.shape == (70, 20)
        assert np.allclose(Fd, Fs, rtol=0.0, atol=1e-10)
    Fd = a.transform(X)
    assert np.allclose(a.transform(X[4]), Fd[4], rtol=0.0, atol=1e-12)  # one row, 1-D in, 1-D out
    monkeypatch.setattr(nystroem_module, "_CHUNK", 8)  # 70 rows in 9 chunks, the last one short
    assert np.allclose(a.transform(X), Fd, rtol=0.0, atol=1e-12)
    assert np.allclose(a.transform(sp.csr_matrix(X)), Fd, rtol=0.0, atol=1e-10)


def test_same_seed_same_map_other_seed_other_landmarks():
    X = np.random.default_rng(2).normal(size=(200, 6))
    kw = dict(n_landmarks=40, n_components=15)
    a, b = (NystroemFeatures(seed=11, **kw).fit(X) for _ in range(2))
    assert np.array_equal(a.landmarks_, b.landmarks_) and np.array_equal(a.projection_, b.projection_)
    assert np.array_equal(a.transform(X), b.transform(X))
    c = NystroemFeatures(seed=12, **kw).fit(X)
    assert not np.array_equal(a.landmarks_, c.landmarks_)
    g = np.random.default_rng(9)
    assert NystroemFeatures(seed=g, **kw).fit(X).landmarks_.shape == (40, 6)
    # more landmarks asked than rows: every row, once
    full = NystroemFeatures(n_landmarks=1000, n_components=500, bandwidth=1.0, seed=0).fit(X[:30])
    assert full.landmarks_.shape == (30, 6) and full.n_components_ == 30
    assert np.array_equal(full.landmarks_, X[:30])  # drawn, then kept in the rows' order


@pytest.mark.parametrize("kw, match", [
    (dict(n_landmarks=0), "n_landmarks"),
    (dict(n_landmarks=2.5), "n_landmarks"),
    (dict(n_components=0), "n_components"),
    (dict(n_components="ten"), "n_components"),
    (dict(bandwidth=-1.0), "bandwidth"),
    (dict(bandwidth=0.0), "bandwidth"),
    (dict(bandwidth="mean"), "bandwidth"),
    (dict(bandwidth=float("nan")), "bandwidth"),
    (dict(normalize="yes"), "normalize"),
    (dict(n_pairs=0), "n_pairs"),
    (dict(seed=-1), "seed"),
])
def test_bad_parameters_are_named(kw, match):
    with pytest.raises(ParameterError, match=match):
        NystroemFeatures(**kw).fit(np.eye(3))


def test_bad_input_is_refused_and_leaves_a_fitted_map_as_it_was():
    X = np.random.default_rng(2).normal(size=(10, 3))
    with pytest.raises(ParameterError, match="not fitted"):
        NystroemFeatures().transform(X)
    nys = NystroemFeatures(n_landmarks=6, n_components=4, seed=0).fit(X)
    before = (nys.landmarks_.copy(), nys.projection_.copy(), nys.eigenvalues_.copy(), nys.bandwidth_)
    bad = X.copy()
    bad[0, 0] = np.nan
    for args in ((bad,), (np.ones((3, 3, 3)),), (np.ones((1, 3)),), (np.ones((5, 3)),)):
        with pytest.raises(ParameterError, match="X|bandwidth"):
            nys.fit(*args)
    with pytest.raises(ParameterError, match="X must have 3 columns"):
        nys.transform(np.ones((2, 4)))
    with pytest.raises(ParameterError, match="X must contain only finite"):
        nys.transform(bad)
    with pytest.raises(ParameterError, match="X must contain only finite"):
        nys.transform(sp.csr_matrix(bad))
    with pytest.raises(ParameterError, match="X must have at least 1 row"):
        NystroemFeatures(bandwidth=1.0).fit(np.ones((0, 3)))
    assert np.array_equal(nys.landmarks_, before[0]) and np.array_equal(nys.projection_, before[1])
    assert np.array_equal(nys.eigenvalues_, before[2]) and nys.bandwidth_ == before[3]


def test_a_row_far_from_every_landmark_cannot_be_normalised():
    """k_m(x) underflows to 0 far from the landmarks: phi(x) = 0, which normalize=True refuses (naming the row)."""
    X = np.random.default_rng(3).normal(size=(20, 2))
    nys = NystroemFeatures(n_landmarks=10, n_components=5, bandwidth=1.0, seed=0).fit(X)
    far = np.vstack([X[:3], [[1e3, 1e3]]])
    with pytest.raises(NumericalError, match="row 3"):
        nys.transform(far)
    F = NystroemFeatures(n_landmarks=10, n_components=5, bandwidth=1.0, normalize=False, seed=0).fit(X).transform(far)
    assert np.array_equal(F[3], np.zeros(5)) and np.all(np.isfinite(F))


def test_docstring_examples_run():
    cls = NystroemFeatures
    assert "Parameters\n    ----------" in cls.__doc__ and "Examples\n    --------" in cls.__doc__
    res = doctest.testmod(nystroem_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.attempted >= 6 and res.failed == 0
    assert "Williams" in nystroem_module.__doc__ and "vs-peers" in nystroem_module.__doc__


def test_repr_round_trips():
    nys = NystroemFeatures(n_landmarks=7, n_components=3, bandwidth=2.0, normalize=False, n_pairs=9, seed=4)
    assert repr(nys) == ("NystroemFeatures(n_landmarks=7, n_components=3, bandwidth=2.0, normalize=False, "
                         "n_pairs=9, seed=4)")
