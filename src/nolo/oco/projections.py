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
* ``argmax_linear(g)`` -- a maximiser of ``<g, w>`` over the set.

The L2 ball is the set of the OCO notes (``F = {f : ||f||_2 <= R}``, whose
projection is ``f`` if ``||f|| <= R`` and ``R f / ||f||`` otherwise).
"""

from __future__ import annotations

import math

import numpy as np

from nolo._config import Configurable
from nolo._validation import check_array, check_scalar
from nolo.exceptions import ParameterError
from nolo.oco.projected_step import BALL, BOX, UNCONSTRAINED

__all__ = ["ConstraintSet", "L2Ball", "Box", "Unconstrained", "check_constraint"]


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


class L2Ball(ConstraintSet):
    """The Euclidean ball ``{w : ||w||_2 <= radius}`` centred at the origin (OCO notes, section 3).

    Parameters
    ----------
    radius : float > 0
        ``R`` in the notes.
    """

    def __init__(self, radius: float = 1.0):
        self.radius = radius

    def _validate_params(self, n_features=None) -> None:
        check_scalar(self.radius, "radius", low=0.0, low_inclusive=False)

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

    def diameter(self, d: int) -> float:
        self._validate_params()
        self._check_d(d)
        return 2.0 * float(self.radius)

    def support(self, g) -> float:
        self._validate_params()
        return float(self.radius) * float(np.linalg.norm(_vector(g, "g")))

    def compiled_spec(self, d: int):
        self._validate_params()
        return BALL, float(self.radius), np.zeros(d), np.zeros(d)

    def argmax_linear(self, g) -> np.ndarray:
        self._validate_params()
        g = _vector(g, "g")
        nrm = float(np.linalg.norm(g))
        if nrm == 0.0:
            return np.zeros_like(g)
        return g * (self.radius / nrm)


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
            f"{name} must be a nolo.oco ConstraintSet (L2Ball, Box, Unconstrained) or None, got {constraint!r}"
        )
    constraint._validate_params(n_features)
    return constraint
