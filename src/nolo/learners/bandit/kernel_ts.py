"""KernelLabelTS: Thompson sampling over the label under a kernel-smoothed flip likelihood -- nolo's nonparametric
learner for heavy feedback noise at short horizons.

Each played round s leaves one (possibly flipped) bit f_s about one label a_s.  Under class-conditional flips
(AM section 3), P(f = 1 | y = a) = 1 - rho1 and P(f = 1 | y != a) = rho0, so the bit's log-likelihood ratio
for "y = a_s" against "y != a_s" is

    e_s = log((1 - rho1) / rho0)   if f_s = 1,        e_s = -log((1 - rho0) / rho1)   if f_s = 0,

the same for every label other than a_s.  If the label of x were the label of every past context, the
log-posterior of label k would be sum_{s: a_s = k} e_s plus a constant; a Gaussian kernel
w_s(x) = exp(-||x - x_s||^2 / (2 h^2)) lets only nearby contexts vote, and a temperature c tempers the
product of their likelihoods (neighbours are not the same point).  KernelLabelTS plays a label drawn from

    P(k | x) proportional to exp(c * L_k(x)),     L_k(x) = sum_{s: a_s = k} w_s(x) e_s,

-- Thompson sampling (Thompson 1933) on the label itself: every label is played with its posterior probability
of being the right one -- and stores (x_t, a_t, e_t).  The score L_k is a Nadaraya-Watson-type kernel sum of
flip-aware evidence (nonparametric bandits with covariates: Rigollet & Zeevi, COLT 2010; Reeve, Mellor & Brown,
ALT 2018 (k-NN UCB)); the coupling of the labels (one label is right, so evidence against a_s raises the others'
probability) is in the normalisation of P.  This combination is nolo's (no paper proposes it; cite nolo and
docs/squarecb.md#kernel-label-ts).  Flip-aware through the evidence: under (rho0, rho1) = (0.4, 0.4) a bit counts
log 1.5 = 0.41, a clean bit log(0.99 / 0.01) = 4.6 (the rates are floored at ``rate_floor``); the scores cannot
overflow (the draw subtracts the largest before exponentiating).

Cost: the kernel sums read every stored context, O(nnz min(t, budget)) per round (``budget`` contexts, first in
first out), memory d x budget floats.  Meant for low-dimensional rows (e.g. 50 approximate kernel-PCA coordinates,
:class:`nolo.kernels.NystroemFeatures`) and horizons up to ~10^5.  ``W_`` (the core's linear scores) stays zero:
the scores are the kernel sums, computed by the record's ``adjust``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from nolo._jit import njit
from nolo._validation import check_flip_rates, check_int, check_scalar, check_state_bytes
from nolo.exceptions import ParameterError, PersistenceError
from nolo.learners.bandit import _stream
from nolo.learners.bandit._linear import OneBitBanditLearner
from nolo.learners.bandit._pcg64 import uniform
from nolo.learners.bandit._simd import argmax_padded
from nolo.learners.base import check_state_column_sqnorms, check_state_range

__all__ = ["KernelLabelTS", "KernelTSState", "flip_evidence"]

#: the largest history accepted by default, in bytes (d x budget float64)
KERNEL_TS_MAX_BYTES = 2 * 2**30
#: the largest |evidence| a bit can carry: log((1 - r) / floor) with the smallest positive float as the floor
MAX_EVIDENCE = -math.log(np.nextafter(0.0, 1.0))


def flip_evidence(rho0: float, rho1: float, rate_floor: float) -> tuple[float, float]:
    """(e1, e0): the log-likelihood ratio of "y = a" against "y != a" carried by a bit f = 1 about label a, and
    minus the one carried by f = 0, under class-conditional flip rates floored at ``rate_floor``.

    >>> [round(v, 4) for v in flip_evidence(0.4, 0.4, 0.01)]
    [0.4055, 0.4055]
    >>> [round(v, 4) for v in flip_evidence(0.0, 0.0, 0.01)]  # a clean bit: log(0.99 / 0.01)
    [4.5951, 4.5951]
    """
    r0, r1 = max(float(rho0), rate_floor), max(float(rho1), rate_floor)
    return math.log((1.0 - r1) / r0), math.log((1.0 - r0) / r1)


# ---------------------------------------------------------------------------------------------
# the compiled rule: adjust (kernel sums), act (a label drawn from the tempered posterior), update (store)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def kernel_scores(state, idx, val, lo, hi, s, K):
    """s[k] = L_k(x) = sum over the stored contexts x_s played with label k of exp(-||x - x_s||^2 inv2h2) e_s.

    Dot products x . x_s for all stored s first (one pass over x's non-zeros, each a contiguous row of ``H``),
    then the squared distances ||x||^2 + ||x_s||^2 - 2 x . x_s (clipped at 0) and the sums in storage order."""
    H, dots = state.H, state.dots
    n = state.cnt[0]
    xx = 0.0
    for i in range(n):
        dots[i] = 0.0
    for t in range(lo, hi):
        v = val[t]
        xx += v * v
        row = H[idx[t]]
        for i in range(n):
            dots[i] += v * row[i]
    for k in range(K):
        s[k] = 0.0
    for i in range(n):
        d2 = xx + state.hn[i] - 2.0 * dots[i]
        if d2 < 0.0:
            d2 = 0.0
        s[state.ha[i]] += math.exp(-d2 * state.inv2h2) * state.he[i]
    return xx


@njit(cache=True, nogil=True)
def kernel_ts_adjust(state, Wt, idx, val, lo, hi, s, K):
    """The core's ``adjust``: the scores are the kernel sums L_k(x) (the linear scores W x, zero, are replaced)."""
    kernel_scores(state, idx, val, lo, hi, s, K)


@njit(cache=True, nogil=True, inline="always")
def _softmax_normaliser(state, sp, K):
    """(argmax_k L_k, max L, sum_k exp(c (L_k - max L))): the arithmetic the draw and its distribution share."""
    ahat = argmax_padded(sp, K)
    m = sp[ahat]
    z = 0.0
    for k in range(K):
        z += math.exp(state.temperature * (sp[k] - m))
    return ahat, m, z


@njit(cache=True, nogil=True, inline="always")
def kernel_ts_act(state, sp, K, rng):
    """(greedy label argmax_k L_k, played label drawn from P(k) proportional to exp(c L_k)) with one uniform."""
    ahat, m, z = _softmax_normaliser(state, sp, K)
    u = uniform(rng) * z
    acc = 0.0
    for k in range(K):
        acc += math.exp(state.temperature * (sp[k] - m))
        if u < acc:
            return ahat, k
    return ahat, K - 1  # u * z rounded up to z


@njit(cache=True, nogil=True, inline="always")
def kernel_ts_probs(state, sp, K, out):
    """:func:`kernel_ts_act`'s distribution: P(k) proportional to exp(c (L_k - max L)), with the draw's arithmetic."""
    _, m, z = _softmax_normaliser(state, sp, K)
    for k in range(K):
        out[k] = math.exp(state.temperature * (sp[k] - m)) / z


# not inline="always": inlined into the stream loop, numba 0.68 dropped this function's writes to hn, ha and he
# (the stream's history kept zeros where the per-round path stored the rounds; the count, H and cnt were written)
# -- as it did LinUCB's ``width`` (linucb.py); the contract check stream_equals_rounds catches it
@njit(cache=True, nogil=True)
def kernel_ts_update(state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback):
    """Store (x, played, e(feedback)) in the next slot of the history (first in, first out once it is full)."""
    H = state.H
    cnt = state.cnt
    slot = cnt[1]
    xx = 0.0
    for t in range(lo, hi):
        xx += val[t] * val[t]
    if not math.isfinite(xx):
        return False
    for j in range(H.shape[0]):
        H[j, slot] = 0.0
    for t in range(lo, hi):
        H[idx[t], slot] = val[t]
    state.hn[slot] = xx
    state.ha[slot] = played
    state.he[slot] = state.e1 if feedback == 1 else -state.e0
    B = H.shape[1]
    if cnt[0] < B:
        cnt[0] += 1
    cnt[1] = slot + 1 if slot + 1 < B else 0
    return True


class KernelTSState(NamedTuple):
    """KernelLabelTS's record: the history ``H`` (d, budget) -- column s is stored context x_s --, its squared
    norms ``hn``, labels ``ha`` and evidence ``he``, ``cnt`` = (contexts stored, next slot), the kernel's
    1 / (2 h^2), the temperature c, the evidence of a 1 and of a 0 (:func:`flip_evidence`) and the scratch
    ``dots`` (budget,)."""

    H: np.ndarray
    hn: np.ndarray
    ha: np.ndarray
    he: np.ndarray
    cnt: np.ndarray
    inv2h2: float
    temperature: float
    e1: float
    e0: float
    dots: np.ndarray
    act = kernel_ts_act
    update = kernel_ts_update
    adjust = kernel_ts_adjust
    probs = kernel_ts_probs


@njit(cache=True, nogil=True)
def kernel_scores_rows(state, rows, R):
    """R[i] = the kernel sums L(x_i) of every row (``predict``/``decision_function``: the stream's arithmetic)."""
    K = R.shape[1]
    for i in range(R.shape[0]):
        idx, val, lo, hi = _stream.row_of(rows, i)
        kernel_scores(state, idx, val, lo, hi, R[i], K)


class KernelLabelTS(OneBitBanditLearner):
    """Thompson sampling over the label under a kernel-smoothed, flip-aware likelihood (nolo's own combination;
    module docstring for the derivation and the literature it draws on: Thompson 1933; Rigollet & Zeevi, COLT 2010;
    Reeve, Mellor & Brown, ALT 2018).

    Each round, for every label k, L_k(x) = sum_{s: a_s = k} exp(-||x - x_s||^2 / (2 h^2)) e_s over the stored
    rounds, with e_s the stored bit's log-likelihood ratio under the flip rates (:func:`flip_evidence`); play a
    label drawn from P(k | x) proportional to exp(c L_k(x)); store (x, played label, e(bit)).  ``predict`` is
    argmax_k L_k(x) (ties to the smallest label).

    When to use it: heavy flip noise at short horizons on data with cluster structure, where the linear
    learners' per-label models learn too slowly.  On the vs-peers streams under (0.4, 0.4) at 10^4 rounds, on 50
    Nystroem kernel-PCA coordinates, it errs 0.06-0.08 less than LinUCB on 1000 random Fourier features
    (docs/squarecb.md#kernel-label-ts).  Its cost grows with the history (O(nnz min(t, budget)) per round), so
    for long streams prefer :class:`~nolo.learners.bandit.FastCB`.

    Tuned on vs-peers' rows (50 unit-norm Nystroem coordinates, ``nolo.papers.am.vs_peers.nys_rows``) at 10^4
    rounds on stream seeds 1100-1119, never the experiment's 1000-1004: first (h, c) = (0.3, 8) on a prototype's
    USPS streams; then, on USPS under (0.4, 0.4), h in {0.2, 0.25, 0.3, 0.35} x c in {6, 8, 12, 16, 24}, where
    (0.25, 12-24) err 0.398-0.403 against (0.3, 8)'s 0.433; (0.25, 16) also errs 0.04-0.08 less than (0.3, 8) on
    digits and MNIST under (0.4, 0.4) and on USPS noise-free and under (0.2, 0.4) (docs/squarecb.md#kernel-label-ts).
    The bandwidth is in the rows' own units: rescale it with the rows.

    Feedback laws: the flip correction assumes class-conditional flips with known constant rates
    (:class:`nolo.noise.FlipChannel` with this learner's ``rho0``/``rho1``) and is unbiased only there;
    under :class:`nolo.noise.FlipMatrix` or :class:`nolo.noise.ContextFlips` it is biased, and
    ``run_stream``/``ClassificationBandit.run`` warn (:class:`nolo.exceptions.FeedbackLawWarning`).

    Parameters
    ----------
    n_classes : int >= 2
    bandwidth : float > 0, default 0.25 -- the kernel's h (same units as the rows)
    temperature : float > 0, default 16 -- c, the tempering of the stored likelihoods
    rho0, rho1 : known flip rates (rho0 + rho1 < 1), default 0
    rate_floor : float in (0, 0.5), default 0.01 -- the rates are floored here in the evidence (a clean bit is
        strong evidence, not infinite)
    budget : int >= 1, default 10_000 -- contexts kept (first in, first out)
    max_bytes : largest history accepted (d x budget float64), default 2 GiB
    seed : seed of the learner's generator (one uniform per played label)

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.bandit import KernelLabelTS
    >>> m = KernelLabelTS(n_classes=3, bandwidth=1.0, temperature=1.0, rho0=0.2, rho1=0.2, seed=0)
    >>> x = np.array([1.0, 0.0])
    >>> _ = m.learn(x, 2, 1)  # label 2 said right: evidence log(0.8 / 0.2) = log 4 for label 2 near x
    >>> np.round(m.decision_function(np.array([[1.0, 0.0], [0.0, 1.0]])), 4)  # exp(-1) log 4 at distance^2 2
    array([[0.    , 0.    , 1.3863],
           [0.    , 0.    , 0.51  ]])
    >>> int(m.predict(np.array([[1.0, 0.0]]))[0])
    2
    >>> from sklearn.datasets import load_digits
    >>> from nolo.kernels import NystroemFeatures
    >>> from nolo.learners.bandit import run_stream
    >>> X, y = load_digits(return_X_y=True)
    >>> F = NystroemFeatures(n_landmarks=500, n_components=50, seed=0).fit_transform(X)
    >>> m = KernelLabelTS(n_classes=10, rho0=0.2, rho1=0.2, seed=0)
    >>> res = run_stream(m, F, y, 5_000, rho0=0.2, rho1=0.2, seed=1)
    >>> bool(res.error_rate[-1] < 0.2), bool(np.mean(m.predict(F) == y) > 0.8)  # 0.183, 0.878
    (True, True)
    """

    dtype = "float64"  # the history's and the scores' precision (not a parameter)

    @property
    def learns_off_policy(self) -> bool:
        """True: the stored evidence is the bit's likelihood under (context, played label), whoever chose the label
        (:mod:`nolo.offpolicy.learn`)."""
        return True

    def __init__(self, n_classes=2, bandwidth=0.25, temperature=16.0, rho0=0.0, rho1=0.0, rate_floor=0.01,
                 budget=10_000, max_bytes=KERNEL_TS_MAX_BYTES, seed=None):
        self.n_classes = n_classes
        self.bandwidth = bandwidth
        self.temperature = temperature
        self.rho0 = rho0
        self.rho1 = rho1
        self.rate_floor = rate_floor
        self.budget = budget
        self.max_bytes = max_bytes
        self.seed = seed

    @classmethod
    def _test_params(cls) -> list[dict]:
        """Noisy rates with a history that wraps around, and the noise-free default."""
        return [{"n_classes": 3, "rho0": 0.1, "rho1": 0.2, "budget": 7, "bandwidth": 2.0},
                {"n_classes": 3, "temperature": 1.0, "bandwidth": 5.0}]

    # -- parameters and state ------------------------------------------------------------------
    def _scale_reference(self):
        """The bandwidth, two-sided: rows far smaller than h all look alike, rows far larger look unrelated."""
        h = float(self.bandwidth)
        return h * h, f"the kernel's bandwidth (h = {h:.3g})", True

    def _validate_params(self) -> None:
        check_int(self.n_classes, "n_classes", low=2)
        check_scalar(self.bandwidth, "bandwidth", low=0.0, low_inclusive=False)
        check_scalar(self.temperature, "temperature", low=0.0, low_inclusive=False)
        check_flip_rates(self.rho0, self.rho1)
        check_scalar(self.rate_floor, "rate_floor", low=0.0, high=0.5, low_inclusive=False, high_inclusive=False)
        check_int(self.budget, "budget", low=1)
        check_int(self.max_bytes, "max_bytes", low=1)

    def initialize(self, n_features: int) -> "KernelLabelTS":
        self._validate_params()
        if not isinstance(n_features, bool) and isinstance(n_features, (int, np.integer)):
            d, B, K = int(n_features), int(self.budget), int(self.n_classes)
            check_state_bytes(8 * (d * B + 3 * B + K * d), f"KernelLabelTS keeps d x budget = {d} x {B} float64 "
                              f"(the history) and n_classes x d = {K} x {d} (the weights)",
                              max_bytes=int(self.max_bytes),
                              hint="lower budget or n_classes, reduce the rows' dimension (e.g. "
                                   "nolo.kernels.NystroemFeatures) or raise max_bytes")
        return super().initialize(n_features)

    def _init_state(self, n_features: int) -> None:
        B = int(self.budget)
        self.W_ = np.zeros((int(self.n_classes), n_features), order="F")
        self.history_ = np.zeros((n_features, B))
        self.history_sqnorm_ = np.zeros(B)
        self.history_label_ = np.zeros(B, dtype=np.int64)
        self.history_evidence_ = np.zeros(B)
        self.history_count_ = np.zeros(2, dtype=np.int64)

    def _check_state(self) -> None:
        """A loaded history must be one the learner can hold: counts in range, labels valid, norms >= 0; each
        stored context's squared norm ``history_sqnorm_`` that of its column of ``history_`` (the kernel's squared
        distances are computed from it); each evidence a log-likelihood ratio of floored rates, at most
        :data:`MAX_EVIDENCE` in magnitude (a larger one makes the kernel sums, the scores, overflow)."""
        super()._check_state()
        if not self.is_initialized:
            return
        B = int(self.budget)
        n, nxt = (int(v) for v in self.history_count_)
        if not (0 <= n <= B and 0 <= nxt < B and (n == B or nxt == n)):
            raise PersistenceError(f"history_count_ must be (stored, next slot) with 0 <= stored <= budget={B}, "
                                   f"0 <= next < budget, next = stored until the history is full; got {(n, nxt)}")
        if not (np.all((self.history_label_ >= 0) & (self.history_label_ < int(self.n_classes)))
                and np.all(self.history_sqnorm_ >= 0)):
            raise PersistenceError("history_label_ must hold labels in [0, n_classes) and history_sqnorm_ values >= 0")
        check_state_column_sqnorms("history_sqnorm_", self.history_sqnorm_[:n], "history_", self.history_[:, :n])
        check_state_range("history_evidence_", self.history_evidence_, -MAX_EVIDENCE, MAX_EVIDENCE,
                          "log-likelihood ratios of rates floored at a positive float")

    def _state_record(self) -> KernelTSState:
        e1, e0 = flip_evidence(self.rho0, self.rho1, float(self.rate_floor))
        h = float(self.bandwidth)
        return KernelTSState(self.history_, self.history_sqnorm_, self.history_label_, self.history_evidence_,
                             self.history_count_, 1.0 / (2.0 * h * h), float(self.temperature), e1, e0,
                             np.zeros(self.history_.shape[1]))

    # -- prediction ----------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """The kernel sums L_k(x) of each row, shape (n, K) (log-posterior odds up to a constant, before the
        temperature)."""
        self._require_initialized("decision_function")
        rows, n = self._rows(X)
        R = np.zeros((n, int(self.n_classes)))
        kernel_scores_rows(self._state_record(), rows, R)
        return R

    def predict(self, X) -> np.ndarray:
        """Greedy labels argmax_k L_k(x) (ties to the smallest label); never changes state."""
        self._require_initialized()
        return np.argmax(self.decision_function(X), axis=1).astype(np.int64)
