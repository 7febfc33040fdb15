"""Unbiased estimators of nonlinear functions of a mean (CSS10 section 3.2, Lemma 1; slides)."""

from nolo.estimators.logspace import LOG_FLOAT_MAX, signed_exp, signed_log, signed_log_product
from nolo.estimators.series import TaylorSeries

__all__ = ["LOG_FLOAT_MAX", "TaylorSeries", "signed_exp", "signed_log", "signed_log_product"]
