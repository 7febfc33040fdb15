"""Pieces shared by the kernel learners: loss/kernel/step resolution and label checks."""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_array, check_scalar
from nolo.exceptions import ParameterError


def resolve_loss(loss):
    """A :class:`nolo.losses.Loss` from itself or its name."""
    from nolo.losses import Loss

    if isinstance(loss, Loss):
        return loss
    if isinstance(loss, str):
        from nolo.oco.losses_api import check_loss

        return check_loss(loss, "loss")
    raise ParameterError(f"loss must be a nolo Loss or a loss name (see nolo.losses.available_losses()), got {loss!r}")


def resolve_kernel(kernel, base):
    """A kernel instance of class ``base`` from itself or its name."""
    from nolo.kernels import get_kernel

    k = get_kernel(kernel) if isinstance(kernel, str) else kernel
    if not isinstance(k, base):
        raise ParameterError(f"kernel must be a nolo {base.__name__} or its name, got {kernel!r}")
    k.validate()
    return k


def check_label(loss, y) -> float:
    """``y`` as a float: -1 or +1 for a classification loss, any finite real for a regression loss."""
    yv = check_scalar(y, "y")
    if loss.kind == "classification" and yv not in (-1.0, 1.0):
        raise ParameterError(f"y must be -1 or +1 for the classification loss {loss.name!r}, got {y!r}")
    return yv


def check_oracle(oracle, d: int | None):
    """An object with ``query(n)`` and ``d``; its dimension must match the learner's."""
    from nolo.learners.base import NoisyInputLearner

    NoisyInputLearner._check_oracle_query(oracle)
    od = getattr(oracle, "d", None)
    if not isinstance(od, (int, np.integer)) or od < 1:
        raise ParameterError("oracle must expose its dimension as a positive integer .d")
    if d is not None and int(od) != d:
        raise ParameterError(f"oracle must serve instances with {d} features, got d={od}")
    return int(od)


class CheckedOracle:
    """A user's oracle seen through a check of every answer (CSS10 learners trust no oracle).

    ``query(n)`` passes ``None`` (the oracle refused: a shortfall) through and
    otherwise returns a float64 copy of the answer after checking it is real,
    finite and of shape ``(n, d)``; a bad answer raises :class:`ParameterError`
    naming ``oracle`` before the learner's state is touched.
    """

    __slots__ = ("_oracle", "d")

    def __init__(self, oracle, d: int):
        self._oracle = oracle
        self.d = d

    def query(self, n: int = 1):
        out = self._oracle.query(n)
        if out is None:
            return None
        return check_array(out, f"oracle.query({n}) (noisy copies)", shape=(n, self.d), copy=True)


def check_bound(value, name: str) -> float | None:
    """``None`` or a real number > 0."""
    if value is None:
        return None
    return check_scalar(value, name, low=0.0, low_inclusive=False)


def step_rule(step, eta, name: str = "step"):
    """A :class:`nolo.oco.StepRule` for ``step`` in {"sqrt", "constant"} or a StepRule instance."""
    from nolo.oco import ConstantStep, InverseSqrtStep, StepRule

    if isinstance(step, StepRule):
        step.validate()
        return step
    e = check_scalar(eta, "eta", low=0.0, low_inclusive=False)
    if step == "sqrt":
        return InverseSqrtStep(e)
    if step == "constant":
        return ConstantStep(e)
    raise ParameterError(f"{name} must be 'sqrt', 'constant' or a nolo.oco StepRule, got {step!r}")


def log_add_exp_signed(s1: float, l1: float, s2: float, l2: float) -> tuple[float, float]:
    """(sign, log|.|) of ``s1 e^l1 + s2 e^l2``."""
    if s1 == 0:
        return s2, l2
    if s2 == 0:
        return s1, l1
    m = max(l1, l2)
    v = s1 * math.exp(l1 - m) + s2 * math.exp(l2 - m)
    if v == 0:
        return 0.0, -math.inf
    return math.copysign(1.0, v), m + math.log(abs(v))
