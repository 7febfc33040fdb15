"""Kernels and their unbiased noisy feature estimates (CSS10 sections 3.3 and 5.2; docs/math.md, items 2-5).

* :class:`Kernel` -- the base of every kernel (Gram matrix on clean inputs);
  :class:`NoisyFeatureKernel` -- a kernel with ``map_estimate`` (CSS10
  Subroutine 2), ``prod`` (Subroutine 3) and ``prod_clean`` (Subroutine 4);
* dot-product kernels given by their coefficients ``beta_n``:
  :class:`DotProductKernel`, :class:`LinearKernel`, :class:`PolynomialKernel`,
  :class:`ExponentialKernel`;
* :class:`GaussianKernel` via the factorisation of docs/math.md, item 5;
* :class:`FeatureEstimate` -- the data structure ``Psi~(x)``;
* :func:`grad_length_estimate` -- CSS10 Subroutine 1 with erratum E1 corrected.

The CSS11 surrogate kernel pairs (``k`` for prediction, ``k_hat`` for
training on noisy points) live in :mod:`nolo.kernels.surrogate`
(:class:`GaussianSurrogateKernel`, eq. (5)) and :mod:`nolo.kernels.radial`
(:class:`RadialKernelApproximation`, appendix E) and are re-exported here; random Fourier features of the Gaussian
kernel (Rahimi & Recht 2007), the explicit map the bandit learners run on, in :mod:`nolo.kernels.random_features`;
truncated Nyström features (Williams & Seeger 2001, kernel PCA on landmark rows) in :mod:`nolo.kernels.nystroem`.
"""

from nolo._registry import Registry
from nolo.kernels.base import Kernel, NoisyFeatureKernel
from nolo.kernels.dot_product import DotProductKernel, ExponentialKernel, LinearKernel, PolynomialKernel
from nolo.kernels.estimates import FeatureEstimate
from nolo.kernels.gaussian import GaussianKernel
from nolo.kernels.grad_length import GradLength, grad_length_estimate
from nolo.kernels.nystroem import NystroemFeatures
from nolo.kernels.radial import RadialKernelApproximation
from nolo.kernels.random_features import RandomFourierFeatures, median_sq_distance
from nolo.kernels.surrogate import GaussianSurrogateKernel, SurrogateKernelPair

__all__ = [
    "Kernel",
    "NoisyFeatureKernel",
    "DotProductKernel",
    "LinearKernel",
    "PolynomialKernel",
    "ExponentialKernel",
    "GaussianKernel",
    "FeatureEstimate",
    "GradLength",
    "grad_length_estimate",
    "get_kernel",
    "KERNELS",
    "SurrogateKernelPair",
    "GaussianSurrogateKernel",
    "RadialKernelApproximation",
    "RandomFourierFeatures",
    "median_sq_distance",
    "NystroemFeatures",
]

#: name -> kernel class (:func:`get_kernel`)
KERNELS = Registry("kernel")
for _name, _cls in (("linear", LinearKernel), ("polynomial", PolynomialKernel), ("poly", PolynomialKernel),
                    ("exponential", ExponentialKernel), ("gaussian", GaussianKernel), ("rbf", GaussianKernel)):
    KERNELS.register(_name, _cls)
del _name, _cls


def get_kernel(name, **params) -> Kernel:
    """A kernel by name (``linear``, ``polynomial``/``poly``, ``exponential``, ``gaussian``/``rbf``) or as given."""
    if isinstance(name, Kernel):
        return name
    return KERNELS.get(name)(**params).validate()
