"""CSS10 Algorithm 1, "Kernel Learning Algorithm with Noisy Input", in O(T^2 d) per run."""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_bool, check_choice, check_int, check_scalar, check_seed
from nolo.estimators.logspace import signed_exp
from nolo.exceptions import NumericalError, ParameterError, PersistenceError
from nolo.kernels.base import NoisyFeatureKernel
from nolo.kernels.estimates import signed_value
from nolo.kernels.grad_length import grad_length_estimate
from nolo.learners.base import NoisyInputLearner, check_state_range
from nolo.learners.kernel._common import (
    CheckedOracle,
    check_bound,
    check_label,
    check_oracle,
    resolve_kernel,
    resolve_loss,
    step_rule,
)
from nolo.learners.kernel._support import DegreeBuckets, bucket_dot, bucket_dot_clean
from nolo.oco.projected_step import ball_log_scale

__all__ = ["NoisyKernelLearner", "theory_step_size"]

#: log of the largest float64: a stored term's log squared norm must stay below it
_LOG_MAX = math.log(np.finfo(np.float64).max)


def theory_step_size(kernel: NoisyFeatureKernel, loss, p: float, B_w: float, B_x: float, B_y: float | None = None):
    """The step ``eta`` of CSS10 Theorems 1-2 (docs/math.md, item 4, step 7), before the ``1/sqrt(T)``.

    ``eta = sqrt(B_w / (B_g B_Psi))`` (Theorem 4) with ``B_Psi`` the kernel's
    feature-norm bound (Lemma 3; Gaussian kernel: erratum E6) and
    ``B_g = p/(p-1) l'_+(a)^2`` the Lemma-2 bound on ``E g~^2``, where
    ``a = sqrt(p B_w B_Psi)`` for a classification loss (so that
    ``eta = B_w / (sqrt(u) l'_+(sqrt((p-1) u)))``, ``u = B_w p/(p-1) B_Psi``,
    exactly Theorem 1's formula) and ``a = sqrt(p) (sqrt(B_w B_Psi) + B_y)``
    for a regression loss with ``|y| <= B_y``.  Returns ``(eta, B_Psi, B_g)``.
    """
    B_psi = kernel.feature_norm_bound(p, B_x)
    if loss.kind == "classification":
        a = math.sqrt(p * B_w * B_psi)
    else:
        if B_y is None:
            raise ParameterError("B_y (a bound on |y|) is required for the theory step of a regression loss")
        a = math.sqrt(p) * (math.sqrt(B_w * B_psi) + B_y)
    lp = float(loss.derivative_plus(a))
    B_g = p / (p - 1.0) * lp * lp
    if B_g == 0:
        raise ParameterError("the loss's l'_+ is 0: the theory step is undefined")
    return math.sqrt(B_w / (B_g * B_psi)), B_psi, B_g


def _fast_step(rule):
    """``t -> eta_t`` without per-call validation for the common rules (validated once here)."""
    from nolo.oco import ConstantStep, InverseSqrtStep

    rule.validate()
    if type(rule) is ConstantStep:
        eta = float(rule.eta)
        return lambda t: eta
    if type(rule) is InverseSqrtStep:
        eta0 = float(rule.eta0)
        return lambda t: eta0 / math.sqrt(t)
    return rule


class NoisyKernelLearner(NoisyInputLearner):
    """CSS10 Algorithm 1 (Kernel Learning Algorithm with Noisy Input) for dot-product and Gaussian kernels.

    Each round ``t`` (``learn(oracle, y)``):

    1. ``Psi~(x_t) = Map_Estimate(A_t, p)`` (CSS10 Subroutine 2; Gaussian
       kernel: docs/math.md, item 5);
    2. ``g~_t = Grad_Length_Estimate(A_t, y_t, p)`` (Subroutine 1 **with the
       factor y^n restored, erratum E1**; fresh copies only);
    3. ``alpha_t = -eta_t g~_t``;
    4. the squared RKHS norm ``n~_t`` of ``w_{t+1}`` and, if ``n~_t > B_w``,
       the projection ``alpha_i <- alpha_i sqrt(B_w / n~_t)`` (**erratum E2**:
       the paper printed ``sqrt(B_w)/n~_t``; ``B_w`` bounds the *squared*
       norm).

    Prediction on a clean ``x'`` is ``sum_i alpha_i Prod(Psi~(x_i), x')``
    (Subroutine 4).  Unlike the printed algorithm, which recomputes ``n~_t``
    from all ``t^2`` pairs each round (``O(T^3)``), the norm is kept
    incrementally, ``n~ <- n~ + 2 alpha_t <w_t, Psi~_t> + alpha_t^2
    ||Psi~_t||^2``, the projection is a global scale factor, and the support
    is grouped by degree (``Prod`` of different degrees is 0): a round costs
    ``O(t d)`` and a run ``O(T^2 d)`` (docs/math.md, item 4).

    Parameters
    ----------
    kernel : NoisyFeatureKernel or name
        A dot-product kernel (:class:`nolo.kernels.PolynomialKernel`, ...) or
        :class:`nolo.kernels.GaussianKernel`.
    loss : Loss or name
        Any loss with an analytic derivative (``loss.series``); classification
        (``l(y <w, Psi(x)>)``, ``y = +-1``) or regression (``l(<w, Psi(x)> - y)``).
    p : float > 1
        Degree parameter: ``P(N = n) = (p-1)/p^(n+1)``; expected queries per
        round ``p/(p-1)^2`` (dot-product kernels, Theorem 1) or ``3p/(p-1)^2``
        (Gaussian, Theorem 2).
    B_w : float > 0 or None
        Bound on the squared RKHS norm of ``w`` (``None``: no projection).
    step : "auto", "theory", "sqrt", "constant" or a nolo.oco StepRule
        ``"theory"``: Theorems 1-2, ``alpha_t = -eta g~_t / sqrt(T)`` with
        ``eta`` of :func:`theory_step_size` (needs ``B_w``, ``B_x``,
        ``horizon``, and ``B_y`` for regression).  ``"sqrt"``: the practical
        anytime default ``eta / sqrt(t)``.  ``"auto"``: theory when those
        bounds are given, else sqrt.
    eta : float > 0
        Scale of the practical steps (default 0.05: the estimates' variance is
        large, ``E||Psi~||^2 = p/(p-1) Q(p E||x~||^2)``, so steps must be small).
    horizon : int or None
        ``T`` for the theory step.
    B_x, B_y : float or None
        ``E||x~||^2 <= B_x`` and ``|y| <= B_y`` for the theory step.
    skip_zero_terms : bool
        Skip queries whose result cannot matter (zero ``beta_n`` / ``gamma_n``,
        or a degree where ``w`` has no support); still unbiased.  ``False``
        queries exactly as printed (the theorems' counts).
    exact_polynomial : bool
        Polynomial ``l'`` (squared loss): the deterministic-degree estimator
        (docs/math.md, item 10).
    seed : None, int or Generator

    Attributes
    ----------
    queries_ : int
        Oracle copies used so far.
    shortfalls_ : int
        Rounds whose update was dropped because a finite pool
        (:class:`nolo.noise.PoolOracle`, ``on_exhausted="drop"``) ran short.
    sqnorm_ : float
        The squared RKHS norm ``n~_t`` of ``w`` (kept only when ``B_w`` is set;
        :meth:`norm_sq` recomputes it from all pairs).
    support_size_ : int
        Stored estimates (zero estimates and zero steps are not stored).
    copies_, coef_, shift_, count_, log_scale_ :
        The support, bucketed by degree (see :mod:`nolo.learners.kernel._support`),
        and the global scale of the projections.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.kernels import PolynomialKernel
    >>> from nolo.learners.kernel import NoisyKernelLearner
    >>> from nolo.noise import GaussianNoise, Oracle
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)) / 2
    >>> y = X[:, 0] * X[:, 1] + X[:, 0]
    >>> L = NoisyKernelLearner(PolynomialKernel(2), "squared", p=2.0, eta=0.05, seed=0)
    >>> for x_t, y_t in zip(X, y):
    ...     L = L.learn(Oracle(x_t, GaussianNoise(0.1), rng), y_t)  # the learner sees x_t only through copies
    >>> L.t_, L.queries_
    (300, 320)
    >>> L.predict(X[:2]).shape
    (2,)
    """

    _growing_state = {"shift_": (0,), "count_": (0,)}  # one entry per degree bucket (Learner.load's shape check)
    _state_per_feature = False  # a fresh learner's buckets of copies are empty

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
        skip_zero_terms: bool = True,
        exact_polynomial: bool = True,
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
        self.skip_zero_terms = skip_zero_terms
        self.exact_polynomial = exact_polynomial
        self.seed = seed

    # -- parameters ----------------------------------------------------------------------
    def _validate_params(self) -> None:
        self._kernel = resolve_kernel(self.kernel, NoisyFeatureKernel)
        self._loss = resolve_loss(self.loss)
        _ = self._loss.series  # NoSeriesError (a ParameterError) for non-analytic losses
        check_scalar(self.p, "p", low=1.0, low_inclusive=False)
        check_bound(self.B_w, "B_w")
        check_bound(self.B_x, "B_x")
        if self.B_y is not None:
            check_scalar(self.B_y, "B_y", low=0.0)
        if self.horizon is not None:
            check_int(self.horizon, "horizon", low=1)
        for flag in ("skip_zero_terms", "exact_polynomial"):
            check_bool(getattr(self, flag), flag)
        check_seed(self.seed)
        self._rule = self._make_rule()
        self._eta_t = _fast_step(self._rule)

    def _theory_ready(self) -> bool:
        need = [self.B_w, self.B_x, self.horizon]
        if self._loss.kind == "regression":
            need.append(self.B_y)
        return all(v is not None for v in need)

    def _make_rule(self):
        from nolo.oco import ConstantStep

        step = self.step
        if isinstance(step, str):
            check_choice(step, "step", ("auto", "theory", "sqrt", "constant"))
            if step == "auto":
                step = "theory" if self._theory_ready() else "sqrt"
            if step == "theory":
                if not self._theory_ready():
                    raise ParameterError(
                        "step='theory' needs B_w, B_x and horizon (and B_y for a regression loss)"
                    )
                eta, _, _ = theory_step_size(
                    self._kernel, self._loss, float(self.p), float(self.B_w), float(self.B_x),
                    None if self.B_y is None else float(self.B_y),
                )
                return ConstantStep(eta / math.sqrt(int(self.horizon)))
        return step_rule(step, self.eta)

    @property
    def step_size_rule(self):
        """The resolved :class:`nolo.oco.StepRule` (theory or practical)."""
        self._validate_params()
        return self._rule

    def _init_state(self, d: int) -> None:
        self.copies_ = [np.zeros((4, 0, d))]
        self.coef_ = [np.zeros(4)]
        self.shift_ = np.zeros(1)
        self.count_ = np.zeros(1, dtype=np.int64)
        self.log_scale_ = 0.0
        self.sqnorm_ = 0.0
        self.queries_ = 0
        self.shortfalls_ = 0

    def _check_state(self) -> None:
        """Invariants of a loaded support the compiled loops trust (``bucket_dot`` reads ``copies_[n][:count_[n]]``
        without bounds checks): one bucket per degree in all four containers, bucket ``n`` of shape
        ``(capacity, n, d)``, ``capacity >= 1`` (it doubles), with ``capacity`` coefficients, ``0 <= count_[n] <= capacity``; ``log_scale_ <= 0``
        (projections only shrink ``w``) and ``sqnorm_ >= 0``; stored coefficients at most ``exp(REBASE)`` in
        magnitude (a bucket is rebased beyond) and every stored term of finite squared norm (the updates and
        predictions compute its inner products)."""
        super()._check_state()
        if not self.is_initialized:  # an unfitted learner holds no state
            return
        d = self.n_features_in_
        nb = len(self.copies_)
        if nb < 1 or not len(self.coef_) == self.shift_.shape[0] == self.count_.shape[0] == nb:
            raise PersistenceError(
                f"copies_, coef_, shift_ and count_ must hold one entry per degree bucket (at least one), got lengths "
                f"{nb}, {len(self.coef_)}, {self.shift_.shape[0]}, {self.count_.shape[0]}")
        for n, (c, a) in enumerate(zip(self.copies_, self.coef_)):
            if (c.dtype != np.float64 or c.ndim != 3 or c.shape[0] < 1 or c.shape[1:] != (n, d)
                    or not c.flags.c_contiguous):
                raise PersistenceError(f"copies_[{n}] must be a C-ordered float64 array of shape (capacity >= 1, {n}, {d}), "
                                       f"got {c.dtype} {c.shape}")
            if a.dtype != np.float64 or a.shape != (c.shape[0],) or not a.flags.c_contiguous:
                raise PersistenceError(f"coef_[{n}] must be a float64 array of shape ({c.shape[0]},) (the capacity of "
                                       f"copies_[{n}]), got {a.dtype} {a.shape}")
            if not 0 <= int(self.count_[n]) <= c.shape[0]:
                raise PersistenceError(f"count_[{n}] must lie in [0, {c.shape[0]}] (the capacity of copies_[{n}]), "
                                       f"got {int(self.count_[n])}")
        if not self.log_scale_ <= 0.0:
            raise PersistenceError(f"log_scale_ must be <= 0 (projections only shrink w), got {self.log_scale_!r}")
        if not self.sqnorm_ >= 0.0:
            raise PersistenceError(f"sqnorm_ must be >= 0, got {self.sqnorm_!r}")
        bound = math.exp(DegreeBuckets.REBASE) * (1.0 + 1e-9)
        for n, (c, a) in enumerate(zip(self.copies_, self.coef_)):
            m = int(self.count_[n])
            check_state_range(f"coef_[{n}]", a[:m], -bound, bound,
                              "a bucket is rebased when a term exceeds its shift by exp(DegreeBuckets.REBASE)")
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                norms = np.einsum("ijk,ijk->ij", c[:m], c[:m])  # ||copy||^2 of each stored copy
                if not np.all(np.isfinite(norms)):
                    raise PersistenceError(f"state array 'copies_[{n}]' must hold copies of finite squared norm")
                log_sq = 2.0 * (self.shift_[n] + self.log_scale_ + np.log(np.abs(a[:m]))) + np.log(norms).sum(axis=1)
            if np.any(log_sq >= _LOG_MAX):
                raise PersistenceError(
                    f"state arrays copies_[{n}], coef_[{n}], shift_[{n}] and log_scale_: the squared norm of a stored "
                    f"term exp(log_scale_ + shift_[{n}]) coef_[{n}][i] (x) copies_[{n}][i] overflows float64")

    def _ready(self):
        if not hasattr(self, "_rule"):
            self._validate_params()

    # -- inner products with w ----------------------------------------------------------------
    def _inner_signed_log(self, est) -> tuple[float, float]:
        n = est.degree
        if est.sign == 0 or n >= len(self.copies_) or self.count_[n] == 0:
            return 0.0, -math.inf
        s, lg = bucket_dot(self.copies_[n], self.coef_[n], int(self.count_[n]), est.copies)
        if s == 0:
            return 0.0, -math.inf
        return s * est.sign, lg + self.shift_[n] + self.log_scale_ + est.log_weight

    def _inner(self, est) -> float:
        s, lg = self._inner_signed_log(est)
        return float(signed_value(float(s), float(lg), "<w, Psi~>"))

    def _has_support(self, n: int) -> bool:
        return n < len(self.copies_) and self.count_[n] > 0

    # -- one round -------------------------------------------------------------------------------
    def learn(self, oracle, y) -> "NoisyKernelLearner":
        """One round of Algorithm 1 on the oracle ``A_t`` of the hidden ``x_t`` and the label ``y_t``."""
        self._validate_params() if not self.is_initialized else self._ready()
        d = check_oracle(oracle, self.n_features_in_ if self.is_initialized else None)
        yv = check_label(self._loss, y)
        self._ensure_initialized(d)
        rng_state = self.rng_.bit_generator.state
        try:
            self._round(CheckedOracle(oracle, d), yv)
        except BaseException:
            self.rng_.bit_generator.state = rng_state
            raise
        return self

    def _round(self, oracle, y: float) -> None:
        p = float(self.p)
        kernel = self._kernel
        est = kernel._map_estimate(oracle, p, self.rng_, bool(self.skip_zero_terms))
        if est is None:
            self.shortfalls_ += 1
            self.t_ += 1
            return
        gl = grad_length_estimate(
            self._loss, kernel, oracle, y, p, self.rng_, self._inner,
            has_support=self._has_support if self.skip_zero_terms else None,
            skip_zero_terms=bool(self.skip_zero_terms),
            exact_polynomial=bool(self.exact_polynomial),
        )
        queries = est.queries + gl.queries
        if gl.shortfall:
            self.shortfalls_ += 1
            self.queries_ += queries
            self.t_ += 1
            return
        t = self.t_ + 1
        alpha = -self._eta_t(t) * gl.value
        if not math.isfinite(alpha):
            raise NumericalError(f"the step alpha_t = {alpha} is not finite; lower eta or p")
        track = self.B_w is not None
        new_sq = self.sqnorm_
        if alpha != 0.0 and est.sign != 0:
            if track:
                s_ip, l_ip = self._inner_signed_log(est)
                ip = float(signed_value(float(s_ip), float(l_ip), "<w_t, Psi~_t>"))
                sq = kernel.sq_norm(est)
                new_sq = self.sqnorm_ + 2.0 * alpha * ip + alpha * alpha * sq
                if not math.isfinite(new_sq):
                    raise NumericalError("the squared norm of w overflowed float64; lower eta or p")
                new_sq = max(new_sq, 0.0)
            # commit: append the term alpha_t Psi~_t (in units of the current global scale)
            n = est.degree
            self.shift_, self.count_ = DegreeBuckets.ensure_degree(
                self.copies_, self.coef_, self.shift_, self.count_, n, self.n_features_in_
            )
            DegreeBuckets.append(
                self.copies_, self.coef_, self.shift_, self.count_, n, est.copies,
                math.copysign(1.0, alpha) * est.sign,
                math.log(abs(alpha)) - self.log_scale_ + est.log_weight,
            )
        if track:
            # erratum E2: alpha_i <- alpha_i sqrt(B_w / n~_t), applied as a global scale (the shared ball projection)
            log_shift, new_sq = ball_log_scale(new_sq, float(self.B_w))
            self.log_scale_ += log_shift
        self.sqnorm_ = new_sq
        self.queries_ += queries
        self.t_ = t

    # -- prediction --------------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """``<w, Psi(x')>`` for each clean row: ``sum_i alpha_i Prod(Psi~(x_i), x')`` (CSS10 Subroutine 4)."""
        self._require_initialized("decision_function")
        self._ready()
        X2 = self._check_X(X)
        sign = np.zeros(X2.shape[0])
        logv = np.full(X2.shape[0], -np.inf)
        log_clean = self._kernel.log_clean_factor(X2)
        for n in range(len(self.copies_)):
            m = int(self.count_[n])
            if m == 0:
                continue
            sb, lb = self._kernel.log_beta(n)
            s, lg = bucket_dot_clean(self.copies_[n], self.coef_[n], m, X2)
            lg = lg + self.shift_[n] + self.log_scale_ + 0.5 * lb + log_clean
            # signed log-sum of the running total and this degree's contribution
            mx = np.maximum(np.where(sign != 0, logv, -np.inf), np.where(s != 0, lg, -np.inf))
            safe = np.where(np.isfinite(mx), mx, 0.0)
            with np.errstate(invalid="ignore", over="ignore"):
                v = np.where(sign != 0, sign * np.exp(logv - safe), 0.0) + np.where(s != 0, s * np.exp(lg - safe), 0.0)
            with np.errstate(divide="ignore"):
                logv = np.where(v != 0, safe + np.log(np.abs(v)), -np.inf)
            sign = np.sign(v)
        out = signed_exp(sign, logv, "prediction <w, Psi(x')>")
        return np.asarray(out, dtype=np.float64).reshape(X2.shape[0])

    def predict(self, X) -> np.ndarray:
        """Regression: ``<w, Psi(x')>``; classification: its sign (+1 on ties)."""
        f = self.decision_function(X)
        if self._loss.kind == "classification":
            return np.where(f >= 0, 1.0, -1.0)
        return f

    # -- introspection -------------------------------------------------------------------------------
    @property
    def support_size_(self) -> int:
        return int(self.count_.sum())

    def norm_sq(self) -> float:
        """The exact squared RKHS norm of ``w`` recomputed from all support pairs (O(t^2); for checks)."""
        self._require_initialized("norm_sq")
        total = 0.0
        for n in range(len(self.copies_)):
            m = int(self.count_[n])
            for i in range(m):
                s, lg = bucket_dot(self.copies_[n], self.coef_[n], m, self.copies_[n][i])
                if s != 0:
                    total += self.coef_[n][i] * s * math.exp(lg + 2 * (self.shift_[n] + self.log_scale_))
        return total
