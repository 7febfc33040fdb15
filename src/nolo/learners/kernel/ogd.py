"""Kernel online gradient descent on points: the clean-data learner and the naive one-copy learner (CSS10 section 3.1).

Zinkevich's OGD in an RKHS, ``w_{t+1} = P(w_t - eta_t l'(.) Psi(x_t))``, keeps
``w = scale * sum_i coef_i k(s_i, .)`` over stored points ``s_i``.  As in
Algorithm 1, the squared norm is kept incrementally and the projection onto
``{||w||^2 <= B_w}`` is a global scale, so a round costs ``O(t d)``.

* :class:`CleanKernelOGD` sees the clean ``x_t`` (full information): the
  reference CSS10 compares against.
* :class:`NaiveKernelOGD` plugs one noisy copy into the same update -- the
  baseline CSS10 section 3.1 calls biased: with nonlinear kernels or losses
  ``E[l'(<w, Psi(x~)>) Psi(x~)] != l'(<w, Psi(x)>) Psi(x)``.
"""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_seed
from nolo.exceptions import NumericalError, PersistenceError
from nolo.kernels.base import Kernel
from nolo.learners.base import FullInformationLearner, NoisyInputLearner, check_state_expansion, check_state_range
from nolo.learners.kernel._common import CheckedOracle, check_bound, check_label, check_oracle, resolve_kernel, resolve_loss, step_rule
from nolo.oco.projected_step import ball_log_scale

__all__ = ["CleanKernelOGD", "NaiveKernelOGD"]


class _KernelOGDMixin:
    """State and update shared by the two point-based kernel OGD learners."""

    _growing_state = {"points_": (0,), "coef_": (0,)}  # buffers that double (Learner.load's shape check)

    def _validate_common(self) -> None:
        self._kernel = resolve_kernel(self.kernel, Kernel)
        self._loss = resolve_loss(self.loss)
        check_bound(self.B_w, "B_w")
        check_seed(self.seed)
        self._rule = step_rule(self.step, self.eta)

    def _init_state(self, d: int) -> None:
        self.points_ = np.zeros((16, d))
        self.coef_ = np.zeros(16)
        self.size_ = 0
        self.log_scale_ = 0.0
        self.sqnorm_ = 0.0

    def _check_state(self) -> None:
        """Invariants of a loaded support: ``0 <= size_ <= min(len(points_), t_)`` (a point per round at most) with a buffer of at least one row (it
        doubles), ``log_scale_`` in [-200, 0] (projections only shrink ``w``; below -200 the scale is folded into
        the coefficients), ``sqnorm_ >= 0``, and the expansion consistent with it (:func:`check_state_expansion`:
        stored points the kernel can evaluate, coefficients no larger than the tracked norm allows)."""
        super()._check_state()
        if not self.is_initialized:  # an unfitted learner holds no state
            return
        cap = self.points_.shape[0]
        if cap < 1 or self.coef_.shape != (cap,):
            raise PersistenceError(f"points_ must have at least one row and coef_ one entry per row, got shapes "
                                   f"{self.points_.shape} and {self.coef_.shape}")
        check_state_range("size_", self.size_, 0, min(cap, self.t_), f"the stored points: at most the rows of points_ "
                          f"({cap}) and one per round seen (t_ = {self.t_})")
        if not -200.0 <= self.log_scale_ <= 0.0:
            raise PersistenceError(f"log_scale_ must lie in [-200, 0], got {self.log_scale_!r}")
        if not self.sqnorm_ >= 0.0:
            raise PersistenceError(f"sqnorm_ must be >= 0, got {self.sqnorm_!r}")
        m = self.size_
        if m:
            if not hasattr(self, "_kernel"):
                self._validate_common()
            P, c = self.points_[:m], math.exp(self.log_scale_) * self.coef_[:m]
            with np.errstate(over="ignore", invalid="ignore"):
                try:
                    kd = self._kernel.diag(P)
                except NumericalError:
                    kd = np.array([np.inf])
                check_state_expansion("points_", "coef_", "sqnorm_", c, kd,
                                      lambda idx: self._kernel._gram(P[idx], P) @ c, self.sqnorm_)

    def _kvec(self, x: np.ndarray) -> np.ndarray:
        m = self.size_
        if m == 0:
            return np.zeros(0)
        return self._kernel._gram(self.points_[:m], x[None, :])[:, 0]

    def _margin(self, kv: np.ndarray) -> float:
        if kv.shape[0] == 0:
            return 0.0
        return math.exp(self.log_scale_) * float(self.coef_[: self.size_] @ kv)

    def _update(self, point: np.ndarray, y: float) -> None:
        if not hasattr(self, "_rule"):
            self._validate_common()
        kv = self._kvec(point)
        margin = self._margin(kv)
        g = float(self._loss.grad_margin(margin, y))
        t = self.t_ + 1
        alpha = -self._rule(t) * g
        kxx = float(self._kernel._gram(point[None, :], point[None, :])[0, 0])
        new_sq = self.sqnorm_ + 2.0 * alpha * margin + alpha * alpha * kxx
        if not (math.isfinite(alpha) and math.isfinite(new_sq)):
            raise NumericalError("kernel OGD step overflowed; lower eta")
        new_sq = max(new_sq, 0.0)
        m = self.size_
        if alpha != 0.0:
            if m == self.points_.shape[0]:
                self.points_ = np.concatenate([self.points_, np.zeros_like(self.points_)])
                self.coef_ = np.concatenate([self.coef_, np.zeros_like(self.coef_)])
            self.points_[m] = point
            self.coef_[m] = alpha * math.exp(-self.log_scale_)
            self.size_ = m + 1
        if self.B_w is not None:  # the ball ||w||^2 <= B_w: a global scale, kept in the log domain
            log_shift, new_sq = ball_log_scale(new_sq, float(self.B_w))
            self.log_scale_ += log_shift
        if self.log_scale_ < -200.0:  # fold the scale into the coefficients before they grow too large
            self.coef_[: self.size_] *= math.exp(self.log_scale_)
            self.log_scale_ = 0.0
        self.sqnorm_ = new_sq
        self.t_ = t

    def decision_function(self, X) -> np.ndarray:
        """``<w, Psi(x')>`` for each clean row."""
        self._require_initialized("decision_function")
        if not hasattr(self, "_rule"):
            self._validate_common()
        X2 = self._check_X(X)
        if self.size_ == 0:
            return np.zeros(X2.shape[0])
        K = self._kernel._gram(X2, self.points_[: self.size_])
        out = math.exp(self.log_scale_) * (K @ self.coef_[: self.size_])
        if not np.all(np.isfinite(out)):
            raise NumericalError("kernel OGD prediction overflowed")
        return out

    def predict(self, X) -> np.ndarray:
        f = self.decision_function(X)
        if self._loss.kind == "classification":
            return np.where(f >= 0, 1.0, -1.0)
        return f


class CleanKernelOGD(_KernelOGDMixin, FullInformationLearner):
    """Projected kernel online gradient descent on clean data (Zinkevich 2003; CSS10 section 3.1).

    ``learn(x, y)``: ``alpha_t = -eta_t y l'(y <w_t, Psi(x_t)>)`` (classification)
    or ``-eta_t l'(<w_t, Psi(x_t)> - y)`` (regression), stored with ``x_t``;
    projection onto ``||w||^2 <= B_w`` by rescaling.

    Parameters
    ----------
    kernel : Kernel or str
        Any :class:`nolo.kernels.Kernel` or its name (``"polynomial"``, ``"gaussian"``, ...).
    loss : Loss or str
        Any differentiable :mod:`nolo.losses` loss or its name.
    B_w : float > 0 or None
        Bound on the squared RKHS norm (``None``: no projection).
    step : "sqrt", "constant" or StepRule
        ``eta / sqrt(t)``, ``eta``, or a :mod:`nolo.oco` step rule.
    eta : float > 0
        Step scale.
    seed : None, int, SeedSequence or Generator
        Unused (deterministic); kept for the learner contract.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.kernel import CleanKernelOGD
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)) / 2
    >>> y = X[:, 0] * X[:, 1] + X[:, 0]
    >>> C = CleanKernelOGD("polynomial", "squared", eta=0.1)
    >>> for x_t, y_t in zip(X, y):
    ...     C = C.learn(x_t, y_t)
    >>> round(float(np.mean((C.predict(X) - y) ** 2)), 3)  # Var(y) = 0.33
    0.012
    """

    def __init__(self, kernel="polynomial", loss="squared", B_w=None, step="sqrt", eta: float = 0.05, seed=None):
        self.kernel = kernel
        self.loss = loss
        self.B_w = B_w
        self.step = step
        self.eta = eta
        self.seed = seed

    def _validate_params(self) -> None:
        self._validate_common()

    def learn(self, x, y) -> "CleanKernelOGD":
        if not self.is_initialized:
            self._validate_params()
        elif not hasattr(self, "_rule"):
            self._validate_common()
        xv = self._check_x(x)
        yv = check_label(self._loss, y)
        self._ensure_initialized(xv.shape[0])
        self._update(xv, yv)
        return self


class NaiveKernelOGD(_KernelOGDMixin, NoisyInputLearner):
    """The naive noisy-input learner: kernel OGD on ONE noisy copy per round (the biased baseline of CSS10 section 3.1).

    ``learn(oracle, y)`` queries exactly one copy ``x~_t`` and runs the
    :class:`CleanKernelOGD` update on it as if it were clean.  For a linear
    kernel with a linear loss this is unbiased; otherwise it converges to the
    wrong predictor, and by CSS10 Theorem 3 no single-copy learner can do
    better in general.

    Parameters
    ----------
    kernel, loss, B_w, step, eta, seed
        As for :class:`CleanKernelOGD`.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.kernel import NaiveKernelOGD
    >>> from nolo.noise import GaussianNoise, Oracle
    >>> rng = np.random.default_rng(0)
    >>> N = NaiveKernelOGD("polynomial", "squared", eta=0.1)
    >>> N = N.learn(Oracle(np.array([0.5, -1.0]), GaussianNoise(0.1), rng), 0.3)
    >>> N.t_, N.size_  # one round, one stored (noisy) point
    (1, 1)
    """

    def __init__(self, kernel="polynomial", loss="squared", B_w=None, step="sqrt", eta: float = 0.05, seed=None):
        self.kernel = kernel
        self.loss = loss
        self.B_w = B_w
        self.step = step
        self.eta = eta
        self.seed = seed

    def _validate_params(self) -> None:
        self._validate_common()

    def learn(self, oracle, y) -> "NaiveKernelOGD":
        if not self.is_initialized:
            self._validate_params()
        elif not hasattr(self, "_rule"):
            self._validate_common()
        d = check_oracle(oracle, self.n_features_in_ if self.is_initialized else None)
        yv = check_label(self._loss, y)
        copy = CheckedOracle(oracle, d).query(1)
        if copy is None:
            self._ensure_initialized(d)
            self.shortfalls_ = getattr(self, "shortfalls_", 0) + 1
            self.t_ += 1
            return self
        self._ensure_initialized(d)
        self._update(copy[0], yv)
        return self

    def _init_state(self, d: int) -> None:
        super()._init_state(d)
        self.shortfalls_ = 0
