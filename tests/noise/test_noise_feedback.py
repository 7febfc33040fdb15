"""FlipChannel: AM section 3's flipped bandit feedback and Lemma 1's unbiased h(f_rho) (docs/math.md, item 11).

rho0 = P(feedback 1 | truth 0), rho1 = P(feedback 0 | truth 1).
"""

from __future__ import annotations

import numpy as np
import pytest

from nolo import ParameterError
from nolo._config import Configurable
from nolo.noise import FlipChannel

RATES = [(0.0, 0.0), (0.15, 0.15), (0.2, 0.4), (0.4, 0.2), (0.4, 0.4), (0.0, 0.7)]
N = 200_000


@pytest.mark.parametrize("rho0, rho1", RATES)
def test_empirical_flip_rates_match(rho0, rho1):
    ch = FlipChannel(rho0, rho1)
    truth = np.repeat(np.array([0, 1]), N // 2)
    fb = ch.transmit(truth, np.random.default_rng(11))
    assert fb.shape == truth.shape and set(np.unique(fb)) <= {0, 1}
    for t, rate, got in ((0, rho0, fb[truth == 0].mean()), (1, rho1, 1 - fb[truth == 1].mean())):
        n = N // 2
        if rate == 0.0:
            assert got == 0.0, f"truth {t}: no flips expected"
        else:
            assert abs(got - rate) <= 4 * np.sqrt(rate * (1 - rate) / n), (t, got, rate)


@pytest.mark.parametrize("rho0, rho1", RATES)
def test_unbias_is_unbiased(rho0, rho1):
    """E[h(f_rho) | f] = f: exact by enumeration, and by Monte Carlo within 4 SE."""
    ch = FlipChannel(rho0, rho1)
    h0, h1 = ch.unbias(0), ch.unbias(1)
    assert (1 - rho0) * h0 + rho0 * h1 == pytest.approx(0.0, abs=1e-14)
    assert rho1 * h0 + (1 - rho1) * h1 == pytest.approx(1.0, abs=1e-14)
    # the paper's printed form ((1 - rho_{f'}) f - rho_f f') / kappa, f' = 1 - f
    rho = {0: rho0, 1: rho1}
    for f in (0, 1):
        printed = ((1 - rho[1 - f]) * f - rho[f] * (1 - f)) / (1 - rho0 - rho1)
        assert ch.unbias(f) == pytest.approx(printed, abs=1e-14)
    rng = np.random.default_rng(12)
    for f in (0, 1):
        h = ch.unbias(ch.transmit(np.full(N, f), rng))
        se = h.std(ddof=1) / np.sqrt(N)
        if se == 0.0:
            assert h.mean() == f
        else:
            assert abs(h.mean() - f) <= 4 * se, (f, h.mean(), se)


def test_unbias_detects_the_wrong_rates():
    """Negative control: h computed with rates other than the channel's is biased by many SEs."""
    true, assumed = FlipChannel(0.3, 0.1), FlipChannel(0.1, 0.1)
    h = assumed.unbias(true.transmit(np.zeros(N, dtype=int), np.random.default_rng(2)))
    assert abs(h.mean()) > 10 * h.std(ddof=1) / np.sqrt(N)


def test_kappa_and_transition_matrix():
    ch = FlipChannel(0.2, 0.4)
    assert ch.kappa == pytest.approx(0.4)
    m = ch.transition_matrix()
    np.testing.assert_allclose(m, [[0.8, 0.2], [0.4, 0.6]])
    np.testing.assert_allclose(m.sum(axis=1), 1.0)


def test_scalar_and_array_forms():
    ch = FlipChannel(0.25, 0.25)
    b = ch.transmit(1, 0)
    assert isinstance(b, int) and b in (0, 1)
    assert isinstance(ch.unbias(1), float)
    grid = ch.transmit(np.array([[0, 1, 1], [1, 0, 0]]), 0)
    assert grid.shape == (2, 3)
    assert ch.transmit([True, False], 0).tolist() in ([0, 0], [0, 1], [1, 0], [1, 1])
    np.testing.assert_allclose(ch.unbias([0, 1, 1]), [-0.5, 1.5, 1.5])
    assert FlipChannel(0.0, 0.0).transmit([0, 1, 1, 0], 3).tolist() == [0, 1, 1, 0]


def test_same_seed_same_flips():
    ch = FlipChannel(0.3, 0.2)
    bits = np.random.default_rng(0).integers(0, 2, size=1000)
    np.testing.assert_array_equal(ch.transmit(bits, 5), ch.transmit(bits, 5))
    assert not np.array_equal(ch.transmit(bits, 5), ch.transmit(bits, 6))


@pytest.mark.parametrize(
    "rho0, rho1, pattern",
    [
        (0.6, 0.5, r"rho0 \+ rho1 must be < 1 .*rho0=0.6, rho1=0.5"),
        (0.5, 0.5, r"rho0 \+ rho1 must be < 1"),
        (-0.1, 0.2, r"rho0 must be a real number >= 0"),
        (0.2, 1.0, r"rho1 must be a real number >= 0.0 and < 1.0"),
        (float("nan"), 0.1, r"rho0 must be"),
        ("0.1", 0.1, r"rho0 must be"),
    ],
)
def test_invalid_rates_are_rejected_with_their_names(rho0, rho1, pattern):
    ch = FlipChannel(rho0, rho1)
    for call in (ch.validate, lambda: ch.kappa, lambda: ch.transmit([0, 1], 0), lambda: ch.unbias(1)):
        with pytest.raises(ParameterError, match=pattern):
            call()


def test_sum_message_explains_the_rates():
    with pytest.raises(ParameterError, match=r"rho0 = P\(feedback 1 \| truth 0\), rho1 = P\(feedback 0 \| truth 1\)"):
        FlipChannel(0.7, 0.4).validate()


@pytest.mark.parametrize("bad", [2, -1, 0.5, [0, 1, 2], "1", np.array([np.nan])])
def test_non_bits_are_rejected(bad):
    ch = FlipChannel(0.1, 0.1)
    with pytest.raises(ParameterError, match="bits must contain only 0 and 1"):
        ch.transmit(bad, 0)
    with pytest.raises(ParameterError, match="feedback must contain only 0 and 1"):
        ch.unbias(bad)


def test_config_round_trip():
    ch = FlipChannel(0.2, 0.35)
    clone = Configurable.from_config(ch.to_config())
    assert (clone.rho0, clone.rho1) == (0.2, 0.35)
    np.testing.assert_array_equal(clone.transmit(np.ones(50, dtype=int), 1), ch.transmit(np.ones(50, dtype=int), 1))
