"""Losses of one real argument with the Taylor series of their derivative (CSS10 sections 2, 4.2).

``get_loss(name, **params)`` builds one by name: "squared", "exponential",
"logistic", "smoothed_hinge", "smoothed_absolute", "hinge", "absolute".
"""

from __future__ import annotations

from nolo.losses.base import KINDS, Loss, NoSeriesError
from nolo.losses.exponential import Exponential
from nolo.losses.logistic import Logistic
from nolo.losses.nonsmooth import Absolute, Hinge
from nolo.losses.registry import LOSSES, available_losses, get_loss
from nolo.losses.smoothed import SmoothedAbsolute, SmoothedHinge, ierfc
from nolo.losses.squared import Squared

__all__ = [
    "KINDS",
    "LOSSES",
    "Absolute",
    "Exponential",
    "Hinge",
    "Logistic",
    "Loss",
    "NoSeriesError",
    "SmoothedAbsolute",
    "SmoothedHinge",
    "Squared",
    "available_losses",
    "get_loss",
    "ierfc",
]
