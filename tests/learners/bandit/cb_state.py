"""Shared by the bandit tests (SquareCB, FastCB, FD-SON, the AM stream): a contextual-bandit learner's fitted state, two states
compared bitwise, and per-round play on a flipped-feedback environment."""

from __future__ import annotations

import numpy as np

from nolo.learners.bandit import ClassificationBandit


def state(m) -> dict:
    """The learner's fitted arrays (attributes ending in ``_``)."""
    return {k: v for k, v in vars(m).items() if k.endswith("_") and isinstance(v, np.ndarray)}


def assert_same(m1, m2) -> None:
    """Same fitted arrays, bit for bit, same round count and same random stream position."""
    s1, s2 = state(m1), state(m2)
    assert s1.keys() == s2.keys()
    for k in s1:
        assert np.array_equal(s1[k], s2[k]), k
    assert m1.t_ == m2.t_
    assert m1.rng_.bit_generator.state == m2.rng_.bit_generator.state


def per_round(m, X, y, n, rho0, rho1, seed, order="replace"):
    """``n`` rounds through the per-round API (``act`` then ``learn``) on the environment the compiled stream replays;
    returns the played mistakes and the environment."""
    env = ClassificationBandit(X, y, rho0=rho0, rho1=rho1, order=order, seed=seed)
    mistakes = 0
    for _ in range(n):
        x = env.next()
        a = m.act(x)
        mistakes += a != y[env.current_index]
        m.learn(x, a, env.feedback(a))
    return mistakes, env
