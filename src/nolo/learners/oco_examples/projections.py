"""Euclidean projections and proximal maps the OCO notes' examples need (beyond ``nolo.oco.projections``).

(Math only: these belong in :mod:`nolo.oco.projections`; they live here until the
``oco`` package is reshaped -- see the H6 report.)

* :func:`project_l1_ball` -- onto ``{w : ||w||_1 <= r}``, exact, ``O(d log d)``:
  Duchi, Shalev-Shwartz, Singer & Chandra, "Efficient projections onto the
  l1-ball for learning in high dimensions", ICML 2008, Figure 1 (sort-based);
* :func:`project_simplex` -- onto ``{w >= 0 : sum w = z}`` (same paper, Figure 1);
* :func:`soft_threshold` -- ``S_lam(v) = sign(v) max(|v| - lam, 0)``, the proximal
  map of ``lam ||.||_1`` (the lasso's composite step);
* :func:`project_trace_norm_ball` -- onto ``{W : ||W||_* <= tau}``: a thin SVD
  ``W = U diag(s) V^T`` and the L1-ball projection of the singular values
  (they are >= 0, so it is their projection onto the capped simplex
  ``{s >= 0, sum s <= tau}``); exact, one ``O(M N min(M, N))`` SVD;
* :func:`project_max_entry` -- onto the max-entry box ``{W : |W_ij| <= c}`` (a clip);
* :class:`L1Ball` -- the L1 ball as a :class:`nolo.oco.ConstraintSet`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from nolo._validation import check_array, check_scalar
from nolo.exceptions import NumericalError
from nolo.oco.projections import ConstraintSet

__all__ = [
    "L1Ball",
    "project_l1_ball",
    "project_simplex",
    "soft_threshold",
    "project_trace_norm_ball",
    "project_max_entry",
    "l1_threshold",
]


@njit(cache=True)
def l1_threshold(a, z):
    """The ``theta >= 0`` with ``sum_j max(a_j - theta, 0) = z`` for ``a >= 0`` with ``sum a > z > 0``.

    Duchi et al. (2008), Figure 1: sort ``mu = sort(a)`` decreasingly,
    ``rho = max{j : mu_j - (sum_{r<=j} mu_r - z)/j > 0}``,
    ``theta = (sum_{r<=rho} mu_r - z)/rho``.  ``O(d log d)``.
    """
    mu = np.sort(a)[::-1]
    css = 0.0
    theta = 0.0
    for j in range(mu.shape[0]):
        css += mu[j]
        t = (css - z) / (j + 1)
        if mu[j] - t > 0.0:
            theta = t
    return theta


@njit(cache=True)
def _project_l1_inplace(w, radius):
    """Project ``w`` onto the L1 ball of the given radius, in place."""
    d = w.shape[0]
    s = 0.0
    for j in range(d):
        s += abs(w[j])
    if s <= radius:
        return
    a = np.empty(d)
    for j in range(d):
        a[j] = abs(w[j])
    theta = l1_threshold(a, radius)
    for j in range(d):
        v = a[j] - theta
        w[j] = math.copysign(v, w[j]) if v > 0.0 else 0.0


def _vector(v, name):
    return np.array(check_array(v, name, ndim=1), dtype=np.float64, copy=True)


def project_l1_ball(v, radius: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{w : ||w||_1 <= radius}`` (Duchi et al. 2008, Fig. 1).

    ``w = sign(v) max(|v| - theta, 0)`` with the ``theta`` of :func:`l1_threshold`
    (``theta = 0`` when ``v`` is already inside).

    Examples
    --------
    >>> project_l1_ball([3.0, -1.0, 0.5], 2.0).tolist()
    [2.0, 0.0, 0.0]
    >>> project_l1_ball([0.5, -0.25], 1.0).tolist()
    [0.5, -0.25]
    """
    radius = check_scalar(radius, "radius", low=0.0, low_inclusive=False)
    w = _vector(v, "v")
    _project_l1_inplace(w, radius)
    return w


def project_simplex(v, z: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``v`` onto the simplex ``{w >= 0 : sum_j w_j = z}`` (Duchi et al. 2008, Fig. 1).

    Examples
    --------
    >>> project_simplex([0.5, 0.5, 2.0], 1.0).tolist()
    [0.0, 0.0, 1.0]
    """
    z = check_scalar(z, "z", low=0.0, low_inclusive=False)
    v = _vector(v, "v")
    # shift so that every coordinate is positive: the simplex projection is shift-equivariant
    # (adding c to v adds nothing to the result: w = max(v - theta, 0) with theta absorbing c)
    shift = z - float(v.min()) if float(v.min()) < z else 0.0
    a = v + shift
    if a.sum() <= z:  # cannot happen after the shift unless d == 1; handle exactly
        return np.full(v.shape, z / v.shape[0]) if v.shape[0] > 1 else np.array([z])
    theta = l1_threshold(a, z)
    return np.maximum(a - theta, 0.0)


def soft_threshold(v, lam: float) -> np.ndarray:
    """``sign(v) max(|v| - lam, 0)``: the proximal map of ``lam ||.||_1`` (the lasso's shrinkage).

    Examples
    --------
    >>> soft_threshold([1.5, -0.2, -3.0], 0.5).tolist()
    [1.0, -0.0, -2.5]
    """
    lam = check_scalar(lam, "lam", low=0.0)
    v = _vector(v, "v")
    return np.sign(v) * np.maximum(np.abs(v) - lam, 0.0)


def project_trace_norm_ball(W, tau: float, *, return_rank: bool = False):
    """Euclidean (Frobenius) projection of the matrix ``W`` onto ``{X : ||X||_* <= tau}``.

    With the thin SVD ``W = U diag(s) V^T``, the projection is
    ``U diag(s') V^T`` where ``s'`` is the projection of ``s`` onto the L1 ball
    of radius ``tau`` (``s >= 0``, so ``s' = max(s - theta, 0)``): the trace
    norm is unitarily invariant, so the problem reduces to the singular values
    (e.g. Cai, Candes & Shen 2010 for the soft-thresholding form).  Costs one
    full SVD, ``O(M N min(M, N))``.  ``return_rank=True`` also returns the
    number of nonzero singular values kept.

    Examples
    --------
    >>> W = np.diag([3.0, 1.0])
    >>> project_trace_norm_ball(W, 2.0).round(12).tolist()
    [[2.0, 0.0], [0.0, 0.0]]
    """
    tau = check_scalar(tau, "tau", low=0.0, low_inclusive=False)
    W = check_array(W, "W", ndim=2)
    try:
        U, s, Vt = np.linalg.svd(W, full_matrices=False)
    except np.linalg.LinAlgError as exc:  # pragma: no cover - LAPACK failure
        raise NumericalError(f"the SVD of the iterate did not converge: {exc}") from None
    if s.sum() <= tau:
        out = np.array(W, dtype=np.float64, copy=True)
        rank = int(np.count_nonzero(s > 0))
    else:
        s2 = np.maximum(s - l1_threshold(s, tau), 0.0)
        rank = int(np.count_nonzero(s2))
        out = (U[:, :rank] * s2[:rank]) @ Vt[:rank]
    return (out, rank) if return_rank else out


def project_max_entry(W, c: float) -> np.ndarray:
    """Euclidean projection onto the max-entry box ``{X : max_ij |X_ij| <= c}`` (entrywise clip).

    Examples
    --------
    >>> project_max_entry([[2.0, -0.5], [-4.0, 1.0]], 1.0).tolist()
    [[1.0, -0.5], [-1.0, 1.0]]
    """
    c = check_scalar(c, "c", low=0.0, low_inclusive=False)
    return np.clip(check_array(W, "W", ndim=2), -c, c)


class L1Ball(ConstraintSet):
    """The L1 ball ``{w : ||w||_1 <= radius}`` (the constraint form of the lasso).

    Its projection is :func:`project_l1_ball` (Duchi et al. 2008, exact,
    ``O(d log d)``); ``sup_{w in F} ||w||_2 = radius`` (a vertex), so the
    OCO notes' ``R`` for OGD started at 0 is ``radius`` and the diameter is
    ``2 radius``; the support function is ``radius ||g||_inf``.

    Parameters
    ----------
    radius : float > 0
    """

    def __init__(self, radius: float = 1.0):
        self.radius = radius

    def validate(self, n_features=None) -> None:
        check_scalar(self.radius, "radius", low=0.0, low_inclusive=False)

    def project(self, w) -> np.ndarray:
        self.validate()
        return project_l1_ball(w, float(self.radius))

    def contains(self, w, atol: float = 1e-12) -> bool:
        self.validate()
        return bool(np.abs(check_array(w, "w", ndim=1)).sum() <= self.radius + atol)

    def diameter(self, d: int) -> float:
        self.validate()
        d = self._check_d(d)
        return 2.0 * float(self.radius) if d >= 1 else 0.0

    def support(self, g) -> float:
        self.validate()
        g = check_array(g, "g", ndim=1)
        return float(self.radius) * float(np.abs(g).max(initial=0.0))

    def argmax_linear(self, g) -> np.ndarray:
        self.validate()
        g = check_array(g, "g", ndim=1)
        out = np.zeros_like(g, dtype=np.float64)
        if np.any(g):
            j = int(np.argmax(np.abs(g)))
            out[j] = math.copysign(float(self.radius), g[j])
        return out
