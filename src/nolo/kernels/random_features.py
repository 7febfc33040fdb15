"""Random Fourier features of the Gaussian kernel (Rahimi & Recht, *Random Features for Large-Scale Kernel
Machines*, NIPS 2007, Algorithm 1): an explicit map phi with E[phi(x) . phi(x')] = exp(-||x - x'||^2 / (2 s^2)).

A linear learner on phi(x) is a kernel learner at the cost of a linear one in D = ``n_components`` dimensions.
In nolo it is what lets the flip-aware bandit learners (LinUCB, FastCB on the FD-SON sketch) fit a nonlinear
reward on image data; ``nolo reproduce am --only vs-peers`` runs them on the features of this map
(docs/squarecb.md#random-features), and Vowpal Wabbit on the same features beside them.
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_array, check_int, check_scalar, check_seed, check_sparse
from nolo.exceptions import NumericalError, ParameterError
from nolo.random import as_generator, spawn

__all__ = ["RandomFourierFeatures", "median_sq_distance"]


def median_sq_distance(X, n_pairs: int = 2000, seed=0) -> float:
    """The median of ||x_i - x_j||^2 over ``n_pairs`` random pairs of distinct rows of ``X`` (the median heuristic
    for the Gaussian kernel's bandwidth; only the rows, no labels).

    >>> median_sq_distance(np.array([[0.0], [1.0], [3.0]]), n_pairs=2000, seed=0) in (1.0, 4.0, 9.0)
    True
    """
    X = _rows(X, "X")
    n = X.shape[0]
    if n < 2:
        raise ParameterError(f"X must have at least 2 rows for the median heuristic, got {n}")
    n_pairs = check_int(n_pairs, "n_pairs", low=1)
    rng = as_generator(seed)
    i = rng.integers(0, n, n_pairs)
    j = (i + rng.integers(1, n, n_pairs)) % n  # j != i
    diff = X[i] - X[j]
    if hasattr(diff, "toarray"):
        diff = diff.toarray()
    return float(np.median(np.einsum("ij,ij->i", diff, diff)))


def _rows(X, name: str):
    """``X`` as a 2-D float64 array or a CSR matrix with finite entries and indices in range (:func:`check_sparse`)."""
    import scipy.sparse as sp

    if sp.issparse(X):
        return check_sparse(X, name, np.float64)
    return check_array(X, name, ndim=2)


def _check_bandwidth(bandwidth):
    """The ``bandwidth`` parameter of a Gaussian kernel's feature map: ``"median"`` or s^2 as a float > 0."""
    if isinstance(bandwidth, str):
        if bandwidth != "median":
            raise ParameterError(f"bandwidth must be 'median' or a real number > 0, got {bandwidth!r}")
        return "median"
    return check_scalar(bandwidth, "bandwidth", low=0.0, low_inclusive=False)


def _fit_bandwidth(bw, X, n_pairs: int, rng) -> float:
    """s^2 for the rows ``X``: ``bw`` as given, or with ``"median"`` the median heuristic (:func:`median_sq_distance`
    over ``n_pairs`` pairs drawn by ``rng``), refusing rows that do not differ."""
    if bw != "median":
        return float(bw)
    bw = median_sq_distance(X, n_pairs, rng)
    if not bw > 0.0:
        raise ParameterError("bandwidth='median' needs rows that differ: the median squared distance "
                             "between random pairs of X's rows is 0; pass bandwidth as a number")
    return bw


def _input_rows(feature_map, X, fitted: bool):
    """``(rows, one)``: the rows of ``X`` a fitted ``feature_map`` is to transform (2-D array or CSR matrix of the
    width ``fit`` saw; a 1-D ``x`` is one row, ``one`` True)."""
    if not fitted:
        raise ParameterError(f"this {type(feature_map).__name__} is not fitted yet: call fit(X) first")
    one = not hasattr(X, "toarray") and np.ndim(X) == 1
    X = _rows(np.atleast_2d(X) if one else X, "X")
    if X.shape[1] != feature_map.n_features_in_:
        raise ParameterError(f"X must have {feature_map.n_features_in_} columns (the width fit saw), got {X.shape[1]}")
    return X, one


class RandomFourierFeatures:
    """Random Fourier features of the Gaussian kernel k(x, x') = exp(-||x - x'||^2 / (2 s^2)) (Rahimi & Recht,
    NIPS 2007, Algorithm 1).

    ``fit`` draws omega_1..omega_D ~ N(0, I / s^2) and b_1..b_D ~ U[0, 2 pi) from ``seed``;
    ``transform(x) = sqrt(2 / D) cos(Omega^T x + b)`` (D = ``n_components``), so that
    E[phi(x) . phi(x')] = k(x, x') over the draws.  With ``normalize=True`` (the default) each row is then
    scaled to unit norm, the scale nolo's bandit learners are tuned at (their inputs are unit-norm rows); the
    kernel approximated is then k(x, x') / sqrt(k_D(x, x) k_D(x', x')), which tends to k as D grows.

    Parameters
    ----------
    n_components : int >= 1
        D, the number of features.  Memory of the map: D (d + 1) floats.
    bandwidth : "median" or float > 0
        s^2: "median" sets it to the median squared distance between random pairs of the rows given to ``fit``
        (:func:`median_sq_distance`; it reads only the inputs, never labels); a number fixes it.
    normalize : bool
        Scale each transformed row to unit Euclidean norm.
    n_pairs : int >= 1
        Pairs of rows the median heuristic reads.
    seed : None, int, SeedSequence or Generator
        The draws of the map and of the median heuristic's pairs.

    Attributes (after ``fit``): ``bandwidth_`` (s^2), ``omega_`` (d x D), ``offset_`` (D,), ``n_features_in_``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(200, 5))
    >>> rff = RandomFourierFeatures(n_components=2000, bandwidth=4.0, normalize=False, seed=1).fit(X)
    >>> F = rff.transform(X[:2])
    >>> F.shape
    (2, 2000)
    >>> exact = np.exp(-np.sum((X[0] - X[1]) ** 2) / (2 * 4.0))
    >>> bool(abs(F[0] @ F[1] - exact) < 0.05)
    True
    """

    def __init__(self, n_components: int = 1000, bandwidth="median", normalize: bool = True, n_pairs: int = 2000,
                 seed=None):
        self.n_components = n_components
        self.bandwidth = bandwidth
        self.normalize = normalize
        self.n_pairs = n_pairs
        self.seed = seed

    def _check_params(self) -> tuple[int, object, bool, int]:
        D = check_int(self.n_components, "n_components", low=1)
        bw = _check_bandwidth(self.bandwidth)
        if not isinstance(self.normalize, (bool, np.bool_)):
            raise ParameterError(f"normalize must be True or False, got {self.normalize!r}")
        check_seed(self.seed)
        return D, bw, bool(self.normalize), check_int(self.n_pairs, "n_pairs", low=1)

    def fit(self, X, y=None) -> "RandomFourierFeatures":
        """Draw the map for inputs of X's width (and, with bandwidth="median", set s^2 from X's rows).
        ``y`` is ignored (scikit-learn's transformer signature)."""
        D, bw, _, n_pairs = self._check_params()
        X = _rows(X, "X")
        rng_pairs, rng_map = spawn(self.seed, 2)
        bw = _fit_bandwidth(bw, X, n_pairs, rng_pairs)
        d = X.shape[1]
        self.omega_ = rng_map.normal(size=(d, D)) / np.sqrt(bw)
        self.offset_ = rng_map.uniform(0.0, 2.0 * np.pi, size=D)
        self.bandwidth_ = float(bw)
        self.n_features_in_ = d
        return self

    def transform(self, X) -> np.ndarray:
        """phi of each row of ``X`` (2-D array or CSR matrix) as a dense C-contiguous float64 array (n, D); a 1-D
        ``x`` gives phi(x) of shape (D,)."""
        X, one = _input_rows(self, X, hasattr(self, "omega_"))
        F = np.asarray(X @ self.omega_)
        F += self.offset_
        np.cos(F, out=F)
        if self.normalize:
            norms = np.sqrt(np.einsum("ij,ij->i", F, F))
            if not np.all(norms > 0.0):
                raise NumericalError("RandomFourierFeatures: a transformed row has zero norm and cannot be scaled "
                                     "to unit norm; use normalize=False or more components")
            F /= norms[:, None]
        else:
            F *= np.sqrt(2.0 / self.omega_.shape[1])
        F = np.ascontiguousarray(F)
        return F[0] if one else F

    def fit_transform(self, X, y=None) -> np.ndarray:
        return self.fit(X).transform(X)

    def __repr__(self) -> str:
        return (f"RandomFourierFeatures(n_components={self.n_components!r}, bandwidth={self.bandwidth!r}, "
                f"normalize={self.normalize!r}, n_pairs={self.n_pairs!r}, seed={self.seed!r})")

