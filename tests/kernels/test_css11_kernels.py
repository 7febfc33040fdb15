"""CSS11 surrogate kernels: eq. (5) (diagonal and rotated full Sigma) and App. E eq. (16)/(17) (variance-corrected)."""

import math

import numpy as np
import pytest
from scipy.integrate import quad

from nolo import NumericalError, ParameterError
from nolo.papers.css11._common import example_covariance, mixed_noise, zscores
from nolo.kernels.radial import (
    RadialKernelApproximation,
    approx_radial_kernel,
    log_radial_surrogate,
    radial_surrogate,
)
from nolo.kernels.surrogate import GaussianSurrogateKernel, check_noise_covariance


def test_gaussian_surrogate_hand_value_and_gram_shapes():
    k = GaussianSurrogateKernel(width=2.0, noise_cov=0.5)
    # R^2 = (2 / 1)^(1/2), exponent -(1)^2 / (2 - 1)
    assert k.surrogate([[0.0]], [[1.0]])[0, 0] == pytest.approx(math.sqrt(2.0) * math.exp(-1.0), rel=1e-14)
    assert k.original([[0.0]], [[1.0]])[0, 0] == pytest.approx(math.exp(-0.5), rel=1e-14)
    A, B = np.random.default_rng(0).standard_normal((2, 5, 3))
    kk = GaussianSurrogateKernel(width=3.0, noise_cov=[0.1, 0.2, 0.3])
    G = kk.surrogate(A, B)
    assert G.shape == (5, 5)
    np.testing.assert_allclose(np.diag(G), kk.surrogate_pairs(A, B), rtol=1e-12)
    assert kk.r_squared(3) == pytest.approx(np.prod(np.sqrt(3.0 / (3.0 - 2 * np.array([0.1, 0.2, 0.3])))))


@pytest.mark.parametrize("v,t", [(0.2, 0.7), (0.8, -1.1), (1.4, 0.3)])
def test_eq7_corrected_one_dimensional_integral(v, t):
    """Per coordinate, E_z[(s^2/(s^2-2v))^(1/2) exp(-(t-z)^2/(s^2-2v))] = exp(-t^2/s^2) with z ~ N(0, v) (E11)."""
    s2 = 3.0
    f = lambda z: np.exp(-z * z / (2 * v)) / math.sqrt(2 * math.pi * v) * math.sqrt(s2 / (s2 - 2 * v)) * np.exp(  # noqa: E731
        -((t - z) ** 2) / (s2 - 2 * v))
    assert quad(f, -np.inf, np.inf, epsabs=0, epsrel=1e-13)[0] == pytest.approx(math.exp(-t * t / s2), rel=1e-10)
    k = GaussianSurrogateKernel(width=s2, noise_cov=v)
    printed = quad(lambda z: f(z) * math.sqrt(v / s2), -np.inf, np.inf)[0]  # density normalised with s^2 (as printed)
    assert abs(printed - math.exp(-t * t / s2)) > 0.05
    assert k.validate(1) is None


@pytest.mark.parametrize("v,t", [(0.2, 0.7), (0.8, -1.1), (1.4, 0.3)])
def test_eq7_corrected_closed_form_and_monte_carlo(v, t):
    """E11 checked without quadrature: the Gaussian convolution identity and the library kernel by Monte Carlo.

    For z ~ N(0, v) and c > 0, E exp(-(t - z)^2 / c) = sqrt(c / (c + 2v)) exp(-t^2 / (c + 2v)) (complete the
    square).  With c = s^2 - 2v the corrected per-coordinate factor sqrt(s^2 / (s^2 - 2v)) cancels the first
    term and c + 2v = s^2, so the expectation is exp(-t^2/s^2) exactly.
    """
    s2 = 3.0
    c = s2 - 2 * v
    closed = math.sqrt(s2 / c) * math.sqrt(c / (c + 2 * v)) * math.exp(-t * t / (c + 2 * v))
    assert closed == pytest.approx(math.exp(-t * t / s2), rel=1e-14)
    # the kernel object, by Monte Carlo: k_hat(t, 0 + z) averages to k(t, 0)
    rng = np.random.default_rng(11)
    z = rng.standard_normal(400_000) * math.sqrt(v)
    k = GaussianSurrogateKernel(width=s2, noise_cov=v)
    vals = k.surrogate_pairs(np.full((z.size, 1), t), z[:, None])
    assert abs(zscores(vals, math.exp(-t * t / s2))[0]) <= 4


def test_eq7_printed_per_coordinate_factor_fails_negative_control():
    """The printed eq. (7) normalises every coordinate by R^(2/d) (the geometric mean of the factors); for
    unequal variances a coordinate's surrogate is then biased: z far beyond any noise level, while the corrected
    factor (the library's) is unbiased on the same draws."""
    s2, var, t = 3.0, np.array([0.2, 1.4]), 0.5
    factors = np.sqrt(s2 / (s2 - 2 * var))
    printed_factor = float(np.prod(factors)) ** (1.0 / var.size)  # R^(2/d)
    rng = np.random.default_rng(12)
    z = rng.standard_normal(200_000) * math.sqrt(var[0])
    core = np.exp(-((t - z) ** 2) / (s2 - 2 * var[0]))
    target = math.exp(-t * t / s2)
    assert abs(zscores(factors[0] * core, target)[0]) <= 4
    assert abs(zscores(printed_factor * core, target)[0]) >= 20
    lib = GaussianSurrogateKernel(width=s2, noise_cov=var)
    X = np.column_stack([z, np.zeros_like(z)])
    A = np.tile([t, 0.0], (z.size, 1))
    # the library's 2-d kernel factorises into the corrected per-coordinate factors
    np.testing.assert_allclose(lib.surrogate_pairs(A, X), factors[0] * core * factors[1], rtol=1e-12)


def test_gaussian_surrogate_unbiased_diagonal_and_full_and_naive_biased():
    rng = np.random.default_rng(5)
    n, s2 = 200_000, 3.0
    a = np.array([0.3, -0.2, 0.5, 0.1])
    x = np.array([-0.4, 0.6, 0.2, 0.9])
    target = math.exp(-np.sum((a - x) ** 2) / s2)
    var = np.array([0.2, 0.5, 0.8, 1.2])
    kd = GaussianSurrogateKernel(width=s2, noise_cov=var)
    Xd = x + rng.standard_normal((n, 4)) * np.sqrt(var)
    A = np.tile(a, (n, 1))
    assert abs(zscores(kd.surrogate_pairs(A, Xd), target)[0]) <= 4
    assert abs(zscores(kd.original_pairs(A, Xd), target)[0]) >= 5
    Sigma = example_covariance(4, [0.0025, 0.14, 0.47, 1.2], seed=5)
    kf = GaussianSurrogateKernel(width=s2, noise_cov=Sigma)
    Xf = x + mixed_noise(rng, n, Sigma, "gaussian")
    assert abs(zscores(kf.surrogate_pairs(A, Xf), target)[0]) <= 4
    # the rotation: k_hat(a, b) under Sigma equals the diagonal surrogate with the eigenvalues on Q^T a, Q^T b
    Q = kf.rotation(4)
    kl = GaussianSurrogateKernel(width=s2, noise_cov=kf.noise_variances(4))
    np.testing.assert_allclose(kf.surrogate(Xf[:5], Xf[5:9]), kl.surrogate(Xf[:5] @ Q, Xf[5:9] @ Q), rtol=1e-12)


def test_gaussian_surrogate_validation():
    with pytest.raises(ParameterError, match="2 \\* max"):
        GaussianSurrogateKernel(width=1.0, noise_cov=0.5).surrogate([[0.0]], [[1.0]])  # equality: strict
    with pytest.raises(ParameterError, match="width"):
        GaussianSurrogateKernel(width=-1.0, noise_cov=0.1).validate(2)
    with pytest.raises(ParameterError, match="symmetric"):
        GaussianSurrogateKernel(width=3.0, noise_cov=[[1.0, 0.5], [0.0, 1.0]]).validate(2)
    with pytest.raises(ParameterError, match="positive semidefinite"):
        GaussianSurrogateKernel(width=30.0, noise_cov=[[1.0, 2.0], [2.0, 1.0]]).validate(2)
    with pytest.raises(ParameterError, match="d=3"):
        GaussianSurrogateKernel(width=3.0, noise_cov=[0.1, 0.2]).validate(3)
    with pytest.raises(ParameterError, match=">= 0"):
        check_noise_covariance(-1.0, 2)
    with pytest.raises(NumericalError, match="overflows"):
        GaussianSurrogateKernel(width=1.0, noise_cov=0.4999).validate(5000)


def test_radial_test_vectors_of_math_notes_item9():
    np.testing.assert_allclose(radial_surrogate([0.0, 10.0], 3, 2.0, 0.3), [1.1140266764954077, 0.23006391296822523],
                               rtol=1e-12)
    assert approx_radial_kernel(0.5, 3, 2.0) == pytest.approx(0.774024027544796, rel=1e-14)


def test_radial_closed_form_equals_integral():
    for d in (3, 10, 400):
        for c in (2.0, 4.0):
            for r2 in (0.0, 1.0, 37.0, 400.0):
                ref = quad(lambda u: d * math.exp(-u * r2 - u * d), 0, c / d, epsabs=0, epsrel=1e-13)[0]
                assert approx_radial_kernel(r2, d, c) == pytest.approx(ref, rel=1e-12)
                g = 1 / (1 + r2 / d)
                assert 1 - math.exp(-c) - 1e-15 <= approx_radial_kernel(r2, d, c) / g <= 1 + 1e-15


def _scipy_surrogate(r2, d, c, v):
    """Adaptive quad of eq. (17) in log space with breakpoints around the integrand's mode."""
    U = c / d
    phi = lambda u: math.log(d) - 0.5 * d * math.log1p(-2 * v * u) - u * r2 / (1 - 2 * v * u) - u * d  # noqa: E731
    grid = np.linspace(0, U, 4001)
    vals = np.array([phi(u) for u in grid])
    m, um = vals.max(), grid[vals.argmax()]
    pts = sorted({p for k in range(-40, 1) for p in (um - U * 2.0**k, um + U * 2.0**k) if 0 < p < U})
    val = quad(lambda u: math.exp(phi(u) - m), 0, U, epsabs=0, epsrel=1e-13, limit=2000, points=pts)[0]
    return m + math.log(val)


@pytest.mark.parametrize("d", [1, 3, 10, 400])
def test_radial_surrogate_matches_scipy_quad_to_1e8(d):
    for v in (0.01, 0.3, 1.0):
        for frac in (0.1, 0.5, 0.99):
            c = frac * d / (4 * v)
            r2 = np.array([0.0, 1e-3, 0.5, 3.0, 50.0, 5000.0, 1e7])
            ours = log_radial_surrogate(r2, d, c, v)
            for r, lg in zip(r2, ours):
                assert abs(math.expm1(lg - _scipy_surrogate(r, d, c, v))) <= 1e-8, (d, v, c, r)


def test_radial_surrogate_vectorised_shapes_and_zero_noise():
    r2 = np.random.default_rng(1).uniform(0, 30, (4, 5))
    out = radial_surrogate(r2, 3, 2.0, 0.2)
    assert out.shape == (4, 5)
    assert out[1, 2] == pytest.approx(float(radial_surrogate(r2[1, 2], 3, 2.0, 0.2)), rel=1e-15)
    np.testing.assert_allclose(radial_surrogate(r2, 3, 2.0, 0.0), approx_radial_kernel(r2, 3, 2.0), rtol=1e-13)


def test_radial_surrogate_unbiased_with_variance_and_biased_as_printed():
    rng = np.random.default_rng(9)
    n, d, v, c = 200_000, 3, 0.3, 1.2
    a, x = np.array([0.2, -0.4, 0.3]), np.array([-0.5, 0.1, 0.6])
    target = approx_radial_kernel(np.sum((x - a) ** 2), d, c)
    R2 = np.sum((x + math.sqrt(v) * rng.standard_normal((n, d)) - a) ** 2, axis=1)
    assert abs(zscores(radial_surrogate(R2, d, c, v), target)[0]) <= 4
    # E12: reading sigma (the standard deviation) where the variance is meant is biased
    assert abs(zscores(radial_surrogate(R2, d, c, math.sqrt(v)), target)[0]) >= 5


def test_radial_lemma7_bound_and_c_validation():
    for d, v, c in ((3, 0.3, 2.0), (10, 1.0, 2.4), (400, 0.5, 150.0)):
        k = RadialKernelApproximation(c=c, noise_variance=v)
        assert radial_surrogate(0.0, d, c, v) <= k.surrogate_norm_bound(d)
    with pytest.raises(ParameterError, match=r"d / \(4 sigma\^2\)"):
        radial_surrogate(1.0, 3, 2.5, 0.3)  # 3 / 1.2 = 2.5: c must be strictly below
    with pytest.raises(ParameterError, match="c must be"):
        RadialKernelApproximation(c=0.0, noise_variance=0.1).validate(3)
    with pytest.raises(ParameterError, match="r2"):
        radial_surrogate(-1.0, 3, 1.0, 0.1)
    with pytest.raises(NumericalError, match="overflows"):
        radial_surrogate(0.0, 40000, 9999.0, 1.0)
