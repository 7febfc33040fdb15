"""Noise laws: zero mean and the stated covariance by Monte Carlo; validation; reproducibility.

Tolerance: every entry of the sample mean and of the sample second-moment
matrix must be within 4 of its own standard error (empirical fourth moments,
see nolo.noise.diagnostics).  With d = 3 there are 9 scores per model, so a
correct law fails with probability < 9 * 6.4e-5 for an arbitrary seed; the
seeds are fixed, so the tests are deterministic.  A negative control shows
the check detects a 3% error in a variance.
"""

from __future__ import annotations

import numpy as np
import pytest

from nolo import ParameterError
from nolo._config import Configurable
from nolo.noise import (
    GaussianNoise,
    LaplaceNoise,
    StudentTNoise,
    UniformNoise,
    ZeroNoise,
    moment_z_scores,
    pooled_covariance,
)

N = 200_000
D = 3

FULL_COV = np.array([[2.0, 0.8, -0.5], [0.8, 1.0, 0.3], [-0.5, 0.3, 1.5]])
_v = np.array([[1.0, 2.0, 0.5], [0.0, 1.0, -1.0]])
SINGULAR_COV = _v.T @ _v  # rank 2

MODELS = {
    "gauss-iso": (GaussianNoise(std=0.7), 0.49 * np.eye(D)),
    "gauss-diag": (GaussianNoise(std=[0.5, 1.0, 2.0]), np.diag([0.25, 1.0, 4.0])),
    "gauss-full": (GaussianNoise(cov=FULL_COV), FULL_COV),
    "gauss-singular": (GaussianNoise(cov=SINGULAR_COV), SINGULAR_COV),
    "uniform-iso": (UniformNoise(half_width=1.5), np.eye(D) * 1.5**2 / 3),
    "uniform-diag": (UniformNoise(half_width=[0.3, 1.0, 3.0]), np.diag([0.09, 1.0, 9.0]) / 3),
    "laplace-iso": (LaplaceNoise(scale=0.8), np.eye(D) * 2 * 0.64),
    "laplace-diag": (LaplaceNoise(scale=[1.0, 0.1, 2.0]), np.diag([2.0, 0.02, 8.0])),
    "student-iso": (StudentTNoise(df=10, scale=1.0), np.eye(D) * 10 / 8),
    "student-diag": (StudentTNoise(df=12, scale=[1.0, 0.5, 2.0]), np.diag([1.0, 0.25, 4.0]) * 12 / 10),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_mean_zero_and_stated_covariance(name):
    model, cov = MODELS[name]
    np.testing.assert_allclose(model.covariance(D), cov, rtol=1e-12, atol=1e-12)
    z = model.sample(np.random.default_rng(1234), N, D)
    assert z.shape == (N, D) and z.dtype == np.float64
    check = moment_z_scores(z, cov)
    assert check.passes(4.0), (name, check.mean_z, check.cov_z)


def test_moment_check_detects_a_wrong_variance():
    """Negative control: claiming variance 1.03 for N(0, 1) noise fails the 4-SE check."""
    z = GaussianNoise(std=1.0).sample(np.random.default_rng(5), N, D)
    assert moment_z_scores(z, np.eye(D)).passes(4.0)
    assert not moment_z_scores(z, 1.03 * np.eye(D)).passes(4.0)
    assert not moment_z_scores(z + 0.02, np.eye(D)).passes(4.0)  # a mean shift of 0.02 sd


def test_variance_and_mean_sq_norm():
    g = GaussianNoise(std=[0.5, 1.0, 2.0])
    np.testing.assert_allclose(g.variance(3), [0.25, 1.0, 4.0])
    assert g.mean_sq_norm(3) == pytest.approx(5.25)
    assert UniformNoise(3.0).mean_sq_norm(4) == pytest.approx(4 * 3.0)
    assert StudentTNoise(df=3, scale=2.0).variance(1)[0] == pytest.approx(4 * 3)
    assert LaplaceNoise(0.5).variance(2)[1] == pytest.approx(0.5)


def test_zero_noise_is_exactly_zero():
    z = ZeroNoise().sample(np.random.default_rng(0), 10, 4)
    assert z.shape == (10, 4) and not np.any(z)
    assert not np.any(ZeroNoise().covariance(4))
    assert not np.any(GaussianNoise(std=0.0).sample(0, 5, 2))


def test_student_t_heavy_tail_variance_with_low_df():
    """df = 3 (finite variance, infinite 4th moment): the variance is scale^2 df/(df-2) = 3; check mean only loosely."""
    model = StudentTNoise(df=3, scale=1.0)
    assert model.covariance(1)[0, 0] == pytest.approx(3.0)
    z = model.sample(np.random.default_rng(3), N, 1)[:, 0]
    se = np.sqrt(3.0 / N)  # exact SE of the mean
    assert abs(z.mean()) <= 4 * se


@pytest.mark.parametrize("df", [2, 2.0, 1.5, 0.5, 0, -3, float("nan"), float("inf")])
def test_student_t_rejects_df_at_most_two(df):
    with pytest.raises(ParameterError, match=r"df must be .*> 2"):
        StudentTNoise(df=df).validate()
    with pytest.raises(ParameterError, match="df"):
        StudentTNoise(df=df).sample(0, 1, 1)


def test_same_seed_same_draws_and_seeds_differ():
    for model, _ in MODELS.values():
        a = model.sample(np.random.default_rng(7), 50, D)
        b = model.sample(np.random.default_rng(7), 50, D)
        c = model.sample(np.random.default_rng(8), 50, D)
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
    # an int seed is accepted and reproducible
    np.testing.assert_array_equal(GaussianNoise().sample(11, 4, 2), GaussianNoise().sample(11, 4, 2))


def test_empty_sample_and_shapes():
    assert GaussianNoise().sample(0, 0, 5).shape == (0, 5)
    assert UniformNoise([1.0, 2.0]).sample(0, 3, 2).shape == (3, 2)


def test_config_round_trip_reproduces_the_law():
    for model, _ in MODELS.values():
        clone = Configurable.from_config(model.to_config())
        assert type(clone) is type(model)
        np.testing.assert_array_equal(clone.sample(3, 20, D), model.sample(3, 20, D))
        np.testing.assert_array_equal(clone.covariance(D), model.covariance(D))


def test_covariance_is_a_fresh_copy():
    g = GaussianNoise(cov=FULL_COV.copy())
    c = g.covariance(3)
    c[0, 0] = 99.0
    assert g.covariance(3)[0, 0] == 2.0


def test_full_covariance_cache_follows_set_params():
    g = GaussianNoise(cov=FULL_COV)
    g.sample(0, 2, 3)
    g.set_params(cov=np.eye(2))
    np.testing.assert_array_equal(g.covariance(2), np.eye(2))
    assert g.sample(0, 4, 2).shape == (4, 2)


@pytest.mark.parametrize(
    "model, d, pattern",
    [
        (GaussianNoise(std=-1.0), 2, r"std must be >= 0"),
        (GaussianNoise(std=[1.0, -0.1]), 2, r"std must be >= 0"),
        (GaussianNoise(std=[1.0, 2.0]), 3, r"std has 2 per-coordinate values .* d=3"),
        (GaussianNoise(std=float("nan")), 2, r"std must contain only finite"),
        (GaussianNoise(std=[[1.0]]), 1, r"std must have 0 or 1 dimension"),
        (GaussianNoise(std=None), 2, r"std must be given"),
        (GaussianNoise(cov=[[1.0, 0.5], [0.4, 1.0]]), 2, r"cov must be symmetric"),
        (GaussianNoise(cov=[[1.0, 2.0], [2.0, 1.0]]), 2, r"cov must be positive semi-definite.*-1"),
        (GaussianNoise(cov=np.eye(3)), 2, r"cov has shape \(3, 3\) .* d=2"),
        (GaussianNoise(cov=np.ones((2, 3))), 2, r"cov must be a square"),
        (GaussianNoise(cov=[1.0, 2.0]), 2, r"cov must have 2 dimension"),
        (GaussianNoise(cov=[[np.inf, 0], [0, 1]]), 2, r"cov must contain only finite"),
        (GaussianNoise(std=2.0, cov=np.eye(2)), 2, r"either std or cov"),
        (UniformNoise(half_width=-0.5), 2, r"half_width must be >= 0"),
        (UniformNoise(half_width=[1.0]), 2, r"half_width has 1 per-coordinate"),
        (LaplaceNoise(scale="big"), 2, r"scale must be convertible"),
        (LaplaceNoise(scale=[1.0, -1.0]), 2, r"scale must be >= 0"),
        (StudentTNoise(df=5, scale=-1.0), 2, r"scale must be >= 0"),
    ],
)
def test_bad_parameters_are_named(model, d, pattern):
    with pytest.raises(ParameterError, match=pattern):
        model.sample(np.random.default_rng(0), 3, d)
    with pytest.raises(ParameterError, match=pattern):
        model.covariance(d)


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(size=-1, d=2), r"size must be an integer >= 0"),
        (dict(size=2.5, d=2), r"size must be an integer"),
        (dict(size=2, d=0), r"d must be an integer >= 1"),
        (dict(size=2, d=2, round=-1), r"round must be an integer >= 0"),
        (dict(size=2, d=2, call=-2), r"call must be an integer >= 0"),
    ],
)
def test_bad_sample_arguments_are_named(kwargs, pattern):
    size, d = kwargs.pop("size"), kwargs.pop("d")
    with pytest.raises(ParameterError, match=pattern):
        GaussianNoise().sample(np.random.default_rng(0), size, d, **kwargs)


def test_bad_rng_is_named():
    with pytest.raises(ParameterError, match="rng"):
        GaussianNoise().sample("seed", 1, 1)


def test_pooled_covariance_recovers_the_noise_covariance():
    """Repeated measurements of 400 different items, 5 copies each: the within-item scatter estimates Sigma."""
    rng = np.random.default_rng(21)
    x = rng.normal(size=(400, 1, D)) * 10.0  # items far apart: the between-item spread must not leak in
    noise = GaussianNoise(cov=FULL_COV)
    data = x + noise.sample(rng, 400 * 5, D).reshape(400, 5, D)
    est = pooled_covariance(data)
    # SE of a pooled covariance entry with 1600 dof: sqrt((S_jj S_kk + S_jk^2) / dof)
    dof = 400 * 4
    se = np.sqrt((np.outer(np.diag(FULL_COV), np.diag(FULL_COV)) + FULL_COV**2) / dof)
    assert np.all(np.abs(est - FULL_COV) <= 4 * se)
    # varying numbers of copies, items with a single copy skipped
    items = [data[i, : 1 + i % 5] for i in range(400)]
    est2 = pooled_covariance(items)
    dof2 = sum(len(a) - 1 for a in items)
    se2 = se * np.sqrt(dof / dof2)
    assert np.all(np.abs(est2 - FULL_COV) <= 4 * se2)
    with pytest.raises(ParameterError, match="2 or more copies"):
        pooled_covariance([np.zeros((1, 2))])
