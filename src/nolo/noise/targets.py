"""Noisy targets ``y~ = y + n^y`` (CSS11 section 2).

CSS11 lets the adversary corrupt the target too: the learner sees
``y~_t = y_t + n^y_t`` with ``n^y_t`` zero-mean and independent of the
instance noise.  (CSS10 keeps ``y_t`` clean "for simplicity"; use
:class:`nolo.noise.ZeroNoise` for that.)  Any one-dimensional
:class:`nolo.noise.NoiseModel` serves as the law of ``n^y``; schedules work too
(``round=`` selects the law in force).
"""

from __future__ import annotations

from nolo._config import Configurable
from nolo._validation import check_array, check_int
from nolo.exceptions import ParameterError
from nolo.noise.base import NoiseModel
from nolo.random import as_generator

__all__ = ["NoisyTarget", "add_target_noise"]


class NoisyTarget(Configurable):
    """Adds zero-mean noise to targets: ``corrupt(y, rng) = y + n^y`` (CSS11 section 2).

    Parameters
    ----------
    noise : NoiseModel
        Law of the scalar target noise ``n^y`` (sampled in dimension 1).
        ``variance`` is its variance, the quantity bounded by ``B_y^2 - y^2``
        in CSS11's analysis.
    """

    def __init__(self, noise=None):
        self.noise = noise

    def _noise(self) -> NoiseModel:
        if not isinstance(self.noise, NoiseModel):
            raise ParameterError(f"noise must be a nolo NoiseModel, got {type(self.noise).__name__}")
        self.noise.validate(1)
        return self.noise

    def corrupt(self, y, rng, *, round: int = 0):
        """Return ``y + n^y``: a float for a scalar ``y``, an array for an array (independent noise per entry)."""
        noise = self._noise()
        round = check_int(round, "round", low=0)
        arr = check_array(y, "y", ndim=(0, 1))
        rng = as_generator(rng, "rng")
        size = 1 if arr.ndim == 0 else arr.shape[0]
        n = noise.sample(rng, size, 1, round=round)[:, 0]
        if arr.ndim == 0:
            return float(arr) + float(n[0])
        return arr + n

    @property
    def variance(self) -> float:
        """Variance of ``n^y``."""
        return float(self._noise().covariance(1)[0, 0])


def add_target_noise(y, noise: NoiseModel, rng, *, round: int = 0):
    """Functional form of :meth:`NoisyTarget.corrupt`: ``y + n^y`` with ``n^y`` drawn from ``noise``."""
    return NoisyTarget(noise).corrupt(y, rng, round=round)
