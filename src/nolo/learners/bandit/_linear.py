"""The base classes of the linear multiclass bandit learners: weights, prediction, the per-round protocol, the
compiled-stream driver and its hooks.

``W_`` has shape (K, d) (AM's W, rows w_r) and is stored in Fortran order so that its transpose, the
``(d, K)`` array the compiled code works on, is C-contiguous: the Python objects and the whole-stream
loop share the very same array.  A subclass supplies its state record (:meth:`_state_record`, a
``NamedTuple`` naming its compiled ``act``/``update``, see :mod:`._stream`) built from its trailing-underscore
attributes; everything else has a default here.
"""

from __future__ import annotations

import copy
import numbers
import time
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from nolo import _scale
from nolo._jit import njit
from nolo._validation import check_choice, check_int, check_scalar, check_state_bytes
from nolo.exceptions import PersistenceError, NumericalError, ParameterError
from nolo.learners.bandit import _predict, _stream
from nolo.learners.bandit._pcg64 import pcg64_state, store_pcg64_state
from nolo.learners.bandit._simd import gather_dense
from nolo.learners.bandit.simulator import canonical_csr, check_representable
from nolo.learners.bandit.exploration import COROLLARIES, corollary_gamma
from nolo.learners.base import BanditLearner
from nolo.noise.feedback_laws import warn_if_correction_biased

DTYPES = ("float64", "float32")
_NO_LOG = np.zeros(0, dtype=np.int64)
_NO_PROP = np.zeros(0)
_F64 = np.dtype(np.float64)


@njit(cache=True, nogil=True)
def _finite(a) -> bool:
    for v in a.flat:
        if not np.isfinite(v):
            return False
    return True


def _all_finite(arrays) -> bool:
    """True when every array holds only finite values: max and min propagate NaN and show inf (two reductions, no
    temporary array)."""
    return all(np.isfinite(a.max()) and np.isfinite(a.min()) for a in arrays if a.size)


def _entries_finite(entries) -> bool:
    """As :func:`_all_finite` for the few small entries one round writes: one compiled pass each (a numpy
    reduction's call overhead dominates on arrays this small)."""
    return all(_finite(a) for a in entries if a.size and a.dtype.kind == "f")


def _check_return_probability(value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"return_probability must be True or False, got {value!r}")


def _record_arrays(state: tuple) -> list:
    """Every array of a state record the update may write, those of nested records (e.g. SquareCB's oracle)
    included; not the tables a record class lists in ``constants`` (computed from the parameters, read only: an
    entry no round can use may be inf, e.g. the step of a label played with probability 0)."""
    out = []
    constants = getattr(type(state), "constants", ())
    for name, a in zip(getattr(state, "_fields", ()) or [None] * len(state), state):
        if name in constants:
            continue
        if isinstance(a, np.ndarray):
            out.append(a)
        elif isinstance(a, tuple):
            out.extend(_record_arrays(a))
    return out


def _singular(learner, exc: Exception) -> NumericalError:
    """The NumericalError for a compiled update whose matrix inverse failed (``numpy.linalg.LinAlgError``: a matrix
    singular to machine precision, e.g. AutoCB re-expressing its ridge state after rows of ~1e38); the caller has
    undone the call."""
    return NumericalError(f"{type(learner).__name__}: a matrix of the update is singular to machine precision ({exc}): "
                          "rows at an extreme scale; rescale X (the call was undone, state unchanged)")


class LinearMulticlassMixin:
    """W_ (K x d, Fortran order), predict, the compiled-stream driver and its hooks (defaults for all)."""

    _fortran_state: ClassVar[tuple[str, ...]] = ("W_",)
    #: True when the learner needs each segment's (index, played, feedback) log (:meth:`_after_segment`)
    _logs_rounds: ClassVar[bool] = False

    def _check_common(self) -> None:
        check_int(self.n_classes, "n_classes", low=2)
        check_choice(self.dtype, "dtype", DTYPES)

    def initialize(self, n_features: int) -> "LinearMulticlassMixin":
        """As :meth:`Learner.initialize`, refusing (ParameterError, nothing allocated) a weight matrix larger than
        this machine's memory."""
        self._validate_params()
        if not isinstance(n_features, bool) and isinstance(n_features, (int, np.integer)) and n_features >= 1:
            K, d = int(self.n_classes), int(n_features)
            check_state_bytes(K * d * np.dtype(self.dtype).itemsize, f"{type(self).__name__} keeps an n_classes x "
                              f"n_features {self.dtype} weight matrix: n_classes={K}, n_features={d}",
                              hint="lower n_classes or the rows' dimension (feature hashing, "
                                   "nolo.kernels.NystroemFeatures)")
        return super().initialize(n_features)

    def _init_weights(self, n_features: int) -> None:
        self.W_ = np.zeros((int(self.n_classes), n_features), dtype=self.dtype, order="F")

    def _set_state(self, state: dict[str, Any]) -> None:
        super()._set_state(state)
        for key in self._fortran_state:
            if hasattr(self, key):
                setattr(self, key, np.asfortranarray(getattr(self, key)))

    # -- the algorithm's state record (the one thing a subclass must provide) ----------------
    def _state_record(self) -> tuple:
        """The typed record (a NamedTuple naming compiled ``act``/``update``) built from the current state."""
        raise NotImplementedError

    # -- hooks of the compiled stream, with defaults -----------------------------------------
    def _segment_length(self, remaining: int) -> int:
        """Rounds the compiled loop may run before :meth:`_after_segment` must see them (default: all)."""
        return remaining

    def _after_segment(self, X, log_index, log_played, log_feedback) -> None:
        """Called after each compiled segment; with ``_logs_rounds`` the logs hold its rounds."""

    def _after_round(self, x: np.ndarray, played: int, feedback: int) -> None:
        """Called after each per-round ``learn`` (RCINE's block log)."""

    def _run_extras(self) -> dict:
        """Cumulative figures whose increase over a run is reported in ``StreamResult.extra``."""
        return {}

    def _finish_extras(self, extra: dict, seconds: float) -> dict:
        """Last touch on a run's extras (e.g. shares of the run's time)."""
        return extra

    # -- the inputs' scale (nolo._scale: one ScaleWarning per learner) ----------------------------
    #: True when the learner normalises each feature itself (the default learner): no check of the columns' spread
    _scale_free_columns: ClassVar[bool] = False

    def _scale_reference(self) -> tuple[float, str, bool] | None:
        """(reference, what, two_sided): the squared row norm the learner's regularisation or step is tuned for, its
        name in the warning, and whether rows far above it hurt too; None (the default) when a global rescaling of
        the rows changes nothing the learner does (the Perceptron, the AM learners' unbounded steps)."""
        return None

    def _check_scale(self, X, stacklevel: int) -> None:
        """Warn once (:class:`nolo.exceptions.ScaleWarning`) when rows ``X`` are on a scale the learner cannot learn
        from (:func:`nolo._scale.scale_problem`); ``stacklevel``: the user's frame counted from this one's caller (1)."""
        ref = self._scale_reference()
        if ref is None and self._scale_free_columns:
            self._scale_checked = True
            return
        reference, what, two_sided = ref if ref is not None else (None, "", False)
        _scale.warn_scale(self, X, reference, what, two_sided, not self._scale_free_columns, stacklevel + 2)

    def _check_scale_round(self, x: np.ndarray) -> None:
        """Round-by-round input: the check on the first rounds' rows (:func:`nolo._scale.gather_rows`)."""
        rows = _scale.gather_rows(self, x)
        if rows is not None:
            self._check_scale(rows, 4)  # warn_scale < here < _learn_round < learn < the caller

    # -- input checks -------------------------------------------------------------------------
    def _check_x(self, x: Any, name: str = "x") -> np.ndarray:
        if type(x) is np.ndarray and x.dtype == _F64 and x.ndim == 1 and x.flags.writeable:
            # a live loop's row: check_array's checks on a float64 row, the finiteness test compiled (a numpy
            # reduction's call overhead is most of a round's validation on rows this short)
            if not _finite(x):
                raise ParameterError(f"{name} must contain only finite values (no NaN or inf)")
            check_representable(x, self.dtype, name)
            return self._check_width(x, name)
        if sp.issparse(x):  # one context as a (1, d) sparse row: checked like any CSR input, then densified (O(d))
            if len(x.shape) != 2 or x.shape[0] != 1:
                raise ParameterError(f"{name} given as a sparse matrix must be one row of shape (1, d), got shape "
                                     f"{x.shape}")
            x = canonical_csr(x).toarray().ravel()
        arr = super()._check_x(x, name)
        check_representable(arr, self.dtype, name)
        return arr

    def _check_X(self, X: Any, name: str = "X") -> np.ndarray:
        arr = super()._check_X(X, name)
        check_representable(arr, self.dtype, name)
        return arr

    def _rows(self, X, dtype=np.float64):
        """``X`` (dense or sparse, checked) as the compiled code's rows (:func:`._stream.dense_rows` /
        ``csr_rows``) in ``dtype`` and its number of rows: for the learners whose ``decision_function`` runs compiled."""
        rows, n, _ = self._rows_X(X, dtype)
        return rows, n

    def _check_csr(self, X, dtype) -> sp.csr_matrix:
        """A sparse ``X`` checked (:func:`.simulator.canonical_csr`) and in canonical form, with the learner's
        number of features once it has one."""
        X = canonical_csr(X, dtype)
        d = getattr(self, "n_features_in_", None)
        if d is not None and X.shape[1] != d:
            raise ParameterError(f"X must have {d} features per row, got {X.shape[1]}")
        return X

    def _rows_X(self, X, dtype=np.float64):
        """(rows, number of rows, the checked X they view): see :meth:`_rows`."""
        if sp.issparse(X):
            X = self._check_csr(X, dtype)
            if not np.all(np.isfinite(X.data)):  # finite values the cast to float32 made inf
                raise ParameterError("X must contain only finite values (no NaN or inf)")
            return _stream.csr_rows(X), X.shape[0], X
        X = np.ascontiguousarray(self._check_X(X), dtype=dtype)
        return _stream.dense_rows(X), X.shape[0], X

    # -- all-or-nothing: a snapshot of the persistent state -------------------------------------
    def _snapshot(self, journal: dict | None = None) -> dict:
        """Every state attribute saved for :meth:`_restore`; an array named in ``journal`` (:meth:`_journal`) by its
        written entries only."""
        snap = {}
        for k, v in vars(self).items():
            if not k.endswith("_") or k.startswith("__"):
                continue
            if isinstance(v, np.random.Generator):
                snap[k] = ("rng", v, copy.deepcopy(v.bit_generator.state))
            elif isinstance(v, np.ndarray) and journal and id(v) in journal:
                at = journal[id(v)][1]
                snap[k] = ("entries", v, (at, v[at].copy()))
            elif isinstance(v, np.ndarray):
                snap[k] = ("array", v, v.copy(order="K"))
            else:
                snap[k] = ("value", v, copy.deepcopy(v))
        return snap

    def _restore(self, snap: dict) -> None:
        for k in [k for k in vars(self) if k.endswith("_") and not k.startswith("__") and k not in snap]:
            delattr(self, k)
        for k, (kind, obj, saved) in snap.items():
            if kind == "rng":  # in place: the generator may be shared with the environment
                obj.bit_generator.state = saved
                setattr(self, k, obj)
            elif kind == "array":  # in place: views handed out stay valid
                obj[...] = saved
                setattr(self, k, obj)
            elif kind == "entries":  # in place, the entries the call could write
                obj[saved[0]] = saved[1]
                setattr(self, k, obj)
            else:
                setattr(self, k, saved)

    def _round_rows(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        x = np.ascontiguousarray(x, dtype=self.W_.dtype)
        idx = np.empty(x.shape[0], dtype=np.int64)
        val = np.empty(x.shape[0], dtype=x.dtype)
        nnz = gather_dense(x.reshape(1, -1), 0, idx, val)
        return idx, val, nnz

    def _state_finite(self, state: tuple, journal: dict | None = None) -> bool:
        """True when W_ and every array of the record hold only finite values (inf/NaN are sticky in every
        rule's arithmetic, so one check per call catches a non-finite value written at any round); an array named
        in ``journal`` is checked at the entries the call could write."""
        arrays = [self.W_, *_record_arrays(state)]
        if not journal:
            return _all_finite(arrays)
        return (_all_finite([a for a in arrays if id(a) not in journal])
                and _all_finite([a[at] for a, at in journal.values() if a.dtype.kind == "f"]))

    def _journal(self, rows, played: np.ndarray) -> dict | None:
        """The large arrays of which ``learn_many`` on ``rows`` playing ``played`` writes only entries known before
        the call, ``{id(array): (array, indices)}``: its all-or-nothing snapshot and its finiteness check then cover
        those entries only (a learner whose state is mostly a table the rounds touch a little of).  None (the
        default): every array is saved and checked whole."""
        return None

    def _round_record(self):
        """The state record of one ``act``/``learn`` call: :meth:`_state_record` (built afresh; a learner whose record
        is costly to build next to one round may reuse it while its state attributes are the same objects)."""
        return self._state_record()

    def _round_entries(self, state) -> dict | None:
        """A dict in which :meth:`_round_fn` keeps the compiled entry points of the per-round calls on ``state``,
        for a learner that reuses its record across calls (:meth:`_round_record`; the entry points are valid while
        it is the same object); None (the default): a new record per call, dispatched by numba each time."""
        return None

    def _round_fn(self, entry: str, wrapper, state):
        """``wrapper`` (a per-round call of :mod:`._stream`) for the record ``state``, or, where the record is
        reused, numba's compiled entry point for its arguments, resolved after the first call: that skips numba's
        type dispatch over the record's fields (about 6 us a call for the default learner's record), the same
        compiled code on the same argument types."""
        entries = self._round_entries(state)
        if entries is None:
            return wrapper
        fn = entries.get(entry)
        if fn is None:
            def first(*args):
                out = wrapper(*args)
                entries[entry] = _stream.entry_point(wrapper, args) or wrapper
                return out
            return first
        return fn

    def _round_writes(self, idx: np.ndarray, val: np.ndarray, nnz: int, played: int) -> list | None:
        """``(array, index)`` pairs covering every entry of the persistent state that one ``learn`` round of the row
        (non-zeros ``idx/val[:nnz]``) playing ``played`` may write, for a learner whose round touches a small part of
        a large state: the all-or-nothing round then saves and checks only those entries.  None (the default): the
        round may write anywhere, and ``W_`` and every array of the record are saved and checked."""
        return None

    def _learn_round(self, x: np.ndarray, y: int, played: int, feedback: int) -> None:
        """One round's compiled update; all-or-nothing (a non-finite write is undone and raises)."""
        if "_scale_checked" not in self.__dict__:
            self._check_scale_round(x)
        idx, val, nnz = self._round_rows(x)
        state = self._round_record()
        writes = self._round_writes(idx, val, nnz, played)
        finite = _entries_finite
        if writes is None:  # every array, but those of the journal by the entries it names
            row = _stream.dense_rows(np.ascontiguousarray(x, dtype=self.W_.dtype).reshape(1, -1))
            journal = self._journal(row, np.array([played], dtype=np.int64)) or {}
            writes = [journal.get(id(a), (a, Ellipsis)) for a in (self.W_, *_record_arrays(state))]
            finite = _all_finite
        saved = [a[i].copy() for a, i in writes]
        try:
            ok, _ = self._round_fn("learn", _stream.learn_round, state)(state, self.W_.T, idx, val, nnz, y, played,
                                                                        feedback)
            singular = None
        except np.linalg.LinAlgError as exc:  # a compiled inverse (AutoCB re-expressing its state) on rows of ~1e38
            ok, singular = False, exc
        if not (ok and finite([a[i] for a, i in writes])):
            for (a, i), s in zip(writes, saved):
                a[i] = s
            if singular is not None:
                raise _singular(self, singular)
            raise NumericalError(f"{type(self).__name__}: the update would write a non-finite value "
                                 "(inf or NaN); state unchanged")

    # -- the compiled stream ------------------------------------------------------------------------
    def _play_stream(self, src: _stream.StreamInput, n_rounds: int, checkpoints: np.ndarray, log: bool):
        """Play ``n_rounds`` rounds of ``src`` in the compiled loop, all or nothing.

        Returns (played mistakes, greedy mistakes at the checkpoints, extras, seconds); ``t_`` advances by
        ``n_rounds``.  On any exception (NumericalError on a non-finite write included) every state
        attribute and the learner's generator are restored to their values at the call.
        """
        out_p = np.zeros(checkpoints.size, dtype=np.int64)
        out_g = np.zeros(checkpoints.size, dtype=np.int64)
        counters = np.zeros(4, dtype=np.int64)
        if "_scale_checked" not in self.__dict__:
            self._check_scale(src.X, 4)  # warn_scale < here < ClassificationBandit.run < run_stream < the caller
        warn_if_correction_biased(self, src.feedback_law, stacklevel=4)  # _play_stream < run < run_stream < caller
        snap = self._snapshot()
        shared = self.rng_ is src.env_generator
        lrn_state = None if shared else pcg64_state(self.rng_)
        lrn = src.env.rng if shared else (self.rng_ if lrn_state is None else lrn_state)
        t0 = time.perf_counter()
        extra0 = self._run_extras()
        logs = (_NO_LOG,) * 3
        prop = _NO_PROP
        parts = []
        try:
            done = 0
            while done < n_rounds:
                n = self._segment_length(n_rounds - done)
                if self._logs_rounds or log:
                    logs = tuple(np.empty(n, dtype=np.int64) for _ in range(3))
                if log:
                    prop = np.empty(n)
                rec = _stream.Recorder(checkpoints, out_p, out_g, counters, *logs, prop)
                state = self._state_record()
                try:
                    status, k = _stream.run_rounds(state, self.W_.T, src.rows, src.y, n, src.env, lrn, rec)
                except np.linalg.LinAlgError as exc:
                    raise _singular(self, exc) from None
                self.t_ += int(k)
                if status != _stream.OK or not self._state_finite(state):
                    raise NumericalError(
                        f"{type(self).__name__}: a round of this call computed a non-finite update (inf or NaN); "
                        "the whole call was undone (state and generators as before it)")
                if lrn_state is not None:
                    store_pcg64_state(self.rng_, lrn_state)
                self._after_segment(src.X, *logs)
                if log:
                    parts.append((*logs, prop))
                done += n
        except BaseException:
            self._restore(snap)
            raise
        seconds = time.perf_counter() - t0
        extra1 = self._run_extras()
        extra = self._finish_extras({k: extra1[k] - extra0.get(k, 0.0) for k in extra1}, seconds)
        if log:
            cat = [np.concatenate(c) if c else np.zeros(0) for c in zip(*parts)] if parts else [_NO_LOG] * 3 + [_NO_PROP]
            extra["log"] = {"index": cat[0], "played": cat[1], "feedback": cat[2], "propensity": cat[3]}
        return out_p, out_g, extra, seconds

    # -- prediction ------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """Scores W x of each row of X, shape (n, K); NumericalError when one overflows float64 (weights or rows
        near the largest float: a learner that took rows of ~1e308 holds such weights)."""
        self._require_initialized("decision_function")
        with np.errstate(over="ignore", invalid="ignore"):
            if sp.issparse(X):
                S = np.asarray(self._check_csr(X, None) @ self.W_.T)
            else:
                S = self._check_X(X) @ self.W_.T
        if not np.all(np.isfinite(S)):
            raise NumericalError(f"{type(self).__name__}.decision_function: a score W x overflows float64 (|W_| up "
                                 f"to {float(np.max(np.abs(self.W_))):.3g}); rescale X")
        return S

    def _require_probs(self, state) -> None:
        """NotImplementedError unless the record names a compiled ``probs`` (its propensities are known)."""
        if not _stream.has_probs(state):
            raise NotImplementedError(f"{type(self).__name__}'s state record names no compiled `probs`: its "
                                      "propensities are unknown (docs/bandit-core.md)")

    def action_probabilities(self, X) -> np.ndarray:
        """The probability with which the learner would play each label for each row of ``X`` now, shape (n, K): the
        distribution its ``act`` draws from (its record's compiled ``probs``), with the stream's score arithmetic.
        Never changes state.  Rows sum to 1 up to rounding; a deterministic rule (LinUCB, the Perceptron) puts all
        mass on its label."""
        self._require_initialized("action_probabilities")
        state = self._state_record()
        self._require_probs(state)
        rows, n = self._rows(X, self.W_.dtype)  # the scores in the learner's precision, as the stream computes them
        P = np.empty((n, int(self.n_classes)))
        _stream.probs_rows(state, self.W_.T, rows, P)
        return P

    def predict(self, X) -> np.ndarray:
        """Greedy labels argmax_r w_r . x (ties to the smallest label); never changes state."""
        self._require_initialized()
        if sp.issparse(X):
            X = self._check_csr(X, self.W_.dtype)
            check_representable(X, self.dtype, "X")
            out = np.empty(X.shape[0], dtype=np.int64)
            _predict.predict_csr(self.W_.T, X.indptr, X.indices, X.data, out)
            return out
        X = np.ascontiguousarray(self._check_X(X), dtype=self.W_.dtype)
        out = np.empty(X.shape[0], dtype=np.int64)
        _predict.predict_dense(self.W_.T, X, out)
        return out


class OneBitBanditLearner(LinearMulticlassMixin, BanditLearner):
    """The per-round protocol of the linear learners that play from their record's ``act`` and learn from one bit
    (the AM learners below, SquareCB): ``act``/``learn`` through :func:`._stream.act_round`/``learn_round``."""

    @property
    def learns_off_policy(self) -> bool:
        """Whether the update is sound on another policy's log (:mod:`nolo.offpolicy.learn`): False here, where
        the update divides by the probability this learner would have played the label; the learners whose update
        regresses the bit on (context, label) with known rates say True."""
        return False

    # -- the protocol ------------------------------------------------------------------------
    def act(self, x, return_probability: bool = False):
        """Draw the label to play for ``x`` from the record's ``act`` (AM eq. (3) for the AM learners: one uniform from
        the learner's generator).  ``return_probability=True``: ``(label, p)`` with p the probability the label was
        drawn with (what a log of the learner's plays needs for off-policy evaluation); the same draw either way."""
        x = self._check_x(x)
        _check_return_probability(return_probability)
        self._ensure_initialized(x.shape[0])
        idx, val, nnz = self._round_rows(x)
        state = self._round_record()
        if return_probability:
            self._require_probs(state)
            fn = self._round_fn("act_prob", _stream.act_prob_round, state)
            _, played, p = self._draw(fn, state, self.W_.T, idx, val, nnz)
            return int(played), float(p)
        _, played = self._draw(self._round_fn("act", _stream.act_round, state), state, self.W_.T, idx, val, nnz)
        return int(played)

    def act_many(self, X, return_probability: bool = False):
        """The labels to play for a batch of contexts that arrive before any feedback, one per row of ``X`` (dense or
        CSR), in one compiled call: the same labels, and the same generator state after, as ``act`` row by row (an
        ``act`` changes nothing but the generator).  ``return_probability=True``: ``(labels, p)`` with p[i] the
        probability label i was drawn with.  Their bits may come back later, in any order, through ``learn`` or
        ``learn_many``."""
        _check_return_probability(return_probability)
        if not self.is_initialized:
            self._validate_params()  # before its dtype is read
        dtype = self.W_.dtype if self.is_initialized else np.dtype(getattr(self, "dtype", "float64"))
        rows, n, Xr = self._rows_X(X, dtype)
        self._ensure_initialized(Xr.shape[1])
        state = self._round_record()
        if return_probability:
            self._require_probs(state)
        played, prob = np.empty(n, dtype=np.int64), np.empty(n)
        if n:
            self._draw(_stream.act_rows, state, self.W_.T, rows, played, prob, bool(return_probability))
        return (played, prob) if return_probability else played

    def _draw(self, fn, *args):
        """``fn(*args, rng)``, drawing from the learner's generator through a PCG64 state array where it is one
        (unboxing a Generator costs ~40 us per call), the advanced state stored back."""
        st = pcg64_state(self.rng_)
        out = fn(*args, self.rng_ if st is None else st)
        if st is not None:
            store_pcg64_state(self.rng_, st)
        return out

    def _check_round(self, x, played, feedback) -> np.ndarray:
        x = self._check_x(x)
        if not self.is_initialized:
            self._validate_params()  # before n_classes is used below
        K = int(self.n_classes)
        if isinstance(played, bool) or not isinstance(played, (numbers.Integral, np.integer)) or not 0 <= played < K:
            raise ParameterError(f"played must be an integer label in [0, {K - 1}], got {played!r}")
        if isinstance(feedback, (bool, np.bool_)):
            feedback = int(feedback)
        if not isinstance(feedback, (numbers.Integral, np.integer)) or feedback not in (0, 1):
            raise ParameterError(f"feedback must be 0 or 1, got {feedback!r}")
        return x

    def learn(self, x, played, feedback) -> "OneBitBanditLearner":
        """Update on the (possibly flipped) bit ``feedback`` = 1[played == y] after ``act(x)`` played ``played``."""
        x = self._check_round(x, played, feedback)
        self._ensure_initialized(x.shape[0])
        self._learn_round(x, -1, int(played), int(feedback))
        self.t_ += 1
        self._after_round(x, int(played), int(feedback))
        return self


    def learn_many(self, X, played, feedback) -> "OneBitBanditLearner":
        """Update on logged rounds in order: row i of ``X`` (dense or CSR) was played ``played[i]`` and got the bit
        ``feedback[i]``.  The same state as ``learn`` row by row, in one compiled call per segment; all or nothing
        (a bad row or a non-finite update leaves the learner as it was).

        Sound on another policy's log only for learners whose update is a regression of the bit on (context, label)
        (FastCB, SquareCB, LinUCB, the default learner with known rates): the AM learners' and the Banditron's updates
        divide by the probability *they* would have played the label with (docs/offpolicy.md)."""
        Xc = X if sp.issparse(X) else self._check_X(X)
        K = int(self.n_classes)
        n = Xc.shape[0]

        def one_d(v, name):
            try:
                return np.asarray(v)
            except (ValueError, TypeError) as exc:  # ragged lists, objects numpy cannot hold in one array
                raise ParameterError(f"{name} must be {n} values, one per row of X: {exc}") from None

        a, f = one_d(played, "played"), one_d(feedback, "feedback")
        if a.shape != (n,) or not (np.issubdtype(a.dtype, np.integer) or a.size == 0):
            raise ParameterError(f"played must be {n} integer labels (one per row of X), got shape {a.shape}, "
                                 f"dtype {a.dtype}")
        if a.size and (a.min() < 0 or a.max() >= K):
            i = int(np.flatnonzero((a < 0) | (a >= K))[0])
            raise ParameterError(f"played must hold labels in [0, {K - 1}]; row {i} holds {a[i]}")
        if f.shape != (n,) or not (f.dtype == bool or np.issubdtype(f.dtype, np.integer) or f.size == 0):
            raise ParameterError(f"feedback must be {n} bits 0/1 (one per row of X), got shape {f.shape}, dtype {f.dtype}")
        if f.size and not np.all((f == 0) | (f == 1)):
            i = int(np.flatnonzero((f != 0) & (f != 1))[0])
            raise ParameterError(f"feedback must hold 0/1 bits; row {i} holds {f[i]}")
        if n == 0:
            return self
        was_initialized = self.is_initialized
        dtype = self.W_.dtype if was_initialized else np.dtype(getattr(self, "dtype", "float64"))
        rows, n, Xr = self._rows_X(Xc, dtype)
        self._ensure_initialized(Xr.shape[1])
        if "_scale_checked" not in self.__dict__:
            self._check_scale(Xr, 2)  # warn_scale < here < learn_many < the caller
        a = np.require(a, np.int64, "CW")  # writeable too: a read-only array would compile other loops
        f = np.require(f, np.int64, "CW")
        journal = self._journal(rows, a)
        snap = self._snapshot(journal)
        try:
            done = 0
            while done < n:
                m = self._segment_length(n - done)
                state = self._state_record()
                try:
                    k = _stream.learn_rows(state, self.W_.T, rows, a, f, done, done + m)
                except np.linalg.LinAlgError as exc:
                    raise _singular(self, exc) from None
                self.t_ += int(k)
                if k < m or not self._state_finite(state, journal):
                    raise NumericalError(f"{type(self).__name__}: row {done + int(k)} computed a non-finite update "
                                         "(inf or NaN); the whole call was undone")
                index = np.arange(done, done + m, dtype=np.int64)
                self._after_segment(Xr, index, a[done:done + m], f[done:done + m])
                done += m
        except BaseException:
            self._restore(snap)
            if not was_initialized:
                self.reset()
            raise
        return self


class ExploringBanditLearner(OneBitBanditLearner):
    """Base of Banditron, RCNBF, RCINE, BPA and SOBA: play from AM eq. (3), then update on one bit.

    Subclasses define ``__init__`` (storing their parameters) and :meth:`_state_record`, plus
    ``_init_state`` when the update needs more state than W.  ``gamma`` is a float in [0, 1) or one of
    ``"cor4.1"``, ``"cor4.2"``, ``"cor4.3"`` (AM Corollaries 4.1-4.3; then ``horizon`` T and ``complexity``
    D are needed and the resolved value is the state ``gamma_``).
    """

    def _check_state(self) -> None:
        """A loaded exploration rate must be the one a learner can hold: gamma_ in [0, 1) (the draw divides by it)."""
        super()._check_state()
        g = getattr(self, "gamma_", None)
        if g is not None and not 0.0 <= float(g) < 1.0:
            raise PersistenceError(f"state gamma_ must lie in [0, 1), got {g!r}")

    def _kappa_for_schedule(self) -> float:
        return 1.0

    def _check_gamma(self) -> None:
        g = self.gamma
        if getattr(self, "horizon", None) is not None:  # checked even when unused
            check_int(self.horizon, "horizon", low=1)
        check_scalar(getattr(self, "complexity", 1.0), "complexity", low=0.0, low_inclusive=False)
        if isinstance(g, str):
            check_choice(g, "gamma", COROLLARIES)
            if getattr(self, "horizon", None) is None:
                raise ParameterError(f"gamma={g!r} needs horizon (the number of rounds T), got None")
        elif isinstance(g, numbers.Real) and not isinstance(g, bool):
            check_scalar(g, "gamma", low=0.0, high=1.0, high_inclusive=False)
        else:
            raise ParameterError(f"gamma must be a real number in [0, 1) or one of {COROLLARIES}, got {g!r}")

    def _validate_params(self) -> None:
        self._check_common()
        self._check_gamma()

    def _resolve_gamma(self) -> float:
        if isinstance(self.gamma, str):
            return corollary_gamma(self.gamma, self.horizon, complexity=getattr(self, "complexity", 1.0),
                                   kappa=self._kappa_for_schedule())
        return float(self.gamma)

    def _init_state(self, n_features: int) -> None:
        self._init_weights(n_features)
        self.gamma_ = self._resolve_gamma()
