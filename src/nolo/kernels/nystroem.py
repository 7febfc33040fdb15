"""Truncated Nyström features of the Gaussian kernel (Williams & Seeger, *Using the Nyström method to speed up
kernel machines*, NIPS 2001): an explicit map phi with phi(x) . phi(x') ~ exp(-||x - x'||^2 / (2 s^2)).

The map is kernel PCA on m landmark rows: the kernel matrix K_mm of the landmarks is eigendecomposed,
K_mm = U Lambda U^T, and x is sent to its coordinates on the top r eigenvectors,
phi(x) = k_m(x) U_r Lambda_r^{-1/2}, where k_m(x) = (k(x, z_1), ..., k(x, z_m)).  Then
phi(x) . phi(x') = k_m(x) U_r Lambda_r^{-1} U_r^T k_m(x'): the paper's Nyström approximation
K~ = K_nm K_mm^{-1} K_mn restricted to the r leading components; with r = m it is exact on the landmarks.
Unlike random Fourier features (:mod:`nolo.kernels.random_features`) the map adapts to the data, so few
components carry most of the kernel.  In nolo it is the input of nolo's nonparametric flip-aware bandit learner in
``nolo reproduce am --only vs-peers``.
"""

from __future__ import annotations

import numpy as np

from nolo._threads import one_blas_thread
from nolo._validation import check_bool, check_int, check_seed
from nolo.exceptions import NumericalError, ParameterError
from nolo.kernels.random_features import _check_bandwidth, _fit_bandwidth, _input_rows, _rows
from nolo.random import spawn

__all__ = ["NystroemFeatures"]

#: rows transformed at a time: memory of ``transform`` is O(_CHUNK * m) besides its output
_CHUNK = 2048
#: eigenvalues of K_mm at or below this fraction of the largest are dropped (their directions are rounding noise)
_RTOL = 1e-10


def _eigh_one_thread(K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.linalg.eigh(K)`` with BLAS on one thread.  Its tridiagonal reduction is m matrix-vector products, each
    a thread synchronisation when threaded: on a loaded 2-core machine m = 1000 took 0.7-3.9 s threaded against
    0.31 s on one thread, and the threaded result's last bits depend on the thread count."""
    with one_blas_thread():
        return np.linalg.eigh(K)


def _sq_norms(A) -> np.ndarray:
    """||a_i||^2 of each row of a dense array or a CSR matrix."""
    if hasattr(A, "toarray"):
        return np.asarray(A.multiply(A).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", A, A)


def _gaussian_block(A, Z: np.ndarray, z_sq: np.ndarray, s2: float) -> np.ndarray:
    """exp(-||a_i - z_j||^2 / (2 s2)) for the rows a_i of ``A`` (dense or CSR) and z_j of ``Z`` (dense), with
    ``z_sq`` = ||z_j||^2; the squared distances ||a||^2 + ||z||^2 - 2 a.z are clipped at 0 (rounding)."""
    G = np.asarray(A @ Z.T, dtype=np.float64)
    G *= -2.0
    G += _sq_norms(A)[:, None]
    G += z_sq[None, :]
    np.maximum(G, 0.0, out=G)
    G *= -1.0 / (2.0 * s2)
    return np.exp(G, out=G)


class NystroemFeatures:
    """Truncated Nyström features of the Gaussian kernel k(x, x') = exp(-||x - x'||^2 / (2 s^2)) (Williams &
    Seeger, NIPS 2001): kernel PCA on m landmark rows.

    ``fit`` draws m = min(``n_landmarks``, n) distinct rows of X uniformly without replacement from ``seed``,
    eigendecomposes their kernel matrix K_mm = U Lambda U^T and keeps the r = min(``n_components``, m) largest
    eigenpairs, less any eigenvalue <= 1e-10 times the largest (so r may come out smaller: ``n_components_``);
    ``transform(x) = k_m(x) U_r Lambda_r^{-1/2}`` with k_m(x) = (k(x, z_1), ..., k(x, z_m)), so that
    phi(x) . phi(x') = k_m(x) U_r Lambda_r^{-1} U_r^T k_m(x') approximates k(x, x'), exactly on the landmarks when
    r = m.  With ``normalize=True`` (the default) each row is then scaled to unit norm, the scale nolo's bandit
    learners are tuned at (their inputs are unit-norm rows).  Each eigenvector's sign is fixed (its entry of
    largest magnitude is positive), so the map does not depend on the LAPACK build's sign choice.

    Parameters
    ----------
    n_landmarks : int >= 1
        m, the rows of the fitting data the map is built on (all of them if there are fewer).  Memory of the
        map: m (d + r) floats; ``fit`` costs O(m^2 d + m^3), ``transform`` O(n m (d + r)).
    n_components : int >= 1
        r, the number of leading kernel principal components kept (at most m).
    bandwidth : "median" or float > 0
        s^2 (as in :class:`~nolo.kernels.RandomFourierFeatures`): "median" sets it to the median squared distance
        between random pairs of the rows given to ``fit`` (:func:`~nolo.kernels.median_sq_distance`; it reads
        only the inputs, never labels); a number fixes it.
    normalize : bool
        Scale each transformed row to unit Euclidean norm.
    n_pairs : int >= 1
        Pairs of rows the median heuristic reads.
    seed : None, int, SeedSequence or Generator
        The draw of the landmarks and, independently, of the median heuristic's pairs.

    Attributes (after ``fit``): ``landmarks_`` (m x d), ``bandwidth_`` (s^2), ``eigenvalues_`` (r,), decreasing,
    ``projection_`` (m x r) = U_r Lambda_r^{-1/2}, ``n_components_`` (r), ``n_features_in_``.

    Examples
    --------
    With every row a landmark and every component kept, the map reproduces the kernel matrix:

    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(40, 3))
    >>> nys = NystroemFeatures(n_landmarks=40, n_components=40, bandwidth=2.0, normalize=False, seed=1)
    >>> F = nys.fit_transform(X)
    >>> F.shape
    (40, 40)
    >>> K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / (2 * 2.0))
    >>> bool(np.abs(F @ F.T - K).max() < 1e-8)
    True

    Truncated, on the median heuristic's bandwidth, with unit-norm rows:

    >>> G = NystroemFeatures(n_landmarks=30, n_components=5, seed=1).fit(X).transform(X[:4])
    >>> G.shape
    (4, 5)
    >>> np.round(np.linalg.norm(G, axis=1), 12).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """

    def __init__(self, n_landmarks: int = 1000, n_components: int = 50, bandwidth="median", normalize: bool = True,
                 n_pairs: int = 2000, seed=0):
        self.n_landmarks = n_landmarks
        self.n_components = n_components
        self.bandwidth = bandwidth
        self.normalize = normalize
        self.n_pairs = n_pairs
        self.seed = seed

    def _check_params(self) -> tuple[int, int, object, int]:
        m = check_int(self.n_landmarks, "n_landmarks", low=1)
        r = check_int(self.n_components, "n_components", low=1)
        bw = _check_bandwidth(self.bandwidth)
        check_bool(self.normalize, "normalize")
        check_seed(self.seed)
        return m, r, bw, check_int(self.n_pairs, "n_pairs", low=1)

    def fit(self, X, y=None) -> "NystroemFeatures":
        """Draw the landmarks from X's rows, set s^2 (from X's rows with bandwidth="median") and eigendecompose
        the landmarks' kernel matrix.  ``y`` is ignored (scikit-learn's transformer signature)."""
        m, r, bw, n_pairs = self._check_params()
        X = _rows(X, "X")
        rng_pairs, rng_landmarks = spawn(self.seed, 2)
        bw = _fit_bandwidth(bw, X, n_pairs, rng_pairs)
        n = X.shape[0]
        if n < 1:
            raise ParameterError("X must have at least 1 row to draw landmarks from, got 0")
        m = min(m, n)
        idx = np.sort(rng_landmarks.choice(n, size=m, replace=False))
        Z = X[idx]
        Z = np.ascontiguousarray(Z.toarray() if hasattr(Z, "toarray") else Z, dtype=np.float64)
        z_sq = _sq_norms(Z)
        lam, U = _eigh_one_thread(_gaussian_block(Z, Z, z_sq, bw))
        lam, U = lam[::-1], U[:, ::-1]  # decreasing
        r = min(r, m)
        r = int(np.count_nonzero(lam[:r] > _RTOL * lam[0]))
        lam, U = lam[:r], U[:, :r]
        U = U * np.where(U[np.abs(U).argmax(axis=0), np.arange(r)] < 0.0, -1.0, 1.0)
        self.landmarks_ = Z
        self._landmark_sq = z_sq
        self.bandwidth_ = float(bw)
        self.eigenvalues_ = np.ascontiguousarray(lam)
        self.projection_ = np.ascontiguousarray(U / np.sqrt(lam))
        self.n_components_ = r
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X) -> np.ndarray:
        """phi of each row of ``X`` (2-D array or CSR matrix) as a dense C-contiguous float64 array (n, r), computed
        ``_CHUNK`` rows at a time; a 1-D ``x`` gives phi(x) of shape (r,)."""
        X, one = _input_rows(self, X, hasattr(self, "projection_"))
        n = X.shape[0]
        F = np.empty((n, self.n_components_), dtype=np.float64)
        for start in range(0, n, _CHUNK):
            stop = min(start + _CHUNK, n)
            K = _gaussian_block(X[start:stop], self.landmarks_, self._landmark_sq, self.bandwidth_)
            np.matmul(K, self.projection_, out=F[start:stop])
        if self.normalize:
            norms = np.sqrt(np.einsum("ij,ij->i", F, F))
            bad = np.flatnonzero(~(np.isfinite(norms) & (norms > 0.0)))
            if bad.size:
                raise NumericalError(f"NystroemFeatures: transformed row {int(bad[0])} has norm {norms[bad[0]]} "
                                     "and cannot be scaled to unit norm (is it far from every landmark at this "
                                     "bandwidth?); use normalize=False or a larger bandwidth")
            F /= norms[:, None]
        return F[0] if one else F

    def fit_transform(self, X, y=None) -> np.ndarray:
        return self.fit(X).transform(X)

    def __repr__(self) -> str:
        return (f"NystroemFeatures(n_landmarks={self.n_landmarks!r}, n_components={self.n_components!r}, "
                f"bandwidth={self.bandwidth!r}, normalize={self.normalize!r}, n_pairs={self.n_pairs!r}, "
                f"seed={self.seed!r})")
