"""Estimating the flip rates (rho0, rho1) of bandit feedback from logged rounds (AM Algorithm 3 and nolo's anchors rule)."""

from nolo.noise_rates.bootstrap import RateInterval, bootstrap_rates
from nolo.noise_rates.nrest import NREst, encode_inputs, percentile_extremes
from nolo.noise_rates.regime import Regime, diagnose

__all__ = ["NREst", "encode_inputs", "percentile_extremes", "bootstrap_rates", "RateInterval", "diagnose", "Regime"]
