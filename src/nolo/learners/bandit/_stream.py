"""The one compiled stream loop of the bandit learners, its row accessors, the environment's draws, and the
plug-in points :func:`act` / :func:`update` through which every algorithm enters it.

Plug-in contract (see the package docstring and docs/bandit-core.md): an algorithm's state is a
``typing.NamedTuple`` subclass -- its *record* -- whose class names two compiled functions::

    class MyState(NamedTuple):
        gamma: float                      # fields: whatever the rule reads (scalars, arrays)
        act = my_act                      # (state, sp, K, rng) -> (greedy label, played label)
        update = my_update                # (state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback) -> ok
        adjust = my_adjust                # optional: (state, Wt, idx, val, lo, hi, s, K) -> None, e.g. s[:K] += bias
        probs = my_probs                  # optional: (state, sp, K, out) -> None, the distribution act draws from

:func:`act` and :func:`update` dispatch on the record's class at compile time, so :func:`run_rounds`
is ONE loop compiled (and cached, ``cache=True``) once per record type, calling the algorithm's rule
directly (:mod:`._forward`: no wrapper compiled between them; a rule marked ``inline="always"`` is inlined);
a record without ``act``/``update`` does not compile -- there are no algorithm codes.
The optional ``adjust`` finishes the K linear scores ``W x`` in place before ``act`` and ``update`` see
them, on every path (stream, per-round act and learn): a learner with a per-class bias (SquareCB's
regression oracles on [x, 1], whose ``Wt`` has a row d beyond x's d coordinates) adds it there.
Without it the scores are W x (nothing is compiled in).

Everything random is one uniform ``Generator.random()`` per decision, drawn from the *same*
generator objects the Python API uses (numba shares the bit generator's state; numpy's PCG64 is
stepped inline, :mod:`._pcg64`), in the same order:

* environment generator: ``u_index`` (only for ``order="replace"``; a new permutation for
  ``order="permute"`` draws ``n - 1`` uniforms at the start of each pass), then ``u_flip`` for the
  feedback law (``flip_bit(env.law, bit, u_flip, y, played, i)``, dispatched on the law's record as
  ``act``/``update`` are on the learner's) -- every round, also when the flip rates are 0, so noise
  settings and laws share their random numbers;
* learner generator: whatever the record's ``act`` draws (one uniform for AM eq. (3), none for the
  Perceptron).

The per-round Python API (``act``/``learn``) calls the same ``act``/``update`` through
:func:`act_round`/:func:`learn_round`, with the same score arithmetic, so both paths give
bit-identical weights for the same seeds.

Rows: :class:`DenseRows` (a C-contiguous array; each row's non-zeros gathered per round) and
:class:`CsrRows` (a canonical CSR matrix) are served to the loop through one accessor
(:func:`row_of`, :func:`prefetch_row`, :func:`prefetch_pointers`): one loop, two representations.
The next example's index is drawn right after this round's feedback (the per-round order) so that
its row can be prefetched while this round's update runs; on data larger than the L2 cache with a
PCG64 environment, a copy of its state peeks LOOKAHEAD rounds ahead and rows are prefetched
ROW_AHEAD rounds ahead (SynSep 2.9M -> 7.8M rounds/s).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.extending import overload

from nolo._compiling import call_compiled
from nolo._jit import njit
from nolo.learners.bandit._forward import forwarder, rule_of
from nolo.learners.bandit._pcg64 import lookahead_copy, uniform
from nolo.learners.bandit._simd import (LANES, argmax_first, borrowed, gather_dense, padded,
                                        prefetch, scores, scores_padded)
from nolo.noise.feedback_laws import cacheable as _law_cacheable
from nolo.noise.feedback_laws import flip_bit

ORDER_REPLACE, ORDER_PERMUTE, ORDER_CYCLE = 0, 1, 2
# status codes returned by the stream loop
OK, NONFINITE = 0, 1

#: ring of upcoming example indices peeked from a copy of the environment's PCG64 state (power of two)
LOOKAHEAD = 8
#: rows are prefetched this many rounds ahead (their index-pointer entries LOOKAHEAD - 1 rounds ahead)
ROW_AHEAD = 2
#: peek only when the data outgrow the L2 cache; smaller data sets stay cached and would only pay the peeking
PEEK_MIN_BYTES = 1 << 21


# ---------------------------------------------------------------------------------------------
# the plug-in points: dispatch on the algorithm's state record
# ---------------------------------------------------------------------------------------------


# not cached on disk: it is compiled for any record type, a user's too, and numba's cache index would pickle that
# record's class by reference (see run_rounds); the loops that call it cache it with themselves
@njit(nogil=True)
def unknown_probs(state, sp, K, out):
    """The ``probs`` of a record whose class names none: NaN for every label (its propensities are unknown)."""
    for k in range(K):
        out[k] = np.nan


act = forwarder(
    lambda state, *_: rule_of(state, "act"), "act", "state sp K rng",
    """(greedy label, played label) of the algorithm whose record is ``state`` (compiled code only).""")

update = forwarder(
    lambda state, *_: rule_of(state, "update"), "update", "state Wt idx val lo hi s y yhat played feedback",
    """The algorithm's update of one round (compiled code only); False when it wrote a non-finite value.""")

probs = forwarder(
    lambda state, *_: rule_of(state, "probs", unknown_probs), "probs", "state sp K out",
    """The distribution ``act`` draws the played label from, for the scores ``sp`` (after ``adjust``), into
    ``out[:K]`` (compiled code only): the record class's ``probs``; a record that names none writes NaN (its
    propensities are unknown).""")

adjust = forwarder(
    lambda state, *_: rule_of(state, "adjust", None), "adjust", "state Wt idx val lo hi s K",
    """The record's optional in-place change of the K scores ``s[:K]`` of the weights ``Wt`` for the row ``(idx, val,
    lo, hi)`` (a bias term; LinUCB's confidence widths); none by default (compiled code only).""")


def has_probs(state) -> bool:
    """Whether the record's class names a compiled ``probs`` (its propensities are known)."""
    return getattr(type(state), "probs", None) is not None


# ---------------------------------------------------------------------------------------------
# the environment: visiting order and the feedback channel
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def shuffle(perm, rng):
    """Fisher-Yates with one uniform per position (n - 1 draws), from the environment generator."""
    n = perm.shape[0]
    for i in range(n - 1, 0, -1):
        j = int(uniform(rng) * (i + 1))
        if j > i:
            j = i
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp


@njit(cache=True, nogil=True, inline="always")
def next_index(order, n, perm, pos, rng):
    """The next example index of the stream; ``pos`` is a one-element position counter."""
    if order == ORDER_REPLACE:
        i = int(uniform(rng) * n)
        if i >= n:
            i = n - 1
        return i
    p = pos[0]
    if p % n == 0 and order == ORDER_PERMUTE:
        shuffle(perm, rng)
    pos[0] = p + 1
    if order == ORDER_PERMUTE:
        return perm[p % n]
    return p % n


class EnvState(NamedTuple):
    """The environment as the loop sees it: visiting order (ORDER_*), permutation and position (advanced in
    place), its generator (a numpy Generator or a PCG64 state array) and the feedback law's record
    (:mod:`nolo.noise.feedback_laws`: ``ClassFlips(rho0, rho1)`` for the class-conditional flips)."""

    order: int
    perm: np.ndarray
    pos: np.ndarray
    rng: object
    law: object


class Recorder(NamedTuple):
    """Outputs of a stream call: mistakes at ``checkpoints``; ``counters`` = [rounds done, played mistakes,
    greedy mistakes, next checkpoint slot] (read at the start, written back at the end); when ``log_index`` has
    length >= the call's rounds, round r's (example index, played label, noisy feedback) goes to slot r, and when
    ``log_propensity`` has, the probability the played label had (the record's ``probs``) too."""

    checkpoints: np.ndarray
    out_played: np.ndarray
    out_greedy: np.ndarray
    counters: np.ndarray
    log_index: np.ndarray
    log_played: np.ndarray
    log_feedback: np.ndarray
    log_propensity: np.ndarray


class StreamInput(NamedTuple):
    """What an environment hands a learner for a compiled run: the row accessor (:class:`DenseRows` or
    :class:`CsrRows`) and the matrix itself in the learner's dtype, the labels, the environment's record for
    the loop and its generator object (a learner seeded with that very generator shares its state array), and the
    feedback law (the Python object, :class:`nolo.noise.FeedbackLaw`, whose record is ``env.law``)."""

    rows: tuple
    X: object
    y: np.ndarray
    env: EnvState
    env_generator: np.random.Generator
    feedback_law: object = None


# ---------------------------------------------------------------------------------------------
# rows: one accessor over dense and CSR data
# ---------------------------------------------------------------------------------------------


class DenseRows(NamedTuple):
    """A C-contiguous (n, d) array; ``idx``/``val`` (length d) receive a row's non-zeros each round."""

    X: np.ndarray
    idx: np.ndarray
    val: np.ndarray


class CsrRows(NamedTuple):
    """A canonical CSR matrix (sorted indices, no explicit zeros): a row is ``indices/data[indptr[i]:indptr[i+1]]``."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray


def dense_rows(X) -> DenseRows:
    return DenseRows(X, np.empty(X.shape[1], dtype=np.int64), np.empty(X.shape[1], dtype=X.dtype))


def csr_rows(X) -> CsrRows:
    return CsrRows(X.indptr, X.indices, X.data)


def _is(rows, cls):
    return getattr(rows, "instance_class", None) is cls


def row_of(rows, i):
    """(indices, values, lo, hi) of row ``i``: its non-zeros are ``indices/values[lo:hi]`` (compiled code only)."""
    raise NotImplementedError("compiled code only")


@overload(row_of, inline="always")
def _row_of(rows, i):
    if _is(rows, DenseRows):
        def impl(rows, i):
            return rows.idx, rows.val, 0, gather_dense(rows.X, i, rows.idx, rows.val)
        return impl
    if _is(rows, CsrRows):
        return lambda rows, i: (rows.indices, rows.data, rows.indptr[i], rows.indptr[i + 1])


def n_rows(rows):
    raise NotImplementedError("compiled code only")


@overload(n_rows, inline="always")
def _n_rows(rows):
    if _is(rows, DenseRows):
        return lambda rows: rows.X.shape[0]
    if _is(rows, CsrRows):
        return lambda rows: rows.indptr.shape[0] - 1


def data_nbytes(rows):
    raise NotImplementedError("compiled code only")


@overload(data_nbytes, inline="always")
def _data_nbytes(rows):
    if _is(rows, DenseRows):
        return lambda rows: rows.X.nbytes
    if _is(rows, CsrRows):
        return lambda rows: rows.data.nbytes + rows.indices.nbytes


def prefetch_row(rows, i):
    """Hint the CPU to fetch row ``i``'s data (compiled code only)."""
    raise NotImplementedError("compiled code only")


@overload(prefetch_row, inline="always")
def _prefetch_row(rows, i):
    if _is(rows, DenseRows):
        def impl(rows, i):
            X = rows.X
            prefetch(X, i * X.strides[0], i * X.strides[0] + X.shape[1] * X.itemsize)
        return impl
    if _is(rows, CsrRows):
        def impl(rows, i):
            a, b = rows.indptr[i], rows.indptr[i + 1]
            prefetch(rows.indices, a * rows.indices.itemsize, b * rows.indices.itemsize)
            prefetch(rows.data, a * rows.data.itemsize, b * rows.data.itemsize)
        return impl


def prefetch_pointers(rows, y, i):
    """Hint the CPU to fetch what locating row ``i`` reads (CSR: its index pointers and label; dense: nothing)."""
    raise NotImplementedError("compiled code only")


@overload(prefetch_pointers, inline="always")
def _prefetch_pointers(rows, y, i):
    if _is(rows, DenseRows):
        return lambda rows, y, i: None
    if _is(rows, CsrRows):
        def impl(rows, y, i):
            prefetch(rows.indptr, i * rows.indptr.itemsize, (i + 2) * rows.indptr.itemsize)
            prefetch(y, i * y.itemsize, (i + 1) * y.itemsize)
        return impl


# ---------------------------------------------------------------------------------------------
# the loop
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _peek_index(shadow, n):
    """The example index of the round after the next, from the lookahead copy of the environment state.

    With ``order="replace"`` the environment's draws alternate index, flip, index, flip, ...: skip the
    flip, take the index (the same arithmetic as :func:`next_index`).
    """
    uniform(shadow)
    i = int(uniform(shadow) * n)
    if i >= n:
        i = n - 1
    return i


@njit(cache=True, nogil=True, inline="always")
def _lookahead_start(env_rng, order, n, nbytes, ahead):
    """Fill ``ahead[r]`` with the index of rounds r = 1..LOOKAHEAD-1 (round 0's is drawn); return (shadow, on).

    On only for a PCG64 environment state (a numpy Generator cannot be copied in compiled code),
    ``order="replace"`` (the paper's) and data larger than PEEK_MIN_BYTES: random rows of a large
    data set come from memory, ~100 ns away, and a row prefetched only one round ahead arrives late
    (SynSep 10^5 x 400: 3.1M rounds/s drawn at random vs 9.0M visited in order).
    """
    shadow, on = lookahead_copy(env_rng)
    on = on and order == ORDER_REPLACE and nbytes > PEEK_MIN_BYTES
    if on:
        for k in range(1, LOOKAHEAD):
            ahead[k] = _peek_index(shadow, n)
    return shadow, on


@njit(cache=True, nogil=True, inline="always")
def _record(done, n_played, n_greedy, slot, checkpoints, out_played, out_greedy):
    """Write the cumulative mistakes into every checkpoint slot equal to ``done``; return the next slot."""
    while slot < checkpoints.shape[0] and checkpoints[slot] == done:
        out_played[slot] = n_played
        out_greedy[slot] = n_greedy
        slot += 1
    return slot


def _run_rounds(state, Wt, rows, y, n_rounds, env, lrn_rng, rec):
    """Run ``n_rounds`` rounds of the algorithm whose record is ``state`` on the weights ``Wt`` (d, K).

    ``rows`` is a :class:`DenseRows` or :class:`CsrRows`, ``y`` the labels, ``env`` an :class:`EnvState`,
    ``lrn_rng`` the learner's generator (numpy Generator or PCG64 state array; it may be ``env.rng``
    itself), ``rec`` a :class:`Recorder`.  Returns (status, rounds done in this call); on NONFINITE the
    weights hold the failing round's write and the caller restores its snapshot.
    """
    Wp, sp = padded(Wt)
    status, r = _loop(state, Wp, Wt.shape[1], rows, y, n_rounds, env, lrn_rng, rec, sp)
    Wt[:, :] = Wp[:, :Wt.shape[1]]
    return status, r


def _run_rounds_uncached(state, Wt, rows, y, n_rounds, env, lrn_rng, rec):
    Wp, sp = padded(Wt)
    status, r = _loop_uncached(state, Wp, Wt.shape[1], rows, y, n_rounds, env, lrn_rng, rec, sp)
    Wt[:, :] = Wp[:, :Wt.shape[1]]
    return status, r


def _loop_impl(state, Wp, K, rows, y, n_rounds, env, lrn_rng, rec, sp):
    b = borrowed  # the callers hold the owners for the whole call (see borrowed)
    state, Wp, rows, y, env, lrn_rng, rec, sp = b(state), b(Wp), b(rows), b(y), b(env), b(lrn_rng), b(rec), b(sp)
    env_rng, perm, pos, order = env.rng, env.perm, env.pos, env.order
    n = n_rows(rows)
    Wt, s = Wp[:, :K], sp[:K]
    do_log = rec.log_index.shape[0] >= n_rounds
    do_prop = rec.log_propensity.shape[0] >= n_rounds
    log_propensity = rec.log_propensity
    pbuf = np.zeros(K)
    counters = rec.counters
    # plain names: numba 0.68 dropped the writes of `rec.log_index[r] = i` in this loop (seen, not explained)
    log_index, log_played, log_feedback = rec.log_index, rec.log_played, rec.log_feedback
    done, n_played, n_greedy, slot = counters[0], counters[1], counters[2], counters[3]
    status, r = OK, 0
    i = next_index(order, n, perm, pos, env_rng) if n_rounds > 0 else 0
    ahead = np.zeros(LOOKAHEAD, dtype=np.int64)
    shadow, peek = _lookahead_start(env_rng, order, n, data_nbytes(rows), ahead)
    while r < n_rounds:
        idx, val, lo, hi = row_of(rows, i)
        yi = y[i]
        scores_padded(Wp, idx, val, lo, hi, sp)
        adjust(state, Wt, idx, val, lo, hi, sp, K)
        yhat, played = act(state, sp, K, lrn_rng)
        if do_prop:  # before the update: the distribution the label was drawn from
            probs(state, sp, K, pbuf)
            log_propensity[r] = pbuf[played]
        fb = flip_bit(env.law, 1 if played == yi else 0, uniform(env_rng), yi, played, i)
        i_next = i
        if r + 1 < n_rounds:  # the next index draw follows this round's feedback draw, as in the per-round API
            i_next = next_index(order, n, perm, pos, env_rng)
            ahead_row = i_next
            if peek:  # pointers of round r + LOOKAHEAD, row of round r + ROW_AHEAD (its pointers fetched earlier)
                far = _peek_index(shadow, n)
                ahead[r % LOOKAHEAD] = far
                prefetch_pointers(rows, y, far)
                ahead_row = ahead[(r + ROW_AHEAD) % LOOKAHEAD]
            prefetch_row(rows, ahead_row)
        if not update(state, Wt, idx, val, lo, hi, s, yi, yhat, played, fb):
            status = NONFINITE
            break
        n_played += played != yi
        n_greedy += yhat != yi
        done += 1
        if do_log:
            log_index[r] = i
            log_played[r] = played
            log_feedback[r] = fb
        slot = _record(done, n_played, n_greedy, slot, rec.checkpoints, rec.out_played, rec.out_greedy)
        r += 1
        i = i_next
    counters[0], counters[1], counters[2], counters[3] = done, n_played, n_greedy, slot
    return status, r


# The loop is cached on disk for nolo's own records only.  numba's cache index pickles the record class of
# every compiled signature by reference and unpickles the whole index on each load, so a record defined in a
# user's script would make every later process that cannot import that script fail to load the loop; such
# records get the same loop compiled in memory (the same code, compiled once per process).
_loop = njit(cache=True, nogil=True, error_model="numpy")(_loop_impl)  # no zero-divisor checks: none can be 0
_loop_uncached = njit(cache=False, nogil=True, error_model="numpy")(_loop_impl)
_run_rounds_cached = njit(cache=True, nogil=True)(_run_rounds)
_run_rounds_uncached = njit(cache=False, nogil=True)(_run_rounds_uncached)


def _cacheable(state) -> bool:
    return type(state).__module__.startswith("nolo.")


def run_rounds(state, Wt, rows, y, n_rounds, env, lrn_rng, rec):
    """Run ``n_rounds`` rounds of the algorithm whose record is ``state`` (see :func:`_run_rounds`)."""
    fn = _run_rounds_cached if _cacheable(state) and _law_cacheable(env.law) else _run_rounds_uncached
    return call_compiled(fn, type(state), "stream loop", state, Wt, rows, y, n_rounds, env, lrn_rng, rec)


# ---------------------------------------------------------------------------------------------
# the per-round API's entry points: the same act/update, the scalar score arithmetic (same bits)
# ---------------------------------------------------------------------------------------------
# Every entry point hands the record's rules the weights as a slice ``W[:, :K]`` (numba layout "A"), as the stream
# loop does with its padded copy: the rules then have one signature per record, compiled once and linked into every
# entry point (and loaded from the rule's own cache by a later process), instead of once more per weight layout.


@njit(cache=True, nogil=True, inline="always")
def _round_scores(Wt, idx, val, nnz):
    K = Wt.shape[1]
    sp = np.zeros(LANES * ((K + LANES - 1) // LANES), dtype=Wt.dtype)
    scores(Wt, idx, val, 0, nnz, sp[:K])
    return sp


def _act_round(state, Wt, idx, val, nnz, rng):
    """(greedy, played) for one row (non-zeros ``idx/val[:nnz]``), drawing from the numpy Generator ``rng``."""
    K = Wt.shape[1]
    sp = _round_scores(Wt, idx, val, nnz)
    adjust(state, Wt[:, :K], idx, val, 0, nnz, sp, K)
    return act(state, sp, K, rng)


def _learn_round(state, Wt, idx, val, nnz, y, played, feedback):
    """One round's update; ``y`` is the true label (full information) or -1.  Returns (ok, greedy label)."""
    K = Wt.shape[1]
    W = Wt[:, :K]
    sp = _round_scores(Wt, idx, val, nnz)
    adjust(state, W, idx, val, 0, nnz, sp, K)
    yhat = argmax_first(sp[:K])
    return update(state, W, idx, val, 0, nnz, sp[:K], y, yhat, played, feedback), yhat


def _act_prob_round(state, Wt, idx, val, nnz, rng):
    """(greedy, played, probability of played) for one row: ``act``'s draw and ``probs``' distribution."""
    K = Wt.shape[1]
    sp = _round_scores(Wt, idx, val, nnz)
    adjust(state, Wt[:, :K], idx, val, 0, nnz, sp, K)
    out = np.zeros(K)
    probs(state, sp, K, out)
    yhat, played = act(state, sp, K, rng)
    return yhat, played, out[played]


def _probs_rows(state, Wt, rows, P):
    """P[i] = the distribution ``act`` would draw row i's label from (the stream's score arithmetic)."""
    Wp, sp = padded(Wt)
    K = Wt.shape[1]
    for i in range(P.shape[0]):
        idx, val, lo, hi = row_of(rows, i)
        scores_padded(Wp, idx, val, lo, hi, sp)
        adjust(state, Wp[:, :K], idx, val, lo, hi, sp, K)
        probs(state, sp, K, P[i])


def _act_rows(state, Wt, rows, played, prob, with_prob, rng):
    """played[i] = the label ``act`` draws for row i, in order, from ``rng`` (the same draws, and generator state
    after, as the per-round ``act`` row by row: ``act`` changes nothing but the generator); with ``with_prob`` also
    prob[i] = the probability it was drawn with (``probs``' distribution)."""
    Wp, sp = padded(Wt)
    K = Wt.shape[1]
    dist = np.zeros(K)
    for i in range(played.shape[0]):
        idx, val, lo, hi = row_of(rows, i)
        scores_padded(Wp, idx, val, lo, hi, sp)
        adjust(state, Wp[:, :K], idx, val, lo, hi, sp, K)
        if with_prob:
            probs(state, sp, K, dist)
        _, a = act(state, sp, K, rng)
        played[i] = a
        prob[i] = dist[a] if with_prob else 1.0


def _learn_rows(state, Wt, rows, played, feedback, lo_row, hi_row):
    """The per-round ``learn`` of rows ``lo_row .. hi_row - 1`` in order (logged plays and bits; y unknown), with the
    stream's score arithmetic.  Returns the rows done; fewer than asked when an update wrote a non-finite value (the
    caller restores its snapshot)."""
    Wp, sp = padded(Wt)
    K = Wt.shape[1]
    W, s = Wp[:, :K], sp[:K]
    done = 0
    for i in range(lo_row, hi_row):
        idx, val, lo, hi = row_of(rows, i)
        scores_padded(Wp, idx, val, lo, hi, sp)
        adjust(state, W, idx, val, lo, hi, sp, K)
        yhat = argmax_first(s)
        if not update(state, W, idx, val, lo, hi, s, -1, yhat, played[i], feedback[i]):
            break
        done += 1
    Wt[:, :] = Wp[:, :K]
    return done


_act_round_cached, _act_round_uncached = (njit(cache=c, nogil=True)(_act_round) for c in (True, False))
_learn_rows_cached, _learn_rows_uncached = (njit(cache=c, nogil=True)(_learn_rows) for c in (True, False))
_act_rows_cached, _act_rows_uncached = (njit(cache=c, nogil=True)(_act_rows) for c in (True, False))
_act_prob_round_cached, _act_prob_round_uncached = (njit(cache=c, nogil=True)(_act_prob_round) for c in (True, False))
_probs_rows_cached, _probs_rows_uncached = (njit(cache=c, nogil=True)(_probs_rows) for c in (True, False))
_learn_round_cached, _learn_round_uncached = (njit(cache=c, nogil=True)(_learn_round) for c in (True, False))


def entry_point(wrapper, args):
    """numba's compiled entry point of the per-round call ``wrapper`` (:func:`act_round`, :func:`act_prob_round` or
    :func:`learn_round`) for exactly the types of ``args``, which a call has compiled; None if there is none.  Calling
    it skips the dispatcher's typing of every argument (for a record of a few dozen arrays, most of a small round's
    call overhead); valid only for arguments of those same types."""
    pair = _ROUND_DISPATCHERS.get(wrapper)
    if pair is None:
        return None
    fn = pair[0] if _cacheable(args[0]) else pair[1]
    try:
        sig = tuple(fn.typeof_pyval(a) for a in args)
    except Exception:  # a value numba cannot type here: keep dispatching
        return None
    cres = fn.overloads.get(sig)
    return None if cres is None else cres.entry_point


def act_round(state, Wt, idx, val, nnz, rng):
    """(greedy, played) for one row (non-zeros ``idx/val[:nnz]``), drawing from the numpy Generator ``rng``."""
    fn = _act_round_cached if _cacheable(state) else _act_round_uncached
    return call_compiled(fn, type(state), "act", state, Wt, idx, val, nnz, rng)


def learn_round(state, Wt, idx, val, nnz, y, played, feedback):
    """One round's update; ``y`` is the true label (full information) or -1.  Returns (ok, greedy label)."""
    fn = _learn_round_cached if _cacheable(state) else _learn_round_uncached
    return call_compiled(fn, type(state), "learn", state, Wt, idx, val, nnz, y, played, feedback)


def learn_rows(state, Wt, rows, played, feedback, lo_row, hi_row):
    """Rows ``lo_row .. hi_row - 1`` of logged (row, played, feedback) through the record's update, in one compiled
    call; returns the rows done (see :func:`_learn_rows`)."""
    fn = _learn_rows_cached if _cacheable(state) else _learn_rows_uncached
    return call_compiled(fn, type(state), "learn_many", state, Wt, rows, played, feedback, lo_row, hi_row)


def act_rows(state, Wt, rows, played, prob, with_prob, rng):
    """The labels ``act`` draws for every row of ``rows`` in order, in one compiled call (see :func:`_act_rows`)."""
    fn = _act_rows_cached if _cacheable(state) else _act_rows_uncached
    return call_compiled(fn, type(state), "act_many", state, Wt, rows, played, prob, with_prob, rng)


def act_prob_round(state, Wt, idx, val, nnz, rng):
    """(greedy, played, probability of played) for one row, drawing from ``rng`` as :func:`act_round` does."""
    fn = _act_prob_round_cached if _cacheable(state) else _act_prob_round_uncached
    return call_compiled(fn, type(state), "act", state, Wt, idx, val, nnz, rng)


def probs_rows(state, Wt, rows, P):
    """P[i] = the distribution the record's ``act`` draws row i's label from (``rows``: dense or CSR accessor)."""
    fn = _probs_rows_cached if _cacheable(state) else _probs_rows_uncached
    return call_compiled(fn, type(state), "action_probabilities", state, Wt, rows, P)


_ROUND_DISPATCHERS = {act_round: (_act_round_cached, _act_round_uncached),
                      act_prob_round: (_act_prob_round_cached, _act_prob_round_uncached),
                      learn_round: (_learn_round_cached, _learn_round_uncached)}

__all__ = ["act", "update", "adjust", "probs", "has_probs", "run_rounds", "act_round", "act_rows", "learn_round",
           "learn_rows", "act_prob_round", "probs_rows", "EnvState", "Recorder", "StreamInput", "DenseRows",
           "CsrRows", "dense_rows", "csr_rows", "flip_bit", "next_index", "shuffle"]
