"""U-statistics over a pool of repeated readings: the all-readings form of CSS10's product estimators.

CSS10's estimators of a degree-``n`` monomial of the hidden mean ``mu = E x~``
multiply ``n`` *independent* copies: ``x~_1 ... x~_n`` (scalars, Lemma 1) or
``x~_1 (x) ... (x) x~_n`` (tensors, eq. (2)).  When an item comes with a pool
of ``m >= n`` i.i.d. readings, the product of ``n`` readings drawn without
replacement is one such estimate; its average over **all ordered n-tuples of
distinct readings** -- the U-statistic with that kernel -- is its conditional
expectation given the pool.  So it is unbiased for the same ``mu^n`` and, by
Rao-Blackwell, never has more variance (Hoeffding 1948; e.g. Serfling,
*Approximation Theorems of Mathematical Statistics*, ch. 5).  Computed naively
it costs ``m!/(m-n)!`` products; here:

* :func:`elementary_symmetric` / :func:`monomial_ustat` -- scalars: the mean of
  ``prod_k z_{i_k}`` over distinct ordered tuples is ``e_n(z) / C(m, n)``,
  ``e_n`` the elementary symmetric polynomial, in ``O(m n)``;
* the degree-2 tensor ``mean_{i != j} x_i x_j^T`` as a matrix is
  :func:`nolo.estimators.replicates.pairwise_outer` (the linear learners' form);
* :func:`symmetric_power_terms` -- any degree: the tensor U-statistic written
  as ``sum_r c_r z_r^{(x) n}``, a signed sum of symmetric powers, so that
  every inner product with it reduces to ``<z_r, x'>^n`` (what a kernel
  learner evaluates on clean points).  Degree 1: the mean; degree 2: the
  identity above (``m + 1`` terms); degree ``n >= 3``: the polarisation
  identity ``v_1 o ... o v_n = 1/(2^n n!) sum_eps eps_1..eps_n (sum_k eps_k
  v_k)^{(x) n}`` on each ``n``-subset (``C(m, n) 2^(n-1)`` terms).

Examples
--------
>>> import numpy as np
>>> from nolo.estimators.replicates import pairwise_outer
>>> from nolo.estimators.ustat import monomial_ustat, symmetric_power_terms
>>> z = np.array([1.0, 2.0, 3.0])
>>> float(monomial_ustat(z, 2))          # (1*2 + 1*3 + 2*3) / 3
3.6666666666666665
>>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
>>> Z, c = symmetric_power_terms(X, 2)    # sum_r c_r z_r z_r^T = mean of x_i x_j^T over i != j
>>> np.allclose(np.einsum("r,ri,rj->ij", c, Z, Z), pairwise_outer(X))
True
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from nolo._validation import check_array, check_int
from nolo.exceptions import ParameterError

__all__ = [
    "elementary_symmetric",
    "monomial_ustat",
    "symmetric_power_terms",
    "symmetric_power_count",
]


def elementary_symmetric(z, n: int) -> np.ndarray:
    """``e_0..e_n`` of the readings on the last axis of ``z``: shape ``z.shape[:-1] + (n + 1,)``.

    ``e_k = sum_{i_1 < ... < i_k} z_{i_1} ... z_{i_k}`` by the recurrence
    ``e_k <- e_k + z_i e_(k-1)`` over the readings (``O(m n)``, no power sums:
    Newton's identities cancel catastrophically).
    """
    n = check_int(n, "n", low=0)
    za = np.asarray(z, dtype=np.float64)
    if za.ndim < 1:
        raise ParameterError(f"z must have at least one axis (the readings), got a scalar {z!r}")
    e = np.zeros(za.shape[:-1] + (n + 1,))
    e[..., 0] = 1.0
    for i in range(za.shape[-1]):
        zi = za[..., i]
        for k in range(min(n, i + 1), 0, -1):
            e[..., k] += zi * e[..., k - 1]
    return e


def monomial_ustat(z, n: int) -> np.ndarray | float:
    """Unbiased estimate of ``mu^n`` from ``m >= n`` i.i.d. readings (last axis of ``z``) of mean ``mu``.

    The mean of ``z_{i_1} ... z_{i_n}`` over the ordered ``n``-tuples of
    distinct readings, ``e_n(z) / C(m, n)``.  Raises :class:`ParameterError`
    when ``n > m`` (no ``n`` distinct readings: use the random-copy estimator
    with fresh copies, or accept a truncation).
    """
    n = check_int(n, "n", low=0)
    za = np.asarray(z, dtype=np.float64)
    m = za.shape[-1] if za.ndim else 0
    if n > m:
        raise ParameterError(f"n must be <= the number of readings m = {m} for the U-statistic, got n = {n}")
    out = elementary_symmetric(za, n)[..., n] / math.comb(m, n)
    return float(out) if np.ndim(out) == 0 else out


def symmetric_power_count(m: int, n: int) -> int:
    """How many terms :func:`symmetric_power_terms` returns for ``m`` readings and degree ``n``."""
    if n == 0 or n == 1:
        return 1
    if n == 2:
        return m + 1
    return math.comb(m, n) * 2 ** (n - 1)


def symmetric_power_terms(A, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(Z, c)`` with ``mean over ordered distinct n-tuples of a_{i_1} (x) ... (x) a_{i_n} = sum_r c_r z_r^{(x) n}``.

    ``A`` holds ``m >= n`` readings as rows ``(m, d)``.  ``Z`` is ``(r, d)``
    and ``c`` ``(r,)`` with ``r =`` :func:`symmetric_power_count` ``(m, n)``
    (degree 0: one zero row with ``c = [1]``, the empty product).  Exact
    identity of symmetric tensors (see the module docstring); the tensor
    U-statistic is symmetric because the set of ordered tuples is.
    """
    Aa = check_array(A, "A", ndim=2)
    n = check_int(n, "n", low=0)
    m, d = Aa.shape
    if n > m:
        raise ParameterError(f"n must be <= the number of readings m = {m}, got n = {n}")
    if n == 0:
        return np.zeros((1, d)), np.ones(1)
    if n == 1:
        return Aa.mean(axis=0)[None, :], np.ones(1)
    if n == 2:
        inv = 1.0 / (m * (m - 1))
        Z = np.vstack([Aa.sum(axis=0)[None, :], Aa])
        c = np.full(m + 1, -inv)
        c[0] = inv
        return Z, c
    subsets = np.array(list(itertools.combinations(range(m), n)), dtype=np.int64)  # (C, n)
    signs = np.array([(1,) + s for s in itertools.product((1.0, -1.0), repeat=n - 1)])  # (2^(n-1), n)
    Z = np.einsum("ek,skd->sed", signs, Aa[subsets]).reshape(-1, d)
    # factor 2: eps and -eps give the same term; 1/C(m, n) averages the subsets
    scale = 2.0 / (2.0**n * math.factorial(n) * math.comb(m, n))
    c = np.tile(np.prod(signs, axis=1) * scale, subsets.shape[0])
    return Z, c
