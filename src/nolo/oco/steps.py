"""Step-size rules ``eta_t`` for online gradient descent, called as ``rule(t)`` for rounds t = 1, 2, ...

* :class:`ConstantStep` -- ``eta_t = eta``;
* :class:`InverseSqrtStep` -- ``eta_t = eta0 / sqrt(t)`` (anytime, no horizon needed);
* :class:`TheoryStep` -- the step of the OCO notes' Claim 1, ``eta = R / (B sqrt(T))``
  for a known horizon ``T``, where ``R`` is the radius of the L2 ball ``F``
  (more generally a bound on ``||w_1 - f*||_2`` for every comparator ``f*``;
  for a set other than a ball centred at ``w_1 = 0`` use its diameter) and
  ``B`` bounds the Euclidean norm of every gradient.  With it the notes prove
  (Claim 1, multiplied through by ``n``)::

      sum_t <g_t, w_t> - min_{f in F} sum_t <g_t, f>  <=  R^2/(2 eta) + eta T B^2 / 2  =  R B sqrt(T).

  ``TheoryStep.regret_bound()`` returns that ``R B sqrt(T)``.
"""

from __future__ import annotations

import math

import numpy as np

from nolo._config import Configurable
from nolo._validation import check_int, check_scalar
from nolo.exceptions import ParameterError

__all__ = ["StepRule", "ConstantStep", "InverseSqrtStep", "TheoryStep", "check_step"]


class StepRule(Configurable):
    """A step-size schedule: ``rule(t) -> eta_t > 0`` for integer rounds ``t >= 1``."""

    def _validate_params(self) -> None:  # pragma: no cover - overridden
        """Check the parameters; raise ParameterError naming the bad one (also run by ``set_params``)."""

    def validate(self) -> "StepRule":
        """Run :meth:`_validate_params`; return self."""
        self._validate_params()
        return self

    def _eta(self, t: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, t) -> float:
        t = check_int(t, "t", low=1)
        self.validate()
        return float(self._eta(np.array([t], dtype=np.float64))[0])

    def schedule(self, start: int, n: int) -> np.ndarray:
        """The steps of rounds ``start, start + 1, ..., start + n - 1`` as an array."""
        start = check_int(start, "start", low=1)
        n = check_int(n, "n", low=0)
        self.validate()
        return self._eta(np.arange(start, start + n, dtype=np.float64))


class ConstantStep(StepRule):
    """``eta_t = eta`` for every round."""

    def __init__(self, eta: float = 0.1):
        self.eta = eta

    def _validate_params(self) -> None:
        check_scalar(self.eta, "eta", low=0.0, low_inclusive=False)

    def _eta(self, t):
        return np.full(t.shape, float(self.eta))


class InverseSqrtStep(StepRule):
    """``eta_t = eta0 / sqrt(t)``: the anytime version of the notes' ``R / (B sqrt(n))``."""

    def __init__(self, eta0: float = 1.0):
        self.eta0 = eta0

    def _validate_params(self) -> None:
        check_scalar(self.eta0, "eta0", low=0.0, low_inclusive=False)

    def _eta(self, t):
        return float(self.eta0) / np.sqrt(t)


class TheoryStep(StepRule):
    """The constant step ``eta = R / (B sqrt(T))`` of the OCO notes' Claim 1 (lecture 14, section 3).

    Parameters
    ----------
    R : float > 0
        Radius of the constraint ball ``F = {f : ||f||_2 <= R}`` (OGD starts at
        ``w_1 = 0``, so ``||w_1 - f*|| <= R``).  For another set, pass a bound on
        ``||w_1 - f*||``, e.g. its diameter.
    B : float > 0
        Bound on the Euclidean norm of every (sub)gradient ``g_t``.
    T : int >= 1
        The horizon ``n`` of the notes.  The step is the same constant for every
        round; the guarantee :meth:`regret_bound` is for the first ``T`` rounds.
    """

    def __init__(self, R: float = 1.0, B: float = 1.0, T: int = 1):
        self.R = R
        self.B = B
        self.T = T

    def _validate_params(self) -> None:
        check_scalar(self.R, "R", low=0.0, low_inclusive=False)
        check_scalar(self.B, "B", low=0.0, low_inclusive=False)
        check_int(self.T, "T", low=1)

    def _eta(self, t):
        return np.full(t.shape, float(self.R) / (float(self.B) * math.sqrt(int(self.T))))

    def regret_bound(self) -> float:
        """Claim 1's bound on the cumulative regret over ``T`` rounds of linear losses: ``R B sqrt(T)``."""
        self.validate()
        return float(self.R) * float(self.B) * math.sqrt(int(self.T))


def check_step(step, name: str = "step") -> StepRule:
    """Return a :class:`StepRule` for ``step``: a rule, a positive number (constant step) or None (``1/sqrt(t)``)."""
    if step is None:
        return InverseSqrtStep(1.0)
    if isinstance(step, StepRule):
        step.validate()
        return step
    if isinstance(step, (int, float, np.integer, np.floating)) and not isinstance(step, bool):
        check_scalar(step, name, low=0.0, low_inclusive=False)
        return ConstantStep(float(step))
    raise ParameterError(
        f"{name} must be a nolo.oco StepRule (ConstantStep, InverseSqrtStep, TheoryStep), "
        f"a real number > 0 (constant step) or None (eta0/sqrt(t) with eta0=1), got {step!r}"
    )
