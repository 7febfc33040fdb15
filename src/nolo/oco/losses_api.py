"""The part of the loss interface that the OCO core relies on.

A loss (from :mod:`nolo.losses`, or any object with the same methods) has

* ``kind``: ``"classification"`` (a function of ``y * margin``, ``y in {-1, +1}``)
  or ``"regression"`` (a function of ``margin - y``) -- CSS10 section 2;
* ``loss(margin, y)`` and ``grad_margin(margin, y)`` (derivative in the margin,
  a subgradient where the loss has a kink), elementwise on arrays.

A string is resolved with ``nolo.losses.get_loss(name)``.
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_array
from nolo.exceptions import ParameterError

__all__ = ["check_loss", "check_targets", "KINDS"]

KINDS = ("classification", "regression")


def check_loss(loss, name: str = "loss"):
    """Return a loss object for ``loss`` (an object with kind/loss/grad_margin, or a name for ``get_loss``)."""
    if isinstance(loss, str):
        from nolo.losses import get_loss  # imported lazily: losses is a sibling layer

        try:
            return get_loss(loss)
        except ParameterError as exc:  # get_loss names its own argument ("name"); the user's is ``name`` here
            raise ParameterError(f"{name} must be a nolo loss or a registered loss name ({exc})") from None
    missing = [a for a in ("kind", "loss", "grad_margin") if not hasattr(loss, a)]
    if missing:
        raise ParameterError(
            f"{name} must be a nolo loss (with kind, loss(margin, y), grad_margin(margin, y)) or a loss name, "
            f"got {loss!r} (missing {', '.join(missing)})"
        )
    if loss.kind not in KINDS:
        raise ParameterError(f"{name}.kind must be one of {KINDS}, got {loss.kind!r}")
    return loss


def check_targets(y, kind: str, name: str = "y", n: int | None = None) -> np.ndarray:
    """Targets as a float array of shape (n,) (finite; in {-1, +1} for classification)."""
    arr = check_array(y, name, ndim=(0, 1))
    arr = np.atleast_1d(arr)
    if n is not None and arr.shape[0] != n:
        raise ParameterError(f"{name} must have {n} entries (one per row of X), got {arr.shape[0]}")
    if kind == "classification" and not np.all(np.abs(arr) == 1.0):
        raise ParameterError(f"{name} must be -1 or +1 for a classification loss")
    return arr
