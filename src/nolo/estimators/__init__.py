"""Unbiased estimators of nonlinear functions of a mean (CSS10 section 3.2, Lemma 1; slides), and of moments
from repeated readings (:mod:`nolo.estimators.replicates`)."""

from nolo.estimators.geometric import (
    GeometricDegree,
    check_p,
    degree_log_pmf,
    degree_pmf,
    degree_tail,
    degree_variance,
    expected_degree,
    expected_queries,
    sample_degree,
)
from nolo.estimators.lemma1 import Lemma1Batch, Lemma1Estimate, RandomDegreeEstimator, resolve_series
from nolo.estimators.polyseq import (
    ChebyshevSequence,
    PolynomialSequence,
    PolynomialSequenceEstimator,
    TaylorSequence,
)
from nolo.estimators.replicates import mean_cross, mean_noise_covariance, pairwise_outer, pairwise_outer_matvec
from nolo.estimators.results import Estimate, EstimateBatch
from nolo.estimators.zeta import ZetaDegree
from nolo.estimators.logspace import LOG_FLOAT_MAX, signed_exp, signed_log, signed_log_product
from nolo.estimators.series import TaylorSeries

__all__ = [
    "LOG_FLOAT_MAX",
    "ChebyshevSequence",
    "Estimate",
    "EstimateBatch",
    "PolynomialSequence",
    "PolynomialSequenceEstimator",
    "TaylorSequence",
    "ZetaDegree",
    "GeometricDegree",
    "Lemma1Batch",
    "Lemma1Estimate",
    "RandomDegreeEstimator",
    "TaylorSeries",
    "check_p",
    "degree_log_pmf",
    "degree_pmf",
    "degree_tail",
    "degree_variance",
    "expected_degree",
    "expected_queries",
    "mean_cross",
    "mean_noise_covariance",
    "pairwise_outer",
    "pairwise_outer_matvec",
    "resolve_series",
    "sample_degree",
    "signed_exp",
    "signed_log",
    "signed_log_product",
]
