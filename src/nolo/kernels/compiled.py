"""Compiled evaluators of the CSS11 surrogate kernel pairs, dispatched on the kernel's record.

A learner that runs a kernel expansion in a compiled loop asks the kernel
object for its record -- ``pair.spec(d)`` for the surrogate ``k_hat`` (CSS11
eq. (5) or eq. (17)), ``pair.original_spec(d)`` for the original ``k`` -- and
evaluates it with the functions here; it never needs to know which kernel it
holds.  Every kernel of this family is a function of a weighted squared
distance ``q = sum_j weights_j (a_j - b_j)^2``; a record is a ``NamedTuple``
holding ``weights`` and the kernel's scalars, and its class names the compiled
``of_sq(record, q)`` giving the kernel at ``q``:

* :class:`GaussianSpec` (:class:`nolo.kernels.GaussianSurrogateKernel`): ``exp(log_scale - q)``;
* :class:`RadialSpec` (:class:`nolo.kernels.RadialKernelApproximation`): the radial
  surrogate of eq. (17) (corrected, erratum E12) at ``r^2 = q`` (``variance = 0``
  gives the original eq. (16)).

The formula is chosen when numba compiles a loop for the record's type
(:func:`numba.extending.overload` on ``instance_class``, as the bandit core
dispatches on its state records), so there is no table of codes to fall
through, and a record whose class names no ``of_sq`` is a typing error.  A new
kernel of the family is one more record class here and a class in
:mod:`nolo.kernels` returning it; no learner changes.

    >>> import numpy as np
    >>> from nolo.kernels import GaussianSurrogateKernel
    >>> from nolo.kernels.compiled import kernel_value
    >>> k = GaussianSurrogateKernel(width=2.0, noise_cov=0.0)
    >>> a, b = np.array([0.0, 0.0]), np.array([1.0, 1.0])
    >>> round(kernel_value(k.original_spec(2), a, b), 6)   # exp(-2/2)
    0.367879
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np
from numba.extending import overload

import nolo._jit  # noqa: F401  (nolo's cache locator, before the first nb.njit)
from nolo.kernels.radial_quadrature import log_radial_surrogate_value

__all__ = ["GaussianSpec", "RadialSpec", "of_sq", "kernel_value", "weighted_sum", "weighted_sums"]


@nb.njit(cache=True, inline="always")
def gaussian_of_sq(spec, q):
    """``exp(log_scale - q)``: the Gaussian pair of CSS11 eq. (5) at the weighted squared distance ``q``."""
    return math.exp(spec.log_scale - q)


@nb.njit(cache=True, inline="always")
def radial_of_sq(spec, q):
    """The radial surrogate of CSS11 eq. (17) at ``r^2 = q`` (eq. (16) when ``variance = 0``)."""
    return math.exp(log_radial_surrogate_value(q, spec.d, spec.c, spec.variance))


class GaussianSpec(NamedTuple):
    """A Gaussian kernel ``exp(log_scale - sum_j weights_j (a_j - b_j)^2)`` for the compiled loops."""

    weights: np.ndarray
    log_scale: float

    of_sq = gaussian_of_sq


class RadialSpec(NamedTuple):
    """The radial surrogate of dimension ``d``, parameter ``c`` and noise variance ``variance`` (unit weights)."""

    weights: np.ndarray
    d: float
    c: float
    variance: float

    of_sq = radial_of_sq


def of_sq(spec, q):
    """The kernel of the record ``spec`` at the weighted squared distance ``q`` (compiled code only)."""
    raise NotImplementedError("compiled code only")


@overload(of_sq, inline="always")
def _of_sq(spec, q):
    fn = getattr(getattr(spec, "instance_class", None), "of_sq", None)
    if fn is None:
        raise TypeError(f"{spec} is not a kernel record: its class must name a compiled `of_sq` "
                        "(see nolo.kernels.compiled)")
    return lambda spec, q: fn(spec, q)


@nb.njit(cache=True, inline="always")
def kernel_value(spec, a, b):
    """``k(a, b)`` for the kernel record ``spec`` (see the module docstring)."""
    weights = spec.weights
    q = 0.0
    for j in range(a.shape[0]):
        diff = a[j] - b[j]
        q += weights[j] * diff * diff
    return of_sq(spec, q)


@nb.njit(cache=True)
def weighted_sum(spec, S, alpha, n, z):
    """``sum_{i<n} alpha_i k(S_i, z)``: a kernel expansion over the first ``n`` support rows at ``z``."""
    s = 0.0
    for i in range(n):
        s += alpha[i] * kernel_value(spec, S[i], z)
    return s


@nb.njit(cache=True)
def weighted_sums(spec, S, alpha, n, X, out):
    """``out[i] = sum_{j<n} alpha_j k(S_j, X_i)`` for every row of ``X``."""
    for i in range(X.shape[0]):
        out[i] = weighted_sum(spec, S, alpha, n, X[i])
