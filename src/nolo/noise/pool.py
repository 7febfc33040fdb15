"""Finite pools of repeated measurements: an oracle backed by real copies, with a cap.

CSS10 assumes an oracle that can be called any number of times.  Real data
offer a finite number ``m`` of repeated measurements of each item (repeated
scans, re-takes, several annotators' readings).  :class:`PoolOracle` serves
such a pool as an oracle: ``query(n)`` hands out the next ``n`` unused copies
in order and never reuses one, because reusing a copy would break the
independence the unbiased estimators rely on.

**The pool is a cap.**  CSS10's estimators ask for a random number of copies
(a geometric degree ``N`` with ``P(N >= z) = p^{-z}``), so now and then an
estimator asks for more copies than remain.  CSS10 section 2 notes that an
absolute bound on the number of queries "will fail or introduce some bias
with an arbitrarily small probability"; the policy ``on_exhausted`` chooses
which:

* ``"raise"`` -- fail loudly: :class:`nolo.CopiesExhausted`, naming how many
  copies were asked for and how many are left;
* ``"drop"`` -- ``query`` returns ``None`` and the caller's estimator
  contributes **0** for that draw.  For CSS10's random-degree estimator
  ``theta = gamma_N p^(N+1)/(p-1) prod_{i<=N} x_i`` of ``f(mu) = sum_n gamma_n mu^n``
  on a pool of ``m`` copies this makes the estimate unbiased for the series
  *truncated* at the pool size, ``sum_{n<=m} gamma_n mu^n``.  Its bias is the
  dropped tail ``sum_{n>m} gamma_n mu^n`` (at most ``sum_{n>m} |gamma_n| |mu|^n``),
  and a refusal happens with probability ``P(N > m) = p^-(m+1)``: both vanish
  geometrically as the pool grows (for ``|mu|`` inside the series' radius).
  A refused request consumes nothing and smaller later requests are still
  served (copies taken by earlier requests of the same estimate stay taken).

Either way every refused request is counted (``PoolOracle.shortfalls``) and
:meth:`RepeatedMeasurements.report` sums them per item, so a practitioner
sees how often the cap bit.

**Using every reading.**  A pool knows how many copies it still holds
(``remaining``); learners that can use any number of readings take them all:
the CSS11 linear learners with ``copies="all"`` (the U-statistic over all
copies for Setting 1, their mean with ``Sigma / m`` for Setting 2) and
:class:`nolo.learners.linear.BiasCompensatedRLS` (``n_readings=None``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nolo._validation import check_array, check_choice, check_int
from nolo.exceptions import CopiesExhausted, ParameterError
from nolo.noise.replay import ReplayOracle

__all__ = ["PoolOracle", "RepeatedMeasurements", "PoolReport", "ON_EXHAUSTED", "as_measurement_items", "query_copies"]

ON_EXHAUSTED = ("raise", "drop")


def as_measurement_items(data) -> list[np.ndarray]:
    """Validate repeated measurements and return them as a list of ``(m_i, d)`` float64 arrays.

    ``data`` is an ``(n, m, d)`` array or a list of ``(m_i, d)`` arrays; all
    finite, at least one item, every item with the same ``d >= 1``.
    """
    if isinstance(data, np.ndarray) and data.dtype != object:
        arr = check_array(data, "data", ndim=3)
        items = [arr[i] for i in range(arr.shape[0])]
    elif isinstance(data, (list, tuple)):
        items = [check_array(a, f"data[{i}]", ndim=2) for i, a in enumerate(data)]
    else:
        raise ParameterError(
            f"data must be an (n, m, d) array or a list of (m_i, d) arrays, got {type(data).__name__}"
        )
    if len(items) == 0:
        raise ParameterError("data must hold at least one item")
    d = items[0].shape[1]
    if d == 0:
        raise ParameterError("data items must have d >= 1 coordinates, got d = 0")
    for i, a in enumerate(items):
        if a.shape[1] != d:
            raise ParameterError(
                f"data[{i}] has d={a.shape[1]} coordinates but data[0] has d={d}; all items must share d"
            )
    return items


def query_copies(oracle, k: int, who: str, unit: str = "round") -> np.ndarray:
    """``oracle.query(k)`` checked: a finite ``(k, d)`` array, or :class:`nolo.CopiesExhausted` when a pool refuses."""
    copies = oracle.query(k)
    if copies is None:
        raise CopiesExhausted(
            f"{who} needs {k} noisy cop{'y' if k == 1 else 'ies'} per {unit} and the oracle refused (pool exhausted); "
            f"the {unit} was not played"
        )
    return check_array(copies, "oracle copies", shape=(k, None))


class PoolOracle(ReplayOracle):
    """An oracle over a finite pool of ``m`` repeated measurements of one item.

    The :class:`nolo.noise.ReplayOracle` of real readings that never reuses a
    copy: ``"cycle"`` is not offered.

    Parameters
    ----------
    copies : array of shape (m, d)
        The measurements, handed out in row order, each at most once.
    on_exhausted : {"raise", "drop"}
        What a request for more copies than remain does: ``"raise"`` raises
        :class:`nolo.CopiesExhausted`; ``"drop"`` returns ``None`` (the
        estimator contributes 0 for that draw -- see the module docstring) and
        increments :attr:`shortfalls`.
    item : int, str or None, default None
        How error messages name the item (see :class:`nolo.noise.ReplayOracle`).

    Attributes
    ----------
    d, queries, calls : see :class:`nolo.noise.BaseOracle`.
    size : int
        Pool size ``m``.
    remaining : int
        Copies not yet handed out.
    shortfalls : int
        Requests refused because fewer copies remained than were asked for
        (under either policy).
    """

    _POLICIES = ON_EXHAUSTED

    def _exhausted_message(self, n: int, left: int) -> str:
        where = "" if self.item is None else f"{self._item_name()}: "
        return (
            f"{where}asked for {n} noisy copies but only {left} of the pool's {self.size} remain "
            f"({self.queries} already used); enlarge the pool, lower the estimator's expected "
            "degree (raise p), or use on_exhausted='drop'"
        )


@dataclass(frozen=True)
class PoolReport:
    """How often the pools' cap bit.

    ``shortfalls[i]`` refused requests and ``used[i]`` copies handed out for
    item ``i`` (of ``sizes[i]`` available); ``total_shortfalls`` their sum,
    ``items_short`` the number of items with at least one refusal, and
    ``total_calls`` all calls that handed out copies.
    """

    sizes: np.ndarray
    used: np.ndarray
    shortfalls: np.ndarray
    total_shortfalls: int = 0
    items_short: int = 0
    total_calls: int = 0
    policy: str = "raise"

    @property
    def shortfall_rate(self) -> float:
        """Refused requests / all non-empty requests (0 when nothing was asked)."""
        asked = self.total_calls + self.total_shortfalls
        return self.total_shortfalls / asked if asked else 0.0

    def as_dict(self) -> dict:
        return {
            "policy": self.policy,
            "items": int(self.sizes.shape[0]),
            "total_shortfalls": self.total_shortfalls,
            "items_short": self.items_short,
            "total_calls": self.total_calls,
            "shortfall_rate": self.shortfall_rate,
            "copies_used": int(self.used.sum()),
            "copies_available": int(self.sizes.sum()),
        }

    def __str__(self) -> str:
        d = self.as_dict()
        return (
            f"pool cap ({d['policy']}): {d['total_shortfalls']} refused request(s) on {d['items_short']} of "
            f"{d['items']} item(s), rate {d['shortfall_rate']:.3g}; copies used {d['copies_used']} of "
            f"{d['copies_available']}"
        )


class RepeatedMeasurements:
    """A data set of items, each measured a finite number of times; one :class:`PoolOracle` per item.

    Parameters
    ----------
    data : array of shape (n, m, d), or list of arrays of shape (m_i, d)
        ``data[i]`` holds the repeated measurements of item ``i``; with a list
        the number of copies ``m_i`` may vary between items.  All entries
        finite, all items of the same dimension ``d``.
    on_exhausted : {"raise", "drop"}
        Policy of every item's pool (see the module docstring).

    ``oracle(i)`` returns item ``i``'s pool; the same object on every call,
    so copies handed out once are never handed out again.  :meth:`report`
    summarises how often the cap bit.
    """

    def __init__(self, data, *, on_exhausted: str = "raise"):
        self.on_exhausted = check_choice(on_exhausted, "on_exhausted", ON_EXHAUSTED)
        items = as_measurement_items(data)
        d = items[0].shape[1]
        self.d = int(d)
        self._pools = [PoolOracle(a, on_exhausted=self.on_exhausted, item=i) for i, a in enumerate(items)]

    def __len__(self) -> int:
        return len(self._pools)

    @property
    def sizes(self) -> np.ndarray:
        """Number of copies ``m_i`` of each item."""
        return np.array([p.size for p in self._pools], dtype=np.int64)

    def oracle(self, i: int) -> PoolOracle:
        """The pool oracle of item ``i`` (``0 <= i < len(self)``)."""
        i = check_int(i, "i", low=0, high=len(self._pools) - 1)
        return self._pools[i]

    def report(self) -> PoolReport:
        """Shortfalls and copies used per item, and totals."""
        short = np.array([p.shortfalls for p in self._pools], dtype=np.int64)
        used = np.array([p.queries for p in self._pools], dtype=np.int64)
        return PoolReport(
            sizes=self.sizes,
            used=used,
            shortfalls=short,
            total_shortfalls=int(short.sum()),
            items_short=int(np.count_nonzero(short)),
            total_calls=int(sum(p.calls for p in self._pools)),
            policy=self.on_exhausted,
        )
