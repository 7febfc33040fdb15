"""Classification-to-bandit simulator (a bandit environment played from labelled data) and the compiled
whole-stream runner.  (Not :mod:`nolo.experiments.environments`, the experiment platform's data generators.)

:class:`ClassificationBandit` turns a labelled dataset (dense array or CSR
matrix) into the AM protocol: each round an example is drawn (``order``:
``"replace"`` -- uniformly with replacement, as the AM code; ``"permute"`` -- a
fresh random permutation per pass; ``"cycle"`` -- the given order, repeated),
the learner plays a label, and the environment returns the bit
1[played == y] flipped by a feedback law: by default :class:`nolo.noise.FlipChannel`
with rates rho0 = P(feedback 1 | truth 0) and rho1 = P(feedback 0 | truth 1) (one
uniform u per round: a true 1 is flipped when u < rho1, a true 0 when u < rho0), or any
law of :mod:`nolo.noise.feedback_laws` passed as ``feedback=`` (:class:`nolo.noise.FlipMatrix`,
:class:`nolo.noise.ContextFlips`).  The per-round ``feedback`` and the compiled loop apply the
law's one compiled rule (:func:`nolo.noise.feedback_laws.flip_bit`) to the same uniform.

The learners' flip corrections assume the class-conditional law with known constant rates;
a learner with ``rho0``/``rho1`` parameters played under another law warns
(:class:`nolo.exceptions.FeedbackLawWarning`, from the learner's stream driver, which gets
the law with the stream): its correction is biased there.

Per-round use::

    env = ClassificationBandit(X, y, rho0=.2, rho1=.2, seed=1)
    x = env.next(); played = learner.act(x); learner.learn(x, played, env.feedback(played))

Whole-stream use (compiled, no per-round Python): ``env.run(learner, T)`` or
:func:`run_stream`.  Both give bit-identical learners for the same seeds.
The run records, at log-spaced checkpoints only (memory O(#checkpoints), never
O(T)), the cumulative number of mistakes of the played label (what AM plot)
and of the greedy label argmax_r w_r . x.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from nolo._validation import check_array, check_choice, check_flip_rates, check_int, check_sparse
from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.bandit import _stream
from nolo.learners.bandit._pcg64 import pcg64_state, store_pcg64_state
from nolo.noise import FeedbackLaw, FlipChannel
from nolo.noise.feedback_laws import flip_one
from nolo.random import as_generator

__all__ = ["ClassificationBandit", "StreamResult", "run_stream", "log_checkpoints", "ORDERS"]

ORDERS = {"replace": _stream.ORDER_REPLACE, "permute": _stream.ORDER_PERMUTE, "cycle": _stream.ORDER_CYCLE}
REPRESENTATIONS = ("auto", "dense", "csr")
#: ``representation="auto"`` runs a dense X through the CSR loop when at most this share of its entries is non-zero.
#: Below 2/3 the float64 CSR copy (8-byte value + 4-byte index per non-zero) is smaller than the dense array, and
#: the CSR loop skips the dense loop's per-round gather of d coordinates: measured 1.6x faster on USPS (41 %
#: non-zero), equal on digits (51 %) -- docs/benchmarks-am.md.
AUTO_CSR_DENSITY = 0.6
#: largest magnitude a float32 learner accepts in its input (larger values would become inf)
FLOAT32_MAX = float(np.finfo(np.float32).max)


def log_checkpoints(n_rounds: int, n_points: int = 60) -> np.ndarray:
    """About ``n_points`` log-spaced round numbers in [1, n_rounds], always including n_rounds."""
    n_rounds = check_int(n_rounds, "n_rounds", low=1)
    pts = np.unique(np.geomspace(1, n_rounds, num=max(2, int(n_points))).round().astype(np.int64))
    return np.unique(np.append(pts, n_rounds))


@dataclass
class StreamResult:
    """Metrics of one run at its checkpoints (round numbers counted from the start of the run)."""

    checkpoints: np.ndarray
    played_mistakes: np.ndarray
    greedy_mistakes: np.ndarray
    n_rounds: int
    seconds: float
    extra: dict = field(default_factory=dict)

    @property
    def error_rate(self) -> np.ndarray:
        """Cumulative error rate of the played label, (1/t) sum_{s<=t} 1[played_s != y_s] (AM Fig. 2)."""
        return self.played_mistakes / self.checkpoints

    @property
    def greedy_error_rate(self) -> np.ndarray:
        return self.greedy_mistakes / self.checkpoints

    @property
    def rounds_per_second(self) -> float:
        return self.n_rounds / self.seconds if self.seconds > 0 else float("inf")


def canonical_csr(X, dtype=None) -> sp.csr_matrix:
    """X as a CSR matrix with sorted indices and no explicit zeros, the form the compiled loops read.

    A row's non-zeros are then exactly those the dense loop gathers, in the same order, so the two
    representations give the same scores bit for bit (the scores pair non-zeros by position).  The
    caller's matrix is never modified: it is copied when it needs sorting or has explicit zeros.
    A sparse ``X`` is the user's: its arrays are checked first (:func:`nolo._validation.check_sparse`, a
    ParameterError naming X), since the compiled loops index with them unchecked.
    """
    X = check_sparse(X, "X", dtype) if sp.issparse(X) else sp.csr_matrix(X, dtype=dtype)
    if not X.has_sorted_indices or np.any(X.data == 0):
        X = X.copy()
        X.eliminate_zeros()
        X.sort_indices()
    return X


def check_representable(X, dtype, name: str) -> None:
    """Reject values a ``dtype`` learner cannot hold (float32: |x| > 3.4e38 would become inf), naming ``name``."""
    if np.dtype(dtype) == np.float32:
        vals = X.data if sp.issparse(X) else X
        if vals.size and float(np.max(np.abs(vals))) > FLOAT32_MAX:
            raise ParameterError(f"{name} must hold values of magnitude <= {FLOAT32_MAX:.4g} for a float32 learner "
                                 "(larger ones overflow to inf); use dtype='float64'")


def check_checkpoints(checkpoints, n_rounds: int) -> np.ndarray:
    """``checkpoints`` as int64 after checking they are strictly increasing integers in [1, n_rounds]."""
    cps = np.asarray(checkpoints)
    ok = cps.ndim == 1 and cps.size > 0 and (np.issubdtype(cps.dtype, np.integer) or (
        np.issubdtype(cps.dtype, np.floating) and np.all(np.isfinite(cps)) and np.all(cps == np.round(cps))))
    if ok:
        cps = cps.astype(np.int64)
        ok = not (np.any(np.diff(cps) <= 0) or cps[0] < 1 or cps[-1] > n_rounds)
    if not ok:
        raise ParameterError(f"checkpoints must be strictly increasing integer round numbers in [1, {n_rounds}], "
                             f"got {checkpoints!r}")
    return cps


class ClassificationBandit:
    """A labelled dataset played as a noisy bandit feedback stream (see the module docstring).

    Parameters
    ----------
    X : (n, d) array or scipy CSR matrix; y : (n,) integer labels in [0, K)
    rho0, rho1 : flip rates of the class-conditional law, rho0 + rho1 < 1
    order : "replace" | "permute" | "cycle"
    seed : the environment's generator (example draws and feedback flips)
    representation : "auto" (default: CSR loop for inputs with <= 60 % non-zeros), "dense" or "csr" --
        which compiled loop reads X; all three give identical results
    feedback : a feedback law (:class:`nolo.noise.FeedbackLaw`: :class:`~nolo.noise.FlipChannel`,
        :class:`~nolo.noise.FlipMatrix`, :class:`~nolo.noise.ContextFlips`) instead of ``rho0``/``rho1``
        (giving both is a ParameterError); None: ``FlipChannel(rho0, rho1)``.  ``rho0``/``rho1`` then hold the
        law's rates for a FlipChannel and None for a law whose rates are not two constants.
    """

    def __init__(self, X, y, rho0: float = 0.0, rho1: float = 0.0, order: str = "replace", seed=None,
                 representation: str = "auto", feedback=None):
        r0, r1 = check_flip_rates(rho0, rho1)
        if feedback is not None:
            if not isinstance(feedback, FeedbackLaw):
                raise ParameterError(f"feedback must be a feedback law (nolo.noise.FeedbackLaw: FlipChannel, "
                                     f"FlipMatrix, ContextFlips) or None, got {type(feedback).__name__}")
            if r0 != 0.0 or r1 != 0.0:
                raise ParameterError("feedback: give the flips either as rho0/rho1 or as a feedback law, not both "
                                     f"(got rho0={r0}, rho1={r1} and feedback={type(feedback).__name__})")
            feedback.validate()
        check_choice(representation, "representation", REPRESENTATIONS)
        self.representation = representation
        check_choice(order, "order", tuple(ORDERS))
        self.order = order
        if sp.issparse(X):
            X = canonical_csr(X, None if X.dtype in (np.float64, np.float32) else np.float64)
            if not np.all(np.isfinite(X.data)):
                raise ParameterError("X must contain only finite values (no NaN or inf)")
        else:
            X = check_array(X, "X", ndim=2, dtype=None)
            if X.dtype not in (np.float64, np.float32):
                X = X.astype(np.float64)
            if not np.all(np.isfinite(X)):
                raise ParameterError("X must contain only finite values (no NaN or inf)")
            X = np.ascontiguousarray(X)
        if X.shape[0] == 0:
            raise ParameterError("X must have at least one row")
        try:
            y = np.asarray(y)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"y must be a 1-d array of integer labels: {exc}") from None
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ParameterError(f"y must be a 1-d array of {X.shape[0]} labels, got shape {y.shape}")
        if not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
            raise ParameterError("y must hold non-negative integer labels 0..K-1")
        n_classes = int(y.max()) + 1
        law = FlipChannel(r0, r1) if feedback is None else copy.deepcopy(feedback)
        law.check_environment(X.shape[0], n_classes)
        self.feedback_law = law
        self.channel = law  # the former name (a FlipChannel for rho0/rho1)
        self._law_record = law.record()
        self.rho0, self.rho1 = law.rates() if law.constant_rates else (None, None)
        self.X = X
        self.y = y.astype(np.int64)
        self.n_classes = n_classes
        self.rng = as_generator(seed)
        self.perm = np.arange(X.shape[0], dtype=np.int64)
        self.pos = np.zeros(1, dtype=np.int64)
        self._by_dtype: dict = {}
        self._current = -1

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def _X_as(self, dtype) -> np.ndarray | sp.csr_matrix:
        """The data in the learner's dtype and in the representation the compiled loop reads.

        ``representation="auto"`` hands a dense X with at most ``AUTO_CSR_DENSITY`` non-zeros to the
        CSR loop (converted once): the CSR loop visits the same non-zeros in the same order as the
        dense loop's gather, so the results are bit-identical, only faster (SynSep, MNIST, USPS, digits).
        """
        dtype = np.dtype(dtype)
        if dtype not in self._by_dtype:
            X = self.X if self.X.dtype == dtype else self.X.astype(dtype)
            if not sp.issparse(X) and (self.representation == "csr" or (
                    self.representation == "auto" and np.count_nonzero(X) <= AUTO_CSR_DENSITY * X.size)):
                X = canonical_csr(X)
            elif sp.issparse(X) and self.representation == "dense":
                X = np.ascontiguousarray(X.toarray())
            self._by_dtype[dtype] = X
        return self._by_dtype[dtype]

    # -- per-round protocol ---------------------------------------------------------------
    def next(self) -> np.ndarray:
        """Draw the next example; returns its dense feature row (its label stays hidden)."""
        i = int(_stream.next_index(ORDERS[self.order], self.X.shape[0], self.perm, self.pos, self.rng))
        self._current = i
        row = self.X[i]
        return np.asarray(row.toarray()).ravel() if sp.issparse(row) else row

    @property
    def current_index(self) -> int:
        return self._current

    def feedback(self, played: int) -> int:
        """The (possibly flipped) bit 1[played == y] for the current example."""
        if self._current < 0:
            raise ParameterError("feedback(played) needs a current example: call next() first")
        played = int(played)
        yi = int(self.y[self._current])
        self.feedback_law.check_played(played)
        truth = 1 if played == yi else 0
        return flip_one(self._law_record, truth, self.rng.random(), yi, played, self._current)

    # -- whole stream ---------------------------------------------------------------------
    def run(self, learner, n_rounds: int, checkpoints=None, log: bool = False) -> StreamResult:
        """Play ``n_rounds`` rounds with ``learner`` in the compiled loop; returns a :class:`StreamResult`.

        All or nothing: if the run fails (a non-finite update raises NumericalError, or any other
        exception), the learner's state, both generators and the visiting order are as before the call.
        ``log=True`` also returns every round's (example index, played label, noisy feedback, and the probability the
        played label was drawn with -- NaN for a learner whose record names no ``probs``) in ``result.extra["log"]``
        -- O(n_rounds) memory, opt-in (a click log for NREst and off-policy evaluation).
        """
        n_rounds = check_int(n_rounds, "n_rounds", low=1)
        cps = check_checkpoints(log_checkpoints(n_rounds) if checkpoints is None else checkpoints, n_rounds)
        if not isinstance(log, (bool, np.bool_)):
            raise ParameterError(f"log must be True or False, got {log!r}")
        if int(learner.n_classes) < self.n_classes:
            raise ParameterError(
                f"learner.n_classes must be >= {self.n_classes} (labels in y), got {learner.n_classes}"
            )
        self.feedback_law.check_labels(int(learner.n_classes), "learner.n_classes")
        learner._ensure_initialized(self.n_features)
        if learner.n_features_in_ != self.n_features:
            raise ParameterError(f"X must have {learner.n_features_in_} features per row (the learner's), got {self.n_features}")
        check_representable(self.X, learner.dtype, "X")  # before the cast that would make inf
        X = self._X_as(learner.dtype)
        rows = _stream.csr_rows(X) if sp.issparse(X) else _stream.dense_rows(X)
        env_state = pcg64_state(self.rng)  # PCG64 generators are stepped inline (same draws)
        env = _stream.EnvState(ORDERS[self.order], self.perm, self.pos, self.rng if env_state is None else env_state,
                               self._law_record)
        saved = (copy.deepcopy(self.rng.bit_generator.state), self.perm.copy(), self.pos.copy())
        try:
            out_p, out_g, extra, seconds = learner._play_stream(
                _stream.StreamInput(rows, X, self.y, env, self.rng, self.feedback_law), n_rounds, cps, bool(log))
        except BaseException:
            self.rng.bit_generator.state, self.perm[:], self.pos[:] = saved
            raise
        if env_state is not None:
            store_pcg64_state(self.rng, env_state)
        return StreamResult(cps, out_p, out_g, n_rounds, seconds, extra)


def run_stream(learner, X, y, n_rounds: int, rho0: float = 0.0, rho1: float = 0.0, order: str = "replace",
               seed=None, checkpoints=None, log: bool = False, representation: str = "auto",
               feedback=None) -> StreamResult:
    """Play ``n_rounds`` rounds of ``ClassificationBandit(X, y, rho0, rho1, order, seed, representation, feedback)``
    with ``learner``, compiled (``feedback``: a feedback law instead of ``rho0``/``rho1``)."""
    env = ClassificationBandit(X, y, rho0=rho0, rho1=rho1, order=order, seed=seed, representation=representation,
                               feedback=feedback)
    return env.run(learner, n_rounds, checkpoints, log=log)
