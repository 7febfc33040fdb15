"""What every estimator of :mod:`nolo.sklearn_api` shares: the not-fitted error, the pass loop with its
convergence test and warnings, the common parameter checks and the scikit-learn tags / expected check failures."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.exceptions import NotFittedError as _SkNotFitted

from nolo._validation import check_bool, check_int, check_scalar
from nolo.exceptions import ParameterError

__all__ = ["NotFittedError", "ProjectionWarning", "check_fitted", "check_pass_params", "run_passes",
           "READINGS_LAYOUT_CHECKS"]


class NotFittedError(ParameterError, _SkNotFitted):
    """``predict`` (or ``partial_fit`` continuation state) asked of an estimator that was never fitted.

    Both a :class:`nolo.ParameterError` and scikit-learn's :class:`sklearn.exceptions.NotFittedError`."""


class ProjectionWarning(UserWarning):
    """The projection on the ball of radius ``radius`` was active at most checkpoints of a pass: the constraint,
    not the data, decides the coefficients (raise ``radius``)."""


def check_fitted(est, attr: str) -> None:
    if not hasattr(est, attr):
        raise NotFittedError(f"{type(est).__name__} is not fitted yet: call fit(X, y) before using it")


def check_pass_params(est) -> None:
    """``fit_intercept`` (flag), ``max_iter`` (int >= 1), ``tol`` (>= 0), ``shuffle`` (flag)."""
    check_bool(est.fit_intercept, "fit_intercept")
    check_int(est.max_iter, "max_iter", low=1, high=10**6)
    check_scalar(est.tol, "tol", low=0.0)
    check_bool(est.shuffle, "shuffle")


def run_passes(play_pass, coef, *, max_iter: int, tol: float, owner: str) -> tuple[int, bool, float]:
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
            f"{owner}: the coefficients still moved by more than tol={tol:g} after max_iter={max_iter} passes; "
            "raise max_iter (or tol)", ConvergenceWarning, stacklevel=3)
    if bound > 0.5:
        warnings.warn(
            f"{owner}: the projection on ||w|| <= radius was active at {bound:.0%} of the last pass's checkpoints; "
            "the constraint, not the data, sets the coefficients -- raise radius", ProjectionWarning, stacklevel=3)
    return k, converged, bound


#: scikit-learn checks that cannot hold for estimators whose unit is an *item* of several readings (declared as
#: expected failures, see tests/test_sklearn_conformance.py); keys are check names, values the reason
READINGS_LAYOUT_CHECKS: dict[str, str] = {}
