"""Unbiased gradient estimates of the squared loss from noisy data (CSS11 Lemmas 1-2, corrected).

The clean gradient of ``l(w) = (<w, x> - y)^2`` at ``w`` is ``2(<w, x> - y) x``.
From noisy views ``x~ = x + n^x``, ``y~ = y + n^y`` (zero-mean, independent):

* Setting 1, two copies (Lemma 1): ``2(<w, x~> - y~) x~'`` with ``x~'`` an
  independent second copy; unbiased for any zero-mean noise.  Its second
  moment is at most ``G1 = 8 (B_w^2 B_x^2 + B_y^2) B_x^2`` -- the paper's
  ``4(...)`` drops a cross term (docs/math.md, item 7, erratum E10).
* Setting 2, one copy and a known covariance ``Sigma`` (Lemma 2):
  ``2(<w, x~> - y~) x~ - 2 Sigma w``; the paper prints ``- Sigma w``, which
  leaves a bias ``+Sigma w`` (docs/math.md, item 6, erratum E9).  Second moment
  at most ``G2 = 16 B_w^2 B_x^4 + 16 B_y^2 B_x^2 + 8 B_Sigma^2 B_w^2``.
* The naive one-copy gradient ``2(<w, x~> - y~) x~`` has bias ``2 Sigma w``
  (the attenuation bias of errors-in-variables regression).

All functions accept one round (``x`` of shape ``(d,)``) or many
(``(n, d)`` rows, ``y`` of shape ``(n,)``) and return gradients of the same
leading shape; they are the reference the compiled loops are tested against.
"""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_scalar

__all__ = [
    "clean_gradient",
    "naive_gradient",
    "two_copy_gradient",
    "known_covariance_gradient",
    "setting1_G",
    "setting2_G",
    "theory_eta",
]


def _residual(w, x, y):
    return np.asarray(x, dtype=np.float64) @ np.asarray(w, dtype=np.float64) - np.asarray(y, dtype=np.float64)


def clean_gradient(w, x, y) -> np.ndarray:
    """``2(<w, x> - y) x``, the gradient of the squared loss on clean data."""
    r = _residual(w, x, y)
    return 2.0 * np.asarray(r)[..., None] * np.asarray(x, dtype=np.float64)


#: The naive estimate is the clean formula applied to one noisy copy (biased by ``2 Sigma w``).
naive_gradient = clean_gradient


def two_copy_gradient(w, x, x_prime, y) -> np.ndarray:
    """Setting 1 (CSS11 Lemma 1): ``2(<w, x~> - y~) x~'`` with ``x~'`` an independent copy."""
    r = _residual(w, x, y)
    return 2.0 * np.asarray(r)[..., None] * np.asarray(x_prime, dtype=np.float64)


def known_covariance_gradient(w, x, y, cov) -> np.ndarray:
    """Setting 2 (CSS11 Lemma 2, corrected E9): ``2(<w, x~> - y~) x~ - 2 Sigma w``.

    ``cov`` is the noise covariance: a ``(d,)`` vector of variances
    (diagonal) or a ``(d, d)`` matrix shared by all rows, or ``(n, d, d)``
    matrices, one per row.
    """
    w = np.asarray(w, dtype=np.float64)
    cov = np.asarray(cov, dtype=np.float64)
    g = clean_gradient(w, x, y)
    corr = cov * w if cov.ndim == 1 else cov @ w
    return g - 2.0 * corr


def setting1_G(radius: float, x_bound: float, y_bound: float) -> float:
    """``G = 8 (B_w^2 B_x^2 + B_y^2) B_x^2`` bounding ``E||grad~||^2`` in Setting 1 (erratum E10)."""
    Bw = check_scalar(radius, "radius", low=0.0, low_inclusive=False)
    Bx = check_scalar(x_bound, "x_bound", low=0.0, low_inclusive=False)
    By = check_scalar(y_bound, "y_bound", low=0.0)
    return 8.0 * (Bw * Bw * Bx * Bx + By * By) * Bx * Bx


def setting2_G(radius: float, x_bound: float, y_bound: float, sigma_bound: float) -> float:
    """``G = 16 B_w^2 B_x^4 + 16 B_y^2 B_x^2 + 8 B_Sigma^2 B_w^2`` bounding ``E||grad~||^2`` in Setting 2 (E9)."""
    Bw = check_scalar(radius, "radius", low=0.0, low_inclusive=False)
    Bx = check_scalar(x_bound, "x_bound", low=0.0, low_inclusive=False)
    By = check_scalar(y_bound, "y_bound", low=0.0)
    Bs = check_scalar(sigma_bound, "sigma_bound", low=0.0)
    return 16.0 * Bw**2 * Bx**4 + 16.0 * By**2 * Bx**2 + 8.0 * Bs**2 * Bw**2


def theory_eta(radius: float, G: float, horizon: int) -> float:
    """``eta = B_w / sqrt(G T)`` of Theorem 1 (and of Theorem 2 when G is known); regret <= ``B_w sqrt(G T)``."""
    return float(radius) / math.sqrt(float(G) * float(horizon))
