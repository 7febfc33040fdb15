"""Feedback laws: how the bandit bit ``1[played == y]`` is flipped before the learner sees it.

A law is two things:

* a compiled *record* -- a ``typing.NamedTuple`` whose class names its rule ``flip(law, bit, u, y, played, i)``
  (the received bit for the true bit ``bit``, one uniform ``u`` in [0, 1), the true label ``y``, the played label
  ``played`` and the row ``i`` of X the round shows).  :func:`flip_bit` dispatches on the record's class at
  compile time, as the bandit core's ``act``/``update`` dispatch on a learner's state record, so the compiled
  stream loop, the per-round environment and the VW replays all call the one rule of each law;
* a Python object (a :class:`FeedbackLaw`) that validates the law's parameters (a ParameterError naming the
  parameter), reports its ``kappa`` (or the range ``kappa_range``) and hands out the record (:meth:`FeedbackLaw.record`).

Three laws:

* :class:`~nolo.noise.FlipChannel` -- class-conditional flips with two constant rates, ``rho0 = P(bit 1 | truth 0)``
  and ``rho1 = P(bit 0 | truth 1)`` (AM section 3; record :class:`ClassFlips`);
* :class:`FlipMatrix` -- a (K, K) matrix ``Q[y, a] = P(the bit is flipped | true label y, played a)``: the diagonal
  flips a true 1, an off-diagonal entry a true 0 (record :class:`MatrixFlips`);
* :class:`ContextFlips` -- per-row rates ``rho0[i], rho1[i]`` (one per row of X, e.g. computed from the features;
  record :class:`RowFlips`); each of the two may also be a rule that computes the rates from the data
  (:class:`ColumnRates`), evaluated by :meth:`ContextFlips.bind` once the data are known -- what an experiment
  spec states, since it does not hold the data.

Every law draws exactly one uniform per round and flips when ``u`` is below the flip probability of the round's
cell, so the laws share their random numbers: a law whose cells all equal (rho0, rho1) gives the class-conditional
law's stream bit for bit.

Adding a law is one module: a NamedTuple record with a compiled ``flip``, and a :class:`FeedbackLaw` subclass
whose ``record`` builds it (see docs/bandit-core.md, "Feedback laws").
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from numba.extending import overload

from nolo._config import Configurable
from nolo._jit import njit
from nolo._validation import check_flip_rates, check_int, check_scalar
from nolo.exceptions import FeedbackLawWarning, ParameterError
from nolo.random import as_generator

__all__ = ["FeedbackLaw", "FlipMatrix", "ContextFlips", "ColumnRates", "ClassFlips", "MatrixFlips", "RowFlips",
           "flip_bit", "flip_rates", "flip_one", "flip_many", "warn_if_correction_biased"]


# ---------------------------------------------------------------------------------------------
# the rules (compiled) and their records
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def flip_rates(bit, u, rho0, rho1):
    """The two-rate rule: a true 1 becomes 0 when u < rho1, a true 0 becomes 1 when u < rho0 (AM section 3)."""
    if bit == 1:
        return 0 if u < rho1 else 1
    return 1 if u < rho0 else 0


@njit(cache=True, nogil=True, inline="always")
def _class_flip(law, bit, u, y, played, i):
    return flip_rates(bit, u, law.rho0, law.rho1)


@njit(cache=True, nogil=True, inline="always")
def _matrix_flip(law, bit, u, y, played, i):
    # Q[y, y] flips a true 1 (played == y), Q[y, a] a true 0 (played a != y)
    q = law.Q[y, played]
    return flip_rates(bit, u, q, q)


@njit(cache=True, nogil=True, inline="always")
def _row_flip(law, bit, u, y, played, i):
    return flip_rates(bit, u, law.rho0[i], law.rho1[i])


class ClassFlips(NamedTuple):
    """Record of the class-conditional law: ``rho0 = P(bit 1 | truth 0)``, ``rho1 = P(bit 0 | truth 1)``."""

    rho0: float
    rho1: float
    flip = _class_flip


class MatrixFlips(NamedTuple):
    """Record of the (K, K) law: ``Q[y, a] = P(flipped | true label y, played a)`` (C-contiguous float64)."""

    Q: np.ndarray
    flip = _matrix_flip


class RowFlips(NamedTuple):
    """Record of the context-dependent law: per-row rates ``rho0[i]``, ``rho1[i]`` (float64, one per row of X)."""

    rho0: np.ndarray
    rho1: np.ndarray
    flip = _row_flip


def flip_bit(law, bit, u, y, played, i):
    """The received bit under the law whose record is ``law`` (compiled code only): the true bit ``bit``, the
    round's uniform ``u``, true label ``y``, played label ``played``, row ``i``."""
    raise NotImplementedError("compiled code only")


@overload(flip_bit, inline="always")
def _flip_bit(law, bit, u, y, played, i):
    fn = getattr(getattr(law, "instance_class", None), "flip", None)
    if fn is None:
        raise TypeError(f"{law} is not a feedback-law record: its class must name a compiled `flip` "
                        "(see nolo.noise.feedback_laws)")
    return lambda law, bit, u, y, played, i: fn(law, bit, u, y, played, i)


def _flip_one(law, bit, u, y, played, i):
    return flip_bit(law, bit, u, y, played, i)


def _flip_many(law, bits, u, y, played, rows, out):
    for t in range(bits.shape[0]):
        out[t] = flip_bit(law, bits[t], u[t], y[t], played[t], rows[t])


# cached on disk for nolo's own records only (a record class defined in a user's script would be pickled by
# reference into numba's cache index; see nolo.learners.bandit._stream)
_flip_one_cached, _flip_one_uncached = (njit(cache=c, nogil=True)(_flip_one) for c in (True, False))
_flip_many_cached, _flip_many_uncached = (njit(cache=c, nogil=True)(_flip_many) for c in (True, False))


def cacheable(record) -> bool:
    """Whether compiled code taking ``record`` may be cached on disk (its class is one of nolo's)."""
    return type(record).__module__.startswith("nolo.")


def flip_one(record, bit: int, u: float, y: int, played: int, i: int) -> int:
    """One round's received bit under ``record`` (the compiled rule, called from Python; arguments unchecked)."""
    fn = _flip_one_cached if cacheable(record) else _flip_one_uncached
    return int(fn(record, int(bit), float(u), int(y), int(played), int(i)))


def flip_many(record, bits, u, y, played, rows) -> np.ndarray:
    """The received bits of many rounds under ``record`` (int64 arrays of one length; ``u`` float64; unchecked)."""
    bits = np.ascontiguousarray(bits, dtype=np.int64)
    out = np.empty(bits.shape[0], dtype=np.int64)
    fn = _flip_many_cached if cacheable(record) else _flip_many_uncached
    fn(record, bits, np.ascontiguousarray(u, dtype=np.float64), np.ascontiguousarray(y, dtype=np.int64),
       np.ascontiguousarray(played, dtype=np.int64), np.ascontiguousarray(rows, dtype=np.int64), out)
    return out


# ---------------------------------------------------------------------------------------------
# the Python side: validation, kappa, the record
# ---------------------------------------------------------------------------------------------


class FeedbackLaw(Configurable):
    """Base class of the feedback laws (see the module docstring).

    A subclass validates its parameters in ``_validate_params`` (a ParameterError naming the parameter), reports
    ``kappa_range`` (the smallest and largest ``1 - P(flip | truth 0) - P(flip | truth 1)`` over its cells) and
    builds its compiled record in ``record()``.  ``constant_rates`` is True only for the class-conditional law:
    the one under which the learners' flip corrections (fixed rho0, rho1) are unbiased.
    """

    #: True for the class-conditional law with constant rates (the law the learners' corrections assume)
    constant_rates = False

    def validate(self) -> "FeedbackLaw":
        """Run :meth:`_validate_params`; return self."""
        self._validate_params()
        return self

    @property
    def kappa_range(self) -> tuple[float, float]:
        """(smallest, largest) ``kappa = 1 - P(flip | truth 0) - P(flip | truth 1)`` over the law's cells."""
        raise NotImplementedError

    def record(self):
        """The validated law's compiled record (a NamedTuple naming its ``flip`` rule); arrays are copies."""
        raise NotImplementedError

    def check_environment(self, n_rows: int, n_classes: int) -> None:
        """Check the law fits a data set of ``n_rows`` rows and labels 0..``n_classes - 1`` (ParameterError)."""
        self._validate_params()

    def bind(self, X) -> "FeedbackLaw":
        """The law for the data set ``X`` (the rows the environment shows): self for a law that reads nothing off
        the data; a :class:`ContextFlips` with per-row rules returns a copy holding the rules' rates."""
        return self

    def check_labels(self, n_labels: int, name: str = "n_classes") -> None:
        """Check the law covers played labels 0..``n_labels - 1`` (ParameterError naming ``name``); most do."""

    def check_played(self, played: int) -> None:
        """Check one round's played label can index the law (ParameterError naming ``played``); most laws take any."""

    def sample(self, y, played, rows, rng) -> np.ndarray:
        """Received bits for rounds with true labels ``y``, played labels ``played`` and rows ``rows`` (arrays of one
        length), one uniform per round from ``rng``: the rule the environment applies."""
        y = np.asarray(y, dtype=np.int64).ravel()
        played = np.asarray(played, dtype=np.int64).ravel()
        rows = np.asarray(rows, dtype=np.int64).ravel()
        if not (y.shape == played.shape == rows.shape):
            raise ParameterError(f"y, played and rows must have one length, got {y.size}, {played.size}, {rows.size}")
        self._check_cells(y, played, rows)
        u = as_generator(rng, "rng").random(y.shape[0])
        return flip_many(self.record(), (y == played).astype(np.int64), u, y, played, rows)

    def _check_cells(self, y, played, rows) -> None:
        """Check the rounds' (y, played, row) index the law's arrays (the compiled rules do not check bounds)."""
        if y.size and (y.min() < 0 or played.min() < 0):
            raise ParameterError("y and played must be non-negative labels")


def _rate_kappas(r0, r1):
    k = 1.0 - np.asarray(r0, dtype=np.float64) - np.asarray(r1, dtype=np.float64)
    return float(k.min()), float(k.max())


class FlipMatrix(FeedbackLaw):
    """Class-dependent feedback flips: ``Q[y, a] = P(the bit is flipped | true label y, played a)``.

    The diagonal ``Q[y, y]`` flips a true 1 (a right label reported wrong), an off-diagonal ``Q[y, a]`` a true 0 (the
    wrong label ``a`` reported right).  Entries lie in [0, 1) and ``Q[y, y] + Q[y, a] < 1`` for every ``a != y``, so
    the bit still tells the right label from each wrong one (``kappa(y, a) = 1 - Q[y, y] - Q[y, a] > 0``).

    The learners' flip corrections assume constant rates (:class:`~nolo.noise.FlipChannel`); under this law they are
    biased unless every row of Q has one off-diagonal value rho0 and the diagonal rho1.

    Parameters
    ----------
    Q : (K, K) array of flip probabilities, K >= 2 (at least the number of labels the learner plays).
    """

    def __init__(self, Q=None):
        self.Q = Q

    def _matrix(self) -> np.ndarray:
        if self.Q is None:
            raise ParameterError("Q must be a (K, K) array of flip probabilities, got None")
        try:
            Q = np.array(self.Q, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"Q must be a (K, K) array of flip probabilities: {exc}") from None
        if Q.ndim != 2 or Q.shape[0] != Q.shape[1] or Q.shape[0] < 2:
            raise ParameterError(f"Q must be a square (K, K) array with K >= 2, got shape {Q.shape}")
        if not np.all(np.isfinite(Q)) or np.any(Q < 0) or np.any(Q >= 1):
            raise ParameterError("Q must hold flip probabilities in [0, 1) (finite), got entries outside")
        s = np.diag(Q)[:, None] + Q
        np.fill_diagonal(s, 0.0)
        if np.any(s >= 1):
            y, a = np.argwhere(s >= 1)[0]
            raise ParameterError(f"Q[y, y] + Q[y, a] must be < 1 for every a != y (otherwise the bit carries no "
                                 f"information), got Q[{y}, {y}] + Q[{y}, {a}] = {s[y, a]}")
        return np.ascontiguousarray(Q)

    def _validate_params(self) -> None:
        """Check Q (square, entries in [0, 1), Q[y, y] + Q[y, a] < 1 for a != y)."""
        self._matrix()

    @property
    def n_labels(self) -> int:
        """K, the labels Q covers."""
        return int(self._matrix().shape[0])

    @property
    def kappa_range(self) -> tuple[float, float]:
        Q = self._matrix()
        k = 1.0 - np.diag(Q)[:, None] - Q
        off = ~np.eye(Q.shape[0], dtype=bool)
        return float(k[off].min()), float(k[off].max())

    def record(self) -> MatrixFlips:
        return MatrixFlips(self._matrix())

    def check_environment(self, n_rows: int, n_classes: int) -> None:
        self.check_labels(n_classes, "y")

    def check_labels(self, n_labels: int, name: str = "n_classes") -> None:
        K = self.n_labels
        if int(n_labels) > K:
            raise ParameterError(f"Q must be at least ({n_labels}, {n_labels}) to cover {name} "
                                 f"(labels 0..{int(n_labels) - 1}), got ({K}, {K})")

    def check_played(self, played: int) -> None:
        K = len(self.Q)  # cheap: called every round (the law was validated when the environment took it)
        if not 0 <= int(played) < K:
            raise ParameterError(f"played must be a label in [0, {K}) (the labels Q covers), got {played}")

    def _check_cells(self, y, played, rows) -> None:
        super()._check_cells(y, played, rows)
        if y.size and max(y.max(), played.max()) >= self.n_labels:
            raise ParameterError(f"y and played must be labels < {self.n_labels} (the size of Q)")


def _is_rule(value) -> bool:
    """Whether a ContextFlips rate is a per-row rule (an object with ``rates_for(X)``) rather than an array."""
    return callable(getattr(value, "rates_for", None))


def _row_rates(name: str, v) -> np.ndarray:
    """One validated 1-d array of per-row rates in [0, 1) (a ParameterError naming ``name`` otherwise)."""
    if v is None:
        raise ParameterError(f"{name} must be a 1-d array of per-row flip rates, got None")
    try:
        a = np.array(v, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be a 1-d array of per-row flip rates: {exc}") from None
    if a.ndim != 1 or a.size == 0:
        raise ParameterError(f"{name} must be a non-empty 1-d array of per-row flip rates, got shape {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0) or np.any(a >= 1):
        bad = int(np.flatnonzero(~(np.isfinite(a) & (a >= 0) & (a < 1)))[0])
        raise ParameterError(f"{name} must hold rates in [0, 1), got {name}[{bad}] = {a[bad]}")
    return np.ascontiguousarray(a)


class ColumnRates(Configurable):
    """A per-row rate rule for :class:`ContextFlips`: the rate of row ``i`` rises linearly with feature ``column``,

    ``rate[i] = low + (high - low) * (x[i, column] - m) / (M - m)``

    where ``m``, ``M`` are the column's smallest and largest values over the data's rows (every row gets ``low``
    when the column is constant).  ``low > high`` makes the rate fall with the feature.  This is how an experiment
    spec states context-dependent flips without listing one rate per row::

        feedback:
          class: ContextFlips
          params:
            rho0: {class: ColumnRates, params: {column: 0, low: 0.05, high: 0.3}}
            rho1: {class: ColumnRates, params: {column: 0, low: 0.2, high: 0.0}}

    Parameters
    ----------
    column : int >= 0, the feature (column of X) the rate follows
    low, high : rates in [0, 1) at the column's smallest and largest value
    """

    def __init__(self, column=0, low=0.0, high=0.0):
        self.column = column
        self.low = low
        self.high = high

    def _validate_params(self) -> None:
        """Check ``column`` (an int >= 0) and the rates ``low``, ``high`` (in [0, 1))."""
        check_int(self.column, "column", low=0)
        for name in ("low", "high"):
            check_scalar(getattr(self, name), name, low=0.0, high=1.0, high_inclusive=False)

    def validate(self) -> "ColumnRates":
        """Run :meth:`_validate_params`; return self."""
        self._validate_params()
        return self

    def rates_for(self, X) -> np.ndarray:
        """The (n,) rates for the rows of ``X`` ((n, d) array or scipy sparse matrix)."""
        import scipy.sparse as sp

        self._validate_params()
        j = int(self.column)
        d = int(X.shape[1])
        if j >= d:
            raise ParameterError(f"column must be a feature index in [0, {d}) (the data has {d} features), got {j}")
        col = (np.asarray(X[:, [j]].toarray(), dtype=np.float64).ravel() if sp.issparse(X)
               else np.asarray(X[:, j], dtype=np.float64))
        lo, hi = float(col.min()), float(col.max())
        s = (col - lo) / (hi - lo) if hi > lo else np.zeros_like(col)
        low, high = float(self.low), float(self.high)
        return np.clip(low + (high - low) * s, min(low, high), max(low, high))


class ContextFlips(FeedbackLaw):
    """Context-dependent feedback flips: row ``i`` of X has its own rates ``rho0[i] = P(bit 1 | truth 0)`` and
    ``rho1[i] = P(bit 0 | truth 1)`` (e.g. computed from the features), each pair in [0, 1) with sum < 1.

    The learners' flip corrections assume constant rates (:class:`~nolo.noise.FlipChannel`); under this law they are
    biased unless every row has the same pair.

    Parameters
    ----------
    rho0, rho1 : (n,) arrays, one entry per row of X; or either a per-row rule (an object with ``rates_for(X)``,
        e.g. :class:`ColumnRates`), evaluated on the data by :meth:`bind` -- a law with a rule has no rates (and no
        record) until it is bound.
    """

    def __init__(self, rho0=None, rho1=None):
        self.rho0 = rho0
        self.rho1 = rho1

    @property
    def has_rules(self) -> bool:
        """Whether rho0 or rho1 is a per-row rule (the law must be bound to the data, :meth:`bind`)."""
        return _is_rule(self.rho0) or _is_rule(self.rho1)

    def rates(self) -> tuple[np.ndarray, np.ndarray]:
        """Validated per-row ``(rho0, rho1)`` as float64 arrays (copies)."""
        for name, v in (("rho0", self.rho0), ("rho1", self.rho1)):
            if _is_rule(v):
                raise ParameterError(f"{name} is a per-row rule ({type(v).__name__}): bind the law to the data "
                                     f"first (ContextFlips.bind(X)) to get its rates")
        r0, r1 = _row_rates("rho0", self.rho0), _row_rates("rho1", self.rho1)
        if r0.shape != r1.shape:
            raise ParameterError(f"rho0 and rho1 must have one length (one entry per row), got {r0.size} and {r1.size}")
        if np.any(r0 + r1 >= 1):
            i = int(np.flatnonzero(r0 + r1 >= 1)[0])
            raise ParameterError(f"rho0 + rho1 must be < 1 in every row (otherwise that row's bit carries no "
                                 f"information), got rho0[{i}] + rho1[{i}] = {r0[i] + r1[i]}")
        return r0, r1

    def _validate_params(self) -> None:
        """Check the per-row rates (1-d, one length, in [0, 1), rho0[i] + rho1[i] < 1); with a rule, the rule's
        parameters and the other array alone (the rest is checked by :meth:`bind`)."""
        if not self.has_rules:
            self.rates()
            return
        for name, v in (("rho0", self.rho0), ("rho1", self.rho1)):
            if _is_rule(v):
                validate = getattr(v, "validate", None)
                if callable(validate):
                    validate()
            else:
                _row_rates(name, v)

    def bind(self, X) -> "ContextFlips":
        """A ContextFlips holding the rates of ``X``'s rows: each rule evaluated on X (arrays kept as they are),
        validated (and checked to have one entry per row of X); self when there is no rule."""
        if not self.has_rules:
            return self
        self._validate_params()
        n = int(X.shape[0])
        out = []
        for name, v in (("rho0", self.rho0), ("rho1", self.rho1)):
            if _is_rule(v):
                try:
                    a = np.asarray(v.rates_for(X), dtype=np.float64)
                except ParameterError as exc:
                    raise ParameterError(f"{name} ({type(v).__name__}): {exc}") from None
            else:
                a = _row_rates(name, v)
            if a.shape != (n,):
                raise ParameterError(f"{name} must have one entry per row of X ({n}), got shape {a.shape}")
            out.append(a)
        law = ContextFlips(*out)
        law.validate()
        return law

    @property
    def n_rows(self) -> int:
        return int(self.rates()[0].size)

    @property
    def kappa_range(self) -> tuple[float, float]:
        return _rate_kappas(*self.rates())

    def record(self) -> RowFlips:
        return RowFlips(*self.rates())

    def check_environment(self, n_rows: int, n_classes: int) -> None:
        if self.n_rows != int(n_rows):
            raise ParameterError(f"rho0 and rho1 must have one entry per row of X ({n_rows}), got {self.n_rows}")

    def _check_cells(self, y, played, rows) -> None:
        super()._check_cells(y, played, rows)
        if rows.size and (rows.min() < 0 or rows.max() >= self.n_rows):
            raise ParameterError(f"rows must be row indices in [0, {self.n_rows})")


def class_flips(rho0, rho1) -> ClassFlips:
    """The class-conditional record of validated rates (a ParameterError naming rho0 or rho1 otherwise)."""
    r0, r1 = check_flip_rates(rho0, rho1)
    return ClassFlips(float(r0), float(r1))


def warn_if_correction_biased(learner, law, stacklevel: int = 2) -> None:
    """One :class:`~nolo.exceptions.FeedbackLawWarning` when ``learner`` corrects the feedback with two fixed rates
    (it has ``rho0``/``rho1``, or estimates two rates online: ``estimate_rates``) and plays under a ``law`` whose
    rates are not two constants: the correction is biased there (the learner still runs).  The compiled stream and
    the round-by-round environment both call it; ``stacklevel`` points the warning at their caller."""
    fixed = getattr(learner, "rho0", None) is not None or bool(getattr(learner, "estimate_rates", False))
    if law is None or law.constant_rates or not fixed:
        return
    lo, hi = law.kappa_range
    warnings.warn(f"{type(learner).__name__} corrects the feedback with two fixed rates (rho0, rho1), which assumes "
                  f"class-conditional flips with constant rates (FlipChannel); under the {type(law).__name__} "
                  f"feedback law (kappa from {lo:.3g} to {hi:.3g}) its correction is biased",
                  FeedbackLawWarning, stacklevel=stacklevel + 1)
