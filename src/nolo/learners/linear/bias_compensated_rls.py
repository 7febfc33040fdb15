"""Bias-compensated recursive least squares: online errors-in-variables linear regression."""

from __future__ import annotations

import math

import numpy as np

from nolo import _scale
from nolo._validation import (check_array, check_bool, check_choice, check_int, check_scalar, check_seed,
                              check_state_bytes)
from nolo.exceptions import NumericalError, ParameterError, PersistenceError
from nolo.kernels.surrogate import check_noise_covariance, compact_noise_covariance
from nolo.batch.eiv import choose_correction_scale
from nolo.learners.base import NoisyInputLearner, check_state_spd, check_state_sqnorm
from nolo.learners.linear._bcrls import bcrls_loop
from nolo.noise.pool import as_measurement_items, query_copies

__all__ = ["BiasCompensatedRLS", "NOISE_MODES"]

#: the three ways the noise correction is obtained
NOISE_MODES = ("repeated", "known", "two_copy", "pooled")
_MIN_READINGS = {"repeated": 2, "known": 1, "two_copy": 2, "pooled": 1}
#: the compiled loop's mode numbers
_MODE = {"known": 0, "repeated": 1, "two_copy": 1, "pooled": 2}
#: no correction (ridge least squares, gamma = 0) for the first _WARMUP * p items, p = d + intercept
_WARMUP = 2
#: cv_next_ of a learner whose cross-validated scale is frozen (freeze_correction_scale)
_NEVER = 2**62


class BiasCompensatedRLS(NoisyInputLearner):
    """Bias-compensated recursive least squares for errors-in-variables linear regression, ``O(d^2)`` per item.

    Constructor (stable)::

        BiasCompensatedRLS(noise="repeated", noise_cov=None, n_readings=None, fit_intercept=True,
                           alpha=1e-6, max_correction=0.9, sweeps=1, seed=None, fuller_alpha=None, cv_folds=5)

    **Estimator.**  Each item ``x`` is seen only through noisy readings ``x_k = x + n_k`` (zero-mean noise,
    independent between readings; ``y`` may be noisy too).  Ordinary least squares on the readings is attenuated
    towards 0; the moment-corrected (errors-in-variables) least squares of Fuller, *Measurement Error Models*
    (Wiley 1987), chapter 2 (vector explanatory variables; section 2.2, the model with an error in the
    equation: ``(M_XX - Sigma_uu)^{-1} M_XY`` with ``Sigma_uu`` known or estimated from replicated readings --
    section cited from the book's contents, equation numbers not checked) solves

        ``(G_t + alpha I) w = b_t``,  ``G_t = sum_i (xbar_i xbar_i^T - C_i)``,  ``b_t = sum_i xbar_i y_i``,

    where ``xbar_i`` is the mean of item ``i``'s readings and ``C_i`` the noise correction, by mode:

    * ``noise="known"``: ``C_i = Sigma / k_i`` (``Sigma`` = ``noise_cov``, the covariance of one reading;
      ``k_i >= 1`` readings of the item, averaged);
    * ``noise="repeated"``: ``C_i = sum_k (x_k - xbar)(x_k - xbar)^T / (k_i (k_i - 1))`` (``k_i >= 2``; noise
      unknown): ``xbar xbar^T - C_i`` is the U-statistic ``mean_{k != l} x_k x_l^T``
      (:func:`nolo.estimators.replicates.pairwise_outer`);
    * ``noise="two_copy"``: the same with the first two readings only (CSS11 Setting 1's information);
    * ``noise="pooled"``: ``sum_i C_i = Sigma_hat_t sum_i 1/k_i`` with ``Sigma_hat_t`` the running pooled within-item
      covariance ``sum_i sum_k (x_k - xbar_i)(x_k - xbar_i)^T / sum_i (k_i - 1)`` (``scatter_``, ``pool_dof_``,
      ``pool_inv_count_``): items read once (``k_i = 1``) add to the moments and to ``sum 1/k_i`` but not to the
      noise estimate -- unbalanced designs (docs/eiv.md, section 2c).  The correction of the items seen so far is
      re-estimated with every replicated item (``O(d^2)`` per item); none until one arrives.

    With ``fit_intercept`` (a constant feature with no noise) the centred moments hold the share ``c_t = (t - 1)/t``
    of the summed correction (:func:`nolo.batch.eiv.centred_noise_share`: the moments about the mean on ``t - 1``
    degrees of freedom minus the noise covariance of the means, Fuller 1987, section 2.2), so the consistent
    system is ``(A_t - c_t C_t) w = b_t`` (below); without an intercept ``c_t = 1``.  ``t`` counts the items, or,
    while :class:`nolo.sklearn_api.EIVRegressor`'s ``fit`` replays its items, the distinct ones.

    After one pass this is exactly :class:`nolo.batch.CorrectedLeastSquares` (``noise_cov=Sigma`` resp.
    ``"estimate"``; ``"pooled"`` on ragged readings is its pooled estimate, ``"repeated"`` the per-item one, the
    same for equal counts; ``fit_intercept`` alike) up to ``alpha`` and the solver's tracking error (below).

    **Recursion** (the bias-compensated RLS of Sagara & Wada, Int. J. Control 25 (1977) 329-343; see
    Soderstrom, *Errors-in-Variables Methods in System Identification*, Springer 2018, on bias-eliminating
    least squares): split ``G_t + alpha I = A_t - C_t`` with ``A_t = alpha I + sum xbar xbar^T`` (positive
    definite: its upper Cholesky factor ``chol_``, ``A_t = U^T U``, gets one rank-one update per item,
    ``O(p^2)``) and ``C_t = sum C_i`` (positive semidefinite, accumulated).  The coefficients follow the fixed point
    ``w <- A_t^{-1} (b_t + gamma_t C_t w)``, ``sweeps`` steps per item warm-started from the previous item
    (``O(p^2)`` each; ``gamma_t`` stands for ``gamma_t c_t`` in this paragraph and the next), over-relaxed in
    ``phi = U w`` with ``omega = 2 / (2 - gamma_t rho_hat)`` (optimal for the spectrum ``[1 - gamma rho, 1]``): the
    step contracts at rate ``gamma rho / (2 - gamma rho)`` instead of ``gamma rho``,
    ``rho_t = lambda_max(A_t^{-1} C_t)``.

    **Positive-definiteness safeguard.**  ``G_t`` itself can be indefinite (few items, heavy noise);
    ``A_t - gamma C_t`` is positive definite iff ``gamma rho_t < 1``.  ``rho_t`` is tracked by one power-
    iteration step per sweep on ``U^{-T} C_t U^{-1}`` (``rho_`` -- a lower estimate, which can lag while ``A_t``
    is nearly rank deficient: see the two guards below), and the correction is scaled by ``gamma_t = min(1,
    max_correction / (c_t rho_t))`` (``gamma_``, the share of the consistent correction ``c_t C_t``): the
    system solved is always ``A_t - gamma_t C_t >= (1 - max_correction) A_t`` (the regularised corrected Gram),
    early on a partial correction between ridge least squares (``gamma = 0``) and the full correction, and the
    full correction (``gamma = 1``) once the data determine it -- asymptotically ``rho_t`` tends to one minus
    the smallest attenuation factor, so the full correction is reached whenever the attenuation exceeds
    ``1 - max_correction``.  Two guards for the early items, when ``A_t`` is (nearly) rank deficient and the
    power estimate can lag far below ``rho_t``: no correction (``gamma = 0``, ridge least squares on the means)
    for the first ``2 p`` items, and every fixed-point iterate is kept in the ``A_t``-norm ball
    ``||U w|| <= ||U^{-T} b_t|| / (1 - max_correction)`` that contains the corrected solution.

    **Fuller's small-sample guard** (``fuller_alpha``; Fuller 1987, section 2.5.1, the online form of
    :class:`nolo.batch.CorrectedLeastSquares`' option, whose docstring states the modification and its sources):
    ``lambda_J = 1 / rho_J`` is the smallest root of the JOINT moments of ``(y, xbar)``,
    ``|[[sum y^2, b_t^T], [b_t, A_t]] - lambda blockdiag(0, C_t)| = 0``, i.e. of ``|A_t - b_t b_t^T / sum y^2 -
    lambda C_t| = 0``, and the scale is further capped, ``c_t gamma_t <= max(0, min((nu - alpha_F) / t, lambda_J -
    (1 + alpha_F) / t))`` (``nu = t - 1`` with the intercept, ``t`` without; ``gamma_t <= max(0, min(1 - alpha_F /
    nu, (t / nu) lambda_J - (1 + alpha_F) / nu))``, the book's form on ``nu`` degrees of freedom), Fuller's ``g``
    floored at 0 (the batch estimator allows a negative ``g``; the fixed point needs ``gamma >= 0``).  ``rho_J`` is
    tracked by a second power vector (``power_joint_``): per sweep one generalised power step on ``(M, Q)``,
    ``M = U^{-T} C_t U^{-1}``, ``Q = I - v v^T / sum y^2``, ``v = U^{-T} b_t`` (``Q^{-1}`` by Sherman-Morrison), and
    its Rayleigh quotient, at least ``rho_``, a lower estimate like ``rho_`` (``rho_joint_``; ``yy_`` is
    ``sum y^2``): ``3 p^2`` more per sweep, only with ``fuller_alpha``.  With the default
    ``max_correction = 0.9`` the cap ``0.9 / (c_t rho_t)`` is the tighter one unless ``lambda_J`` is close to 1 or below
    -- the target nearly a function of the clean inputs, or few items; with ``max_correction`` close to 1 Fuller's
    rule is the guard.

    **Cross-validated correction scale** (``cv_folds = K``, default 5; the online form of
    :class:`nolo.batch.CorrectedLeastSquares`' ``cv_folds``, the same rule): item ``t`` also adds its moments to
    fold ``t mod K`` (``O(p^2 + k d^2)`` more per item), and whenever the item count reaches ``cv_next_`` (growing
    by 25% each time: amortised ``O(21 K p^3 / (0.25 t))`` per item) the cap ``cv_scale_`` is re-chosen from
    ``0, 0.05, ..., 1`` by K-fold cross-validation of the corrected risk ``w^T (M_k - S_k) w - 2 b_k^T w``
    (unbiased for the clean-input squared error up to a constant) with the one-standard-error rule preferring
    the full correction (:func:`nolo.batch.eiv.one_se_scale`: the largest scale within one standard error of the
    least held-out risk; Breiman et al. 1984, Hastie et al. 2009 section 7.10.1): ``gamma_t <= cv_scale_``.  It is
    a guard against an ill-posed correction: where the corrected Gram is near-singular relative to its sampling
    noise (few items, heavy noise, many features) the folds show the full correction's variance and the cap
    comes down towards least squares on the means; elsewhere it stays at 1.  ``cv_folds=None`` turns it off (the
    full correction under the ``max_correction`` safeguard; 1.4x (d = 20) to 1.8x (d = 200) faster per item in a
    loaded A/B run, docs/practice.md).  Replaying the same items (a second pass) would put an item in two folds:
    call :meth:`freeze_correction_scale` first.

    Parameters
    ----------
    noise : {"repeated", "known", "two_copy", "pooled"}
        Where the noise correction comes from (above).
    noise_cov : float, (d,) or (d, d) array, or None
        ``noise="known"`` only: the covariance of ONE reading (a variance, variances, or a matrix; symmetric
        positive semidefinite).  Must be None for the other modes.
    n_readings : int or None
        Readings to query per item from an oracle.  None: every remaining reading of a finite pool
        (:class:`nolo.noise.PoolOracle`), else 1 for ``known`` and 2 otherwise; ``two_copy``
        always uses 2.  :meth:`learn_stream` uses every reading it is given.
    fit_intercept : bool
        Append a constant feature with zero noise (its coefficient is ``intercept_``).  Fixed once learning
        has started.
    alpha : float > 0
        Ridge ``alpha I`` added to the (unnormalised) Gram sum; it also starts the Cholesky factor.  Used when
        the state is created.
    max_correction : float in (0, 1)
        ``kappa``: the bound on ``gamma_t rho_t`` (above).
    sweeps : int >= 1
        Fixed-point (and power) steps per item.
    fuller_alpha : float >= 0 or None
        Fuller's small-sample guard (above); None: off.  1 (nearly unbiased) or 4 (smaller mean squared error)
        are the classical choices.
    cv_folds : int >= 2 or None, default 5
        Folds of the cross-validated correction scale (above); None: off.
    seed : seed-like
        Unused (the update is deterministic); kept for the learner contract.

    State: ``coef_`` (d,), ``intercept_``, ``theta_`` (coefficients with the intercept last), ``chol_``,
    ``correction_``, ``xy_``, ``power_``, ``rho_``, ``gamma_``, ``yy_`` (sum of ``y^2``), ``power_joint_``,
    ``rho_joint_`` (Fuller's guard; ``rho_joint_`` stays 0 without it), ``readings_`` (readings used), ``t_``
    (items);
    with ``cv_folds``: ``fold_gram_``, ``fold_correction_``, ``fold_xy_``, ``fold_count_``, ``cv_scale_``,
    ``cv_next_`` (empty folds and 1.0 without).

    Examples
    --------
    Four readings per item, noise variance 2 per reading (0.5 on their mean: attenuation factor 2/3):

    >>> import numpy as np
    >>> from nolo.learners.linear import BiasCompensatedRLS
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 3.0
    >>> readings = X[:, None, :] + np.sqrt(2.0) * rng.normal(size=(2000, 4, 3))
    >>> m = BiasCompensatedRLS(noise="repeated")
    >>> m.learn_stream(readings, y)
    >>> m.coef_.round(1), round(m.intercept_, 1)
    (array([ 1. , -2. ,  0.5]), 3.0)
    >>> naive = np.linalg.lstsq(np.c_[readings.mean(axis=1), np.ones(2000)], y, rcond=None)[0]
    >>> naive[:3].round(1)  # least squares on the mean of the readings: attenuated
    array([ 0.7, -1.3,  0.4])
    """

    #: readings per round the contract checks serve (the default mode's minimum)
    copies_per_round = 2
    #: no state array grows: every shape is fixed by n_features and the parameters (the fold arrays are empty, and
    #: must stay so, without cv_folds)
    _growing_state: dict = {}

    def __init__(
        self,
        noise="repeated",
        noise_cov=None,
        n_readings=None,
        fit_intercept=True,
        alpha=1e-6,
        max_correction=0.9,
        sweeps=1,
        seed=None,
        fuller_alpha=None,
        cv_folds=5,
    ):
        self.noise = noise
        self.noise_cov = noise_cov
        self.n_readings = n_readings
        self.fit_intercept = fit_intercept
        self.alpha = alpha
        self.max_correction = max_correction
        self.sweeps = sweeps
        self.fuller_alpha = fuller_alpha
        self.cv_folds = cv_folds
        self.seed = seed

    @classmethod
    def _test_params(cls):
        return [
            {},
            {"noise": "known", "noise_cov": 0.01, "fit_intercept": False},  # nolo.checks.NOISE_VARIANCE
            {"noise": "two_copy", "sweeps": 2},
            {"fuller_alpha": 1.0, "max_correction": 0.99},
            {"cv_folds": 3},
            {"cv_folds": None},
            {"noise": "pooled", "fuller_alpha": 4.0},
        ]

    # -- parameters ------------------------------------------------------------------------------------
    def _validate_params(self) -> None:
        check_choice(self.noise, "noise", NOISE_MODES)
        if self.noise == "known":
            if self.noise_cov is None:
                raise ParameterError("noise='known' needs noise_cov, the noise covariance of one reading")
            d = self.n_features_in_ if self.is_initialized else None
            compact_noise_covariance(self.noise_cov, d)  # a scalar or variances: no d x d matrix built
        elif self.noise_cov is not None:
            raise ParameterError(
                f"noise_cov is used only with noise='known' (noise={self.noise!r} estimates the correction from "
                f"the readings); got noise_cov={self.noise_cov!r:.60}"
            )
        if self.n_readings is not None:
            k = check_int(self.n_readings, "n_readings", low=_MIN_READINGS[self.noise])
            if self.noise == "two_copy" and k != 2:
                raise ParameterError(f"noise='two_copy' reads exactly 2 readings per item; n_readings must be None or 2, got {k}")
        fi = check_bool(self.fit_intercept, "fit_intercept")
        check_scalar(self.alpha, "alpha", low=0.0, low_inclusive=False)
        check_scalar(self.max_correction, "max_correction", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
        check_int(self.sweeps, "sweeps", low=1, high=10_000)
        if self.fuller_alpha is not None:
            check_scalar(self.fuller_alpha, "fuller_alpha", low=0.0, high=1e6)
        if self.cv_folds is not None:
            K = check_int(self.cv_folds, "cv_folds", low=2, high=1000)
            if self.is_initialized and getattr(self, "fold_gram_", None) is not None and self.fold_gram_.shape[0] != K:
                raise ParameterError(f"cv_folds cannot change once learning has started (the state has "
                                     f"{self.fold_gram_.shape[0]} folds); call reset() first")
        elif self.is_initialized and getattr(self, "fold_gram_", None) is not None and self.fold_gram_.shape[0]:
            raise ParameterError("cv_folds cannot change once learning has started; call reset() first")
        check_seed(self.seed)
        if self.is_initialized and getattr(self, "chol_", None) is not None:
            if self.chol_.shape[0] != self.n_features_in_ + int(fi):
                raise ParameterError(
                    "fit_intercept cannot change once learning has started (the Gram matrix has "
                    f"{self.chol_.shape[0]} columns); call reset() first"
                )
            pooled_state = getattr(self, "pool_inv_count_", 0.0) > 0.0
            if getattr(self, "t_", 0) > 0 and pooled_state != (self.noise == "pooled"):
                raise ParameterError(
                    f"noise cannot change between 'pooled' and the other modes once learning has started (the "
                    f"correction was accumulated {'pooled' if pooled_state else 'per item'}); call reset() first")

    def _sigma(self, d: int) -> np.ndarray:
        if self.noise != "known":
            return np.zeros((0, 0))
        cache = getattr(self, "_sigma_cache", None)
        if cache is not None and cache[0] is self.noise_cov and cache[1] == d:
            return cache[2]
        S = np.ascontiguousarray(check_noise_covariance(self.noise_cov, d))
        self._sigma_cache = (self.noise_cov, d, S)
        return S

    def initialize(self, n_features: int) -> "BiasCompensatedRLS":
        self._validate_params()
        if not isinstance(n_features, bool) and isinstance(n_features, (int, np.integer)) and n_features >= 1:
            p, k = int(n_features) + int(bool(self.fit_intercept)), 2 + 2 * int(self.cv_folds or 0)
            known = int(self.noise == "known")  # and the d x d noise covariance built from noise_cov
            check_state_bytes(8 * (k * p * p + known * int(n_features) ** 2),
                              f"BiasCompensatedRLS keeps {k} p x p float64 matrices (p = n_features + intercept; "
                              f"{k - 2} for cv_folds={self.cv_folds})" + (" and noise_cov as a d x d matrix"
                                                                          if known else "")
                              + f": n_features={int(n_features)}",
                              hint="reduce the rows' dimension, or cv_folds=None")
        return super().initialize(n_features)

    def _init_state(self, n_features: int) -> None:
        p = n_features + int(bool(self.fit_intercept))
        self._sigma(n_features)
        self.chol_ = math.sqrt(float(self.alpha)) * np.eye(p)
        self.correction_ = np.zeros((p, p))
        self.xy_ = np.zeros(p)
        self.theta_ = np.zeros(p)
        self.power_ = np.full(p, 1.0 / math.sqrt(p))
        self.power_joint_ = np.full(p, 1.0 / math.sqrt(p))
        self.rho_ = 0.0
        self.gamma_ = 1.0
        self.yy_ = 0.0
        self.rho_joint_ = 0.0
        K = 0 if self.cv_folds is None else int(self.cv_folds)
        self.fold_gram_ = np.zeros((K, p, p))
        self.fold_correction_ = np.zeros((K, p, p))
        self.fold_xy_ = np.zeros((K, p))
        self.fold_count_ = np.zeros(K)
        self.scatter_ = np.zeros((p, p))  # noise="pooled": the within-item scatter, its dof and sum 1/k_i
        self.pool_dof_ = 0.0
        self.pool_inv_count_ = 0.0
        self.fold_scatter_ = np.zeros((K, p, p))
        self.fold_pool_ = np.zeros((K, 2))
        self.cv_scale_ = 1.0
        self.cv_next_ = max(4 * K, _WARMUP * p)
        self.coef_ = np.zeros(n_features)
        self.intercept_ = 0.0
        self.readings_ = 0

    def _check_state(self) -> None:
        """A loaded state must be one the recursion can continue from: ``chol_`` upper triangular with a positive
        diagonal, the Gram matrix ``A = chol_^T chol_`` it factors positive definite with a finite norm and inverse
        (the rank-one update squares the diagonal: one below ~1e-162 underflows to a division by zero); the noise
        correction ``correction_`` symmetric positive semidefinite (to rounding) with a finite norm; the
        coefficients ``theta_`` of finite A-norm; the power iteration's vector ``power_`` of unit norm; the fold
        state of matching shapes; the scales in range."""
        super()._check_state()
        if not self.is_initialized:
            return
        U = self.chol_
        if np.any(np.tril(U, -1) != 0.0) or np.any(np.diag(U) <= 0.0):
            raise PersistenceError("chol_ must be upper triangular with a positive diagonal")
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            A = U.T @ U
        check_state_spd("chol_", A, "the Gram matrix chol_^T chol_ it factors")
        C = self.correction_
        if not np.array_equal(C, C.T):
            raise PersistenceError("correction_ must be symmetric")
        check_state_sqnorm("correction_", C, "the accumulated noise correction")
        ev = np.linalg.eigvalsh(C)
        if ev[0] < -1e-9 * max(abs(ev[-1]), abs(ev[0])):
            raise PersistenceError(f"correction_ (a sum of noise covariances) must be positive semidefinite, got an "
                                   f"eigenvalue {ev[0]:.3g}")
        with np.errstate(over="ignore", invalid="ignore"):
            check_state_sqnorm("theta_", U @ self.theta_, "its A-norm ||chol_ theta_||, which every sweep computes")
            unit = abs(float(np.linalg.norm(self.power_)) - 1.0) <= 1e-6
        if not unit:
            raise PersistenceError("power_ (the power iteration's vector) must have unit norm")
        K = self.fold_gram_.shape[0]
        p = U.shape[0]
        if (self.fold_gram_.shape != (K, p, p) or self.fold_correction_.shape != (K, p, p)
                or self.fold_xy_.shape != (K, p) or self.fold_count_.shape != (K,)):
            raise PersistenceError("the fold state (fold_gram_, fold_correction_, fold_xy_, fold_count_) must share "
                                   "the number of folds and the Gram matrix's size")
        if not (0.0 <= self.cv_scale_ <= 1.0) or self.cv_next_ < 1:
            raise PersistenceError(f"cv_scale_ must be in [0, 1] and cv_next_ >= 1, got {self.cv_scale_!r}, "
                                   f"{self.cv_next_!r}")
        if not (self.rho_ >= 0.0 and 0.0 <= self.gamma_ <= 1.0):
            raise PersistenceError(f"rho_ must be >= 0 and gamma_ in [0, 1], got {self.rho_!r}, {self.gamma_!r}")
        # the pooled noise's accumulators: sum 1/k_i over the items learned (each term in (0, 1]), its degrees of
        # freedom, the within-item scatter; all zero unless noise="pooled" (learn refuses a mode change against them)
        if self.noise == "pooled":
            if not (0.0 <= self.pool_inv_count_ <= self.t_ * (1.0 + 1e-9) and self.pool_dof_ >= 0.0
                    and (self.t_ == 0 or self.pool_inv_count_ > 0.0)):
                raise PersistenceError(f"pool_inv_count_ (sum of 1/readings over the {self.t_} items learned) must "
                                       f"be in (0, {self.t_}] and pool_dof_ >= 0, got {self.pool_inv_count_!r}, "
                                       f"{self.pool_dof_!r}")
            check_state_sqnorm("scatter_", self.scatter_, "the pooled within-item scatter")
        elif self.pool_inv_count_ != 0.0 or self.pool_dof_ != 0.0 or np.any(self.scatter_ != 0.0):
            raise PersistenceError(f"pool_inv_count_, pool_dof_ and scatter_ accumulate only with noise='pooled' "
                                   f"and must be 0 with noise={self.noise!r}")

    # -- learning ------------------------------------------------------------------------------------------
    def _readings_wanted(self, oracle) -> int:
        if self.noise == "two_copy":
            return 2
        if self.n_readings is not None:
            return int(self.n_readings)
        remaining = getattr(oracle, "remaining", None)
        if isinstance(remaining, (int, np.integer)) and not isinstance(remaining, bool):
            return max(int(remaining), _MIN_READINGS[self.noise])
        return 1 if self.noise == "known" else 2

    def learn(self, oracle, y) -> "BiasCompensatedRLS":
        """One item: query its readings (all of a pool's, see ``n_readings``), update the Gram and the coefficients."""
        self._validate_params()
        if not callable(getattr(oracle, "query", None)):
            raise ParameterError(f"oracle must have a query(n) method (a nolo.noise Oracle or PoolOracle), got {oracle!r:.80}")
        yv = check_scalar(y, "y")
        d = getattr(oracle, "d", None)
        if self.is_initialized and d is not None and d != self.n_features_in_:
            raise ParameterError(f"the oracle has d={d} but the learner was trained with {self.n_features_in_} features")
        k = self._readings_wanted(oracle)
        copies = query_copies(oracle, k, type(self).__name__, "item")
        if copies.shape[1] == 0:
            raise ParameterError("oracle copies must have d >= 1 coordinates")
        if self.is_initialized and copies.shape[1] != self.n_features_in_:
            raise ParameterError(f"oracle copies must have {self.n_features_in_} features, got {copies.shape[1]}")
        self._ensure_initialized(copies.shape[1])
        self._play(np.ascontiguousarray(copies), np.array([0, k], dtype=np.int64), np.array([yv]))
        return self

    def learn_stream(self, copies, y) -> None:
        """Learn ``T`` items in one compiled loop; the same bits as ``T`` calls of :meth:`learn`.

        ``copies``: ``(T, m, d)`` readings (every one used; ``two_copy`` uses the first two), ``(T, d)`` (one
        reading per item, ``noise="known"`` only) or a list of ``(m_i, d)`` arrays (ragged).  ``y``: ``(T,)``.
        Nothing is committed if a value becomes non-finite (:class:`nolo.NumericalError`).
        """
        self._validate_params()
        need = _MIN_READINGS[self.noise]
        if isinstance(copies, (list, tuple)):
            try:
                items = as_measurement_items(copies)
            except ParameterError as exc:
                raise ParameterError(str(exc).replace("data", "copies")) from None
            sizes = np.array([a.shape[0] for a in items], dtype=np.int64)
            R = np.ascontiguousarray(np.vstack(items)) if items else np.zeros((0, 1))
            d = items[0].shape[1]
        else:
            arr = check_array(copies, "copies", ndim=(2, 3))
            if arr.ndim == 2:
                arr = arr[:, None, :]
            T, m, d = arr.shape
            if d == 0:
                raise ParameterError(f"copies must have d >= 1 coordinates, got shape {arr.shape}")
            sizes = np.full(T, m, dtype=np.int64)
            R = np.ascontiguousarray(arr.reshape(T * m, d))
        if sizes.shape[0] and sizes.min() < need:
            raise ParameterError(
                f"noise={self.noise!r} needs at least {need} readings per item; copies has an item with {int(sizes.min())}"
            )
        yv = check_array(y, "y", ndim=1)
        if yv.shape[0] != sizes.shape[0]:
            raise ParameterError(f"copies holds {sizes.shape[0]} items but y has {yv.shape[0]} targets; they must match")
        if self.is_initialized and d != self.n_features_in_:
            raise ParameterError(f"copies must have {self.n_features_in_} features, got {d}")
        offsets = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        self._ensure_initialized(d)
        self._play(R, offsets, yv)
        return None

    def _play(self, R: np.ndarray, offsets: np.ndarray, yv: np.ndarray) -> None:
        if "_scale_checked" not in self.__dict__:  # the readings against the ridge prior, once (nolo._scale)
            rows = R if R.shape[0] >= _scale.SAMPLE_ROWS else _scale.gather_rows(self, R)
            if rows is not None:
                _scale.warn_scale(self, rows, float(self.alpha), f"the ridge prior's scale (alpha = {float(self.alpha):.3g})",
                                  columns=False, stacklevel=4)  # < _play < learn / learn_stream < the caller
        d = self.n_features_in_
        U, C, b, theta, u, uj = (a.copy() for a in (self.chol_, self.correction_, self.xy_, self.theta_, self.power_,
                                                    self.power_joint_))
        FG, FC, Fb, Fn = (a.copy() for a in (self.fold_gram_, self.fold_correction_, self.fold_xy_, self.fold_count_))
        W, FW, FP = (a.copy() for a in (self.scatter_, self.fold_scatter_, self.fold_pool_))
        aux = np.array([self.rho_, self.gamma_, self.yy_, self.rho_joint_, self.pool_dof_, self.pool_inv_count_])
        k_max = 2 if self.noise == "two_copy" else np.iinfo(np.int64).max
        K = FG.shape[0]
        gcap, nxt = float(self.cv_scale_), int(self.cv_next_)
        fuller = -1.0 if self.fuller_alpha is None else float(self.fuller_alpha)
        yv = np.ascontiguousarray(yv, dtype=np.float64)
        n, t, a = offsets.shape[0] - 1, int(self.t_), 0
        distinct = int(getattr(self, "_fit_items", 0))  # set while fit replays its items: the count of distinct ones
        while a < n:  # segments end where the cross-validated scale is re-chosen (none without cv_folds)
            e = n if K == 0 else min(n, a + max(nxt - t, 1))
            status = bcrls_loop(
                R, offsets[a:e + 1], yv[a:e], _MODE[self.noise], k_max, self._sigma(d),
                bool(self.fit_intercept), float(self.max_correction), fuller, int(self.sweeps), _WARMUP * U.shape[0],
                t, U, C, b, theta, u, uj, aux, K, FG, FC, Fb, Fn, gcap, W, FW, FP, distinct,
            )
            if status < 0:
                raise NumericalError(
                    f"{type(self).__name__}: a value became non-finite at item {t - status} (readings or targets "
                    "too large for float64?); no item of this call was committed"
                )
            t += e - a
            a = e
            if K and t >= nxt:
                g = choose_correction_scale(FG, self._fold_noise(FC, W, FW, FP, aux[4]), Fb, Fn,
                                            centred=bool(self.fit_intercept))
                if math.isfinite(g):
                    gcap = g
                nxt = max(t + 1, math.ceil(1.25 * t))
        used = np.minimum(np.diff(offsets), k_max)
        self.chol_, self.correction_, self.xy_, self.theta_, self.power_, self.power_joint_ = U, C, b, theta, u, uj
        self.fold_gram_, self.fold_correction_, self.fold_xy_, self.fold_count_ = FG, FC, Fb, Fn
        self.scatter_, self.fold_scatter_, self.fold_pool_ = W, FW, FP
        self.cv_scale_, self.cv_next_ = gcap, nxt
        self.rho_, self.gamma_, self.yy_, self.rho_joint_, self.pool_dof_, self.pool_inv_count_ = (float(v) for v in aux)
        self.coef_ = theta[:d].copy()
        self.intercept_ = float(theta[d]) if self.fit_intercept else 0.0
        self.readings_ = int(self.readings_ + used.sum())
        self.t_ = int(self.t_ + offsets.shape[0] - 1)

    def _fold_noise(self, FC, W, FW, FP, dof) -> np.ndarray:
        """The folds' summed noise corrections: ``FC`` as accumulated, or for ``noise="pooled"`` each fold's pooled
        within-item covariance times its ``sum 1/k_i`` (the batch estimator's folds, ``"estimate"``), with the
        pooled covariance of all the items for a fold that has no replicated item yet."""
        if self.noise != "pooled":
            return FC
        out = np.zeros_like(FW)
        for k in range(FW.shape[0]):
            if FP[k, 0] > 0:
                out[k] = FW[k] * (FP[k, 1] / FP[k, 0])
            elif dof > 0:
                out[k] = W * (FP[k, 1] / dof)
        return out

    def freeze_correction_scale(self) -> "BiasCompensatedRLS":
        """Choose the cross-validated correction scale on the items seen so far and keep it for every later item
        (``cv_next_`` is set beyond reach).  For replaying the same items (several passes): a replayed item would
        land in a second fold, and the held-out folds would no longer be held out.  Without ``cv_folds`` or
        before any item, or once frozen: nothing to do (a frozen learner's folds may hold replayed items)."""
        self._validate_params()
        if not self.is_initialized or not self.fold_gram_.shape[0] or self.t_ == 0 or self.cv_next_ >= _NEVER:
            return self
        FC = self._fold_noise(self.fold_correction_, self.scatter_, self.fold_scatter_, self.fold_pool_, self.pool_dof_)
        g = choose_correction_scale(self.fold_gram_, FC, self.fold_xy_, self.fold_count_,
                                    centred=bool(self.fit_intercept))
        if math.isfinite(g):
            self.cv_scale_ = g
        self.cv_next_ = _NEVER
        return self

    # -- prediction ----------------------------------------------------------------------------------------
    def predict(self, X) -> np.ndarray:
        """``X @ coef_ + intercept_`` for clean inputs ``X`` (n, d)."""
        self._require_initialized()
        X = self._check_X(X)
        out = X @ self.coef_ + self.intercept_
        if not np.all(np.isfinite(out)):
            raise NumericalError("predict: X @ coef_ overflowed float64; rescale X")
        return out
