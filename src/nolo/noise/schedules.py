"""Adversarial noise schedules: the law of the noise changes between rounds or between calls.

CSS10 section 2: the distribution of ``Z_t`` "might be chosen by the
adversary, and change from round to round or even between consecutive calls
to ``A_t``".  The two schedules here realise an *oblivious* adversary: the
law in force is a fixed function of the round index ``t`` (and the call
index within the round), chosen before the game starts.

* :class:`PerRoundSchedule` -- one law per round, all calls of the round
  share it;
* :class:`PerCallSchedule` -- the law changes from one query call to the next
  within a round.  A *call* is one ``Oracle.query(n)`` invocation; its ``n``
  copies are independent draws of the same law (ask ``query(1)`` repeatedly
  to let the law change between single copies).

``order="cycle"`` walks through the components in turn; ``order="random"``
picks a component uniformly at random by a deterministic hash of
``(seed, round[, call])``, independent of the generator that draws the noise
itself.  :meth:`component` exposes the law in force (for tests and for
CSS11-style learners that are told ``Sigma_t``); :meth:`covariance` without a
round/call is defined only when all components share one covariance.
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_choice, check_int
from nolo.exceptions import ParameterError
from nolo.noise.base import NoiseModel

__all__ = ["PerRoundSchedule", "PerCallSchedule"]

_MASK64 = (1 << 64) - 1


def _splitmix64(z: int) -> int:
    """One step of the SplitMix64 mixer (Steele, Lea & Flood 2014): a well-spread 64-bit hash."""
    z = (z + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _hash_index(k: int, *keys: int) -> int:
    """A uniform index in ``range(k)`` determined by the integer keys."""
    h = 0
    for key in keys:
        h = _splitmix64(h ^ (key & _MASK64))
    # top bits -> [0, 1) -> index; bias is < k / 2^53, negligible
    return int(((h >> 11) / float(1 << 53)) * k)


class _Schedule(NoiseModel):
    """Shared machinery: a list of component laws and a rule picking one per (round, call)."""

    def __init__(self, models, order="cycle", seed=0):
        self.models = models
        self.order = order
        self.seed = seed

    def _validate_params(self, d=None):
        models = self.models
        if not isinstance(models, (list, tuple)) or len(models) == 0:
            raise ParameterError(f"models must be a non-empty list of NoiseModel objects, got {models!r}")
        for i, m in enumerate(models):
            if not isinstance(m, NoiseModel):
                raise ParameterError(f"models[{i}] must be a NoiseModel, got {type(m).__name__}")
        check_choice(self.order, "order", ("cycle", "random"))
        check_int(self.seed, "seed", low=0)
        for m in models:
            m._validate_params(d)

    def _index(self, round: int, call: int) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def component(self, round: int = 0, call: int = 0) -> NoiseModel:
        """The component law in force at round ``round``, query call ``call``."""
        round = check_int(round, "round", low=0)
        call = check_int(call, "call", low=0)
        self._validate_params()
        return self.models[self._index(round, call)]

    def _make_sampler(self, d):
        draws = [m._make_sampler(d) for m in self.models]  # components validated by _validate_params(d)
        index = self._index

        def draw(rng, size, round, call):
            return draws[index(round, call)](rng, size, round, call)

        return draw

    def _covariance(self, d, round, call):
        if round is not None or call is not None:
            comp = self.models[self._index(round or 0, call or 0)]
            return comp._covariance(d, round, call)
        covs = [m._covariance(d, None, None) for m in self.models]
        first = covs[0]
        for i, c in enumerate(covs[1:], start=1):
            if not np.allclose(c, first, rtol=1e-12, atol=1e-12):
                raise ParameterError(
                    f"{type(self).__name__}.covariance is undefined without round/call: the components "
                    f"do not share one covariance (models[0] and models[{i}] differ); pass round= "
                    "(and call=) to get the covariance in force, or use component(round, call)"
                )
        return first


class PerRoundSchedule(_Schedule):
    """Noise whose law changes from round to round (CSS10 section 2's adversarial noise).

    Parameters
    ----------
    models : list of NoiseModel
        The component laws.
    order : {"cycle", "random"}
        ``"cycle"``: round ``t`` uses ``models[t % k]``; ``"random"``: a uniform
        pick per round, a deterministic function of ``(seed, t)``.
    seed : int
        Seed of the ``"random"`` order (ignored by ``"cycle"``).
    """

    def __init__(self, models, order="cycle", seed=0):
        super().__init__(models, order=order, seed=seed)

    def _index(self, round, call):
        k = len(self.models)
        if self.order == "cycle":
            return round % k
        return _hash_index(k, int(self.seed), 1, round)


class PerCallSchedule(_Schedule):
    """Noise whose law changes from one oracle call to the next within a round (CSS10 section 2).

    Parameters
    ----------
    models : list of NoiseModel
        The component laws.
    order : {"cycle", "random"}
        ``"cycle"``: call ``c`` of any round uses ``models[c % k]``;
        ``"random"``: a uniform pick per (round, call), a deterministic
        function of ``(seed, round, call)``.
    seed : int
        Seed of the ``"random"`` order (ignored by ``"cycle"``).
    """

    def __init__(self, models, order="cycle", seed=0):
        super().__init__(models, order=order, seed=seed)

    def _index(self, round, call):
        k = len(self.models)
        if self.order == "cycle":
            return call % k
        return _hash_index(k, int(self.seed), 2, round, call)
