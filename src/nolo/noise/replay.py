"""Replaying fixed readings as an oracle: :class:`ReplayOracle`.

An oracle (:class:`nolo.noise.BaseOracle`) over copies that were drawn or
measured beforehand: ``query(n)`` hands out the next ``n`` rows in order.
Experiments use it to play pre-drawn copies round by round exactly as the
compiled ``learn_stream`` loops read them, and tests to feed a learner
hand-worked readings.

What a request for more copies than are left does is explicit
(``on_exhausted``):

* ``"raise"`` -- :class:`nolo.CopiesExhausted`, naming the item, how many
  copies it has, how many were asked for and how many are left; nothing is
  consumed;
* ``"drop"`` -- ``query`` returns ``None`` (a refusal the learner handles:
  the CSS10 estimators contribute 0, the CSS11 learners raise
  :class:`nolo.CopiesExhausted` without playing the round); nothing is consumed;
* ``"cycle"`` -- start again from the first row (row ``k`` of the ``j``-th
  copy handed out is ``j mod m``).  Reused copies are not independent: this
  is for deterministic replays, never for the unbiased estimators.

Refusals under ``"raise"`` and ``"drop"`` are counted in ``shortfalls``.
:class:`nolo.noise.PoolOracle` is the replay of real repeated measurements
that never reuses a copy (``"raise"`` or ``"drop"`` only).
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_array, check_choice
from nolo.exceptions import CopiesExhausted, ParameterError
from nolo.noise.oracle import BaseOracle

__all__ = ["ReplayOracle", "REPLAY_ON_EXHAUSTED"]

REPLAY_ON_EXHAUSTED = ("raise", "drop", "cycle")


def _check_item(item):
    if item is None or isinstance(item, str):
        return item
    if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)) and item >= 0:
        return int(item)
    raise ParameterError(f"item must be None, an integer >= 0 or a string (how messages name the item), got {item!r:.60}")


class ReplayOracle(BaseOracle):
    """An oracle that replays fixed readings of one item in row order.

    Parameters
    ----------
    copies : array of shape (m, d)
        The readings, finite, handed out in row order.  The oracle keeps its
        own read-only copy.
    on_exhausted : {"raise", "drop", "cycle"}, default "raise"
        What a request for more copies than remain does: raise
        :class:`nolo.CopiesExhausted` (naming the item and its number of
        copies), return ``None`` (``"drop"``), or continue from the first row
        (``"cycle"``; needs ``m >= 1``).  See the module docstring.
    item : int, str or None, default None
        How error messages name the item: an integer ``i`` reads
        ``"item i"``, a string is used as it is (e.g. ``"round 17"``).

    Attributes
    ----------
    d, queries, calls : see :class:`nolo.noise.BaseOracle`.
    size : int
        Number of readings ``m``.
    remaining : int
        Readings not yet handed out (``max(m - queries, 0)``; under
        ``"cycle"`` later requests reuse served ones).
    shortfalls : int
        Requests refused because fewer copies remained than were asked for.

    Examples
    --------
    >>> from nolo.noise import ReplayOracle
    >>> o = ReplayOracle([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]], item=7)
    >>> o.query(2).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    >>> o.query(2)
    Traceback (most recent call last):
    ...
    nolo.exceptions.CopiesExhausted: item 7 has 3 copies: asked for 2 but only 1 remains (2 already served); ...
    >>> c = ReplayOracle([[1.0], [2.0]], on_exhausted="cycle")
    >>> c.query(3).ravel().tolist(), c.query(1).ravel().tolist(), c.queries
    ([1.0, 2.0, 1.0], [2.0], 4)
    """

    _POLICIES = REPLAY_ON_EXHAUSTED

    def __init__(self, copies, *, on_exhausted: str = "raise", item=None):
        arr = check_array(copies, "copies", ndim=2)
        if arr.shape[1] == 0:
            raise ParameterError(f"copies must have shape (m, d) with d >= 1, got {arr.shape}")
        self.on_exhausted = check_choice(on_exhausted, "on_exhausted", self._POLICIES)
        if self.on_exhausted == "cycle" and arr.shape[0] == 0:
            raise ParameterError("on_exhausted='cycle' needs at least one copy to cycle over, got copies of shape "
                                 f"{arr.shape}")
        self.item = _check_item(item)
        self._copies = np.array(arr, dtype=np.float64, copy=True)
        self._copies.flags.writeable = False
        self.d = int(arr.shape[1])
        self.size = int(arr.shape[0])
        self.queries = 0
        self.calls = 0
        self.shortfalls = 0

    @property
    def remaining(self) -> int:
        return max(self.size - self.queries, 0)

    def _item_name(self) -> str:
        if self.item is None:
            return "the replayed item"
        return f"item {self.item}" if isinstance(self.item, int) else self.item

    def _exhausted_message(self, n: int, left: int) -> str:
        s = "y" if self.size == 1 else "ies"
        return (f"{self._item_name()} has {self.size} cop{s}: asked for {n} but only {left} "
                f"remain{'s' if left == 1 else ''} ({self.queries} already served); give each item more copies, "
                "ask for fewer, or choose on_exhausted='drop' (refuse with None) or 'cycle' (reuse them)")

    def _supply(self, n: int) -> np.ndarray | None:
        if self.on_exhausted == "cycle":
            return self._copies[(self.queries + np.arange(n)) % self.size]
        left = self.size - self.queries
        if n > left:
            self.shortfalls += 1
            if self.on_exhausted == "raise":
                raise CopiesExhausted(self._exhausted_message(n, left))
            return None
        return self._copies[self.queries : self.queries + n].copy()

    def __repr__(self) -> str:
        item = "" if self.item is None else f"item={self.item!r}, "
        return (f"{type(self).__name__}({item}d={self.d}, size={self.size}, queries={self.queries}, "
                f"calls={self.calls}, shortfalls={self.shortfalls}, on_exhausted={self.on_exhausted!r})")
