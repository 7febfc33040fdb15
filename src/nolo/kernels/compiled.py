"""Compiled evaluators of the CSS11 surrogate kernel pairs, behind one public interface.

A learner that runs a kernel expansion in a compiled loop asks the kernel
object for a :class:`KernelSpec` -- ``pair.spec(d)`` for the surrogate
``k_hat`` (CSS11 eq. (5) or eq. (17)), ``pair.original_spec(d)`` for the
original ``k`` -- and evaluates it with the functions here; it never needs
to know which kernel it holds.  Every kernel of this family is a function of
a weighted squared distance ``q = sum_j weights_j (a_j - b_j)^2``:

* ``GAUSSIAN`` (:class:`nolo.kernels.GaussianSurrogateKernel`): ``exp(params[0] - q)``;
* ``RADIAL`` (:class:`nolo.kernels.RadialKernelApproximation`): the radial
  surrogate of eq. (17) (corrected, erratum E12) at ``r^2 = q`` with
  ``params = [d, c, sigma^2]`` (``sigma^2 = 0`` gives the original eq. (16)).

A new kernel of the family is one more code here and a class in
:mod:`nolo.kernels` returning its spec; no learner changes.

    >>> import numpy as np
    >>> from nolo.kernels import GaussianSurrogateKernel
    >>> from nolo.kernels.compiled import kernel_value
    >>> k = GaussianSurrogateKernel(width=2.0, noise_cov=0.0)
    >>> s = k.original_spec(2)
    >>> a, b = np.array([0.0, 0.0]), np.array([1.0, 1.0])
    >>> round(kernel_value(s.kind, s.weights, s.params, a, b), 6)   # exp(-2/2)
    0.367879
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np

from nolo.kernels.radial import log_radial_surrogate_value

__all__ = ["GAUSSIAN", "RADIAL", "KernelSpec", "kernel_value", "weighted_sum", "weighted_sums"]

#: evaluator codes (``KernelSpec.kind``)
GAUSSIAN, RADIAL = 0, 1


class KernelSpec(NamedTuple):
    """What a compiled loop needs to evaluate a kernel: evaluator code, squared-distance weights, scalars."""

    kind: int
    weights: np.ndarray
    params: np.ndarray


@nb.njit(cache=True, inline="always")
def kernel_value(kind, weights, params, a, b):
    """``k(a, b)`` for the kernel coded by ``(kind, weights, params)`` (see the module docstring)."""
    q = 0.0
    for j in range(a.shape[0]):
        diff = a[j] - b[j]
        q += weights[j] * diff * diff
    if kind == GAUSSIAN:
        return math.exp(params[0] - q)
    return math.exp(log_radial_surrogate_value(q, params[0], params[1], params[2]))


@nb.njit(cache=True)
def weighted_sum(kind, weights, params, S, alpha, n, z):
    """``sum_{i<n} alpha_i k(S_i, z)``: a kernel expansion over the first ``n`` support rows at ``z``."""
    s = 0.0
    for i in range(n):
        s += alpha[i] * kernel_value(kind, weights, params, S[i], z)
    return s


@nb.njit(cache=True)
def weighted_sums(kind, weights, params, S, alpha, n, X, out):
    """``out[i] = sum_{j<n} alpha_j k(S_j, X_i)`` for every row of ``X``."""
    for i in range(X.shape[0]):
        out[i] = weighted_sum(kind, weights, params, S, alpha, n, X[i])
