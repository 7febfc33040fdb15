"""Estimating the flip rates (rho0, rho1) of bandit feedback from logged rounds (AM Algorithm 3)."""

from nolo.noise_rates.nrest import NREst, encode_inputs, percentile_extremes

__all__ = ["NREst", "encode_inputs", "percentile_extremes"]
