"""The one compiled projected gradient step of nolo (OCO notes, lecture 14, section 3).

Every projected online gradient descent in nolo -- :class:`nolo.learners.ogd.ProjectedOGD`,
the CSS11 linear learners (:mod:`nolo.learners.linear`) and the CSS11 kernel
learners (:mod:`nolo.learners.css11_kernel`, whose ball lives in an RKHS) --
takes its step and its projection from this module, compiled with numba
(``cache=True``), so the projection is written once:

* :func:`projected_step` ``(w, g, eta, kind, radius, low, high)`` -- in place,
  ``w <- Pi_F(w - eta g)``; returns False (and leaves the unprojected, non-finite
  step in ``w``) if ``w - eta g`` is not finite, so a caller can refuse to commit;
* :func:`project_inplace` -- ``w <- Pi_F(w)`` for the set coded by ``(kind, radius, low, high)``;
* :func:`ball_scale` -- the factor ``min(1, R / ||w||)`` of the ball projection
  from the *squared* norm (the form fused loops and RKHS learners use, where
  ``||w||^2`` is kept incrementally), together with the projected squared norm.

A constraint set gives its code with :meth:`nolo.oco.ConstraintSet.compiled_spec`
(``L2Ball``: ``BALL``; ``Box``: ``BOX``; ``Unconstrained``: ``UNCONSTRAINED``).
A learner built on top (online SVM, lasso, matrix OGD) only needs::

    >>> import numpy as np
    >>> from nolo.oco import L2Ball
    >>> from nolo.oco.projected_step import projected_step
    >>> w = np.zeros(2)
    >>> spec = L2Ball(1.0).compiled_spec(2)
    >>> projected_step(w, np.array([-3.0, -4.0]), 1.0, *spec)   # w - g = (3, 4), projected on the unit ball
    True
    >>> w
    array([0.6, 0.8])
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["UNCONSTRAINED", "BALL", "BOX", "projected_step", "project_inplace", "ball_scale"]

#: projection codes of the compiled step (``ConstraintSet.compiled_spec(d)[0]``)
UNCONSTRAINED, BALL, BOX = 0, 1, 2


@njit(cache=True)
def project_inplace(w, kind, radius, low, high):
    """Euclidean projection of ``w`` onto the set coded by ``(kind, radius, low, high)``, in place.

    ``BALL``: ``w <- w * radius / ||w||`` when ``||w|| > radius``; ``BOX``:
    clip every coordinate to ``[low_j, high_j]``; ``UNCONSTRAINED``: nothing.
    """
    d = w.shape[0]
    if kind == BALL:
        nrm = 0.0
        for j in range(d):
            nrm += w[j] * w[j]
        nrm = np.sqrt(nrm)
        if nrm > radius:
            scale = radius / nrm
            for j in range(d):
                w[j] *= scale
    elif kind == BOX:
        for j in range(d):
            if w[j] < low[j]:
                w[j] = low[j]
            elif w[j] > high[j]:
                w[j] = high[j]


@njit(cache=True)
def projected_step(w, g, eta, kind, radius, low, high):
    """One projected OGD step in place: ``w <- Pi_F(w - eta * g)``.

    Parameters
    ----------
    w : float64 array (d,)
        The iterate, overwritten with the next one.
    g : float64 array (d,)
        The (sub)gradient or its estimate.
    eta : float
        The step size (any scalar multiplying ``g``).
    kind, radius, low, high
        The constraint set, from ``ConstraintSet.compiled_spec(d)``.

    Returns True if the step ``w - eta g`` was finite (``w`` is then the
    projected iterate); False otherwise (``w`` holds the non-finite step,
    unprojected: the caller must not commit it).
    """
    finite = True
    for j in range(w.shape[0]):
        w[j] -= eta * g[j]
        if not math.isfinite(w[j]):
            finite = False
    if finite:
        project_inplace(w, kind, radius, low, high)
    return finite


@njit(cache=True, inline="always")
def ball_scale(nrm2, radius):
    """``(scale, projected squared norm)`` of the projection on ``{||w|| <= radius}`` from ``nrm2 = ||w||^2``.

    ``scale = radius / sqrt(nrm2)`` and ``radius^2`` when ``nrm2 > radius^2``,
    otherwise ``1.0`` and ``nrm2`` (multiply ``w`` -- or a kernel expansion's
    coefficients -- by ``scale`` when it is not 1).
    """
    if nrm2 > radius * radius:
        return radius / math.sqrt(nrm2), radius * radius
    return 1.0, nrm2
