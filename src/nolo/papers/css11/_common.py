"""Shared pieces of the CSS11 experiments: z-scores, a full covariance, linear data."""

from __future__ import annotations

import numpy as np

from nolo.exceptions import ParameterError

__all__ = ["zscores", "example_covariance", "linear_problem", "mixed_noise"]


def zscores(samples: np.ndarray, target) -> np.ndarray:
    """``(mean - target) / SE`` per column of ``samples`` (rows are independent replicates)."""
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim == 1:
        samples = samples[:, None]
    n = samples.shape[0]
    se = samples.std(axis=0, ddof=1) / np.sqrt(n)
    return (samples.mean(axis=0) - np.asarray(target, dtype=np.float64)) / se


def example_covariance(d: int, eigenvalues, seed: int = 11) -> np.ndarray:
    """A non-diagonal covariance ``Q diag(eigenvalues) Q^T`` with a seeded random rotation ``Q``."""
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return (Q * np.asarray(eigenvalues, dtype=np.float64)) @ Q.T


def mixed_noise(rng: np.random.Generator, size: int, cov: np.ndarray, kind: str) -> np.ndarray:
    """Zero-mean noise with covariance ``cov``: Gaussian, or uniform coordinates mixed by ``cov^(1/2)``."""
    lam, V = np.linalg.eigh(cov)
    A = V * np.sqrt(np.maximum(lam, 0.0))
    d = cov.shape[0]
    if kind == "gaussian":
        u = rng.standard_normal((size, d))
    elif kind == "uniform":
        u = rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), (size, d))
    else:
        raise ParameterError(f"kind must be 'gaussian' or 'uniform', got {kind!r}")
    return u @ A.T


def linear_problem(rng: np.random.Generator, T: int, d: int, w_star: np.ndarray, x_scale: float, y_noise: float,
                   noise_var: float, copies: int = 2):
    """Clean ``X`` (rows N(0, x_scale^2 I/d)), ``y = <w*, x>``, noisy copies ``(T, copies, d)`` and noisy targets."""
    X = rng.standard_normal((T, d)) * (x_scale / np.sqrt(d))
    y = X @ w_star
    C = X[:, None, :] + np.sqrt(noise_var) * rng.standard_normal((T, copies, d))
    yn = y + y_noise * rng.standard_normal(T)
    return X, y, C, yn
