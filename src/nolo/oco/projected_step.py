"""The one compiled projected gradient step of nolo (OCO notes, lecture 14, section 3).

Every projected online gradient descent in nolo -- :class:`nolo.learners.ogd.ProjectedOGD`,
the OCO notes' examples (:mod:`nolo.learners.convex`: online SVM, ridge, the
two lassos), the CSS11 linear learners (:mod:`nolo.learners.linear`) and the kernel
learners (:mod:`nolo.learners.kernel.gaussian_noise`, :mod:`nolo.learners.kernel`, whose ball
lives in an RKHS) -- takes its step and its projection from this module, compiled with
numba (``cache=True``), so each projection is written once:

* :func:`composite_step` ``(w, X, i, c, shrink, lam, kind, radius, low, high)`` -- in place,
  ``w <- Pi_F(S_lam(shrink w - c X[i]))`` in one fused pass (``S`` the soft-threshold; the
  gradient step of ``phi(<w, x>) + (l2/2) ||w||^2`` with ``c = eta phi'``, ``shrink =
  1 - eta l2``, and the proximal step of ``lam = eta l1`` times ``||.||_1``); returns False
  (the caller must not commit) if the step is not finite; built from the scalar
  :func:`prox_coordinate` (soft-threshold and box clip of one coordinate), :func:`ball_scale`
  and :func:`project_l1_inplace`, which a hot stream loop may compose inline instead of calling it;
* :func:`projected_step` ``(w, g, eta, kind, radius, low, high)`` -- ``w <- Pi_F(w - eta g)``,
  the composite step with ``shrink = 1``, ``lam = 0``;
* :func:`project_inplace` -- ``w <- Pi_F(w)`` for the set coded by ``(kind, radius, low, high)``;
* :func:`ball_scale` -- the factor ``min(1, R / ||w||)`` of the ball projection
  from the *squared* norm (the form fused loops and RKHS learners use, where
  ``||w||^2`` is kept incrementally), together with the projected squared norm;
  :func:`ball_log_scale` is the same projection for an expansion stored as
  ``exp(log_scale) * coef`` with the bound given on the squared norm (the CSS10 kernel learners);
* :func:`project_l1_inplace`, :func:`l1_threshold` -- the exact ``O(d log d)`` L1-ball
  projection (Duchi, Shalev-Shwartz, Singer & Chandra, ICML 2008, Figure 1).

A constraint set gives its code with :meth:`nolo.oco.ConstraintSet.compiled_spec`
(``L2Ball``: ``BALL``; ``Box``: ``BOX``; ``L1Ball``: ``L1_BALL``; ``Unconstrained``:
``UNCONSTRAINED``).  A learner built on top only needs::

    >>> import numpy as np
    >>> from nolo.oco import L2Ball
    >>> from nolo.oco.projected_step import projected_step
    >>> w = np.zeros(2)
    >>> spec = L2Ball(1.0).compiled_spec(2)
    >>> projected_step(w, np.array([-3.0, -4.0]), 1.0, *spec)   # w - g = (3, 4), projected on the unit ball
    True
    >>> w
    array([0.6, 0.8])

``(S_lam then Pi_F)`` is the exact proximal map of ``lam ||.||_1 + indicator(F)`` for the
sets coded here: separable for a box; for the L2 ball because the ball's indicator is a
nondecreasing function of ``||.||_2`` (Yu, "On decomposing the proximal map", NeurIPS
2013); for the L1 ball because both are soft-thresholds (``S_theta S_lam = S_{theta+lam}``).
"""

from __future__ import annotations

import math

import numpy as np

from nolo._jit import njit

__all__ = [
    "UNCONSTRAINED",
    "BALL",
    "BOX",
    "L1_BALL",
    "check_set_code",
    "composite_step",
    "prox_coordinate",
    "overflowed_norm_step",
    "projected_step",
    "project_inplace",
    "project_l1_inplace",
    "l1_threshold",
    "ball_scale",
    "ball_log_scale",
]

#: projection codes of the compiled step (``ConstraintSet.compiled_spec(d)[0]``)
UNCONSTRAINED, BALL, BOX, L1_BALL = 0, 1, 2, 3


@njit(cache=True, inline="always")
def check_set_code(kind):
    """Raise ValueError for a projection code other than the four above.

    The step's branches test for ``BALL``, ``BOX`` and ``L1_BALL`` and let every other value through
    unprojected, so without this check a mistyped code would silently mean "unconstrained".
    """
    if kind != UNCONSTRAINED and kind != BALL and kind != BOX and kind != L1_BALL:
        raise ValueError("unknown projection code: must be UNCONSTRAINED, BALL, BOX or L1_BALL "
                         "(nolo.oco.projected_step)")


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


def ball_log_scale(sqnorm: float, bound_sq: float) -> tuple[float, float]:
    """:func:`ball_scale` for ``w = exp(log_scale) * sum_i coef_i k(s_i, .)``, the ball given as ``||w||^2 <= bound_sq``.

    Returns ``(log of the scale, projected squared norm)``: ``(0.5 (log bound_sq -
    log sqnorm), bound_sq)`` when ``sqnorm > bound_sq``, else ``(0.0, sqnorm)``.  The
    projection onto the RKHS ball is a global rescaling of the expansion, so a learner
    keeping its weights as a log-scale times coefficients adds the first value to its
    log-scale (CSS10 Algorithm 1 with erratum E2, and the kernel OGD baselines).  The
    same projection as :func:`ball_scale` with ``radius = sqrt(bound_sq)``, computed in
    the log domain so that the scale never underflows over long runs (Python, not
    compiled: its callers are per-round Python code).

    >>> ball_log_scale(16.0, 4.0)   # ||w|| = 4 onto the ball of radius 2: halve w
    (-0.6931471805599453, 4.0)
    >>> ball_log_scale(1.0, 4.0)
    (0.0, 1.0)
    """
    if sqnorm > bound_sq:
        return 0.5 * (math.log(bound_sq) - math.log(sqnorm)), bound_sq
    return 0.0, sqnorm


@njit(cache=True)
def l1_threshold(a, z):
    """The ``theta >= 0`` with ``sum_j max(a_j - theta, 0) = z`` for ``a >= 0`` with ``sum a > z > 0``.

    Duchi et al. (2008), Figure 1: sort ``mu = sort(a)`` decreasingly,
    ``rho = max{j : mu_j - (sum_{r<=j} mu_r - z)/j > 0}``,
    ``theta = (sum_{r<=rho} mu_r - z)/rho``.  ``O(d log d)``.
    """
    mu = np.sort(a)[::-1]
    css = 0.0
    theta = 0.0
    for j in range(mu.shape[0]):
        css += mu[j]
        t = (css - z) / (j + 1)
        if mu[j] - t > 0.0:
            theta = t
    return theta


@njit(cache=True)
def project_l1_inplace(w, radius):
    """Project ``w`` onto the L1 ball ``{||w||_1 <= radius}``, in place (Duchi et al. 2008, Fig. 1)."""
    d = w.shape[0]
    s = 0.0
    for j in range(d):
        s += abs(w[j])
    if s <= radius:
        return
    a = np.empty(d)
    for j in range(d):
        a[j] = abs(w[j])
    theta = l1_threshold(a, radius)
    for j in range(d):
        v = a[j] - theta
        w[j] = math.copysign(v, w[j]) if v > 0.0 else 0.0


@njit(cache=True, inline="always")
def prox_coordinate(v, lam, kind, lo, hi):
    """One coordinate of the composite step: the soft-threshold ``S_lam(v)`` (``lam > 0``), then the box clip (``BOX``).

    Scalar and inlined, so a fused loop (e.g. the OCO examples' stream loop) runs the
    shared step coordinate by coordinate at no cost.
    """
    if lam > 0.0:
        if v > lam:
            v -= lam
        elif v < -lam:
            v += lam
        else:
            v = 0.0
    if kind == BOX:
        if v < lo:
            v = lo
        elif v > hi:
            v = hi
    return v


@njit(cache=True)
def overflowed_norm_step(w, kind, radius):
    """The rare path of a step whose squared norm is not finite: False if an entry of ``w`` is not finite;
    otherwise (finite entries whose squares overflow float64) project ``w`` without forming ``||w||^2``
    (the ball: scale by ``radius / ||w||`` computed as ``max|w| ||w / max|w| ||``) and return True."""
    check_set_code(kind)
    big = 0.0
    for j in range(w.shape[0]):
        if not math.isfinite(w[j]):
            return False
        big = max(big, abs(w[j]))
    if kind == BALL:
        s = 0.0
        for j in range(w.shape[0]):
            s += (w[j] / big) * (w[j] / big)
        scale = (radius / big) / math.sqrt(s)
        if scale < 1.0:
            for j in range(w.shape[0]):
                w[j] *= scale
    elif kind == L1_BALL:
        project_l1_inplace(w, radius)
    return True


@njit(cache=True)
def project_inplace(w, kind, radius, low, high):
    """Euclidean projection of ``w`` onto the set coded by ``(kind, radius, low, high)``, in place.

    ``BALL``: ``w <- w * radius / ||w||`` when ``||w|| > radius`` (:func:`ball_scale`);
    ``BOX``: clip every coordinate to ``[low_j, high_j]``; ``L1_BALL``:
    :func:`project_l1_inplace`; ``UNCONSTRAINED``: nothing.
    """
    composite_step(w, w.reshape((1, w.shape[0])), 0, 0.0, 1.0, 0.0, kind, radius, low, high)


@njit(cache=True)
def composite_step(w, X, i, c, shrink, lam, kind, radius, low, high):
    """One projected (composite) gradient step in place: ``w <- Pi_F(S_lam(shrink * w - c * X[i]))``.

    Parameters
    ----------
    w : float64 array (d,)
        The iterate, overwritten with the next one.
    X, i : float64 array (n, d), int
        The direction is row ``i`` of ``X`` (a feature vector, or a whole gradient with ``c = eta``);
        passing the row by index keeps a stream loop from allocating a view per round.
    c : float
        Its coefficient (``eta_t phi'(<w, x>, y)`` for a margin loss).
    shrink : float
        ``1 - eta_t l2`` (the gradient of ``(l2/2) ||w||^2``); 1 for none.
    lam : float
        Soft-threshold ``eta_t l1`` (the proximal step of ``l1 ||.||_1``); 0 for none.
    kind, radius, low, high
        The constraint set, from ``ConstraintSet.compiled_spec(d)``.

    One pass computes the step, :func:`prox_coordinate` and the squared norm; a second pass
    runs only when the ball (:func:`ball_scale`) or L1-ball (:func:`project_l1_inplace`)
    projection is active.  Returns True if the step was finite (``w`` is then the projected
    iterate), False otherwise -- including a finite step whose squared norm overflows float64
    (``w`` then holds the unprojected step: do not commit it).

    Stream loops that cannot afford a call per round (numba's inliner makes a function with
    loops ~7-10% slower inside a hot loop, measured on the OCO examples' loop) write the same
    composition of :func:`prox_coordinate`, :func:`ball_scale`, :func:`project_l1_inplace` and :func:`overflowed_norm_step`
    in place of the call (:func:`nolo.learners.convex._loops.linear_ogd_loop`), and are
    tested bitwise against this function.  An unknown ``kind`` raises ValueError (:func:`check_set_code`).
    """
    check_set_code(kind)
    d = w.shape[0]
    nrm2 = 0.0
    for j in range(d):
        v = prox_coordinate(shrink * w[j] - c * X[i, j], lam, kind, low[j], high[j])
        w[j] = v
        nrm2 += v * v
    if not math.isfinite(nrm2):
        return overflowed_norm_step(w, kind, radius)
    if kind == BALL:
        scale, _ = ball_scale(nrm2, radius)
        if scale != 1.0:
            for j in range(d):
                w[j] *= scale
    elif kind == L1_BALL:
        project_l1_inplace(w, radius)
    return True


@njit(cache=True)
def projected_step(w, g, eta, kind, radius, low, high):
    """One projected OGD step in place: ``w <- Pi_F(w - eta * g)`` (:func:`composite_step` without shrink or threshold).

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
    return composite_step(w, g.reshape((1, g.shape[0])), 0, eta, 1.0, 0.0, kind, radius, low, high)
