"""Build a loss by name: ``get_loss("smoothed_hinge", s=2.0)``."""

from __future__ import annotations

from nolo._registry import Registry
from nolo.exceptions import ParameterError
from nolo.losses.base import Loss
from nolo.losses.exponential import Exponential
from nolo.losses.logistic import Logistic
from nolo.losses.nonsmooth import Absolute, Hinge
from nolo.losses.smoothed import SmoothedAbsolute, SmoothedHinge
from nolo.losses.squared import Squared

__all__ = ["LOSSES", "available_losses", "get_loss"]

#: name -> loss class (a :class:`nolo._registry.Registry`)
LOSSES = Registry("loss")
for _cls in (Squared, Exponential, Logistic, SmoothedHinge, SmoothedAbsolute, Hinge, Absolute):
    LOSSES.register(_cls.name, _cls)
del _cls


def available_losses() -> list[str]:
    """The names :func:`get_loss` accepts."""
    return list(LOSSES)


def get_loss(name: str | Loss, **params) -> Loss:
    """The loss called ``name`` built with ``params`` (a Loss instance is returned as is, without params)."""
    if isinstance(name, Loss):
        if params:
            raise ParameterError("params cannot be given together with a Loss instance")
        return name
    cls = LOSSES.get(name, "name")
    try:
        return cls(**params)
    except TypeError as exc:
        raise ParameterError(f"bad parameters for loss {name!r}: {exc}") from None
