"""Kernel base classes.

Two layers:

* :class:`Kernel` -- a positive-definite kernel ``k(x, x')`` evaluated on clean
  (or plugged-in noisy) inputs: ``kernel(X, Y)`` is the Gram matrix.  Every
  kernel in nolo derives from it, including the CSS11 surrogate kernels that
  other modules of this folder add.
* :class:`NoisyFeatureKernel` -- a kernel whose feature map ``Psi`` has an
  *unbiased estimate from noisy copies* (CSS10 section 3.3): it implements
  ``map_estimate`` (CSS10 Subroutine 2) and the two flavours of ``prod``
  (Subroutines 3 and 4).  The dot-product kernels and the Gaussian kernel of
  CSS10 are such kernels.

The feature estimate itself is a :class:`nolo.kernels.estimates.FeatureEstimate`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nolo._config import Configurable
from nolo._validation import check_array, check_scalar
from nolo.exceptions import ParameterError
from nolo.kernels.estimates import FeatureEstimate, degree_weight, log_abs_dots, signed_value

__all__ = ["Kernel", "NoisyFeatureKernel"]


class Kernel(Configurable):
    """A kernel ``k(x, x') = <Psi(x), Psi(x')>`` on ``R^d``.

    Subclasses implement ``_validate_params()`` (raise :class:`ParameterError` naming
    the bad parameter) and ``_gram(X, Y)`` on validated 2-d arrays.
    """

    def _validate_params(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def validate(self) -> "Kernel":
        """Check every parameter; return self."""
        self._validate_params()
        return self

    def _gram(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def __call__(self, X: Any, Y: Any = None) -> np.ndarray:
        """Gram matrix ``K[i, j] = k(X[i], Y[j])`` (``Y`` defaults to ``X``); 1-d inputs are single points."""
        self._validate_params()
        Xa = check_array(X, "X", ndim=(1, 2))
        Ya = Xa if Y is None else check_array(Y, "Y", ndim=(1, 2))
        X2 = Xa[None, :] if Xa.ndim == 1 else Xa
        Y2 = Ya[None, :] if Ya.ndim == 1 else Ya
        if X2.shape[1] != Y2.shape[1]:
            raise ParameterError(f"X and Y must have the same number of features, got {X2.shape[1]} and {Y2.shape[1]}")
        K = self._gram(X2, Y2)
        if Xa.ndim == 1 and Ya.ndim == 1:
            return float(K[0, 0])
        if Xa.ndim == 1:
            return K[0]
        if Ya.ndim == 1:
            return K[:, 0]
        return K

    def diag(self, X: Any) -> np.ndarray:
        """``k(x, x)`` for each row of ``X``."""
        Xa = check_array(X, "X", ndim=2)
        return np.array([self._gram(x[None, :], x[None, :])[0, 0] for x in Xa])


class NoisyFeatureKernel(Kernel):
    """A kernel with an unbiased feature-map estimate from noisy copies (CSS10 section 3.3, eq. (2)).

    The feature map is written ``Psi(x) = c(x) * Phi(x)`` where ``Phi`` is the
    feature map of a dot-product kernel ``sum_n beta_n <x, x'>^n`` (indexed by
    the degree ``n`` and ``k_1..k_n``) and ``c(x)`` a scalar factor (1 for a
    dot-product kernel, ``exp(-||x||^2/sigma^2)`` for the Gaussian kernel).
    Subclasses give

    * ``log_beta(n) -> (sign, log beta_n)`` (sign 0 when ``beta_n = 0``),
    * ``_norm_factor_estimate(oracle, rng) -> (sign, log|c~|, queries, ok)``
      (the default is the exact factor 1 with no queries),
    * ``log_clean_factor(X)``, ``log c(x')`` for clean inputs (default 0),
    * ``feature_norm_bound(p, B_x)``, a bound on ``E||Psi~(x)||^2`` when
      ``E||x~||^2 <= B_x`` (CSS10 Lemma 3 / erratum E6), used by the theory step,
    * ``expected_queries(p)``, the expected copies one ``map_estimate`` uses.
    """

    #: largest degree with a nonzero beta (None: infinitely many).
    max_degree: int | None = None

    def _log_beta(self, n: int) -> tuple[float, float]:  # pragma: no cover - overridden
        """(sign, log beta_n) on validated parameters (sign 0 when beta_n = 0)."""
        raise NotImplementedError

    def _param_key(self):
        """A cheap snapshot of the parameters (the log-beta cache is dropped when it changes)."""
        return tuple(repr(v) for k, v in vars(self).items() if not k.startswith("_"))

    def log_beta(self, n: int) -> tuple[float, float]:
        """(sign, log beta_n), cached per parameter values (sign 0 when ``beta_n = 0``)."""
        key = self._param_key()
        cache = self.__dict__.get("_log_beta_cache")
        if cache is None or cache[0] != key:
            self._validate_params()
            cache = (key, {})
            self.__dict__["_log_beta_cache"] = cache
        table = cache[1]
        v = table.get(n)
        if v is None:
            v = self._log_beta(int(n))
            table[n] = v
        return v

    def log_clean_factor(self, X: np.ndarray) -> np.ndarray:
        """``log c(x')`` for each row of a clean batch ``X`` (0 for dot-product kernels)."""
        return np.zeros(X.shape[0])

    def _norm_factor_estimate(self, oracle, p: float, rng) -> tuple[float, float, int, bool]:
        """Unbiased estimate of ``c(x)`` from extra copies: (sign, log|c~|, queries used, supplied)."""
        return 1.0, 0.0, 0, True

    def feature_norm_bound(self, p: float, B_x: float) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def expected_queries(self, p: float) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    # -- CSS10 Subroutine 2 ------------------------------------------------------------
    def map_estimate(
        self, oracle, p: float, rng, *, skip_zero_terms: bool = True, skip=None
    ) -> FeatureEstimate | None:
        """Map_Estimate(A_t, p) (CSS10 Subroutine 2; Gaussian kernel: docs/math.md, item 5).

        Draws the degree ``N`` with ``P(N = n) = (p-1)/p^(n+1)``, queries ``N``
        copies and returns them as the estimate ``Psi~(x)`` with ``E Psi~(x) =
        Psi(x)``.  With ``skip_zero_terms`` a degree whose ``beta_N`` is 0 gives
        the zero estimate without querying (still unbiased; docs/math.md, item 2).
        ``skip(n) -> bool`` lets a caller that only needs inner products with
        a ``w`` having no support of degree ``n`` skip the queries too (the
        zero estimate is returned; its inner product with ``w`` is exact).
        Returns ``None`` when the oracle could not supply the copies (a
        :class:`nolo.noise.PoolOracle` with ``on_exhausted="drop"``).
        """
        p = check_scalar(p, "p", low=1.0, low_inclusive=False)
        return self._map_estimate(oracle, p, rng, skip_zero_terms, skip)

    def _map_estimate(self, oracle, p: float, rng, skip_zero_terms: bool = True, skip=None):
        """:meth:`map_estimate` without parameter checks (hot path of the learners)."""
        n = int(rng.geometric(1.0 - 1.0 / p)) - 1  # P(N = n) = (p-1)/p^(n+1), as nolo.estimators.sample_degree
        sb, lb = self.log_beta(n)
        if (sb == 0 and skip_zero_terms) or (skip is not None and skip(n)):
            return FeatureEstimate.zero(n, oracle_dim(oracle))
        copies = oracle.query(n) if n > 0 else np.empty((0, oracle_dim(oracle)))
        if copies is None:
            return None
        copies = np.ascontiguousarray(copies, dtype=np.float64)
        sc, lc, q, ok = self._norm_factor_estimate(oracle, p, rng)
        if not ok:
            return None
        if sb == 0:
            return FeatureEstimate(n, copies, 0.0, 0.0, n + q)
        return FeatureEstimate(n, copies, sc, degree_weight(lb, n, p) + lc, n + q)

    # -- CSS10 Subroutines 3 and 4 -----------------------------------------------------------
    def prod(self, a: FeatureEstimate, b: FeatureEstimate) -> float:
        """Prod(Psi~(x), Psi~(x')) = <Psi~(x), Psi~(x')> (CSS10 Subroutine 3, Lemma 4).

        Zero unless the degrees agree; otherwise ``beta_n p^(2n+2)/(p-1)^2
        prod_j <x~^(j), x~'^(j)>`` (times ``c~ c~'`` for the Gaussian kernel),
        evaluated in log space (NumericalError if not representable).
        """
        if a.degree != b.degree or a.sign == 0 or b.sign == 0:
            return 0.0
        if a.copies.shape[1] != b.copies.shape[1]:
            raise ParameterError(
                f"the two estimates have different dimensions {a.copies.shape[1]} and {b.copies.shape[1]}"
            )
        dots = np.einsum("kd,kd->k", a.copies, b.copies)
        s, lg = log_abs_dots(dots)
        return float(signed_value(float(a.sign * b.sign * s), float(a.log_weight + b.log_weight + lg), "Prod(Psi~, Psi~')"))

    def sq_norm(self, a: FeatureEstimate) -> float:
        """``||Psi~(x)||^2``, Prod of the estimate with itself (docs/math.md, item 2)."""
        return self.prod(a, a)

    def prod_clean(self, a: FeatureEstimate, X: Any) -> np.ndarray | float:
        """Prod(Psi~(x), x') = <Psi~(x), Psi(x')> for clean x' (CSS10 Subroutine 4).

        ``beta_n p^(n+1)/(p-1) prod_j <x~^(j), x'>`` (times ``c~ c(x')`` for the
        Gaussian kernel) for each row of ``X``; a 1-d ``X`` gives a float.
        """
        Xa = check_array(X, "X", ndim=(1, 2))
        X2 = Xa[None, :] if Xa.ndim == 1 else Xa
        if X2.shape[1] != a.copies.shape[1]:
            raise ParameterError(f"X must have {a.copies.shape[1]} features, got {X2.shape[1]}")
        if a.sign == 0:
            out = np.zeros(X2.shape[0])
        else:
            sb, lb = self.log_beta(a.degree)
            dots = X2 @ a.copies.T  # (m, n)
            s, lg = log_abs_dots(dots, axis=1)
            log_w = a.log_weight + 0.5 * lb + lg + self.log_clean_factor(X2)
            out = np.asarray(signed_value(a.sign * s, log_w, "Prod(Psi~, x')"), dtype=np.float64).reshape(-1)
        return float(out[0]) if Xa.ndim == 1 else out


def oracle_dim(oracle) -> int:
    """The dimension ``d`` of an oracle's instances (``oracle.d`` or ``oracle.n_features``)."""
    for name in ("d", "n_features", "dim"):
        d = getattr(oracle, name, None)
        if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            return int(d)
    x = getattr(oracle, "x", None)
    if x is not None:
        return int(np.asarray(x).shape[-1])
    raise ParameterError("oracle must expose its dimension as .d (or .n_features)")

