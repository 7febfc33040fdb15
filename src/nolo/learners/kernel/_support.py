"""Compiled inner loops over the support of a kernel expansion, bucketed by degree.

The support of Algorithm 1 (CSS10) is a list of feature estimates
``Psi~(x_i)``; ``Prod`` between estimates of different degrees is 0, so the
estimates of degree ``n`` are kept in one contiguous array
``copies[n]`` of shape ``(capacity, n, d)`` with float coefficients
``coef[n]`` relative to a per-bucket log-shift (see
:class:`DegreeBuckets`).  The loops below compute, for one bucket,

    S = sum_i coef_i prod_k <copies[i, k], v_k>

against a fresh estimate (``v_k`` its copies) or a clean point (``v_k = x'``
for all ``k``), in float64 with a log-space fallback when the float sum
overflows (never a silent ``inf``).
"""

from __future__ import annotations

import math

import numpy as np

from nolo._jit import njit
from nolo.exceptions import NumericalError

__all__ = ["bucket_dot", "bucket_dot_clean", "DegreeBuckets"]


@njit(cache=True)
def _bucket_dot_float(copies, coef, m, fresh):
    n = copies.shape[1]
    d = copies.shape[2]
    acc = 0.0
    for i in range(m):
        prod = coef[i]
        for k in range(n):
            s = 0.0
            for j in range(d):
                s += copies[i, k, j] * fresh[k, j]
            prod *= s
        acc += prod
    return acc


@njit(cache=True)
def _scaled_dot(a, b):
    """(sign, log|<a, b>|) without overflow: both vectors scaled by their max-abs first."""
    ma = 0.0
    mb = 0.0
    for j in range(a.shape[0]):
        ma = max(ma, abs(a[j]))
        mb = max(mb, abs(b[j]))
    if ma == 0.0 or mb == 0.0:
        return 0.0, -np.inf
    s = 0.0
    for j in range(a.shape[0]):
        s += (a[j] / ma) * (b[j] / mb)
    if s == 0.0:
        return 0.0, -np.inf
    return (1.0 if s > 0 else -1.0), math.log(abs(s)) + math.log(ma) + math.log(mb)


@njit(cache=True)
def _bucket_dot_log(copies, coef, m, fresh):
    n = copies.shape[1]
    logs = np.empty(m)
    signs = np.zeros(m)
    mx = -np.inf
    for i in range(m):
        c = coef[i]
        if c == 0.0:
            continue
        sg = 1.0 if c > 0 else -1.0
        lg = math.log(abs(c))
        for k in range(n):
            ds, dl = _scaled_dot(copies[i, k], fresh[k])
            if ds == 0.0:
                sg = 0.0
                break
            sg *= ds
            lg += dl
        signs[i] = sg
        logs[i] = lg
        if sg != 0.0 and lg > mx:
            mx = lg
    if mx == -np.inf:
        return 0.0, -np.inf
    acc = 0.0
    for i in range(m):
        if signs[i] != 0.0:
            acc += signs[i] * math.exp(logs[i] - mx)
    if acc == 0.0:
        return 0.0, -np.inf
    return (1.0 if acc > 0 else -1.0), mx + math.log(abs(acc))


def bucket_dot(copies: np.ndarray, coef: np.ndarray, m: int, fresh: np.ndarray) -> tuple[float, float]:
    """(sign, log|S|) of ``S = sum_{i<m} coef_i prod_k <copies[i,k], fresh[k]>``."""
    if m == 0:
        return 0.0, -math.inf
    acc = _bucket_dot_float(copies, coef, m, fresh)
    if math.isfinite(acc):
        if acc == 0.0:
            return 0.0, -math.inf
        return math.copysign(1.0, acc), math.log(abs(acc))
    s, lg = _bucket_dot_log(copies, coef, m, fresh)
    if math.isnan(lg):
        raise NumericalError("an inner product with the support is not representable (NaN in log space)")
    return s, lg


@njit(cache=True)
def _bucket_dot_clean(copies, coef, m, X, out_sign, out_log):
    n = copies.shape[1]
    d = copies.shape[2]
    B = X.shape[0]
    tmp = np.empty((n, d))
    for b in range(B):
        for k in range(n):
            for j in range(d):
                tmp[k, j] = X[b, j]
        acc = _bucket_dot_float(copies, coef, m, tmp)
        if np.isfinite(acc):
            if acc == 0.0:
                out_sign[b] = 0.0
                out_log[b] = -np.inf
            else:
                out_sign[b] = 1.0 if acc > 0 else -1.0
                out_log[b] = math.log(abs(acc))
        else:
            s, lg = _bucket_dot_log(copies, coef, m, tmp)
            out_sign[b] = s
            out_log[b] = lg


def bucket_dot_clean(copies: np.ndarray, coef: np.ndarray, m: int, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row ``x'`` of ``X``: (sign, log|S|) of ``S = sum_{i<m} coef_i prod_k <copies[i,k], x'>``."""
    B = X.shape[0]
    s = np.zeros(B)
    lg = np.full(B, -np.inf)
    if m > 0:
        _bucket_dot_clean(copies, coef, m, np.ascontiguousarray(X, dtype=np.float64), s, lg)
        if np.any(np.isnan(lg)):
            raise NumericalError("a prediction is not representable (NaN in log space)")
    return s, lg


class DegreeBuckets:
    """Operations on the learner's bucketed support (the arrays themselves live on the learner).

    Bucket ``n`` holds ``count[n]`` estimates of degree ``n``: their copies in
    ``copies[n][:count[n]]`` and their coefficients ``coef[n][:count[n]]``,
    where entry ``i`` stands for ``exp(shift[n]) * coef_i * Psi~_i / w_i`` with
    ``w_i = exp(log_weight_i)`` folded in -- i.e. the term of ``w`` is
    ``exp(log_scale + shift[n]) * coef_i * (unit-weight tensor of the copies)``.
    Arrays grow geometrically (doubling) so that appending is amortised O(n d).
    """

    REBASE = 300.0  # rebase a bucket when a new term exceeds its shift by this (in log units)

    @staticmethod
    def ensure_degree(copies: list, coef: list, shift: np.ndarray, count: np.ndarray, n: int, d: int):
        """Extend the per-degree lists so that degree ``n`` exists; returns (shift, count)."""
        while len(copies) <= n:
            k = len(copies)
            copies.append(np.zeros((4, k, d)))
            coef.append(np.zeros(4))
        if shift.shape[0] <= n:
            shift = np.concatenate([shift, np.zeros(n + 1 - shift.shape[0])])
            count = np.concatenate([count, np.zeros(n + 1 - count.shape[0], dtype=np.int64)])
        return shift, count

    @classmethod
    def append(cls, copies: list, coef: list, shift: np.ndarray, count: np.ndarray, n: int,
               new_copies: np.ndarray, sign: float, log_abs: float) -> None:
        """Append the term ``sign * exp(log_abs) * tensor(new_copies)`` to bucket ``n`` (in place)."""
        m = int(count[n])
        if m == copies[n].shape[0]:
            cap = 2 * m
            grown = np.zeros((cap,) + copies[n].shape[1:])
            grown[:m] = copies[n][:m]
            copies[n] = grown
            c2 = np.zeros(cap)
            c2[:m] = coef[n][:m]
            coef[n] = c2
        if m == 0:
            shift[n] = log_abs
        elif log_abs - shift[n] > cls.REBASE:
            coef[n][:m] *= math.exp(shift[n] - log_abs)
            shift[n] = log_abs
        copies[n][m] = new_copies
        coef[n][m] = sign * math.exp(log_abs - shift[n])
        count[n] = m + 1
