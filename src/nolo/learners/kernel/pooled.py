"""CSS10 Algorithm 1 fed with every reading of an item: the U-statistic (Rao-Blackwellised) estimates."""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_choice, check_int
from nolo.exceptions import NumericalError, ParameterError
from nolo.kernels.estimates import signed_value
from nolo.kernels.pooled import (
    MAX_TERMS,
    PooledFeatureEstimate,
    check_pooled_kernel,
    pooled_estimate,
    pooled_estimates_all_degrees,
    pooled_prod,
)
from nolo.learners.kernel._support import DegreeBuckets, bucket_dot
from nolo.learners.kernel.noisy_kernel import NoisyKernelLearner

__all__ = ["PooledNoisyKernelLearner"]


def _signed_log_sum(signs: np.ndarray, logs: np.ndarray) -> tuple[float, float]:
    """(sign, log|.|) of ``sum_i signs_i exp(logs_i)`` (terms with sign 0 ignored)."""
    live = signs != 0
    if not np.any(live):
        return 0.0, -math.inf
    mx = float(np.max(logs[live]))
    v = float(np.sum(signs[live] * np.exp(logs[live] - mx)))
    if v == 0.0:
        return 0.0, -math.inf
    return math.copysign(1.0, v), mx + math.log(abs(v))


class PooledNoisyKernelLearner(NoisyKernelLearner):
    """CSS10 Algorithm 1 (errata E1, E2 corrected) using *all* readings of each item.

    A round takes the item's whole pool of readings (all that remain in a
    :class:`nolo.noise.PoolOracle`, or ``pool_size`` copies from an unbounded
    oracle), draws the two degrees of Algorithm 1 -- ``N`` of the stored
    ``Psi~(x_t)`` (Subroutine 2) and ``N'`` of the fresh estimate inside
    ``Grad_Length_Estimate`` (Subroutine 1; squared loss: one estimate,
    docs/math.md, item 10) -- splits the shuffled pool into two disjoint parts
    (``N`` readings plus half the spare ones for the stored estimate, the rest
    for the fresh one; all of them to the stored estimate when ``w`` has no
    support of degree ``N'``), and replaces each product of copies by its
    **U-statistic** over the part (:mod:`nolo.kernels.pooled`).  The two parts
    are disjoint and the split ignores the values, so the estimates stay
    independent and unbiased; each is the conditional expectation of CSS10's
    random-copy estimate given its part, so its variance is never larger.
    When ``N + N'`` exceeds the pool the round asks the oracle for the missing
    copies: an unbounded oracle supplies them, a finite pool refuses (the
    round's update is dropped and counted in ``shortfalls_``, the pool policy
    of :mod:`nolo.noise.pool`: unbiased for the kernel truncated at the pool size).

    Restrictions: a dot-product kernel (linear, polynomial, exponential; the
    Gaussian kernel's norm factor needs further independent pairs -- use
    :class:`NoisyKernelLearner`) and a regression loss whose derivative is a
    polynomial of degree <= 1 (the squared loss: the gradient length is
    ``l'(<w, Psi~'> - y)``, linear in one fresh estimate).

    Parameters
    ----------
    kernel, loss, p, B_w, step, eta, horizon, B_x, B_y, seed
        As for :class:`NoisyKernelLearner` (``loss`` defaults to ``"squared"``).
    pool_size : int >= 1
        Copies per round asked of an oracle without a finite pool (``remaining``).
    max_terms : int >= 1
        Largest number of symmetric powers one U-statistic estimate may have;
        beyond it (high degree on a large pool) the random-copy estimate on
        readings drawn from the part is used.
    degrees : "random" or "all"
        ``"random"``: CSS10's random degrees ``N, N'`` (above).  ``"all"``
        (kernels of finite degree ``D``: linear, polynomial): every degree
        block at once, ``Psi~ = sum_n sqrt(beta_n) U_n`` on each part
        (:func:`nolo.kernels.pooled.pooled_estimates_all_degrees`) -- the random
        degree averaged out, far less variance; it needs ``D`` readings per
        part (``2D`` once ``w`` has degree-``D`` support), else that round
        draws random degrees.

    Attributes
    ----------
    queries_, shortfalls_, sqnorm_, support_size_ :
        As for :class:`NoisyKernelLearner` (``queries_`` counts the readings
        taken; ``support_size_`` the stored symmetric powers).
    ustat_rounds_ : int
        Rounds whose stored estimate was a U-statistic (not the fallback).

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.kernels import PolynomialKernel
    >>> from nolo.learners.kernel import PooledNoisyKernelLearner
    >>> from nolo.noise import PoolOracle
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)) / 2
    >>> y = X[:, 0] * X[:, 1] + X[:, 0]
    >>> L = PooledNoisyKernelLearner(PolynomialKernel(2), p=2.0, eta=0.05, seed=0)
    >>> for x_t, y_t in zip(X, y):   # 6 noisy readings per item, all of them used
    ...     L = L.learn(PoolOracle(x_t + 0.1 * rng.normal(size=(6, 2)), on_exhausted="drop"), y_t)
    >>> L.t_, L.queries_, L.shortfalls_
    (300, 1800, 0)
    >>> L.predict(X[:2]).shape
    (2,)
    """

    skip_zero_terms = True
    exact_polynomial = True

    def __init__(
        self,
        kernel="polynomial",
        loss="squared",
        p: float = 2.0,
        B_w: float | None = None,
        step="auto",
        eta: float = 0.05,
        horizon: int | None = None,
        B_x: float | None = None,
        B_y: float | None = None,
        pool_size: int = 8,
        max_terms: int = MAX_TERMS,
        degrees: str = "random",
        seed=None,
    ):
        self.kernel = kernel
        self.loss = loss
        self.p = p
        self.B_w = B_w
        self.step = step
        self.eta = eta
        self.horizon = horizon
        self.B_x = B_x
        self.B_y = B_y
        self.pool_size = pool_size
        self.max_terms = max_terms
        self.degrees = degrees
        self.seed = seed

    @classmethod
    def _test_params(cls):
        return [{"p": 3.0, "B_w": 4.0, "pool_size": 4}, {"kernel": "linear", "pool_size": 2},
                {"degrees": "all", "B_w": 4.0, "pool_size": 4}]

    def _validate_params(self) -> None:
        super()._validate_params()
        check_pooled_kernel(self._kernel)
        series = self._loss.series
        if self._loss.kind != "regression" or series.degree is None or series.degree > 1:
            raise ParameterError(
                f"loss must be a regression loss whose derivative is a polynomial of degree <= 1 (e.g. 'squared') "
                f"for {type(self).__name__}, got {self._loss.name!r}; use NoisyKernelLearner for other losses"
            )
        check_int(self.pool_size, "pool_size", low=1)
        check_int(self.max_terms, "max_terms", low=1)
        check_choice(self.degrees, "degrees", ("random", "all"))
        if self.degrees == "all" and self._kernel.max_degree is None:
            raise ParameterError(
                f"degrees='all' needs a kernel of finite degree (linear, polynomial), got {type(self._kernel).__name__}"
            )

    def _init_state(self, d: int) -> None:
        super()._init_state(d)
        self.ustat_rounds_ = 0

    # -- inner products with w ----------------------------------------------------------------------
    def _inner_pooled(self, est: PooledFeatureEstimate) -> float:
        """``<w, Psi~>`` for a pooled estimate: ``sum_r c_r <w, copies_r>`` over the degree's bucket."""
        n = est.degree
        if est.is_zero or not self._has_support(n):
            return 0.0
        m = int(self.count_[n])
        signs = np.zeros(est.coefs.shape[0])
        logs = np.full(est.coefs.shape[0], -math.inf)
        for r, c in enumerate(est.coefs):
            if c == 0.0:
                continue
            s, lg = bucket_dot(self.copies_[n], self.coef_[n], m, est.copies[r])
            signs[r] = s * math.copysign(1.0, c)
            logs[r] = lg + math.log(abs(c))
        s, lg = _signed_log_sum(signs, logs)
        if s == 0.0:
            return 0.0
        return float(signed_value(float(s * est.sign), float(lg + self.shift_[n] + self.log_scale_ + est.log_weight),
                                  "<w, Psi~>"))

    # -- one round (NoisyKernelLearner.learn validates, wraps the oracle in a CheckedOracle and calls this) ----
    def _pool_size_of(self, oracle) -> int:
        left = getattr(getattr(oracle, "_oracle", oracle), "remaining", None)  # the user's oracle behind the check
        if isinstance(left, (int, np.integer)) and not isinstance(left, bool):
            return int(left)
        return int(self.pool_size)

    def _round(self, oracle, y: float) -> None:
        t = self.t_ + 1
        k = self._pool_size_of(oracle)
        R = oracle.query(k) if k > 0 else np.empty((0, self.n_features_in_))
        if R is None:
            self.shortfalls_ += 1
            self.t_ = t
            return
        plan = self._plan_all_degrees(R) if self.degrees == "all" else None
        if plan is None:
            plan = self._plan_random_degree(oracle, R)
        ests, v, taken, status = plan
        if status != "ok":  # "zero": the update is 0 whatever the gradient; "short": a finite pool refused
            self.shortfalls_ += int(status == "short")
            self.queries_ += taken
            self.t_ = t
            return
        self._update(ests, v, y, t)
        self.ustat_rounds_ += int(all(e.ustat for e in ests))
        self.queries_ += taken
        self.t_ = t

    def _plan_random_degree(self, oracle, R):
        """CSS10's random degrees N, N' (Subroutines 1-2) with U-statistics on two disjoint parts of the pool."""
        p, kernel, rng = float(self.p), self._kernel, self.rng_
        taken = R.shape[0]
        n = int(rng.geometric(1.0 - 1.0 / p)) - 1  # N of the stored Psi~ (Subroutine 2)
        n2 = int(rng.geometric(1.0 - 1.0 / p)) - 1  # N' of the fresh estimate (Subroutine 1)
        R = R[rng.permutation(taken)]
        if kernel.log_beta(n)[0] == 0:
            return [], 0.0, taken, "zero"
        need = kernel.log_beta(n2)[0] != 0 and self._has_support(n2)
        n_fresh = n2 if need else 0
        if n + n_fresh > R.shape[0]:
            extra = oracle.query(n + n_fresh - R.shape[0])
            if extra is None:
                return [], 0.0, taken, "short"
            taken += extra.shape[0]
            R = np.vstack([R, extra])
        spare = R.shape[0] - n - n_fresh
        a = n + (spare + 1) // 2 if need else R.shape[0]
        mt = int(self.max_terms)
        est = pooled_estimate(kernel, R[:a], n, p, max_terms=mt, rng=rng)
        v = self._inner_pooled(pooled_estimate(kernel, R[a:], n2, p, max_terms=mt, rng=rng)) if need else 0.0
        return [est], v, taken, "ok"

    def _plan_all_degrees(self, R):
        """Every degree at once (``degrees="all"``): ``sum_n sqrt(beta_n) U_n`` on each part; None if the pool
        is too small for it (the round then draws random degrees)."""
        kernel, rng = self._kernel, self.rng_
        live = [n for n in range(int(kernel.max_degree) + 1) if kernel.log_beta(n)[0] != 0]
        fresh = [n for n in live if self._has_support(n)]
        need_a, need_b = max(live), max(fresh, default=0)
        if need_a + need_b > R.shape[0]:
            return None
        R = R[rng.permutation(R.shape[0])]
        spare = R.shape[0] - need_a - need_b
        a = need_a + (spare + 1) // 2 if fresh else R.shape[0]
        mt = int(self.max_terms)
        ests = pooled_estimates_all_degrees(kernel, R[:a], live, max_terms=mt, rng=rng)
        v = sum(self._inner_pooled(e) for e in pooled_estimates_all_degrees(kernel, R[a:], fresh, max_terms=mt, rng=rng))
        return ests, float(v), R.shape[0], "ok"

    def _update(self, ests: list, v: float, y: float, t: int) -> None:
        """``w <- w + alpha_t Psi~_t`` with ``alpha_t = -eta_t l'(v - y)``, then the projection (erratum E2)."""
        # gradient length l'(<w, Psi~'> - y) for a derivative of degree <= 1 (docs/math.md, item 10)
        z = v - y
        series = self._loss.series
        g = 0.0
        for j in range(int(series.degree) + 1):
            sg, lg = series.sign_log(j)
            if sg != 0:
                g += sg * math.exp(lg) * (z if j == 1 else 1.0)
        alpha = -self._eta_t(t) * g
        if not math.isfinite(alpha):
            raise NumericalError(f"the step alpha_t = {alpha} is not finite; lower eta or p")
        track = self.B_w is not None
        new_sq = self.sqnorm_
        if alpha != 0.0:
            if track:
                ip = sum(self._inner_pooled(e) for e in ests)
                sq = sum(pooled_prod(e, e) for e in ests)  # blocks of different degrees are orthogonal
                new_sq = self.sqnorm_ + 2.0 * alpha * ip + alpha * alpha * sq
                if not math.isfinite(new_sq):
                    raise NumericalError("the squared norm of w overflowed float64; lower eta or p")
                new_sq = max(new_sq, 0.0)
            for est in ests:
                self._append(est, alpha)
        if track and new_sq > float(self.B_w):
            self.log_scale_ += 0.5 * (math.log(float(self.B_w)) - math.log(new_sq))  # erratum E2
            new_sq = float(self.B_w)
        self.sqnorm_ = new_sq

    def _append(self, est: PooledFeatureEstimate, alpha: float) -> None:
        """Append ``alpha * est`` to its degree's bucket, one stored term per symmetric power."""
        n = est.degree
        if est.is_zero:
            return
        self.shift_, self.count_ = DegreeBuckets.ensure_degree(
            self.copies_, self.coef_, self.shift_, self.count_, n, self.n_features_in_
        )
        base = math.log(abs(alpha)) - self.log_scale_ + est.log_weight
        s_alpha = math.copysign(1.0, alpha) * est.sign
        for r, c in enumerate(est.coefs):
            if c != 0.0:
                DegreeBuckets.append(self.copies_, self.coef_, self.shift_, self.count_, n, est.copies[r],
                                     s_alpha * math.copysign(1.0, c), base + math.log(abs(c)))
