"""Regret of ProjectedOGD: the OCO notes' Claim 1 on adversarial linear losses, sublinear squared-loss regret,
regret curves (incremental = recomputed), linear-loss comparator in closed form, validation."""

import math
import time

import numpy as np
import pytest

from nolo import ParameterError
from nolo.learners import ProjectedOGD
from nolo.oco import (
    Box,
    ConstantStep,
    InverseSqrtStep,
    L2Ball,
    TheoryStep,
    Unconstrained,
    best_fixed_in_hindsight,
    best_fixed_linear,
    linear_regret,
    linear_regret_curve,
    ogd_regret_bound,
    regret,
    regret_curve,
)


def _orthogonal_adversary_game(n, d, R, B, seed):
    """The notes' lower-bound adversary: each g_t is orthogonal to the current iterate w_t and to g_1..g_{t-1}."""
    rng = np.random.default_rng(seed)
    learner = ProjectedOGD(step=TheoryStep(R, B, n), constraint=L2Ball(R)).initialize(d)
    basis = np.zeros((n, d))  # rows 0..t-1: the orthonormal g_1/B, ..., g_{t-1}/B
    G, played = np.empty((n, d)), np.empty(n)
    for t in range(n):
        w = learner.w_
        Q = basis[:t]
        w_res = w - Q.T @ (Q @ w)  # the part of w_t outside span{g_1..g_{t-1}} (0 for OGD from w_1 = 0)
        r = rng.standard_normal(d)
        for _ in range(2):  # orthogonalise twice for accuracy
            r -= Q.T @ (Q @ r)
            if np.linalg.norm(w_res) > 1e-14:
                u = w_res / np.linalg.norm(w_res)
                r -= u * (u @ r)
        g = B * r / np.linalg.norm(r)
        assert abs(g @ w) <= 1e-12 * B * max(R, 1.0)
        G[t], played[t] = g, g @ w
        basis[t] = g / B
        learner.gradient_step(g)
        assert learner.constraint.contains(learner.w_)
    return G, played


def test_claim1_orthogonal_adversary_attains_the_bound_exactly():
    n, d, R, B = 150, 160, 2.0, 3.0
    G, played = _orthogonal_adversary_game(n, d, R, B, seed=0)
    bound = ogd_regret_bound(R, B, n)
    assert bound == TheoryStep(R, B, n).regret_bound() == pytest.approx(R * B * math.sqrt(n))
    reg = linear_regret(played, G, L2Ball(R))
    # learner's losses are all 0 and ||sum g_t|| = B sqrt(n): regret = R B sqrt(n), Claim 1 is tight
    assert np.max(np.abs(played)) < 1e-10
    assert reg == pytest.approx(bound, rel=1e-9)
    assert reg <= bound * (1 + 1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_claim1_random_sign_sequences(seed):
    rng = np.random.default_rng(seed)
    n, d, R, B = 2000, 8, 1.5, 2.0
    # rows with i.i.d. random signs, each of norm exactly B
    signs = rng.choice([-1.0, 1.0], size=(n, d))
    G = B * signs / math.sqrt(d)
    # and a single direction with a random sign each round, biased so the comparator gains
    e = np.zeros(d)
    e[seed % d] = 1.0
    G2 = B * np.where(rng.random(n) < 0.6, 1.0, -1.0)[:, None] * e
    bound = ogd_regret_bound(R, B, n)
    for seq in (G, G2):
        learner = ProjectedOGD(step=TheoryStep(R, B, n), constraint=L2Ball(R))
        played = learner.play_linear(seq)
        reg = linear_regret(played, seq, L2Ball(R))
        assert reg <= bound
        curve = linear_regret_curve(played, seq, L2Ball(R), [n // 4, n // 2, n])
        assert curve[-1] == pytest.approx(reg, rel=1e-12)


def test_claim1_adaptive_adversaries():
    # adversaries that look at w_t: push along w_t, or against the comparator direction, flipping signs
    n, d, R, B = 1000, 4, 1.0, 1.0
    bound = ogd_regret_bound(R, B, n)
    rng = np.random.default_rng(11)
    for rule in ("along", "alternate"):
        learner = ProjectedOGD(step=TheoryStep(R, B, n), constraint=L2Ball(R)).initialize(d)
        G, played = np.empty((n, d)), np.empty(n)
        for t in range(n):
            w = learner.w_
            if rule == "along" and np.linalg.norm(w) > 0:
                g = B * w / np.linalg.norm(w)
            else:
                g = B * (1.0 if t % 3 else -1.0) * np.eye(d)[t % 2] if rule == "alternate" else B * np.eye(d)[0]
            if rng.random() < 0.3:
                g = -g
            G[t], played[t] = g, g @ w
            learner.gradient_step(g)
        assert linear_regret(played, G, L2Ball(R)) <= bound


def test_squared_loss_regret_grows_sublinearly():
    # stationary problem: x ~ N(0, I_5), y = <w*, x> + N(0, 0.25), ||w*|| < 1
    d, T = 5, 20000
    rng = np.random.default_rng(0)
    w_star = np.array([0.6, -0.4, 0.3, 0.2, -0.1])
    X = rng.standard_normal((T, d))
    y = X @ w_star + 0.5 * rng.standard_normal(T)
    cps = np.unique(np.geomspace(500, T, 20).astype(int))
    slopes = {}
    for name, step in (("1/sqrt(t)", InverseSqrtStep(0.1)), ("constant", ConstantStep(0.05))):
        played = ProjectedOGD(step=step, constraint=L2Ball(1.0)).learn_many(X, y)
        start = time.perf_counter()
        curve = regret_curve(played, X, y, "squared", L2Ball(1.0), cps)
        assert time.perf_counter() - start < 2.0  # incremental: 20 checkpoints over T = 20,000
        assert np.all(curve > 0)
        slopes[name] = np.polyfit(np.log(cps), np.log(curve), 1)[0]
    assert slopes["1/sqrt(t)"] <= 0.65
    assert slopes["constant"] > 0.9  # negative control: a constant step has linear regret here


@pytest.mark.parametrize("loss", ["squared", "logistic", "absolute"])
def test_regret_curve_equals_regret_recomputed_on_each_prefix(loss):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 4))
    y = X @ [1.0, -1.0, 0.5, 0.0] + 0.3 * rng.standard_normal(300)
    if loss == "logistic":
        y = np.where(y + 0.5 * rng.standard_normal(300) > 0, 1.0, -1.0)
    constraint = L2Ball(0.8)
    played = ProjectedOGD(loss=loss, step=InverseSqrtStep(0.2), constraint=constraint).learn_many(X, y)
    cps = [10, 50, 51, 200, 300]
    curve = regret_curve(played, X, y, loss, constraint, cps)
    for T, r in zip(cps, curve):
        _, best = best_fixed_in_hindsight(X[:T], y[:T], loss, constraint)
        assert r == pytest.approx(played[:T].sum() - best, rel=1e-8, abs=1e-8)
    assert curve[-1] == pytest.approx(regret(played, X, y, loss, constraint), rel=1e-8)


def test_best_fixed_linear_closed_form_against_brute_force():
    rng = np.random.default_rng(8)
    G = rng.standard_normal((30, 3))
    S = G.sum(axis=0)
    w, val = best_fixed_linear(G, L2Ball(2.0))
    assert val == pytest.approx(-2.0 * np.linalg.norm(S), rel=1e-14)
    np.testing.assert_allclose(w, -2.0 * S / np.linalg.norm(S), rtol=1e-14)
    box = Box([-1.0, 0.0, -2.0], [1.0, 3.0, 0.5])
    wb, vb = best_fixed_linear(G, box)
    corners = np.array(np.meshgrid(*[[lo, hi] for lo, hi in zip(box.low, box.high)])).reshape(3, -1).T
    assert vb == pytest.approx(np.min(corners @ S), rel=1e-14) and vb == pytest.approx(S @ wb, rel=1e-14)
    sphere = rng.standard_normal((20000, 3))
    sphere = 2.0 * sphere / np.linalg.norm(sphere, axis=1, keepdims=True)
    assert val <= np.min(sphere @ S) <= val + 1e-2 * abs(val)


def test_regret_validation_names_parameters():
    X, y = np.ones((4, 2)), np.zeros(4)
    with pytest.raises(ParameterError, match="played_losses must have one entry per round"):
        regret(np.zeros(3), X, y, "squared", L2Ball(1.0))
    with pytest.raises(ParameterError, match="checkpoints must be strictly increasing"):
        regret_curve(np.zeros(4), X, y, "squared", L2Ball(1.0), [2, 2])
    with pytest.raises(ParameterError, match="checkpoints must be strictly increasing"):
        regret_curve(np.zeros(4), X, y, "squared", L2Ball(1.0), [1, 5])
    with pytest.raises(ParameterError, match="checkpoints must be a non-empty"):
        regret_curve(np.zeros(4), X, y, "squared", L2Ball(1.0), [1.5])
    with pytest.raises(ParameterError, match="y must be -1 or \\+1"):
        regret(np.zeros(4), X, y, "logistic", L2Ball(1.0))
    with pytest.raises(ParameterError, match="y must have 4 entries"):
        regret(np.zeros(4), X, np.zeros(3), "squared", L2Ball(1.0))
    with pytest.raises(ParameterError, match="constraint must be bounded"):
        best_fixed_linear(np.ones((2, 2)), Unconstrained())
    with pytest.raises(ParameterError, match="n must be an integer"):
        ogd_regret_bound(1.0, 1.0, 0)
    with pytest.raises(ParameterError, match="method must be one of"):
        regret(np.zeros(4), X, y, "squared", L2Ball(1.0), method="newton")
