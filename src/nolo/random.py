"""Explicit randomness: every random draw in nolo flows from a ``numpy.random.Generator``.

``as_generator(seed)`` accepts ``None`` (fresh OS entropy, not reproducible),
an int or a :class:`numpy.random.SeedSequence` (reproducible), or an existing
Generator (used as is, shared).  ``spawn(seed, n)`` gives ``n`` independent
child generators, deterministic in ``seed``, for the pieces of an experiment
(data, noise, learner) so that changing one does not shift the others.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nolo.exceptions import ParameterError

__all__ = ["as_generator", "spawn", "SeedLike"]

SeedLike = None | int | np.random.SeedSequence | np.random.Generator


def as_generator(seed: Any, name: str = "seed") -> np.random.Generator:
    """Return a Generator for ``seed`` (None, a non-negative int, a SeedSequence or a Generator)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ParameterError(f"{name} must be None, a non-negative int, a SeedSequence or a Generator, got {seed}")
        return np.random.default_rng(int(seed))
    raise ParameterError(
        f"{name} must be None, a non-negative int, a numpy SeedSequence or a numpy Generator, got {seed!r}"
    )


def spawn(seed: Any, n: int, name: str = "seed") -> list[np.random.Generator]:
    """``n`` independent generators derived deterministically from ``seed``."""
    if isinstance(seed, np.random.Generator):
        return list(seed.spawn(n))
    if isinstance(seed, np.random.SeedSequence):
        return [np.random.default_rng(s) for s in seed.spawn(n)]
    as_generator(seed, name)  # validates
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n)]
