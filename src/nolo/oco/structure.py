"""How a loss depends on the margin, probed numerically (so any scaling of a loss is recognised).

* :func:`quadratic_coefficients` -- per-example ``(a, b, c)`` with
  ``loss(m, y_i) = a_i m^2 + b_i m + c_i`` (the squared loss of either kind), or None;
* :func:`vertex_form` -- the same as ``a_i (m - r_i)^2 + e_i``, the vertex refined
  by a second probe so that ``r_i`` is accurate to rounding;
* :func:`affine_pieces` -- per-example two affine pieces whose maximum is the
  loss (hinge, absolute), or None;
* :func:`loss_structure` -- ``"quadratic"``, ``"piecewise_linear"`` or ``"smooth"``.

The probes check the claimed form at several further margins (relative
tolerance 1e-9 for quadratics, 1e-12 for the pieces); a loss that fails is
treated as a general smooth convex loss.
"""

from __future__ import annotations

import numpy as np

__all__ = ["quadratic_coefficients", "vertex_form", "affine_pieces", "loss_structure"]


def loss_structure(loss, y) -> str:
    """``"quadratic"``, ``"piecewise_linear"`` or ``"smooth"``: how the loss depends on the margin (probed)."""
    if quadratic_coefficients(loss, y) is not None:
        return "quadratic"
    if affine_pieces(loss, y) is not None:
        return "piecewise_linear"
    return "smooth"


def quadratic_coefficients(loss, y):
    """Per-example (a, b, c) with loss(m, y_i) = a_i m^2 + b_i m + c_i exactly, or None."""
    q0, qp, qm = (np.asarray(loss.loss(np.full(y.shape, m), y), dtype=np.float64) for m in (0.0, 1.0, -1.0))
    c = q0
    a = 0.5 * (qp + qm) - c
    b = 0.5 * (qp - qm)
    for m in (2.5, -0.7, 7.0):
        q = np.asarray(loss.loss(np.full(y.shape, m), y), dtype=np.float64)
        if not np.allclose(q, a * m * m + b * m + c, rtol=1e-9, atol=1e-9):
            return None
    if np.any(a < -1e-12):
        return None
    return np.maximum(a, 0.0), b, c


_PL_FAR = 50.0
_PL_PROBES = (-7.0, -2.0, -1.0, -0.5, -0.1, 0.0, 0.1, 0.5, 0.9, 1.0, 1.1, 1.5, 2.0, 7.0)


def affine_pieces(loss, y):
    """Per-example affine pieces (slopes (n,2), intercepts (n,2)) with loss = max of them, or None."""
    s = y if loss.kind == "classification" else np.ones_like(y)
    o = np.zeros_like(y) if loss.kind == "classification" else y

    def margin(z):  # the margin at which the loss's argument (y m, or m - y) equals z
        return z * s + o

    slopes, intercepts = [], []
    for z in (-_PL_FAR, _PL_FAR):
        m = margin(np.full(y.shape, z))
        v = np.asarray(loss.loss(m, y), dtype=np.float64)
        g = np.asarray(loss.grad_margin(m, y), dtype=np.float64)
        slopes.append(g)
        intercepts.append(v - g * m)
    A, Bc = np.stack(slopes, axis=1), np.stack(intercepts, axis=1)
    for z in _PL_PROBES:
        m = margin(np.full(y.shape, z))
        v = np.asarray(loss.loss(m, y), dtype=np.float64)
        model = np.max(A * m[:, None] + Bc, axis=1)
        if not np.allclose(v, model, rtol=1e-12, atol=1e-12):
            return None
    return A, Bc


def vertex_form(loss, y, coeffs):
    """``(a, r, e)`` with ``loss(m, y_i) = a_i (m - r_i)^2 + e_i``, for quadratic losses with every ``a_i > 0``; else None."""
    a, b, _ = coeffs
    if np.any(a <= 0):
        return None
    r = -b / (2.0 * a)
    # refine about the vertex, where the probes are O(a) instead of O(a r^2) and so lose no digits:
    # q(r + 1) - q(r - 1) = 4 a (r - r_true),  q(r + 1) + q(r - 1) - 2 q(r) = 2 a  (exact for a quadratic)
    for _ in range(2):
        qp, qm, q0 = (np.asarray(loss.loss(r + h, y), dtype=np.float64) for h in (1.0, -1.0, 0.0))
        a = 0.5 * (qp + qm) - q0
        if np.any(a <= 0):
            return None
        r = r - (qp - qm) / (4.0 * a)
    e = np.asarray(loss.loss(r, y), dtype=np.float64)
    return a, r, e
