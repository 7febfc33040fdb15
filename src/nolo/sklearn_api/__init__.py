"""Scikit-learn-style estimators (``fit``/``partial_fit``/``predict``) on repeated noisy measurements.

* CSS10 (unknown noise): :class:`NoisyKernelRegressor`, :class:`NoisyKernelClassifier`;
* CSS11 (side information on the noise): :class:`TwoCopyRegressor`,
  :class:`KnownCovarianceRegressor`, :class:`GaussianNoiseKernelRegressor`.
"""

from nolo.sklearn_api.css10 import NoisyKernelClassifier, NoisyKernelRegressor
from nolo.sklearn_api.css11 import GaussianNoiseKernelRegressor, KnownCovarianceRegressor, TwoCopyRegressor

__all__ = [
    "NoisyKernelRegressor",
    "NoisyKernelClassifier",
    "TwoCopyRegressor",
    "KnownCovarianceRegressor",
    "GaussianNoiseKernelRegressor",
]
