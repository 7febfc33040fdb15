"""The noisy-copy oracle ``A_t`` of CSS10 section 2.

At round ``t`` the learner does not see the instance ``x_t``; it may only
call the oracle, which returns independent copies ``x_t + Z`` with ``Z``
zero-mean noise whose law is unknown to the learner (and may change between
rounds and calls, see :mod:`nolo.noise.schedules`).  The number of copies a
learner asks for is random in CSS10 (a geometric degree ``N`` per estimate),
so the oracle counts them: ``queries`` is the total number of copies handed
out, ``calls`` the number of ``query`` invocations that handed out copies.

Every oracle -- the simulated :class:`Oracle` here and the finite
:class:`nolo.noise.PoolOracle` of real repeated measurements -- follows the
:class:`BaseOracle` protocol: ``d``, ``query(n) -> (n, d)`` array, ``queries``,
``calls``.  A pool may also answer ``None`` (a counted shortfall, see
:mod:`nolo.noise.pool`); learners that accept pools must handle it.
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_array, check_int
from nolo.exceptions import ParameterError
from nolo.noise.base import NoiseModel
from nolo.random import as_generator

__all__ = ["BaseOracle", "Oracle", "make_oracle"]


class BaseOracle:
    """Protocol shared by all oracles: ``query(n)`` hands out ``n`` noisy copies of one hidden instance.

    Attributes
    ----------
    d : int
        Dimension of the copies.
    queries : int
        Total number of copies handed out so far.
    calls : int
        Number of ``query`` invocations that handed out at least one copy
        (``query(0)`` counts nothing).
    """

    d: int
    queries: int
    calls: int

    def _supply(self, n: int) -> np.ndarray | None:  # pragma: no cover - overridden
        raise NotImplementedError

    def query(self, n: int = 1) -> np.ndarray | None:
        """Return ``n`` noisy copies as a float64 array of shape ``(n, d)``.

        ``query(0)`` returns an empty ``(0, d)`` array and counts nothing.
        """
        n = check_int(n, "n", low=0)
        if n == 0:
            return np.empty((0, self.d), dtype=np.float64)
        out = self._supply(n)
        if out is not None:
            self.queries += n
            self.calls += 1
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(d={self.d}, queries={self.queries}, calls={self.calls})"


class Oracle(BaseOracle):
    """Simulated oracle ``A_t`` (CSS10 section 2): independent copies ``x + Z`` of a hidden instance.

    Parameters
    ----------
    x : array of shape (d,)
        The clean instance.  Kept private (``_x``): learners must see it only
        through :meth:`query`.  :meth:`reveal` returns it for the experiment
        harness (clean loss, regret); learners must not call it.
    noise : NoiseModel
        Law of ``Z``.  Each copy gets fresh noise; the ``k``-th ``query`` call
        of the oracle draws with ``call=k`` (0-based) and the oracle's
        ``round``, exactly as ``noise.sample(rng, n, d, round=round, call=k)``,
        so per-round and per-call schedules switch as specified.  The law is
        validated and its parameters frozen when the oracle is built
        (:meth:`NoiseModel.sampler`).
    rng : numpy Generator or seed
        Source of the noise draws.  Same seed, same copies.
    round : int, default 0
        Index of the round this oracle serves (used by noise schedules).
    """

    def __init__(self, x, noise: NoiseModel, rng, *, round: int = 0):
        x = check_array(x, "x", ndim=1)
        if x.shape[0] == 0:
            raise ParameterError("x must be a non-empty 1-d array (the hidden instance)")
        if not isinstance(noise, NoiseModel):
            raise ParameterError(f"noise must be a nolo NoiseModel, got {type(noise).__name__}")
        self.round = check_int(round, "round", low=0)
        self.d = int(x.shape[0])
        self.noise = noise
        self._draw = noise.sampler(self.d)  # validated once; the per-query path does no re-checking
        self._rng = as_generator(rng, "rng")
        self._x = np.array(x, dtype=np.float64, copy=True)
        self._x.flags.writeable = False
        self.queries = 0
        self.calls = 0

    def _supply(self, n: int) -> np.ndarray:
        return self._x + self._draw(self._rng, n, self.round, self.calls)

    def reveal(self) -> np.ndarray:
        """The clean instance ``x``, a copy.  For experiment bookkeeping (clean loss, regret) only -- NOT for learners."""
        return self._x.copy()


def make_oracle(x, noise: NoiseModel, rng, round: int = 0) -> Oracle:
    """Convenience constructor: ``Oracle(x, noise, rng, round=round)``."""
    return Oracle(x, noise, rng, round=round)
