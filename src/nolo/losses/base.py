"""The loss contract shared by every nolo loss.

CSS10 (section 2) writes every loss as l(<w, Psi(x)>, y) = l(z) of one real
argument z, either

* ``kind = "classification"``: z = y * margin with y in {-1, +1}, or
* ``kind = "regression"``:     z = margin - y,

and assumes the derivative is analytic, l'(z) = sum_n gamma_n z^n, so that
Lemma 1 gives unbiased estimates of it from noisy copies of the margin.  A
:class:`Loss` knows its value and derivative (vectorised), the power series
of l' (:attr:`Loss.series`, a :class:`~nolo.estimators.TaylorSeries` with its
radius of convergence) and l'_+(a) = sum_n |gamma_n| a^n
(:meth:`Loss.derivative_plus`, exact), which sets CSS10's step sizes.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from nolo._validation import check_array, check_finite, check_scalar
from nolo.estimators._validated import ValidatedConfigurable
from nolo.estimators.series import TaylorSeries
from nolo.exceptions import ParameterError

__all__ = ["Loss", "NoSeriesError", "KINDS"]

KINDS = ("classification", "regression")


class NoSeriesError(ParameterError):
    """The loss's derivative is not analytic, so it has no Taylor series for Lemma 1."""


def _as_float_array(value, name: str):
    """``value`` as a float64 array (a plain float for Python/NumPy real scalars: the per-round fast path)."""
    if isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(value, bool):
        v = float(value)
        if not math.isfinite(v):
            raise ParameterError(f"{name} must contain only finite values (no NaN or inf)")
        return np.float64(v)
    return check_array(value, name)


def _out(arr, what: str):
    if np.ndim(arr) == 0:
        v = float(arr)
        if not math.isfinite(v):
            check_finite(v, what)
        return v
    check_finite(arr, what)
    return arr


class Loss(ValidatedConfigurable):
    """A loss l(z) of one real argument z (CSS10 section 2; see the module docstring).

    Subclasses set ``name``, ``kind``, ``has_series`` and implement
    ``_value``, ``_derivative``, ``_make_series`` and ``_derivative_plus``.
    """

    name: ClassVar[str] = "loss"
    kind: ClassVar[str] = "classification"
    has_series: ClassVar[bool] = True

    def __init__(self):
        self._validate_params()

    def _validate_params(self) -> None:
        pass

    def __getstate__(self):
        # the cached series holds local functions: drop it so losses pickle (joblib, dask); it is rebuilt lazily
        state = dict(super().__getstate__())
        state.pop("_series_cache", None)
        return state

    # -- the function of z -------------------------------------------------------------------
    def value(self, z):
        """l(z), elementwise."""
        return _out(self._value(_as_float_array(z, "z")), f"{self.name} loss value")

    def derivative(self, z):
        """l'(z), elementwise (a subgradient for the non-smooth baselines)."""
        return _out(self._derivative(_as_float_array(z, "z")), f"{self.name} loss derivative")

    # -- margin and label ------------------------------------------------------------------------
    def argument(self, margin, y):
        """z: y * margin (classification, y in {-1, +1}) or margin - y (regression)."""
        m = _as_float_array(margin, "margin")
        yy = _as_float_array(y, "y")
        if np.ndim(m) == 0 and np.ndim(yy) == 0:
            if self.kind == "classification":
                if abs(yy) != 1.0:
                    raise ParameterError(
                        f"y must be -1 or +1 for the classification loss {self.name!r}, got {y!r}"
                    )
                return float(yy * m)
            return float(m - yy)
        if self.kind == "classification" and not np.all(np.abs(yy) == 1.0):
            raise ParameterError(f"y must be -1 or +1 for the classification loss {self.name!r}, got {y!r}")
        try:
            z = yy * m if self.kind == "classification" else m - yy
        except ValueError as exc:
            raise ParameterError(f"margin and y must broadcast together: {exc}") from None
        return float(z) if np.ndim(z) == 0 else z

    def loss(self, margin, y):
        """l(argument(margin, y))."""
        return self.value(self.argument(margin, y))

    def grad_margin(self, margin, y):
        """d loss / d margin: y * l'(y * margin) (classification) or l'(margin - y) (regression)."""
        z = self.argument(margin, y)
        d = self.derivative(z)
        if self.kind == "classification":
            out = (float(y) if np.ndim(y) == 0 else np.asarray(y, dtype=np.float64)) * d
            return float(out) if np.ndim(out) == 0 else out
        return d

    # -- the Taylor series of l' -------------------------------------------------------------------
    @property
    def series(self) -> TaylorSeries:
        """The power series sum_n gamma_n z^n of l' (cached per parameter values)."""
        if not self.has_series:
            raise NoSeriesError(
                f"the {self.name} loss has no Taylor series: its derivative is discontinuous, so no "
                "unbiased estimate of it exists under unknown noise (CSS10 section 3.2). Use the "
                "smoothed version (SmoothedHinge / SmoothedAbsolute) with the random-degree estimators."
            )
        key = tuple(sorted((k, v) for k, v in vars(self).items() if not k.startswith("_")))
        cache = self.__dict__.get("_series_cache")
        if cache is None or cache[0] != key:
            cache = (key, self._make_series())
            self.__dict__["_series_cache"] = cache
        return cache[1]

    @property
    def radius(self) -> float:
        """Radius of convergence of the series of l' (``inf`` for entire l')."""
        return self.series.radius

    def derivative_plus(self, a):
        """l'_+(a) = sum_n ``|gamma_n|`` a^n for 0 <= a < radius (CSS10 Theorems 1-2), exactly."""
        _ = self.series  # raises NoSeriesError for the non-smooth losses
        arr = check_array(a, "a")
        if np.any(arr < 0):
            raise ParameterError(f"a must be >= 0, got {a!r}")
        if np.any(arr >= self.radius):
            raise ParameterError(
                f"a must be < the radius of convergence {self.radius} of the {self.name} loss's derivative, got {a!r}"
            )
        return _out(np.asarray(self._derivative_plus(arr), dtype=np.float64), f"{self.name} l'_+")

    # -- hooks -----------------------------------------------------------------------------------------
    def _value(self, z: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _derivative(self, z: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _make_series(self) -> TaylorSeries:  # pragma: no cover - abstract
        raise NotImplementedError

    def _derivative_plus(self, a: np.ndarray) -> np.ndarray:
        """Default: the positive series summed term by term."""
        s = self.series
        return np.vectorize(s.plus, otypes=[np.float64])(a)


def check_sharpness(s) -> float:
    """The smoothing parameter s of the erf-smoothed losses: a real number > 0."""
    return check_scalar(s, "s", low=0.0, low_inclusive=False)


LOG_SQRT_PI = 0.5 * math.log(math.pi)
