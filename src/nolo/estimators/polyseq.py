"""The general random-degree estimator of the CSS10 talk slides ("Unbiased estimate of non-linear functions").

Setting.  f is continuous on an interval and A_0, A_1, ... are polynomials,
deg A_n <= n, with A_n -> f there.  Let p_0, p_1, ... be a law on the
non-negative integers (:class:`~nolo.estimators.GeometricDegree` or
:class:`~nolo.estimators.ZetaDegree`).  The estimator

1. picks N with P(N = n) = p_n,
2. samples N independent copies x_1..x_N of X,
3. returns theta = (A'_N(x_1..x_N) - A'_(N-1)(x_1..x_(N-1))) / p_N,   with A'_(-1) = 0,

where A'_n is a multilinear *lift* of A_n: a polynomial in n independent
copies with E[A'_n] = A_n(E X).  The slides (and CSS10 section 3.2) use the
nested-product lift of the monomial form, A'_n = sum_k a_(n,k) prod_(i<=k) x_i
(the slides' ``prod_(i=0)^k`` is a typo for ``prod_(i=1)^k``: the k = 0 term is
the empty product 1).  Then E[theta] = sum_n (A_n(mu) - A_(n-1)(mu)) = lim_n A_n(mu).

Assumptions, precisely.  (i) E X = mu lies in the interval where A_n -> f;
X itself may leave it.  (ii) Fubini: sum_n E|A'_n - A'_(n-1)| < inf (else
the mean does not exist).  (iii) For finite variance:
sum_n E[(A'_n - A'_(n-1))^2] / p_n < inf -- :meth:`PolynomialSequenceEstimator.second_moment`
computes this exactly for i.i.d. copies.  As the paper says, (iii) fails for
general continuous f: with geometric p_n it needs differences decaying
geometrically faster than the lift's growth, i.e. f analytic in a
neighbourhood (Bernstein ellipse) of the interval.  That is still far more
than Lemma 1 covers: e.g. sqrt(x^2 + e^2) at mu > e, where the Taylor series
at 0 diverges.

Sequences provided.

* :class:`TaylorSequence`: A_n = Taylor polynomial of degree n.  With the
  geometric law this *is* Lemma 1 (``RandomDegreeEstimator`` is its log-space
  special case).
* :class:`ChebyshevSequence`: Chebyshev truncations or interpolants of f on
  [low, high].  Copies are mapped affinely to t = (2x - low - high)/(high - low)
  (still unbiased copies of the mapped mean), and each T_j is lifted through
  its three-term recurrence R_0 = 1, R_1 = t_1, R_j = 2 t_j R_(j-1) - R_(j-2),
  which has E[R_j] = T_j(mu_t) by independence of t_j from R_(j-1), R_(j-2).
  This is the slides' nested-product idea applied to the Chebyshev basis; it
  avoids the monomial coefficients of T_j (which grow like (1 + sqrt 2)^j and
  cancel catastrophically in float64).

Bernstein polynomials are not offered: they converge like 1/n, and both
their monomial coefficients (C(n,k) times k-th differences of f) and their
product lifts have variance growing exponentially in n, so no degree law
gives a useful estimator.

Queries: N copies per estimate, none when A_N - A_(N-1) = 0 (e.g. beyond the
last Chebyshev coefficient kept, or gamma_N = 0 for a Taylor sequence).  A
finite pool that cannot supply N copies gives 0 with ``shortfall=True`` (the
same truncation policy as :mod:`nolo.estimators.lemma1`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from numpy.polynomial import chebyshev as cheb
from scipy.fft import dct

from nolo._validation import check_array, check_choice, check_int, check_scalar
from nolo.estimators._validated import ValidatedConfigurable
from nolo.estimators.geometric import GeometricDegree
from nolo.estimators.lemma1 import resolve_series
from nolo.estimators.results import Estimate, EstimateBatch
from nolo.estimators.zeta import ZetaDegree
from nolo.exceptions import NumericalError, ParameterError
from nolo.random import as_generator

__all__ = ["ChebyshevSequence", "PolynomialSequence", "PolynomialSequenceEstimator", "TaylorSequence"]


class PolynomialSequence(ValidatedConfigurable):
    """A sequence A_0, A_1, ... of polynomials (deg A_n <= n) converging to f on an interval.

    Subclasses set ``basis`` ("monomial" or "chebyshev"), the map of copies to
    the polynomial's variable, and ``difference(n)``: the coefficients of
    A_n - A_(n-1) in that basis (length n + 1).
    """

    basis: ClassVar[str] = "monomial"

    @property
    def last_degree(self) -> int | None:
        """Degree after which all differences vanish (None: never)."""
        return None

    def is_zero(self, n: int) -> bool:
        """Whether A_n - A_(n-1) = 0 (then no copies are queried)."""
        last = self.last_degree
        return (last is not None and n > last) or not np.any(self.difference(n))

    def to_unit(self, x):
        """Copies of X mapped to the polynomial's variable (affine, so means map to means)."""
        return np.asarray(x, dtype=np.float64)

    def unit_moments(self, mean: float, mean_square: float) -> tuple[float, float]:
        """(E t, E t^2) of the mapped copies from (E X, E X^2)."""
        return float(mean), float(mean_square)

    def difference(self, n: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def polynomial(self, n: int) -> np.ndarray:
        """Coefficients of A_n in the sequence's basis (the sum of the first n + 1 differences)."""
        n = check_int(n, "n", low=0)
        out = np.zeros(n + 1)
        for k in range(n + 1):
            if not self.is_zero(k):
                out[: k + 1] += self.difference(k)
        return out

    def value(self, n: int, x):
        """A_n(x) (for checks)."""
        t = self.to_unit(x)
        c = self.polynomial(n)
        return cheb.chebval(t, c) if self.basis == "chebyshev" else np.polynomial.polynomial.polyval(t, c)


class TaylorSequence(PolynomialSequence):
    """A_n = sum_(k<=n) gamma_k x^k, the Taylor polynomials of an analytic f (CSS10 section 3.2).

    With a geometric degree law the slides' estimator reduces to Lemma 1:
    theta = gamma_N p^(N+1)/(p-1) x_1...x_N.
    """

    basis = "monomial"

    def __init__(self, series=None, max_degree: int = 2000):
        self.series = series
        self.max_degree = max_degree
        self._validate_params()

    def _validate_params(self) -> None:
        resolve_series(self.series)
        check_int(self.max_degree, "max_degree", low=0)

    @property
    def last_degree(self) -> int:
        """min(degree of the series, ``max_degree``): A_n = A_max_degree beyond it (the
        estimator is then unbiased for that Taylor polynomial; with a geometric law
        degrees above 2000 have probability p**-2001)."""
        deg = resolve_series(self.series).degree
        return int(self.max_degree) if deg is None else min(deg, int(self.max_degree))

    def is_zero(self, n: int) -> bool:
        if n > self.last_degree:
            return True
        sg, lg = resolve_series(self.series).sign_log(n)
        return sg == 0 or lg < -745.2  # gamma_n underflows float64: a zero difference

    def difference(self, n: int) -> np.ndarray:
        n = check_int(n, "n", low=0)
        d = np.zeros(n + 1)
        if not self.is_zero(n):
            ts = resolve_series(self.series)
            sg, lg = ts.sign_log(n)
            if lg > 709.0:
                raise NumericalError(f"coefficient {n} of {ts.name} overflows float64; use RandomDegreeEstimator")
            d[n] = sg * math.exp(lg)
        return d


class ChebyshevSequence(PolynomialSequence):
    """Chebyshev approximations of a continuous f on [low, high] (CSS10 slides' polynomial sequence).

    Parameters
    ----------
    function:
        Vectorised callable f, continuous on [low, high] (not persisted by to_config).
    low, high:
        The interval, low < high; E[X] must lie in it.
    kind:
        "truncation": A_n = sum_(j<=n) c_j T_j with the Chebyshev coefficients c_j of f.
        "interpolant": A_n = the degree-n interpolant at the n + 1 Chebyshev points.
        Both stop at the degree K where f is resolved to ``tol`` (A_n = A_K for
        n > K, see :meth:`coefficients`), so the estimator is unbiased for A_K(E X),
        which is f(E X) up to about tol * max|f| on the interval.
    resolution:
        Largest interpolation degree tried when resolving f.
    tol:
        Relative size below which Chebyshev coefficients count as zero.
    """

    basis = "chebyshev"

    def __init__(self, function: Callable | None = None, low: float = -1.0, high: float = 1.0,
                 kind: str = "truncation", resolution: int = 8192, tol: float = 1e-14):
        self.function = function
        self.low = low
        self.high = high
        self.kind = kind
        self.resolution = resolution
        self.tol = tol
        self._validate_params()

    def _validate_params(self) -> None:
        if not callable(self.function):
            raise ParameterError(f"function must be a callable f(x), got {self.function!r}")
        lo = check_scalar(self.low, "low")
        hi = check_scalar(self.high, "high")
        if not lo < hi:
            raise ParameterError(f"low must be < high, got low={lo}, high={hi}")
        check_choice(self.kind, "kind", ("truncation", "interpolant"))
        check_int(self.resolution, "resolution", low=8)
        check_scalar(self.tol, "tol", low=0.0, low_inclusive=False, high=1.0)
        self.__dict__.pop("_cache", None)

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_cache", None)  # coefficients are recomputed lazily
        return state

    # -- mapping ---------------------------------------------------------------------------------
    def _g(self, t):
        lo, hi = float(self.low), float(self.high)
        y = np.asarray(self.function(lo + (np.asarray(t) + 1.0) * (hi - lo) / 2.0), dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise ParameterError(f"function must be finite on [{lo}, {hi}]")
        return y

    def to_unit(self, x):
        lo, hi = float(self.low), float(self.high)
        return (2.0 * np.asarray(x, dtype=np.float64) - lo - hi) / (hi - lo)

    def unit_moments(self, mean, mean_square):
        lo, hi = float(self.low), float(self.high)
        c, w = (lo + hi) / 2.0, (hi - lo) / 2.0
        return (mean - c) / w, (mean_square - 2 * c * mean + c * c) / (w * w)

    # -- coefficients ------------------------------------------------------------------------------
    def _state(self) -> dict:
        key = (self.function, self.low, self.high, self.kind, self.resolution, self.tol)
        cache = self.__dict__.get("_cache")
        if cache is None or cache["key"] != key:
            cache = {"key": key, "interp": {}}
            self.__dict__["_cache"] = cache
        return cache

    def _interpolate(self, n: int) -> np.ndarray:
        """Chebyshev coefficients of the degree-n interpolant at the n + 1 Chebyshev points of the
        first kind, by a type-II DCT (accurate to ~1e-16 relative, O(n log n))."""
        m = n + 1
        t = np.cos(np.pi * (2 * np.arange(m) + 1) / (2 * m))
        c = dct(self._g(t), type=2) / m
        c[0] /= 2.0
        return c

    def coefficients(self) -> np.ndarray:
        """c_0..c_K: Chebyshev coefficients of f, chopped after the last one above ``tol`` * max|c|.

        The interpolation degree doubles from 64 until the top eighth of the
        coefficients is below ``tol`` relative (or ``resolution`` is reached,
        then f is not resolved and a ParameterError says so).  K is also the
        degree after which both kinds stop changing (A_n = A_K for n > K): the
        differences below the float64 noise floor would otherwise be divided
        by tiny p_n and make the variance infinite.
        """
        st = self._state()
        if "coef" not in st:
            k, tol = 64, float(self.tol)
            while True:
                c = self._interpolate(k)
                scale = np.max(np.abs(c))
                if np.max(np.abs(c[-max(4, k // 8):])) <= tol * scale:
                    break
                if k >= int(self.resolution):
                    raise ParameterError(
                        f"function is not resolved by a degree-{k} Chebyshev interpolant to tol={tol:g} "
                        "(raise resolution or tol; the estimator needs rapidly decaying coefficients)"
                    )
                k = min(2 * k, int(self.resolution))
            nz = np.nonzero(np.abs(c) > tol * scale)[0]
            st["coef"] = c[: (nz[-1] + 1 if nz.size else 1)]
        return st["coef"]

    def _interpolant(self, n: int) -> np.ndarray:
        st = self._state()["interp"]
        if n not in st:
            st[n] = self._interpolate(n)
        return st[n]

    @property
    def last_degree(self) -> int:
        return len(self.coefficients()) - 1

    def difference(self, n: int) -> np.ndarray:
        n = check_int(n, "n", low=0)
        d = np.zeros(n + 1)
        c = self.coefficients()
        if n >= len(c):
            return d
        if self.kind == "truncation":
            d[n] = c[n]
            return d
        d += self._interpolant(n)
        if n > 0:
            d[:n] -= self._interpolant(n - 1)
        return d


def _gram(basis: str, mu: float, m2: float, n: int) -> np.ndarray:
    """G[j, k] = E[L_j L_k] for the lifts L_j of the basis elements, i.i.d. copies with E t = mu, E t^2 = m2.

    Monomial nested products: E[prod_(i<=j) t_i prod_(i<=k) t_i] = m2^min(j,k) mu^|j-k|.
    Chebyshev recurrence lifts: for j < k, E[R_j R_k] = 2 mu E[R_j R_(k-1)] - E[R_j R_(k-2)], and
    E[R_k^2] = 4 m2 E[R_(k-1)^2] - 4 mu E[R_(k-1) R_(k-2)] + E[R_(k-2)^2].
    """
    G = np.zeros((n + 1, n + 1))
    if basis == "monomial":
        j, k = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
        with np.errstate(over="ignore", invalid="ignore"):
            G = np.power(m2, np.minimum(j, k)) * np.power(mu, np.abs(j - k))
        return G
    G[0, 0] = 1.0
    if n >= 1:
        G[1, 1], G[0, 1], G[1, 0] = m2, mu, mu
    for k in range(2, n + 1):
        for j in range(k - 1):
            G[j, k] = G[k, j] = 2 * mu * G[j, k - 1] - G[j, k - 2]
        G[k - 1, k] = G[k, k - 1] = 2 * mu * G[k - 1, k - 1] - G[k - 1, k - 2]
        G[k, k] = 4 * m2 * G[k - 1, k - 1] - 4 * mu * G[k - 1, k - 2] + G[k - 2, k - 2]
    return G


class PolynomialSequenceEstimator(ValidatedConfigurable):
    """Telescoping random-degree estimator of lim A_n(E X) (CSS10 COLT talk slides; CSS10 section 3.2).

    theta = (A'_N(x_1..x_N) - A'_(N-1)(x_1..x_(N-1))) / p_N, N ~ ``degrees``; see the
    module docstring for the lift, the assumptions and the query policy.

    Parameters
    ----------
    sequence:
        A :class:`PolynomialSequence` (:class:`TaylorSequence`, :class:`ChebyshevSequence`).
    degrees:
        The law of N: :class:`GeometricDegree` (p_n = (p-1)/p^(n+1)) or :class:`ZetaDegree`.
    """

    def __init__(self, sequence: PolynomialSequence | None = None, degrees: Any = None):
        self.sequence = sequence
        self.degrees = degrees
        self._validate_params()

    def _validate_params(self) -> None:
        if not isinstance(self.sequence, PolynomialSequence):
            raise ParameterError(
                f"sequence must be a PolynomialSequence (TaylorSequence, ChebyshevSequence), got {self.sequence!r}"
            )
        if not isinstance(self.degrees, (GeometricDegree, ZetaDegree)):
            raise ParameterError(f"degrees must be a GeometricDegree or ZetaDegree law, got {self.degrees!r}")

    # -- evaluation ----------------------------------------------------------------------------
    def queries_for(self, degrees) -> np.ndarray:
        """Copies each degree consumes: the degree, or 0 when A_N - A_(N-1) = 0."""
        deg = np.asarray(degrees, dtype=np.int64)
        return np.where(self._live(deg), deg, 0)

    def _live(self, deg: np.ndarray) -> np.ndarray:
        """Whether A_N - A_(N-1) != 0 for each degree (evaluated once per distinct degree)."""
        if deg.size == 0:
            return np.zeros(deg.shape, dtype=bool)
        uniq, inv = np.unique(deg, return_inverse=True)
        nonzero = np.array([not self.sequence.is_zero(int(n)) for n in uniq])
        return nonzero[inv].reshape(deg.shape)

    def evaluate(self, degrees, copies) -> np.ndarray:
        """Estimates for many degrees from one flat array of copies (each row takes the next
        ``queries_for(degree)`` copies), vectorised over rows, O(total copies) work."""
        deg = np.asarray(degrees)
        if deg.ndim != 1 or deg.dtype.kind not in "iu" or np.any(deg < 0):
            raise ParameterError("degrees must be a 1-d array of non-negative integers")
        deg = deg.astype(np.int64)
        used = self.queries_for(deg)
        x = check_array(copies, "copies", ndim=1)
        if x.shape[0] != int(used.sum()):
            raise ParameterError(
                f"copies must hold sum of the used degrees = {int(used.sum())} values, got {x.shape[0]}"
            )
        if deg.size == 0:
            return np.zeros(0)
        seq = self.sequence
        t = seq.to_unit(x)
        live = self._live(deg)
        # ragged table of the difference coefficients of the distinct live degrees
        distinct = np.unique(deg[live])
        offsets = np.zeros(distinct.size, dtype=np.int64)
        chunks, pos = [], 0
        for i, n in enumerate(distinct):
            offsets[i] = pos
            chunks.append(seq.difference(int(n)))
            pos += int(n) + 1
        coef = np.concatenate(chunks) if chunks else np.zeros(0)
        off = np.zeros(deg.size, dtype=np.int64)
        off[live] = offsets[np.searchsorted(distinct, deg[live])]
        D = np.where(live, coef[off] if coef.size else 0.0, 0.0)  # k = 0 term (L_0 = 1)
        starts = np.cumsum(used) - used
        order = np.argsort(-used, kind="stable")
        neg_sorted = -used[order]
        cur = np.ones(deg.size)  # L_k: product (monomial) or R_k (Chebyshev)
        prev = np.ones(deg.size)
        chebyshev = seq.basis == "chebyshev"
        with np.errstate(over="ignore", invalid="ignore"):
            for k in range(1, int(used.max()) + 1):
                rows = order[: np.searchsorted(neg_sorted, -k, side="right")]
                xk = t[starts[rows] + k - 1]
                if chebyshev and k >= 2:
                    new = 2.0 * xk * cur[rows] - prev[rows]
                    prev[rows] = cur[rows]
                    cur[rows] = new
                else:
                    prev[rows] = cur[rows]
                    cur[rows] = cur[rows] * xk
                D[rows] += coef[off[rows] + k] * cur[rows]
            vals = np.where(live, D * np.exp(-np.asarray(self.degrees.log_pmf(deg), dtype=np.float64)), 0.0)
        if not np.all(np.isfinite(vals)):
            raise NumericalError(
                "polynomial-sequence estimate is not representable in float64: the lifted differences overflowed; "
                "use a law with lighter tails, a smoother f, or smaller noise"
            )
        return vals

    def estimate_at_degree(self, n: int, draw: Callable[[int], Any]) -> Estimate:
        """theta at a given degree; ``draw`` is not called when no copies are needed."""
        n = check_int(n, "n", low=0)
        if self.sequence.is_zero(n):
            return Estimate(0.0, n, 0, False)
        if n == 0:
            return Estimate(float(self.evaluate(np.array([0]), np.zeros(0))[0]), 0, 0, False)
        x = draw(n)
        if x is None:
            return Estimate(0.0, n, 0, True)
        x = check_array(x, f"draw({n}) result", ndim=1, shape=(n,))
        return Estimate(float(self.evaluate(np.array([n]), x)[0]), n, n, False)

    def estimate(self, draw: Callable[[int], Any], rng) -> Estimate:
        """Draw N from the degree law, ``draw(N)`` copies (unless not needed), return theta.

        ``draw(n)`` returns n independent copies of X (1-d) or None (pool shortfall: value 0)."""
        rng = as_generator(rng, "rng")
        return self.estimate_at_degree(int(self.degrees.sample(rng)), draw)

    def sample(self, rng, size: int, sample_copies: Callable[[np.random.Generator, int], Any]) -> EstimateBatch:
        """``size`` independent estimates; ``sample_copies(rng, k)`` returns k i.i.d. copies of X."""
        rng = as_generator(rng, "rng")
        size = check_int(size, "size", low=0)
        deg = np.asarray(self.degrees.sample(rng, size=size), dtype=np.int64)
        q = self.queries_for(deg)
        x = sample_copies(rng, int(q.sum())) if size else np.zeros(0)
        return EstimateBatch(self.evaluate(deg, x), deg, q)

    # -- moments and queries -----------------------------------------------------------------------
    def second_moment(self, mean: float, mean_square: float, n_max: int = 400, rtol: float = 1e-12) -> float:
        """Exact E[theta^2] = sum_n E[(A'_n - A'_(n-1))^2] / p_n for i.i.d. copies with E X = mean,
        E X^2 = mean_square.  Raises NumericalError if the series has not converged by ``n_max``
        (the variance may be infinite)."""
        mu = check_scalar(mean, "mean")
        m2 = check_scalar(mean_square, "mean_square", low=mu * mu * (1 - 1e-12))
        n_max = check_int(n_max, "n_max", low=1)
        seq = self.sequence
        mu_t, m2_t = seq.unit_moments(mu, m2)
        last = seq.last_degree
        stop = n_max if last is None else min(last, n_max)
        G = _gram(seq.basis, mu_t, m2_t, stop)
        terms = np.zeros(stop + 1)
        with np.errstate(all="ignore"):
            for n in range(stop + 1):
                if seq.is_zero(n):
                    continue
                d = seq.difference(n)
                terms[n] = float(d @ G[: n + 1, : n + 1] @ d) * math.exp(-self.degrees.log_pmf(n))
        if not np.all(np.isfinite(terms)):
            raise NumericalError("second moment overflows: the variance is (numerically) infinite")
        total = float(terms.sum())
        if (last is None or last > n_max) and np.max(terms[-10:]) > rtol * total:
            raise NumericalError(
                f"second moment series not converged by n_max={n_max} (last terms {terms[-3:]}); "
                "the variance may be infinite for this law/sequence/noise"
            )
        return total

    def expected_queries(self, n_max: int = 1_000_000) -> float:
        """E[copies per estimate] = sum_n n p_n [A_n != A_(n-1)]."""
        seq, law = self.sequence, self.degrees
        last = seq.last_degree
        if last is None and law.mean == math.inf:
            return math.inf
        total, n = 0.0, 1
        limit = n_max if last is None else min(last, n_max)
        while n <= limit:
            if not seq.is_zero(n):
                total += n * law.pmf(n)
            if last is None and n > 20 and n * law.tail(n) < 1e-15 * max(total, 1e-300):
                break
            n += 1
        return total
