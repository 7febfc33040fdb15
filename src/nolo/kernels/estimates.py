"""The noisy feature estimate ``Psi~(x)`` of CSS10 eq. (2) as a small data structure.

CSS10 section 4.1: "in terms of implementation, it is simply a data structure
consisting of a finite set of vectors from R^d".  Here it is the degree ``n``,
the ``n`` noisy copies, and the scalar in front of them kept as a sign and a
log-magnitude::

    Psi~(x) = sign * exp(log_weight) * sum_{k_1..k_n} x~_{k_1}^(1) ... x~_{k_n}^(n) e_{n,k_1..k_n}

with ``exp(log_weight) = sqrt(beta_n) p^(n+1)/(p-1)`` for a dot-product kernel
(times ``|c~|`` for the Gaussian kernel, docs/math.md, item 5).  Keeping the
weight in log space lets ``Prod`` multiply ``p^(2n+2)`` by many inner products
and raise :class:`nolo.NumericalError` only if the *result* is not
representable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from nolo.estimators.logspace import LOG_FLOAT_MAX, signed_exp

__all__ = ["FeatureEstimate", "degree_weight", "log_abs_dots", "signed_value"]


@dataclass(frozen=True)
class FeatureEstimate:
    """``Psi~(x)``: degree, copies ``(n, d)``, sign and log-weight of the scalar factor, queries used.

    ``sign == 0`` is the zero element (a degree with ``beta_n = 0``, or a
    vanishing Gaussian norm factor); its copies may be empty.
    """

    degree: int
    copies: np.ndarray
    sign: float
    log_weight: float
    queries: int

    @classmethod
    def zero(cls, degree: int, d: int) -> "FeatureEstimate":
        return cls(int(degree), np.empty((0, d)), 0.0, 0.0, 0)

    @property
    def is_zero(self) -> bool:
        return self.sign == 0


def degree_weight(log_beta_n: float, n: int, p: float) -> float:
    """``log(sqrt(beta_n) p^(n+1)/(p-1))``, the log of eq. (2)'s scalar."""
    return 0.5 * log_beta_n + (n + 1) * math.log(p) - math.log(p - 1.0)


def log_abs_dots(dots: np.ndarray, axis: int | None = None):
    """(sign, log|prod|) of inner products along ``axis`` (empty product: (1, 0)); floats for ``axis=None``."""
    dots = np.asarray(dots, dtype=np.float64)
    if axis is None:
        sg, lg = 1.0, 0.0
        for v in dots.ravel().tolist():
            if v == 0.0:
                return 0.0, 0.0
            if v < 0.0:
                sg = -sg
            lg += math.log(abs(v))
        return sg, lg
    with np.errstate(divide="ignore"):
        lg = np.log(np.abs(dots))
    s = np.prod(np.sign(dots), axis=axis)
    total = np.sum(np.where(dots == 0, 0.0, lg), axis=axis)
    return s, total


def signed_value(sign, log_abs, what: str):
    """``sign * exp(log_abs)``; NumericalError if not representable in float64 (scalar fast path)."""
    if isinstance(sign, float) and isinstance(log_abs, float):
        if sign == 0.0:
            return 0.0
        if log_abs <= LOG_FLOAT_MAX:
            return sign * math.exp(log_abs)
    return signed_exp(sign, log_abs, what)
