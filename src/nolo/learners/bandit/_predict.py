"""Compiled greedy prediction of the linear bandit learners: the score arithmetic of the stream loop."""

from __future__ import annotations

import numpy as np

from nolo._jit import njit
from nolo.learners.bandit._simd import argmax_padded, gather_dense, padded, scores_padded
from nolo.learners.bandit._stream import row_of

__all__ = ["predict_dense", "predict_csr", "decision_rows"]


@njit(cache=True, nogil=True)
def predict_dense(Wt, X, out):
    """Greedy labels argmax_k (W x)_k of every row, with the same score arithmetic as the learners."""
    idx = np.empty(X.shape[1], dtype=np.int64)
    val = np.empty(X.shape[1], dtype=X.dtype)
    Wp, sp = padded(Wt)
    for i in range(X.shape[0]):
        nnz = gather_dense(X, i, idx, val)
        scores_padded(Wp, idx, val, 0, nnz, sp)
        out[i] = argmax_padded(sp, Wt.shape[1])


@njit(cache=True, nogil=True)
def predict_csr(Wt, indptr, indices, data, out):
    """:func:`predict_dense` for the rows of a CSR matrix with sorted indices and no explicit zeros."""
    Wp, sp = padded(Wt)
    for i in range(indptr.shape[0] - 1):
        scores_padded(Wp, indices, data, indptr[i], indptr[i + 1], sp)
        out[i] = argmax_padded(sp, Wt.shape[1])


@njit(cache=True, nogil=True)
def decision_rows(Wt, rows, R):
    """R[i, k] = (W x_i)_k + Wt[d, k] for weights ``Wt`` (d + 1, K) on [x, 1] and the rows (d coordinates) of a
    :class:`._stream.DenseRows`/``CsrRows``: the stream loop's scores plus the bias row, added as SquareCB's
    ``adjust`` adds it (its predictions, the same bits)."""
    Wp, sp = padded(Wt)
    K = Wt.shape[1]
    d = Wt.shape[0] - 1
    for i in range(R.shape[0]):
        idx, val, lo, hi = row_of(rows, i)
        scores_padded(Wp, idx, val, lo, hi, sp)
        for k in range(K):
            R[i, k] = sp[k] + Wp[d, k]
