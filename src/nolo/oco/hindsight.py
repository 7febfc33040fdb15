"""The best fixed linear predictor in hindsight: ``min_{w in F} sum_t loss(<w, x_t>, y_t)``, solved exactly.

This is the comparator of the regret (CSS10 eq. (1), OCO notes section 1),
computed on the *clean* data.  Three solvers, chosen automatically from the
structure of the loss (probed numerically, so any scaling of the loss works):

``"quadratic"`` -- losses that are quadratic in the margin (the squared loss
    of either kind).  With ``F(w) = w^T H w + h^T w + C``:

    * L2 ball: the eigendecomposition ``H = V diag(lam) V^T`` and the KKT
      conditions ``(2H + 2 mu I) w = -h``, ``mu >= 0``, ``mu (||w|| - R) = 0``;
      the multiplier ``mu`` solves the secular equation ``||w(mu)|| = R`` by
      bisection down to adjacent floating-point numbers (exact to ~1e-12);
      if the minimum-norm unconstrained minimiser lies in the ball, it is the
      answer (``mu = 0``, the interior case).
    * box: L-BFGS-B on the bounded quadratic, then an exact active-set polish
      (solve the free-coordinate linear system; keep it if its certificate is smaller).
    * unconstrained: the minimum-norm minimiser (eigendecomposition pseudo-inverse).

``"smooth"`` -- any other differentiable convex loss (logistic, exponential,
    smoothed hinge, smoothed absolute): spectral projected gradient (Birgin,
    Martinez & Raydan 2000; Barzilai-Borwein steps, non-monotone Armijo search)
    on the ball, L-BFGS-B on a box or unconstrained.

``"piecewise_linear"`` -- convex losses that are the maximum of two affine
    pieces in the margin (hinge, absolute): the exact linear program of the
    epigraph (HiGHS) on a box or unconstrained.  On a ball: the LP over the
    enclosing cube (optimal if its solution lies in the ball), otherwise the
    minimax dual over the convex weights of the two pieces, maximised by
    L-BFGS-B; every dual point gives a lower bound and ``w = -R v/||v||`` a
    feasible upper bound.

Certificate.  Every solution carries ``gap``: for a bounded set, the duality
(Frank-Wolfe) gap ``<g, w> + sigma_F(-g) >= F(w) - F*`` with ``g`` the
gradient at ``w`` -- for the piecewise-linear solver, the feasible value
minus the LP or dual lower bound -- a bound on the suboptimality (up to
rounding); unconstrained, the KKT residual ``||g||_2`` (not a suboptimality
bound: an infimum that is not attained, e.g. the logistic loss on separable
data, is approached in value only).  A solution is accepted only if ``gap <= tol * max(1, |F(w)|)``
(default ``tol = 1e-9``); otherwise :class:`NumericalError` is raised.

The OCO notes' other examples (section 2), each with a certificate ``gap >= F(w) - min F``:

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
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from nolo._validation import check_array, check_choice, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.oco.losses_api import check_loss, check_targets
from nolo.oco.projected_step import project_l1_inplace
from nolo.oco.projections import Box, ConstraintSet, L1Ball, L2Ball, Unconstrained, check_constraint, project_trace_norm_ball
from nolo.oco.structure import affine_pieces, loss_structure, quadratic_coefficients

__all__ = [
    "HindsightSolution",
    "solve_hindsight",
    "best_fixed_in_hindsight",
    "best_fixed_linear",
    "total_loss",
    "frank_wolfe_gap",
    "loss_structure",
    "QuadraticAccumulator",
    "composite_hindsight",
    "trace_norm_hindsight",
    "max_entry_hindsight",
]


def _optimize():
    """:mod:`scipy.optimize`, imported on the first comparator solved (half a second of import that a learner
    importing :mod:`nolo.oco` for its projections and steps never needs)."""
    from scipy import optimize

    return optimize

METHODS = ("auto", "quadratic", "smooth", "piecewise_linear")


@dataclass(frozen=True)
class HindsightSolution:
    """A best fixed predictor ``w``, its total loss, its certificate ``gap`` and the solver used."""

    w: np.ndarray
    total_loss: float
    gap: float
    method: str
    multiplier: float = math.nan
    """Quadratic solver on a ball: the Lagrange multiplier ``nu >= 0`` of ``||w||^2 <= R^2``, i.e.
    ``grad F(w) + 2 nu w = 0`` (0 in the interior case); nan otherwise."""


# ----------------------------------------------------------------------------- helpers
def _check_data(X, y, loss):
    X = check_array(X, "X", ndim=2)
    if X.shape[0] == 0:
        raise ParameterError("X must have at least one row")
    y = check_targets(y, loss.kind, "y", n=X.shape[0])
    return X, y


def total_loss(w, X, y, loss) -> float:
    """``sum_t loss(<w, x_t>, y_t)`` (raises NumericalError if not finite)."""
    value = float(np.sum(loss.loss(X @ w, y)))
    if not np.isfinite(value):
        raise NumericalError(f"the total loss at w is not finite ({value}); rescale the data")
    return value


def _gradient(w, X, y, loss) -> np.ndarray:
    return X.T @ np.asarray(loss.grad_margin(X @ w, y), dtype=np.float64)


def frank_wolfe_gap(w, g, constraint: ConstraintSet) -> float:
    """``max_{v in F} <g, w - v> = <g, w> + sigma_F(-g)``: bounds ``F(w) - min_F F`` for convex F with gradient g at w.

    Unconstrained, it is replaced by the KKT residual ``||g||_2``.
    """
    if isinstance(constraint, Unconstrained):
        return float(np.linalg.norm(g))
    return max(0.0, float(g @ w) + constraint.support(-g))


def _accept(sol: HindsightSolution, tol: float) -> HindsightSolution:
    bar = tol * max(1.0, abs(sol.total_loss))
    if not (sol.gap <= bar):
        raise NumericalError(
            f"the best-in-hindsight solver ({sol.method}) did not certify its solution: "
            f"certificate {sol.gap:.3e} > tol * max(1, |F|) = {bar:.3e}. "
            "The infimum may not be attained (e.g. separable data with an unconstrained set) or tol is too tight."
        )
    return sol


# ----------------------------------------------------------------------------- quadratic
class QuadraticAccumulator:
    """Running ``H = sum a_i x_i x_i^T`` and ``h = sum b_i x_i`` of a quadratic loss, for prefix solves."""

    def __init__(self, d: int):
        self.H = np.zeros((d, d))
        self.h = np.zeros(d)
        self.n = 0

    def add(self, X, a, b) -> None:
        self.H += (X * a[:, None]).T @ X
        self.h += X.T @ b
        self.n += X.shape[0]


def _quadratic_minimiser(H, h, constraint: ConstraintSet, w0=None) -> tuple[np.ndarray, float]:
    """argmin_{w in F} w^T H w + h^T w (H PSD); returns (w, ball multiplier or nan)."""
    d = h.shape[0]
    if isinstance(constraint, Box):
        return _box_qp(H, h, constraint, w0), math.nan
    lam, V = np.linalg.eigh(0.5 * (H + H.T))
    alpha = 2.0 * np.maximum(lam, 0.0)  # eigenvalues of the Hessian 2H
    cp = V.T @ (-h)  # the linear term c = -h in the eigenbasis
    scale = max(float(alpha.max(initial=0.0)), 1e-300)
    null = alpha <= scale * d * 1e-14
    cnorm = float(np.linalg.norm(cp))
    unbounded = bool(np.any(null & (np.abs(cp) > 1e-11 * max(cnorm, 1e-300))))
    wp0 = np.where(null, 0.0, cp / np.where(null, 1.0, alpha))
    if isinstance(constraint, Unconstrained):
        if unbounded:
            raise NumericalError("the quadratic objective is unbounded below on an unconstrained set; no minimiser")
        return V @ wp0, math.nan
    if not isinstance(constraint, L2Ball):
        raise ParameterError(f"constraint must be an L2Ball, Box or Unconstrained, got {constraint!r}")
    R = float(constraint.radius)
    if not unbounded and float(np.linalg.norm(wp0)) <= R:
        return V @ wp0, 0.0  # interior case: mu = 0
    # secular equation ||c'/(alpha + mu)|| = R on (0, ||c||/R]; ||w(mu)|| is decreasing in mu
    lo, hi = 0.0, cnorm / R
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if float(np.linalg.norm(cp / (alpha + mid))) > R:
            lo = mid
        else:
            hi = mid
    mu = hi  # ||w(hi)|| <= R: feasible side
    wp = cp / (alpha + mu)
    w = V @ wp
    nrm = float(np.linalg.norm(w))
    if nrm > R:
        w *= R / nrm
    return w, 0.5 * mu  # (2H + mu I) w = -h  <=>  grad F + 2 (mu/2) w = 0


def _box_qp(H, h, constraint: Box, w0=None) -> np.ndarray:
    d = h.shape[0]
    low, high = constraint.bounds(d)
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)

    def fg(w):
        Hw = H @ w
        return float(w @ Hw + h @ w), 2.0 * Hw + h

    start = np.clip(np.zeros(d) if w0 is None else w0, low, high)
    res = _optimize().minimize(
        fg, start, jac=True, method="L-BFGS-B", bounds=list(zip(low, high)),
        options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-13, "maxcor": 30},
    )
    best = np.clip(res.x, low, high)

    def gap(w):  # Frank-Wolfe gap: a rigorous bound on the suboptimality (objective values are too noisy here)
        g = fg(w)[1]
        return float(g @ w) + float(np.sum(np.maximum(-g * low, -g * high)))

    gbest = gap(best)
    # exact active-set polish: fix the coordinates at their bounds, solve the free ones' linear system
    for _ in range(10):
        g = fg(best)[1]
        span = np.maximum(high - low, 1e-300)
        at_low = (best - low <= 1e-9 * span) & (g > 0)
        at_high = (high - best <= 1e-9 * span) & (g < 0)
        free = ~(at_low | at_high)
        cand = np.where(at_low, low, np.where(at_high, high, best))
        if np.any(free):
            fixed = ~free
            rhs = -(h[free] + 2.0 * H[np.ix_(free, fixed)] @ cand[fixed])
            cand[free] = np.linalg.lstsq(2.0 * H[np.ix_(free, free)], rhs, rcond=None)[0]
        cand = np.clip(cand, low, high)
        gc = gap(cand)
        if not gc < gbest:
            break
        best, gbest = cand, gc
    return best


# ----------------------------------------------------------------------------- smooth
def _spg(fg, project, w0, gap_fn, tol, max_iter=20000, memory=10):
    """Spectral projected gradient (Birgin, Martinez & Raydan 2000, algorithm SPG2)."""
    w = project(w0)
    f, g = fg(w)
    hist = [f]
    alpha = 1.0 / max(float(np.linalg.norm(g)), 1e-12)
    for _ in range(max_iter):
        if gap_fn(w, g) <= tol * max(1.0, abs(f)):
            break
        d = project(w - alpha * g) - w
        gd = float(g @ d)
        if gd >= 0.0:
            break
        fmax = max(hist)
        lam = 1.0
        while True:
            wn = w + lam * d
            fn, gn = fg(wn)
            if fn <= fmax + 1e-4 * lam * gd or lam < 1e-20:
                break
            lam *= 0.5
        s, yv = wn - w, gn - g
        sy = float(s @ yv)
        alpha = float(s @ s) / sy if sy > 0 else 1e10
        alpha = min(max(alpha, 1e-30), 1e30)
        w, f, g = wn, fn, gn
        hist.append(f)
        if len(hist) > memory:
            hist.pop(0)
    return w


def _solve_smooth(X, y, loss, constraint, tol, w0=None):
    d = X.shape[1]

    def fg(w):
        m = X @ w
        return float(np.sum(loss.loss(m, y))), X.T @ np.asarray(loss.grad_margin(m, y), dtype=np.float64)

    start = np.zeros(d) if w0 is None else np.asarray(w0, dtype=np.float64)
    if isinstance(constraint, L2Ball):
        return _spg(fg, constraint.project, start, lambda w, g: frank_wolfe_gap(w, g, constraint), tol)
    bounds = None
    if isinstance(constraint, Box):
        low, high = constraint.bounds(d)
        bounds = list(zip(low, high))
        start = np.clip(start, low, high)
    res = _optimize().minimize(
        fg, start, jac=True, method="L-BFGS-B", bounds=bounds,
        options={"maxiter": 50000, "ftol": 1e-16, "gtol": 1e-12, "maxcor": 30},
    )
    w = res.x if bounds is None else np.clip(res.x, low, high)
    return w


# ----------------------------------------------------------------------------- piecewise linear
def _solve_piecewise_linear(X, y, loss, constraint, tol, pieces):
    """Exact solver for sum_i max_k (A_ik m_i + B_ik), m_i = <w, x_i>, over F.  Returns (w, gap).

    Box / unconstrained: the epigraph LP, solved by HiGHS (exact; the gap is
    F(w) minus the LP optimum).  Ball: first the LP over the enclosing cube
    [-R, R]^d (a relaxation: if its solution lies in the ball it is optimal);
    otherwise the minimax dual over the convex weights theta_i of the two pieces,

        max_{theta in [0,1]^n}  sum_i B_i(theta_i) - R || sum_i A_i(theta_i) x_i ||,

    (A_i(theta) = theta A_i1 + (1 - theta) A_i2, likewise B_i), maximised by
    L-BFGS-B; the primal point is w = -R v / ||v||, v = sum_i A_i(theta_i) x_i,
    and the gap F(w) - max(dual value, LP value) certifies it.
    """
    n, d = X.shape
    A, Bc = pieces
    K = A.shape[1]
    # epigraph rows (i, k): A_ik x_i . w - s_i <= -B_ik
    rows_w = sparse.csr_matrix(np.repeat(X, K, axis=0) * A.reshape(-1)[:, None])
    rows_s = sparse.kron(sparse.identity(n, format="csr"), -np.ones((K, 1)), format="csr")
    A_ub = sparse.hstack([rows_w, rows_s]).tocsr()
    b_ub = -Bc.reshape(-1)
    cost = np.concatenate([np.zeros(d), np.ones(n)])
    if isinstance(constraint, Box):
        low, high = constraint.bounds(d)
        wb = list(zip(low, high))
    elif isinstance(constraint, L2Ball):
        R = float(constraint.radius)
        wb = [(-R, R)] * d
    else:
        wb = [(None, None)] * d
    res = _optimize().linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=wb + [(None, None)] * n, method="highs")
    if res.status != 0:
        raise NumericalError(f"the hindsight linear program failed: {res.message}")
    lower = float(res.fun)
    w = res.x[:d]
    if not isinstance(constraint, L2Ball) or float(np.linalg.norm(w)) <= R:
        w = constraint.project(w)
        return w, max(0.0, total_loss(w, X, y, loss) - lower)
    # ball constraint active: the minimax dual over theta
    dA, dB = A[:, 0] - A[:, 1], Bc[:, 0] - Bc[:, 1]
    XdA = X * dA[:, None]
    v0 = X.T @ A[:, 1]

    def neg_dual(theta):
        v = v0 + XdA.T @ theta
        nv = float(np.linalg.norm(v))
        val = float(np.sum(Bc[:, 1]) + dB @ theta) - R * nv
        grad = dB - (R / nv) * (XdA @ v) if nv > 0 else dB.copy()
        return -val, -grad

    best_w, best_up, best_low = None, math.inf, lower
    theta = np.full(n, 0.5)
    for _ in range(3):
        out = _optimize().minimize(
            neg_dual, theta, jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * n,
            options={"maxiter": 50000, "ftol": 1e-16, "gtol": 1e-14, "maxcor": 50},
        )
        theta = np.clip(out.x, 0.0, 1.0)
        best_low = max(best_low, -neg_dual(theta)[0])
        v = v0 + XdA.T @ theta
        nv = float(np.linalg.norm(v))
        if nv > 0:
            cand = -R * v / nv
            up = total_loss(cand, X, y, loss)
            if up < best_up:
                best_w, best_up = cand, up
        if best_w is not None and best_up - best_low <= tol * max(1.0, abs(best_up)):
            break
    if best_w is None:
        best_w = constraint.project(w)
        best_up = total_loss(best_w, X, y, loss)
    return best_w, max(0.0, best_up - best_low)


# ----------------------------------------------------------------------------- public API
def solve_hindsight(X, y, loss, constraint=None, *, method: str = "auto", tol: float = 1e-9, w0=None) -> HindsightSolution:
    """The best fixed predictor ``argmin_{w in F} sum_t loss(<w, x_t>, y_t)`` on clean data, with its certificate.

    Parameters
    ----------
    X : (n, d) array, y : (n,) array
        The clean instances and targets of the rounds.
    loss : loss object or name; constraint : ConstraintSet or None (unconstrained).
    method : "auto" (probe the loss), "quadratic", "smooth" or "piecewise_linear".
    tol : relative certificate tolerance (see the module docstring).
    w0 : optional warm start.
    """
    loss = check_loss(loss)
    X, y = _check_data(X, y, loss)
    constraint = check_constraint(constraint, n_features=X.shape[1])
    method = check_choice(method, "method", METHODS)
    tol = check_scalar(tol, "tol", low=0.0, low_inclusive=False)
    return _solve(X, y, loss, constraint, method, tol, w0)


def _solve(X, y, loss, constraint, method, tol, w0=None, acc=None, coeffs=None) -> HindsightSolution:
    if method == "auto":
        coeffs = coeffs if coeffs is not None else quadratic_coefficients(loss, y)
        method = "quadratic" if coeffs is not None else ("piecewise_linear" if affine_pieces(loss, y) is not None else "smooth")
    mu = math.nan
    if method == "quadratic":
        coeffs = coeffs if coeffs is not None else quadratic_coefficients(loss, y)
        if coeffs is None:
            raise ParameterError("method='quadratic' needs a loss that is quadratic in the margin")
        if acc is None:
            acc = QuadraticAccumulator(X.shape[1])
            acc.add(X, coeffs[0], coeffs[1])
        w, mu = _quadratic_minimiser(acc.H, acc.h, constraint, w0)
        gap = frank_wolfe_gap(w, _gradient(w, X, y, loss), constraint)
    elif method == "piecewise_linear":
        pieces = affine_pieces(loss, y)
        if pieces is None:
            raise ParameterError("method='piecewise_linear' needs a loss that is the maximum of two affine pieces")
        w, gap = _solve_piecewise_linear(X, y, loss, constraint, tol, pieces)
    else:
        w = _solve_smooth(X, y, loss, constraint, tol, w0)
        gap = frank_wolfe_gap(w, _gradient(w, X, y, loss), constraint)
    value = total_loss(w, X, y, loss)
    return _accept(HindsightSolution(w=w, total_loss=value, gap=float(gap), method=method, multiplier=mu), tol)


def best_fixed_in_hindsight(X, y, loss, constraint=None, *, method: str = "auto", tol: float = 1e-9):
    """``(w_star, total_loss)``: the best fixed predictor in ``constraint`` on the clean data and its total loss."""
    sol = solve_hindsight(X, y, loss, constraint, method=method, tol=tol)
    return sol.w, sol.total_loss


def best_fixed_linear(G, constraint) -> tuple[np.ndarray, float]:
    """Linear losses ``f_t(w) = <G[t], w>`` (OCO notes 2.2): ``(w_star, min_{w in F} sum_t <G[t], w>)`` in closed form.

    ``min_F <S, w> = -sigma_F(-S)`` with ``S = sum_t G[t]``; on the ball of
    radius R that is ``-R ||S||`` at ``w* = -R S / ||S||``.
    """
    G = check_array(G, "G", ndim=2)
    constraint = check_constraint(constraint, n_features=G.shape[1])
    S = G.sum(axis=0)
    if isinstance(constraint, Unconstrained) and np.any(S):
        raise ParameterError("constraint must be bounded for nonzero linear losses (the minimum is -inf)")
    w = constraint.argmax_linear(-S)
    return w, float(S @ w)


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

    ``F`` is an :class:`~nolo.oco.L2Ball` or an :class:`~nolo.oco.L1Ball`; ``phi`` the
    squared, logistic or smoothed hinge loss.  The nonsmooth part
    ``h = n l1 ||.||_1 + 1_F`` enters through its exact proximal map
    (soft-threshold then projection, see :func:`~nolo.oco.projected_step.composite_step`);
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
        project_l1_inplace(u, R)
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
