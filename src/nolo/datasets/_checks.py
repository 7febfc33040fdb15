"""Argument checks shared by the dataset loaders: paths, flags and real-valued arrays (ParameterError naming the parameter)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from nolo.exceptions import ParameterError

__all__ = ["check_path", "check_flag", "check_real"]


def check_path(value, name: str) -> Path:
    """``value`` as a Path: a str or os.PathLike (not bytes, numbers or None)."""
    if isinstance(value, (bytes, bytearray)) or not isinstance(value, (str, os.PathLike)):
        raise ParameterError(f"{name} must be a path (str or os.PathLike), got {value!r} of type {type(value).__name__}")
    if isinstance(value, str) and not value.strip():
        raise ParameterError(f"{name} must be a non-empty path, got {value!r}")
    return Path(value)


def check_flag(value, name: str) -> bool:
    """A real bool (numpy bools too); "yes", 1 or None are rejected rather than read as truthy."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ParameterError(f"{name} must be True or False, got {value!r} of type {type(value).__name__}")


def check_real(value, name: str):
    """Reject complex input (it would be cast to its real part with only a ComplexWarning); return it unchanged."""
    if np.iscomplexobj(value):
        raise ParameterError(f"{name} must hold real numbers, got complex values")
    return value
