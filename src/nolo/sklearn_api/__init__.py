"""Scikit-learn-style estimators (``fit``/``partial_fit``/``predict``) on repeated noisy readings.

* errors-in-variables regression, the practitioner's first choice: :class:`EIVRegressor` (online,
  bias-compensated RLS), :class:`CorrectedLeastSquaresRegressor` (batch);
* CSS10 (unknown noise): :class:`NoisyKernelRegressor`, :class:`NoisyKernelClassifier`;
* CSS11 (side information on the noise): :class:`TwoCopyRegressor`,
  :class:`KnownCovarianceRegressor`, :class:`GaussianNoiseKernelRegressor`.

Inputs (one converter for all, :mod:`nolo.sklearn_api._inputs`): a 3-D array ``(n, m, d)`` of ``m`` readings
per item, a ragged list of ``(m_i, d)`` arrays, or a long table ``X (N, d)`` with ``groups`` (the item id of
each row): ``est.fit(X_long, y, groups=item_ids)``.  Every estimator standardises internally (undone for its
outputs), fits an intercept by default and warns when ``fit``'s passes did not converge
(``ConvergenceWarning``), when the projection decided the coefficients (:class:`ProjectionWarning`) and, for the
CSS11 linear estimators, when the errors-in-variables correction is ill-posed for the sample
(:class:`IllPosedCorrectionWarning`: use :class:`EIVRegressor`).
Model selection: :func:`corrected_risk_scorer` scores the clean-input risk the estimators are for (the default R^2
at noisy inputs prefers the uncorrected fit), on folds of items (:func:`to_items` for a long table).
:func:`expected_failed_checks` lists the scikit-learn checks an estimator is declared to fail, and why.
"""

from nolo.sklearn_api._base import IllPosedCorrectionWarning, NotFittedError, ProjectionWarning, expected_failed_checks
from nolo.sklearn_api.noisy_kernel import NoisyKernelClassifier, NoisyKernelRegressor
from nolo.sklearn_api.known_noise import GaussianNoiseKernelRegressor, KnownCovarianceRegressor, TwoCopyRegressor
from nolo.sklearn_api.eiv import CorrectedLeastSquaresRegressor, EIVRegressor
from nolo.sklearn_api.scoring import corrected_risk, corrected_risk_scorer, to_items

__all__ = [
    "EIVRegressor",
    "CorrectedLeastSquaresRegressor",
    "NoisyKernelRegressor",
    "NoisyKernelClassifier",
    "TwoCopyRegressor",
    "KnownCovarianceRegressor",
    "GaussianNoiseKernelRegressor",
]
#: the model-selection helpers (functions, not estimators: kept out of ``__all__``, which lists the estimators)
SCORING = ("corrected_risk", "corrected_risk_scorer", "to_items")
