"""The synthetic bandit log the noise-rate tests share: clustered x (perfect examples exist, AM Theorem 5), a share
``right`` of the plays right and the rest uniform, the feedback bit flipped with rates (rho0, rho1)."""

from __future__ import annotations

import numpy as np


def clustered_log(rho0, rho1, n=6000, K=4, d=10, seed=0, right=0.5, sparse=False, labels=False):
    """(X, played, feedback), or the true labels with ``labels=True``; ``sparse``: |x| with ~80 % zeros and three
    all-zero rows.  The draws come in one fixed order, so a (rho0, rho1, n, K, d, seed) gives the same log everywhere."""
    rng = np.random.default_rng(seed)
    C = rng.standard_normal((K, d)) * 3
    y = rng.integers(K, size=n)
    X = C[y] + rng.standard_normal((n, d))
    if sparse:
        X = np.abs(X) * (rng.random((n, d)) < 0.2)
        X[:3] = 0.0  # zero rows stay zero after the normalisation
    played = np.where(rng.random(n) < right, y, rng.integers(K, size=n))
    u = rng.random(n)
    fb = np.where(played == y, u >= rho1, u < rho0).astype(np.int64)
    return y if labels else (X, played, fb)
