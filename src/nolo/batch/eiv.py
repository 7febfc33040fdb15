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

Repeated measurements ``(n, m, d)`` -- or ragged, a list of ``(m_i, d)`` arrays -- are averaged per item (the
mean of ``m_i`` independent copies has covariance ``Sigma / m_i``; the correction is their average
``S = Sigma mean_i(1/m_i)``); with ``noise_cov="estimate"`` ``Sigma`` is the pooled within-item covariance of the
replicates.

**With an intercept** (``fit_intercept``, a noiseless constant feature; the scikit-learn estimators) the slopes
solve the centred normal equations, and the centred moments of the item means hold the share ``(n - 1)/n`` of
their noise: ``E sum_i (xbar_i - xbar)(xbar_i - xbar)^T = (n - 1)(C + S)`` (``C`` the clean covariance; for
unequal ``m_i`` too, :func:`centred_noise_share`).  The consistent correction is the book's -- the moments about
the mean on ``n - 1`` degrees of freedom minus ``S`` (Fuller 1987, section 2.2) -- which is ``M - c S`` with
``c = (n - 1)/n`` for nolo's moments ``M = Xbar^T Xbar / n`` (``c = 1`` without an intercept).  Every correction
scale ``g`` (``correction_scale_``: 1 the full correction, Fuller's, the cross-validated one) is a share of that
``c S``; the solved matrix is ``M - g c S``.  Subtracting ``S`` itself over-corrects by ``S / n``.

**Small-sample modification** (``fuller_alpha``; Fuller 1987, section 2.5.1, the modified estimator for the model
with an error in the equation and a known measurement covariance of ``x``; section 3.1.1 for unequal per-item
covariances, whose average ``S`` enters here).  With ``Z = (y, x)``, ``m_ZZ`` the moment matrix of
``(y_i, xbar_i)`` on ``nu`` degrees of freedom (``nu = n - 1`` about the mean with an intercept, raw moments and
``nu = n`` without) and ``S_ZZ = blockdiag(0, S)`` (the error of ``y`` is not known apart from the equation error,
so its entry is 0), ``lambda_F`` is the smallest root of ``|m_ZZ - lambda S_ZZ| = 0`` -- the joint moments, not
those of ``x`` alone -- and the estimate is ``(H + (alpha/nu) S)^{-1} m_xy`` with ``H = m_xx - S`` if
``lambda_F >= 1 + 1/nu`` and ``H = m_xx - (lambda_F - 1/nu) S`` otherwise, i.e. the correction scale

    g = min(1 - alpha/nu, lambda_F - (1 + alpha)/nu)

of ``S`` on the ``nu``-moments, the share ``g`` of the consistent correction ``c S`` above (``c = nu/n``).
nolo computes the root on its divisor-``n`` moments: ``lambda_hat_`` is the smallest root of ``|M - b b^T / m_yy -
lambda S| = 0`` (``b = Xbar^T y / n``, ``m_yy = y^T y / n``; the intercept's constant minimised out with ``y``,
which leaves the centred moments), and ``lambda_F = (n/nu) lambda_hat_`` (:func:`fuller_scale` returns
``lambda_hat`` and the same scale as a multiple of ``S``, ``c g = min((nu - alpha)/n, lambda_hat - (1 + alpha)/n)``).
The solved matrix is positive definite (its smallest root relative to ``S`` is at least ``(1 + alpha)/n``), so the
estimator has finite moments; ``g`` is negative when ``lambda_F < (1 + alpha)/nu``.  ``alpha = 1`` makes the
estimator nearly unbiased and ``alpha = 4`` gives a smaller mean squared error (to the order of the book's
approximations).  With ``noise_cov="estimate"`` the pooled ``S`` is plugged in (the book's variant for an
estimated covariance is not implemented).

Sources checked, and what each confirms (the book's own text was not available to compare against):

* lavaan (Rosseel & Loh, *Psychological Methods*, 2022; ``R/lav_sam_utils.R``, ``lav_sam_veta``), which cites
  Fuller (1987) for it: the root from the joint covariance of all the variables of the structural model, outcomes
  included (``|MSM - lambda MTM| = 0``), the threshold ``1 + 1/(N - 1)``, the shift ``lambda - 1/(N - 1)`` and
  ``alpha/(N - 1)`` -- the degrees of freedom ``nu = n - 1`` of moments about the mean, not ``n`` and not ``n``
  minus the number of coefficients.  lavaan applies ``alpha`` as a factor ``1 - alpha/(N - 1)`` on the error
  covariance before the root: the same estimate as ``H + (alpha/nu) S`` when ``lambda >= 1 + 1/nu``; in the
  other branch its ``alpha`` changes only the ``1/nu`` term, where the form above adds ``(alpha/nu) S``.
* Fuller's (1977) modification of LIML, the same construction for instrumental variables (linearmodels'
  ``IVLIML(fuller=alpha)``; R ivmodel's ``Fuller``, ``k = k_LIML - b/(n - L - p)``, ``k_LIML`` the smallest root
  of ``det(L^T L - k L^T R_Z L) = 0`` with ``L = (Y, D)``, the outcome included): per unit of the error
  covariance, ``alpha`` over the degrees of freedom of the moment matrix, ``n`` less the exactly measured
  regressors partialled out (here the intercept) -- again ``n - 1``, not ``n - p`` for ``p`` coefficients.
* An independent implementation of the form above in the book's notation agrees with this module to 1e-9 in
  both branches, with and without an intercept (``tests/batch/test_batch_eiv.py``); measured (``d = 1``,
  ``n = 15``, reliability of the mean 0.8, 4,000 fits; docs/eiv.md, section 2b): ``alpha = 1`` has mean 1.016
  without an intercept and 1.013 with one for a true slope of 1, ``alpha = 4`` the smallest mean squared error.

**Cross-validated correction scale** (``cv_folds``, default 5 in :class:`CorrectedLeastSquares`; nolo's
construction, not from the book): solve ``(M - g c S) w = b`` with ``g`` picked from ``0, 0.05, ..., 1`` (capped by
Fuller's ``g`` when both are given; the cap itself is a candidate; ``c`` the centred share above, each training
fold with its own) by K-fold cross-validation of the *corrected*
held-out risk ``w^T (M_k - S_k) w - 2 b_k^T w`` (fold ``k``'s own moments and noise covariance), which is an
unbiased estimate of the clean-input squared error of ``w`` up to a constant -- so the folds score what the
estimator is for (prediction at clean inputs), not the noisy-input error that ordinary least squares on the
mean already minimises.  ``g = 0`` is least squares on the means, ``g = 1`` the full correction.  The choice is
the **one-standard-error rule** with the full correction as the preferred model (:func:`one_se_scale`): the
largest ``g`` whose held-out risk is within one (paired, fold-level) standard error of the least -- the full,
consistent correction unless the folds clearly say it is ill-posed (a corrected Gram near-singular relative to
its sampling noise: few items, heavy noise, many features), where it comes down towards least squares on the
means.  On the practice experiment's grid (5 seeds, with an intercept) it keeps ``g = 1`` in every ``d = 3`` cell and
every ``n = 2000`` cell but two (0.96 and 0.98 at ``d = 20, r = 2``), and picks 0.58-0.85 in the ill-posed
``n = 200, d = 20`` cells (``lambda <= 0.8``; docs/practice.md).
The plain minimiser of the held-out risk chooses 0.7-0.9 even where the full correction is
better (0.927 against 0.954 R^2 at ``n = 200, d = 3, m = 2, r = 2``).  Items go to folds by position
(``i mod K``): deterministic.
"""

from __future__ import annotations

import math

import numpy as np

from nolo._config import Configurable
from nolo._threads import one_blas_thread
from nolo._validation import check_array, check_bool, check_int, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.kernels.surrogate import check_noise_covariance

__all__ = [
    "replicate_covariance",
    "average_replicates",
    "corrected_least_squares",
    "corrected_covariance",
    "total_least_squares",
    "ball_constrained_quadratic",
    "with_constant_feature",
    "fuller_scale",
    "centred_noise_share",
    "cv_correction_scale",
    "corrected_cv_risks",
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


def _items(X):
    """``X`` as ``(n, d)``, ``(n, m, d)`` or a ragged list of ``(m_i, d)`` arrays -> ``(means (n, d), items or None)``;
    ``items`` is the ``(n, m, d)`` array or the list (None for one reading per item)."""
    if isinstance(X, (list, tuple)):
        from nolo.noise.pool import as_measurement_items

        try:
            items = as_measurement_items(X)
        except ParameterError as exc:
            raise ParameterError(str(exc).replace("data", "X")) from None
        return np.stack([a.mean(axis=0) for a in items]), items
    X = check_array(X, "X", ndim=(2, 3))
    if X.ndim == 2:
        return X, None
    return X.mean(axis=1), X


def _pooled_covariance(items) -> np.ndarray:
    """Pooled within-item covariance ``sum_i sum_k (x_ik - xbar_i)(x_ik - xbar_i)^T / sum_i (m_i - 1)`` of ragged
    readings (items with one reading add nothing); unbiased for ``Sigma``."""
    if isinstance(items, np.ndarray):
        return replicate_covariance(items)
    dof = sum(a.shape[0] - 1 for a in items)
    if dof <= 0:
        raise ParameterError("estimating the noise covariance needs at least one item with m_i >= 2 readings; "
                             "every item of X has one")
    d = items[0].shape[1]
    acc = np.zeros((d, d))
    for a in items:
        D = a - a.mean(axis=0)
        acc += D.T @ D
    return acc / dof


def _reading_covariance(noise_cov, items, d: int) -> np.ndarray:
    """The covariance of ONE reading: ``noise_cov`` checked, or ``"estimate"`` pooled over ``items`` (None: one
    reading per item, which cannot estimate it)."""
    if not isinstance(noise_cov, str):
        return check_noise_covariance(noise_cov, d)
    if noise_cov != "estimate":
        raise ParameterError(f"noise_cov must be a covariance or 'estimate', got {noise_cov!r}")
    if items is None:
        raise ParameterError("noise_cov='estimate' needs repeated measurements X of shape (n, m>=2, d) "
                             "or a list of (m_i, d) arrays")
    return _pooled_covariance(items)


def average_replicates(X, noise_cov):
    """``(x_bar (n, d), Sigma_bar (d, d))``: per-item means and their average noise covariance ``Sigma mean_i(1/m_i)``.

    ``X`` is ``(n, d)`` (one copy: returned as is with ``Sigma``), ``(n, m, d)`` (``Sigma / m``) or a list of
    ``(m_i, d)`` arrays (ragged); ``noise_cov`` a scalar, variances, matrix, or ``"estimate"`` (the pooled
    within-item covariance, :func:`replicate_covariance` for equal ``m``).
    """
    Xb, items = _items(X)
    S = _reading_covariance(noise_cov, items, Xb.shape[-1])
    if items is None:
        return Xb, S
    if isinstance(items, np.ndarray):
        return Xb, S / items.shape[1]
    return Xb, S * float(np.mean([1.0 / a.shape[0] for a in items]))


def centred_noise_share(n: float, centred: bool) -> float:
    """``c = (n - 1)/n`` with an intercept (``centred``), else 1: the share of the means' noise covariance ``S`` in
    their second moment with divisor ``n`` once the intercept is fitted.

    With an intercept the slopes solve the centred normal equations, and for independent item means ``xbar_i``
    whose noise has covariance ``S_i`` (``Sigma / m_i``), ``E sum_i (xbar_i - xbar)(xbar_i - xbar)^T = (n - 1)
    (C + S)`` with ``C`` the clean centred covariance and ``S = mean_i S_i``: the noise term is ``sum_i S_i (1 -
    2/n) + sum_j S_j / n = (n - 1) S`` for unequal ``S_i`` too.  The centred moments with divisor ``n - 1`` are
    unbiased for ``C + S``, so the consistent correction subtracts ``S`` from them, i.e. ``c S`` from the divisor-``n``
    moments ``M``; subtracting ``S`` from ``M`` would over-correct by ``S / n`` (Fuller 1987, section 2.2: the
    moments ``m_XX`` about the mean, on ``n - 1`` degrees of freedom, minus the error covariance)."""
    n = float(n)
    return (n - 1.0) / n if centred else 1.0


def fuller_scale(M, S, n: int, alpha: float, *, b=None, m_yy: float | None = None,
                 dof: float | None = None) -> tuple[float, float]:
    """``(lambda_hat, g)``: the smallest root ``lambda_hat`` of a determinantal equation and Fuller's correction
    scale ``g = min((nu - alpha)/n, lambda_hat - (1 + alpha)/n)`` as a multiple of ``S`` (module docstring), ``n``
    the divisor of ``M`` and ``nu`` (``dof``, default ``n``) the degrees of freedom of the moments (``n - 1`` when
    they are centred).  In the book's terms (moments on ``nu`` degrees of freedom) the root is ``(n/nu)
    lambda_hat`` and the scale ``(n/nu) g``, the share of the consistent correction ``(nu/n) S``.

    With ``b`` (the cross moments ``Xbar^T y / n``) and ``m_yy`` (``y^T y / n``): Fuller's root, of the joint
    equation ``|M_ZZ - lambda blockdiag(0, S)| = 0`` for ``Z = (y, x)`` (1987, section 2.5.1) -- the target is
    minimised out with the noiseless directions, leaving ``|M - b b^T / m_yy - lambda S| = 0`` on ``S``'s range.
    Without them: the root of ``|M - lambda S| = 0``, which says whether the corrected Gram ``M - S`` is positive
    definite (``lambda_hat > 1``).

    ``S`` may be singular (a noiseless feature, the intercept's constant): the root is taken on ``S``'s range after
    minimising over its null space (the Schur complement of ``M``); ``S = 0`` gives ``lambda_hat = inf``.  A target
    the noiseless features explain exactly (a constant target with an intercept) adds nothing to the joint
    equation and is left out.
    """
    M = 0.5 * (np.asarray(M, dtype=float) + np.asarray(M, dtype=float).T)
    s, V = np.linalg.eigh(0.5 * (S + S.T))
    keep = s > 1e-12 * max(float(s[-1]), 1e-300)
    nu = float(n if dof is None else dof)
    if not np.any(keep):
        return math.inf, (nu - alpha) / n
    P = V[:, keep] / np.sqrt(s[keep])
    K = P.T @ M @ P
    c = None if b is None else P.T @ np.asarray(b, dtype=float)
    r = None if b is None else float(m_yy)
    if not np.all(keep):
        N = V[:, ~keep]
        MN = M @ N
        try:
            F = np.linalg.solve(N.T @ MN, np.column_stack([MN.T @ P] + ([] if b is None else [N.T @ b])))
        except np.linalg.LinAlgError:
            raise NumericalError("the moment matrix is singular on the noiseless directions (a constant or "
                                 "duplicated noiseless feature?)") from None
        K = K - (P.T @ MN) @ F[:, :K.shape[0]]
        if b is not None:
            c = c - (P.T @ MN) @ F[:, -1]
            r = r - float((N.T @ b) @ F[:, -1])
    if b is not None and r > 1e-12 * max(float(m_yy), 1e-300):
        K = K - np.outer(c, c) / r
    lam = float(np.linalg.eigvalsh(0.5 * (K + K.T))[0])
    return lam, min((nu - alpha) / n, lam - (1.0 + alpha) / n)


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


#: the correction scales the cross-validation compares
CV_GRID = np.linspace(0.0, 1.0, 21)


def _fold_moments(X, noise_cov, folds: int):
    """What cross-validation needs: ``(means (n, d), fold of each item (n,), per-fold noise covariance of the
    means (K, d, d))``; a fold's noise covariance comes from its own items (for ``"estimate"``: the pooled
    within-item spread of the fold's items)."""
    Xb, items = _items(X)
    n, d = Xb.shape
    fold = np.arange(n) % folds
    S_k = np.empty((folds, d, d))
    inv_m = np.ones(n) if items is None else (
        np.full(n, 1.0 / items.shape[1]) if isinstance(items, np.ndarray) else np.array([1.0 / a.shape[0] for a in items]))
    for k in range(folds):
        idx = np.flatnonzero(fold == k)
        sub = None if items is None else items[idx] if isinstance(items, np.ndarray) else [items[i] for i in idx]
        S_k[k] = _reading_covariance(noise_cov, sub, d) * float(np.mean(inv_m[idx]))
    return Xb, fold, S_k


def corrected_cv_fold_risks(G_k, C_k, b_k, counts, grid, centred: bool = False) -> np.ndarray:
    """Held-out corrected risk of each correction scale in ``grid``, fold by fold, from per-fold sums: ``G_k``
    (K, p, p) ``sum xbar xbar^T``, ``C_k`` (K, p, p) the summed noise covariances of the means, ``b_k`` (K, p)
    ``sum xbar y`` and ``counts`` (K,) items per fold.  Row ``k`` is ``n_k (w^T (M_k - S_k) w - 2 b_k^T w)`` with
    ``w`` fitted on the other folds (0 for a fold with no item); ``inf`` in every row where a training system
    ``M - g c S`` is not positive definite (``c`` = :func:`centred_noise_share` of the training items: with
    ``centred``, an intercept, ``(n_t - 1)/n_t``, the estimator's own correction on those items).  Shared by
    :func:`cv_correction_scale` and the online learner.

    One Cholesky factor ``M = L L^T`` and one eigendecomposition ``L^{-1} S L^{-T} = V diag(k) V^T`` per fold
    give every grid point in ``O(p^2)``: ``(M - g S)^{-1} = L^{-T} V diag(1 / (1 - g k)) V^T L^{-1}``, positive
    definite iff ``g max(k) < 1``.  BLAS runs single-threaded here: on a loaded machine threaded BLAS on these
    small matrices measures 10x slower (69 ms for a 201 x 201 Cholesky factor)."""
    with one_blas_thread():
        return _cv_fold_risks(G_k, C_k, b_k, counts, np.asarray(grid, dtype=float), bool(centred))


def corrected_cv_risks(G_k, C_k, b_k, counts, grid, centred: bool = False) -> np.ndarray:
    """Summed held-out corrected risk of each correction scale in ``grid`` (:func:`corrected_cv_fold_risks`
    summed over the folds)."""
    return corrected_cv_fold_risks(G_k, C_k, b_k, counts, grid, centred).sum(axis=0)


def _cv_fold_risks(G_k, C_k, b_k, counts, grid, centred=False) -> np.ndarray:
    risks = np.zeros((len(counts), len(grid)))
    total = float(np.sum(counts))
    G, C, B = G_k.sum(0), C_k.sum(0), b_k.sum(0)
    for k in range(len(counts)):
        if counts[k] <= 0 or total - counts[k] <= 0:
            continue
        nt = total - counts[k]
        M, S, b = (G - G_k[k]) / nt, (C - C_k[k]) * (centred_noise_share(nt, centred) / nt), (B - b_k[k]) / nt
        Hv, bv = (G_k[k] - C_k[k]) / counts[k], b_k[k] / counts[k]
        try:
            L = np.linalg.cholesky(0.5 * (M + M.T))
        except np.linalg.LinAlgError:
            risks[:] = math.inf
            break
        Li = np.linalg.inv(L)  # lower triangular: the whitening of the training moments
        ev, V = np.linalg.eigh(Li @ (0.5 * (S + S.T)) @ Li.T)
        W = Li.T @ V  # w_g = W (c / (1 - g ev))
        c = W.T @ b
        Q = W.T @ Hv @ W
        r = W.T @ bv
        den = 1.0 - grid[:, None] * ev[None, :]  # (grid, p)
        ok = den.min(axis=1) > 1e-12
        Z = c[None, :] / np.where(ok[:, None], den, 1.0)
        fold_risk = np.einsum("gi,ij,gj->g", Z, Q, Z) - 2.0 * (Z @ r)
        risks[k] = counts[k] * fold_risk
        risks[:, ~ok] = math.inf
    return risks


def one_se_scale(fold_risks, grid) -> float:
    """The correction scale the cross-validation picks from per-fold risks ``(K, len(grid))``
    (:func:`corrected_cv_fold_risks`): the LARGEST scale whose summed held-out risk exceeds the least one by at
    most one standard error of the difference (the one-standard-error rule of Breiman, Friedman, Olshen & Stone,
    *Classification and Regression Trees*, 1984, ch. 3, and Hastie, Tibshirani & Friedman, *The Elements of
    Statistical Learning*, 2nd ed. 2009, section 7.10.1, with the full correction as the preferred model).

    The standard error of ``sum_k (r_k(g) - r_k(g*))`` (``g*`` the minimiser) is ``sqrt(K' s^2)`` with ``s^2`` the
    sample variance of the ``K'`` non-empty folds' differences: paired, so the fold-to-fold spread common to both
    scales cancels.  So the full, unbiased correction (``g = 1``) stays unless the folds show clearly that a
    partial one predicts the clean inputs better -- on small, noisy samples, where the corrected Gram is nearly
    singular and the full correction's variance exceeds the bias it removes.  ``nan`` if no scale is finite."""
    R = np.asarray(fold_risks, dtype=float)
    grid = np.asarray(grid, dtype=float)
    total = R.sum(axis=0)
    finite = np.isfinite(total)
    if not np.any(finite):
        return math.nan
    best = int(np.argmin(np.where(finite, total, math.inf)))
    live = np.any(R != 0.0, axis=1)  # empty folds contribute 0 to every scale
    D = R[live][:, finite] - R[live][:, [best]]
    k = D.shape[0]
    se = np.sqrt(k * D.var(axis=0, ddof=1)) if k >= 2 else np.zeros(D.shape[1])
    ok = (total[finite] - total[best]) <= se
    return float(grid[finite][ok].max())


def choose_correction_scale(G_k, C_k, b_k, counts, grid=None, centred: bool = False) -> float:
    """The cross-validated correction scale from per-fold sums (:func:`corrected_cv_fold_risks`, then
    :func:`one_se_scale`; ``grid`` defaults to :data:`CV_GRID`): the rule of ``cv_folds`` in
    :class:`CorrectedLeastSquares` and :class:`nolo.learners.linear.BiasCompensatedRLS`.  ``nan`` if no scale
    gives positive definite training systems."""
    grid = CV_GRID if grid is None else np.asarray(grid, dtype=float)
    return one_se_scale(corrected_cv_fold_risks(G_k, C_k, b_k, counts, grid, centred), grid)


def cv_correction_scale(X, y, noise_cov, folds: int = 5, g_max: float = 1.0,
                        centred: bool = False) -> tuple[float, np.ndarray]:
    """``(g, risks)``: the cross-validated correction scale (the one-standard-error rule, :func:`one_se_scale`)
    among ``CV_GRID``'s points below ``g_max`` and ``g_max`` itself, and the summed held-out risk of every grid
    point (``inf`` where a training fold's ``M - g c S`` is not positive definite; ``centred``: the estimator fits
    an intercept, ``c`` as in :func:`corrected_cv_fold_risks`)."""
    K = check_int(folds, "cv_folds", low=2, high=1000)
    Xb, fold, S_k = _fold_moments(X, noise_cov, K)
    yv = check_array(y, "y", shape=(Xb.shape[0],))
    if Xb.shape[0] < 2 * K:
        raise ParameterError(f"cv_folds={K} needs at least {2 * K} items, got {Xb.shape[0]}")
    counts = np.bincount(fold, minlength=K).astype(float)
    G_k = np.stack([Xb[fold == k].T @ Xb[fold == k] for k in range(K)])
    b_k = np.stack([Xb[fold == k].T @ yv[fold == k] for k in range(K)])
    grid = np.append(CV_GRID[CV_GRID < g_max - 1e-12], g_max) if g_max < 1.0 else CV_GRID
    fold_risks = corrected_cv_fold_risks(G_k, S_k * counts[:, None, None], b_k, counts, grid, centred)
    g = one_se_scale(fold_risks, grid)
    if not math.isfinite(g):
        raise NumericalError("cross-validated correction: no correction scale gives a positive definite system")
    return g, fold_risks.sum(axis=0)


def corrected_least_squares(X, y, noise_cov, radius: float | None = None, *, fuller_alpha: float | None = None,
                            cv_folds: int | None = None) -> np.ndarray:
    """Errors-in-variables corrected least squares ``(X~^T X~/n - Sigma)^{-1} X~^T y~ / n``.

    ``X`` is ``(n, d)``, repeated measurements ``(n, m, d)`` or a ragged list of ``(m_i, d)`` arrays (averaged per
    item; the correction is ``Sigma mean_i(1/m_i)``); ``noise_cov`` is the covariance of one copy, or
    ``"estimate"`` (from the replicates).  ``fuller_alpha``: Fuller's small-sample modification (module
    docstring) -- the solved matrix ``M - g S`` is then positive definite by construction.  ``cv_folds``: the
    correction scale ``g`` by K-fold cross-validation of the corrected risk (module docstring; at least
    ``2 K`` items).  Without either (the default of this function; :class:`CorrectedLeastSquares` cross-validates
    by default), the corrected moment matrix must be positive definite (else :class:`NumericalError`: the sample
    is too small for the noise level -- give ``cv_folds``, ``radius`` or ``fuller_alpha``); with ``radius`` the
    minimiser over the ball is returned (of the modified quadratic when ``fuller_alpha`` is given too).
    """
    return _corrected_fit(X, y, noise_cov, radius, fuller_alpha, cv_folds, few_items="raise")[0]


def _corrected_fit(X, y, noise_cov, radius, fuller_alpha, cv_folds, few_items: str, centred: bool = False,
                   scale: float | None = None):
    """``(w, g, lambda_hat or None)``; ``few_items="full"``: fewer than ``2 K`` items skip the cross-validation
    (the full correction), ``"raise"``: ParameterError.  ``centred``: the moments are about the mean (an intercept,
    as a constant feature or centred beforehand): Fuller's degrees of freedom are ``n - 1``.  ``scale``: solve
    with this correction scale (neither Fuller's nor the cross-validated one; the bootstrap's replicates)."""
    Xb, S = average_replicates(X, noise_cov)
    yv = check_array(y, "y", shape=(Xb.shape[0],))
    n = Xb.shape[0]
    nu = n - int(bool(centred))
    if nu < 1:
        raise ParameterError(f"corrected least squares with an intercept needs at least 2 items, got {n}")
    c = centred_noise_share(n, centred)
    M = Xb.T @ Xb / n
    g, lam = 1.0, None
    if scale is not None:
        g, fuller_alpha, cv_folds = float(scale), None, None
    if fuller_alpha is not None:
        a = check_scalar(fuller_alpha, "fuller_alpha", low=0.0, high=1e6)
        lam, g_raw = fuller_scale(M, S, n, a, b=Xb.T @ yv / n, m_yy=float(yv @ yv) / n, dof=nu)
        g = g_raw / c  # the same solved matrix M - g_raw S, as a share of the consistent correction c S
    if cv_folds is not None:
        K = check_int(cv_folds, "cv_folds", low=2, high=1000)
        if n >= 2 * K or few_items == "raise":
            g, _ = cv_correction_scale(X, yv, noise_cov, K, g_max=g, centred=centred)
    A = M - (g * c) * S
    b = Xb.T @ yv / n
    if radius is not None:
        return ball_constrained_quadratic(A, b, radius), g, lam
    ev = np.linalg.eigvalsh(A)
    if ev[0] <= 1e-12 * max(abs(ev[-1]), 1e-300):
        raise NumericalError(
            f"the corrected moment matrix X^T X/n - Sigma is not positive definite (smallest eigenvalue {ev[0]:.3g}): "
            "too few samples for this noise level, or Sigma overstated; pass cv_folds= (the cross-validated "
            "correction scale), fuller_alpha= (Fuller's small-sample modification) or radius= for the constrained "
            "estimate"
        )
    return np.linalg.solve(A, b), g, lam


def corrected_covariance(X, y, coef, intercept: float | None, noise_cov, scale: float = 1.0, *,
                         pooled: bool = True) -> np.ndarray:
    """The sandwich (heteroscedasticity-robust) covariance of corrected least squares' ``(coef[, intercept])``.

    The estimate solves ``sum_i phi_i(theta) = 0`` with, per item ``i`` (``z_i = [xbar_i, 1]`` with an intercept),

        phi_i = z_i (y_i - z_i^T theta) + g c C_i theta,

    ``C_i`` the item's share of the correction: ``Sigma / m_i`` for a known ``Sigma``; for ``noise_cov="estimate"``
    ``(n h / dof) D_i`` with ``D_i`` the item's within scatter, ``dof = sum_i (m_i - 1)`` and ``h = mean_i 1/m_i``
    (so that ``sum_i C_i = n h Sigma_hat``: the estimated covariance's own sampling error enters the meat); with
    ``pooled=False`` each item's own estimate ``D_i / (m_i (m_i - 1))`` instead (every ``m_i >= 2``: the per-item
    correction of :class:`nolo.learners.linear.BiasCompensatedRLS`' ``noise="repeated"``).  With
    ``A = sum_i z_i z_i^T - g c sum_i C_i`` and ``B`` the centred sum of ``phi_i phi_i^T``, the covariance is
    ``n / (n - p) A^-1 B A^-T`` (the M-estimation sandwich; Fuller 1987 section 2.2, Carroll et al., *Measurement
    Error in Nonlinear Models*, 2006, appendix B.1) with the degrees-of-freedom factor ``n / (n - p)`` for the ``p``
    coefficients fitted (HC1, MacKinnon & White 1985): without it the standard errors ran about 5 % short at
    ``n = 100`` (95 % intervals covering 0.927 of 1,000 fits).  ``c`` is :func:`centred_noise_share`: ``(n - 1)/n``
    with an intercept (the consistent correction of the centred moments), 1 without.  ``scale`` is the correction
    scale ``g`` the fit used (a share of that consistent correction); the sandwich treats it as fixed (a
    cross-validated ``g`` below 1 makes the interval optimistic).  NaN when it is not defined (no more items than
    coefficients, a singular ``A``).
    """
    Xb, items = _items(X)
    n, d = Xb.shape
    yv = check_array(y, "y", shape=(n,))
    theta = np.append(np.asarray(coef, dtype=float), [] if intercept is None else [float(intercept)])
    Z = np.concatenate([Xb, np.ones((n, 1))], axis=1) if intercept is not None else Xb
    p = Z.shape[1]
    counts = np.full(n, 1.0) if items is None else (
        np.full(n, float(items.shape[1])) if isinstance(items, np.ndarray) else
        np.array([a.shape[0] for a in items], dtype=float))
    C = np.zeros((n, p, p))
    if isinstance(noise_cov, str):
        if noise_cov != "estimate" or items is None:
            raise ParameterError("noise_cov='estimate' needs repeated readings")
        dof = float(np.sum(counts - 1.0))
        if dof <= 0:
            raise ParameterError("estimating the noise covariance needs an item with 2 or more readings")
        if not pooled and np.min(counts) < 2:
            raise ParameterError("each item's own noise estimate (pooled=False) needs 2 or more readings per item")
        f = np.full(n, n * float(np.mean(1.0 / counts)) / dof) if pooled else 1.0 / (counts * (counts - 1.0))
        if isinstance(items, np.ndarray):  # equal counts: every item's scatter in one contraction
            D = items - items.mean(axis=1, keepdims=True)
            C[:, :d, :d] = f[:, None, None] * np.einsum("nmi,nmj->nij", D, D)
        else:
            for i, a in enumerate(items):
                D = a - a.mean(axis=0)
                C[i, :d, :d] = f[i] * (D.T @ D)
    else:
        S = check_noise_covariance(noise_cov, d)
        C[:, :d, :d] = S[None] / counts[:, None, None]
    resid = yv - Z @ theta
    gc = float(scale) * centred_noise_share(n, intercept is not None) if n >= 2 else float(scale)
    phi = Z * resid[:, None] + gc * (C @ theta)
    phi = phi - phi.mean(axis=0)
    A = Z.T @ Z - gc * C.sum(axis=0)
    if n <= p:  # no more items than coefficients: the sandwich is not defined
        return np.full((p, p), np.nan)
    try:
        Ainv = np.linalg.inv(A)
    except np.linalg.LinAlgError:
        return np.full((p, p), np.nan)
    return (n / (n - p)) * (Ainv @ (phi.T @ phi) @ Ainv.T)


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
    """``X`` (``(n, d)``, ``(n, m, d)`` or a list of ``(m_i, d)`` arrays) with a constant feature 1 appended, and
    ``noise_cov`` padded with its zero noise: the intercept as one more coefficient (``"estimate"`` stays:
    replicates of 1 have no spread)."""
    if isinstance(X, (list, tuple)):
        _, items = _items(X)
        Xa = [np.concatenate([a, np.ones((a.shape[0], 1))], axis=1) for a in items]
        d = items[0].shape[1]
    else:
        X = check_array(X, "X", ndim=(2, 3))
        Xa = np.concatenate([X, np.ones(X.shape[:-1] + (1,))], axis=-1)
        d = X.shape[-1]
    if isinstance(noise_cov, str):
        return Xa, noise_cov
    S = check_noise_covariance(noise_cov, d)
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
    counterpart of :class:`nolo.learners.linear.BiasCompensatedRLS`' default, and corrects the centred moments
    by the share ``(n - 1)/n`` of the noise they hold -- module docstring),
    ``fuller_alpha`` (None, or ``alpha >= 0`` for Fuller's small-sample
    modification, 1987 section 2.5.1 -- see the module docstring; 1 nearly unbiased, 4 a smaller mean squared
    error),
    ``cv_folds`` (default 5; ``K >= 2``: the correction scale by K-fold cross-validation of
    the corrected clean-input risk with the one-standard-error rule, module docstring -- the guard that turns
    the correction down only where it is ill-posed; with fewer than ``2 K`` items the full correction;
    None: always the full correction).
    ``fit(X, y)`` with ``X`` of shape ``(n, d)``, ``(n, m, d)`` or a list of
    ``(m_i, d)`` arrays.  Fitted: ``coef_``, ``intercept_`` and, with
    ``fuller_alpha``, ``lambda_hat_`` (the root on the divisor-``n`` moments; the book's is ``n/nu`` times it), and
    with ``fuller_alpha`` or ``cv_folds`` ``correction_scale_`` (``g``, the share of the consistent correction; 1
    otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.batch import CorrectedLeastSquares
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2))
    >>> R = X[:, None, :] + rng.normal(size=(500, 2, 2))   # 2 readings, noise variance 1 each
    >>> y = X @ np.array([1.0, -1.0])
    >>> est = CorrectedLeastSquares().fit(R, y)
    >>> est.coef_.round(2), est.correction_scale_   # 500 items: the folds keep the full correction
    (array([ 0.97, -1.03]), 1.0)
    >>> est = CorrectedLeastSquares(fuller_alpha=1, cv_folds=None).fit(R, y)
    >>> round(est.lambda_hat_, 2), round(est.correction_scale_, 3)   # y has no error: the joint root is near 1
    (0.96, 0.955)
    """

    #: set by :meth:`nolo.sklearn_api.CorrectedLeastSquaresRegressor.bootstrap`: every replicate solves with the
    #: fitted correction scale
    _fixed_scale = None

    def __init__(self, noise_cov="estimate", radius=None, fit_intercept=False, fuller_alpha=None, cv_folds=5):
        self.noise_cov = noise_cov
        self.radius = radius
        self.fit_intercept = fit_intercept
        self.fuller_alpha = fuller_alpha
        self.cv_folds = cv_folds

    def _validate_params(self) -> None:
        check_bool(self.fit_intercept, "fit_intercept")
        if self.fuller_alpha is not None:
            check_scalar(self.fuller_alpha, "fuller_alpha", low=0.0, high=1e6)
        if self.cv_folds is not None:
            check_int(self.cv_folds, "cv_folds", low=2, high=1000)

    def fit(self, X, y) -> "CorrectedLeastSquares":
        self._validate_params()
        Xa, S = with_constant_feature(X, self.noise_cov) if self.fit_intercept else (X, self.noise_cov)
        w, g, lam = _corrected_fit(Xa, y, S, self.radius, self.fuller_alpha, self.cv_folds, few_items="full",
                                   centred=bool(self.fit_intercept), scale=self._fixed_scale)
        coef, intercept = (w[:-1], float(w[-1])) if self.fit_intercept else (w, 0.0)
        if lam is not None:
            self.lambda_hat_ = lam
        self.correction_scale_ = g
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
