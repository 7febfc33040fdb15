"""Contexts as dictionaries, one at a time, the River way: :class:`DictContexts` wraps any nolo bandit learner so that
a live system passes ``{"feature": value}`` dicts (numbers, or strings for categorical attributes) and gets the label
to show, its probability, and learns from the bit when it comes back -- possibly many rounds later.

Features become a fixed-width vector by the hashing trick (Weinberger et al., ICML 2009, as scikit-learn's
``FeatureHasher`` and Vowpal Wabbit do): ``"name"`` with a number ``v`` adds ``sign(h) v`` at column ``h mod
n_features``; ``"name"`` with a string ``s`` is the one-hot feature ``"name=s"`` with value 1 (a categorical attribute
needs no vocabulary).  The hash is a keyed BLAKE2b of the feature's name, so the same dict maps to the same vector in
every process and every run (Python's ``hash`` is salted per process).  ``vocabulary`` (a list of feature names)
replaces hashing by a fixed column per name; unknown names are then ignored (and counted in ``unknown_``).

**Delayed feedback.**  ``learn_one(x, played, feedback)`` may come any number of rounds after the ``act_one(x)`` that
played the label, in any order: the learner's update for a regression learner (FastCB, SquareCB, LinUCB,
KernelLabelTS, ``default_learner`` with known rates) depends only on (context, label, bit), so a late bit teaches what
an immediate one would.  Learners whose update divides by their own play probability at update time (Banditron, the
AM learners) recompute that probability from their current weights, not the one they played with: with delays they
are biased, and :class:`DictContexts` refuses them unless ``allow_delay=False`` promises immediate feedback.

Example
-------
>>> from nolo.learners.bandit import FastCB
>>> from nolo.learners.bandit.dict_features import DictContexts
>>> bandit = DictContexts(FastCB(n_classes=3, rho0=0.1, rho1=0.1, seed=0), n_features=64)
>>> x = {"age": 31.0, "country": "fr", "device": "mobile"}
>>> label, p = bandit.act_one(x)
>>> 0 <= label < 3 and 0 < p <= 1
True
>>> bandit.learn_one(x, label, 1).predict_one(x) in (0, 1, 2)
True
"""

from __future__ import annotations

import functools
import hashlib
import math
import numbers
from collections.abc import Mapping

import numpy as np

from nolo._validation import check_int
from nolo.exceptions import ParameterError

__all__ = ["DictContexts", "hash_features"]

_KEY = b"nolo-features"


@functools.lru_cache(maxsize=2 ** 16)  # a live stream repeats its feature names: hash each once
def _bucket(name: str, n_features: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(name.encode("utf-8"), digest_size=8, key=_KEY).digest(), "little")
    return (h >> 1) % n_features, (1.0 if h & 1 else -1.0)


def hash_features(x: Mapping, n_features: int) -> np.ndarray:
    """The hashed ``(n_features,)`` vector of one dict context (module docstring)."""
    items = list(_items(x))  # checked whole first
    if n_features > 4 * max(len(items), 64):  # wide: only the touched columns, then one array
        cols: dict = {}
        for name, value in items:
            j, sign = _bucket(name, n_features)
            cols[j] = cols.get(j, 0.0) + sign * value
        vec = np.zeros(n_features)
        if cols:
            vec[np.fromiter(cols, np.int64, len(cols))] = np.fromiter(cols.values(), float, len(cols))
        return vec
    out = [0.0] * n_features
    for name, value in items:
        j, sign = _bucket(name, n_features)
        out[j] += sign * value
    return np.array(out)


def _items(x: Mapping):
    """(feature name, value) pairs: numbers as they are, strings (and booleans) as one-hot ``name=value``."""
    if not isinstance(x, Mapping):
        raise ParameterError(f"x must be a dict of feature name -> number or string, got {type(x).__name__}")
    for name, v in x.items():
        key = name if type(name) is str else str(name)
        if isinstance(v, str):
            yield f"{key}={v}", 1.0
        elif isinstance(v, (bool, np.bool_)):
            yield f"{key}={bool(v)}", 1.0
        elif type(v) is float or type(v) is int or isinstance(v, (numbers.Real, np.floating, np.integer)):
            try:  # plain floats and ints tested first: the tuple isinstance is the slow test
                fv = float(v)
            except OverflowError:
                fv = math.inf
            if not math.isfinite(fv):
                raise ParameterError(f"feature {key!r} must be finite, got {v!r}")
            if fv != 0.0:
                yield key, fv
        elif v is None:
            continue  # a missing value is an absent feature
        else:
            raise ParameterError(f"feature {key!r} must be a number or a string, got {type(v).__name__}")


class DictContexts:
    """A bandit learner taking dict contexts one at a time (module docstring).

    Parameters
    ----------
    learner : a nolo bandit learner (``act``/``learn``/``predict``)
    n_features : int >= 1, default 4096 -- the hashed width (ignored with ``vocabulary``)
    vocabulary : list of feature names, or None -- a fixed column per name instead of hashing (categorical values
        name their one-hot column ``"name=value"``)
    allow_delay : bool, default True -- feedback may arrive late; refuses learners whose update is biased by a delay
    """

    def __init__(self, learner, n_features: int = 4096, vocabulary=None, allow_delay: bool = True):
        for method in ("act", "learn", "predict"):
            if not callable(getattr(learner, method, None)):
                raise ParameterError(f"learner must be a nolo bandit learner (act/learn/predict), got "
                                     f"{type(learner).__name__}")
        if allow_delay and not getattr(learner, "learns_off_policy", False):
            raise ParameterError(f"{type(learner).__name__} recomputes its play probability when it learns, so a late "
                                 "bit biases it: use a regression learner (FastCB, SquareCB, LinUCB, KernelLabelTS, "
                                 "default_learner with known rates), or allow_delay=False for immediate feedback")
        self.learner = learner
        self.allow_delay = bool(allow_delay)
        if vocabulary is not None:
            names = [str(v) for v in vocabulary]
            if not names or len(set(names)) != len(names):
                raise ParameterError("vocabulary must be a non-empty list of distinct feature names")
            self.vocabulary = {n: j for j, n in enumerate(names)}
            self.n_features = len(names)
        else:
            self.vocabulary = None
            self.n_features = check_int(n_features, "n_features", low=1)
        self.unknown_ = 0

    def vector(self, x: Mapping) -> np.ndarray:
        """The ``(n_features,)`` vector the learner sees for the dict ``x``."""
        if self.vocabulary is None:
            return hash_features(x, self.n_features)
        out = [0.0] * self.n_features  # a list: its item updates cost a tenth of an array's
        vocabulary, unknown = self.vocabulary, 0
        for name, value in _items(x):
            j = vocabulary.get(name)
            if j is None:
                unknown += 1
            else:
                out[j] += value
        self.unknown_ += unknown
        return np.array(out)

    def act_one(self, x: Mapping) -> tuple[int, float]:
        """``(label, probability)``: the label to show for ``x`` and the probability it was drawn with (log it)."""
        return self.learner.act(self.vector(x), return_probability=True)

    def learn_one(self, x: Mapping, played: int, feedback: int) -> "DictContexts":
        """Learn the bit ``feedback`` for ``played`` shown at context ``x`` (now or any number of rounds ago)."""
        self.learner.learn(self.vector(x), played, feedback)
        return self

    def predict_one(self, x: Mapping) -> int:
        """The learner's greedy label for ``x``; never changes it."""
        return int(self.learner.predict(self.vector(x)[None, :])[0])

    def probabilities_one(self, x: Mapping) -> np.ndarray:
        """The ``(K,)`` distribution ``act_one`` draws from at ``x``; never changes the learner."""
        return np.asarray(self.learner.action_probabilities(self.vector(x)[None, :]))[0]
