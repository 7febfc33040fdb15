"""CSS10 Lemma 1: the random-degree unbiased estimator of f(E[X]) for analytic f.

Let f(x) = sum_n gamma_n x^n.  Draw N with P(N = n) = (p - 1) / p**(n + 1)
(:mod:`nolo.estimators.geometric`), take N independent copies X_1..X_N of X and
return

    theta = gamma_N * p**(N + 1) / (p - 1) * X_1 * ... * X_N      (theta = p/(p-1) gamma_0 if N = 0).

Then E[theta] = f(E[X]) and, for i.i.d. copies, exactly
E[theta^2] = p/(p-1) sum_n gamma_n^2 (p E[X^2])^n <= p/(p-1) f_+(sqrt(p E[X^2]))^2
(docs/math.md, item 1; the middle expression is the exact second moment, the
right one the paper's bound).  Implementation points (docs/math.md, items 1, 10):

* if gamma_N = 0 the estimate is 0 and **no copy is drawn** (still unbiased;
  saves the queries of odd-only or polynomial series);
* the product is evaluated in log space with signs and exponentiated once by
  :func:`~nolo.estimators.logspace.signed_exp`, which raises
  :class:`~nolo.NumericalError` when the value itself is not representable.

Truncation policy for finite pools.  ``draw(n)`` may return ``None`` when a
finite pool of stored copies cannot supply ``n`` of them.  The estimate is then
0 and the result is flagged ``shortfall=True``.  If the pool always holds
``K`` copies, this makes the estimator unbiased for the *truncated* series
sum_{n <= K} gamma_n E[X]^n instead of f(E[X]) (bias -sum_{n > K} gamma_n E[X]^n,
at most sum_{n > K} |gamma_n| |E X|^n); a shortfall happens with probability
P(N > K) = p**-(K+1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from nolo._validation import check_array, check_int, check_scalar
from nolo.estimators._validated import ValidatedConfigurable
from nolo.estimators.geometric import check_p, degree_log_pmf, sample_degree
from nolo.estimators.logspace import LOG_FLOAT_MAX, signed_exp
from nolo.estimators.results import Estimate, EstimateBatch
from nolo.estimators.series import TaylorSeries
from nolo.exceptions import NumericalError, ParameterError
from nolo.random import as_generator

__all__ = ["Lemma1Estimate", "Lemma1Batch", "RandomDegreeEstimator", "resolve_series"]

Draw = Callable[[int], Any]


#: Lemma 1's result records (the shared :class:`~nolo.estimators.results.Estimate` types).
Lemma1Estimate = Estimate
Lemma1Batch = EstimateBatch


def resolve_series(obj: Any, name: str = "series") -> TaylorSeries:
    """A :class:`TaylorSeries` from itself or from an object with a ``series`` attribute (a Loss)."""
    if isinstance(obj, TaylorSeries):
        return obj
    if obj is not None and not isinstance(obj, type) and hasattr(type(obj), "series"):
        s = obj.series
        if isinstance(s, TaylorSeries):
            return s
    raise ParameterError(
        f"{name} must be a nolo TaylorSeries or an object with a TaylorSeries 'series' attribute "
        f"(e.g. a nolo Loss), got {obj!r}"
    )


def _exp_scalar(sign: float, log_abs: float) -> float:
    """sign * e^log_abs for one estimate (signed_exp's checks, without its array overhead)."""
    if sign == 0:
        return 0.0
    if not log_abs <= LOG_FLOAT_MAX:  # also catches NaN
        return float(signed_exp(sign, log_abs, "Lemma-1 estimate"))  # raises NumericalError
    return sign * math.exp(log_abs)


def _log_sum_positive(term_log: Callable[[int], float], degree: int | None, what: str,
                      max_terms: int = 200_000, rtol: float = 1e-17) -> float:
    """log of sum_n exp(term_log(n)) for a convergent positive series (terms -inf are zeros)."""
    logs: list[float] = []
    prev = -math.inf
    last = degree if degree is not None else max_terms
    for n in range(last + 1):
        t = term_log(n)
        if t == -math.inf:
            continue
        logs.append(t)
        if degree is None and n > 10:
            if t < max(logs) + math.log(rtol) and t < prev:
                break
        prev = t
    else:
        if degree is None:
            raise NumericalError(f"{what} did not converge in {max_terms} terms")
    if not logs:
        return -math.inf
    m = max(logs)
    return m + math.log(sum(math.exp(t - m) for t in logs))


class RandomDegreeEstimator(ValidatedConfigurable):
    """Unbiased estimator of f(E[X]) with a random number of copies (CSS10 section 3.2, Lemma 1).

    Parameters
    ----------
    series:
        The Taylor series of f: a :class:`~nolo.estimators.TaylorSeries`, or a
        :class:`nolo.losses.Loss`, whose ``series`` (that of l') is then used.
        Only a Loss survives :meth:`to_config`.
    p:
        Degree parameter, p > 1: E[N] = 1/(p - 1) copies per estimate and
        P(N >= z) = p**-z; larger p means fewer copies but more variance.

    No erratum: Lemma 1 is correct as printed (docs/math.md, item 1).
    """

    def __init__(self, series=None, p: float = 2.0):
        self.series = series
        self.p = p
        self._validate_params()

    def _validate_params(self) -> None:
        resolve_series(self.series)
        check_p(self.p)

    # -- the estimator ------------------------------------------------------------------
    @property
    def taylor_series(self) -> TaylorSeries:
        return resolve_series(self.series)

    def _log_theta(self, sg: float, lg: float, n: int, x: np.ndarray) -> tuple[float, float]:
        """(sign, log|theta|) from gamma_n = sg * e^lg and validated copies x (length n)."""
        p = float(self.p)
        if n:
            ax = np.abs(x)
            if not ax.all():
                return 0.0, -math.inf
            lx = float(np.log(ax).sum())
            if np.count_nonzero(x < 0) % 2:
                sg = -sg
        else:
            lx = 0.0
        return float(sg), lg + (n + 1) * math.log(p) - math.log(p - 1.0) + lx

    def log_value_at_degree(self, n: int, copies) -> tuple[float, float]:
        """(sign, log|theta|) of the estimate at degree ``n`` from the ``n`` given copies."""
        n = check_int(n, "n", low=0)
        sg, lg = self.taylor_series.sign_log(n)
        if sg == 0:
            return 0.0, -math.inf
        return self._log_theta(sg, lg, n, check_array(copies, "copies", ndim=1, shape=(n,)))

    def value_at_degree(self, n: int, copies) -> float:
        """theta = gamma_n p^(n+1)/(p-1) prod(copies), evaluated in log space."""
        return _exp_scalar(*self.log_value_at_degree(n, copies))

    def estimate_at_degree(self, n: int, draw: Draw) -> Lemma1Estimate:
        """The estimate for a given degree ``n``: skips ``draw`` when gamma_n = 0 or n = 0."""
        n = check_int(n, "n", low=0)
        sg, lg = self.taylor_series.sign_log(n)
        if sg == 0:
            return Lemma1Estimate(0.0, n, 0, False)
        if n == 0:
            x = np.empty(0)
        else:
            x = draw(n)
            if x is None:
                return Lemma1Estimate(0.0, n, 0, True)
            x = check_array(x, f"draw({n}) result", ndim=1, shape=(n,))
        s, lt = self._log_theta(sg, lg, n, x)
        return Lemma1Estimate(_exp_scalar(s, lt), n, n, False)

    def estimate(self, draw: Draw, rng) -> Lemma1Estimate:
        """Draw N ~ Geom(p), then ``draw(N)`` copies (unless gamma_N = 0), and return theta.

        ``draw(n)`` must return ``n`` independent unbiased copies of X as a 1-d
        array, or ``None`` when a finite pool cannot supply them (then the
        estimate is 0 with ``shortfall=True``; see the module docstring).
        """
        rng = as_generator(rng, "rng")
        return self.estimate_at_degree(sample_degree(rng, self.p), draw)

    # -- vectorised Monte Carlo ---------------------------------------------------------------
    def _coefficient_tables(self, n_max: int) -> tuple[np.ndarray, np.ndarray]:
        ts = self.taylor_series
        sl = [ts.sign_log(n) for n in range(n_max + 1)]
        return np.array([s for s, _ in sl]), np.array([lg if s != 0 else 0.0 for s, lg in sl])

    def evaluate(self, degrees, copies) -> np.ndarray:
        """Estimates for many degrees at once from one flat array of copies.

        Estimate ``i`` uses the next ``degrees[i]`` entries of ``copies`` if
        gamma_{degrees[i]} != 0 and none otherwise, so ``len(copies)`` must equal
        the sum of the used degrees (see :meth:`queries_for`).
        """
        deg = np.asarray(degrees)
        if deg.ndim != 1 or deg.dtype.kind not in "iu" or np.any(deg < 0):
            raise ParameterError("degrees must be a 1-d array of non-negative integers")
        deg = deg.astype(np.int64)
        if deg.size == 0:
            return np.zeros(0)
        sg_tab, lg_tab = self._coefficient_tables(int(deg.max()))
        sg, lg = sg_tab[deg], lg_tab[deg]
        used = np.where(sg != 0, deg, 0)
        x = check_array(copies, "copies", ndim=1)
        if x.shape[0] != int(used.sum()):
            raise ParameterError(
                f"copies must hold sum of the used degrees = {int(used.sum())} values, got {x.shape[0]}"
            )
        zero = x == 0
        with np.errstate(divide="ignore"):
            lx = np.where(zero, 0.0, np.log(np.abs(x)))
        ends = np.cumsum(used)
        starts = ends - used

        def seg_sum(v):
            c = np.concatenate([[0], np.cumsum(v)])
            return c[ends] - c[starts]

        lsum = seg_sum(lx)
        nneg = seg_sum((x < 0).astype(np.int64))
        nzero = seg_sum(zero.astype(np.int64))
        p = float(self.p)
        sign = sg * np.where(nneg % 2 == 1, -1.0, 1.0) * (nzero == 0)
        log_abs = lg + (deg + 1) * math.log(p) - math.log(p - 1.0) + lsum
        return np.asarray(signed_exp(sign, log_abs, "Lemma-1 estimate"), dtype=np.float64).reshape(deg.shape)

    def queries_for(self, degrees) -> np.ndarray:
        """Copies each degree consumes: the degree when gamma_degree != 0, else 0."""
        deg = np.asarray(degrees, dtype=np.int64)
        if deg.size == 0:
            return deg
        sg_tab, _ = self._coefficient_tables(int(deg.max()))
        return np.where(sg_tab[deg] != 0, deg, 0)

    def sample(self, rng, size: int, sample_copies: Callable[[np.random.Generator, int], Any]) -> Lemma1Batch:
        """``size`` independent estimates; ``sample_copies(rng, k)`` returns k i.i.d. copies of X."""
        rng = as_generator(rng, "rng")
        size = check_int(size, "size", low=0)
        deg = sample_degree(rng, self.p, size=size)
        q = self.queries_for(deg)
        x = sample_copies(rng, int(q.sum())) if size else np.zeros(0)
        return Lemma1Batch(self.evaluate(deg, x), deg, q)

    # -- moments and query counts -----------------------------------------------------------
    def second_moment(self, mean_square: float) -> float:
        """Exact E[theta^2] = p/(p-1) sum_n gamma_n^2 (p E[X^2])^n for i.i.d. copies with E[X^2] = mean_square."""
        m2 = check_scalar(mean_square, "mean_square", low=0.0)
        ts, p = self.taylor_series, float(self.p)
        if ts.degree is None and p * m2 >= ts.radius**2:
            raise ParameterError(
                f"the second moment is infinite: p * mean_square = {p * m2:g} must be < radius^2 = "
                f"{ts.radius**2:g} of {ts.name}"
            )
        lr = math.log(p * m2) if m2 > 0 else -math.inf

        def term(n):
            s, lg = ts.sign_log(n)
            if s == 0:
                return -math.inf
            if n == 0:
                return 2 * lg
            return 2 * lg + n * lr

        total = _log_sum_positive(term, ts.degree if m2 > 0 else 0, f"second moment of {ts.name}")
        return signed_exp(1.0 if total > -math.inf else 0.0, total + math.log(p / (p - 1.0)), "second moment")

    def second_moment_bound(self, mean_square: float) -> float:
        """Lemma 1's bound p/(p-1) f_+(sqrt(p E[X^2]))^2 on E[theta^2]."""
        m2 = check_scalar(mean_square, "mean_square", low=0.0)
        p = float(self.p)
        return p / (p - 1.0) * self.taylor_series.plus(math.sqrt(p * m2)) ** 2

    def expected_queries(self) -> float:
        """E[copies per estimate] = sum_n n P(N = n) [gamma_n != 0] (<= 1/(p-1))."""
        ts, p = self.taylor_series, float(self.p)

        def term(n):
            if n == 0 or ts.is_zero(n):
                return -math.inf
            return math.log(n) + degree_log_pmf(n, p)

        if ts.degree is not None:
            total = _log_sum_positive(term, ts.degree, "expected queries")
        else:
            total = _log_sum_positive(term, None, "expected queries", max_terms=10_000_000)
        return math.exp(total) if total > -math.inf else 0.0
