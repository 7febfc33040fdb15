"""Row normalisation as in AM (instances scaled to ||x||_2 = 1, so ||x|| <= 1 holds)."""

from __future__ import annotations

import numpy as np

from nolo._validation import check_array, check_choice
from nolo.datasets._checks import check_flag, check_real

__all__ = ["NORMALIZATIONS", "normalize_rows"]

#: allowed values of the ``normalize`` argument
NORMALIZATIONS = ("unit", None)


def normalize_rows(X, normalize: str | None = "unit", *, copy: bool = True) -> np.ndarray:
    """Return ``X`` as float64 with every nonzero row scaled to unit l2 norm.

    ``normalize=None`` returns the float64 array unchanged.  All-zero rows stay
    zero (their norm is 0 and they already satisfy ||x|| <= 1).  With
    ``copy=False`` a float64 input is scaled in place (saves memory on large sets).
    """
    check_choice(normalize, "normalize", NORMALIZATIONS)
    X = check_array(check_real(X, "X"), "X", ndim=2, copy=check_flag(copy, "copy"))
    if normalize == "unit":
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))  # no n x d temporary
        scale = np.divide(1.0, norms, out=np.ones_like(norms), where=norms > 0)
        X *= scale[:, None]
    return X
