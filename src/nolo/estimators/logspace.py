"""Overflow-safe products: carry (sign, log|.|) and exponentiate once, checking the range.

The CSS10 estimators are products of many factors times ``p**(N+1)``; the
naive product overflows float64 long before the result does (docs/math.md,
item 10, \"Overflow\").  Everything here works on signs and logs and raises
:class:`nolo.NumericalError` where the final value is not representable,
instead of returning ``inf`` or ``nan``.
"""

from __future__ import annotations

import math

import numpy as np

from nolo.exceptions import NumericalError

__all__ = ["LOG_FLOAT_MAX", "signed_log_product", "signed_exp", "signed_log"]

#: log of the largest finite float64 (~709.78); a log-magnitude above this cannot be returned.
LOG_FLOAT_MAX = math.log(np.finfo(np.float64).max)


def signed_log(values) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise (sign, log|v|) with sign 0 and log -inf for zeros."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.sign(v), np.log(np.abs(v))


def signed_log_product(values, axis=None) -> tuple[float | np.ndarray, float | np.ndarray]:
    """(sign, log|prod|) of ``values`` along ``axis`` without forming the product."""
    s, lg = signed_log(values)
    return np.prod(s, axis=axis), np.sum(lg, axis=axis)


def signed_exp(sign, log_abs, what: str = "estimate"):
    """``sign * exp(log_abs)``, raising NumericalError if it would overflow float64.

    ``sign`` 0 gives exactly 0 whatever ``log_abs`` is (an empty coefficient
    or a zero factor), so ``0 * inf`` never happens.
    """
    sign = np.asarray(sign, dtype=np.float64)
    log_abs = np.asarray(log_abs, dtype=np.float64)
    live = sign != 0
    if np.any(np.isnan(log_abs[live])):
        raise NumericalError(f"{what}: log-magnitude is NaN")
    if np.any(log_abs[live] > LOG_FLOAT_MAX):
        worst = float(np.max(log_abs[live]))
        raise NumericalError(
            f"{what} is not representable in float64: |value| = exp({worst:.1f}) > exp({LOG_FLOAT_MAX:.2f}). "
            "The estimator's variance is astronomically large in this regime: rescale the inputs "
            "(smaller norms), or lower p or the loss's sharpness s."
        )
    out = np.where(live, sign * np.exp(np.where(live, log_abs, 0.0)), 0.0)
    return float(out) if out.ndim == 0 else out
