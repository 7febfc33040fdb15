"""SquareCB (Foster & Rakhlin, ICML 2020) with compiled regression oracles, aware of flipped feedback.

Per-round pieces are standalone compiled functions on a state record (namedtuples of arrays,
:mod:`nolo.learners.bandit.oracles`) and rows ``(idx, val, lo, hi)``:

* :func:`act_round` -- predictions r_hat(x, .), the greedy label, and the played label drawn by
  inverse-gap weighting from ONE uniform of the learner's generator;
* :func:`learn_round` -- the oracle update on the played class with the (corrected) target, plus the
  online rate estimate (:mod:`nolo.learners.bandit.rate_oracle`);
* :func:`stream` -- the whole-stream loop, one body for dense and CSR data (:func:`get_row`), drawing
  the environment's index and flip uniforms exactly as :class:`~nolo.learners.bandit.ClassificationBandit`
  and the AM learners' loops do (index, [learner's play uniform], flip, next index, ...), so SquareCB
  sees the same stream as every other nolo learner under the same environment seed.

The per-round API (``act``/``learn``) calls the same compiled functions, so the two paths are
bit-identical (tested).

numba's on-disk cache of :func:`stream` is keyed on THIS file only, while the oracle updates
(:mod:`.oracles`), the rate read-out (:mod:`.rate_oracle`) and the corrected baselines (:mod:`._corrected`)
are compiled into it: after editing one of those, clear ``__pycache__/squarecb*.nb*`` (or touch this file).  :func:`run_stream` has the signature of
:func:`nolo.learners.bandit.run_stream` and runs SquareCB compiled (any other learner is passed on).
"""

from __future__ import annotations

import numbers
import time
from collections import namedtuple

import numpy as np
import scipy.sparse as sp
from numba import njit
from numba.extending import overload

from nolo._validation import check_choice, check_flip_rates, check_int, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.bandit import _kernels as kern
from nolo.learners.bandit import oracles as O
from nolo.learners.bandit import rate_oracle as RO
from nolo.learners.bandit._pcg64 import pcg64_state, store_pcg64_state, uniform
from nolo.learners.base import BanditLearner

__all__ = ["SquareCB", "run_stream", "run_env", "igw_probabilities", "CORRECTIONS", "DenseRows", "CsrRows"]

CORRECTIONS = ("none", "target", "gap")
_MODE = {"none": 0, "target": 1, "gap": 2}
OK, NONFINITE, REFRESHED = 0, 1, 2

#: rows of a dense matrix (gathered into the idx/val buffers) or of a CSR matrix (sorted indices, no zeros)
DenseRows = namedtuple("DenseRows", ["X", "idx", "val"])
CsrRows = namedtuple("CsrRows", ["indptr", "indices", "data"])


def borrowed(rec):
    """The record ``rec`` (a state or row-source namedtuple) with every array borrowed (:func:`_kernels._borrowed`:
    no atomic reference counting in the stream loop; the caller holds the owners). Compiled code only."""
    raise NotImplementedError


@overload(borrowed, inline="always")
def _ov_borrowed(rec):
    cls = getattr(rec, "instance_class", None)
    if cls is None:
        return None
    n = len(rec.types)
    b = kern._borrowed
    if n == 1:
        return lambda rec: cls(b(rec[0]))
    if n == 2:
        return lambda rec: cls(b(rec[0]), b(rec[1]))
    if n == 3:
        return lambda rec: cls(b(rec[0]), b(rec[1]), b(rec[2]))
    if n == 7:
        return lambda rec: cls(b(rec[0]), b(rec[1]), b(rec[2]), b(rec[3]), b(rec[4]), b(rec[5]), b(rec[6]))
    return None


def get_row(src, i):
    """(idx, val, lo, hi) of row i (compiled code only)."""
    raise NotImplementedError


@overload(get_row, inline="always")
def _ov_get_row(src, i):
    kind = getattr(src, "instance_class", None)
    if kind is DenseRows:
        def impl(src, i):
            n = kern.gather_dense(src.X, i, src.idx, src.val)
            return src.idx, src.val, 0, n
        return impl
    if kind is CsrRows:
        return lambda src, i: (src.indices, src.data, src.indptr[i], src.indptr[i + 1])
    return None


# ---------------------------------------------------------------------------------------------
# inverse-gap weighting (Foster & Rakhlin 2020, Algorithm 1)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def igw_draw(u, r, ahat, gamma):
    """Play a != ahat with p(a) = 1 / (K + gamma (r[ahat] - r[a])), ahat with the rest; one uniform ``u``.

    Classes other than ahat own consecutive intervals [acc, acc + p(a)) of [0, 1) in index order; u past
    them plays ahat.
    """
    K = r.shape[0]
    top = r[ahat]
    acc = 0.0
    for a in range(K):
        if a != ahat:
            acc += 1.0 / (K + gamma * (top - r[a]))
            if u < acc:
                return a
    return ahat


@njit(cache=True, nogil=True)
def igw_pmf(r, ahat, gamma, p):
    """p = the inverse-gap-weighting distribution that :func:`igw_draw` samples."""
    K = r.shape[0]
    top = r[ahat]
    tot = 0.0
    for a in range(K):
        if a != ahat:
            p[a] = 1.0 / (K + gamma * (top - r[a]))
            tot += p[a]
    p[ahat] = 1.0 - tot


def igw_probabilities(r, gamma: float) -> np.ndarray:
    """The SquareCB distribution over labels for predicted rewards ``r`` and gap weight ``gamma``."""
    r = np.asarray(r, dtype=np.float64)
    p = np.empty_like(r)
    igw_pmf(r, int(kern.argmax_first(r)), float(gamma), p)
    return p


# ---------------------------------------------------------------------------------------------
# one round
# ---------------------------------------------------------------------------------------------
# cfg (float64): 0 gamma_scale, 1 gamma_exponent, 2 correction (0 none, 1 target, 2 gap), 3 rho0, 4 rho1 (known or
# initial), 5 estimate rates (0/1), 6 rate_every, 7 pct_top, 8 rho_max
# est (float64, rate_oracle.EST_SIZE): 0 rho0_hat, 1 rho1_hat, 2 rounds in the current block, 3 sum f/p(a), 4 count


@njit(cache=True, nogil=True, inline="always")
def _correction(cfg, est):
    """(gap multiplier, rho0 of the target, kappa of the target): the target is (f - rho0) / kappa.

    "target" multiplies g_t by kappa: Foster & Rakhlin's gamma = sqrt(K T / Reg_sq) and the square-loss
    regret Reg_sq of a target of range 1/kappa is 1/kappa^2 times that of the bit (docs/squarecb.md).
    """
    if cfg[5] != 0.0:
        r0, r1 = est[0], est[1]
    else:
        r0, r1 = cfg[3], cfg[4]
    mode = cfg[2]
    if mode == 1.0:
        return 1.0 - r0 - r1, r0, 1.0 - r0 - r1
    if mode == 2.0:
        return 1.0 / (1.0 - r0 - r1), 0.0, 1.0
    return 1.0, 0.0, 1.0


@njit(cache=True, nogil=True, inline="always")
def gap_weight(cfg, est, t):
    """g_t = gamma_scale * t^gamma_exponent, times 1/kappa under correction="gap"."""
    gm, _, _ = _correction(cfg, est)
    return cfg[0] * t ** cfg[1] * gm


@njit(cache=True, nogil=True, inline="always")
def act_round(st, est, cfg, idx, val, lo, hi, r, t, u):
    """Predict r (every class), return (greedy label, played label) for round number ``t``, uniform ``u``."""
    O.oracle_predict(st, idx, val, lo, hi, r)
    ahat = kern.argmax_first(r)
    return ahat, igw_draw(u, r, ahat, gap_weight(cfg, est, t))


@njit(cache=True, nogil=True, inline="always")
def igw_prob(r, ahat, gamma, a):
    """p(a) of :func:`igw_draw` (ahat: one minus the others, summed in index order as the draw does)."""
    K = r.shape[0]
    top = r[ahat]
    if a != ahat:
        return 1.0 / (K + gamma * (top - r[a]))
    acc = 0.0
    for b in range(K):
        if b != ahat:
            acc += 1.0 / (K + gamma * (top - r[b]))
    return 1.0 - acc


@njit(cache=True, nogil=True, inline="always")
def learn_round(st, hist, est, cfg, idx, val, lo, hi, r, ahat, a, fb, t):
    """Update class ``a`` on the target (fb - rho0)/kappa; then the rate estimate.  ``r`` = round ``t``'s
    predictions (before the update).  Returns OK, NONFINITE (nothing written) or REFRESHED."""
    gm, r0t, kt = _correction(cfg, est)
    target = (fb - r0t) / kt
    if not O.oracle_update(st, idx, val, lo, hi, a, r[a], target):
        return NONFINITE
    if cfg[5] != 0.0:
        p = igw_prob(r, ahat, cfg[0] * t ** cfg[1] * gm, a)
        RO.record_round(hist, est, r[ahat], fb, p)
        est[2] += 1.0
        if est[2] >= cfg[6]:
            RO.refresh_rates(hist, est, cfg[7], cfg[8], r.shape[0])
            est[2] = 0.0
            return REFRESHED
    return OK


def policy_act(st, est, cfg, idx, val, lo, hi, r, t, u):
    """:func:`act_round` for the learner whose state record is ``st`` (compiled code only).  Other modules
    register further ``@overload(policy_act)`` implementations for their own records (the corrected
    baselines, :mod:`nolo.learners.bandit._corrected`), so :func:`stream` runs them too."""
    raise NotImplementedError


def policy_learn(st, hist, est, cfg, idx, val, lo, hi, r, ahat, a, fb, t):
    """:func:`learn_round` for the learner whose state record is ``st`` (compiled code only; see :func:`policy_act`)."""
    raise NotImplementedError


def _is_oracle(st):
    return getattr(st, "instance_class", None) in (O.RidgeState, O.OGDState)


@overload(policy_act, inline="always")
def _ov_policy_act(st, est, cfg, idx, val, lo, hi, r, t, u):
    if _is_oracle(st):
        return lambda st, est, cfg, idx, val, lo, hi, r, t, u: act_round(st, est, cfg, idx, val, lo, hi, r, t, u)
    return None


@overload(policy_learn, inline="always")
def _ov_policy_learn(st, hist, est, cfg, idx, val, lo, hi, r, ahat, a, fb, t):
    if _is_oracle(st):
        return (lambda st, hist, est, cfg, idx, val, lo, hi, r, ahat, a, fb, t:
                learn_round(st, hist, est, cfg, idx, val, lo, hi, r, ahat, a, fb, t))
    return None


# ---------------------------------------------------------------------------------------------
# whole streams, batch helpers
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def stream(st, hist, est, cfg, src, n, y, K, n_rounds, t0, order, perm, pos, env_rng, lrn_rng, rho0, rho1,
           checkpoints, out_played, out_greedy, counters, log_index, log_played, log_feedback, traj, ntraj):
    """Run ``n_rounds`` rounds; ``counters`` = [rounds done, played mistakes, greedy mistakes, next checkpoint
    slot] (read and written back), ``traj[ntraj:]`` gets (round, rho0_hat, rho1_hat) at each rate refresh.
    Returns (status, rounds done in this call, new ntraj)."""
    b = kern._borrowed  # the caller holds every owner for the whole call
    st, src = borrowed(st), borrowed(src)
    hist, est, cfg, y, perm, pos, env_rng, lrn_rng = (b(hist), b(est), b(cfg), b(y), b(perm), b(pos), b(env_rng),
                                                      b(lrn_rng))
    checkpoints, out_played, out_greedy, counters = b(checkpoints), b(out_played), b(out_greedy), b(counters)
    log_index, log_played, log_feedback, traj = b(log_index), b(log_played), b(log_feedback), b(traj)
    r_hat = np.empty(K)
    do_log = log_index.shape[0] >= n_rounds
    done, n_played, n_greedy, slot = counters[0], counters[1], counters[2], counters[3]
    status, r = OK, 0
    i = kern.next_index(order, n, perm, pos, env_rng) if n_rounds > 0 else 0
    while r < n_rounds:
        idx, val, lo, hi = get_row(src, i)
        yi = y[i]
        t = t0 + r + 1
        ahat, a = policy_act(st, est, cfg, idx, val, lo, hi, r_hat, float(t), uniform(lrn_rng))
        fb = kern.flip(1 if a == yi else 0, uniform(env_rng), rho0, rho1)
        i_next = i
        if r + 1 < n_rounds:  # the next index draw follows this round's flip, as in the per-round API
            i_next = kern.next_index(order, n, perm, pos, env_rng)
        code = policy_learn(st, hist, est, cfg, idx, val, lo, hi, r_hat, ahat, a, fb, float(t))
        if code == NONFINITE:
            status = NONFINITE
            break
        if code == REFRESHED and ntraj < traj.shape[0]:
            traj[ntraj, 0] = t
            traj[ntraj, 1] = est[0]
            traj[ntraj, 2] = est[1]
            ntraj += 1
        n_played += a != yi
        n_greedy += ahat != yi
        done += 1
        if do_log:
            log_index[r] = i
            log_played[r] = a
            log_feedback[r] = fb
        slot = kern._record(done, n_played, n_greedy, slot, checkpoints, out_played, out_greedy)
        r += 1
        i = i_next
    counters[0], counters[1], counters[2], counters[3] = done, n_played, n_greedy, slot
    return status, r, ntraj


@njit(cache=True, nogil=True)
def predict_rows(st, src, n, R):
    """R[i] = the oracle's predictions for row i."""
    for i in range(n):
        idx, val, lo, hi = get_row(src, i)
        O.oracle_predict(st, idx, val, lo, hi, R[i])


@njit(cache=True, nogil=True)
def fit_rows(st, src, played, target):
    """One pass of oracle updates over the rows in order (class played[i], target[i]); False on a non-finite step."""
    r = np.empty(_n_classes(st))
    for i in range(played.shape[0]):
        idx, val, lo, hi = get_row(src, i)
        O.oracle_predict(st, idx, val, lo, hi, r)
        a = played[i]
        if not O.oracle_update(st, idx, val, lo, hi, a, r[a], target[i]):
            return False
    return True


def _n_classes(st):
    raise NotImplementedError


@overload(_n_classes, inline="always")
def _ov_n_classes(st):
    kind = getattr(st, "instance_class", None)
    if kind is O.RidgeState:
        return lambda st: st.thetaT.shape[1]
    if kind is O.OGDState:
        return lambda st: st.wT.shape[1]
    return None


# ---------------------------------------------------------------------------------------------
# the learner
# ---------------------------------------------------------------------------------------------

_ORACLE_STATE = {"ridge": ("P_", "thetaT_"), "ogd": ("wT_", "G_", "S_", "N_", "n_", "hp_", "buf_")}


class SquareCB(BanditLearner):
    """SquareCB: Foster & Rakhlin, "Beyond UCB", ICML 2020, Algorithm 1, with flip-aware targets (AM Lemma 1).

    Each round: predict r_hat(x, a) for every class with an online regression oracle; with
    a_hat = argmax_a r_hat(x, a) and g_t = ``gamma_scale`` * t^``gamma_exponent`` (Foster & Rakhlin's
    gamma; VW's ``--squarecb`` schedule), play a != a_hat with probability
    p(a) = 1 / (K + g_t (r_hat(a_hat) - r_hat(a))) and a_hat with the rest (inverse-gap weighting,
    one uniform of the learner's generator); then one square-loss update of the played class's
    regressor on the feedback bit.

    Flipped feedback (AM section 3, rates rho0 = P(f_rho = 1 | f = 0), rho1 = P(f_rho = 0 | f = 1)):
    E[f_rho | x, a] = rho0 + kappa P(y = a | x) with kappa = 1 - rho0 - rho1 > 0, an increasing affine
    map of the clean reward -- a regressor of the raw bit keeps the argmax, only its gaps shrink by
    kappa (docs/squarecb.md).  ``correction``:

    * ``"none"``: fit the raw bit, gaps as fitted;
    * ``"target"``: fit AM's unbiased h(f_rho) = (f_rho - rho0) / kappa (AM eq. 4, Lemma 1: E[h] = f) and
      weigh its gaps by g_t kappa -- h's range, hence the oracle's square-loss regret bound, grows by
      1/kappa (1/kappa^2), and SquareCB's gamma ~ sqrt(K T / regret) (Foster & Rakhlin, Theorem 1);
    * ``"gap"``: fit the raw bit and weigh its gaps by g_t / kappa (the clean gaps' exploration).

    With the schedule's constants the three differ as measured in docs/squarecb.md: "none" and "target"
    explore alike (the raw gaps are kappa times the clean ones), "gap" explores least under heavy noise.

    Unknown rates (``estimate_rates=True``, correction ``"gap"`` or ``"none"``): rho0, rho1 start at the
    given values and, after every ``rate_every`` rounds, are re-read (:mod:`nolo.learners.bandit.rate_oracle`):
    1 - rho1 from the ``pct_top``-th percentile of the oracle's top predictions of the raw bit in the block,
    rho0 from the inverse-propensity identity sum_a E[f_rho | x, a] = (K - 1) rho0 + 1 - rho1 over all
    rounds so far; clipped to [0, ``rho_max``] as RCINE clips NREst.  ``rate_estimates_`` holds (round, rho0_hat, rho1_hat) rows.

    Oracles (:mod:`nolo.learners.bandit.oracles`, both with a bias feature): ``"ridge"`` -- per-class
    ridge regression by recursive least squares (Sherman-Morrison, O(d nnz + d^2) per round on the
    played class; memory O(K d^2): K (d + 1)^2 float64, 49 MB for MNIST-784 with K = 10; more than
    ``max_bytes`` is refused); ``"ogd"`` -- per-class normalised adaptive OGD in the style of VW's default
    learner (O(nnz) per round, memory O(K d)).

    Parameters
    ----------
    n_classes : int >= 2
    oracle : "ridge" (default) or "ogd"
    gamma_scale : float >= 0, default 10 (VW's default; tuned on scikit-learn digits and SynSep only, never on
        MNIST/USPS: with the ridge oracle on digits 10 beat 1, 3, 30 and 100 averaged over AM's six noise settings,
        docs/squarecb.md)
    gamma_exponent : float in [0, 1], default 0.5 (VW's)
    rho0, rho1 : known flip rates (rho0 + rho1 < 1), default 0; with ``estimate_rates`` the starting values
    correction : "none", "target" (default) or "gap" (see above)
    estimate_rates : bool, default False
    rate_every : rounds per rate re-estimate, default 5,000
    pct_top : percentile of the top predictions read as 1 - rho1, default 50
    rho_max : cap of the estimated rates, in [0, 0.5), default 0.49 (RCINE's)
    lam : ridge regularisation (P starts at I / lam), default 1
    eta : the OGD oracle's learning rate, default 0.5 (VW's)
    max_bytes : largest ridge state accepted, default 2 GiB
    seed : seed of the learner's generator (one uniform per played label)

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> import numpy as np
    >>> from nolo.learners.bandit import SquareCB
    >>> from nolo.learners.bandit.squarecb import run_stream
    >>> X, y = load_digits(return_X_y=True); X = X / np.linalg.norm(X, axis=1, keepdims=True)
    >>> m = SquareCB(n_classes=10, rho0=0.2, rho1=0.2, seed=0)
    >>> res = run_stream(m, X, y, 20_000, rho0=0.2, rho1=0.2, seed=1)
    >>> bool(res.error_rate[-1] < 0.15), bool(np.mean(m.predict(X) == y) > 0.9)
    (True, True)
    """

    def __init__(self, n_classes=2, oracle="ridge", gamma_scale=10.0, gamma_exponent=0.5, rho0=0.0, rho1=0.0,
                 correction="target", estimate_rates=False, rate_every=5_000, pct_top=RO.DEFAULT_PCT_TOP,
                 rho_max=0.49, lam=1.0, eta=0.5, max_bytes=O.RIDGE_MAX_BYTES, seed=None):
        self.n_classes = n_classes
        self.oracle = oracle
        self.gamma_scale = gamma_scale
        self.gamma_exponent = gamma_exponent
        self.rho0 = rho0
        self.rho1 = rho1
        self.correction = correction
        self.estimate_rates = estimate_rates
        self.rate_every = rate_every
        self.pct_top = pct_top
        self.rho_max = rho_max
        self.lam = lam
        self.eta = eta
        self.max_bytes = max_bytes
        self.seed = seed

    # -- parameters and state ------------------------------------------------------------------
    def _validate_params(self) -> None:
        check_int(self.n_classes, "n_classes", low=2)
        check_choice(self.oracle, "oracle", O.ORACLES)
        check_scalar(self.gamma_scale, "gamma_scale", low=0.0)
        check_scalar(self.gamma_exponent, "gamma_exponent", low=0.0, high=1.0)
        check_flip_rates(self.rho0, self.rho1)
        check_choice(self.correction, "correction", CORRECTIONS)
        if not isinstance(self.estimate_rates, (bool, np.bool_)):
            raise ParameterError(f"estimate_rates must be True or False, got {self.estimate_rates!r}")
        if self.estimate_rates and self.correction == "target":
            raise ParameterError("estimate_rates=True needs correction='gap' or 'none' (the oracle must fit the raw "
                                 "bit for its predictions to range over [rho0, 1 - rho1]), got correction='target'")
        check_int(self.rate_every, "rate_every", low=10)
        check_scalar(self.pct_top, "pct_top", low=0.0, high=100.0, low_inclusive=False, high_inclusive=False)
        check_scalar(self.rho_max, "rho_max", low=0.0, high=0.5, high_inclusive=False)
        check_scalar(self.lam, "lam", low=0.0, low_inclusive=False)
        check_scalar(self.eta, "eta", low=0.0, low_inclusive=False)
        check_int(self.max_bytes, "max_bytes", low=1)

    def initialize(self, n_features: int) -> "SquareCB":
        self._validate_params()
        if self.oracle == "ridge" and not isinstance(n_features, bool) and isinstance(n_features, (int, np.integer)):
            need = O.ridge_bytes(self.n_classes, n_features)
            if need > int(self.max_bytes):
                O.ridge_state(self.n_classes, n_features, self.lam, int(self.max_bytes))  # raises, state untouched
        return super().initialize(n_features)

    def _init_state(self, n_features: int) -> None:
        K = int(self.n_classes)
        if self.oracle == "ridge":
            st = O.ridge_state(K, n_features, float(self.lam), int(self.max_bytes))
        else:
            st = O.ogd_state(K, n_features, float(self.eta))
        for name, arr in zip(_ORACLE_STATE[self.oracle], st):
            setattr(self, name, arr)
        self.hist_ = np.zeros(RO.HIST_BINS)
        self.est_ = np.zeros(RO.EST_SIZE)
        self.est_[:2] = float(self.rho0), float(self.rho1)
        self.rate_estimates_ = np.zeros((0, 3))

    def _state(self):
        arrays = [getattr(self, name) for name in _ORACLE_STATE[self.oracle]]
        return O.RidgeState(*arrays) if self.oracle == "ridge" else O.OGDState(*arrays)

    def _cfg(self) -> np.ndarray:
        return np.array([self.gamma_scale, self.gamma_exponent, _MODE[self.correction], self.rho0, self.rho1,
                         1.0 if self.estimate_rates else 0.0, self.rate_every, self.pct_top, self.rho_max], dtype=np.float64)

    @property
    def rates_(self) -> tuple[float, float]:
        """The flip rates in use: the known ones, or the current estimates."""
        self._require_initialized("rates_")
        if self.estimate_rates:
            return float(self.est_[0]), float(self.est_[1])
        return float(self.rho0), float(self.rho1)

    # -- per round -----------------------------------------------------------------------------
    def _row(self, x):
        x = np.ascontiguousarray(x, dtype=np.float64)
        idx = np.empty(x.shape[0], dtype=np.int64)
        val = np.empty(x.shape[0])
        nnz = kern.gather_dense(x.reshape(1, -1), 0, idx, val)
        return idx, val, nnz

    def act(self, x) -> int:
        """Draw the label to play for ``x`` by inverse-gap weighting (one uniform from the learner's generator)."""
        x = self._check_x(x)
        self._ensure_initialized(x.shape[0])
        idx, val, nnz = self._row(x)
        r = np.empty(int(self.n_classes))
        ahat, a = act_round(self._state(), self.est_, self._cfg(), idx, val, 0, nnz, r, float(self.t_ + 1),
                            self.rng_.random())
        return int(a)

    def _check_round(self, x, played, feedback) -> np.ndarray:
        x = self._check_x(x)
        K = int(self.n_classes)
        if isinstance(played, bool) or not isinstance(played, (numbers.Integral, np.integer)) or not 0 <= played < K:
            raise ParameterError(f"played must be an integer label in [0, {K - 1}], got {played!r}")
        if isinstance(feedback, (bool, np.bool_)):
            feedback = int(feedback)
        if not isinstance(feedback, (numbers.Integral, np.integer)) or feedback not in (0, 1):
            raise ParameterError(f"feedback must be 0 or 1, got {feedback!r}")
        return x

    def learn(self, x, played, feedback) -> "SquareCB":
        """Update on the (possibly flipped) bit ``feedback`` = 1[played == y] after ``act(x)`` played ``played``."""
        x = self._check_round(x, played, feedback)
        self._validate_params()
        self._ensure_initialized(x.shape[0])
        idx, val, nnz = self._row(x)
        st, cfg = self._state(), self._cfg()
        r = np.empty(int(self.n_classes))
        _predict_one(st, idx, val, nnz, r)
        ahat = int(kern.argmax_first(r))
        code = learn_round(st, self.hist_, self.est_, cfg, idx, val, 0, nnz, r, ahat, int(played), int(feedback),
                           float(self.t_ + 1))
        if code == NONFINITE:
            raise NumericalError(f"SquareCB: a non-finite oracle update at round {self.t_ + 1}; state unchanged")
        self.t_ += 1
        if code == REFRESHED:
            self.rate_estimates_ = np.vstack([self.rate_estimates_, [[self.t_, self.est_[0], self.est_[1]]]])
        return self

    # -- prediction ----------------------------------------------------------------------------
    def _source(self, X):
        if sp.issparse(X):
            from nolo.learners.bandit.environment import canonical_csr

            X = canonical_csr(X, np.float64)
            if X.shape[1] != self.n_features_in_:
                raise ParameterError(f"X must have {self.n_features_in_} features per row, got {X.shape[1]}")
            if not np.all(np.isfinite(X.data)):
                raise ParameterError("X must contain only finite values (no NaN or inf)")
            return CsrRows(X.indptr, X.indices, X.data), X.shape[0]
        X = np.ascontiguousarray(self._check_X(X), dtype=np.float64)
        return DenseRows(X, np.empty(X.shape[1], dtype=np.int64), np.empty(X.shape[1])), X.shape[0]

    def decision_function(self, X) -> np.ndarray:
        """The oracle's predicted rewards r_hat(x, a), shape (n, K) (on the scale it fits: see ``correction``)."""
        self._require_initialized("decision_function")
        src, n = self._source(X)
        R = np.empty((n, int(self.n_classes)))
        predict_rows(self._state(), src, n, R)
        return R

    def predict(self, X) -> np.ndarray:
        """Greedy labels argmax_a r_hat(x, a) (ties to the smallest label); never changes state."""
        self._require_initialized()
        R = self.decision_function(X)
        return np.argmax(R, axis=1).astype(np.int64)

    # -- persistence ---------------------------------------------------------------------------
    def _set_state(self, state) -> None:
        super()._set_state(state)
        for k, v in state.items():
            if isinstance(v, np.ndarray):
                setattr(self, k, np.ascontiguousarray(v))

    # -- whole stream --------------------------------------------------------------------------
    def _run_env(self, env, n_rounds: int, checkpoints=None, log: bool = False):
        return run_env(env, self, n_rounds, checkpoints, log)


@njit(cache=True, nogil=True)
def _predict_one(st, idx, val, nnz, r):
    O.oracle_predict(st, idx, val, 0, nnz, r)


def run_env(env, learner: SquareCB, n_rounds: int, checkpoints=None, log: bool = False):
    """Play ``n_rounds`` rounds of the environment ``env`` (a ClassificationBandit) with SquareCB, compiled.

    Same draws as ``env.run(...)`` for the AM learners; returns a
    :class:`~nolo.learners.bandit.StreamResult` (``extra["rate_estimates"]``: the (round, rho0_hat,
    rho1_hat) rows of this run when rates are estimated; ``extra["log"]`` with ``log=True``).
    """
    from nolo.learners.bandit.environment import ORDERS, StreamResult, log_checkpoints

    n_rounds = check_int(n_rounds, "n_rounds", low=1)
    if checkpoints is None:
        checkpoints = log_checkpoints(n_rounds)
    cps = np.asarray(checkpoints, dtype=np.int64)
    if cps.ndim != 1 or cps.size == 0 or np.any(np.diff(cps) <= 0) or cps[0] < 1 or cps[-1] > n_rounds:
        raise ParameterError("checkpoints must be strictly increasing round numbers in [1, n_rounds]")
    if int(learner.n_classes) < env.n_classes:
        raise ParameterError(f"learner.n_classes must be >= {env.n_classes} (labels in y), got {learner.n_classes}")
    learner._validate_params()
    learner._ensure_initialized(env.n_features)
    if learner.n_features_in_ != env.n_features:
        raise ParameterError(f"learner expects {learner.n_features_in_} features, the data have {env.n_features}")
    X = env._X_as(np.float64)
    if sp.issparse(X):
        src = CsrRows(X.indptr, X.indices, X.data)
    else:
        src = DenseRows(X, np.empty(X.shape[1], dtype=np.int64), np.empty(X.shape[1]))
    out_p = np.zeros(cps.size, dtype=np.int64)
    out_g = np.zeros(cps.size, dtype=np.int64)
    counters = np.zeros(4, dtype=np.int64)
    if log:
        log_i, log_p, log_f = (np.empty(n_rounds, dtype=np.int64) for _ in range(3))
    else:
        log_i = log_p = log_f = np.zeros(0, dtype=np.int64)
    estimating = bool(getattr(learner, "estimate_rates", False))
    traj = np.zeros((n_rounds // int(learner.rate_every) + 2 if estimating else 0, 3))
    rngs = [env.rng, learner.rng_]
    states = [pcg64_state(g) for g in rngs]
    if rngs[1] is rngs[0]:
        states[1] = states[0]
    t0 = time.perf_counter()
    try:
        status, k, ntraj = stream(learner._state(), learner.hist_, learner.est_, learner._cfg(), src, X.shape[0],
                                  env.y, int(learner.n_classes), n_rounds, int(learner.t_), ORDERS[env.order],
                                  env.perm, env.pos, *(g if s is None else s for g, s in zip(rngs, states)),
                                  env.rho0, env.rho1, cps, out_p, out_g, counters, log_i, log_p, log_f, traj, 0)
    finally:
        for g, s in zip(rngs[:1] if rngs[1] is rngs[0] else rngs, states):
            if s is not None:
                store_pcg64_state(g, s)
    seconds = time.perf_counter() - t0
    learner.t_ += int(k)
    if hasattr(learner, "_after_stream"):
        learner._after_stream()
    if ntraj:
        learner.rate_estimates_ = np.vstack([learner.rate_estimates_, traj[:ntraj]])
    if status != OK:
        raise NumericalError(f"{type(learner).__name__}: a non-finite update at round {learner.t_ + 1}; "
                             "that round's update was not applied")
    extra = {}
    if estimating:
        extra["rate_estimates"] = traj[:ntraj].copy()
    if log:
        extra["log"] = {"index": log_i, "played": log_p, "feedback": log_f}
    return StreamResult(cps, out_p, out_g, n_rounds, seconds, extra)


def run_stream(learner, X, y, n_rounds: int, rho0: float = 0.0, rho1: float = 0.0, order: str = "replace",
               seed=None, checkpoints=None, log: bool = False, representation: str = "auto"):
    """:func:`nolo.learners.bandit.run_stream` that also runs :class:`SquareCB` (compiled; same draws).

    A learner with a ``_run_env`` method (SquareCB and the corrected baselines) runs its own loop on the
    same :class:`~nolo.learners.bandit.ClassificationBandit`; any other is passed to the AM runner.
    """
    from nolo.learners.bandit.environment import ClassificationBandit

    env = ClassificationBandit(X, y, rho0=rho0, rho1=rho1, order=order, seed=seed, representation=representation)
    if hasattr(learner, "_run_env"):
        return learner._run_env(env, n_rounds, checkpoints, log)
    return env.run(learner, n_rounds, checkpoints, log=log)
