"""Stationary zero-mean noise laws: Gaussian, uniform, Laplace, Student-t, zero.

Each is a :class:`nolo.noise.NoiseModel` whose law does not depend on the
round or the call.  Except for the full-covariance Gaussian, coordinates are
independent and each scale parameter is a scalar (isotropic) or one value per
coordinate, so the covariance is diagonal:

==========================  ===========================  ============================
model                       law of coordinate ``j``      variance of coordinate ``j``
==========================  ===========================  ============================
``GaussianNoise(std)``      ``N(0, std_j^2)``            ``std_j^2``
``GaussianNoise(cov=C)``    ``N(0, C)`` (joint)          ``C`` (full matrix)
``UniformNoise(a)``         ``U[-a_j, a_j]``             ``a_j^2 / 3``
``LaplaceNoise(b)``         ``Laplace(0, b_j)``          ``2 b_j^2``
``StudentTNoise(df, s)``    ``s_j * t_df``               ``s_j^2 df / (df - 2)``
``ZeroNoise()``             ``0``                        ``0``
==========================  ===========================  ============================

All are zero-mean with finite variance, the only assumptions of CSS10
section 2.  The Student-t law has heavy tails (finite moments only of order
``< df``), which makes it the stress test for estimators whose analysis
needs only the second moment; ``df <= 2`` is rejected because the variance
is then infinite.
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_array, check_scalar
from nolo.exceptions import ParameterError
from nolo.noise.base import NoiseModel, per_coordinate

__all__ = ["GaussianNoise", "UniformNoise", "LaplaceNoise", "StudentTNoise", "ZeroNoise"]


def _diag_cov(var: float | np.ndarray, d: int) -> np.ndarray:
    """Diagonal covariance from a scalar or per-coordinate variance."""
    return np.diag(np.broadcast_to(np.asarray(var, dtype=np.float64), (d,))).astype(np.float64)


class GaussianNoise(NoiseModel):
    """Zero-mean Gaussian noise: isotropic, diagonal or with a full covariance matrix.

    Parameters
    ----------
    std : float or array of shape (d,), default 1.0
        Standard deviation: a scalar gives ``N(0, std^2 I)``, a vector gives
        ``N(0, diag(std^2))``.  Must be ``>= 0``.
    cov : array of shape (d, d), optional
        Full covariance matrix ``Sigma`` (CSS11 Setting 3 uses ``N(0, Sigma)``).
        Must be symmetric positive semi-definite (singular is allowed).  When
        ``cov`` is given, ``std`` must be left at its default (or ``None``).

    Sampling with a full ``cov`` uses the factor ``A = V sqrt(Lambda)`` of its
    eigendecomposition (``A A^T = Sigma``, valid also when ``Sigma`` is
    singular), computed once and cached until ``cov`` changes.
    """

    def __init__(self, std=1.0, cov=None):
        self.std = std
        self.cov = cov

    # cached (cov copy, symmetric cov, factor) for the full-covariance case
    _cov_cache: tuple | None = None

    def _full_cov(self, d: int | None) -> tuple[np.ndarray, np.ndarray]:
        cache = self._cov_cache
        hit = False
        if cache is not None:
            try:
                raw = np.asarray(self.cov, dtype=np.float64)
                hit = cache[0].shape == raw.shape and np.array_equal(cache[0], raw)
            except (TypeError, ValueError):
                hit = False
        if hit:
            sym, factor = cache[1], cache[2]
        else:
            c = check_array(self.cov, "cov", ndim=2)
            if c.shape[0] != c.shape[1] or c.shape[0] == 0:
                raise ParameterError(f"cov must be a square (d, d) matrix with d >= 1, got shape {c.shape}")
            scale = max(1.0, float(np.max(np.abs(c))))
            asym = float(np.max(np.abs(c - c.T)))
            if asym > 1e-10 * scale:
                raise ParameterError(
                    f"cov must be symmetric, got max |cov - cov^T| = {asym:.3g}"
                )
            sym = 0.5 * (c + c.T)
            w, v = np.linalg.eigh(sym)
            if w[0] < -1e-10 * max(1.0, float(np.max(np.abs(w)))):
                raise ParameterError(
                    f"cov must be positive semi-definite, got smallest eigenvalue {w[0]:.6g}"
                )
            factor = v * np.sqrt(np.clip(w, 0.0, None))
            self._cov_cache = (np.array(c, copy=True), sym, factor)
        if d is not None and sym.shape[0] != d:
            raise ParameterError(f"cov has shape {sym.shape} but the instances have d={d} coordinates")
        return sym, factor

    def _validate_params(self, d=None):
        if self.cov is not None:
            if self.std is not None and not (np.ndim(self.std) == 0 and float(self.std) == 1.0):
                raise ParameterError(
                    "give either std or cov to GaussianNoise, not both "
                    f"(got std={self.std!r} together with a cov matrix)"
                )
            self._full_cov(d)
        else:
            if self.std is None:
                raise ParameterError("std must be given (a scalar or one value per coordinate) when cov is None")
            per_coordinate(self.std, "std", d)

    def _make_sampler(self, d):
        if self.cov is not None:
            factor_t = np.ascontiguousarray(self._full_cov(d)[1].T)
            return lambda rng, size, round, call: rng.standard_normal((size, d)) @ factor_t
        std = per_coordinate(self.std, "std", d)
        return lambda rng, size, round, call: rng.standard_normal((size, d)) * std

    def _covariance(self, d, round, call):
        if self.cov is not None:
            return self._full_cov(d)[0]
        return _diag_cov(np.square(per_coordinate(self.std, "std", d)), d)


class UniformNoise(NoiseModel):
    """Zero-mean uniform noise, independent coordinates ``U[-a_j, a_j]``, variance ``a_j^2 / 3``.

    Parameters
    ----------
    half_width : float or array of shape (d,)
        Half-width ``a >= 0`` of the support, isotropic or per coordinate.
    """

    def __init__(self, half_width=1.0):
        self.half_width = half_width

    def _validate_params(self, d=None):
        per_coordinate(self.half_width, "half_width", d)

    def _make_sampler(self, d):
        a = per_coordinate(self.half_width, "half_width", d)
        return lambda rng, size, round, call: rng.uniform(-1.0, 1.0, (size, d)) * a

    def _covariance(self, d, round, call):
        return _diag_cov(np.square(per_coordinate(self.half_width, "half_width", d)) / 3.0, d)


class LaplaceNoise(NoiseModel):
    """Zero-mean Laplace noise, independent coordinates with density ``exp(-|z|/b_j) / (2 b_j)``, variance ``2 b_j^2``.

    Parameters
    ----------
    scale : float or array of shape (d,)
        Scale ``b >= 0``, isotropic or per coordinate.
    """

    def __init__(self, scale=1.0):
        self.scale = scale

    def _validate_params(self, d=None):
        per_coordinate(self.scale, "scale", d)

    def _make_sampler(self, d):
        b = per_coordinate(self.scale, "scale", d)
        return lambda rng, size, round, call: rng.laplace(0.0, 1.0, (size, d)) * b

    def _covariance(self, d, round, call):
        return _diag_cov(2.0 * np.square(per_coordinate(self.scale, "scale", d)), d)


class StudentTNoise(NoiseModel):
    """Heavy-tailed zero-mean noise: independent coordinates ``scale_j * T`` with ``T ~ t_df``.

    The variance of coordinate ``j`` is ``scale_j^2 df / (df - 2)``, finite
    only for ``df > 2``; smaller ``df`` is rejected, because CSS10 section 2
    assumes a bounded variance.  Moments of order ``>= df`` are infinite, so
    Monte-Carlo checks of second moments need ``df > 4``.

    Parameters
    ----------
    df : float
        Degrees of freedom, ``> 2``.
    scale : float or array of shape (d,)
        Scale ``>= 0``, isotropic or per coordinate.
    """

    def __init__(self, df=5.0, scale=1.0):
        self.df = df
        self.scale = scale

    def _df(self) -> float:
        try:
            return check_scalar(self.df, "df", low=2.0, low_inclusive=False)
        except ParameterError as exc:
            raise ParameterError(
                f"{exc} (the Student-t variance scale^2 df/(df-2) is finite only for df > 2)"
            ) from None

    def _validate_params(self, d=None):
        self._df()
        per_coordinate(self.scale, "scale", d)

    def _make_sampler(self, d):
        df, s = self._df(), per_coordinate(self.scale, "scale", d)
        return lambda rng, size, round, call: rng.standard_t(df, (size, d)) * s

    def _covariance(self, d, round, call):
        df = self._df()
        return _diag_cov(np.square(per_coordinate(self.scale, "scale", d)) * df / (df - 2.0), d)


class ZeroNoise(NoiseModel):
    """No noise at all: every draw is the zero vector (the clean-data control)."""

    def __init__(self):
        pass

    def _validate_params(self, d=None):
        return None

    def _make_sampler(self, d):
        return lambda rng, size, round, call: np.zeros((size, d), dtype=np.float64)

    def _covariance(self, d, round, call):
        return np.zeros((d, d), dtype=np.float64)
