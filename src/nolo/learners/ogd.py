"""Projected online gradient descent, the learner -- OCO notes (Cornell CS 6783, lecture 14), section 3.

The algorithm plays ``w_1 = Pi_F(0)`` and then

    w_{t+1} = Pi_F(w_t - eta_t g_t),

where ``g_t`` is the gradient of the round-``t`` convex loss at ``w_t`` and
``Pi_F`` the Euclidean projection onto the constraint set ``F``.  For a
linear predictor and a margin loss ``l(<w, x_t>, y_t)`` the gradient is
``l'(<w_t, x_t>, y_t) x_t``; :meth:`ProjectedOGD.gradient_step` takes an
arbitrary gradient instead (e.g. the vector ``g_t`` of a linear loss
``f_t(w) = <g_t, w>``, section 2.2 of the notes).

The math lives in :mod:`nolo.oco` (sets, steps, hindsight, regret); every
step here, per round or compiled over a stream, is the one shared compiled
step :func:`nolo.oco.projected_step.projected_step`.

Online-to-batch conversion (notes, section 2.1): after ``n`` rounds on an
i.i.d. sample, the average of the *played* iterates ``(1/n) sum_{t=1}^n w_t``
has expected risk at most ``inf_F L_D + rate_n``.  The learner keeps it as
``average_`` and predicts with it via ``predict(X, average=True)``
(:class:`AveragedLinearPredictor`, shared with the CSS11 linear learners).
"""

from __future__ import annotations

import numpy as np

from nolo._jit import njit
from nolo._validation import check_array, check_seed
from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.base import FullInformationLearner, check_state_sqnorm
from nolo.oco.losses_api import check_loss, check_targets
from nolo.oco.projected_step import projected_step
from nolo.oco.projections import check_constraint
from nolo.oco.steps import check_step
from nolo.oco.structure import quadratic_coefficients, vertex_form

__all__ = ["ProjectedOGD", "AveragedLinearPredictor"]


@njit(cache=True)
def _average_in(avg, w, inv):
    for j in range(w.shape[0]):
        avg[j] += (w[j] - avg[j]) * inv


@njit(cache=True)
def _ogd_linear_kernel(w, avg, t0, G, etas, kind, radius, low, high):
    """Play OGD against the linear losses <G[s], w>; returns (w, avg, played losses, rounds played)."""
    n, d = G.shape
    played = np.empty(n)
    for s in range(n):
        acc = 0.0
        for j in range(d):
            acc += G[s, j] * w[j]
        played[s] = acc
        _average_in(avg, w, 1.0 / (t0 + s + 1))
        if not projected_step(w, G[s], etas[s], kind, radius, low, high):
            return w, avg, played, s
    return w, avg, played, n


@njit(cache=True)
def _ogd_quadratic_kernel(w, avg, t0, X, a, r, e, etas, kind, radius, low, high):
    """Play OGD on the losses a_s (<w, X[s]> - r_s)^2 + e_s; returns (w, avg, played losses, rounds played)."""
    n, d = X.shape
    played = np.empty(n)
    for s in range(n):
        m = 0.0
        for j in range(d):
            m += X[s, j] * w[j]
        u = m - r[s]
        played[s] = a[s] * u * u + e[s]
        coef = etas[s] * 2.0 * a[s] * u
        _average_in(avg, w, 1.0 / (t0 + s + 1))
        if not projected_step(w, X[s], coef, kind, radius, low, high):
            return w, avg, played, s
    return w, avg, played, n


class AveragedLinearPredictor:
    """Mixin for linear learners with state ``w_`` (current iterate) and ``average_`` (mean of the played iterates).

    ``predict(X, average=False)`` gives ``<w, x>`` for the rows of ``X``;
    ``average=True`` uses the online-to-batch predictor (OCO notes, section 2.1).
    Used by :class:`ProjectedOGD` and the CSS11 linear learners.
    """

    def _check_state(self) -> None:
        """A loaded iterate must be one a step can start from: ``||w_||^2`` finite (each round computes the loss
        at ``<w, x>`` and the projection ``||w'||^2``; with an entry beyond ~1e154 every later round overflows), and
        so is the squared norm of ``average_``, a mean of such iterates (``predict(X, average=True)``)."""
        super()._check_state()
        for key in ("w_", "average_"):
            if getattr(self, key, None) is not None:
                check_state_sqnorm(key, getattr(self, key), "the iterate" if key == "w_" else "a mean of iterates")

    def predict(self, X, average: bool = False) -> np.ndarray:
        """``<w, x>`` for the rows of the clean ``X``; ``average=True`` uses the online-to-batch average."""
        self._require_initialized()
        if not isinstance(average, (bool, np.bool_)):
            raise ParameterError(f"average must be True or False, got {average!r}")
        X = self._check_X(X)
        return X @ (self.average_ if average else self.w_)


class ProjectedOGD(AveragedLinearPredictor, FullInformationLearner):
    """Online gradient descent with Euclidean projection (OCO notes, lecture 14, section 3, Claim 1).

    A linear predictor ``x -> <w, x>`` kept in the convex set ``constraint``.
    Each round of :meth:`learn` suffers ``loss(<w_t, x_t>, y_t)`` and updates
    ``w_{t+1} = Pi_F(w_t - eta_t loss'(<w_t, x_t>, y_t) x_t)``.  With
    ``constraint=L2Ball(R)``, linear losses whose gradients have norm ``<= B``
    and ``step=TheoryStep(R, B, T)`` the regret after ``T`` rounds is at most
    ``R B sqrt(T)`` (Claim 1).

    Parameters
    ----------
    loss : loss object or str
        A :mod:`nolo.losses` loss (``kind``, ``loss``, ``grad_margin``) or its name.
    step : StepRule, float or None
        Step sizes ``eta_t`` (a number means :class:`ConstantStep`; None means
        ``InverseSqrtStep(1.0)``).
    constraint : ConstraintSet or None
        The set ``F`` (:class:`L2Ball`, :class:`Box`, :class:`Unconstrained`; None
        means unconstrained).  The first iterate is ``Pi_F(0)`` (0 for a ball).
    seed : seed-like
        Unused by the (deterministic) algorithm; kept for the learner contract.

    State: ``w_`` (the iterate to play next), ``average_`` (mean of the
    iterates played so far, ``w_1`` before any round), ``t_`` (rounds played),
    ``cumulative_loss_`` (sum of the losses suffered in :meth:`learn` and
    :meth:`learn_many`; the linear-loss paths do not add to it).

    The round with an explicit gradient is :meth:`gradient_step` (the name
    ``step`` is taken by the step-rule parameter); :meth:`play_linear` plays a
    whole sequence of linear losses, compiled.

    Examples
    --------
    One round of the squared loss on ``x = (1, 2)``, ``y = 3`` from ``w_1 = 0``:
    ``w_2 = Pi(0 - 0.1 * 2 (0 - 3) x) = Pi((0.6, 1.2))``, projected on the unit ball.

    >>> from nolo.learners import ProjectedOGD
    >>> from nolo.oco import L2Ball
    >>> m = ProjectedOGD(loss="squared", step=0.1, constraint=L2Ball(1.0)).learn([1.0, 2.0], 3.0)
    >>> m.w_.round(4), m.t_
    (array([0.4472, 0.8944]), 1)
    """

    def __init__(self, loss="squared", step=None, constraint=None, seed=None):
        self.loss = loss
        self.step = step
        self.constraint = constraint
        self.seed = seed

    # -- parameters / state ------------------------------------------------------------
    def _validate_params(self) -> None:
        check_loss(self.loss)
        check_step(self.step)
        check_constraint(self.constraint)
        check_seed(self.seed)

    def _init_state(self, n_features: int) -> None:
        constraint = check_constraint(self.constraint, n_features=n_features)
        self.w_ = constraint.project(np.zeros(n_features))
        self.average_ = self.w_.copy()
        self.cumulative_loss_ = 0.0

    def _loss(self):
        return check_loss(self.loss)

    # -- updates ----------------------------------------------------------------------
    def _commit(self, w_new: np.ndarray, loss_value: float = 0.0) -> None:
        """Commit a candidate next iterate (already projected) computed from ``w_``."""
        t = self.t_ + 1
        self.average_ = self.average_ + (self.w_ - self.average_) / t
        self.w_ = w_new
        self.t_ = t
        self.cumulative_loss_ = float(self.cumulative_loss_ + loss_value)

    def _step_to(self, direction: np.ndarray, eta_scale: float, value: float = 0.0) -> None:
        """Commit ``w_{t+1} = Pi_F(w_t - eta_t * eta_scale * direction)`` (parameters already validated)."""
        rule = check_step(self.step)
        eta = float(rule._eta(np.array([self.t_ + 1.0]))[0])
        spec = check_constraint(self.constraint).compiled_spec(self.n_features_in_)
        w_new = self.w_.copy()
        if not projected_step(w_new, np.ascontiguousarray(direction, dtype=np.float64), eta * eta_scale, *spec):
            raise_diverged()
        self._commit(w_new, value)

    def gradient_step(self, gradient) -> "ProjectedOGD":
        """One OGD round with an arbitrary (sub)gradient ``g_t`` of the round's convex loss at ``w_``.

        ``w_{t+1} = Pi_F(w_t - eta_t g_t)`` with ``t = t_ + 1``.  Works for any
        convex loss, e.g. the linear loss ``f_t(w) = <g_t, w>`` of the notes'
        section 2.2 (its gradient is ``g_t``).  Initialises the state from the
        gradient's dimension when called first.
        """
        self._validate_params()
        if not self.is_initialized:
            g = check_array(gradient, "gradient", ndim=1)
            self.initialize(g.shape[0])
        g = self._check_x(gradient, "gradient")
        self._step_to(g, 1.0)
        return self

    def learn(self, x, y) -> "ProjectedOGD":
        """Play ``w_t`` on ``(x, y)``: suffer ``loss(<w_t, x>, y)`` and take the projected gradient step."""
        self._validate_params()
        x = self._check_x(x)
        loss = self._loss()
        if np.ndim(y) != 0:  # one round, one target (check_targets would take [y] as well)
            raise ParameterError(f"y must be a single target (a real number), got {y!r:.80}")
        yv = float(check_targets(y, loss.kind, "y", n=1)[0])
        self._ensure_initialized(x.shape[0])
        margin = _margin(self.w_, x)
        value = float(loss.loss(margin, yv))
        dmargin = float(loss.grad_margin(margin, yv))
        if not (np.isfinite(value) and np.isfinite(dmargin)):
            raise NumericalError(f"loss or its derivative is not finite at margin {margin} (y={yv}); state unchanged")
        self._step_to(x, dmargin, value)
        return self

    def learn_many(self, X, y) -> np.ndarray:
        """Play the rounds ``(X[i], y[i])`` in order; returns the losses suffered (one per round).

        Equivalent to calling :meth:`learn` row by row.  For a loss that is
        quadratic in the margin (the squared loss, recognised by probing it,
        :func:`nolo.oco.structure.vertex_form`) the loop runs compiled (numba)
        on ``a (m - r)^2 + e`` and agrees with :meth:`learn` up to rounding.
        All inputs are checked first; on a numerical failure no round of the
        batch is committed.
        """
        self._validate_params()
        X = self._check_X(X)
        loss = self._loss()
        y = check_targets(y, loss.kind, "y", n=X.shape[0])
        self._ensure_initialized(X.shape[1])
        constraint = check_constraint(self.constraint, n_features=self.n_features_in_)
        etas = check_step(self.step).schedule(self.t_ + 1, X.shape[0])
        spec = constraint.compiled_spec(self.n_features_in_)
        w, avg, t0 = self.w_.copy(), self.average_.copy(), int(self.t_)
        coeffs = quadratic_coefficients(loss, y)
        vertex = vertex_form(loss, y, coeffs) if coeffs is not None else None
        if vertex is not None:
            w, avg, played, done = _ogd_quadratic_kernel(w, avg, t0, np.ascontiguousarray(X), *vertex, etas, *spec)
            if done < X.shape[0]:
                raise_diverged()
        else:
            played = np.empty(X.shape[0])
            for i in range(X.shape[0]):
                x = np.ascontiguousarray(X[i])
                margin = _margin(w, x)
                played[i] = loss.loss(margin, y[i])
                dmargin = float(loss.grad_margin(margin, y[i]))
                avg += (w - avg) / (t0 + i + 1)
                if not projected_step(w, x, etas[i] * dmargin, *spec):
                    raise_diverged()
        if not (np.all(np.isfinite(played)) and np.all(np.isfinite(w)) and np.all(np.isfinite(avg))):
            raise NumericalError("a loss, gradient or iterate became non-finite in learn_many; no round was committed")
        self.w_, self.average_, self.t_ = w, avg, t0 + X.shape[0]
        self.cumulative_loss_ = float(self.cumulative_loss_ + played.sum())
        return played

    def play_linear(self, G) -> np.ndarray:
        """Play the linear losses ``f_t(w) = <G[t], w>`` in order (notes, section 2.2).

        Returns the played losses ``<G[t], w_t>``; each round takes
        ``w_{t+1} = Pi_F(w_t - eta_t G[t])``.  Compiled (numba); equivalent to
        calling :meth:`gradient_step` row by row.
        """
        self._validate_params()
        G0 = check_array(G, "G", ndim=2)
        if not self.is_initialized:
            self.initialize(G0.shape[1])
        G = self._check_X(G0, "G")
        constraint = check_constraint(self.constraint, n_features=self.n_features_in_)
        etas = check_step(self.step).schedule(self.t_ + 1, G.shape[0])
        spec = constraint.compiled_spec(self.n_features_in_)
        w, avg, played, done = _ogd_linear_kernel(
            self.w_.copy(), self.average_.copy(), int(self.t_), np.ascontiguousarray(G), etas, *spec
        )
        if done < G.shape[0] or not (np.all(np.isfinite(played)) and np.all(np.isfinite(w))):
            raise NumericalError("an iterate became non-finite in play_linear; no round was committed")
        self.w_, self.average_, self.t_ = w, avg, self.t_ + G.shape[0]
        return played



def _margin(w: np.ndarray, x: np.ndarray) -> float:
    with np.errstate(over="ignore", invalid="ignore"):
        margin = float(w @ x)
    if not np.isfinite(margin):
        raise NumericalError("the margin <w_t, x_t> overflowed (the iterates diverged); the round was not committed")
    return margin


def raise_diverged() -> None:
    raise NumericalError(
        "the OGD iterate is not finite (the step diverged); the update was not committed. "
        "Lower the step size or constrain the predictor."
    )
