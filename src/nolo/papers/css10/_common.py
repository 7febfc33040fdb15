"""Shared settings of the CSS10 experiments: kernels, noises and z-scores by name."""

from __future__ import annotations

import math

import numpy as np

from nolo.kernels import ExponentialKernel, GaussianKernel, LinearKernel, PolynomialKernel
from nolo.noise import GaussianNoise, LaplaceNoise, PerCallSchedule, UniformNoise

KERNELS = {
    "linear": lambda: LinearKernel(),
    "poly2-hom": lambda: PolynomialKernel(2, 0.0),
    "poly3-inhom": lambda: PolynomialKernel(3, 1.0),
    "exponential": lambda: ExponentialKernel(1.0),
    "gaussian": lambda: GaussianKernel(2.0),
}

# Per-coordinate noise of standard deviation 0.3 for each law (uniform half-width 0.3*sqrt(3), Laplace scale 0.3/sqrt(2)).
NOISES = {
    "gaussian": lambda: GaussianNoise(0.3),
    "uniform": lambda: UniformNoise(0.3 * math.sqrt(3.0)),
    "laplace": lambda: LaplaceNoise(0.3 / math.sqrt(2.0)),
    "switching": lambda: PerCallSchedule(
        [GaussianNoise(0.3), UniformNoise(0.3 * math.sqrt(3.0)), LaplaceNoise(0.3 / math.sqrt(2.0))]
    ),
}


def zscore(values, target: float) -> float:
    v = np.asarray(values, dtype=np.float64)
    se = v.std(ddof=1) / math.sqrt(v.size)
    return float((v.mean() - target) / se) if se > 0 else (0.0 if v.mean() == target else math.inf)


def loglog_slope(T, R) -> float:
    """Least-squares slope of log R against log T (R must be > 0)."""
    T = np.asarray(T, dtype=np.float64)
    R = np.asarray(R, dtype=np.float64)
    if np.any(R <= 0):
        return float("nan")
    return float(np.polyfit(np.log(T), np.log(R), 1)[0])
