"""What every estimator of :mod:`nolo.sklearn_api` shares: the not-fitted error, the pass loop with its
convergence test and warnings, the common parameter checks and the scikit-learn tags / expected check failures."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.exceptions import NotFittedError as _SkNotFitted
from sklearn.utils.validation import _check_feature_names

from nolo._validation import check_bool, check_int, check_scalar
from nolo.exceptions import ParameterError

__all__ = ["NotFittedError", "ProjectionWarning", "IllPosedCorrectionWarning", "check_fitted", "check_n_features", "check_pass_params",
           "expected_failed_checks", "feature_names", "prediction_inputs", "run_passes"]


class NotFittedError(ParameterError, _SkNotFitted):
    """``predict`` (or ``partial_fit`` continuation state) asked of an estimator that was never fitted.

    Both a :class:`nolo.ParameterError` and scikit-learn's :class:`sklearn.exceptions.NotFittedError`."""


class ProjectionWarning(UserWarning):
    """The projection on the ball of radius ``radius`` was active at most checkpoints of a pass: the constraint,
    not the data, decides the coefficients (raise ``radius``)."""


class IllPosedCorrectionWarning(UserWarning):
    """The errors-in-variables correction is not determined by this sample: the corrected Gram matrix
    ``mean_i (xbar_i xbar_i^T - C_i)`` is indefinite or nearly singular (its smallest root ``lambda_hat`` of
    ``|M - lambda S| = 0`` is at most ``1 + 1/n``: the noise ``S`` removes all the signal along some direction),
    or the iterate ended on the ball ``||w|| = radius``.  Projected OGD on an indefinite quadratic runs to the
    ball's edge and its coefficients are set by ``radius``, not by the data -- R^2 far below least squares on the
    mean readings.  Use :class:`nolo.sklearn_api.EIVRegressor` or ``CorrectedLeastSquaresRegressor`` (their
    default ``cv_folds=5`` turns the correction down where cross-validation shows it ill-posed, and the online
    safeguard keeps the solved matrix positive definite); more items or readings per item make the correction
    determined."""


def check_fitted(est, attr: str) -> None:
    if not hasattr(est, attr):
        raise NotFittedError(f"{type(est).__name__} is not fitted yet: call fit(X, y) before using it")


def check_n_features(est, d: int) -> None:
    """``d`` features as in ``fit`` (scikit-learn's wording)."""
    if d != est.n_features_in_:
        raise ParameterError(f"X has {d} features, but {type(est).__name__} is expecting {est.n_features_in_} "
                             "features as input")


def feature_names(est, X, groups, *, reset: bool) -> None:
    """scikit-learn's feature-name bookkeeping (``feature_names_in_``) for a 2-D table; readings arrays, ragged
    lists and oracles carry no names."""
    _check_feature_names(est, X if groups is not None or getattr(X, "ndim", 0) == 2 else None, reset=reset)


def prediction_inputs(est, X, groups, fitted: str) -> np.ndarray:
    """The ``(n, d)`` inputs ``predict`` evaluates at: clean rows, or the per-item means of readings."""
    from nolo.sklearn_api._inputs import clean_inputs

    check_fitted(est, fitted)
    feature_names(est, X, groups, reset=False)
    Xc = clean_inputs(X, groups)
    check_n_features(est, Xc.shape[1])
    return Xc


def check_pass_params(est) -> None:
    """``fit_intercept`` (flag), ``max_iter`` (int >= 1), ``tol`` (>= 0), ``shuffle`` (flag)."""
    check_bool(est.fit_intercept, "fit_intercept")
    check_int(est.max_iter, "max_iter", low=1, high=10**6)
    check_scalar(est.tol, "tol", low=0.0)
    check_bool(est.shuffle, "shuffle")


def run_passes(play_pass, coef, *, max_iter: int, tol: float, owner: str, hint: str = "raise max_iter (or tol)"
               ) -> tuple[int, bool, float]:
    """Play passes until the coefficients move less than ``tol`` (relative) between passes, at most ``max_iter``.

    ``play_pass(k)`` plays pass ``k`` and returns the fraction of its checkpoints at which the projection was
    active; ``coef()`` returns the current coefficient vector.  Returns ``(n_iter, converged, bound_fraction)``
    with the warnings raised: :class:`sklearn.exceptions.ConvergenceWarning` when ``max_iter > 1`` passes ran out
    before the test held, :class:`ProjectionWarning` when the projection bound on more than half the checkpoints
    of the last pass.
    """
    prev = None
    converged, bound = False, 0.0
    k = 0
    for k in range(1, max_iter + 1):
        bound = play_pass(k)
        cur = np.array(coef(), dtype=np.float64, copy=True)
        if prev is not None and np.linalg.norm(cur - prev) <= tol * max(1.0, float(np.linalg.norm(cur))):
            converged = True
            break
        prev = cur
    if max_iter > 1 and not converged:
        warnings.warn(
            f"{owner}: the coefficients still moved by more than tol={tol:g} after max_iter={max_iter} passes; {hint}",
            ConvergenceWarning, stacklevel=4)
    if bound > 0.5:
        warnings.warn(
            f"{owner}: the projection on ||w|| <= radius was active at {bound:.0%} of the last pass's checkpoints; "
            "the constraint, not the data, sets the coefficients -- raise radius", ProjectionWarning, stacklevel=4)
    return k, converged, bound


_VALIDATING_SET_PARAMS = (
    "nolo validates every parameter in set_params and rolls back on a bad value (a refused value leaves "
    "the estimator unchanged); scikit-learn wants validation deferred to fit"
)

#: scikit-learn checks that fit on a 2-D X (one reading per item): an estimator that needs >= 2 readings per item
#: (CSS11 Setting 1, Algorithm 2) refuses that input, so these checks cannot pass for it
ONE_READING_CHECKS = (
    "check_dict_unchanged", "check_dont_overwrite_parameters", "check_dtype_object", "check_estimators_dtypes",
    "check_estimators_fit_returns_self", "check_estimators_nan_inf", "check_estimators_overwrite_params",
    "check_estimators_partial_fit_n_features", "check_estimators_pickle", "check_f_contiguous_array_estimator",
    "check_fit2d_1feature", "check_fit2d_1sample", "check_fit2d_predict1d", "check_fit_check_is_fitted",
    "check_fit_idempotent", "check_fit_score_takes_y", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_n_features_in", "check_n_features_in_after_fitting",
    "check_non_transformer_estimators_n_iter", "check_pipeline_consistency", "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input", "check_regressor_data_not_an_array", "check_regressors_int",
    "check_regressors_no_decision_function", "check_regressors_train", "check_supervised_y_2d",
)


def expected_failed_checks(estimator) -> dict[str, str]:
    """The scikit-learn checks ``estimator`` is declared to fail, ``{check name: reason}`` -- for
    ``sklearn.utils.estimator_checks.check_estimator(..., expected_failed_checks=...)`` and
    ``parametrize_with_checks(..., expected_failed_checks=expected_failed_checks)`` (scikit-learn >= 1.6, where
    the ``_xfail_checks`` tag was removed).  Every other check passes."""
    out = {"check_do_not_raise_errors_in_init_or_set_params": _VALIDATING_SET_PARAMS}
    if getattr(estimator, "min_copies", 1) >= 2 or getattr(estimator, "pooled_copies", False):
        why = (f"fits on a 2-D X, i.e. one reading per item; {type(estimator).__name__} needs >= 2 readings per item "
               "(two independent views of each item)" if getattr(estimator, "min_copies", 1) >= 2 else
               f"fits on a 2-D X, i.e. one reading per item; {type(estimator).__name__} estimates the noise from the "
               "items with >= 2 readings")
        out.update({name: why for name in ONE_READING_CHECKS})
        if not hasattr(estimator, "partial_fit"):  # the check passes trivially without partial_fit
            out.pop("check_estimators_partial_fit_n_features")
    return out
