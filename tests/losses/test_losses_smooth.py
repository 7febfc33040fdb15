"""Losses: closed forms, series of l', l'_+, margins and validation."""

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import erf, erfi, eval_hermite

from nolo import NumericalError, ParameterError
from nolo._config import Configurable
from nolo.losses import (
    LOSSES,
    Absolute,
    Exponential,
    Hinge,
    Logistic,
    Loss,
    NoSeriesError,
    SmoothedAbsolute,
    SmoothedHinge,
    Squared,
    available_losses,
    get_loss,
    ierfc,
)

SMOOTH = [
    Squared(),
    Exponential(),
    Logistic(),
    SmoothedHinge(0.5),
    SmoothedHinge(1.0),
    SmoothedHinge(2.0),
    SmoothedAbsolute(0.5),
    SmoothedAbsolute(1.0),
    SmoothedAbsolute(2.0),
]
IDS = [f"{type(l).__name__}{getattr(l, 's', '')}" for l in SMOOTH]


def test_registry_names_and_kinds():
    assert available_losses() == [
        "squared", "exponential", "logistic", "smoothed_hinge", "smoothed_absolute", "hinge", "absolute"
    ]
    kinds = {name: cls.kind for name, cls in LOSSES.items()}
    assert kinds == {
        "squared": "regression", "exponential": "classification", "logistic": "classification",
        "smoothed_hinge": "classification", "smoothed_absolute": "regression",
        "hinge": "classification", "absolute": "regression",
    }
    assert isinstance(get_loss("smoothed_hinge", s=3.0), SmoothedHinge) and get_loss("smoothed_hinge", s=3.0).s == 3.0
    loss = Logistic()
    assert get_loss(loss) is loss


@pytest.mark.parametrize("loss", SMOOTH, ids=IDS)
def test_series_matches_derivative_inside_radius(loss):
    # where the float64 partial sum is well conditioned (docs/math.md, item 10)
    lim = min(0.8 * loss.radius, 2.0 / max(1.0, float(getattr(loss, "s", 1.0))))
    z = np.linspace(-lim, lim, 17)
    got = np.array([loss.series.value(float(t), n_terms=400) for t in z])
    np.testing.assert_allclose(got, loss.derivative(z), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("loss", SMOOTH, ids=IDS)
def test_closed_form_is_antiderivative(loss):
    for a, b in [(-3.0, -0.5), (-1.0, 1.3), (0.2, 4.0)]:
        integral, err = quad(lambda t: float(loss.derivative(t)), a, b, epsabs=1e-13, epsrel=1e-13)
        assert loss.value(b) - loss.value(a) == pytest.approx(integral, abs=1e-10)


@pytest.mark.parametrize("loss", SMOOTH, ids=IDS)
def test_finite_difference_derivative(loss):
    z = np.linspace(-5, 5, 41)
    h = 1e-5
    fd = (loss.value(z + h) - loss.value(z - h)) / (2 * h)
    np.testing.assert_allclose(fd, loss.derivative(z), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("loss", SMOOTH, ids=IDS)
def test_derivative_plus_is_the_positive_series(loss):
    for a in [0.0, 0.3, 1.1, 0.9 * min(loss.radius, 3.0)]:
        exact = loss.derivative_plus(a)
        assert exact == pytest.approx(loss.series.plus(a), rel=1e-12)
    # l'_+(a) >= |l'(+-a)|
    a = np.linspace(0, 0.9 * min(loss.radius, 3.0), 7)
    assert np.all(loss.derivative_plus(a) >= np.abs(loss.derivative(a)) - 1e-15)
    assert np.all(loss.derivative_plus(a) >= np.abs(loss.derivative(-a)) - 1e-15)


def test_smoothed_hinge_gamma_test_vectors_and_hermite_formula():
    want = [-0.9213503965, 0.2075537487, 0.2075537487, 0.0691845829, -0.0345922915, -0.0345922915, -0.0023061528]
    got = SmoothedHinge(1.0).series.coefficients(6)
    np.testing.assert_allclose(got, want, atol=1e-10)
    for s in (0.5, 2.0, 4.0):
        ser = SmoothedHinge(s).series
        for n in range(1, 40):
            direct = math.exp(-s * s) * s**n * eval_hermite(n - 1, s) / (math.sqrt(math.pi) * math.factorial(n))
            assert ser.coefficient(n) == pytest.approx(direct, rel=1e-11, abs=1e-300)
        # deep coefficients stay finite in log space where g_m = H_m(s)/m! underflows (m ~ 335)
        sg, lg = ser.sign_log(600)
        assert sg in (-1.0, 1.0) and -1e5 < lg < -100


def test_smoothed_hinge_derivative_plus_majorant_and_erratum_e5():
    loss = SmoothedHinge(1.0)
    # docs/math.md, item 10: exact 1.089 / 8.26 vs majorant 1.120 / 111.1
    for a, exact, major in [(0.5, 1.089, 1.120), (2.0, 8.26, 111.1)]:
        maj = (1 + erf(1.0)) / 2 + math.exp(-2.0) / 2 * (erfi(1 + a) - erfi(1.0))
        assert loss.derivative_plus(a) == pytest.approx(exact, abs=5e-3)
        assert maj == pytest.approx(major, rel=2e-3)
        assert loss.derivative_plus(a) <= maj
    # the paper's Example-4 bound 2/(z sqrt(pi)) (e^{z^2} - 1) is false at x = 0.5 (erratum E5)
    assert loss.derivative_plus(0.5) > 2 / (0.5 * math.sqrt(math.pi)) * (math.exp(0.25) - 1)


def test_smoothed_absolute_plus_is_erfi_and_erratum_e4():
    for s in (0.5, 1.0, 2.0):
        loss = SmoothedAbsolute(s)
        for a in (0.2, 1.0, 1.7):
            assert loss.derivative_plus(a) == pytest.approx(erfi(s * a), rel=1e-13)
    # Example 3's bound 1/2 + (e^{z^2}-1)/(z sqrt(pi)) fails at z = 1: erfi(1) = 1.650 > 1.469
    assert SmoothedAbsolute(1.0).derivative_plus(1.0) > 0.5 + (math.e - 1) / math.sqrt(math.pi)


@pytest.mark.parametrize("s", [0.5, 1.0, 3.0])
def test_smoothed_losses_approximate_hinge_and_absolute(s):
    z = np.linspace(-6, 6, 241)
    gap_h = SmoothedHinge(s).value(z) - np.maximum(0, 1 - z)
    gap_a = SmoothedAbsolute(s).value(z) - np.abs(z)
    assert gap_h.min() > -1e-15 and gap_h.max() == pytest.approx(1 / (2 * s * math.sqrt(math.pi)), rel=1e-12)
    assert gap_a.min() > -1e-15 and gap_a.max() == pytest.approx(1 / (s * math.sqrt(math.pi)), rel=1e-12)
    np.testing.assert_allclose(gap_h, ierfc(s * np.abs(z - 1)) / (2 * s), atol=1e-14)
    np.testing.assert_allclose(gap_a, ierfc(s * np.abs(z)) / s, atol=1e-14)
    d = SmoothedHinge(s).derivative(z)
    assert np.all((d >= -1) & (d < 0)) and np.all(np.diff(d) >= 0)
    assert SmoothedHinge(s).derivative(1.0) == -0.5


def _bernoulli(n_max):
    """B_0..B_n_max as Fractions (B_1 = -1/2 convention)."""
    B = [Fraction(1)]
    for m in range(1, n_max + 1):
        B.append(-sum(math.comb(m + 1, k) * B[k] for k in range(m)) / (m + 1))
    return B


def test_logistic_coefficients_bernoulli_and_radius():
    loss = Logistic()
    assert loss.radius == math.pi
    B = _bernoulli(40)
    for k in range(1, 21):
        want = (4**k - 1) * B[2 * k] / math.factorial(2 * k)
        assert loss.series.coefficient(2 * k - 1) == pytest.approx(float(want), rel=1e-13)
        assert loss.series.is_zero(2 * k)
    assert loss.series.coefficient(0) == -0.5
    # |gamma_(2k-1)|^(1/(2k-1)) -> 1/pi: the radius is pi
    n = 401
    assert math.exp(-loss.series.sign_log(n)[1] / n) == pytest.approx(math.pi, rel=2e-2)
    assert loss.derivative_plus(2.0) == pytest.approx(0.5 + 0.5 * math.tan(1.0))
    with pytest.raises(ParameterError, match="radius"):
        loss.derivative_plus(math.pi)


def test_margins_and_gradients():
    # docs/math.md, item 3 targets y l'(y a) at a = 0.57
    assert Exponential().grad_margin(0.57, -1) == pytest.approx(1.768267, abs=1e-6)
    assert Exponential().grad_margin(0.57, 1) == pytest.approx(-0.565525, abs=1e-6)
    assert SmoothedHinge(1.0).grad_margin(0.57, -1) == pytest.approx(0.986801, abs=1e-6)
    assert SmoothedHinge(1.0).grad_margin(0.57, 1) == pytest.approx(-0.728443, abs=1e-6)
    m, y = np.array([0.3, -1.2, 2.0]), np.array([1, -1, -1])
    for loss in (Exponential(), Logistic(), SmoothedHinge(2.0), Hinge()):
        np.testing.assert_allclose(loss.argument(m, y), y * m)
        np.testing.assert_allclose(loss.loss(m, y), loss.value(y * m))
        np.testing.assert_allclose(loss.grad_margin(m, y), y * loss.derivative(y * m))
        # numerically d loss / d margin for the smooth ones
        if loss.has_series:
            h = 1e-6
            np.testing.assert_allclose(
                (loss.loss(m + h, y) - loss.loss(m - h, y)) / (2 * h), loss.grad_margin(m, y), rtol=1e-6
            )
    yr = np.array([0.5, 2.0, -1.0])
    for loss in (Squared(), SmoothedAbsolute(1.5), Absolute()):
        np.testing.assert_allclose(loss.argument(m, yr), m - yr)
        np.testing.assert_allclose(loss.grad_margin(m, yr), loss.derivative(m - yr))
    assert Squared().loss(3.0, 1.0) == 4.0 and Squared().grad_margin(3.0, 1.0) == 4.0
    assert isinstance(Squared().loss(3.0, 1.0), float)


def test_nonsmooth_baselines_have_no_series():
    for loss in (Hinge(), Absolute()):
        assert not loss.has_series
        with pytest.raises(NoSeriesError, match="no Taylor series"):
            loss.series
        with pytest.raises(ParameterError, match="no Taylor series"):
            loss.derivative_plus(1.0)
    z = np.array([-1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(Hinge().value(z), [2, 1, 0, 0])
    np.testing.assert_array_equal(Hinge().derivative(z), [-1, -1, 0, 0])
    np.testing.assert_array_equal(Absolute().value(z), [1, 0, 1, 2])
    np.testing.assert_array_equal(Absolute().derivative(z), [-1, 0, 1, 1])


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), "1", None, True])
def test_sharpness_validation(bad):
    for name in ("smoothed_hinge", "smoothed_absolute"):
        with pytest.raises(ParameterError, match="s must be a real number > 0"):
            get_loss(name, s=bad)
    loss = SmoothedHinge(2.0)
    with pytest.raises(ParameterError):
        loss.set_params(s=bad)
    assert loss.s == 2.0


def test_input_validation_and_numerical_errors():
    with pytest.raises(ParameterError, match="name must be one of"):
        get_loss("huber")
    with pytest.raises(ParameterError, match="bad parameters"):
        get_loss("squared", s=1.0)
    with pytest.raises(ParameterError, match="y must be -1 or \\+1"):
        Logistic().loss(0.3, 0.5)
    with pytest.raises(ParameterError, match="z must contain only finite"):
        Logistic().value(np.nan)
    with pytest.raises(ParameterError, match="a must be >= 0"):
        Exponential().derivative_plus(-0.1)
    with pytest.raises(ParameterError, match="broadcast"):
        Squared().loss(np.ones(3), np.ones(2))
    with pytest.raises(NumericalError):
        Exponential().value(-1000.0)
    with pytest.raises(NumericalError):
        SmoothedAbsolute(5.0).derivative_plus(10.0)


def test_losses_pickle_after_series_use():
    import pickle

    for l in SMOOTH:
        c = l.series.coefficient(3)
        back = pickle.loads(pickle.dumps(l))
        assert back.get_params() == l.get_params() and back.series.coefficient(3) == c


def test_series_cache_follows_parameters_and_config_roundtrip():
    loss = SmoothedHinge(1.0)
    c1 = loss.series.coefficient(2)
    loss.set_params(s=2.0)
    assert loss.series.coefficient(2) != c1
    assert loss.series.coefficient(2) == pytest.approx(SmoothedHinge(2.0).series.coefficient(2))
    for l in SMOOTH + [Hinge(), Absolute()]:
        back = Configurable.from_config(json.loads(json.dumps(l.to_config())))
        assert type(back) is type(l) and back.get_params() == l.get_params()
        assert isinstance(back, Loss)
