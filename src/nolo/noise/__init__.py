"""Where corruption comes from: noise laws, oracles of noisy copies, noisy targets, flipped feedback, finite pools.

* :mod:`nolo.noise.base` -- the :class:`NoiseModel` contract (zero mean, exact covariance);
* :mod:`nolo.noise.models` -- :class:`GaussianNoise`, :class:`UniformNoise`,
  :class:`LaplaceNoise`, :class:`StudentTNoise`, :class:`ZeroNoise`;
* :mod:`nolo.noise.schedules` -- adversarial laws that change per round or per
  call (CSS10 section 2): :class:`PerRoundSchedule`, :class:`PerCallSchedule`;
* :mod:`nolo.noise.oracle` -- the oracle ``A_t`` of CSS10: :class:`Oracle`,
  :func:`make_oracle`, and the :class:`BaseOracle` protocol;
* :mod:`nolo.noise.targets` -- ``y + n^y`` (CSS11): :class:`NoisyTarget`, :func:`add_target_noise`;
* :mod:`nolo.noise.feedback` -- AM's flipped bandit feedback: :class:`FlipChannel`
  (rho0 = P(feedback 1 | truth 0), rho1 = P(feedback 0 | truth 1));
* :mod:`nolo.noise.feedback_laws` -- the feedback laws as compiled records: :class:`FeedbackLaw`,
  :class:`FlipMatrix` (Q[y, a] = P(flip | true y, played a)), :class:`ContextFlips` (per-row rates, given as
  arrays or as a rule such as :class:`ColumnRates`);
* :mod:`nolo.noise.replay` -- fixed readings replayed in order: :class:`ReplayOracle`
  (``on_exhausted`` raise / drop / cycle);
* :mod:`nolo.noise.pool` -- real repeated measurements with a cap:
  :class:`PoolOracle`, :class:`RepeatedMeasurements`, :class:`PoolReport`;
* :mod:`nolo.noise.diagnostics` -- moment z-scores of samples against a claimed law,
  and the noise covariance estimated from repeated measurements.
"""

from __future__ import annotations

from nolo.noise.base import NoiseModel
from nolo.noise.diagnostics import MomentCheck, moment_z_scores, pooled_covariance
from nolo.noise.feedback import FlipChannel
from nolo.noise.feedback_laws import ColumnRates, ContextFlips, FeedbackLaw, FlipMatrix
from nolo.noise.models import GaussianNoise, LaplaceNoise, StudentTNoise, UniformNoise, ZeroNoise
from nolo.noise.oracle import BaseOracle, Oracle, make_oracle
from nolo.noise.pool import PoolOracle, PoolReport, RepeatedMeasurements
from nolo.noise.replay import ReplayOracle
from nolo.noise.schedules import PerCallSchedule, PerRoundSchedule
from nolo.noise.targets import NoisyTarget, add_target_noise

__all__ = [
    "NoiseModel",
    "GaussianNoise",
    "UniformNoise",
    "LaplaceNoise",
    "StudentTNoise",
    "ZeroNoise",
    "PerRoundSchedule",
    "PerCallSchedule",
    "BaseOracle",
    "Oracle",
    "make_oracle",
    "NoisyTarget",
    "add_target_noise",
    "FlipChannel",
    "FeedbackLaw",
    "FlipMatrix",
    "ContextFlips",
    "ColumnRates",
    "ReplayOracle",
    "PoolOracle",
    "RepeatedMeasurements",
    "PoolReport",
    "MomentCheck",
    "moment_z_scores",
    "pooled_covariance",
]
