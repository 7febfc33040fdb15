"""Regret against the best fixed predictor in hindsight on the clean data (CSS10 eq. (1); OCO notes section 1).

    Regret_T = sum_{t<=T} played_t  -  min_{w in F} sum_{t<=T} loss(<w, x_t>, y_t)

``played_t`` are the losses the learner suffered (for a noisy-input learner:
its loss on the *clean* example, ``loss(<w_t, x_t>, y_t)``).  The comparator
is solved exactly by :mod:`nolo.oco.hindsight`.  All regrets here are
cumulative (sums); divide by ``T`` for the notes' averaged ``Reg_n``.

:func:`regret_curve` recomputes the best predictor for each prefix
``T in checkpoints``.  For quadratic losses it is incremental: the sufficient
statistics ``sum a_t x_t x_t^T`` and ``sum b_t x_t`` are accumulated chunk by
chunk, so each checkpoint costs one ``d x d`` eigendecomposition plus a pass
over the new rows; other losses are warm-started from the previous checkpoint.
"""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_array, check_choice, check_scalar
from nolo.exceptions import ParameterError
from nolo.oco.hindsight import (
    METHODS,
    QuadraticAccumulator,
    _check_data,
    _solve,
    best_fixed_in_hindsight,
    best_fixed_linear,
    solve_hindsight,
)
from nolo.oco.losses_api import check_loss
from nolo.oco.projections import check_constraint
from nolo.oco.structure import affine_pieces, quadratic_coefficients

__all__ = [
    "regret",
    "regret_curve",
    "linear_regret",
    "linear_regret_curve",
    "ogd_regret_bound",
    "notes_regret_bound",
    "best_fixed_in_hindsight",
    "best_fixed_linear",
    "solve_hindsight",
]


def _check_played(played, n: int, name: str = "played_losses") -> np.ndarray:
    p = check_array(played, name, ndim=1)
    if p.shape[0] != n:
        raise ParameterError(f"{name} must have one entry per round ({n}), got {p.shape[0]}")
    return p


def _check_checkpoints(checkpoints, n: int) -> np.ndarray:
    if checkpoints is None:
        return np.array([n])
    c = np.atleast_1d(np.asarray(checkpoints))
    if c.ndim != 1 or c.size == 0 or c.dtype.kind not in "iu":
        raise ParameterError(f"checkpoints must be a non-empty 1-d sequence of integers, got {checkpoints!r}")
    if np.any(c < 1) or np.any(c > n) or np.any(np.diff(c) <= 0):
        raise ParameterError(f"checkpoints must be strictly increasing integers in [1, {n}] (the number of rounds)")
    return c.astype(np.int64)


def regret(played_losses, X, y, loss, constraint=None, *, method: str = "auto", tol: float = 1e-9) -> float:
    """Cumulative regret after all ``n`` rounds: ``sum(played_losses) - min_{w in F} sum_t loss(<w, x_t>, y_t)``."""
    loss = check_loss(loss)
    X, y = _check_data(X, y, loss)
    played = _check_played(played_losses, X.shape[0])
    _, best = best_fixed_in_hindsight(X, y, loss, constraint, method=method, tol=tol)
    return float(played.sum() - best)


def regret_curve(played_losses, X, y, loss, constraint=None, checkpoints=None, *, method: str = "auto", tol: float = 1e-9) -> np.ndarray:
    """Cumulative regret at each horizon ``T`` in ``checkpoints`` (the comparator recomputed on each prefix).

    Returns an array of the same length as ``checkpoints`` (default: only ``T = n``).
    """
    loss = check_loss(loss)
    X, y = _check_data(X, y, loss)
    played = _check_played(played_losses, X.shape[0])
    constraint = check_constraint(constraint, n_features=X.shape[1])
    cps = _check_checkpoints(checkpoints, X.shape[0])
    method = check_choice(method, "method", METHODS)
    tol = check_scalar(tol, "tol", low=0.0, low_inclusive=False)
    coeffs = quadratic_coefficients(loss, y) if method in ("auto", "quadratic") else None
    if method == "auto":
        if coeffs is not None:
            method = "quadratic"
        elif affine_pieces(loss, y) is not None:
            method = "piecewise_linear"
        else:
            method = "smooth"
    cum_played = np.cumsum(played)
    out = np.empty(cps.shape[0])
    acc = QuadraticAccumulator(X.shape[1]) if method == "quadratic" and coeffs is not None else None
    w_prev, start = None, 0
    for k, T in enumerate(cps):
        prefix_coeffs = None
        if acc is not None:
            a, b, c = coeffs
            acc.add(X[start:T], a[start:T], b[start:T])
            prefix_coeffs = (a[:T], b[:T], c[:T])
        sol = _solve(X[:T], y[:T], loss, constraint, method, tol, w_prev, acc=acc, coeffs=prefix_coeffs)
        out[k] = cum_played[T - 1] - sol.total_loss
        w_prev, start = sol.w, T
    return out


def linear_regret(played_losses, G, constraint) -> float:
    """Regret against linear losses ``<G[t], w>``: ``sum(played) - min_{w in F} sum_t <G[t], w>`` (closed form)."""
    G = check_array(G, "G", ndim=2)
    played = _check_played(played_losses, G.shape[0])
    _, best = best_fixed_linear(G, constraint)
    return float(played.sum() - best)


def linear_regret_curve(played_losses, G, constraint, checkpoints=None) -> np.ndarray:
    """:func:`linear_regret` at each prefix length in ``checkpoints``."""
    G = check_array(G, "G", ndim=2)
    played = _check_played(played_losses, G.shape[0])
    constraint = check_constraint(constraint, n_features=G.shape[1])
    cps = _check_checkpoints(checkpoints, G.shape[0])
    S = np.cumsum(G, axis=0)[cps - 1]
    P = np.cumsum(played)[cps - 1]
    return np.array([P[k] + constraint.support(-S[k]) for k in range(cps.shape[0])])


def ogd_regret_bound(R: float, B: float, n: int) -> float:
    """The OCO notes' Claim 1: cumulative regret of OGD with ``eta = R/(B sqrt(n))`` is at most ``R B sqrt(n)``."""
    R = check_scalar(R, "R", low=0.0, low_inclusive=False)
    B = check_scalar(B, "B", low=0.0, low_inclusive=False)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"n must be an integer >= 1, got {n!r}")
    return R * B * math.sqrt(int(n))


def notes_regret_bound(*, R: float, D: float, etas_constant: bool, eta_last: float, sum_sq: float,
                       sum_eta_sq: float) -> float:
    """The regret bound of the OCO notes' proof (section 3), evaluated for a run.

    Constant step ``eta`` (the notes' Claim 1 setting): summing
    ``<g_t, f_t - f*> <= (||f_t - f*||^2 - ||f_{t+1} - f*||^2)/(2 eta) + eta ||g_t||^2 / 2``
    gives ``R^2/(2 eta) + (eta/2) sum_t ||g_t||^2`` with ``R >= ||f_1 - f*||``;
    with ``||g_t|| <= B`` and ``eta = R/(B sqrt(n))`` this is the notes' ``R B sqrt(n)``
    (:func:`ogd_regret_bound`).  Non-increasing steps ``eta_t`` (Zinkevich 2003, Theorem 1): the same
    telescoping with ``||f_t - f*|| <= D`` (the diameter of F) gives
    ``D^2/(2 eta_T) + sum_t eta_t ||g_t||^2 / 2``.  ``sum_sq`` is
    ``sum_t ||g_t||^2`` (or ``n B^2``), ``sum_eta_sq`` is ``sum_t eta_t ||g_t||^2``.

    >>> notes_regret_bound(R=1.0, D=2.0, etas_constant=True, eta_last=0.1, sum_sq=100 * 0.01, sum_eta_sq=0.0)
    5.05
    """
    if etas_constant:
        return R * R / (2.0 * eta_last) + 0.5 * eta_last * sum_sq
    return D * D / (2.0 * eta_last) + 0.5 * sum_eta_sq
