"""CSS11 Lemmas 1-2: hand-worked gradients, Monte Carlo unbiasedness (|z| <= 4), negative controls, variance constants."""

import numpy as np
import pytest

from nolo import ParameterError
from nolo.papers.css11._common import example_covariance, mixed_noise, zscores
from nolo.learners.linear.gradients import (
    clean_gradient,
    known_covariance_gradient,
    naive_gradient,
    setting1_G,
    setting2_G,
    theory_eta,
    two_copy_gradient,
)


def test_hand_worked_gradients():
    w = np.array([1.0, 2.0])
    # Setting 1: 2(<w,x> - y) x' = 2 (1 - 0.5) (0, 1)
    np.testing.assert_allclose(two_copy_gradient(w, [1.0, 0.0], [0.0, 1.0], 0.5), [0.0, 1.0])
    # Setting 2: 2(3 - 1)(1, 1) - 2 diag(1, 2) w = (4, 4) - (2, 8)
    np.testing.assert_allclose(known_covariance_gradient(w, [1.0, 1.0], 1.0, [1.0, 2.0]), [2.0, -4.0])
    np.testing.assert_allclose(known_covariance_gradient(w, [1.0, 1.0], 1.0, np.diag([1.0, 2.0])), [2.0, -4.0])
    np.testing.assert_allclose(naive_gradient(w, [1.0, 1.0], 1.0), [4.0, 4.0])
    # batched rows and per-row matrices
    X = np.array([[1.0, 1.0], [0.0, 1.0]])
    S = np.stack([np.eye(2), 2 * np.eye(2)])
    np.testing.assert_allclose(known_covariance_gradient(w, X, [1.0, 0.0], S), [[4 - 2, 4 - 4], [0 - 4, 4 - 8]])


def test_constants_and_theory_step():
    assert setting1_G(1.0, 2.0, 3.0) == pytest.approx(8 * (4 + 9) * 4)
    assert setting2_G(1.0, 2.0, 3.0, 0.5) == pytest.approx(16 * 16 + 16 * 9 * 4 + 8 * 0.25)
    assert theory_eta(2.0, 16.0, 100) == pytest.approx(2.0 / 40.0)
    with pytest.raises(ParameterError, match="radius"):
        setting1_G(0.0, 1.0, 1.0)
    with pytest.raises(ParameterError, match="sigma_bound"):
        setting2_G(1.0, 1.0, 1.0, -1.0)


@pytest.mark.parametrize("noise", ["gaussian", "uniform"])
def test_lemmas_1_2_unbiased_and_printed_lemma2_biased(noise):
    rng = np.random.default_rng(2011 if noise == "gaussian" else 2012)
    n, d = 200_000, 4
    Sigma = example_covariance(d, [0.1, 0.5, 1.2, 2.4])
    w = np.array([0.6, -0.5, 0.4, 0.5])
    x = np.array([0.5, 1.0, -0.3, 0.8])
    target = clean_gradient(w, x, 0.7)
    X1 = x + mixed_noise(rng, n, Sigma, noise)
    X2 = x + mixed_noise(rng, n, Sigma, noise)
    Y = 0.7 + 0.5 * rng.standard_normal(n)
    assert np.max(np.abs(zscores(two_copy_gradient(w, X1, X2, Y), target))) <= 4
    g2 = known_covariance_gradient(w, X1, Y, Sigma)
    assert np.max(np.abs(zscores(g2, target))) <= 4
    # negative controls: the printed "- Sigma w" (E9) and the naive gradient are biased
    assert np.min(np.abs(zscores(g2 + Sigma @ w, target))) >= 5
    assert np.min(np.abs(zscores(naive_gradient(w, X1, Y), target))) >= 5
    # variance: the re-derived Setting 2 constant bounds the second moment
    Bx4 = np.mean(np.sum(X1**2, axis=1) ** 2) ** 0.25
    G2 = setting2_G(np.linalg.norm(w), Bx4, np.sqrt(0.7**2 + 0.25), np.linalg.eigvalsh(Sigma)[-1])
    assert np.mean(np.sum(g2**2, axis=1)) <= G2


def test_printed_lemma1_constant_fails_and_corrected_holds():
    """docs/math.md, item 7: w = x = e1, y = -1, noise sd 0.05."""
    rng = np.random.default_rng(7)
    n, v = 200_000, 0.05**2
    w = x = np.array([1.0, 0.0])
    g = two_copy_gradient(w, x + 0.05 * rng.standard_normal((n, 2)), x + 0.05 * rng.standard_normal((n, 2)), -1.0)
    sq = np.sum(g * g, axis=1)
    exact = 4.0 * (4.0 + v) * (1.0 + 2 * v)
    assert abs(zscores(sq, exact)[0]) <= 4
    Bx = np.sqrt(1 + 2 * v)
    assert setting1_G(1.0, Bx, 1.0) / 2 < exact <= setting1_G(1.0, Bx, 1.0)


def test_mixed_noise_refuses_an_unknown_law():
    from nolo.exceptions import ParameterError

    with pytest.raises(ParameterError, match="'gaussian' or 'uniform'"):
        mixed_noise(np.random.default_rng(0), 3, np.eye(2), "laplace")
