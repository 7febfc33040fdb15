"""The OCO notes' linear examples: online linear SVM and regularised linear prediction (ridge, lasso).

OCO notes (Cornell CS 6783, lecture 14), section 2 "Examples":

* *Online linear SVM*: ``l(f, (x, y)) = max{0, 1 - y f^T x}`` over
  ``F = {f : ||f||_2 <= R}`` -- "feel free to change hinge loss to any convex
  loss ... [or] the constraint" (:class:`OnlineLinearSVM`);
* *Regularized linear prediction*: ``l(f, (x, y)) = phi(f^T x, y) + R(f)``,
  e.g. online ridge regression (:class:`OnlineRidgeRegression`) and online
  lasso, either in its penalised form with a proximal (soft-thresholding)
  step (:class:`OnlineLasso`) or in its constrained form, OGD on an L1 ball
  with the exact projection of Duchi et al. 2008 (:class:`OnlineLassoL1Ball`).

All four play projected online gradient descent (notes, section 3)
``f_{t+1} = Pi_F(f_t - eta_t grad_t)`` from ``f_1 = 0`` with the notes' step
``eta = R / (B sqrt(n))`` (Claim 1) for a known horizon, or its anytime form
``eta_t = R / (B sqrt(t))``, where ``R = sup_{f in F} ||f||_2`` and ``B`` bounds
``||grad_t||_2``; :meth:`regret_bound` evaluates the bound of the notes'
proof for the rounds played (see :class:`_LinearOCO`).
"""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.base import FullInformationLearner
from nolo.learners.convex._common import NotesOGDMixin, check_round_target
from nolo.learners.convex._loops import LOSS_CODES, linear_ogd_loop
from nolo.learners.ogd import AveragedLinearPredictor
from nolo.oco.losses_api import check_loss, check_targets
from nolo.oco.projections import Box, ConstraintSet, L1Ball, L2Ball, Unconstrained

__all__ = ["OnlineLinearSVM", "OnlineRidgeRegression", "OnlineLasso", "OnlineLassoL1Ball"]

#: |d phi / d m| <= LIPSCHITZ[name] for the Lipschitz losses (the squared loss is handled separately)
LIPSCHITZ = {"hinge": 1.0, "logistic": 1.0, "smoothed_hinge": 1.0, "absolute": 1.0}


def _radius_of(constraint, d: int) -> float:
    """``sup_{f in F} ||f||_2`` (OGD starts at 0, so this is the notes' R)."""
    if isinstance(constraint, (L2Ball, L1Ball)):
        return float(constraint.radius)
    if isinstance(constraint, Box):
        low, high = constraint.bounds(d)
        return float(np.linalg.norm(np.maximum(np.abs(low), np.abs(high))))
    return math.inf


class _LinearOCO(NotesOGDMixin, AveragedLinearPredictor, FullInformationLearner):
    """Projected (composite) OGD on a linear predictor: the shared machinery of this module's learners.

    Subclasses give ``_spec() -> (loss, constraint, l2, l1)``.  One round
    (:meth:`learn`) and a whole stream (:meth:`learn_stream`) run the same
    compiled loop (:func:`~nolo.learners.convex._loops.linear_ogd_loop`),
    so they agree bitwise.

    State: ``w_`` (the iterate to play next), ``average_`` (mean of the played
    iterates: the online-to-batch predictor, notes section 2.1), ``t_``,
    ``stats_`` = [cumulative played loss, sum ||g_t||^2, sum eta_t ||g_t||^2,
    max ||g_t||^2], ``eta_last_`` (the step of the last round).
    """

    @classmethod
    def _test_params(cls) -> list[dict]:
        """The notes' step from the bounds (needs y_bound for the squared loss) and an explicit step."""
        return [{"y_bound": 1.0, "horizon": 30}, {"step": 0.1}]

    # -- parameters ----------------------------------------------------------------------------
    def _spec(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _loss_code(self, loss) -> tuple[int, float]:
        name = getattr(loss, "name", None)
        if name not in LOSS_CODES or type(loss).__module__.split(".")[:2] != ["nolo", "losses"]:
            raise ParameterError(
                f"loss must be one of {', '.join(map(repr, LOSS_CODES))} (a name or the nolo.losses object), "
                f"got {loss!r}"
            )
        return LOSS_CODES[name], float(getattr(loss, "s", 1.0))

    def _validate_common(self) -> None:
        loss, constraint, l2, l1 = self._spec()
        self._loss_code(loss)
        if not isinstance(constraint, (L2Ball, L1Ball, Box, Unconstrained)):
            raise ParameterError(
                f"constraint must be an L2Ball, L1Ball, Box (nolo.oco) or None, got {constraint!r}"
            )
        constraint._validate_params()
        if isinstance(constraint, Box):
            low, high = constraint.bounds()
            if np.any(low > 0) or np.any(high < 0):
                raise ParameterError("the box must contain 0 (low <= 0 <= high): OGD starts at f_1 = 0")
        check_scalar(self.x_bound, "x_bound", low=0.0, low_inclusive=False)
        if self.step is None and isinstance(constraint, Unconstrained):
            raise ParameterError("step=None (the notes' R/(B sqrt T)) needs a bounded constraint; give a step")
        self._validate_step_params(loss.name, "2 (R x_bound + y_bound) x_bound")

    def _validate_params(self) -> None:
        self._validate_common()

    # -- the notes' constants --------------------------------------------------------------------
    def comparator_radius(self, n_features: int | None = None) -> float:
        """``R = sup_{f in F} ||f - f_1||_2`` with ``f_1 = 0`` (the notes' ``R``)."""
        _, constraint, _, _ = self._spec()
        d = n_features or getattr(self, "n_features_in_", None) or 1
        return _radius_of(constraint, d)

    def diameter(self, n_features: int | None = None) -> float:
        """``D = sup_{f, g in F} ||f - g||_2`` (for the anytime bound)."""
        _, constraint, _, _ = self._spec()
        d = n_features or getattr(self, "n_features_in_", None) or 1
        return float(constraint.diameter(d))

    def gradient_bound(self, n_features: int | None = None) -> float:
        """``B >= ||phi'(<f, x>, y) x + l2 f||_2`` for ``||x|| <= x_bound``, ``|y| <= y_bound``, ``f in F``.

        ``|phi'| <= 1`` for hinge, logistic, smoothed hinge and absolute;
        ``|phi'| = 2|<f, x> - y| <= 2 (R x_bound + y_bound)`` for the squared loss.
        """
        loss, _, l2, _ = self._spec()
        R = self.comparator_radius(n_features)
        xb = float(self.x_bound)
        if loss.name == "squared":
            if self.y_bound is None:
                raise ParameterError("the squared loss's gradient bound needs y_bound")
            lip = 2.0 * (R * xb + float(self.y_bound))
        else:
            lip = LIPSCHITZ[loss.name]
        return lip * xb + float(l2) * R

    # -- state ------------------------------------------------------------------------------------
    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)
        self.average_ = np.zeros(n_features)
        self.stats_ = np.zeros(4)
        self.eta_last_ = 0.0

    @property
    def cumulative_loss_(self) -> float:
        """Sum of the (regularised) losses suffered so far."""
        return float(self.stats_[0])

    def sparsity(self, average: bool = False) -> float:
        """Fraction of exactly-zero coordinates of ``w_`` (or of ``average_``)."""
        self._require_initialized("sparsity")
        w = self.average_ if average else self.w_
        return float(np.count_nonzero(w == 0.0)) / w.shape[0]

    # -- learning -----------------------------------------------------------------------------------
    def _plan(self):
        """The validated, compiled-loop form of the parameters, cached until a parameter changes.

        Returns ``(kind, rule, code, s, set_code, radius, low, high, l2, l1)``.  The cache key
        freezes every parameter (nested configurables by their attributes), so ``set_params`` or
        an edited constraint invalidates it; per-round :meth:`learn` then skips re-validation.
        """
        params = {k: v for k, v in vars(self).items() if not k.startswith("_") and not k.endswith("_")}
        key = (_freeze(params), getattr(self, "n_features_in_", None))
        cache = self.__dict__.get("_plan_cache")
        if cache is not None and cache[0] == key:
            return cache[1]
        self._validate_params()
        loss, constraint, l2, l1 = self._spec()
        code, s = self._loss_code(loss)
        set_code, radius, low, high = constraint.compiled_spec(self.n_features_in_)
        plan = (loss.kind, self.step_rule(), code, s, set_code, radius, low, high, float(l2), float(l1))
        self.__dict__["_plan_cache"] = (key, plan)
        return plan

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_plan_cache", None)
        return state

    def _run(self, X: np.ndarray, y: np.ndarray, plan=None) -> np.ndarray:
        _, rule, code, s, set_code, radius, low, high, l2, l1 = self._plan() if plan is None else plan
        n = X.shape[0]
        etas = np.ascontiguousarray(rule._eta(np.arange(self.t_ + 1, self.t_ + 1 + n, dtype=np.float64)),
                                    dtype=np.float64)
        w, avg, acc = self.w_.copy(), self.average_.copy(), self.stats_.copy()
        played = np.empty(n)
        status = linear_ogd_loop(np.ascontiguousarray(X), np.ascontiguousarray(y), etas, w, avg, int(self.t_), code, s,
                                 set_code, radius, low, high, l2, l1, played, acc)
        if status < 0:
            raise NumericalError(
                f"a loss or the iterate became non-finite at round {self.t_ - status}; no round was committed "
                "(lower the step size or rescale the data)"
            )
        self.w_, self.average_, self.stats_ = w, avg, acc
        if n:
            self.eta_last_ = float(etas[-1])
        self.t_ += n
        return played

    def learn(self, x, y) -> "_LinearOCO":
        """One round: suffer ``phi(<f_t, x>, y) + R(f_t)`` and take the (projected, proximal) gradient step."""
        if not self.is_initialized:
            self._validate_params()
            x = self._check_x(x)
            check_targets(y, self._spec()[0].kind, "y", n=1)
            self._ensure_initialized(x.shape[0])
        plan = self._plan()
        x = _fast_vector(x, self.n_features_in_)
        yv = check_round_target(y, plan[0])
        self._run(x[None, :], yv, plan)
        return self

    def learn_stream(self, X, y) -> np.ndarray:
        """Play the rounds ``(X[t], y[t])`` in order in one compiled loop; returns the losses suffered.

        Bitwise the same state as calling :meth:`learn` row by row; nothing is
        committed if a value becomes non-finite.
        """
        self._validate_params()
        X = self._check_X(X)
        y = check_targets(y, self._spec()[0].kind, "y", n=X.shape[0])
        self._ensure_initialized(X.shape[1])
        return self._run(X, y)


def _freeze(value):
    """A hashable snapshot of a parameter value (nested configurables by their attributes)."""
    if isinstance(value, dict):
        return tuple((k, _freeze(v)) for k, v in value.items())
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if hasattr(value, "get_params"):
        return (type(value), _freeze({k: v for k, v in vars(value).items() if not k.startswith("_")}))
    return value


def _fast_vector(x, d: int) -> np.ndarray:
    """``x`` as a finite float64 vector of length ``d`` (the per-round check; ParameterError names ``x``)."""
    try:
        complex_ = np.iscomplexobj(x)  # inside the try: a ragged list raises ValueError here already
        arr = None if complex_ else np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"x must be convertible to a float64 array: {exc}") from None
    if complex_:
        raise ParameterError("x must be real, got complex values")
    if arr.ndim != 1:
        raise ParameterError(f"x must have 1 dimension(s), got shape {arr.shape}")
    if arr.shape[0] != d:
        raise ParameterError(f"x must have {d} features, got {arr.shape[0]}")
    if not np.isfinite(arr).all():
        raise ParameterError("x must contain only finite values (no NaN or inf)")
    return arr


class OnlineLinearSVM(_LinearOCO):
    """Online linear SVM by projected online gradient descent (OCO notes, lecture 14, section 2 and Claim 1).

    Plays ``f_t``, suffers ``l(f_t, (x_t, y_t)) = max{0, 1 - y_t f_t^T x_t}`` and
    updates ``f_{t+1} = Pi_F(f_t - eta_t y'_t)`` with ``y'_t`` a subgradient,
    over ``F = {f : ||f||_2 <= R}`` -- or any of the losses and constraints the
    notes allow ("feel free to change hinge loss to any convex loss ... [or]
    the constraint").  With the default step and ``horizon = n`` the regret
    after ``n`` rounds is at most ``R B sqrt(n)`` (Claim 1, linearised by
    section 2.2), ``B = Lip(phi) x_bound``.

    Parameters
    ----------
    loss : str or nolo loss
        ``"hinge"`` (default), ``"logistic"``, ``"smoothed_hinge"``, ``"squared"`` or ``"absolute"``.
    constraint : L2Ball, L1Ball, Box, Unconstrained or None
        ``F``; None means the notes' ``L2Ball(1.0)``.  Must contain 0.
    step : StepRule, float or None
        None: the notes' ``eta = R/(B sqrt(horizon))``, or ``R/(B sqrt(t))`` without a horizon.
    x_bound : float
        ``||x_t||_2 <= x_bound`` (for ``B``).
    y_bound : float or None
        ``|y_t| <= y_bound`` (squared loss only).
    horizon : int or None
        The ``n`` of the notes' step.
    seed : seed-like
        Unused (the algorithm is deterministic); kept for the learner contract.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.convex import OnlineLinearSVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 3)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> svm = OnlineLinearSVM(horizon=500)
    >>> losses = svm.learn_stream(X, y)
    >>> bool(np.linalg.norm(svm.w_) <= 1.0), round(float(svm.regret_bound(worst_case=True)), 6)
    (True, 22.36068)
    >>> float(np.mean(np.sign(svm.predict(X)) == y)) > 0.9
    True
    """

    def __init__(self, loss="hinge", constraint=None, step=None, x_bound=1.0, y_bound=None, horizon=None, seed=None):
        self.loss = loss
        self.constraint = constraint
        self.step = step
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.horizon = horizon
        self.seed = seed

    def _spec(self):
        constraint = L2Ball(1.0) if self.constraint is None else self.constraint
        if not isinstance(constraint, ConstraintSet):
            raise ParameterError(f"constraint must be an L2Ball, L1Ball, Box or None, got {constraint!r}")
        return check_loss(self.loss), constraint, 0.0, 0.0


class _PenalisedLinear(_LinearOCO):
    """The notes' regularised linear prediction ``phi(f^T x, y) + R(f)`` over the L2 ball of ``radius``: one
    constructor and spec for the ridge (``_penalty = "l2"``) and lasso (``"l1"``) learners below."""

    _penalty = "l2"

    def __init__(self, alpha=0.1, radius=1.0, loss="squared", step=None, x_bound=1.0, y_bound=None, horizon=None,
                 seed=None):
        self.alpha = alpha
        self.radius = radius
        self.loss = loss
        self.step = step
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.horizon = horizon
        self.seed = seed

    def _spec(self):
        alpha = check_scalar(self.alpha, "alpha", low=0.0)
        ball = L2Ball(check_scalar(self.radius, "radius", low=0.0, low_inclusive=False))
        return (check_loss(self.loss), ball) + ((alpha, 0.0) if self._penalty == "l2" else (0.0, alpha))


class OnlineRidgeRegression(_PenalisedLinear):
    """Online ridge regression: OGD on ``phi(f^T x, y) + (alpha/2) ||f||_2^2`` over ``||f||_2 <= radius``.

    The notes' "regularized linear prediction" (lecture 14, section 2) with
    ``R(f) = (alpha/2) ||f||^2``; the round's gradient is
    ``phi'(f_t^T x_t, y_t) x_t + alpha f_t`` and the step is projected OGD
    (section 3), so Claim 1 applies with ``B = Lip(phi) x_bound + alpha radius``.

    Parameters
    ----------
    alpha : float >= 0
        The ridge penalty.
    radius : float > 0
        ``F = {f : ||f||_2 <= radius}``.
    loss : str
        ``"squared"`` (default; ``(f^T x - y)^2``) or another loss of :class:`OnlineLinearSVM`.
    step, x_bound, y_bound, horizon, seed :
        As in :class:`OnlineLinearSVM` (``y_bound`` is needed by the default step with the squared loss).

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.convex import OnlineRidgeRegression
    >>> rng = np.random.default_rng(1)
    >>> X = rng.uniform(-0.5, 0.5, (2000, 4)); y = X @ np.array([0.5, -0.5, 0.0, 0.25])
    >>> ridge = OnlineRidgeRegression(alpha=0.01, radius=1.0, step=1.0)
    >>> losses = ridge.learn_stream(X, y)
    >>> np.round(ridge.w_, 1).tolist()
    [0.5, -0.5, -0.0, 0.2]
    """

    _penalty = "l2"


class OnlineLasso(_PenalisedLinear):
    """Online lasso by proximal (soft-thresholding) OGD on ``phi(f^T x, y) + alpha ||f||_1``.

    The notes' regularised linear prediction (lecture 14, section 2) with
    ``R(f) = alpha ||f||_1``, played by the composite step of FOBOS (Duchi &
    Singer, JMLR 2009, eq. (3)-(4)) / COMID (Duchi, Shalev-Shwartz, Singer &
    Tewari, COLT 2010) with the Euclidean distance:

        f_{t+1} = Pi_F( S_{eta_t alpha}( f_t - eta_t phi'(f_t^T x_t, y_t) x_t ) ),

    ``S`` the soft-threshold, ``F = {f : ||f||_2 <= radius}`` (``Pi_F S`` is the
    exact proximal map of ``eta alpha ||.||_1 + 1_F``; Yu 2013).  The
    shrinkage sets coordinates exactly to zero, so the iterate is sparse
    (:meth:`sparsity`).  Regret on ``phi + alpha ||.||_1`` obeys the notes'
    bound with ``g_t`` the gradient of ``phi`` alone (COMID Theorem 2 with
    ``r(f_1) = 0``; see :meth:`regret_bound`).

    Parameters
    ----------
    alpha : float >= 0
        The L1 penalty.
    radius : float > 0
        ``F = {f : ||f||_2 <= radius}`` (keeps the gradients bounded).
    loss, step, x_bound, y_bound, horizon, seed :
        As in :class:`OnlineRidgeRegression`.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.convex import OnlineLasso
    >>> rng = np.random.default_rng(2)
    >>> X = rng.uniform(-1, 1, (4000, 10))
    >>> y = X @ np.r_[1.0, -1.0, np.zeros(8)] + 0.1 * rng.standard_normal(4000)
    >>> lasso = OnlineLasso(alpha=0.2, radius=3.0, step=0.01)
    >>> losses = lasso.learn_stream(X, y)
    >>> np.round(lasso.w_[:2], 2).tolist(), bool(np.abs(lasso.w_[2:]).max() < 0.02)
    ([0.69, -0.66], True)
    """

    _penalty = "l1"


class OnlineLassoL1Ball(_LinearOCO):
    """The constrained online lasso: projected OGD on ``phi(f^T x, y)`` over ``F = {f : ||f||_1 <= radius}``.

    The notes' projected OGD (section 3) with the L1 ball as the "other convex
    constraint" of section 2; the projection is exact and ``O(d log d)``
    (Duchi, Shalev-Shwartz, Singer & Chandra, ICML 2008, Figure 1:
    ``Pi(v) = sign(v) max(|v| - theta, 0)``).  ``sup_F ||f||_2 = radius``, so
    Claim 1 gives regret ``<= radius B sqrt(n)``.

    Parameters
    ----------
    radius : float > 0
        The L1 radius.
    loss, step, x_bound, y_bound, horizon, seed :
        As in :class:`OnlineRidgeRegression`.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.convex import OnlineLassoL1Ball
    >>> rng = np.random.default_rng(3)
    >>> X = rng.uniform(-1, 1, (3000, 8)) / np.sqrt(8)
    >>> y = X @ np.r_[1.0, 0.5, np.zeros(6)]
    >>> lasso = OnlineLassoL1Ball(radius=1.5, y_bound=1.0, horizon=3000)
    >>> losses = lasso.learn_stream(X, y)
    >>> bool(np.abs(lasso.w_).sum() <= 1.5 + 1e-12)
    True
    """

    def __init__(self, radius=1.0, loss="squared", step=None, x_bound=1.0, y_bound=None, horizon=None, seed=None):
        self.radius = radius
        self.loss = loss
        self.step = step
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.horizon = horizon
        self.seed = seed

    def _spec(self):
        return check_loss(self.loss), L1Ball(check_scalar(self.radius, "radius", low=0.0, low_inclusive=False)), 0.0, 0.0
