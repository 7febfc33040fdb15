"""Errors-in-variables regression on repeated readings, scikit-learn style: the estimators to reach for first.

* :class:`EIVRegressor` -- online: bias-compensated recursive least squares
  (:class:`nolo.learners.linear.BiasCompensatedRLS`), ``O(d^2)`` per item, ``partial_fit`` streams; after one
  pass it is the corrected least-squares solution;
* :class:`CorrectedLeastSquaresRegressor` -- batch: :class:`nolo.batch.CorrectedLeastSquares` (Fuller 1987).

Both take the readings in any layout of :mod:`nolo.sklearn_api._inputs` (``(n, m, d)``, a ragged list, or a long
table with ``groups``), standardise internally (undone for ``coef_`` / ``intercept_``) and fit an intercept by
default.  Ordinary least squares on the mean of the readings is attenuated towards 0 by the factor
``C (C + Sigma/m)^{-1}`` (``C`` the covariance of the clean inputs); these estimators remove that bias.
"""

from __future__ import annotations

import warnings

import numpy as np

from nolo._validation import check_int, check_scalar
from nolo.batch import CorrectedLeastSquares
from nolo.exceptions import ParameterError
from nolo.kernels.surrogate import compact_noise_covariance
from nolo.learners.linear import BiasCompensatedRLS
from nolo.learners.linear.bias_compensated_rls import NOISE_MODES
from nolo.sklearn_api._inputs import Readings, item_targets, target_vector
from nolo.sklearn_api._linear import LinearReadingsRegressor

__all__ = ["EIVRegressor", "CorrectedLeastSquaresRegressor"]

_MIN_READINGS = {"repeated": 2, "two_copy": 2, "known": 1, "pooled": 1}


class _Items:
    """Standardised readings indexed by an array of item numbers: ``(k, m, d)`` or a list of ``(m_i, d)``."""

    def __init__(self, R: Readings):
        self.R = R

    def __getitem__(self, idx):
        return self.R.select(np.asarray(idx)).as_dense_or_items()


class _SandwichInference:
    """What a statsmodels user expects after a fit, for both estimators: ``coef_cov_`` (the sandwich of
    :func:`nolo.batch.eiv.corrected_covariance` at the fitted correction scale ``correction_scale_``), ``bse_``,
    ``df_resid_`` (items minus coefficients: the degrees of freedom of the t intervals), :meth:`conf_int` and
    :meth:`summary`."""

    def _sandwich(self, X, yv, noise_cov, pooled: bool) -> None:
        from nolo.batch.eiv import corrected_covariance

        S = noise_cov if isinstance(noise_cov, str) else compact_noise_covariance(noise_cov, self.n_features_in_)
        self.coef_cov_ = corrected_covariance(X, yv, self.coef_, self.intercept_ if self.fit_intercept else None, S,
                                              self.correction_scale_, pooled=pooled)
        self.bse_ = np.sqrt(np.maximum(np.diag(self.coef_cov_), 0.0))
        self.df_resid_ = int(self.n_items_seen_) - int(self.coef_cov_.shape[0])
        if not np.all(np.isfinite(self.coef_cov_)):
            n, p = int(self.n_items_seen_), int(self.coef_cov_.shape[0])
            why = (f"{n} items for {p} coefficients" if n <= p else
                   "the corrected moment matrix is singular: a constant or collinear feature")
            warnings.warn(f"{type(self).__name__}: the sandwich covariance of the coefficients is not defined for this "
                          f"fit ({why}); coef_cov_ and bse_ are NaN", RuntimeWarning, stacklevel=3)

    def _t(self):
        """Student's t on ``df_resid_`` degrees of freedom (the sandwich's small-sample reference, as statsmodels
        uses with ``use_t``); the normal where that is not positive."""
        from scipy import stats

        return stats.t(self.df_resid_) if self.df_resid_ > 0 else stats.norm()

    def _params(self) -> np.ndarray:
        return np.append(self.coef_, [self.intercept_] if self.fit_intercept else [])

    def _check_method(self, method: str) -> str:
        from nolo.sklearn_api._base import check_fitted

        if method not in ("sandwich", "bootstrap"):
            raise ParameterError(f"method must be 'sandwich' or 'bootstrap', got {method!r}")
        check_fitted(self, "coef_cov_")
        if method == "bootstrap" and not hasattr(self, "bootstrap"):
            raise ParameterError(f"{type(self).__name__} has no bootstrap: method must be 'sandwich' "
                                 "(CorrectedLeastSquaresRegressor.bootstrap resamples the items)")
        if method == "bootstrap" and not hasattr(self, "bootstrap_coefs_"):
            raise ParameterError("method='bootstrap' needs bootstrap(X, y) after fit (the resampled fits)")
        return method

    def conf_int(self, alpha: float = 0.05, method: str = "sandwich") -> np.ndarray:
        """``(p, 2)`` intervals of level ``1 - alpha`` for ``coef_`` (then ``intercept_``): ``method="sandwich"``
        (default) ``coef +- t bse_`` with Student's t on ``df_resid_`` degrees of freedom; ``"bootstrap"`` the
        percentile intervals of ``bootstrap_coefs_`` (Efron & Tibshirani 1993, ch. 13; call :meth:`bootstrap`
        first)."""
        method = self._check_method(method)
        alpha = check_scalar(alpha, "alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        if method == "bootstrap":
            ok = self.bootstrap_coefs_[np.all(np.isfinite(self.bootstrap_coefs_), axis=1)]
            return np.quantile(ok, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0).T
        q = self._t().ppf(1.0 - alpha / 2.0)
        theta = self._params()
        return np.column_stack([theta - q * self.bse_, theta + q * self.bse_])

    def summary(self, alpha: float = 0.05, names=None, method: str = "sandwich") -> str:
        """A statsmodels-style table: coef, std err, t, P>|t| and the ``1 - alpha`` interval per coefficient
        (``method``: ``"sandwich"`` or ``"bootstrap"``, as in :meth:`conf_int`; t and P>|t| from the method's
        standard errors, on ``df_resid_`` degrees of freedom)."""
        ci = self.conf_int(alpha, method)
        bse = self.bse_ if method == "sandwich" else self.bootstrap_bse_
        theta = self._params()
        if names is None:
            names = list(getattr(self, "feature_names_in_", [f"x{j}" for j in range(self.n_features_in_)]))
        names = [str(n) for n in names] + (["intercept"] if self.fit_intercept else [])
        with np.errstate(divide="ignore", invalid="ignore"):
            zval = theta / bse
        pval = 2.0 * self._t().sf(np.abs(zval))
        lo, hi = f"[{alpha / 2:.3g}", f"{1 - alpha / 2:.3g}]"
        w = max(9, max(len(n) for n in names))
        how = ("sandwich standard errors" if method == "sandwich" else
               f"bootstrap over items ({self.bootstrap_coefs_.shape[0] - self.bootstrap_failed_} resamples, "
               "percentile intervals)")
        lines = [f"{type(self).__name__}: {self.n_items_seen_} items, correction scale {self.correction_scale_:.3g}, "
                 + how,
                 f"{'':<{w}} {'coef':>10} {'std err':>10} {'t':>8} {'P>|t|':>8} {lo:>10} {hi:>10}"]
        for k, n in enumerate(names):
            lines.append(f"{n:<{w}} {theta[k]:>10.4f} {bse[k]:>10.4f} {zval[k]:>8.3f} {pval[k]:>8.3f} "
                         f"{ci[k, 0]:>10.4f} {ci[k, 1]:>10.4f}")
        return "\n".join(lines)


class EIVRegressor(_SandwichInference, LinearReadingsRegressor):
    """Online errors-in-variables linear regression from repeated noisy readings (bias-compensated RLS).

    The corrected normal equations ``(sum_i xbar_i xbar_i^T - C_i) w = sum_i xbar_i y_i`` (Fuller, *Measurement
    Error Models*, 1987, section 2.2), solved online at ``O(d^2)`` per item by
    :class:`nolo.learners.linear.BiasCompensatedRLS` (Sagara & Wada 1977; see its docstring for the
    positive-definiteness safeguard).  ``C_i`` -- the noise of item ``i``'s mean reading -- comes from

    * ``noise="repeated"`` (default): the spread of the item's own readings (``m_i >= 2``; noise unknown);
    * ``noise="known"``: ``noise_cov / m_i`` (``noise_cov``: the covariance of ONE reading, in ``X``'s units);
    * ``noise="two_copy"``: the first two readings only (CSS11 Setting 1's information);
    * ``noise="pooled"``: the within-item spread pooled over the items with two or more readings (a running
      estimate), so items read once count too -- unbalanced designs, as :class:`CorrectedLeastSquaresRegressor`
      does (docs/eiv.md, section 2c); after one pass the same solution as that estimator.

    ``fit`` plays up to ``max_iter`` passes: each pass adds the items again, which scales both sides of the
    equations alike (so the solution they define does not change) and gives the incremental solver more sweeps;
    it stops when the coefficients move less than ``tol`` (relative).  ``partial_fit`` streams new items.

    Inference after ``fit``, as :class:`CorrectedLeastSquaresRegressor`: ``coef_cov_`` (the same sandwich,
    :func:`nolo.batch.eiv.corrected_covariance`, with each mode's per-item correction and the learner's final
    scale ``correction_scale_``), ``bse_``, :meth:`conf_int`, :meth:`summary`.  The sandwich belongs to the data of
    ``fit``: ``partial_fit`` removes it.

    Parameters
    ----------
    noise : {"repeated", "known", "two_copy", "pooled"}
    noise_cov : float, (d,) or (d, d) array, or None
        ``noise="known"`` only.
    fit_intercept : bool, default True
    alpha : float > 0, default 1e-6
        Ridge on the (standardised, unnormalised) Gram sum.
    max_correction : float in (0, 1), default 0.9
        The safeguard's bound on the share of the Gram matrix the correction may remove.
    fuller_alpha : float >= 0 or None, default None
        Fuller's small-sample guard (Fuller 1987, section 2.5.1; see
        :class:`nolo.learners.linear.BiasCompensatedRLS`): caps the share of the consistent correction at
        ``max(0, min(1 - alpha/nu, lambda_F - (1 + alpha)/nu))``, ``lambda_F`` the smallest root of the joint
        moments of ``(y, xbar)`` on ``nu`` degrees of freedom against the noise (``nu = t - 1`` with the
        intercept, ``t`` the distinct items: the passes of ``fit`` replay the same ones).  1: nearly unbiased;
        4: a smaller mean squared error.
    cv_folds : int >= 2 or None, default 5
        The guard against an ill-posed correction (:class:`nolo.learners.linear.BiasCompensatedRLS`): the
        correction scale capped by K-fold cross-validation of the corrected (clean-input) risk with the
        one-standard-error rule, which keeps the full correction unless the folds clearly show it is worse (few
        items, heavy noise, many features).  ``fit`` chooses it on the first pass and keeps it for the later passes
        (a replayed item would sit in two folds); ``partial_fit`` after a one-pass ``fit`` keeps re-choosing it.
        None: the full correction (under ``max_correction``).
    sweeps : int >= 1, default 3
        Fixed-point steps per item (the learner's default is 1; 3 makes one pass track the solution closely:
        on the README's example with 2 readings of sd 1, 500 items, R^2 0.946 / 0.951 / 0.952 after one pass with
        1 / 3 / 10 sweeps, 0.952 for the batch solution).
    max_iter : int >= 1, default 10
    tol : float >= 0, default 1e-3
        Relative change of the coefficients between passes that counts as converged (5 passes on that example,
        3 at 2000 items).
    shuffle : bool
        Items in a seeded random order per pass.
    seed : None, int, SeedSequence or Generator

    Fitted: ``coef_``, ``intercept_``, ``n_iter_``, ``learner_`` (on the standardised data), ``scaler_``.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.sklearn_api import EIVRegressor
    >>> rng = np.random.default_rng(0)
    >>> clean = rng.normal(size=(2000, 3))
    >>> y = clean @ np.array([1.0, -2.0, 0.5]) + 3.0
    >>> readings = clean[:, None, :] + 1.0 * rng.normal(size=(2000, 2, 3))   # 2 readings per item, noise sd 1
    >>> est = EIVRegressor(seed=0).fit(readings, y)
    >>> est.coef_.round(1), round(est.intercept_, 1)
    (array([ 1. , -2. ,  0.5]), 3.0)
    >>> from sklearn.linear_model import LinearRegression
    >>> LinearRegression().fit(readings.mean(axis=1), y).coef_.round(1)  # attenuated by 1 / (1 + 1/2)
    array([ 0.7, -1.3,  0.3])
    """

    def __init__(self, noise="repeated", noise_cov=None, fit_intercept=True, alpha=1e-6, max_correction=0.9,
                 sweeps=3, max_iter=10, tol=1e-3, shuffle=True, seed=None, fuller_alpha=None, cv_folds=5):
        self.noise = noise
        self.noise_cov = noise_cov
        self.fit_intercept = fit_intercept
        self.alpha = alpha
        self.max_correction = max_correction
        self.sweeps = sweeps
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.seed = seed
        self.fuller_alpha = fuller_alpha
        self.cv_folds = cv_folds

    @property
    def min_copies(self) -> int:
        return _MIN_READINGS.get(self.noise, 1)

    @property
    def pooled_copies(self) -> bool:
        return self.noise == "pooled"

    def _learner(self, noise_cov=None) -> BiasCompensatedRLS:
        return BiasCompensatedRLS(noise=self.noise, noise_cov=noise_cov if noise_cov is not None else self.noise_cov,
                                  fit_intercept=self.fit_intercept, alpha=self.alpha,
                                  max_correction=self.max_correction, sweeps=self.sweeps,
                                  fuller_alpha=self.fuller_alpha, cv_folds=self.cv_folds)

    def _validate_params(self) -> None:
        super()._validate_params()
        if not isinstance(self.noise, str) or self.noise not in NOISE_MODES:
            raise ParameterError(f"noise must be one of {', '.join(map(repr, NOISE_MODES))}, got {self.noise!r}")
        self._learner()._validate_params()

    def _views(self, R):
        return _Items(R), R.counts

    def _make_learner(self, V, ys, k, scaler, horizon):
        S = None
        if self.noise == "known":
            S = scaler.noise_cov(compact_noise_covariance(self.noise_cov, V.R.n_features))  # variances stay (d,)
        learner = self._learner(S)
        learner._fit_items = len(ys)  # fit's passes replay these items (see _play)
        return learner, None

    def _play(self, learner, cov, V, ys, k, order) -> float:
        if getattr(learner, "_fit_items", 0) and getattr(learner, "t_", 0) >= learner._fit_items:
            learner.freeze_correction_scale()  # a later pass of fit: the folds would no longer be held out
        learner.learn_stream(V[order], ys[order])
        return 0.0

    def _diagnose(self, V, k, scaler, learner) -> None:
        learner.__dict__.pop("_fit_items", None)  # fit is over: partial_fit's items are new

    def _coef_std(self, learner):
        return learner.coef_, learner.intercept_

    def fit(self, X, y, groups=None):
        """Fit (as :meth:`LinearReadingsRegressor.fit`), then the sandwich covariance of the coefficients on the
        raw readings at the learner's final correction scale (``correction_scale_``, the learner's ``gamma_``)."""
        super().fit(X, y, groups)
        R = self._readings(X, groups)
        self.correction_scale_ = float(self.learner_.gamma_)
        if self.noise == "two_copy":  # the learner reads the first two readings of every item
            X_used = R.dense[:, :2] if R.dense is not None else [a[:2] for a in R.items()]
        else:
            X_used = R.as_dense_or_items()
        noise_cov = self.noise_cov if self.noise == "known" else "estimate"
        self._sandwich(X_used, item_targets(target_vector(y), R), noise_cov, pooled=self.noise == "pooled")
        return self

    def partial_fit(self, X, y, groups=None):
        """One pass over more items (:meth:`LinearReadingsRegressor.partial_fit`).  The sandwich covariance is a
        property of :meth:`fit`'s data: after ``partial_fit`` it is removed (``coef_cov_``, ``bse_``, ``df_resid_``)."""
        super().partial_fit(X, y, groups)
        for key in ("coef_cov_", "bse_", "df_resid_", "correction_scale_"):
            self.__dict__.pop(key, None)
        return self


class CorrectedLeastSquaresRegressor(_SandwichInference, LinearReadingsRegressor):
    """Batch errors-in-variables (corrected, method-of-moments) least squares on repeated readings.

    A wrapper of :class:`nolo.batch.CorrectedLeastSquares` (Fuller 1987, section 2.2) on the standardised
    readings: ``w = (Xbar^T Xbar / nu - Sigma mean_i(1/m_i))^{-1} Xbar^T y / nu`` with ``Xbar`` the per-item
    means, centred with ``nu = n - 1`` degrees of freedom when ``fit_intercept`` (the centred moments are unbiased
    for the clean covariance plus the means' noise ``Sigma mean_i(1/m_i)``; Fuller 1987, section 2.2), raw with
    ``nu = n`` otherwise.  Items may have different numbers of readings ``m_i`` (a ragged list
    or a long table with ``groups``): the mean of item ``i`` has noise covariance ``Sigma / m_i``, and
    ``"estimate"`` pools the within-item spread over the items with ``m_i >= 2`` (items read once still count in
    the moments; docs/eiv.md#2c-unbalanced-designs-items-with-one-reading).  No ``partial_fit`` (a batch solve).

    Inference: ``coef_cov_`` is the sandwich covariance of ``(coef_, intercept_)`` (intercept last, with
    ``fit_intercept``; :func:`nolo.batch.eiv.corrected_covariance`, which includes the estimated noise
    covariance's own sampling error), ``bse_`` the standard errors, :meth:`conf_int` the normal intervals and
    :meth:`summary` a statsmodels-style table.  The sandwich holds the correction scale fixed: it is exact for the
    full correction (``cv_folds=None``, or folds that keep ``g = 1``, reported as ``correction_scale_``) and
    optimistic when the folds turned the correction down; with ``radius`` (a constrained estimate) there is none.
    :meth:`bootstrap` resamples the items instead (``conf_int(method="bootstrap")``, ``summary(method=...)``):
    no normal approximation, and Fuller's modification is refitted on every resample.  Measured coverage of the
    95 % intervals and the bootstrap beside the sandwich: docs/eiv.md#inference.

    Parameters
    ----------
    noise_cov : "estimate", float, (d,) or (d, d) array
        Covariance of ONE reading in ``X``'s units, or ``"estimate"`` (default): the pooled within-item
        covariance of the readings (needs ``m >= 2``).
    radius : float > 0 or None
        Solve over ``||w|| <= radius`` (standardised coefficients) -- needed when the corrected moment matrix
        is not positive definite (few items, heavy noise); None: unconstrained.
    fit_intercept : bool, default True
    fuller_alpha : float >= 0 or None, default None
        Fuller's small-sample modification (1987, section 2.5.1; :class:`nolo.batch.CorrectedLeastSquares`, whose
        module docstring states it and the sources its constants were checked against): the correction scale
        from the smallest root of the joint moments of ``(y, xbar)`` against the noise, with ``n - 1`` degrees
        of freedom when ``fit_intercept``.  The corrected moment matrix is always positive definite, so the fit never
        fails on an ill-posed sample.  1: nearly unbiased; 4: a smaller mean squared error.
    cv_folds : int >= 2 or None, default 5
        Pick the correction scale ``g`` of ``M - g S`` in ``0, 0.05, ..., 1`` by K-fold cross-validation of the
        corrected (clean-input) risk with the one-standard-error rule (:class:`nolo.batch.CorrectedLeastSquares`):
        the full correction unless the folds clearly show it ill-posed (small, noisy samples, where it has more
        variance than the bias it removes; then a partial one).  Fewer than ``2 K`` items, or None: the full
        correction.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.sklearn_api import CorrectedLeastSquaresRegressor
    >>> rng = np.random.default_rng(0)
    >>> clean = rng.normal(size=(2000, 3))
    >>> y = clean @ np.array([1.0, -2.0, 0.5]) + 3.0
    >>> readings = clean[:, None, :] + 1.0 * rng.normal(size=(2000, 2, 3))   # 2 readings per item, noise sd 1
    >>> est = CorrectedLeastSquaresRegressor().fit(readings, y)
    >>> est.coef_.round(1), round(est.intercept_, 1)
    (array([ 1. , -2. ,  0.5]), 3.0)
    >>> est.bse_.round(3)                       # standard errors of coef_ and intercept_
    array([0.055, 0.063, 0.05 , 0.036])
    """

    max_iter, tol, shuffle, seed = 1, 0.0, False, None

    def __init__(self, noise_cov="estimate", radius=None, fit_intercept=True, fuller_alpha=None, cv_folds=5):
        self.noise_cov = noise_cov
        self.radius = radius
        self.fit_intercept = fit_intercept
        self.fuller_alpha = fuller_alpha
        self.cv_folds = cv_folds

    #: the pooled within-item covariance of the items with 2+ readings estimates the noise; items with one reading
    #: add to the moments (their mean's noise, Sigma / 1, is in the correction Sigma mean_i(1/m_i))
    min_copies = 1

    @property
    def pooled_copies(self) -> bool:
        return isinstance(self.noise_cov, str)

    def _validate_params(self) -> None:
        super()._validate_params()
        if isinstance(self.noise_cov, str):
            if self.noise_cov != "estimate":
                raise ParameterError(f"noise_cov must be a covariance or 'estimate', got {self.noise_cov!r}")
        else:
            compact_noise_covariance(self.noise_cov)  # a scalar or variances: no d x d matrix
        if self.radius is not None:
            check_scalar(self.radius, "radius", low=0.0, low_inclusive=False, high=1e100)
        if self.fuller_alpha is not None:
            check_scalar(self.fuller_alpha, "fuller_alpha", low=0.0, high=1e6)
        if self.cv_folds is not None:
            check_int(self.cv_folds, "cv_folds", low=2, high=1000)

    def _views(self, R):
        if R.n_items < 2:
            raise ParameterError(f"X holds {R.n_items} item (n_samples={R.n_items}): corrected least squares needs "
                                 "at least 2 items (more than the number of features)")
        return R.as_dense_or_items(), R.counts

    def _make_learner(self, V, ys, k, scaler, horizon):
        S = self.noise_cov
        if not isinstance(S, str):
            d = V.shape[2] if isinstance(V, np.ndarray) else V[0].shape[1]
            S = scaler.noise_cov(compact_noise_covariance(S, d))  # variances stay (d,)
        # the standardisation centred X and y; the intercept is still fitted (zero here, up to rounding) so that the
        # estimator's centred correction, Fuller's degrees of freedom and the folds' own re-centring are those of
        # CorrectedLeastSquares(fit_intercept=True) on the raw readings, which is translation-equivariant
        est = CorrectedLeastSquares(noise_cov=S, radius=self.radius, fit_intercept=bool(self.fit_intercept),
                                    fuller_alpha=self.fuller_alpha, cv_folds=self.cv_folds)
        est._fixed_scale = self._fixed_scale
        return est, None

    def _play(self, learner, cov, V, ys, k, order) -> float:
        learner.fit(V, ys)
        if self.radius is not None and np.linalg.norm(learner.coef_) >= float(self.radius) * (1 - 1e-9):
            return 1.0
        return 0.0

    def _coef_std(self, learner):
        return learner.coef_, 0.0

    def fit(self, X, y, groups=None):
        """Fit (as :meth:`LinearReadingsRegressor.fit`), then the sandwich covariance of the coefficients on the
        raw readings."""
        super().fit(X, y, groups)
        self.correction_scale_ = float(self.learner_.correction_scale_)
        if self.radius is not None:
            p = self.n_features_in_ + bool(self.fit_intercept)
            self.coef_cov_ = np.full((p, p), np.nan)
            self.bse_ = np.full(p, np.nan)
            self.df_resid_ = int(self.n_items_seen_) - p
        else:
            R = self._readings(X, groups)
            self._sandwich(R.as_dense_or_items(), item_targets(target_vector(y), R), self.noise_cov, pooled=True)
        return self

    #: the correction scale every bootstrap replicate solves with (None: the estimator's own rule)
    _fixed_scale = None

    def bootstrap(self, X, y, groups=None, n_boot: int = 999, random_state=None) -> "CorrectedLeastSquaresRegressor":
        """Resample the ITEMS of the fitted data with replacement ``n_boot`` times and refit on each resample (the
        nonparametric bootstrap over independent units, Efron & Tibshirani, *An Introduction to the Bootstrap*,
        1993, ch. 6 and 13): ``bootstrap_coefs_`` ``(n_boot, p)`` (``coef_`` then ``intercept_``),
        ``bootstrap_bse_``, ``bootstrap_cov_`` and ``bootstrap_failed_`` (replicates whose fit failed: no item
        with two readings for ``"estimate"``, an indefinite corrected moment matrix; left out, with a
        :class:`RuntimeWarning`).  Then ``conf_int(method="bootstrap")`` gives percentile intervals and
        ``summary(method="bootstrap")`` the table.  Returns ``self``.

        ``X``, ``y``, ``groups`` must be the data of :meth:`fit` (checked: the refit on them must give ``coef_``
        again).  An item is resampled with all its readings, so the within-item noise estimate and the item's
        weight in the moments travel together.  Fuller's modification is recomputed on every resample; a
        cross-validated correction scale (``cv_folds`` with at least ``2 K`` items) is held at the fitted
        ``correction_scale_``, as the sandwich holds it -- the folds of a resample would put copies of one item on
        both sides.  ``random_state``: seed or Generator; the same seed gives the same replicates.
        """

        from sklearn.base import clone

        from nolo.exceptions import NumericalError
        from nolo.random import as_generator
        from nolo.sklearn_api._base import check_fitted

        check_fitted(self, "coef_")
        B = check_int(n_boot, "n_boot", low=2, high=10**6)
        rng = as_generator(random_state, "random_state")
        R = self._readings(X, groups)
        yv = item_targets(target_vector(y), R)
        n = R.n_items
        if n != self.n_items_seen_ or R.n_features != self.n_features_in_:
            raise ParameterError(f"bootstrap needs the data of fit: X holds {n} items of {R.n_features} features, the "
                                 f"fit saw {self.n_items_seen_} of {self.n_features_in_}")
        cv_used = self.cv_folds is not None and n >= 2 * int(self.cv_folds)
        rep = clone(self)
        rep._fixed_scale = self.correction_scale_ if cv_used else None

        def refit(idx):
            rep._fit(R.select(idx).as_dense_or_items(), yv[idx], None, 1)
            return rep._params()

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            again = refit(np.arange(n))
        theta = self._params()
        if not np.allclose(again, theta, rtol=1e-8, atol=1e-10 * max(1.0, float(np.max(np.abs(theta))))):
            raise ParameterError("bootstrap needs the data of fit (X, y, groups): refitting on them does not give "
                                 "coef_ again")
        reps = np.full((B, theta.shape[0]), np.nan)
        for b in range(B):
            idx = rng.integers(0, n, size=n)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    reps[b] = refit(idx)
            except (NumericalError, ParameterError):
                pass
        failed = int(np.sum(~np.all(np.isfinite(reps), axis=1)))
        if B - failed < 2:
            raise NumericalError(f"bootstrap: {failed} of {B} replicate fits failed; no interval can be formed")
        if failed:
            warnings.warn(f"bootstrap: {failed} of {B} replicate fits failed (no item with two readings, or an "
                          "indefinite corrected moment matrix) and are left out; the intervals describe the others",
                          RuntimeWarning, stacklevel=2)
        ok = reps[np.all(np.isfinite(reps), axis=1)]
        self.bootstrap_coefs_, self.bootstrap_failed_ = reps, failed
        self.bootstrap_cov_ = np.atleast_2d(np.cov(ok, rowvar=False))
        self.bootstrap_bse_ = np.sqrt(np.diag(self.bootstrap_cov_))
        return self

    @property
    def partial_fit(self):
        raise AttributeError("CorrectedLeastSquaresRegressor is a batch estimator: it has no partial_fit "
                             "(EIVRegressor streams)")
