"""Shared by the SquareCB and FastCB tests: a contextual-bandit learner's fitted state, and two states compared bitwise."""

from __future__ import annotations

import numpy as np


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
