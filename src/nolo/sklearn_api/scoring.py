"""Model selection for errors-in-variables regression: score the risk the estimators are for.

``predict`` of an errors-in-variables estimator targets *clean* inputs: ``y = <w, x> + b`` at the true x.  The
default ``score`` (R^2 on held-out rows) scores it at *noisy* readings instead, where least squares on the noisy
means is by construction the better predictor -- so a grid search on R^2 prefers the uncorrected fit.  The clean-input
squared error is estimable from held-out replicates: with ``z = [xbar, 1]`` and ``theta = (w, b)``,

    E[(y - z^T theta)^2] = E[(y - <w, x> - b)^2] + w^T Sigma w / m,

because the noise of the mean of ``m`` readings is independent of ``y``; so

    corrected risk = mean_i (y_i - xbar_i^T w - b)^2 - w^T Sigma w mean_i(1/m_i)

is an unbiased estimate of the clean-input risk (``Sigma``: the estimator's known ``noise_cov``, else the pooled
within-item covariance of the held-out readings, from the items with two or more).  :func:`corrected_risk_scorer` is
its negative, a scikit-learn scorer (greater is better).

Model selection needs folds of *items*: give the readings as a 3-D array ``(n, m, d)`` or a list of ``(m_i, d)``
arrays (scikit-learn splits their first axis, one item per entry); a long table with ``groups`` converts once with
:func:`to_items`::

    items, y_items = to_items(rows, y_rows, groups=ids)
    GridSearchCV(CorrectedLeastSquaresRegressor(), grid, scoring=corrected_risk_scorer).fit(items, y_items)
"""

from __future__ import annotations

import numpy as np

from nolo.exceptions import ParameterError
from nolo.sklearn_api._inputs import item_targets, target_vector, to_readings

__all__ = ["corrected_risk", "corrected_risk_scorer", "to_items"]


def to_items(X, y=None, groups=None):
    """A long table ``X (N, d)`` with ``groups`` (an item id per row) as a list of ``(m_i, d)`` arrays, one per item
    in order of first appearance, and ``y`` (one per row, constant within an item, or one per item) as one target
    per item; without ``groups`` the readings are returned per item as given."""
    R = to_readings(X, groups)
    items = R.items()
    if y is None:
        return items
    return items, item_targets(target_vector(y), R)


def corrected_risk(estimator, X, y, groups=None) -> float:
    """The unbiased estimate of ``estimator``'s clean-input mean squared error on held-out readings (module
    docstring).  ``X``: readings in any layout the estimators take; ``y``: targets per item (or per row of a long
    table)."""
    R = to_readings(X, groups)
    yv = item_targets(target_vector(y), R)
    w = np.asarray(estimator.coef_, dtype=float)
    b = float(getattr(estimator, "intercept_", 0.0))
    means = R.means()
    if means.shape[1] != w.shape[0]:
        raise ParameterError(f"X has {means.shape[1]} features, but the estimator has {w.shape[0]} coefficients")
    noise = getattr(estimator, "noise_cov", "estimate")
    if isinstance(noise, str) or noise is None:
        from nolo.batch.eiv import _pooled_covariance

        if int(np.max(R.counts)) < 2:
            raise ParameterError("the held-out items all have one reading: the corrected risk needs an item with two "
                                 "or more readings (or an estimator with a known noise_cov)")
        S = _pooled_covariance(R.items())
    else:
        from nolo.kernels.surrogate import compact_noise_covariance

        S = compact_noise_covariance(noise, w.shape[0])  # a scalar or variances: (d,), no d x d matrix
    resid = yv - means @ w - b
    quad = w @ (S * w) if S.ndim == 1 else w @ S @ w
    return float(np.mean(resid ** 2) - quad * np.mean(1.0 / R.counts))


def corrected_risk_scorer(estimator, X, y) -> float:
    """Minus :func:`corrected_risk`: a scikit-learn scorer (``scoring=corrected_risk_scorer``) that ranks fits by
    their clean-input error."""
    return -corrected_risk(estimator, X, y)
