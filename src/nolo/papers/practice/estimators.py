"""The estimators the practitioners' comparison runs, by name: each fits ``(readings, y)`` and returns ``(coef, intercept)``.

A fit function takes the readings ``R`` (``(n, m, d)``), the targets ``y``, the
noise variance of one reading ``noise_var`` (only the known-covariance learner
is told it; every other nolo estimator estimates what it needs from the
replicates) and a seed.  Defaults are the ones a new user gets: scikit-learn's ``LinearRegression()``,
``CorrectedLeastSquares()`` (``noise_cov="estimate"``; the cross-validated guard ``cv_folds=5`` with the
one-standard-error rule is its default), ``BiasCompensatedRLS()``
(``noise="repeated"``, the same default guard), both also without the guard (``cv_folds=None``: the full
correction, the default before) and with Fuller's small-sample option alone (``fuller_alpha=5, cv_folds=None``),
and the CSS11 scikit-learn estimators with their defaults (scale-free: standardised data, intercept, up to
``max_iter`` passes).  A CSS11 fit that used every pass without meeting ``tol``
warns (ConvergenceWarning), an ill-posed one IllPosedCorrectionWarning; the experiment scores it as fitted
and keeps the console quiet -- its R^2 is what the table reports.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression

from nolo.batch import CorrectedLeastSquares
from nolo.exceptions import NumericalError
from nolo.learners.linear.bias_compensated_rls import BiasCompensatedRLS
from nolo.sklearn_api import IllPosedCorrectionWarning, KnownCovarianceRegressor, TwoCopyRegressor

__all__ = ["ESTIMATORS", "NOLO_ESTIMATORS", "LABELS", "fit"]

#: sweeps of the fixed-point solve per item for "to convergence" (one sweep is the one-pass default)
CONVERGED_SWEEPS = 20
#: Fuller's small-sample modification (1987, section 2.5.1) in the "_fuller5" rows: the mean-squared-error choice
FULLER_ALPHA = 5.0


def _ols_mean(R, y, noise_var, seed):
    m = LinearRegression().fit(R.mean(axis=1), y)
    return m.coef_, float(m.intercept_)


def _ols_one(R, y, noise_var, seed):
    m = LinearRegression().fit(R[:, 0], y)
    return m.coef_, float(m.intercept_)


def _corrected_ls(fuller_alpha=None, cv_folds=5):
    def fit_(R, y, noise_var, seed):
        try:
            return CorrectedLeastSquares(fuller_alpha=fuller_alpha, cv_folds=cv_folds).fit(R, y).coef_, 0.0
        except NumericalError:  # indefinite corrected moment matrix (small n, heavy noise): no estimate
            return np.full(R.shape[2], np.nan), np.nan

    return fit_


def _bcrls(sweeps: int, fuller_alpha=None, cv_folds=5):
    def fit_(R, y, noise_var, seed):
        m = BiasCompensatedRLS(sweeps=sweeps, fuller_alpha=fuller_alpha, cv_folds=cv_folds)
        m.learn_stream(R, y)
        return m.coef_, float(m.intercept_)

    return fit_


def _fit_quietly(est, R, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", IllPosedCorrectionWarning)
        m = est.fit(R, y)
    return m.coef_, float(m.intercept_)


def _two_copy(R, y, noise_var, seed):
    return _fit_quietly(TwoCopyRegressor(seed=seed), R, y)


def _known_cov(R, y, noise_var, seed):
    return _fit_quietly(KnownCovarianceRegressor(noise_cov=noise_var, seed=seed), R, y)


#: name -> fit function, in table order
ESTIMATORS = {
    "ols_mean": _ols_mean,
    "ols_one": _ols_one,
    "corrected_ls": _corrected_ls(),
    "corrected_ls_full": _corrected_ls(cv_folds=None),
    "corrected_ls_fuller5": _corrected_ls(FULLER_ALPHA, cv_folds=None),
    "bcrls_1pass": _bcrls(1),
    "bcrls_1pass_full": _bcrls(1, cv_folds=None),
    "bcrls_1pass_fuller5": _bcrls(1, FULLER_ALPHA, cv_folds=None),
    "bcrls_converged": _bcrls(CONVERGED_SWEEPS),
    "two_copy_ogd": _two_copy,
    "known_cov_ogd": _known_cov,
}

#: the estimators nolo provides (the target-scale claim is about these)
NOLO_ESTIMATORS = ("corrected_ls", "corrected_ls_full", "corrected_ls_fuller5", "bcrls_1pass", "bcrls_1pass_full",
                   "bcrls_1pass_fuller5", "bcrls_converged",
                   "two_copy_ogd", "known_cov_ogd")

LABELS = {
    "ols_mean": "sklearn OLS on the mean of readings",
    "ols_one": "sklearn OLS on one reading",
    "corrected_ls": "nolo.batch.CorrectedLeastSquares",
    "corrected_ls_full": "CorrectedLeastSquares(cv_folds=None)",
    "corrected_ls_fuller5": "CorrectedLeastSquares(fuller_alpha=5, cv_folds=None)",
    "bcrls_1pass": "BiasCompensatedRLS, one pass",
    "bcrls_1pass_full": "BiasCompensatedRLS(cv_folds=None), one pass",
    "bcrls_1pass_fuller5": "BiasCompensatedRLS(fuller_alpha=5, cv_folds=None), one pass",
    "bcrls_converged": f"BiasCompensatedRLS, {CONVERGED_SWEEPS} sweeps per item",
    "two_copy_ogd": "CSS11 TwoCopyRegressor (OGD)",
    "known_cov_ogd": "CSS11 KnownCovarianceRegressor (OGD)",
}


def fit(name: str, R: np.ndarray, y: np.ndarray, noise_var, seed: int) -> tuple[np.ndarray, float]:
    """``(coef, intercept)`` of estimator ``name`` fitted on readings ``R`` ``(n, m, d)`` and targets ``y``."""
    return ESTIMATORS[name](R, y, noise_var, seed)
