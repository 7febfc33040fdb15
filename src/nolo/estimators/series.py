"""Power series f(x) = sum_n gamma_n x^n stored as (sign, log|gamma_n|) tables.

The random-degree estimators of CSS10 (Lemma 1) need ``gamma_N`` for a random
``N`` that is occasionally large; factorial-type coefficients under- or
overflow float64 for N in the hundreds.  :class:`TaylorSeries` therefore keeps
each coefficient as a sign and a log-magnitude, computed by a user function on
demand and cached, and offers

* ``coefficient(n)`` / ``sign_log(n)`` for the estimator,
* ``value(x, n_terms)`` (the partial sum, for tests),
* ``plus(a)``: f_+(a) = sum_n |gamma_n| a^n (CSS10's ``l'_+``), summed in log
  space until the terms are negligible,
* ``radius``: the radius of convergence (``inf`` for entire functions).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from nolo._validation import check_scalar
from nolo.exceptions import NumericalError, ParameterError

__all__ = ["TaylorSeries"]


class TaylorSeries:
    """Coefficients gamma_n of a power series, kept as (sign, log|gamma_n|).

    Parameters
    ----------
    sign_log:
        Function ``n -> (sign, log|gamma_n|)`` with sign in {-1, 0, +1}
        (log ignored when sign is 0).  Either this or ``coefficients``.
    coefficients:
        A finite sequence gamma_0..gamma_m (all later coefficients are 0).
    radius:
        Radius of convergence (``math.inf`` for entire functions).
    name:
        What the series is of, for messages.
    """

    def __init__(
        self,
        sign_log: Callable[[int], tuple[float, float]] | None = None,
        *,
        coefficients: Sequence[float] | None = None,
        radius: float = math.inf,
        name: str = "series",
    ):
        if (sign_log is None) == (coefficients is None):
            raise ParameterError("TaylorSeries needs exactly one of sign_log or coefficients")
        self.name = name
        self.radius = check_scalar(radius, "radius", low=0.0, low_inclusive=False, allow_inf=True)
        if coefficients is not None:
            c = np.asarray(coefficients, dtype=np.float64)
            if c.ndim != 1 or not np.all(np.isfinite(c)):
                raise ParameterError("coefficients must be a finite 1-d sequence of real numbers")
            self.degree: int | None = int(np.max(np.nonzero(c)[0])) if np.any(c) else 0
            with np.errstate(divide="ignore"):
                self._sign = list(np.sign(c))
                self._log = list(np.log(np.abs(c)))
            self._fn = None
        else:
            self.degree = None
            self._sign, self._log = [], []
            self._fn = sign_log

    # -- coefficient access ------------------------------------------------------------
    def _extend(self, n: int) -> None:
        while len(self._sign) <= n:
            k = len(self._sign)
            if self._fn is None:
                self._sign.append(0.0)
                self._log.append(-math.inf)
            else:
                s, lg = self._fn(k)
                self._sign.append(float(s))
                self._log.append(float(lg) if s != 0 else -math.inf)

    def sign_log(self, n: int) -> tuple[float, float]:
        """(sign, log|gamma_n|) of coefficient ``n`` (sign 0 for a zero coefficient)."""
        if n < 0:
            raise ParameterError(f"n must be a non-negative integer, got {n}")
        self._extend(n)
        return self._sign[n], self._log[n]

    def coefficient(self, n: int) -> float:
        """gamma_n as a float (raises NumericalError if it overflows float64)."""
        s, lg = self.sign_log(n)
        if s == 0:
            return 0.0
        if lg > 709.0:
            raise NumericalError(f"coefficient {n} of {self.name} overflows float64 (log|gamma| = {lg:.1f})")
        return s * math.exp(lg)

    def coefficients(self, n_max: int) -> np.ndarray:
        """gamma_0..gamma_{n_max} as floats (underflow to 0 is harmless)."""
        return np.array([self.coefficient(n) if self.sign_log(n)[1] < 709 else np.nan for n in range(n_max + 1)])

    def is_zero(self, n: int) -> bool:
        return self.sign_log(n)[0] == 0

    # -- sums -----------------------------------------------------------------------------
    def value(self, x: float, n_terms: int = 200) -> float:
        """The partial sum sum_{n < n_terms} gamma_n x^n (for checks; not used by estimators)."""
        if x == 0:
            return self.coefficient(0)
        lx = math.log(abs(x))
        sx = 1.0 if x > 0 else -1.0
        total = 0.0
        for n in range(n_terms if self.degree is None else min(n_terms, self.degree + 1)):
            s, lg = self.sign_log(n)
            if s != 0:
                total += s * (sx**n) * math.exp(lg + n * lx)
        return total

    def plus(self, a: float, *, rtol: float = 1e-15, max_terms: int = 100_000) -> float:
        """f_+(a) = sum_n ``|gamma_n|`` a^n for a >= 0 (CSS10's l'_+ when the series is of l').

        Summed exactly (all terms positive) until a term is below ``rtol`` times
        the running sum and the terms are decreasing; raises if ``a`` is outside
        the radius of convergence.
        """
        a = check_scalar(a, "a", low=0.0)
        if a >= self.radius:
            raise ParameterError(
                f"a must be < the radius of convergence {self.radius} of {self.name}, got {a}"
            )
        if a == 0:
            return abs(self.coefficient(0))
        la = math.log(a)
        logs = []
        last = self.degree if self.degree is not None else max_terms
        prev = -math.inf
        for n in range(last + 1):
            s, lg = self.sign_log(n)
            if s == 0:
                continue
            term = lg + n * la
            logs.append(term)
            if self.degree is None and n > 10:
                m = max(logs)
                if term < m + math.log(rtol) and term < prev:
                    break
            prev = term
        else:
            if self.degree is None:
                raise NumericalError(f"{self.name}_+({a}) did not converge in {max_terms} terms")
        m = max(logs)
        if m > 709:
            raise NumericalError(f"{self.name}_+({a}) overflows float64")
        return float(math.exp(m) * sum(math.exp(t - m) for t in logs))
