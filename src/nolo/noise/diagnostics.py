"""Checking a noise law against samples: z-scores of the first and second moments.

Two uses:

* tests -- does a :class:`nolo.noise.NoiseModel` produce zero-mean draws with
  the covariance it claims?
* real data -- is a claimed noise covariance (the known ``Sigma`` of CSS11
  Setting 2) consistent with repeated measurements?  :func:`pooled_covariance`
  estimates it from the within-item scatter of repeated measurements.

:func:`moment_z_scores` standardises each entry of the sample mean and of the
sample second-moment matrix ``mean(Z_j Z_k)`` by its own standard error
(``sd / sqrt(n)`` of the per-sample terms, i.e. the empirical fourth moment for
the covariance entries).  With ``d`` coordinates there are
``d + d(d+1)/2`` scores; under the claimed law each is approximately
``N(0, 1)``, so requiring ``|z| <= 4`` for all of them has a family-wise false
alarm rate below ``(d + d(d+1)/2) * 6.4e-5`` (Bonferroni).  The empirical
standard error needs finite fourth moments (Student-t: ``df > 4``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nolo._validation import check_array
from nolo.exceptions import ParameterError
from nolo.noise.pool import as_measurement_items

__all__ = ["MomentCheck", "moment_z_scores", "pooled_covariance"]


@dataclass(frozen=True)
class MomentCheck:
    """z-scores of the sample mean (``mean_z``, shape (d,)) and second moments (``cov_z``, shape (d, d))."""

    mean_z: np.ndarray
    cov_z: np.ndarray
    n: int

    @property
    def max_abs_z(self) -> float:
        """Largest ``|z|`` over the mean and the upper triangle of the second-moment matrix."""
        iu = np.triu_indices(self.cov_z.shape[0])
        return float(max(np.max(np.abs(self.mean_z)), np.max(np.abs(self.cov_z[iu]))))

    def passes(self, bound: float = 4.0) -> bool:
        return self.max_abs_z <= bound


def _z(est: np.ndarray, target: np.ndarray, se: np.ndarray) -> np.ndarray:
    """(est - target) / se, with 0 where both the deviation and the SE vanish (degenerate coordinates)."""
    diff = est - target
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.where(np.abs(diff) > 0, np.inf, 0.0))
    return z


def moment_z_scores(samples, cov, mean=None) -> MomentCheck:
    """z-scores of the samples' mean against ``mean`` (default 0) and of ``E[(Z-mean)(Z-mean)^T]`` against ``cov``.

    ``samples`` is ``(n, d)`` with ``n >= 2``; ``cov`` is ``(d, d)``.  An entry
    whose samples are constant gets ``z = 0`` if it matches and ``inf``
    otherwise.
    """
    z = check_array(samples, "samples", ndim=2)
    n, d = z.shape
    if n < 2:
        raise ParameterError(f"samples must have at least 2 rows, got {n}")
    cov = check_array(cov, "cov", shape=(d, d))
    mu = np.zeros(d) if mean is None else check_array(mean, "mean", shape=(d,))
    c = z - mu
    mean_est = c.mean(axis=0)
    mean_se = c.std(axis=0, ddof=1) / np.sqrt(n)
    cov_est = np.empty((d, d))
    cov_se = np.empty((d, d))
    for j in range(d):  # one (n,) product at a time: memory O(n), not O(n d^2)
        for k in range(j, d):
            prod = c[:, j] * c[:, k]
            cov_est[j, k] = cov_est[k, j] = prod.mean()
            cov_se[j, k] = cov_se[k, j] = prod.std(ddof=1) / np.sqrt(n)
    return MomentCheck(mean_z=_z(mean_est, np.zeros(d), mean_se), cov_z=_z(cov_est, cov, cov_se), n=n)


def pooled_covariance(data) -> np.ndarray:
    """Within-item covariance of repeated measurements: an estimate of the noise covariance.

    ``data`` is an ``(n, m, d)`` array or a list of ``(m_i, d)`` arrays.
    Each item's copies are centred on the item's own mean; the pooled
    estimate is ``sum_i sum_k (x_ik - xbar_i)(x_ik - xbar_i)^T / sum_i (m_i - 1)``,
    unbiased for a noise covariance shared by all items.  Items with a single
    copy carry no information and are skipped.
    """
    items = as_measurement_items(data)
    d = items[0].shape[1]
    scatter = np.zeros((d, d))
    dof = 0
    for a in items:
        if a.shape[0] < 2:
            continue
        c = a - a.mean(axis=0)
        scatter += c.T @ c
        dof += a.shape[0] - 1
    if dof == 0:
        raise ParameterError("data must contain at least one item with 2 or more copies to estimate a covariance")
    return scatter / dof
