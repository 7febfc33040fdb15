"""Adversarial schedules: the law switches per round / per call exactly as specified (CSS10 section 2)."""

from __future__ import annotations

import numpy as np
import pytest

from nolo import ParameterError
from nolo._config import Configurable
from nolo.noise import (
    GaussianNoise,
    LaplaceNoise,
    Oracle,
    PerCallSchedule,
    PerRoundSchedule,
    UniformNoise,
    ZeroNoise,
    moment_z_scores,
)

ZERO, GAUSS, UNIF = ZeroNoise(), GaussianNoise(std=2.0), UniformNoise(half_width=1.0)


def test_per_round_cycle_switches_each_round_and_not_within():
    s = PerRoundSchedule([ZERO, GAUSS, UNIF], order="cycle")
    for t in range(9):
        for c in range(5):
            assert s.component(t, c) is [ZERO, GAUSS, UNIF][t % 3]


def test_per_call_cycle_switches_each_call():
    s = PerCallSchedule([ZERO, GAUSS, UNIF], order="cycle")
    for t in range(4):
        for c in range(9):
            assert s.component(t, c) is [ZERO, GAUSS, UNIF][c % 3]


def test_random_orders_are_deterministic_uniform_and_respect_their_granularity():
    k, rounds = 3, 6000
    models = [ZERO, GAUSS, UNIF]
    per_round = PerRoundSchedule(models, order="random", seed=4)
    idx = np.array([models.index(per_round.component(t, 0)) for t in range(rounds)])
    # same law for every call of a round
    assert all(per_round.component(t, c) is per_round.component(t, 0) for t in range(50) for c in range(6))
    # reproducible, and a different seed gives a different sequence
    again = np.array([models.index(PerRoundSchedule(models, order="random", seed=4).component(t)) for t in range(rounds)])
    np.testing.assert_array_equal(idx, again)
    other = np.array([models.index(PerRoundSchedule(models, order="random", seed=5).component(t)) for t in range(rounds)])
    assert np.mean(idx != other) > 0.5
    # uniform frequencies: binomial z within 4
    counts = np.bincount(idx, minlength=k)
    se = np.sqrt(rounds * (1 / k) * (1 - 1 / k))
    assert np.all(np.abs(counts - rounds / k) <= 4 * se), counts
    # not a cycle: consecutive rounds repeat a component about 1/k of the time
    rep = np.mean(idx[1:] == idx[:-1])
    assert abs(rep - 1 / k) <= 4 * np.sqrt((1 / k) * (1 - 1 / k) / (rounds - 1))

    per_call = PerCallSchedule(models, order="random", seed=4)
    calls = np.array([[models.index(per_call.component(t, c)) for c in range(40)] for t in range(150)])
    assert len(np.unique(calls[0])) == k  # changes within a round
    counts = np.bincount(calls.ravel(), minlength=k)
    n = calls.size
    assert np.all(np.abs(counts - n / k) <= 4 * np.sqrt(n * (1 / k) * (1 - 1 / k))), counts
    # the call pattern differs between rounds (the hash includes the round)
    assert not np.array_equal(calls[0], calls[1])


def test_oracle_applies_the_per_round_law():
    x = np.array([1.0, -2.0])
    s = PerRoundSchedule([ZERO, GAUSS])
    rng = np.random.default_rng(0)
    clean = Oracle(x, s, rng, round=0).query(4)
    np.testing.assert_array_equal(clean, np.tile(x, (4, 1)))
    o = Oracle(x, s, rng, round=1)
    for _ in range(3):
        assert np.all(o.query(2) != x)
    np.testing.assert_array_equal(Oracle(x, s, rng, round=2).query(1), x[None, :])


def test_oracle_advances_the_call_index_per_query_call():
    x = np.array([0.5, 0.5, 0.5])
    o = Oracle(x, PerCallSchedule([ZERO, GAUSS]), np.random.default_rng(1), round=7)
    for c in range(8):
        copies = o.query(3)
        if c % 2 == 0:
            np.testing.assert_array_equal(copies, np.tile(x, (3, 1)))
        else:
            assert np.all(copies != x)
    # query(0) does not advance the call index
    o.query(0)
    np.testing.assert_array_equal(o.query(1), x[None, :])


def test_covariance_defined_only_when_components_agree():
    # three different laws with the same covariance I: N(0, I), U[-sqrt3, sqrt3], Laplace(1/sqrt2)
    same = [GaussianNoise(1.0), UniformNoise(np.sqrt(3.0)), LaplaceNoise(1 / np.sqrt(2.0))]
    for cls in (PerRoundSchedule, PerCallSchedule):
        np.testing.assert_allclose(cls(same).covariance(3), np.eye(3), atol=1e-12)
        with pytest.raises(ParameterError, match=r"covariance is undefined .* components"):
            cls([ZERO, GAUSS]).covariance(2)
        with pytest.raises(ParameterError, match=r"models\[1\]"):
            cls([ZERO, GAUSS]).mean_sq_norm(2)
    # with round/call: the law in force
    np.testing.assert_array_equal(PerRoundSchedule([ZERO, GAUSS]).covariance(2, round=1), 4 * np.eye(2))
    np.testing.assert_array_equal(PerRoundSchedule([ZERO, GAUSS]).covariance(2, round=2), np.zeros((2, 2)))
    np.testing.assert_array_equal(PerCallSchedule([ZERO, GAUSS]).covariance(2, round=0, call=3), 4 * np.eye(2))


def test_switching_noise_has_mean_zero_and_the_common_covariance():
    """Per-call switching among three laws with covariance I: copies from the oracle have mean x and covariance I."""
    same = [GaussianNoise(1.0), UniformNoise(np.sqrt(3.0)), LaplaceNoise(1 / np.sqrt(2.0))]
    x = np.array([3.0, -1.0, 0.0])
    o = Oracle(x, PerCallSchedule(same, order="random", seed=9), np.random.default_rng(2), round=3)
    copies = np.concatenate([o.query(1) for _ in range(60_000)])
    check = moment_z_scores(copies, np.eye(3), mean=x)
    assert check.passes(4.0), (check.mean_z, check.cov_z)


def test_schedule_validation_names_the_parameter():
    with pytest.raises(ParameterError, match="models must be a non-empty list"):
        PerRoundSchedule([]).validate()
    with pytest.raises(ParameterError, match=r"models\[1\] must be a NoiseModel"):
        PerCallSchedule([ZERO, "gauss"]).validate()
    with pytest.raises(ParameterError, match="order must be one of 'cycle', 'random'"):
        PerRoundSchedule([ZERO], order="sequential").validate()
    with pytest.raises(ParameterError, match="seed must be an integer >= 0"):
        PerRoundSchedule([ZERO], order="random", seed=-1).component(0)
    with pytest.raises(ParameterError, match="round must be an integer >= 0"):
        PerRoundSchedule([ZERO]).component(-1)
    # a component's bad parameter surfaces with its own name
    with pytest.raises(ParameterError, match="std must be >= 0"):
        PerRoundSchedule([ZERO, GaussianNoise(-1.0)]).sample(0, 2, 2, round=0)


def test_schedule_config_round_trip_and_reproducibility():
    s = PerCallSchedule([GaussianNoise(std=[1.0, 2.0]), UniformNoise(0.5)], order="random", seed=3)
    clone = Configurable.from_config(s.to_config())
    for c in range(6):
        np.testing.assert_array_equal(clone.sample(5, 4, 2, round=1, call=c), s.sample(5, 4, 2, round=1, call=c))
