"""Exploration rate gamma of AM Corollaries 4.1-4.3 and the Theorem 4 mistake bound.

AM (Agarwal & Manwani), section 3: with kappa = 1 - rho0 - rho1 (the paper's beta; one name in nolo), D = ||W*||_F^2 and
horizon T,

* Corollary 4.1 (no noise):          gamma = c * T^(-1/2)            -> O(sqrt(T)) mistakes;
* Corollary 4.2 (small noise):       gamma = c * sqrt(D / (kappa^2 T)) -> O(sqrt(DT) / kappa);
* Corollary 4.3 (any noise):         gamma = c * T^(-1/3) / kappa      -> O(T^(2/3) / kappa).

The corollaries fix gamma only up to a constant; ``scale`` is that constant
(1 by default).  The result is clipped into AM Algorithm 1's domain (0, 0.5).
"""

from __future__ import annotations

import math

from nolo._validation import check_choice, check_int, check_scalar

__all__ = ["COROLLARIES", "corollary_gamma", "lemma3_constants", "theorem4_bound"]

COROLLARIES = ("cor4.1", "cor4.2", "cor4.3")
_GAMMA_MAX = 0.5 - 1e-9


def corollary_gamma(corollary: str, horizon: int, *, complexity: float = 1.0, kappa: float = 1.0,
                    scale: float = 1.0) -> float:
    """gamma of AM Corollary 4.1, 4.2 or 4.3 for horizon T, complexity D and kappa = 1 - rho0 - rho1."""
    check_choice(corollary, "corollary", COROLLARIES)
    T = check_int(horizon, "horizon", low=1)
    D = check_scalar(complexity, "complexity", low=0.0, low_inclusive=False)
    b = check_scalar(kappa, "kappa", low=0.0, high=1.0, low_inclusive=False)
    c = check_scalar(scale, "scale", low=0.0, low_inclusive=False)
    if corollary == "cor4.1":
        g = c / math.sqrt(T)
    elif corollary == "cor4.2":
        g = c * math.sqrt(D / (b * b * T))
    else:
        g = c * T ** (-1.0 / 3.0) / b
    return min(g, _GAMMA_MAX)


def lemma3_constants(K: int, gamma: float, rho0: float, rho1: float) -> tuple[float, float]:
    """(A1, A2) of AM Lemma 3: E||H||^2 / ||x||^2 <= A1 on greedy mistakes, <= A2 otherwise."""
    K = check_int(K, "K", low=2)
    g = check_scalar(gamma, "gamma", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    kappa = 1.0 - rho0 - rho1
    if kappa <= 0:
        check_scalar(kappa, "1 - rho0 - rho1", low=0.0, low_inclusive=False)
    a1 = (2 * K / g + 2 * rho0 * (1 - rho0) * K / (kappa * g) + K * rho1 / (kappa ** 2 * g)
          + rho0 * (1 - rho0) * K ** 2 / (kappa ** 2 * g ** 2))
    a2 = 2 * g + rho1 / (kappa ** 2 * (1 - g)) + rho0 * (1 - rho0) * K ** 2 / (kappa ** 2 * g)
    return a1, a2


def theorem4_bound(T: int, K: int, gamma: float, rho0: float, rho1: float, D: float, R_H: float) -> float:
    """AM Theorem 4: E[M] <= R_H + sqrt(A1 D R_H) + 3 max{A1 D, sqrt(A2 D T)} + gamma T (needs ||x|| <= 1)."""
    T = check_int(T, "T", low=1)
    D = check_scalar(D, "D", low=0.0)
    R_H = check_scalar(R_H, "R_H", low=0.0)
    a1, a2 = lemma3_constants(K, gamma, rho0, rho1)
    return R_H + math.sqrt(a1 * D * R_H) + 3 * max(a1 * D, math.sqrt(a2 * D * T)) + gamma * T
