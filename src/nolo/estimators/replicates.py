"""Unbiased moment estimates from ``m`` repeated readings of one item ("use every reading").

Each item ``x`` (clean, unseen) is read ``m`` times: ``x_k = x + n_k`` with
independent zero-mean noise ``n_k`` of covariance ``Sigma`` (the same law for
every reading of the item).  With ``S = sum_k x_k`` and ``x_bar = S / m``:

* :func:`pairwise_outer` -- the U-statistic over distinct pairs,
  ``(1/(m(m-1))) sum_{k != l} x_k x_l^T = (S S^T - sum_k x_k x_k^T) / (m(m-1))``,
  unbiased for ``x x^T`` without knowing ``Sigma`` (``m >= 2``); ``O(m d^2)``.
  Equivalently ``x_bar x_bar^T - W / m`` with ``W`` the within-item sample
  covariance of the readings, which is how it is computed here (no cancellation
  between two large sums).
* :func:`pairwise_outer_matvec` -- ``U w`` for a vector ``w`` in ``O(m d)``
  (the form the CSS11 gradient needs: ``grad = 2 (U w - x_bar y)``).
* :func:`mean_cross` -- ``x_bar y``, unbiased for ``x y`` when ``y``'s noise is
  independent of the readings' (any ``m >= 1``).
* :func:`mean_noise_covariance` -- ``Sigma / m``, the covariance of ``x_bar``:
  ``x_bar x_bar^T - Sigma / m`` is unbiased for ``x x^T`` when ``Sigma`` is known.

For ``m = 2`` the U-statistic is the symmetrised two-copy product
``(x_1 x_2^T + x_2 x_1^T) / 2`` of CSS11 Lemma 1.  Its variance falls like
``1/m`` for large ``m`` (the ``Sigma Sigma`` term like ``1/m^2``); the measured
figures are in ``docs/eiv.md``.  All functions are pure and accept one item
``(m, d)`` or a batch ``(n, m, d)`` (returning one estimate per item).
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_array, check_int
from nolo.exceptions import ParameterError

__all__ = ["pairwise_outer", "pairwise_outer_matvec", "mean_cross", "mean_noise_covariance"]


def _readings(X, min_m: int) -> np.ndarray:
    arr = check_array(X, "X", ndim=(2, 3))
    if arr.shape[-2] < min_m:
        raise ParameterError(
            f"X must hold at least {min_m} reading(s) per item (shape (m, d) or (n, m, d)), got shape {arr.shape}"
        )
    if arr.shape[-1] == 0:
        raise ParameterError(f"X must have d >= 1 coordinates, got shape {arr.shape}")
    return arr


def pairwise_outer(X) -> np.ndarray:
    """``mean_{k != l} x_k x_l^T``: unbiased for ``x x^T`` from ``m >= 2`` readings (``(d, d)`` or ``(n, d, d)``)."""
    arr = _readings(X, 2)
    m = arr.shape[-2]
    xbar = arr.mean(axis=-2)
    D = arr - xbar[..., None, :]
    W = np.einsum("...ki,...kj->...ij", D, D) / (m * (m - 1))  # within-item covariance / m
    return np.einsum("...i,...j->...ij", xbar, xbar) - W


def pairwise_outer_matvec(X, w) -> np.ndarray:
    """``pairwise_outer(X) @ w`` in ``O(m d)``: ``(S (S.w) - sum_k x_k (x_k.w)) / (m(m-1))``."""
    arr = _readings(X, 2)
    wv = check_array(w, "w", shape=(arr.shape[-1],))
    m = arr.shape[-2]
    S = arr.sum(axis=-2)
    proj = arr @ wv  # (..., m)
    own = np.einsum("...k,...ki->...i", proj, arr)
    return (S * (S @ wv)[..., None] - own) / (m * (m - 1))


def mean_cross(X, y) -> np.ndarray:
    """``x_bar y``: unbiased for ``x y`` (``(d,)`` for one item and scalar ``y``, ``(n, d)`` for a batch)."""
    arr = _readings(X, 1)
    xbar = arr.mean(axis=-2)
    if arr.ndim == 2:
        yv = check_array(y, "y", ndim=0)
        return xbar * float(yv)
    yv = check_array(y, "y", shape=(arr.shape[0],))
    return xbar * yv[:, None]


def mean_noise_covariance(noise_cov, m) -> np.ndarray:
    """``Sigma / m``: the noise covariance of the mean of ``m`` independent readings (``noise_cov`` a (d, d) matrix)."""
    S = check_array(noise_cov, "noise_cov", ndim=2)
    if S.shape[0] != S.shape[1]:
        raise ParameterError(f"noise_cov must be a square (d, d) matrix, got shape {S.shape}")
    return S / check_int(m, "m", low=1)
