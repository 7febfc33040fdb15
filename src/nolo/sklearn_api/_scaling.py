"""Internal standardisation of the estimators of :mod:`nolo.sklearn_api`, undone for ``coef_`` / ``intercept_``.

The online learners of the papers run on a ball of fixed radius with a step tuned to the data's scale; on raw
data a target measured in other units (``y * 100``) leaves them far from the optimum.  The estimators
therefore learn on ``x_s = (x - mu_x) / s_x`` and ``y_s = (y - mu_y) / s_y`` and map the result back:
``y = mu_y + s_y <w_s, (x - mu_x) / s_x>``, i.e. ``coef_ = s_y w_s / s_x`` and ``intercept_ = mu_y - <coef_, mu_x>``.

* ``mu_x`` is the mean of the per-item means of the readings (an unbiased estimate of the clean mean: the noise
  has mean zero); ``s_x`` the per-feature standard deviation of the per-item means (any positive scale is
  valid -- it is undone exactly; this one is the scale of what the learner sees);
* with ``fit_intercept=False`` nothing is centred and the scales are root mean squares.

A noise covariance ``Sigma`` of one reading becomes ``D^-1 Sigma D^-1`` (``D = diag(s_x)``; a diagonal one stays
its ``d`` variances).  Scales that are 0
(a constant feature, a constant target) are replaced by 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nolo.exceptions import ParameterError

__all__ = ["Standardizer"]


def _scale(v: np.ndarray, axis=0) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.sqrt(np.mean(v * v, axis=axis))
    s = np.asarray(s, dtype=np.float64)
    if not np.all(np.isfinite(s)):
        raise ParameterError(
            "X and y must be of moderate size: their second moments overflow float64 (rescale the data)"
        )
    return np.where(s > 0, s, 1.0)


@dataclass(frozen=True)
class Standardizer:
    x_mean: np.ndarray
    x_scale: np.ndarray
    y_mean: float
    y_scale: float

    @classmethod
    def fit(cls, item_means: np.ndarray, y: np.ndarray | None, fit_intercept: bool) -> "Standardizer":
        """From the per-item means ``(n, d)`` and targets ``(n,)`` (``y=None``: no target scaling, a classifier)."""
        mu = item_means.mean(axis=0) if fit_intercept else np.zeros(item_means.shape[1])
        sx = _scale(item_means - mu)
        if y is None:
            return cls(mu, sx, 0.0, 1.0)
        my = float(np.mean(y)) if fit_intercept else 0.0
        sy = float(_scale(y - my))
        return cls(mu, sx, my, sy)

    def x(self, values: np.ndarray) -> np.ndarray:
        """Readings or clean rows ``(..., d)`` in the learner's coordinates."""
        return (values - self.x_mean) / self.x_scale

    def y(self, y: np.ndarray) -> np.ndarray:
        return (y - self.y_mean) / self.y_scale

    def y_back(self, f: np.ndarray) -> np.ndarray:
        return self.y_mean + self.y_scale * f

    def noise_cov(self, S: np.ndarray) -> np.ndarray:
        """``D^-1 S D^-1`` for a ``(d, d)`` covariance of the raw readings; for its ``(d,)`` variances (a diagonal
        covariance, :func:`nolo.kernels.surrogate.compact_noise_covariance`) the ``(d,)`` variances of that."""
        if S.ndim == 1:
            return S / (self.x_scale * self.x_scale)
        return S / np.outer(self.x_scale, self.x_scale)

    def linear(self, w_s: np.ndarray) -> tuple[np.ndarray, float]:
        """``(coef_, intercept_)`` in the user's units from the standardised coefficients."""
        coef = self.y_scale * w_s / self.x_scale
        return coef, float(self.y_mean - coef @ self.x_mean)
