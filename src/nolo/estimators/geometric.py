"""The random degree N of CSS10: P(N = n) = (p - 1) / p**(n + 1), n = 0, 1, 2, ...

Every CSS10 estimator (Lemma 1, Map_Estimate, Grad_Length_Estimate) draws a
degree N with this law and then queries N noisy copies, so (docs/math.md, item 0)

* E[N] = 1 / (p - 1)            (expected number of queries),
* Var[N] = p / (p - 1)**2,
* P(N >= z) = p**(-z)           (z = 0, 1, 2, ...),

and ``p`` trades queries (large p: few) against variance (large p: large).
NumPy's geometric law lives on {1, 2, ...}, hence ``rng.geometric(1 - 1/p) - 1``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from nolo._validation import check_scalar
from nolo.estimators._validated import ValidatedConfigurable
from nolo.exceptions import ParameterError
from nolo.random import as_generator

__all__ = [
    "check_p",
    "sample_degree",
    "degree_pmf",
    "degree_log_pmf",
    "degree_tail",
    "expected_degree",
    "degree_variance",
    "expected_queries",
    "GeometricDegree",
]


def check_p(p: Any, name: str = "p") -> float:
    """``p`` as a float after checking it is a real number > 1 (raises ParameterError)."""
    return check_scalar(p, name, low=1.0, low_inclusive=False)


def sample_degree(rng: np.random.Generator, p: float, size=None):
    """Draw N with P(N = n) = (p - 1) / p**(n + 1) (an int, or an int64 array of shape ``size``)."""
    p = check_p(p)
    rng = as_generator(rng, "rng")
    n = rng.geometric(1.0 - 1.0 / p, size=size) - 1
    return int(n) if size is None else np.asarray(n, dtype=np.int64)


def _check_degrees(n) -> np.ndarray:
    arr = np.asarray(n)
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(arr == np.floor(arr))):
        raise ParameterError(f"n must be a non-negative integer (or array of them), got {n!r}")
    if np.any(arr < 0):
        raise ParameterError(f"n must be >= 0, got {n!r}")
    return arr.astype(np.float64)


def degree_log_pmf(n, p: float):
    """log P(N = n) = log(p - 1) - (n + 1) log p (vectorised in ``n``)."""
    p = check_p(p)
    out = math.log(p - 1.0) - (_check_degrees(n) + 1.0) * math.log(p)
    return float(out) if np.ndim(out) == 0 else out


def degree_pmf(n, p: float):
    """P(N = n) = (p - 1) / p**(n + 1) (vectorised in ``n``)."""
    out = np.exp(degree_log_pmf(n, p))
    return float(out) if np.ndim(out) == 0 else out


def degree_tail(z, p: float):
    """P(N >= z) = p**(-z) for integers z >= 0 (CSS10 Lemma 1; 1 for z <= 0)."""
    p = check_p(p)
    z = np.asarray(z, dtype=np.float64)
    if np.any(z != np.floor(z)):
        raise ParameterError(f"z must be an integer (or array of integers), got {z!r}")
    out = np.power(p, -np.maximum(z, 0.0))
    return float(out) if out.ndim == 0 else out


def expected_degree(p: float) -> float:
    """E[N] = 1 / (p - 1): the expected number of copies one Lemma-1 estimate queries."""
    return 1.0 / (check_p(p) - 1.0)


def degree_variance(p: float) -> float:
    """Var[N] = p / (p - 1)**2."""
    p = check_p(p)
    return p / (p - 1.0) ** 2


def expected_queries(p: float, copies_per_degree: float = 1.0, calls: float = 1.0) -> float:
    """Expected oracle queries of ``calls`` independent estimates, each using ``copies_per_degree * N`` copies.

    ``copies_per_degree = 2`` is e.g. the Gaussian-kernel factor that pairs copies
    (docs/math.md, item 5).  Estimators that skip zero coefficients query fewer;
    see :meth:`nolo.estimators.RandomDegreeEstimator.expected_queries`.
    """
    c = check_scalar(copies_per_degree, "copies_per_degree", low=0.0)
    k = check_scalar(calls, "calls", low=0.0)
    return k * c * expected_degree(p)


class GeometricDegree(ValidatedConfigurable):
    """The degree law of CSS10 section 3.2: P(N = n) = (p - 1) / p**(n + 1), p > 1.

    The law-object form of the functions in this module, interchangeable with
    :class:`nolo.estimators.polyseq.ZetaDegree` in the polynomial-sequence
    estimator.
    """

    def __init__(self, p: float = 2.0):
        self.p = p
        self._validate_params()

    def _validate_params(self) -> None:
        check_p(self.p)

    def sample(self, rng, size=None):
        return sample_degree(rng, self.p, size)

    def log_pmf(self, n):
        return degree_log_pmf(n, self.p)

    def pmf(self, n):
        return degree_pmf(n, self.p)

    def tail(self, z):
        return degree_tail(z, self.p)

    @property
    def mean(self) -> float:
        return expected_degree(self.p)

    @property
    def variance(self) -> float:
        return degree_variance(self.p)

    def support_max(self) -> int | None:
        """Largest possible degree (None: unbounded)."""
        return None

