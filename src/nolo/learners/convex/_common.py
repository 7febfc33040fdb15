"""What the OCO notes' example learners share (linear and matrix): the step/bound parameters, the notes' step,
the notes' regret bound for the rounds played, and the per-round target check."""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_int, check_scalar
from nolo.exceptions import ParameterError, PersistenceError
from nolo.oco.losses_api import check_targets
from nolo.oco.regret import notes_regret_bound
from nolo.oco.steps import ConstantStep, InverseSqrtStep, TheoryStep, check_step

__all__ = ["NotesOGDMixin", "check_round_target"]


class NotesOGDMixin:
    """Parameters ``step``, ``y_bound``, ``horizon``; the notes' step and bound (OCO notes, section 3, Claim 1).

    A learner using it defines ``comparator_radius(n_features=None)`` (``R = sup_F ||f - f_1||``),
    ``gradient_bound(n_features=None)`` (``B``), ``diameter()`` and keeps ``t_``, ``eta_last_`` and
    ``stats_`` (``stats_[1] = sum ||g_t||^2``, ``stats_[2] = sum eta_t ||g_t||^2``).
    """

    def _check_state(self) -> None:
        """A loaded run's step statistics must be ones a run can produce: ``eta_last_ >= 0`` and the sums
        ``stats_[1]``, ``stats_[2]`` of ``||g_t||^2`` and ``eta_t ||g_t||^2`` >= 0 (a negative one makes
        :meth:`regret_bound` the square root of a negative number)."""
        super()._check_state()
        if not self.is_initialized:
            return
        if not float(self.eta_last_) >= 0.0:
            raise PersistenceError(f"eta_last_ (the last round's step) must be >= 0, got {self.eta_last_!r}")
        if not (self.stats_[1] >= 0.0 and self.stats_[2] >= 0.0):
            raise PersistenceError("stats_[1] and stats_[2] (sums of ||g_t||^2 and eta_t ||g_t||^2) must be >= 0, "
                                   f"got {self.stats_[1]!r}, {self.stats_[2]!r}")

    def _validate_step_params(self, loss_name: str, gradient_bound: str) -> None:
        """``y_bound``, ``horizon``, ``step``; the default step with the squared loss needs ``y_bound``."""
        if self.y_bound is not None:
            check_scalar(self.y_bound, "y_bound", low=0.0)
        if self.horizon is not None:
            check_int(self.horizon, "horizon", low=1)
        if self.step is None:
            if loss_name == "squared" and self.y_bound is None:
                raise ParameterError(
                    "step=None with the squared loss needs y_bound (|y| <= y_bound) for the gradient bound "
                    f"B = {gradient_bound}; give y_bound or an explicit step"
                )
        else:
            check_step(self.step)

    def step_rule(self, n_features: int | None = None):
        """The step in force: the given one, else the notes' ``TheoryStep(R, B, horizon)``
        (``eta = R/(B sqrt(T))``, Claim 1) or, without a horizon, ``InverseSqrtStep(R/B)``."""
        if self.step is not None:
            return check_step(self.step)
        R, B = self.comparator_radius(n_features), self.gradient_bound(n_features)
        if self.horizon is not None:
            return TheoryStep(R=R, B=B, T=int(self.horizon))
        return InverseSqrtStep(R / B)

    def _bound_diameter(self) -> float:
        """``D`` of the anytime bound: the diameter of ``F`` (the matrix learners add their drift)."""
        return self.diameter()

    def regret_bound(self, worst_case: bool = False) -> float:
        """The notes' regret bound for the rounds played so far (cumulative; divide by ``t_`` for ``Reg_n``).

        ``worst_case=False`` evaluates the proof's bound with the gradients the
        run actually met (``sum ||g_t||^2``); ``True`` replaces every
        ``||g_t||^2`` by ``B^2`` (:meth:`gradient_bound`), which with the
        default step and ``t_ = horizon`` is exactly the notes' ``R B sqrt(n)``.
        See :func:`nolo.oco.regret.notes_regret_bound`.  For the lasso's proximal step the same
        bound holds for ``phi + l1 ||.||_1`` (composite mirror descent, Duchi,
        Shalev-Shwartz, Singer & Tewari 2010, with ``r(f_1) = 0``), ``g_t``
        then being the gradient of ``phi`` only.
        """
        self._require_initialized("regret_bound")
        if self.t_ == 0:
            return 0.0
        rule = self.step_rule()
        constant = isinstance(rule, (ConstantStep, TheoryStep))
        if worst_case:
            B2 = self.gradient_bound() ** 2
            sum_sq, sum_eta_sq = self.t_ * B2, float(rule.schedule(1, int(self.t_)).sum()) * B2
        else:
            sum_sq, sum_eta_sq = float(self.stats_[1]), float(self.stats_[2])
        return notes_regret_bound(R=self.comparator_radius(), D=self._bound_diameter(), etas_constant=constant,
                                  eta_last=float(self.eta_last_), sum_sq=sum_sq, sum_eta_sq=sum_eta_sq)


def check_round_target(y, kind: str) -> np.ndarray:
    """One round's target as a length-1 float64 array (the per-round check; ParameterError names ``y``)."""
    if isinstance(y, (list, tuple)):
        raise ParameterError(f"y must be one real number (this round's target), got a {type(y).__name__}")
    if isinstance(y, (float, int, np.floating, np.integer)) and not isinstance(y, bool):
        v = float(y)
        if math.isfinite(v) and (kind != "classification" or v in (-1.0, 1.0)):
            return np.array([v])
    return check_targets(y, kind, "y", n=1)
