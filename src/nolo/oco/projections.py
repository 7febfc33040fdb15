"""Convex constraint sets and their Euclidean projections (OCO notes, section 3).

Online gradient descent plays ``w_{t+1} = Pi_F(w_t - eta grad_t)`` where
``Pi_F`` is the Euclidean projection onto the convex set ``F``.  Each set here
knows

* ``project(w)`` -- the exact Euclidean projection;
* ``contains(w, atol)`` -- membership up to an absolute tolerance;
* ``diameter(d)`` -- ``sup ||u - v||_2`` over the set in ``R^d`` (``inf`` if unbounded);
* ``support(g)`` -- the support function ``sigma_F(g) = sup_{w in F} <g, w>``,
  so that the best fixed point in hindsight for linear losses is
  ``min_{w in F} <G, w> = -support(-G)``;
* ``argmax_linear(g)`` -- a maximiser of ``<g, w>`` over the set;
* ``compiled_spec(d)`` -- its code for the one compiled step :mod:`nolo.oco.projected_step`.

The L2 ball is the set of the OCO notes (``F = {f : ||f||_2 <= R}``, whose
projection is ``f`` if ``||f|| <= R`` and ``R f / ||f||`` otherwise); the L1
ball is the constraint form of the lasso (notes, section 2).

The projections and proximal maps of the notes' other examples:

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
* :func:`project_max_entry` -- onto the max-entry box ``{W : |W_ij| <= c}`` (a clip).
"""

from __future__ import annotations

import math

import numpy as np

from nolo._config import Configurable
from nolo._validation import check_array, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.oco.projected_step import BALL, BOX, L1_BALL, UNCONSTRAINED, l1_threshold, project_l1_inplace

__all__ = [
    "ConstraintSet",
    "L2Ball",
    "L1Ball",
    "Box",
    "Unconstrained",
    "check_constraint",
    "project_l1_ball",
    "project_simplex",
    "soft_threshold",
    "project_trace_norm_ball",
    "project_max_entry",
]


def _vector(w, name: str = "w") -> np.ndarray:
    return check_array(w, name, ndim=1)


class ConstraintSet(Configurable):
    """A closed convex set of linear predictors ``w in R^d``."""

    def _validate_params(self, n_features: int | None = None) -> None:
        """Check the parameters (and, if given, compatibility with dimension ``n_features``); also run by ``set_params``."""

    def validate(self, n_features: int | None = None) -> "ConstraintSet":
        """Run :meth:`_validate_params`; return self."""
        self._validate_params(n_features)
        return self

    def project(self, w) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def contains(self, w, atol: float = 1e-12) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def diameter(self, d: int) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def support(self, g) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def argmax_linear(self, g) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def is_bounded(self) -> bool:
        return True

    def compiled_spec(self, d: int):  # pragma: no cover - abstract
        """``(kind, radius, low, high)`` coding the set for :func:`nolo.oco.projected_step.projected_step`."""
        raise NotImplementedError

    def _check_d(self, d) -> int:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ParameterError(f"d must be a positive integer (the dimension), got {d!r}")
        return int(d)


class _NormBall(ConstraintSet):
    """A norm ball ``{w : ||w|| <= radius}`` centred at the origin: the radius, its check, the diameter ``2 radius``."""

    def __init__(self, radius: float = 1.0):
        self.radius = radius

    def _validate_params(self, n_features=None) -> None:
        check_scalar(self.radius, "radius", low=0.0, low_inclusive=False)

    def diameter(self, d: int) -> float:
        self._validate_params()
        self._check_d(d)
        return 2.0 * float(self.radius)

    def compiled_spec(self, d: int):
        self._validate_params()
        return self._kind, float(self.radius), np.zeros(d), np.zeros(d)


class L2Ball(_NormBall):
    """The Euclidean ball ``{w : ||w||_2 <= radius}`` centred at the origin (OCO notes, section 3).

    Parameters
    ----------
    radius : float > 0
        ``R`` in the notes.
    """

    _kind = BALL

    def project(self, w) -> np.ndarray:
        self._validate_params()
        w = _vector(w)
        nrm = float(np.linalg.norm(w))
        if nrm <= self.radius:
            return w.copy()
        return w * (self.radius / nrm)

    def contains(self, w, atol: float = 1e-12) -> bool:
        self._validate_params()
        return bool(np.linalg.norm(_vector(w)) <= self.radius + atol)

    def support(self, g) -> float:
        self._validate_params()
        return float(self.radius) * float(np.linalg.norm(_vector(g, "g")))

    def argmax_linear(self, g) -> np.ndarray:
        self._validate_params()
        g = _vector(g, "g")
        nrm = float(np.linalg.norm(g))
        if nrm == 0.0:
            return np.zeros_like(g)
        return g * (self.radius / nrm)


class L1Ball(_NormBall):
    """The L1 ball ``{w : ||w||_1 <= radius}`` (the constraint form of the lasso, OCO notes section 2).

    Its projection is :func:`project_l1_ball` (Duchi et al. 2008, exact,
    ``O(d log d)``); ``sup_{w in F} ||w||_2 = radius`` (a vertex), so the
    OCO notes' ``R`` for OGD started at 0 is ``radius`` and the diameter is
    ``2 radius``; the support function is ``radius ||g||_inf``.

    Parameters
    ----------
    radius : float > 0
    """

    _kind = L1_BALL

    def project(self, w) -> np.ndarray:
        self._validate_params()
        return project_l1_ball(w, float(self.radius))

    def contains(self, w, atol: float = 1e-12) -> bool:
        self._validate_params()
        return bool(np.abs(_vector(w)).sum() <= self.radius + atol)

    def support(self, g) -> float:
        self._validate_params()
        return float(self.radius) * float(np.abs(_vector(g, "g")).max(initial=0.0))

    def argmax_linear(self, g) -> np.ndarray:
        self._validate_params()
        g = _vector(g, "g")
        out = np.zeros_like(g, dtype=np.float64)
        if np.any(g):
            j = int(np.argmax(np.abs(g)))
            out[j] = math.copysign(float(self.radius), g[j])
        return out


class Box(ConstraintSet):
    """The box ``{w : low <= w <= high}`` (coordinate-wise), bounds finite scalars or vectors.

    Scalars apply to every coordinate; vectors fix the dimension.  The
    projection clips each coordinate.
    """

    def __init__(self, low=-1.0, high=1.0):
        self.low = low
        self.high = high

    def bounds(self, d: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Validated ``(low, high)``; broadcast to length ``d`` when ``d`` is given (read-only views)."""
        low = check_array(self.low, "low", ndim=(0, 1))
        high = check_array(self.high, "high", ndim=(0, 1))
        if low.ndim == 1 and high.ndim == 1 and low.shape != high.shape:
            raise ParameterError(f"low and high must have the same length, got {low.shape[0]} and {high.shape[0]}")
        for name, arr in (("low", low), ("high", high)):
            if arr.ndim == 1 and arr.shape[0] == 0:
                raise ParameterError(f"{name} must be a scalar or a non-empty vector")
            if d is not None and arr.ndim == 1 and arr.shape[0] != d:
                raise ParameterError(f"{name} must be a scalar or have {d} entries (the dimension), got {arr.shape[0]}")
        if np.any(low > high):
            raise ParameterError("low must be <= high in every coordinate (an empty box has no projection)")
        if d is not None:
            low, high = np.broadcast_to(low, (d,)), np.broadcast_to(high, (d,))
        return low, high

    def _validate_params(self, n_features=None) -> None:
        self.bounds(n_features)

    def compiled_spec(self, d: int):
        low, high = self.bounds(d)
        return BOX, 0.0, np.ascontiguousarray(low, dtype=np.float64), np.ascontiguousarray(high, dtype=np.float64)

    def project(self, w) -> np.ndarray:
        w = _vector(w)
        low, high = self.bounds(w.shape[0])
        return np.clip(w, low, high)

    def contains(self, w, atol: float = 1e-12) -> bool:
        w = _vector(w)
        low, high = self.bounds(w.shape[0])
        return bool(np.all(w >= low - atol) and np.all(w <= high + atol))

    def diameter(self, d: int) -> float:
        low, high = self.bounds(self._check_d(d))
        return float(np.linalg.norm(high - low))

    def support(self, g) -> float:
        g = _vector(g, "g")
        low, high = self.bounds(g.shape[0])
        return float(np.sum(np.maximum(g * low, g * high)))

    def argmax_linear(self, g) -> np.ndarray:
        g = _vector(g, "g")
        low, high = self.bounds(g.shape[0])
        return np.where(g > 0, high, low).astype(np.float64)


class Unconstrained(ConstraintSet):
    """All of ``R^d``: the projection is the identity."""

    def project(self, w) -> np.ndarray:
        return _vector(w).copy()

    def contains(self, w, atol: float = 1e-12) -> bool:
        _vector(w)
        return True

    def diameter(self, d: int) -> float:
        self._check_d(d)
        return math.inf

    @property
    def is_bounded(self) -> bool:
        return False

    def compiled_spec(self, d: int):
        return UNCONSTRAINED, 0.0, np.zeros(d), np.zeros(d)

    def support(self, g) -> float:
        g = _vector(g, "g")
        return 0.0 if not np.any(g) else math.inf

    def argmax_linear(self, g) -> np.ndarray:
        g = _vector(g, "g")
        if np.any(g):
            raise ParameterError("a nonzero linear objective has no maximiser over an unconstrained set")
        return np.zeros_like(g)


def check_constraint(constraint, name: str = "constraint", n_features: int | None = None) -> ConstraintSet:
    """Return ``constraint`` (``None`` -> :class:`Unconstrained`) after validating it."""
    if constraint is None:
        return Unconstrained()
    if not isinstance(constraint, ConstraintSet):
        raise ParameterError(
            f"{name} must be a nolo.oco ConstraintSet (L2Ball, L1Ball, Box, Unconstrained) or None, got {constraint!r}"
        )
    constraint._validate_params(n_features)
    return constraint


def _copy_vector(v, name: str) -> np.ndarray:
    return np.array(check_array(v, name, ndim=1), dtype=np.float64, copy=True)


def project_l1_ball(v, radius: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{w : ||w||_1 <= radius}`` (Duchi et al. 2008, Fig. 1).

    ``w = sign(v) max(|v| - theta, 0)`` with the ``theta`` of
    :func:`~nolo.oco.projected_step.l1_threshold` (``theta = 0`` when ``v`` is already inside).

    Examples
    --------
    >>> project_l1_ball([3.0, -1.0, 0.5], 2.0).tolist()
    [2.0, 0.0, 0.0]
    >>> project_l1_ball([0.5, -0.25], 1.0).tolist()
    [0.5, -0.25]
    """
    radius = check_scalar(radius, "radius", low=0.0, low_inclusive=False)
    w = _copy_vector(v, "v")
    project_l1_inplace(w, radius)
    return w


def project_simplex(v, z: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``v`` onto the simplex ``{w >= 0 : sum_j w_j = z}`` (Duchi et al. 2008, Fig. 1).

    Examples
    --------
    >>> project_simplex([0.5, 0.5, 2.0], 1.0).tolist()
    [0.0, 0.0, 1.0]
    """
    z = check_scalar(z, "z", low=0.0, low_inclusive=False)
    v = _copy_vector(v, "v")
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
    v = _copy_vector(v, "v")
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
