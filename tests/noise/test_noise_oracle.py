"""The oracle A_t (CSS10 section 2) and noisy targets (CSS11 section 2)."""

from __future__ import annotations

import numpy as np
import pytest

from nolo import ParameterError
from nolo.noise import (
    BaseOracle,
    GaussianNoise,
    LaplaceNoise,
    NoisyTarget,
    Oracle,
    StudentTNoise,
    UniformNoise,
    ZeroNoise,
    add_target_noise,
    make_oracle,
)

X = np.array([1.0, -0.5, 2.0])


def _corr_z(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation times sqrt(n): ~N(0, 1) for independent samples."""
    return float(np.corrcoef(a, b)[0, 1] * np.sqrt(a.shape[0]))


def test_query_shapes_and_exact_counts():
    o = Oracle(X, GaussianNoise(0.3), np.random.default_rng(0))
    assert isinstance(o, BaseOracle) and o.d == 3 and o.queries == 0 and o.calls == 0
    sizes = np.random.default_rng(1).geometric(0.4, size=200) - 1  # CSS10-like random degrees, many zeros
    for n in sizes:
        out = o.query(int(n))
        assert out.shape == (n, 3) and out.dtype == np.float64
    assert o.queries == int(sizes.sum())
    assert o.calls == int(np.count_nonzero(sizes))
    assert o.query().shape == (1, 3)  # default n = 1
    assert o.queries == int(sizes.sum()) + 1


def test_query_zero_is_empty_and_counts_nothing():
    o = Oracle(X, GaussianNoise(), np.random.default_rng(0))
    out = o.query(0)
    assert out.shape == (0, 3) and out.dtype == np.float64
    assert o.queries == 0 and o.calls == 0
    # it does not consume randomness either
    a = o.query(2)
    b = Oracle(X, GaussianNoise(), np.random.default_rng(0)).query(2)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n", [-1, 1.5, "2", None, True])
def test_bad_query_size_is_named(n):
    o = Oracle(X, GaussianNoise(), 0)
    with pytest.raises(ParameterError, match=r"n must be an integer >= 0"):
        o.query(n)
    assert o.queries == 0 and o.calls == 0


@pytest.mark.parametrize("noise", [GaussianNoise(0.5), UniformNoise(1.0), LaplaceNoise(0.4), StudentTNoise(8, 0.5)])
def test_copies_are_unbiased_and_independent_within_and_across_calls(noise):
    """20 000 calls of query(2): copies average to x; the two copies of a call, and copies of consecutive calls, are uncorrelated."""
    o = Oracle(X, noise, np.random.default_rng(42))
    calls = np.stack([o.query(2) for _ in range(20_000)])  # (calls, 2, d)
    assert o.queries == 40_000 and o.calls == 20_000
    flat = calls.reshape(-1, 3)
    sd = np.sqrt(noise.variance(3))
    assert np.all(np.abs(flat.mean(axis=0) - X) <= 4 * sd / np.sqrt(flat.shape[0]))
    for j in range(3):
        assert abs(_corr_z(calls[:, 0, j], calls[:, 1, j])) <= 4  # same call
        assert abs(_corr_z(calls[:-1, 1, j], calls[1:, 0, j])) <= 4  # consecutive calls
    # and different coordinates of one copy are uncorrelated for these diagonal laws
    assert abs(_corr_z(flat[:, 0], flat[:, 2])) <= 4


def test_copies_are_x_plus_fresh_noise():
    noise = GaussianNoise(std=[0.1, 1.0, 10.0])
    o = Oracle(X, noise, np.random.default_rng(3))
    got = np.concatenate([o.query(2), o.query(3)])
    rng = np.random.default_rng(3)
    want = X + np.concatenate([noise.sample(rng, 2, 3, call=0), noise.sample(rng, 3, 3, call=1)])
    np.testing.assert_array_equal(got, want)
    assert len({tuple(r) for r in got}) == 5


def test_same_seed_same_copies():
    a = [Oracle(X, LaplaceNoise(1.0), 17).query(k) for k in (1, 2, 3)]
    b = [Oracle(X, LaplaceNoise(1.0), 17).query(k) for k in (1, 2, 3)]
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(Oracle(X, LaplaceNoise(1.0), 18).query(3), a[2])


def test_instance_is_hidden_and_revealed_only_on_request():
    x = X.copy()
    o = Oracle(x, GaussianNoise(1.0), 0)
    public = {k: v for k, v in vars(o).items() if not k.startswith("_")}
    for v in public.values():
        assert not (isinstance(v, np.ndarray) and v.shape == X.shape and np.array_equal(v, X))
    x[0] = 100.0  # the oracle holds its own copy
    np.testing.assert_array_equal(o.reveal(), X)
    r = o.reveal()
    r[1] = 7.0
    np.testing.assert_array_equal(o.reveal(), X)
    assert o.queries == 0  # revealing is not a query
    np.testing.assert_array_equal(Oracle(X, ZeroNoise(), 0).query(2), np.tile(X, (2, 1)))


@pytest.mark.parametrize(
    "x, noise, kwargs, pattern",
    [
        (np.ones((2, 2)), GaussianNoise(), {}, r"x must have 1 dimension"),
        (np.array([1.0, np.nan]), GaussianNoise(), {}, r"x must contain only finite"),
        (np.array([]), GaussianNoise(), {}, r"x must be a non-empty"),
        (X, "gaussian", {}, r"noise must be a nolo NoiseModel"),
        (X, GaussianNoise(std=[1.0, 2.0]), {}, r"std has 2 per-coordinate values .* d=3"),
        (X, GaussianNoise(), {"round": -1}, r"round must be an integer >= 0"),
        (X, GaussianNoise(), {"rng": -5}, r"rng must be"),
    ],
)
def test_bad_oracle_arguments_are_named(x, noise, kwargs, pattern):
    rng = kwargs.pop("rng", 0)
    with pytest.raises(ParameterError, match=pattern):
        Oracle(x, noise, rng, **kwargs)


def test_make_oracle():
    o = make_oracle(X, GaussianNoise(), 5, round=4)
    assert isinstance(o, Oracle) and o.round == 4
    np.testing.assert_array_equal(o.query(2), Oracle(X, GaussianNoise(), 5, round=4).query(2))


# -- noisy targets -------------------------------------------------------------------


def test_noisy_target_is_unbiased_with_the_stated_variance():
    y = np.full(100_000, 1.5)
    target = NoisyTarget(UniformNoise(half_width=0.9))
    assert target.variance == pytest.approx(0.27)
    noisy = target.corrupt(y, np.random.default_rng(8))
    assert noisy.shape == y.shape
    n = y.shape[0]
    assert abs(noisy.mean() - 1.5) <= 4 * np.sqrt(0.27 / n)
    # variance: SE of the sample variance from the uniform's 4th moment (a^4/5)
    m4 = 0.9**4 / 5
    assert abs(np.mean((noisy - 1.5) ** 2) - 0.27) <= 4 * np.sqrt((m4 - 0.27**2) / n)
    # entries independent
    assert abs(_corr_z(noisy[:-1], noisy[1:])) <= 4


def test_noisy_target_scalar_and_reproducible():
    t = NoisyTarget(GaussianNoise(0.5))
    a = t.corrupt(2.0, np.random.default_rng(3))
    assert isinstance(a, float)
    assert a == t.corrupt(2.0, np.random.default_rng(3))
    assert a == add_target_noise(2.0, GaussianNoise(0.5), np.random.default_rng(3))
    assert NoisyTarget(ZeroNoise()).corrupt(-1.25, 0) == -1.25


def test_noisy_target_validation():
    with pytest.raises(ParameterError, match="noise must be a nolo NoiseModel"):
        NoisyTarget(0.5).corrupt(1.0, 0)
    with pytest.raises(ParameterError, match="y must have 0 or 1 dimension"):
        NoisyTarget(GaussianNoise()).corrupt(np.ones((2, 2)), 0)
    with pytest.raises(ParameterError, match="y must contain only finite"):
        NoisyTarget(GaussianNoise()).corrupt(float("inf"), 0)
    with pytest.raises(ParameterError, match="std has 2 per-coordinate values"):
        NoisyTarget(GaussianNoise(std=[1.0, 2.0])).corrupt(1.0, 0)


def test_oracle_freezes_the_law_it_was_built_with():
    noise = GaussianNoise(std=1.0)
    o = Oracle(X, noise, np.random.default_rng(4))
    noise.set_params(std=100.0)  # a later change does not leak into an oracle already serving a round
    ref = X + GaussianNoise(std=1.0).sample(np.random.default_rng(4), 3, 3)
    np.testing.assert_array_equal(o.query(3), ref)
