"""Batch errors-in-variables regression: what a statistician would fit to noisy x with known noise.

With ``x~ = x + n`` (``E n = 0``, ``Cov n = Sigma``) and ``y~ = y + n^y``,
ordinary least squares on ``x~`` converges to ``(E xx^T + Sigma)^{-1} E x y``
-- attenuated towards 0.  Two classical fixes (Fuller, *Measurement Error
Models*, 1987, sections 1.2 and 2.3):

* **corrected least squares** (method of moments):
  ``w = (X~^T X~ / n - Sigma)^{-1} X~^T y~ / n``, the batch counterpart of
  CSS11 Setting 2 -- the same bias term is removed.  The corrected moment
  matrix can be indefinite in small samples; with ``radius`` the estimate is
  the exact minimiser of the corrected quadratic over ``||w|| <= radius``
  (a trust-region subproblem, solved by eigendecomposition and bisection on
  the Lagrange multiplier), matching the online learners' constraint set.
* **total least squares** (orthogonal regression): with the joint noise
  covariance of ``(x~, y~)`` known up to a scale, ``blockdiag(Sigma, s_y^2)``,
  the smallest right singular vector of the whitened data matrix.

Repeated measurements ``(n, m, d)`` are averaged per item (the mean of ``m``
independent copies has covariance ``Sigma / m``); with ``noise_cov="estimate"``
``Sigma`` is the pooled within-item covariance of the replicates.
"""

from __future__ import annotations

import numpy as np

from nolo._config import Configurable
from nolo._validation import check_array, check_bool, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.kernels.surrogate import check_noise_covariance

__all__ = [
    "replicate_covariance",
    "average_replicates",
    "corrected_least_squares",
    "total_least_squares",
    "ball_constrained_quadratic",
    "with_constant_feature",
    "CorrectedLeastSquares",
    "TotalLeastSquares",
]


def replicate_covariance(X) -> np.ndarray:
    """Pooled within-item covariance of repeated measurements ``(n, m, d)``, ``m >= 2``: an unbiased ``Sigma``."""
    X = check_array(X, "X", ndim=3)
    n, m, d = X.shape
    if m < 2:
        raise ParameterError(f"estimating the noise covariance needs m >= 2 copies per item, got X of shape {X.shape}")
    D = X - X.mean(axis=1, keepdims=True)
    return np.einsum("nmi,nmj->ij", D, D) / (n * (m - 1))


def average_replicates(X, noise_cov):
    """``(x_bar (n, d), Sigma_bar (d, d))``: per-item means and their noise covariance ``Sigma / m``.

    ``X`` is ``(n, d)`` (one copy: returned as is with ``Sigma``) or
    ``(n, m, d)``; ``noise_cov`` a scalar, variances, matrix, or ``"estimate"``.
    """
    X = check_array(X, "X", ndim=(2, 3))
    d = X.shape[-1]
    if isinstance(noise_cov, str):
        if noise_cov != "estimate":
            raise ParameterError(f"noise_cov must be a covariance or 'estimate', got {noise_cov!r}")
        if X.ndim != 3:
            raise ParameterError("noise_cov='estimate' needs repeated measurements X of shape (n, m>=2, d)")
        S = replicate_covariance(X)
    else:
        S = check_noise_covariance(noise_cov, d)
    if X.ndim == 2:
        return X, S
    return X.mean(axis=1), S / X.shape[1]


def ball_constrained_quadratic(A, b, radius: float, *, tol: float = 1e-12) -> np.ndarray:
    """``argmin_{||w|| <= radius} w^T A w - 2 b^T w`` for symmetric (possibly indefinite) ``A``.

    The trust-region subproblem: ``w = (A + mu I)^{-1} b`` with ``mu >= max(0, -lambda_min)``
    and ``mu (radius - ||w||) = 0``, found by bisection on ``mu`` in the eigenbasis
    (the "hard case" adds the component along the bottom eigenvector that
    brings ``||w||`` to ``radius``).
    """
    A = check_array(A, "A", ndim=2)
    b = check_array(b, "b", ndim=1)
    R = check_scalar(radius, "radius", low=0.0, low_inclusive=False)
    lam, V = np.linalg.eigh(0.5 * (A + A.T))
    bt = V.T @ b
    scale = max(float(np.max(np.abs(lam))), 1e-300)
    if lam[0] > tol * scale:
        w = V @ (bt / lam)
        if np.linalg.norm(w) <= R:
            return w

    def norm_at(mu):
        return float(np.sqrt(np.sum((bt / (lam + mu)) ** 2)))

    lo = max(0.0, -lam[0])
    near = np.abs(bt[lam <= lam[0] + tol * scale])
    if np.all(near <= tol * max(float(np.max(np.abs(bt))), 1e-300)):
        # hard case candidate: mu = -lambda_min, fill up the norm along the bottom eigenvector(s)
        mu = lo
        keep = lam + mu > tol * scale
        coef = np.zeros_like(bt)
        coef[keep] = bt[keep] / (lam[keep] + mu)
        rem = R * R - float(np.sum(coef**2))
        if rem >= 0:
            coef[np.argmin(lam)] += np.sqrt(rem)
            return V @ coef
    hi = lo + 1.0
    while norm_at(hi) > R:
        hi = lo + 2.0 * (hi - lo)
        if hi > 1e300:
            raise NumericalError("ball_constrained_quadratic: could not bracket the Lagrange multiplier")
    lo_b = lo if lo > 0 else 0.0
    if lo_b == 0.0 and lam[0] > 0 and norm_at(0.0) <= R:
        return V @ (bt / lam)
    for _ in range(200):
        mid = 0.5 * (lo_b + hi)
        if mid == lo_b or mid == hi:
            break
        if lam[0] + mid <= 0 or norm_at(mid) > R:
            lo_b = mid
        else:
            hi = mid
    return V @ (bt / (lam + hi))


def corrected_least_squares(X, y, noise_cov, radius: float | None = None) -> np.ndarray:
    """Errors-in-variables corrected least squares ``(X~^T X~/n - Sigma)^{-1} X~^T y~ / n``.

    ``X`` is ``(n, d)`` or repeated measurements ``(n, m, d)`` (averaged, ``Sigma/m``);
    ``noise_cov`` is the covariance of one copy, or ``"estimate"`` (from the replicates).
    Without ``radius`` the corrected moment matrix must be positive definite
    (else :class:`NumericalError`: the sample is too small for the noise level --
    give ``radius``); with ``radius`` the minimiser over the ball is returned.
    """
    Xb, S = average_replicates(X, noise_cov)
    yv = check_array(y, "y", shape=(Xb.shape[0],))
    n = Xb.shape[0]
    A = Xb.T @ Xb / n - S
    b = Xb.T @ yv / n
    if radius is not None:
        return ball_constrained_quadratic(A, b, radius)
    lam = np.linalg.eigvalsh(A)
    if lam[0] <= 1e-12 * max(abs(lam[-1]), 1e-300):
        raise NumericalError(
            f"the corrected moment matrix X^T X/n - Sigma is not positive definite (smallest eigenvalue {lam[0]:.3g}): "
            "too few samples for this noise level, or Sigma overstated; pass radius= for the constrained estimate"
        )
    return np.linalg.solve(A, b)


def total_least_squares(X, y, noise_cov=None, target_variance: float = 1.0) -> np.ndarray:
    """Total least squares for ``y ~ <w, x>`` (no intercept) with noise covariance ``blockdiag(Sigma, s_y^2)`` up to scale.

    ``noise_cov=None`` means ``Sigma = s_y^2 I`` (classical orthogonal
    regression).  Returns ``w``; raises :class:`NumericalError` when the
    solution is at infinity (the smallest singular vector has no ``y`` part).
    """
    X = check_array(X, "X", ndim=(2, 3))
    s2 = check_scalar(target_variance, "target_variance", low=0.0, low_inclusive=False)
    d = X.shape[-1]
    Xb, S = average_replicates(X, s2 if noise_cov is None else noise_cov)
    yv = check_array(y, "y", shape=(Xb.shape[0],))
    Omega = np.zeros((d + 1, d + 1))
    Omega[:d, :d] = S  # noise covariance of the averaged x (Sigma / m)
    Omega[d, d] = s2  # one target per item
    lam, V = np.linalg.eigh(Omega)
    if lam[0] <= 0:
        raise ParameterError("total least squares needs a positive definite joint noise covariance (Sigma and target_variance > 0)")
    inv_half = V @ np.diag(1.0 / np.sqrt(lam)) @ V.T
    Z = np.column_stack([Xb, yv]) @ inv_half
    _, _, Vt = np.linalg.svd(Z, full_matrices=False)
    beta = inv_half @ Vt[-1]
    if abs(beta[d]) < 1e-12 * np.linalg.norm(beta):
        raise NumericalError("total least squares: the solution is at infinity (no y component in the smallest singular vector)")
    return -beta[:d] / beta[d]


def with_constant_feature(X, noise_cov):
    """``X`` (``(n, d)`` or ``(n, m, d)``) with a constant feature 1 appended, and ``noise_cov`` padded with its
    zero noise: the intercept as one more coefficient (``"estimate"`` stays: replicates of 1 have no spread)."""
    X = check_array(X, "X", ndim=(2, 3))
    Xa = np.concatenate([X, np.ones(X.shape[:-1] + (1,))], axis=-1)
    if isinstance(noise_cov, str):
        return Xa, noise_cov
    S = check_noise_covariance(noise_cov, X.shape[-1])
    Sa = np.zeros((S.shape[0] + 1, S.shape[0] + 1))
    Sa[:-1, :-1] = S
    return Xa, Sa


class _BatchRegressor(Configurable):
    def predict(self, X) -> np.ndarray:
        if not hasattr(self, "coef_"):
            raise ParameterError(f"{type(self).__name__}.predict needs a fitted estimator: call fit(X, y) first")
        X = check_array(X, "X", ndim=2)
        if X.shape[1] != self.coef_.shape[0]:
            raise ParameterError(f"X must have {self.coef_.shape[0]} features per row, got {X.shape[1]}")
        return X @ self.coef_ + getattr(self, "intercept_", 0.0)

    def score(self, X, y) -> float:
        """R^2 of the predictions on clean ``X`` (scikit-learn's regressor score)."""
        from sklearn.metrics import r2_score

        return float(r2_score(check_array(y, "y", ndim=1), self.predict(X)))


class CorrectedLeastSquares(_BatchRegressor):
    """Errors-in-variables corrected (method-of-moments) least squares -- batch reference for CSS11 Settings 1-2.

    Parameters: ``noise_cov`` (covariance of one noisy copy, or ``"estimate"``
    from replicates), ``radius`` (optional ball constraint ``||w|| <= radius``;
    with an intercept it bounds ``(coef, intercept)`` jointly), ``fit_intercept``
    (default False; True appends a constant feature with zero noise, the batch
    counterpart of :class:`nolo.learners.linear.BiasCompensatedRLS`' default).
    ``fit(X, y)`` with ``X`` of shape ``(n, d)`` or ``(n, m, d)``.
    """

    def __init__(self, noise_cov="estimate", radius=None, fit_intercept=False):
        self.noise_cov = noise_cov
        self.radius = radius
        self.fit_intercept = fit_intercept

    def _validate_params(self) -> None:
        check_bool(self.fit_intercept, "fit_intercept")

    def fit(self, X, y) -> "CorrectedLeastSquares":
        self._validate_params()
        if self.fit_intercept:
            Xa, S = with_constant_feature(X, self.noise_cov)
            w = corrected_least_squares(Xa, y, S, self.radius)
            coef, intercept = w[:-1], float(w[-1])
        else:
            coef, intercept = corrected_least_squares(X, y, self.noise_cov, self.radius), 0.0
        self.coef_, self.intercept_ = coef, intercept
        self.n_features_in_ = int(self.coef_.shape[0])
        return self


class TotalLeastSquares(_BatchRegressor):
    """Total least squares (orthogonal regression) with a known noise-covariance shape.

    Parameters: ``noise_cov`` (covariance of one noisy copy of x; None for
    ``target_variance * I``, or ``"estimate"``), ``target_variance`` (noise
    variance of y).  ``fit(X, y)`` with ``X`` of shape ``(n, d)`` or ``(n, m, d)``.
    """

    def __init__(self, noise_cov=None, target_variance=1.0):
        self.noise_cov = noise_cov
        self.target_variance = target_variance

    def fit(self, X, y) -> "TotalLeastSquares":
        self.coef_ = total_least_squares(X, y, self.noise_cov, self.target_variance)
        self.n_features_in_ = int(self.coef_.shape[0])
        return self
