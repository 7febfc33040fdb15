"""KernelLabelTS: the kernel sums and the posterior draw against a NumPy reference, the first-in-first-out history,
the flip evidence, learning under heavy noise, and clear errors.  (Validation with rollback, persistence, resume and
stream = per-round are the shared contract checks, tests/test_checks.py.)"""

import math

import numpy as np
import pytest

from nolo.exceptions import ParameterError, PersistenceError
from nolo.learners.bandit import KernelLabelTS, run_stream
from nolo.learners.bandit.kernel_ts import flip_evidence


def _reference_scores(hist, x, K, h):
    """L_k(x) = sum over stored (x_s, a_s, e_s) with a_s = k of exp(-||x - x_s||^2 / (2 h^2)) e_s."""
    L = np.zeros(K)
    for xs, a, e in hist:
        L[a] += math.exp(-np.sum((x - xs) ** 2) / (2 * h * h)) * e
    return L


def _reference_draw(L, c, u):
    """The label drawn by the uniform u from P(k) proportional to exp(c (L_k - max L)), by the cumulative sums."""
    w = [math.exp(c * (v - L.max())) for v in L]
    cum = np.cumsum(w)
    k = int(np.searchsorted(cum, u * cum[-1], side="right"))
    return min(k, len(L) - 1)


def test_flip_evidence_is_the_bit_log_likelihood_ratio():
    e1, e0 = flip_evidence(0.2, 0.4, 0.01)
    assert e1 == pytest.approx(math.log(0.6 / 0.2)) and e0 == pytest.approx(math.log(0.8 / 0.4))
    assert flip_evidence(0.0, 0.0, 0.05) == pytest.approx((math.log(0.95 / 0.05),) * 2)


def test_plays_and_scores_equal_a_numpy_reference_through_a_wrapping_history():
    # per-round API against a plain re-implementation: the same uniforms (a copy of the learner's generator), the same
    # kernel sums, the budget's first-in-first-out replacement, asymmetric flip rates
    g = np.random.default_rng(3)
    K, d, B, h, c, r0, r1 = 4, 5, 13, 0.9, 3.0, 0.1, 0.3
    X = g.normal(size=(30, d)) / 2
    y = g.integers(0, K, 30)
    m = KernelLabelTS(n_classes=K, bandwidth=h, temperature=c, rho0=r0, rho1=r1, budget=B, seed=5).initialize(d)
    ref_rng = np.random.default_rng(5)
    e1, e0 = flip_evidence(r0, r1, 0.01)
    hist = []
    for t in range(120):
        i = int(g.integers(0, 30))
        x = X[i]
        L = _reference_scores(hist, x, K, h)
        np.testing.assert_allclose(m.decision_function(x[None, :])[0], L, rtol=1e-12, atol=1e-12)
        want = _reference_draw(L, c, ref_rng.random())
        played = m.act(x)
        assert played == want, t
        fb = int(played == y[i]) if g.random() > 0.25 else 1 - int(played == y[i])
        m.learn(x, played, fb)
        hist.append((x, played, e1 if fb else -e0))
        hist = hist[-B:]
    assert m.history_count_.tolist() == [B, 120 % B]
    assert m.t_ == 120


def test_the_draw_follows_the_tempered_posterior():
    # Monte Carlo: the played labels' frequencies against P(k) = softmax(c L(x)) within 4 standard errors
    m = KernelLabelTS(n_classes=3, bandwidth=1.0, temperature=1.5, rho0=0.2, rho1=0.2, seed=0).initialize(2)
    x = np.array([0.3, -0.2])
    for xs, a, f in (([0.3, -0.1], 0, 1), ([0.2, -0.2], 1, 1), ([0.4, -0.3], 1, 0), ([1.0, 1.0], 2, 1)):
        m.learn(np.array(xs), a, f)
    L = m.decision_function(x[None, :])[0]
    p = np.exp(1.5 * (L - L.max()))
    p /= p.sum()
    n = 20_000
    counts = np.bincount([m.act(x) for _ in range(n)], minlength=3)
    se = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(counts / n - p) < 4 * se), (counts / n, p)
    assert m.t_ == 4  # act never learns


def test_predict_is_the_greedy_label_and_does_not_mutate():
    m = KernelLabelTS(n_classes=3, bandwidth=1.0, rho0=0.1, rho1=0.1, seed=0)
    m.learn(np.array([1.0, 0.0]), 2, 1)
    m.learn(np.array([0.0, 1.0]), 0, 1)
    before = {k: v.copy() for k, v in vars(m).items() if isinstance(v, np.ndarray)}
    e = math.log(0.9 / 0.1)
    np.testing.assert_allclose(m.decision_function(np.array([[1.0, 0.0]])), [[math.exp(-1) * e, 0.0, e]], rtol=1e-14)
    P = m.predict(np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]))
    assert P.tolist() == [2, 0, 0]  # [0.5, 0.5] is as near to both: a tie, to the smaller label
    assert all(np.array_equal(v, before[k]) for k, v in before.items())


def test_learns_digits_under_heavy_noise():
    # (0.4, 0.4), kappa = 0.2, 10^4 rounds on 50 Nystroem coordinates: the prototype erred 0.38; uniform play errs 0.9
    from sklearn.datasets import load_digits

    from nolo.kernels import NystroemFeatures

    X, y = load_digits(return_X_y=True)
    F = NystroemFeatures(n_landmarks=1000, n_components=50, seed=0).fit_transform(X)
    m = KernelLabelTS(n_classes=10, rho0=0.4, rho1=0.4, seed=0)
    res = run_stream(m, F, y, 10_000, 0.4, 0.4, seed=1_000)
    assert res.error_rate[-1] < 0.5
    assert np.mean(m.predict(F) == y) > 0.8


@pytest.mark.parametrize("kw, name", [({"bandwidth": 0.0}, "bandwidth"), ({"temperature": -1.0}, "temperature"),
                                      ({"rate_floor": 0.5}, "rate_floor"), ({"budget": 0}, "budget"),
                                      ({"rho0": 0.6, "rho1": 0.5}, "rho")])
def test_bad_parameters_are_refused_by_name(kw, name):
    with pytest.raises(ParameterError, match=name):
        KernelLabelTS(n_classes=3, **kw).initialize(2)


def test_a_history_too_large_is_refused_before_any_state():
    m = KernelLabelTS(n_classes=3, budget=1_000, max_bytes=10_000)
    with pytest.raises(ParameterError, match="max_bytes"):
        m.initialize(5)
    assert not m.is_initialized


def test_a_corrupt_history_count_is_refused_on_load(tmp_path):
    m = KernelLabelTS(n_classes=3, budget=4, seed=0)
    for t in range(3):
        m.learn(np.array([float(t), 1.0]), t % 3, 1)
    m.history_count_[:] = (2, 3)  # next slot must equal the count until the history is full
    path = m.save(tmp_path / "m.npz")
    with pytest.raises(PersistenceError, match="history_count_"):
        KernelLabelTS.load(path)
