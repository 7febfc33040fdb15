"""CSS11 Algorithm 2: kernel learning under Gaussian input noise with a surrogate kernel, and its baseline.

:class:`GaussianNoiseKernelRegression` is Algorithm 2 ("Kernel Learning
Algorithm with Gaussian Noise N(0, Sigma)"): Zinkevich's OGD in the RKHS of
the surrogate kernel ``k_hat`` (eq. (5), or eq. (17) for the radial
approximation of appendix E), whose output is read in the RKHS of the
original kernel ``k``.  :class:`KernelOGDRegression` is plain kernel OGD with
one point per round -- fed a noisy copy it is the naive baseline, fed the
clean instance it is the clean-data reference.

Both share one compiled loop (numba): per round, one kernel row against the
stored support points for the gradient length and one for the incremental
squared norm ``r_t = r_{t-1} + 2 alpha_t sum_{i<t} alpha_i k_hat(x_i, x_t)
+ alpha_t^2 k_hat(x_t, x_t)``, so a run of ``T`` rounds costs ``O(T^2 d)``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import nolo._jit  # noqa: F401  (nolo's cache locator, before the first nb.njit)
from nolo._validation import check_array, check_int, check_scalar, check_seed, check_targets_for_rows
from nolo.exceptions import CopiesExhausted, NumericalError, ParameterError, PersistenceError
from nolo.kernels.compiled import kernel_value, weighted_sum, weighted_sums
from nolo.kernels.surrogate import SurrogateKernelPair
from nolo.learners.base import FullInformationLearner, NoisyInputLearner, check_state_expansion, check_state_range
from nolo.oco.projected_step import ball_scale
from nolo.oco.steps import ConstantStep, check_step

__all__ = ["GaussianNoiseKernelRegression", "KernelOGDRegression"]


@nb.njit(cache=True)
def _kernel_ogd_loop(spec, ospec, C, a_store, a_grad, y, etas, W, S, alpha, n0, norm2, Xeval, pred):
    """Play the rounds of ``C`` (shape (T, m, d), already in the kernel's frame).

    Stores ``C[i, a_store]`` as support point, uses ``C[i, a_grad]`` in the
    gradient length ``g = 2(sum alpha_j k_hat(S_j, z) - y)``; ``alpha_t = -eta g``;
    rescales every ``alpha`` by ``W / sqrt(r_t)`` when ``r_t > W^2`` (the shared
    projection rule :func:`nolo.oco.projected_step.ball_scale`, in the RKHS).
    The kernels are evaluated through :mod:`nolo.kernels.compiled` from the
    pair's records ``spec`` (the surrogate) and ``ospec`` (the original).  Returns
    ``(n, norm2, status)``; status < 0 flags a non-finite round ``-(status+1)``.
    If ``Xeval`` has rows, ``pred[i]`` is the played predictor's value at
    ``Xeval[i]`` under the *original* kernel.
    """
    T = C.shape[0]
    n = n0
    for i in range(T):
        if Xeval.shape[0] > 0:
            pred[i] = weighted_sum(ospec, S, alpha, n, Xeval[i])
        zs = C[i, a_store]
        zg = C[i, a_grad]
        sg = weighted_sum(spec, S, alpha, n, zg)
        g = 2.0 * (sg - y[i])
        at = -etas[i] * g
        if a_store == a_grad:
            cross = sg
        else:
            cross = weighted_sum(spec, S, alpha, n, zs)
        kss = kernel_value(spec, zs, zs)
        r = norm2 + 2.0 * at * cross + at * at * kss
        if not (math.isfinite(r) and math.isfinite(at)):
            return n, norm2, -(i + 1)
        for j in range(zs.shape[0]):
            S[n, j] = zs[j]
        alpha[n] = at
        n += 1
        scale, r = ball_scale(r, W)
        if scale != 1.0:
            for j in range(n):
                alpha[j] *= scale
        norm2 = r if r > 0.0 else 0.0
    return n, norm2, T


class _KernelOGDBase:
    """State handling shared by the two kernel learners (support points in the kernel's frame)."""

    _growing_state = {"support_": (0,), "alpha_": (0,)}  # a point per round (Learner.load's shape check)
    _state_per_feature = False  # a fresh learner's support is empty

    def _init_state(self, n_features: int) -> None:
        self.support_ = np.zeros((0, n_features))
        self.alpha_ = np.zeros(0)
        self.norm2_ = 0.0

    def _norm_spec(self):  # pragma: no cover - overridden
        """The compiled record of the kernel whose RKHS norm ``norm2_`` tracks."""
        raise NotImplementedError

    def _check_state(self) -> None:
        """A loaded support must agree with its tracked squared norm (:func:`check_state_expansion`): ``norm2_ >=
        0``, every support point's kernel value with itself finite, and the expansion's values at the support points
        no larger than ``sqrt(norm2_ k(s, s))`` (coefficients the norm does not account for make every later step
        overflow); at most one support point per reading seen (``len(support_) <= t_``)."""
        super()._check_state()
        if not self.is_initialized:
            return
        check_state_range("support_", self.alpha_.shape[0], 0, self.t_, f"its number of rows: a support point per "
                          f"reading seen at most (t_ = {self.t_})")
        if not self.alpha_.shape[0]:
            return
        if not self.norm2_ >= 0.0:
            raise PersistenceError(f"norm2_ (the squared RKHS norm) must be >= 0, got {self.norm2_!r}")
        spec = self._norm_spec()
        S, a, n = self.support_, self.alpha_, self.alpha_.shape[0]
        kd = np.array([kernel_value(spec, S[i], S[i]) for i in range(n)])
        check_state_expansion(
            "support_", "alpha_", "norm2_", a, kd,
            lambda idx: [weighted_sum(spec, S, a, n, S[i]) for i in idx], self.norm2_)

    def _check_kernel(self, d: int | None = None) -> SurrogateKernelPair:
        k = self.kernel
        if not isinstance(k, SurrogateKernelPair):
            raise ParameterError(
                "kernel must be a nolo surrogate kernel pair (GaussianSurrogateKernel or RadialKernelApproximation), "
                f"got {type(k).__name__}"
            )
        if d is not None:
            k.validate(d)
        return k

    def _grow(self, extra: int):
        n = self.alpha_.shape[0]
        S = np.zeros((n + extra, self.n_features_in_))
        S[:n] = self.support_
        a = np.zeros(n + extra)
        a[:n] = self.alpha_
        return S, a, n

    def _play(self, spec, ospec, Z, a_store, a_grad, y, etas, W, Xeval):
        """Run the compiled loop on frame-coordinates ``Z`` (T, m, d); commit only if every round is finite."""
        S, alpha, n0 = self._grow(Z.shape[0])
        pred = np.zeros(Xeval.shape[0])
        n, norm2, status = _kernel_ogd_loop(
            spec, ospec, Z, a_store, a_grad, y, etas, W, S, alpha, n0, float(self.norm2_), Xeval, pred,
        )
        if status < 0:
            raise NumericalError(
                f"kernel OGD produced a non-finite coefficient at round {self.t_ - status}; no round was committed "
                "(lower the step size or the noise level)"
            )
        self.support_, self.alpha_, self.norm2_ = S[:n], alpha[:n], float(norm2)
        self.t_ += Z.shape[0]
        return pred

    @property
    def n_support(self) -> int:
        return int(self.alpha_.shape[0]) if self.is_initialized else 0

    def _predict_frame(self, Xf: np.ndarray, ospec) -> np.ndarray:
        out = np.empty(Xf.shape[0])
        weighted_sums(ospec, self.support_, self.alpha_, self.alpha_.shape[0], np.ascontiguousarray(Xf), out)
        return out


class GaussianNoiseKernelRegression(_KernelOGDBase, NoisyInputLearner):
    """CSS11 Algorithm 2: kernel regression (squared loss) from two noisy copies under known Gaussian noise.

    Each round queries two independent copies ``x~_t, x~'_t`` of the hidden
    instance and one noisy target ``y~_t``; it computes the gradient length
    ``g_t = 2(sum_{i<t} alpha_i k_hat(x~_i, x~'_t) - y~_t)`` with the
    *second* copy, sets ``alpha_t = -eta g_t``, stores the *first* copy as
    support point (the analysis needs the two independent), maintains the
    squared surrogate norm ``r_t`` incrementally and rescales
    ``alpha <- alpha W / sqrt(r_t)`` when ``r_t > W^2`` (docs/math.md, item 8).
    Predictions use the *original* kernel on the stored noisy points,
    ``<w_t, Psi(x)> = sum_i alpha_i k(x~_i, x)``.

    The kernel pair is :class:`nolo.kernels.GaussianSurrogateKernel` (eq. (5);
    diagonal or full ``Sigma`` -- every point is rotated to the noise
    eigenframe, predictions are rotation invariant; ``2 max sigma_i^2 < s^2``
    strictly, E13) or :class:`nolo.kernels.radial.RadialKernelApproximation`
    (appendix E, ``sigma^2`` read as the variance, E12).

    Parameters
    ----------
    kernel : SurrogateKernelPair
        The (original, surrogate) pair; its noise parameters are the known noise law.
    W : float
        ``W > 0``, the bound on the surrogate-RKHS norm (``r_t <= W^2``).
    step : float, StepRule or None
        Step sizes; ``None`` gives ``eta = W / sqrt(G T)`` with
        ``G = 8 R^2 (W^2 R^2 + B_y^2)`` -- Theorem 3's step with the cross term
        the proof drops restored (docs/math.md, item 8, E10), ``R^2`` the bound
        on ``k_hat(x, x)`` (``R_{Sigma,s,d}^2``, or ``exp(2 sigma^2 c)`` by Lemma 7).
    y_bound : float or None
        ``B_y`` with ``E y~^2 <= B_y^2`` (theory step only).
    horizon : int or None
        ``T`` (theory step only).
    seed : seed-like
        Unused (the algorithm is deterministic given the copies); kept for the contract.

    State: ``support_`` (stored first copies, in the kernel's frame),
    ``alpha_``, ``norm2_`` (``r_t``), ``t_``.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.kernels import GaussianSurrogateKernel
    >>> from nolo.learners.kernel.gaussian_noise import GaussianNoiseKernelRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(400, 2))
    >>> y = np.sin(2 * X[:, 0]) + X[:, 1]
    >>> copies = X[:, None, :] + 0.3 * rng.normal(size=(400, 2, 2))  # two copies, noise variance 0.09
    >>> A = GaussianNoiseKernelRegression(kernel=GaussianSurrogateKernel(width=2.0, noise_cov=0.09), W=3.0, step=0.05)
    >>> A.learn_stream(copies, y)
    >>> A.n_support, round(float(np.mean((A.predict(X) - y) ** 2)), 3)  # Var(y) = 0.826
    (400, 0.028)
    """

    copies_per_round = 2

    def __init__(self, kernel=None, W=1.0, step=None, y_bound=None, horizon=None, seed=None):
        self.kernel = kernel
        self.W = W
        self.step = step
        self.y_bound = y_bound
        self.horizon = horizon
        self.seed = seed

    def _validate_params(self) -> None:
        self._check_kernel(self.n_features_in_ if self.is_initialized else None)
        check_scalar(self.W, "W", low=0.0, low_inclusive=False)
        if self.step is None:
            if self.y_bound is None or self.horizon is None:
                raise ParameterError(
                    "step=None selects the theory step W/sqrt(G T), which needs y_bound and horizon; "
                    "give them or an explicit step"
                )
        else:
            check_step(self.step)
        if self.y_bound is not None:  # checked even when unused
            check_scalar(self.y_bound, "y_bound", low=0.0)
        if self.horizon is not None:
            check_int(self.horizon, "horizon", low=1)
        check_seed(self.seed)

    def _init_state(self, n_features: int) -> None:
        self._check_kernel(n_features)
        super()._init_state(n_features)

    def _norm_spec(self):
        return self._check_kernel(self.n_features_in_).spec(self.n_features_in_)  # the surrogate k_hat

    def variance_constant(self, d: int) -> float:
        """``G = 8 R^2 (W^2 R^2 + B_y^2)`` bounding ``E||g_t Psi_hat(x~_t)||^2`` (corrected App. D.2)."""
        R2 = float(self._check_kernel(d).surrogate_norm_bound(d))
        W = float(self.W)
        return 8.0 * R2 * (W * W * R2 + float(self.y_bound) ** 2)

    def step_rule(self, d: int):
        """The step rule in force: the given one, or the theory step ``W / sqrt(G T)``."""
        if self.step is None:
            try:
                G = self.variance_constant(d)
            except OverflowError:
                G = math.inf
            eta = float(self.W) / math.sqrt(G * int(self.horizon)) if math.isfinite(G) else 0.0
            if not (math.isfinite(eta) and eta > 0.0):
                raise ParameterError(
                    f"step=None: the theory step W / sqrt(G * horizon) is not a positive finite number for "
                    f"W={self.W!r}, y_bound={self.y_bound!r}, horizon={self.horizon!r} and this kernel "
                    f"(G = {G!r}); give parameters of moderate size or an explicit step"
                )
            return ConstantStep(eta)
        return check_step(self.step)

    def regret_bound(self, d: int) -> float:
        """``W sqrt(G T)`` for the theory step (Theorem 3 / Theorem 5 with the corrected constant)."""
        return float(self.W) * math.sqrt(self.variance_constant(d) * int(self.horizon))

    def learn(self, oracle, y) -> "GaussianNoiseKernelRegression":
        """One round of Algorithm 2 with two copies from ``oracle`` and the noisy target ``y``."""
        self._validate_params()
        yv = check_scalar(y, "y")
        self._check_oracle_query(oracle)
        copies = oracle.query(2)
        if copies is None:
            raise CopiesExhausted("Algorithm 2 needs 2 noisy copies per round and the oracle refused; round not played")
        copies = check_array(copies, "oracle copies", shape=(2, None))
        self._ensure_initialized(copies.shape[1])
        if copies.shape[1] != self.n_features_in_:
            raise ParameterError(f"copies must have {self.n_features_in_} features, got {copies.shape[1]}")
        self.learn_stream(copies[None], np.array([yv]))
        return self

    def learn_stream(self, copies, y, clean=None) -> np.ndarray | None:
        """Play ``T`` rounds in one compiled loop; ``copies`` (T, m>=2, d), ``y`` (T,).

        With ``clean`` (T, d), returns the played predictors' values
        ``<w_t, Psi(x_t)>`` on the clean instances.  Nothing is committed if a
        round fails.
        """
        self._validate_params()
        arr = check_array(copies, "copies", ndim=3)
        if arr.shape[1] < 2:
            raise ParameterError(f"Algorithm 2 needs 2 copies per round: copies must have shape (T, m>=2, d), got {arr.shape}")
        T, _, d = arr.shape
        yv = check_targets_for_rows(y, T, "copies")
        if self.is_initialized and d != self.n_features_in_:
            raise ParameterError(f"copies must have {self.n_features_in_} features, got {d}")
        k = self._check_kernel(d)
        Xeval = np.zeros((0, d)) if clean is None else check_array(clean, "clean", shape=(T, d))
        self._ensure_initialized(d)
        Z = np.ascontiguousarray(k.frame(arr[:, :2, :]))
        Xf = np.ascontiguousarray(k.frame(Xeval)) if Xeval.shape[0] else Xeval
        etas = np.ascontiguousarray(self.step_rule(d).schedule(self.t_ + 1, T), dtype=np.float64)
        pred = self._play(k.spec(d), k.original_spec(d), Z, 0, 1, yv, etas, float(self.W), Xf)
        return pred if clean is not None else None

    def predict(self, X) -> np.ndarray:
        """``sum_i alpha_i k(x~_i, x)`` with the original kernel, for the rows of the clean ``X``."""
        self._require_initialized()
        X = self._check_X(X)
        k = self._check_kernel(self.n_features_in_)
        return self._predict_frame(k.frame(X), k.original_spec(self.n_features_in_))

    def surrogate_norm2(self) -> float:
        """``||w_hat||^2 = sum_ij alpha_i alpha_j k_hat(x~_i, x~_j)`` recomputed from scratch (checks ``norm2_``)."""
        self._require_initialized()
        spec = self._check_kernel(self.n_features_in_).spec(self.n_features_in_)
        S, a = self.support_, self.alpha_
        return float(sum(a[i] * weighted_sum(spec, S, a, a.shape[0], S[i])
                         for i in range(a.shape[0])))


class KernelOGDRegression(_KernelOGDBase, FullInformationLearner):
    """Kernel OGD for the squared loss with the *original* kernel of a pair, one point per round (baseline).

    ``learn(x, y)``: ``alpha_t = -eta 2(sum_i alpha_i k(x_i, x) - y)``, store
    ``x``, project on ``||w||^2 <= W^2`` in the RKHS of ``k``.  Fed a noisy copy
    it is the naive learner that ignores the noise; fed the clean instance it
    is the clean-data reference of the kernel-noise experiment.  Only the
    pair's original kernel is used (its noise parameters are ignored).

    Parameters
    ----------
    kernel : SurrogateKernelPair
        Only its original kernel ``k`` is used.
    W : float > 0
        Bound on the RKHS norm (``||w||^2 <= W^2``).
    step : float or StepRule
        Step sizes.
    seed : None, int, SeedSequence or Generator
        Unused (deterministic); kept for the learner contract.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.kernels import GaussianSurrogateKernel
    >>> from nolo.learners.kernel.gaussian_noise import KernelOGDRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(400, 2))
    >>> y = np.sin(2 * X[:, 0]) + X[:, 1]
    >>> B = KernelOGDRegression(kernel=GaussianSurrogateKernel(width=2.0), W=3.0, step=0.05)
    >>> B.learn_stream(X, y)  # clean instances: the reference
    >>> round(float(np.mean((B.predict(X) - y) ** 2)), 3)
    0.014
    """

    def __init__(self, kernel=None, W=1.0, step=0.01, seed=None):
        self.kernel = kernel
        self.W = W
        self.step = step
        self.seed = seed

    def _validate_params(self) -> None:
        self._check_kernel(self.n_features_in_ if self.is_initialized else None)
        check_scalar(self.W, "W", low=0.0, low_inclusive=False)
        check_step(self.step)
        check_seed(self.seed)

    def _norm_spec(self):
        return self._check_kernel(self.n_features_in_).original_spec(self.n_features_in_)

    def learn(self, x, y) -> "KernelOGDRegression":
        x = self._check_x(x)
        yv = check_scalar(y, "y")
        self.learn_stream(x[None], np.array([yv]))
        return self

    def learn_stream(self, X, y, clean=None) -> np.ndarray | None:
        """Play the rounds ``(X[i], y[i])``; with ``clean`` (T, d) return the played predictions there."""
        self._validate_params()
        X = check_array(X, "X", ndim=2)
        T, d = X.shape
        yv = check_targets_for_rows(y, T, "X")
        if self.is_initialized and d != self.n_features_in_:
            raise ParameterError(f"X must have {self.n_features_in_} features, got {d}")
        k = self._check_kernel(d)
        Xeval = np.zeros((0, d)) if clean is None else check_array(clean, "clean", shape=(T, d))
        self._ensure_initialized(d)
        etas = np.ascontiguousarray(check_step(self.step).schedule(self.t_ + 1, T), dtype=np.float64)
        ospec = k.original_spec(d)
        pred = self._play(ospec, ospec, np.ascontiguousarray(X[:, None, :]), 0, 0, yv, etas, float(self.W),
                          np.ascontiguousarray(Xeval))
        return pred if clean is not None else None

    def predict(self, X) -> np.ndarray:
        """``sum_i alpha_i k(x_i, x)`` for the rows of ``X``."""
        self._require_initialized()
        X = self._check_X(X)
        return self._predict_frame(X, self._check_kernel(self.n_features_in_).original_spec(self.n_features_in_))
