"""Scikit-learn-style estimators for input noise of known covariance (CSS11): fit on repeated noisy readings,
predict on clean inputs.

A practitioner's data: ``n`` items, each measured ``m_i`` times, one target per item, in any layout of
:mod:`nolo.sklearn_api._inputs` (3-D array, ragged list, or a long table with ``groups``).  The linear
estimators run the CSS11 learner (projected OGD on an unbiased gradient estimate) over the items:

* **all readings are used**: Setting 1 (:class:`TwoCopyRegressor`) steps along the U-statistic form of Lemma 1's
  estimate over all ``m`` readings of an item (``copies="all"`` of
  :class:`nolo.learners.linear.TwoCopyLinearRegression`; with a ragged layout, over the means of the two halves
  of each item's readings); Algorithm 2 needs two *independent* views, so each item's readings are split into two
  halves and each half is averaged; Setting 2 averages all ``m_i`` readings and corrects with ``Sigma / m_i``;
* **scale-free**: the learner runs on standardised readings and targets (:mod:`nolo.sklearn_api._scaling`),
  undone for ``coef_`` / ``intercept_``; ``fit_intercept=True`` by default.  ``radius`` bounds the norm of the
  *standardised* coefficients (default ``10 sqrt(d)``: the projection is a safeguard, not a prior);
* **several passes**: ``fit`` plays up to ``max_iter`` passes (items in a seeded random order per pass) until
  the coefficients move less than ``tol`` (relative) between passes, else
  :class:`sklearn.exceptions.ConvergenceWarning`; a :class:`nolo.sklearn_api.ProjectionWarning` says when the
  projection was active at most checkpoints (10 per pass) of the last pass.  ``coef_`` is the online-to-batch
  average of all iterates played.
* **step**: ``None`` (default) is a constant step ``1 / (8 R^2)`` with ``R^2`` the mean squared norm of the
  standardised inputs the learner sees -- with the averaged iterate, the constant-step least-squares SGD of
  Bach & Moulines (NeurIPS 2013), which converges for unbiased gradient estimates linear in ``w`` as these are;
  ``"theory"`` is the paper's theory step ``B_w / sqrt(G T)`` from the sample moments with ``T = n max_iter``;
  a number or a :mod:`nolo.oco.steps` rule is used as given.

``partial_fit`` plays one pass over the new items; the standardisation is fitted on the first batch and kept.
"""

from __future__ import annotations

import math

import numpy as np

import warnings

from nolo._validation import check_bool, check_choice, check_scalar
from nolo.batch.eiv import fuller_scale
from nolo.exceptions import NumericalError, ParameterError
from nolo.kernels.radial import RadialKernelApproximation
from nolo.kernels.surrogate import GaussianSurrogateKernel, compact_noise_covariance
from nolo.learners.kernel.gaussian_noise import GaussianNoiseKernelRegression
from nolo.learners.linear import KnownCovarianceLinearRegression, TwoCopyLinearRegression
from nolo.oco.steps import check_step
from nolo.random import as_generator
from nolo.sklearn_api._base import IllPosedCorrectionWarning, check_n_features, feature_names, prediction_inputs
from nolo.sklearn_api._inputs import item_targets, target_vector
from nolo.sklearn_api._linear import LinearReadingsRegressor
from nolo.sklearn_api._scaling import Standardizer

__all__ = ["TwoCopyRegressor", "KnownCovarianceRegressor", "GaussianNoiseKernelRegressor"]

_CHECKPOINTS = 10


def _two_views(R, combine: bool) -> tuple[np.ndarray, np.ndarray]:
    """Two independent views per item ``(n, 2, d)`` (the means of the two halves of its readings, or its first
    two readings) and the number of readings ``k_i`` averaged in each view."""
    if R.dense is not None:
        X = R.dense
        if not combine:
            return X[:, :2, :], np.ones(X.shape[0], dtype=np.int64)
        k = X.shape[1] // 2
        V = np.stack([X[:, :k].mean(axis=1), X[:, k : 2 * k].mean(axis=1)], axis=1)
        return V, np.full(X.shape[0], k, dtype=np.int64)
    V = np.empty((R.n_items, 2, R.n_features))
    ks = np.empty(R.n_items, dtype=np.int64)
    for i, a in enumerate(R.items()):
        k = a.shape[0] // 2 if combine else 1
        V[i, 0], V[i, 1] = a[:k].mean(axis=0), a[k : 2 * k].mean(axis=0)
        ks[i] = k
    return V, ks


class _PerItemCovariance:
    """``t -> Sigma / k_t``: the noise covariance of the averaged readings played at round ``t`` (items with
    different numbers of readings); rounds are appended as they are scheduled."""

    def __init__(self, S: np.ndarray):
        self.S = S
        self.k = np.zeros(0, dtype=np.int64)

    def extend(self, k: np.ndarray) -> None:
        self.k = np.concatenate([self.k, k])

    def __call__(self, t: int) -> np.ndarray:
        return self.S / self.k[t - 1]  # variances stay variances (the learner's schedule keeps them so)


class _KnownNoiseRegressor(LinearReadingsRegressor):
    """The CSS11 linear learners (projected OGD) under :class:`LinearReadingsRegressor`: radius and step."""

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.radius is not None:
            check_scalar(self.radius, "radius", low=0.0, low_inclusive=False, high=1e100)
        if self.step is not None and not (isinstance(self.step, str) and self.step == "theory"):
            if isinstance(self.step, str):
                raise ParameterError(f"step must be None, 'theory', a positive number or a step rule, got {self.step!r}")
            check_step(self.step)
        check_bool(self.combine_copies, "combine_copies")

    def _radius(self, d: int) -> float:
        return float(self.radius) if self.radius is not None else 10.0 * math.sqrt(d)

    def _step(self, V: np.ndarray, y: np.ndarray, horizon: int) -> dict:
        if self.step is None:
            r2 = float(np.mean(np.einsum("ij,ij->i", V[:, 0], V[:, -1] if V.shape[1] > 1 else V[:, 0])))
            r2 = max(r2, float(np.mean(np.sum(V[:, 0] ** 2, axis=1))), 1e-12)
            return {"step": 1.0 / (8.0 * r2)}
        if isinstance(self.step, str):  # "theory"
            Bx = math.sqrt(max(float(np.mean(np.sum(V[:, 0] ** 2, axis=1))), 1e-300))
            return {"step": None, "x_bound": Bx, "y_bound": math.sqrt(float(np.mean(y**2))), "horizon": int(horizon)}
        return {"step": self.step}

    def _play(self, learner, cov, V, ys, k, order) -> float:
        """Play the items in ``order`` in chunks; the fraction of chunk ends at which ``||w|| = radius``."""
        radius = self._radius(V.shape[2])
        bound = 0
        chunks = [c for c in np.array_split(order, min(_CHECKPOINTS, len(order))) if len(c)]
        if cov is not None:
            cov.extend(k[order])
        for c in chunks:
            learner.learn_stream(V[c], ys[c])
            bound += np.linalg.norm(learner.w_) >= radius * (1 - 1e-9)
        return bound / len(chunks)

    def _coef_std(self, learner):
        return learner.average_, 0.0

    def _moments(self, V, k, scaler) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - overridden
        """``(M, S)``: the mean second moment of the items' averaged readings and their mean noise covariance."""
        raise NotImplementedError

    def _fuller_root(self, V, k, scaler) -> float:
        """The smallest root ``lambda_hat`` of ``|M - lambda S| = 0`` for :meth:`_moments` (0 when it fails)."""
        try:
            return fuller_scale(*self._moments(V, k, scaler), V.shape[0], 0.0)[0]
        except NumericalError:
            return 0.0

    def _diagnose(self, V, k, scaler, learner) -> None:
        """:class:`IllPosedCorrectionWarning` when the corrected Gram ``M - S`` is indefinite or nearly singular
        (``lambda_hat <= 1 + 1/n``, Fuller's threshold) or the last iterate is on the ball's edge."""
        causes = []
        n = V.shape[0]
        lam = self._fuller_root(V, k, scaler)
        if lam <= 1.0 + 1.0 / n:
            causes.append(f"the corrected Gram matrix mean(xbar xbar^T) - S is {'indefinite' if lam < 1 else 'singular'}"
                          f" (smallest root lambda_hat = {lam:.3g} of |M - lambda S| = 0, at most 1 + 1/n: the noise "
                          f"removes all the signal along some direction for these {n} items)")
        radius = self._radius(V.shape[2])
        if np.linalg.norm(learner.w_) >= radius * (1 - 1e-6):
            causes.append(f"the last iterate is on the ball ||w|| = radius = {radius:.3g} (standardised)")
        if causes:
            warnings.warn(
                f"{type(self).__name__}: ill-posed errors-in-variables fit -- {'; and '.join(causes)}. Projected OGD "
                "on this problem is set by the constraint, not the data (R^2 can fall far below least squares on the "
                "mean readings). Use nolo.sklearn_api.EIVRegressor or CorrectedLeastSquaresRegressor (by default they "
                "scale the correction down where 5-fold cross-validation shows it ill-posed), or give more items or "
                "readings per item.",
                IllPosedCorrectionWarning, stacklevel=4)


class TwoCopyRegressor(_KnownNoiseRegressor):
    """CSS11 Setting 1 (Algorithm 1 left, Lemma 1; ``G`` corrected, erratum E10) as an estimator: no noise
    model, at least 2 readings per item.

    Parameters
    ----------
    fit_intercept : bool, default True
    radius : float > 0 or None
        ``B_w``, bound on the norm of the standardised coefficients (None: ``10 sqrt(d)``).
    step : None, "theory", float or StepRule
        See the module docstring (None: constant ``1/(8 R^2)`` with averaging).
    max_iter : int >= 1, default 50
        Passes of ``fit`` at most.
    tol : float >= 0, default 1e-3
        Stop when the coefficients move less than ``tol`` (relative) between passes.
    combine_copies : bool
        Use every reading: the U-statistic over all of an item's readings (ragged layout: over the means of its two
        halves); else Lemma 1's estimate on its first two readings, as printed.
    shuffle : bool
        Visit the items in a seeded random order (a new one per pass).
    seed : None, int, SeedSequence or Generator

    Fitted: ``coef_``, ``intercept_``, ``n_iter_``, ``learner_`` (:class:`TwoCopyLinearRegression` on the
    standardised data), ``scaler_``, ``projection_active_`` (fraction of the last pass's checkpoints).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))                                 # the hidden clean items
    >>> y = 100 * (X @ np.array([1.0, -0.5])) + 3.0
    >>> readings = X[:, None, :] + 0.3 * rng.normal(size=(200, 4, 2))  # 4 noisy readings each
    >>> from nolo.sklearn_api import TwoCopyRegressor
    >>> est = TwoCopyRegressor(seed=0).fit(readings, y)
    >>> est.coef_.round(0), round(est.score(X, y), 2)
    (array([ 98., -49.]), 1.0)
    """

    min_copies = 2

    def __init__(self, fit_intercept=True, radius=None, step=None, max_iter=50, tol=1e-3, combine_copies=True,
                 shuffle=True, seed=None):
        self.fit_intercept = fit_intercept
        self.radius = radius
        self.step = step
        self.max_iter = max_iter
        self.tol = tol
        self.combine_copies = combine_copies
        self.shuffle = shuffle
        self.seed = seed

    def _views(self, R):
        if self.combine_copies and R.dense is not None:
            return R.dense, R.counts
        return _two_views(R, self.combine_copies)

    def _moments(self, V, k, scaler):
        m = V.shape[1]
        xbar = V.mean(axis=1)
        D = V - xbar[:, None, :]
        return xbar.T @ xbar / V.shape[0], np.einsum("nki,nkj->ij", D, D) / (V.shape[0] * m * (m - 1))

    def _make_learner(self, V, y, k, scaler, horizon):
        copies = "all" if self.combine_copies else 2
        return TwoCopyLinearRegression(radius=self._radius(V.shape[2]), copies=copies,
                                       **self._step(V, y, horizon)), None


class KnownCovarianceRegressor(_KnownNoiseRegressor):
    """CSS11 Setting 2 (Algorithm 1 right, Lemma 2, correction ``-2 Sigma w`` of erratum E9) as an estimator.

    Parameters
    ----------
    noise_cov : float, array (d,) or (d, d)
        Covariance of *one* reading, in the units of ``X``: a scalar variance, variances or a matrix.
    fit_intercept, radius, step, max_iter, tol, shuffle, seed
        As for :class:`TwoCopyRegressor`.
    combine_copies : bool
        Average an item's ``m_i`` readings and correct with ``Sigma / m_i`` (else use its first reading).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))                                 # the hidden clean items
    >>> y = X @ np.array([1.0, -0.5])
    >>> readings = X[:, None, :] + 0.3 * rng.normal(size=(200, 4, 2))  # 4 noisy readings each
    >>> from nolo.sklearn_api import KnownCovarianceRegressor
    >>> est = KnownCovarianceRegressor(noise_cov=0.09, seed=0).fit(readings, y)
    >>> est.coef_.round(2), round(est.score(X, y), 2)
    (array([ 0.98, -0.49]), 1.0)
    """

    def __init__(self, noise_cov=0.0, fit_intercept=True, radius=None, step=None, max_iter=50, tol=1e-3,
                 combine_copies=True, shuffle=True, seed=None):
        self.noise_cov = noise_cov
        self.fit_intercept = fit_intercept
        self.radius = radius
        self.step = step
        self.max_iter = max_iter
        self.tol = tol
        self.combine_copies = combine_copies
        self.shuffle = shuffle
        self.seed = seed

    def _validate_params(self) -> None:
        super()._validate_params()
        compact_noise_covariance(self.noise_cov)  # a scalar or variances: no d x d matrix

    def _views(self, R):
        if self.combine_copies:
            return R.means()[:, None, :], R.counts.astype(np.int64)
        return R.values[R.offsets[:-1]][:, None, :], np.ones(R.n_items, dtype=np.int64)

    def _noise(self, d: int, scaler) -> np.ndarray:
        """The standardised noise covariance of one reading: ``(d,)`` variances when ``noise_cov`` is a scalar or
        variances (the learner keeps them as such), else the ``(d, d)`` matrix."""
        return scaler.noise_cov(compact_noise_covariance(self.noise_cov, d))

    def _make_learner(self, V, y, k, scaler, horizon):
        S = self._noise(V.shape[2], scaler)
        step = self._step(V, y, horizon)
        if np.all(k == k[0]):
            cov, spec = None, S / k[0]
        else:
            cov = _PerItemCovariance(S)
            spec = cov
        largest = float(np.max(S)) if S.ndim == 1 else float(np.linalg.eigvalsh(S)[-1])
        sigma_bound = largest / int(np.min(k))
        learner = KnownCovarianceLinearRegression(noise_cov=spec, radius=self._radius(V.shape[2]),
                                                  sigma_bound=sigma_bound, **step)
        return learner, cov

    def _moments(self, V, k, scaler):
        S = self._noise(V.shape[2], scaler)
        X = V[:, 0]
        return X.T @ X / X.shape[0], (np.diag(S) if S.ndim == 1 else S) * float(np.mean(1.0 / k))

    def _fuller_root(self, V, k, scaler) -> float:
        n, d = V.shape[0], V.shape[2]
        S = self._noise(d, scaler)
        if S.ndim == 1 and n < d:  # M = X^T X / n has rank <= n < d: the root is 0 (inf without noise), and the
            return 0.0 if np.any(S > 0) else math.inf  # d x d moments are not built
        return super()._fuller_root(V, k, scaler)

    def _needs_schedule(self, k, learner) -> bool:
        return bool(np.any(k != self.copies_per_item_)) if self.combine_copies else False


class GaussianNoiseKernelRegressor(_KnownNoiseRegressor):
    """CSS11 Algorithm 2 as an estimator: Gaussian noise ``N(0, Sigma)`` of known covariance, ``m >= 2`` readings.

    The kernel acts on the readings in the units of ``X`` (``width`` and ``noise_cov`` are in those units); the
    target is standardised (centred with ``fit_intercept``), so ``W`` bounds the norm of the standardised function.

    Parameters
    ----------
    kernel : "gaussian" or "radial"
        ``exp(-||x-x'||^2 / width)`` (eq. (5)) or the radial approximation of
        appendix E with parameter ``c`` (isotropic noise only).
    width, c : kernel parameters.
    noise_cov : covariance of one reading (scalar, variances or matrix; a scalar variance for "radial").
    W : bound on the surrogate-RKHS norm.
    step : float or None (theory step with sample ``B_y`` and ``T = n``).
    fit_intercept : bool, default True (centre the target).
    combine_copies, shuffle, seed : see the module docstring.  One pass (``max_iter=1``: the expansion grows
    with every round).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))                                 # the hidden clean items
    >>> y = X @ np.array([1.0, -0.5])
    >>> readings = X[:, None, :] + 0.3 * rng.normal(size=(200, 4, 2))  # 4 noisy readings each
    >>> from nolo.sklearn_api import GaussianNoiseKernelRegressor
    >>> est = GaussianNoiseKernelRegressor(width=4.0, noise_cov=0.09, W=10.0, seed=0).fit(readings, y)
    >>> round(est.score(X, y), 2)
    0.82
    """

    min_copies = 2

    def __init__(self, kernel="gaussian", width=1.0, c=2.0, noise_cov=0.0, W=10.0, step=None, fit_intercept=True,
                 combine_copies=True, shuffle=True, seed=None):
        self.kernel = kernel
        self.width = width
        self.c = c
        self.noise_cov = noise_cov
        self.W = W
        self.step = step
        self.fit_intercept = fit_intercept
        self.combine_copies = combine_copies
        self.shuffle = shuffle
        self.seed = seed

    max_iter, tol, radius = 1, 0.0, None

    def _validate_params(self) -> None:
        super()._validate_params()
        check_choice(self.kernel, "kernel", ("gaussian", "radial"))
        check_scalar(self.W, "W", low=0.0, low_inclusive=False, high=1e100)
        check_scalar(self.width, "width", low=0.0, low_inclusive=False)
        check_scalar(self.c, "c", low=0.0, low_inclusive=False)
        compact_noise_covariance(self.noise_cov)  # a scalar or variances: no d x d matrix
        if self.step == "theory":
            raise ParameterError("step must be None or a positive number for GaussianNoiseKernelRegressor")

    def _fit(self, X, y, groups, max_iter):
        self._validate_params()
        y = target_vector(y)
        R = self._readings(X, groups)
        yv = item_targets(y, R)
        my = float(np.mean(yv)) if self.fit_intercept else 0.0
        scaler = Standardizer(np.zeros(R.n_features), np.ones(R.n_features), my,
                              Standardizer.fit(R.means(), yv, self.fit_intercept).y_scale)
        V, k = _two_views(R, self.combine_copies)
        return self._play_kernel(None, V, scaler.y(yv), k, scaler, R, groups, X)

    def partial_fit(self, X, y, groups=None):
        """Continue the pass with more items (same number of readings per item as in fit)."""
        if not hasattr(self, "learner_"):
            return self._fit(X, y, groups, 1)
        self._validate_params()
        R = self._readings(X, groups)
        check_n_features(self, R.n_features)
        yv = item_targets(y, R)
        V, k = _two_views(R, self.combine_copies)
        if np.any(k != self.k_):
            raise ParameterError(f"X must hold the same number of readings per item as in fit "
                                 f"({self.copies_per_item_}): the averaged readings' noise covariance depends on it")
        return self._play_kernel(self.learner_, V, self.scaler_.y(yv), k, self.scaler_, R, None, None)

    def _pair(self, k: int):
        if self.kernel == "gaussian":
            arr = np.asarray(self.noise_cov, dtype=np.float64)
            return GaussianSurrogateKernel(width=self.width, noise_cov=arr / k)
        arr = np.asarray(self.noise_cov, dtype=np.float64)
        if arr.ndim != 0:
            raise ParameterError("kernel='radial' needs isotropic noise: noise_cov must be a scalar variance")
        return RadialKernelApproximation(c=self.c, noise_variance=float(arr) / k)

    def _play_kernel(self, learner, V, ys, k, scaler, R, groups, X):
        import copy

        if not np.all(k == k[0]):
            raise ParameterError("X must hold the same number of readings for every item for "
                                 "GaussianNoiseKernelRegressor (the surrogate kernel depends on it)")
        if learner is None:
            pair = self._pair(int(k[0]))
            if self.step is None:
                learner = GaussianNoiseKernelRegression(kernel=pair, W=self.W, y_bound=math.sqrt(float(np.mean(ys**2))),
                                                        horizon=int(V.shape[0]), seed=self.seed)
            else:
                learner = GaussianNoiseKernelRegression(kernel=pair, W=self.W, step=self.step, seed=self.seed)
            items = 0
        else:
            learner = copy.deepcopy(learner)
            items = self.n_items_seen_
        order = as_generator(self.seed).permutation(V.shape[0]) if self.shuffle else np.arange(V.shape[0])
        learner.learn_stream(V[order], ys[order])
        if X is not None:
            feature_names(self, X, groups, reset=True)
        for key, v in dict(learner_=learner, scaler_=scaler, k_=int(k[0]), n_features_in_=R.n_features, n_iter_=1,
                           copies_per_item_=int(np.max(R.counts)), n_items_seen_=items + R.n_items).items():
            setattr(self, key, v)
        return self

    def predict(self, X, groups=None) -> np.ndarray:
        """``mu_y + s_y sum_i alpha_i k(x~_i, x)`` at clean inputs ``(n, d)`` (or the per-item means of readings)."""
        Xc = prediction_inputs(self, X, groups, "learner_")
        if Xc.shape[0] == 0:
            return np.zeros(0)
        return self.scaler_.y_back(self.learner_.predict(Xc))
