"""CSS11 linear learners: Settings 1-2 of Algorithm 1 and the naive one-copy baseline.

* :class:`TwoCopyLinearRegression` -- Setting 1, two copies of x (Lemma 1, Theorem 1; G corrected, E10);
* :class:`KnownCovarianceLinearRegression` -- Setting 2, one copy and a known ``Sigma_t``
  (Lemma 2, Theorem 2; correction ``-2 Sigma w``, E9);
* :class:`NaiveOGDRegression` -- OGD on one noisy copy (attenuation-biased baseline);
* :class:`BiasCompensatedRLS` -- not from CSS11: the second-order online errors-in-variables estimator
  (bias-compensated recursive least squares; known Sigma, repeated readings or two copies).

The clean-data baseline is :class:`nolo.learners.ProjectedOGD` (squared loss, ``L2Ball``).
Gradient estimates and variance constants: :mod:`nolo.learners.linear.gradients`.
"""

from nolo.learners.linear.bias_compensated_rls import BiasCompensatedRLS
from nolo.learners.linear.gradients import (
    clean_gradient,
    known_covariance_gradient,
    naive_gradient,
    setting1_G,
    setting2_G,
    theory_eta,
    two_copy_gradient,
)
from nolo.learners.linear.known_covariance import KnownCovarianceLinearRegression
from nolo.learners.linear.naive import NaiveOGDRegression
from nolo.learners.linear.two_copy import TwoCopyLinearRegression

__all__ = [
    "BiasCompensatedRLS",
    "TwoCopyLinearRegression",
    "KnownCovarianceLinearRegression",
    "NaiveOGDRegression",
    "clean_gradient",
    "naive_gradient",
    "two_copy_gradient",
    "known_covariance_gradient",
    "setting1_G",
    "setting2_G",
    "theory_eta",
]
