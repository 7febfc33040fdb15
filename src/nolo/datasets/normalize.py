"""Row normalisation as in AM (instances scaled to ||x||_2 = 1, so ||x|| <= 1 holds), dense or CSR."""

from __future__ import annotations

import sys

import numpy as np

from nolo._validation import check_array, check_choice
from nolo.datasets._checks import check_flag, check_real
from nolo.exceptions import ParameterError

__all__ = ["NORMALIZATIONS", "normalize_rows"]

#: allowed values of the ``normalize`` argument
NORMALIZATIONS = ("unit", None)


def normalize_rows(X, normalize: str | None = "unit", *, copy: bool = True):
    """Return ``X`` as float64 with every nonzero row scaled to unit l2 norm.

    ``normalize=None`` returns the float64 array unchanged.  All-zero rows stay
    zero (their norm is 0 and they already satisfy ||x|| <= 1).  With
    ``copy=False`` a float64 input is scaled in place (saves memory on large sets).

    A SciPy sparse matrix is returned as a float64 :class:`scipy.sparse.csr_matrix`
    (other sparse formats are converted) with its stored values scaled row by
    row; the sparsity pattern is kept (a CSR in canonical form stays canonical).
    """
    check_choice(normalize, "normalize", NORMALIZATIONS)
    copy = check_flag(copy, "copy")
    if _is_sparse(X):
        return _normalize_sparse_rows(check_real(X, "X"), normalize, copy)
    X = check_array(check_real(X, "X"), "X", ndim=2, copy=copy)
    if normalize == "unit":
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))  # no n x d temporary
        scale = np.divide(1.0, norms, out=np.ones_like(norms), where=norms > 0)
        X *= scale[:, None]
    return X


def _is_sparse(X) -> bool:
    """Whether ``X`` is a SciPy sparse matrix or array (without importing SciPy when nothing has)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(X)


def _normalize_sparse_rows(X, normalize, copy: bool):
    from scipy.sparse import csr_matrix

    if X.ndim != 2:
        raise ParameterError(f"X must be 2-dimensional, got a sparse array of shape {X.shape}")
    X = csr_matrix(X, dtype=np.float64, copy=copy)
    if not X.has_canonical_format:
        X.sum_duplicates()  # sorts the indices too; the norms below need one stored value per entry
    if not np.all(np.isfinite(X.data)):
        raise ParameterError("X must contain only finite values (no NaN or inf)")
    if normalize == "unit":
        counts = np.diff(X.indptr)
        rows = np.repeat(np.arange(X.shape[0]), counts)
        norms = np.sqrt(np.bincount(rows, weights=X.data**2, minlength=X.shape[0]))
        scale = np.divide(1.0, norms, out=np.ones_like(norms), where=norms > 0)
        X.data *= np.repeat(scale, counts)
    return X
