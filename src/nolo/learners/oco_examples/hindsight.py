"""Certified best-fixed-in-hindsight solvers for the OCO notes' examples that :mod:`nolo.oco.hindsight` lacks.

(Math only: these belong in :mod:`nolo.oco.hindsight`; they live here until the
``oco`` package is reshaped -- see the H6 report.)

Each solver minimises the total loss of the rounds over the comparator class
and returns a :class:`nolo.oco.HindsightSolution` whose ``gap`` is a
**certificate**: an upper bound on ``F(w) - min F`` (so the regret against
the true optimum lies in ``[regret(w), regret(w) + gap]``).

* :func:`composite_hindsight` -- ``sum_t phi(<w, x_t>, y_t) + n (l2/2 ||w||^2 + l1 ||w||_1)`` over an L2 ball or an
  L1 ball, ``phi`` smooth (squared, logistic, smoothed hinge): FISTA (Beck & Teboulle 2009) with the exact
  proximal map and adaptive restart (O'Donoghue & Candes 2015); certificate: the Frank-Wolfe (conditional
  gradient) gap of the composite problem ``<g, w> + h(w) - min_{v in F} (<g, v> + h(v))``, closed form;
* :func:`trace_norm_hindsight` -- ``sum_t (W[x_t] - y_t)^2`` over ``{||W||_* <= tau}``: FISTA with the SVD
  projection; certificate: the Frank-Wolfe gap ``<G, W> + tau sigma_max(G)`` (Jaggi 2013);
* :func:`max_entry_hindsight` -- over the max-entry box, squared or absolute loss: exact (the problem splits
  into one clipped mean or median per cell).
"""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_array, check_choice, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.oco_examples.projections import L1Ball, _project_l1_inplace, project_trace_norm_ball
from nolo.oco.hindsight import HindsightSolution
from nolo.oco.losses_api import check_loss, check_targets
from nolo.oco.projections import L2Ball

__all__ = ["composite_hindsight", "trace_norm_hindsight", "max_entry_hindsight"]

_SMOOTH = {"squared", "logistic", "smoothed_hinge"}


def _fista(fg, prox, gap_fn, w0, L, tol, max_iter, h=lambda w: 0.0):
    """FISTA on ``f + h`` (``fg`` gives f and its gradient, ``prox`` the proximal map of h) with
    function-value restart; stops when the certificate ``gap_fn(w, g)`` <= tol * max(1, |F|)."""
    w = prox(w0, 1.0 / L)
    z, theta = w.copy(), 1.0
    f, g = fg(w)
    best = (w, f, g)
    gap = math.inf
    for _ in range(max_iter):
        fz, gz = fg(z)
        w_new = prox(z - gz / L, 1.0 / L)
        f_new, g_new = fg(w_new)
        if f_new + h(w_new) > f + h(w) and theta > 1.0:  # restart the momentum (O'Donoghue & Candes 2015)
            z, theta = w.copy(), 1.0
            continue
        theta_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * theta * theta))
        z = w_new + ((theta - 1.0) / theta_new) * (w_new - w)
        w, f, g, theta = w_new, f_new, g_new, theta_new
        best = (w, f, g)
        gap = gap_fn(w, g)
        if gap <= tol * max(1.0, abs(f)):
            break
    w, f, g = best
    return w, f, gap_fn(w, g)


def composite_hindsight(X, y, loss, constraint, *, l2: float = 0.0, l1: float = 0.0, tol: float = 1e-9,
                        max_iter: int = 200_000) -> HindsightSolution:
    """``argmin_{w in F} sum_t [phi(<w, x_t>, y_t) + (l2/2) ||w||^2 + l1 ||w||_1]`` with a Frank-Wolfe certificate.

    ``F`` is an :class:`~nolo.oco.L2Ball` or an :class:`L1Ball`; ``phi`` the
    squared, logistic or smoothed hinge loss.  The nonsmooth part
    ``h = n l1 ||.||_1 + 1_F`` enters through its exact proximal map
    (soft-threshold then projection, see :mod:`~nolo.learners.oco_examples._loops`);
    ``min_{v in F} <g, v> + h(v)`` is ``-R ||(|g| - n l1)_+||_2`` on the L2 ball
    of radius R and ``-r max(||g||_inf - n l1, 0)`` on the L1 ball of radius r.
    The smooth part includes ``n (l2/2) ||w||^2``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.eye(2); y = np.array([3.0, 0.5])
    >>> sol = composite_hindsight(X, y, "squared", L2Ball(1.0), l1=0.25)
    >>> sol.w.round(6).tolist(), sol.gap < 1e-8
    ([0.995893, 0.090536], True)
    """
    loss = check_loss(loss)
    if loss.name not in _SMOOTH:
        raise ParameterError(f"loss must be one of {sorted(_SMOOTH)} (smooth), got {loss.name!r}")
    X = check_array(X, "X", ndim=2)
    y = check_targets(y, loss.kind, "y", n=X.shape[0])
    l2 = check_scalar(l2, "l2", low=0.0)
    l1 = check_scalar(l1, "l1", low=0.0)
    if not isinstance(constraint, (L2Ball, L1Ball)):
        raise ParameterError(f"constraint must be an L2Ball or an L1Ball, got {constraint!r}")
    n, d = X.shape
    R = float(constraint.radius)
    lam1, lam2 = n * l1, n * l2

    def fg(w):
        m = X @ w
        val = float(np.sum(loss.loss(m, y))) + 0.5 * lam2 * float(w @ w)
        return val, X.T @ np.asarray(loss.grad_margin(m, y), dtype=np.float64) + lam2 * w

    def h(w):
        return lam1 * float(np.abs(w).sum())

    def prox(v, step):
        u = np.sign(v) * np.maximum(np.abs(v) - step * lam1, 0.0)
        if isinstance(constraint, L2Ball):
            nrm = float(np.linalg.norm(u))
            return u * (R / nrm) if nrm > R else u
        u = np.array(u, copy=True)
        _project_l1_inplace(u, R)
        return u

    def gap_fn(w, g):
        a = np.maximum(np.abs(g) - lam1, 0.0)
        lmo = -R * float(np.linalg.norm(a)) if isinstance(constraint, L2Ball) else -R * float(a.max(initial=0.0))
        return max(0.0, float(g @ w) + h(w) - lmo)

    curv = {"squared": 2.0, "logistic": 0.25, "smoothed_hinge": 0.0}[loss.name]
    if loss.name == "smoothed_hinge":
        curv = float(loss.s) / math.sqrt(math.pi)  # sup |l''| = s / sqrt(pi)
    L = curv * float(np.linalg.eigvalsh(X.T @ X).max(initial=0.0)) + lam2
    L = max(L, 1e-12)
    w, f, gap = _fista(fg, prox, gap_fn, np.zeros(d), L, tol, max_iter, h)
    total = f + h(w)
    if not (np.isfinite(total) and np.isfinite(gap)):
        raise NumericalError("the composite hindsight objective is not finite; rescale the data")
    sol = HindsightSolution(w=w, total_loss=total, gap=gap, method="fista")
    if gap > tol * max(1.0, abs(total)) * 1e3:
        raise NumericalError(f"the composite hindsight solver did not certify its solution (gap {gap:.3e})")
    return sol


def _cell_stats(rows, cols, y, M, N):
    cnt = np.zeros((M, N))
    tot = np.zeros((M, N))
    np.add.at(cnt, (rows, cols), 1.0)
    np.add.at(tot, (rows, cols), y)
    return cnt, tot


def trace_norm_hindsight(rows, cols, y, shape, tau: float, *, tol: float = 1e-6, max_iter: int = 20_000,
                         W0=None) -> HindsightSolution:
    """``argmin_{||W||_* <= tau} sum_t (W[rows_t, cols_t] - y_t)^2`` with its Frank-Wolfe duality-gap certificate.

    The objective is ``sum_ij c_ij W_ij^2 - 2 s_ij W_ij + const`` (``c`` the
    cell counts, ``s`` the rating sums), gradient ``G = 2 (c * W - s)``,
    Lipschitz constant ``2 max c``.  Solved by FISTA with adaptive restart
    and the exact SVD projection; ``gap = <G, W> + tau sigma_max(G)``
    ``>= F(W) - F*`` (Jaggi 2013, the trace-norm ball's linear minimisation
    oracle is ``-tau u_1 v_1^T``).  ``W`` is returned in ``sol.w`` (an ``M x N`` array).

    Examples
    --------
    >>> sol = trace_norm_hindsight([0, 1], [0, 1], [2.0, 2.0], (2, 2), tau=1.0)
    >>> sol.w.round(6).tolist(), round(sol.total_loss, 6)
    ([[0.5, 0.0], [0.0, 0.5]], 4.5)
    """
    M, N = (int(shape[0]), int(shape[1]))
    tau = check_scalar(tau, "tau", low=0.0, low_inclusive=False)
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    y = check_array(y, "y", shape=(rows.shape[0],))
    cnt, tot = _cell_stats(rows, cols, y, M, N)
    const = float(y @ y)

    def fg(W):
        return float(np.sum(cnt * W * W) - 2.0 * np.sum(tot * W)) + const, 2.0 * (cnt * W - tot)

    def prox(V, step):
        return project_trace_norm_ball(V, tau)

    def gap_fn(W, G):
        return max(0.0, float(np.sum(G * W)) + tau * float(np.linalg.norm(G, 2)))

    L = 2.0 * max(float(cnt.max()), 1e-12)
    start = np.zeros((M, N)) if W0 is None else np.asarray(W0, dtype=np.float64)
    W, f, gap = _fista(fg, prox, gap_fn, start, L, tol, max_iter)
    return HindsightSolution(w=W, total_loss=f, gap=gap, method="fista-trace-norm")


def max_entry_hindsight(rows, cols, y, shape, bound: float, loss: str = "squared") -> HindsightSolution:
    """``argmin_{|W_ij| <= c} sum_t phi(W[x_t] - y_t)``, exact: per cell the clipped mean (squared) or median (absolute).

    Cells never revealed are 0.  ``gap`` is 0 up to rounding (the minimiser of
    a one-dimensional convex function over an interval is the clipped
    unconstrained minimiser).

    Examples
    --------
    >>> max_entry_hindsight([0, 0, 0], [1, 1, 1], [0.0, 1.0, 5.0], (1, 2), 2.0, "absolute").w.tolist()
    [[0.0, 1.0]]
    """
    loss = check_choice(loss, "loss", ("squared", "absolute"))
    bound = check_scalar(bound, "bound", low=0.0, low_inclusive=False)
    M, N = (int(shape[0]), int(shape[1]))
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    y = check_array(y, "y", shape=(rows.shape[0],))
    W = np.zeros((M, N))
    cell = rows * N + cols
    order = np.argsort(cell, kind="stable")
    cs, ys = cell[order], y[order]
    starts = np.flatnonzero(np.r_[True, cs[1:] != cs[:-1]])
    ends = np.r_[starts[1:], cs.shape[0]]
    for a, b in zip(starts, ends):
        seg = ys[a:b]
        v = float(np.mean(seg)) if loss == "squared" else float(np.median(seg))
        W.flat[cs[a]] = min(max(v, -bound), bound)
    pred = W[rows, cols]
    total = float(np.sum((pred - y) ** 2)) if loss == "squared" else float(np.sum(np.abs(pred - y)))
    return HindsightSolution(w=W, total_loss=total, gap=0.0, method="per-cell")
