"""SquareCB (Foster & Rakhlin, ICML 2020) with compiled regression oracles, aware of flipped feedback.

SquareCB plugs into the bandit core (:mod:`nolo.learners.bandit._stream`) like every other learner: its
state record :class:`SquareCBState` names

* ``act`` = :func:`igw_act` -- the greedy label of the predictions r_hat(x, .) (the core's scores W x plus
  the oracle's bias, added by ``adjust`` = :func:`add_bias`) and the played label drawn by inverse-gap
  weighting from ONE uniform of the learner's generator;
* ``update`` = :func:`squarecb_update` -- the oracle step on the played class with the (corrected)
  target (:func:`nolo.learners.bandit.oracles.oracle_update`, dispatched on the nested oracle record),
  then the online rate estimate (:mod:`nolo.learners.bandit.rate_oracle`).

The round number t of g_t is the record's ``clock`` (the learner's ``t_`` when the record is built,
advanced by each update); the played label's probability, which the rate estimate needs, is recomputed
from the same scores.  ``nolo.learners.bandit.run_stream(SquareCB(...), X, y, ...)``, ``ClassificationBandit.run``
and the per-round ``act``/``learn`` run the same compiled rule: bit-identical (tested).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nolo._jit import njit
from nolo._validation import check_choice, check_flip_rates, check_int, check_scalar, check_state_bytes
from nolo.exceptions import ParameterError, PersistenceError
from nolo.learners.bandit import oracles as O
from nolo.learners.bandit import rate_oracle as RO
from nolo.learners.bandit._forward import forwarder, rule_of
from nolo.learners.bandit._linear import OneBitBanditLearner
from nolo.learners.bandit._pcg64 import uniform
from nolo.learners.bandit._predict import decision_rows
from nolo.learners.bandit._simd import argmax_first, argmax_padded
from nolo.learners.base import check_state_spd, check_state_sqnorm

__all__ = ["SquareCB", "SquareCBState", "igw_probabilities", "igw_draw", "igw_prob", "CORRECTIONS",
           "MODE_NONE", "MODE_TARGET", "MODE_GAP"]

CORRECTIONS = ("none", "target", "gap")
#: the record's ``mode``, one code per correction (FastCB's, LinUCB's and AutoCB's records share the field)
MODE_NONE, MODE_TARGET, MODE_GAP = 0, 1, 2
_MODE = {"none": MODE_NONE, "target": MODE_TARGET, "gap": MODE_GAP}


# ---------------------------------------------------------------------------------------------
# inverse-gap weighting (Foster & Rakhlin 2020, Algorithm 1)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def igw_draw(u, r, K, ahat, gamma):
    """Play a != ahat with p(a) = 1 / (K + gamma (r[ahat] - r[a])), ahat with the rest; one uniform ``u``.

    Classes other than ahat own consecutive intervals [acc, acc + p(a)) of [0, 1) in index order; u past
    them plays ahat.  ``r[:K]`` are the predictions.
    """
    top = r[ahat]
    acc = 0.0
    for a in range(K):
        if a != ahat:
            acc += 1.0 / (K + gamma * (top - r[a]))
            if u < acc:
                return a
    return ahat


@njit(cache=True, nogil=True, inline="always")
def igw_prob(r, K, ahat, gamma, a):
    """p(a) of :func:`igw_draw` (ahat: one minus the others, summed in index order as the draw does)."""
    top = r[ahat]
    if a != ahat:
        return 1.0 / (K + gamma * (top - r[a]))
    acc = 0.0
    for b in range(K):
        if b != ahat:
            acc += 1.0 / (K + gamma * (top - r[b]))
    return 1.0 - acc


def igw_probabilities(r, gamma: float) -> np.ndarray:
    """The SquareCB distribution over labels for predicted rewards ``r`` and gap weight ``gamma``."""
    r = np.asarray(r, dtype=np.float64)
    K = r.shape[0]
    ahat = int(argmax_first(r))
    return np.array([igw_prob(r, K, ahat, float(gamma), a) for a in range(K)])


# ---------------------------------------------------------------------------------------------
# the state record and its rule
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def correction(state):
    """(gap multiplier, rho0 of the target, kappa of the target): the target is (f - rho0) / kappa.

    "target" multiplies g_t by kappa: Foster & Rakhlin's gamma = sqrt(K T / Reg_sq) and the square-loss
    regret Reg_sq of a target of range 1/kappa is 1/kappa^2 times that of the bit (docs/squarecb.md).
    A ``mode`` that codes no correction raises ValueError rather than running one of them.
    """
    if state.estimate:
        r0, r1 = state.est[0], state.est[1]
    else:
        r0, r1 = state.rho0, state.rho1
    if state.mode == MODE_TARGET:
        return 1.0 - r0 - r1, r0, 1.0 - r0 - r1
    if state.mode == MODE_GAP:
        return 1.0 / (1.0 - r0 - r1), 0.0, 1.0
    if state.mode == MODE_NONE:
        return 1.0, 0.0, 1.0
    raise ValueError("unknown correction mode: must be MODE_NONE, MODE_TARGET or MODE_GAP "
                     "(nolo.learners.bandit.squarecb)")


@njit(cache=True, nogil=True, inline="always")
def gap_weight(state, t):
    """g_t = gamma_scale * t^gamma_exponent, times the correction's multiplier (kappa for "target", 1/kappa for
    "gap")."""
    gm, _, _ = correction(state)
    return state.gamma_scale * t ** state.gamma_exponent * gm


@njit(nogil=True)  # not cached on disk, as _stream.unknown_probs: compiled for any record type
def default_weight(state, s, K, ahat, t):
    """:func:`gap_weight`, for a record whose class names no ``weight`` of its own."""
    return gap_weight(state, t)


explore_weight = forwarder(
    lambda state, *_: rule_of(state, "weight", default_weight),
    "explore_weight", "state s K ahat t",
    """The gap weight of round t for the scores ``s[:K]`` (greedy label ``ahat``): the record class's compiled
    ``weight`` if it names one (FastCB's first-order weight, :mod:`.fastcb`), else :func:`gap_weight` (compiled code
    only; :func:`igw_act` and :func:`squarecb_update` both call it, so the played label's probability in the rate
    estimate is the one drawn from).""")


@njit(cache=True, nogil=True, inline="always")
def add_bias(state, Wt, idx, val, lo, hi, s, K):
    """The core's ``adjust``: the predictions are W x + bias, the bias being row d of ``Wt`` (d + 1, K)."""
    d = Wt.shape[0] - 1
    for k in range(K):
        s[k] += Wt[d, k]


@njit(cache=True, nogil=True, inline="always")
def igw_act(state, sp, K, rng):
    """(greedy label, played label) of round t = clock + 1: inverse-gap weighting with g_t, one uniform."""
    ahat = argmax_padded(sp, K)
    t = float(state.clock[0] + 1)
    return ahat, igw_draw(uniform(rng), sp, K, ahat, explore_weight(state, sp, K, ahat, t))


@njit(cache=True, nogil=True, inline="always")
def igw_probs(state, sp, K, out):
    """:func:`igw_act`'s distribution for round t = clock + 1: each a != a_hat gets 1 / (K + g (r[a_hat] - r[a])) with
    the record's gap weight, a_hat the rest (summed in index order, as the draw sums)."""
    ahat = argmax_padded(sp, K)
    g = explore_weight(state, sp, K, ahat, float(state.clock[0] + 1))
    top = sp[ahat]
    acc = 0.0
    for a in range(K):
        if a != ahat:
            p = 1.0 / (K + g * (top - sp[a]))
            out[a] = p
            acc += p
    out[ahat] = 1.0 - acc


# not inline="always": compiled once per record and linked into every entry point of the bandit core (stream loop,
# per-round learn, learn_many) rather than re-typed inside each -- with _stream's one slice type, a cold FastCB
# contract check compiles in a little over half the time, at the same throughput (docs/performance.md, first call)
@njit(cache=True, nogil=True)
def squarecb_update(state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback):
    """Round t = clock + 1 (the clock advances): the oracle step of class ``played`` on (f - rho0)/kappa, then the
    rate estimate (the top prediction, f / p(played)); False (nothing written) on a non-finite oracle step."""
    t = state.clock[0] + 1
    state.clock[0] = t
    _, r0t, kt = correction(state)
    target = (feedback - r0t) / kt
    if not O.oracle_update(state.oracle, Wt, idx, val, lo, hi, played, s[played], target):
        return False
    if state.estimate:
        est = state.est
        K = s.shape[0]
        p = igw_prob(s, K, yhat, explore_weight(state, s, K, yhat, float(t)), played)
        RO.record_round(state.hist, est, s[yhat], feedback, p)
        est[2] += 1.0
        if est[2] >= state.rate_every:
            RO.refresh_rates(state.hist, est, state.pct_top, state.rho_max, K)
            est[2] = 0.0
    return True


class SquareCBState(NamedTuple):
    """SquareCB's record: the schedule, the flip handling, the rate estimate's arrays (``est`` = [rho0_hat,
    rho1_hat, rounds in the block, sum f/p, rounds counted], ``hist``), the round ``clock`` (1 element) and
    the oracle's record (:mod:`.oracles`); the weights on [x, 1] are the core's ``Wt`` (d + 1, K)."""

    gamma_scale: float
    gamma_exponent: float
    mode: int
    rho0: float
    rho1: float
    estimate: bool
    rate_every: float
    pct_top: float
    rho_max: float
    est: np.ndarray
    hist: np.ndarray
    clock: np.ndarray
    oracle: tuple
    act = igw_act
    update = squarecb_update
    adjust = add_bias
    probs = igw_probs


# ---------------------------------------------------------------------------------------------
# the learner
# ---------------------------------------------------------------------------------------------

_ORACLE_STATE = {"ridge": ("P_",), "ogd": ("G_", "S_", "N_", "n_"),
                 "fdson": ("sketch_", "sketch_inv_", "sketch_gram_", "sketch_rows_", "sketch_alpha_")}


def check_oracle_state(learner, kind: str) -> None:
    """Invariants of a loaded linear regression oracle ``kind`` (SquareCB's, LinUCB's, FastCB's, AutoCB's) the updates
    rely on: the weights ``W_`` of finite squared norm; ridge: each inverse ``P_ = (lam I + sum z z^T)^-1``
    symmetric positive definite (the update and the confidence widths multiply by it); OGD: the sums >= 0; FD-SON:
    ``2 sketch_size`` rows, ``sketch_rows_`` in [0, that], ``sketch_alpha_ > 0``, the sketch of finite squared
    norm, each class's Gram block ``sketch_gram_[a, :L, :L]`` equal to ``S S^T`` of its ``L`` sketch rows (to 1e-6
    of its trace: a shrink eigendecomposes it) and its inverse block ``sketch_inv_[a, :L, :L] = (alpha I +
    S S^T)^-1`` symmetric positive definite."""
    check_state_sqnorm("W_", learner.W_, "the oracle's weights")
    if kind == "ridge":
        check_state_spd("P_", learner.P_, "the ridge oracle's inverses (lam I + sum z z^T)^-1")
    elif kind == "ogd":
        if not all(np.all(a >= 0) for a in (learner.G_, learner.S_, learner.N_, learner.n_)):
            raise PersistenceError("the OGD oracle's sums G_, S_, N_, n_ must be >= 0")
    elif kind == "fdson":
        rows, m2 = learner.sketch_rows_, learner.sketch_.shape[1]
        if not (m2 == 2 * int(learner.sketch_size) and np.all((rows >= 0) & (rows <= m2) & (rows == np.floor(rows)))
                and np.all(learner.sketch_alpha_ > 0)):
            raise PersistenceError("the FD-SON oracle's sketch_ must hold 2 sketch_size = "
                                   f"{2 * int(learner.sketch_size)} rows, sketch_rows_ whole numbers in [0, that] and "
                                   "sketch_alpha_ > 0")
        check_state_sqnorm("sketch_", learner.sketch_, "the FD-SON sketch")
        for a, L in enumerate(rows.astype(np.int64)):
            S = learner.sketch_[a, :L]
            G = S @ S.T
            if np.max(np.abs(learner.sketch_gram_[a, :L, :L] - G), initial=0.0) > 1e-6 * (np.trace(G) + 1e-300):
                raise PersistenceError(f"state array 'sketch_gram_' must hold S S^T of class {a}'s {L} sketch_ rows")
            if L:
                check_state_spd(f"sketch_inv_[{a}]", learner.sketch_inv_[a, :L, :L], "(alpha I + S S^T)^-1")


class SquareCB(OneBitBanditLearner):
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

    The rule runs in the bandit core (:mod:`nolo.learners.bandit._stream`): its record
    :class:`SquareCBState` names the compiled ``act`` (inverse-gap weighting), ``update`` (the oracle step
    and the rate estimate) and ``adjust`` (the oracle's bias added to the core's scores W x), so
    :func:`nolo.learners.bandit.run_stream`, ``ClassificationBandit.run`` and ``act``/``learn`` play it
    like every other learner, bit for bit alike.  State: ``W_`` (K, d + 1), the weights on z = [x, 1] (the
    oracle's predictions are W z; column d is the bias, ``bias_``) plus the oracle's own arrays (``P_`` for ridge; ``G_``, ``S_``, ``N_``,
    ``n_`` for OGD), ``est_``/``hist_`` of the rate estimate and ``rate_estimates_``.

    Oracles (:mod:`nolo.learners.bandit.oracles`, both with a bias feature): ``"ridge"`` -- per-class
    ridge regression by recursive least squares (Sherman-Morrison, O(d nnz + d^2) per round on the
    played class; memory O(K d^2): K (d + 1)^2 float64, 49 MB for MNIST-784 with K = 10; more than
    ``max_bytes`` is refused); ``"ogd"`` -- per-class normalised adaptive OGD in the style of VW's default
    learner (O(nnz) per round, memory O(K d)); ``"fdson"`` -- per-class Sketched Online Newton with a
    Frequent Directions sketch of ``2 sketch_size`` rows (Luo, Agarwal, Cesa-Bianchi & Langford, NeurIPS 2016,
    Algorithms 1-2; :mod:`nolo.learners.bandit.sketch_oracle`): exactly the ridge oracle until a class has had
    2 ``sketch_size`` updates, then its Newton matrix restricted to the sketch's top directions; O(m d) per round
    amortised, memory K (2m (d + 1) + 8m^2) float64 (2.6 MB for MNIST-784, K = 10, m = 20).

    Feedback laws: the flip correction assumes class-conditional flips with known constant rates
    (:class:`nolo.noise.FlipChannel` with this learner's ``rho0``/``rho1``) and is unbiased only there;
    under :class:`nolo.noise.FlipMatrix` or :class:`nolo.noise.ContextFlips` it is biased, and
    ``run_stream``/``ClassificationBandit.run`` warn (:class:`nolo.exceptions.FeedbackLawWarning`).

    Parameters
    ----------
    n_classes : int >= 2
    oracle : "ridge" (default), "ogd" or "fdson"
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
    lam : ridge regularisation (P starts at I / lam), default 1; the starting alpha of "fdson"
    eta : the OGD oracle's learning rate, default 0.5 (VW's)
    max_bytes : largest ridge state accepted, default 2 GiB
    sketch_size : int >= 2, the "fdson" sketch size m (2m rows kept per class), default 20
    sketch_robust : bool, default True -- "fdson" adds half of each shrink's delta to alpha (Robust Frequent
        Directions, Luo et al., JMLR 2019); False is the paper's FD-SON with a fixed alpha
    seed : seed of the learner's generator (one uniform per played label)

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> import numpy as np
    >>> from nolo.learners.bandit import SquareCB, run_stream
    >>> X, y = load_digits(return_X_y=True); X = X / np.linalg.norm(X, axis=1, keepdims=True)
    >>> m = SquareCB(n_classes=10, rho0=0.2, rho1=0.2, seed=0)
    >>> res = run_stream(m, X, y, 20_000, rho0=0.2, rho1=0.2, seed=1)
    >>> bool(res.error_rate[-1] < 0.15), bool(np.mean(m.predict(X) == y) > 0.9)
    (True, True)
    """

    #: SquareCB works in float64 (the oracles' inverses and step sizes); not a parameter
    dtype = "float64"
    #: the one state array that grows (a row per rate block, :attr:`rate_estimates_`); the weights, the oracle's
    #: state and the rate estimate's arrays keep the shapes the parameters give them
    _growing_state = {"rate_estimates_": (0,)}
    _bias_column = True  # W_ is (K, d + 1): the weights on z = [x, 1]

    @property
    def learns_off_policy(self) -> bool:
        """True with known rates: the update regresses the bit on (context, label), whoever chose the label
        (:mod:`nolo.offpolicy.learn`)."""
        return not bool(self.estimate_rates)

    def __init__(self, n_classes=2, oracle="ridge", gamma_scale=10.0, gamma_exponent=0.5, rho0=0.0, rho1=0.0,
                 correction="target", estimate_rates=False, rate_every=5_000, pct_top=RO.DEFAULT_PCT_TOP,
                 rho_max=0.49, lam=1.0, eta=0.5, max_bytes=O.RIDGE_MAX_BYTES, sketch_size=20, sketch_robust=True,
                 seed=None):
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
        self.sketch_size = sketch_size
        self.sketch_robust = sketch_robust
        self.seed = seed

    @classmethod
    def _test_params(cls) -> list[dict]:
        """Both oracles, the three corrections, and online rate estimates (short re-estimate blocks)."""
        return [{"n_classes": 3, "rho0": 0.1, "rho1": 0.2},
                {"n_classes": 3, "oracle": "ogd", "correction": "gap", "rho0": 0.1, "rho1": 0.2},
                {"n_classes": 3, "correction": "none", "estimate_rates": True, "rate_every": 10},
                {"n_classes": 3, "oracle": "fdson", "sketch_size": 2, "rho0": 0.1, "rho1": 0.2}]

    # -- parameters and state ------------------------------------------------------------------
    def _scale_reference(self):
        """The oracle's prior: the ridge's and the sketch's ``lam`` (a label's first n rows outweigh it once
        n ||x||^2 >> lam), the OGD oracle's step (a step moves the weights by eta ||x||^2)."""
        if self.oracle == "ogd":
            return 1.0 / float(self.eta), f"the OGD oracle's step scale (1 / eta = {1.0 / float(self.eta):.3g})", False
        return float(self.lam), f"the {self.oracle} oracle's prior scale (lam = {float(self.lam):.3g})", False

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
        check_int(self.sketch_size, "sketch_size", low=2)
        if not isinstance(self.sketch_robust, (bool, np.bool_)):
            raise ParameterError(f"sketch_robust must be True or False, got {self.sketch_robust!r}")

    def initialize(self, n_features: int) -> "SquareCB":
        self._validate_params()
        if not isinstance(n_features, bool) and isinstance(n_features, (int, np.integer)) and n_features >= 1:
            K, m = int(self.n_classes), int(self.sketch_size)
            if self.oracle == "ridge":
                O.check_ridge_bytes(K, n_features, int(self.max_bytes))  # raises, state untouched
            check_state_bytes(O.oracle_bytes(self.oracle, K, n_features, m),
                              f"{type(self).__name__}(oracle={self.oracle!r}) keeps the weights and the oracle's state "
                              f"of every class: n_classes={K}, n_features={int(n_features)}"
                              + (f", sketch_size={m}" if self.oracle == "fdson" else ""),
                              hint="lower n_classes or the rows' dimension (feature hashing, "
                                   "nolo.kernels.NystroemFeatures)")
        return super().initialize(n_features)

    def _init_state(self, n_features: int) -> None:
        K = int(self.n_classes)
        self.W_ = np.zeros((K, n_features + 1), order="F")  # on [x, 1]: column d is the bias
        if self.oracle == "ridge":
            o = O.ridge_oracle(K, n_features, float(self.lam), int(self.max_bytes))
        elif self.oracle == "fdson":
            o = O.fdson_oracle(K, n_features, float(self.lam), int(self.sketch_size), bool(self.sketch_robust))
        else:
            o = O.ogd_oracle(K, n_features, float(self.eta))
        for name in _ORACLE_STATE[self.oracle]:
            setattr(self, name, getattr(o, name[:-1]))
        self.hist_ = np.zeros(RO.HIST_BINS)
        self.est_ = np.zeros(RO.EST_SIZE)
        self.est_[:2] = float(self.rho0), float(self.rho1)
        self.rate_estimates_ = np.zeros((0, 3))

    def _check_state(self) -> None:
        """A loaded rate estimate must be one the learner can hold: ``est_`` = (rho0_hat, rho1_hat, rounds in the
        block, sum of f / p, rounds counted) with the rates in [0, 1) summing below 1, the block count a whole
        number in [0, rate_every) (a larger one makes the stream's segment length negative), the counts and the
        histogram >= 0; the oracle's state as :func:`check_oracle_state` says."""
        super()._check_state()
        if not self.is_initialized:  # an unfitted learner holds no state
            return
        e = self.est_
        if not (0.0 <= e[0] < 1.0 and 0.0 <= e[1] < 1.0 and e[0] + e[1] < 1.0):
            raise PersistenceError(f"est_[:2] (the flip rates in use) must lie in [0, 1) with a sum < 1, got {e[:2]}")
        if not (e[2] == int(e[2]) and 0 <= e[2] < int(self.rate_every)):
            raise PersistenceError(f"est_[2] (rounds in the rate block) must be a whole number in [0, "
                                   f"rate_every={self.rate_every}), got {e[2]!r}")
        if not (e[4] >= 0 and np.all(self.hist_ >= 0)):
            raise PersistenceError("est_[4] and hist_ (counts of the rate estimate) must be >= 0")
        check_oracle_state(self, self.oracle)

    def _oracle_record(self):
        if self.oracle == "ridge":
            return O.RidgeOracle(self.P_)
        if self.oracle == "fdson":
            return O.FDSONOracle(self.sketch_, self.sketch_inv_, self.sketch_gram_, self.sketch_rows_,
                                 self.sketch_alpha_, int(self.sketch_size), bool(self.sketch_robust),
                                 O.fdson_buffer(int(self.sketch_size), self.W_.shape[1]))
        return O.OGDOracle(self.G_, self.S_, self.N_, self.n_, O.ogd_buffer(self.W_.shape[1]), float(self.eta))

    def _round_writes(self, idx, val, nnz, played):
        """What one round of :func:`squarecb_update` (FastCB's and LinUCB's too) writes with the ridge oracle: the
        played label's inverse and weights, and the rate estimate's arrays.  The other oracles keep per-feature
        state shared by the labels: None (the whole state is saved)."""
        if self.oracle != "ridge":
            return None
        return [(self.W_, played), (self.P_, played), (self.est_, Ellipsis), (self.hist_, Ellipsis)]

    def _state_record(self) -> SquareCBState:
        return SquareCBState(float(self.gamma_scale), float(self.gamma_exponent), _MODE[self.correction],
                             float(self.rho0), float(self.rho1), bool(self.estimate_rates), float(self.rate_every),
                             float(self.pct_top), float(self.rho_max), self.est_, self.hist_,
                             np.array([self.t_], dtype=np.int64), self._oracle_record())

    @property
    def bias_(self) -> np.ndarray:
        """The oracle's per-class bias (column d of ``W_``, a view)."""
        self._require_initialized("bias_")
        return self.W_[:, -1]

    @property
    def rates_(self) -> tuple[float, float]:
        """The flip rates in use: the known ones, or the current estimates."""
        self._require_initialized("rates_")
        if self.estimate_rates:
            return float(self.est_[0]), float(self.est_[1])
        return float(self.rho0), float(self.rho1)

    # -- hooks of the core: the rate trajectory --------------------------------------------------
    def _segment_length(self, remaining: int) -> int:
        """With rate estimates, a segment ends at the next re-estimate, so that its (round, rho0_hat, rho1_hat)
        row can be appended to ``rate_estimates_``."""
        if not self.estimate_rates:
            return remaining
        return min(remaining, int(self.rate_every) - int(self.est_[2]))

    def _note_refresh(self) -> None:
        if self.estimate_rates and self.est_[2] == 0.0 and self.t_ > 0:
            self.rate_estimates_ = np.vstack([self.rate_estimates_, [[self.t_, self.est_[0], self.est_[1]]]])

    def _after_segment(self, X, log_index, log_played, log_feedback) -> None:
        self._note_refresh()

    def _after_round(self, x, played: int, feedback: int) -> None:
        self._note_refresh()

    def _run_extras(self) -> dict:
        return {"rate_estimates": len(self.rate_estimates_)} if self.estimate_rates else {}

    def _finish_extras(self, extra: dict, seconds: float) -> dict:
        """``extra["rate_estimates"]``: the (round, rho0_hat, rho1_hat) rows of this run (with rate estimates)."""
        if "rate_estimates" in extra:
            n = int(extra["rate_estimates"])
            extra["rate_estimates"] = self.rate_estimates_[len(self.rate_estimates_) - n:].copy()
        return extra

    # -- prediction ----------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """The oracle's predicted rewards r_hat(x, a) = W_a . [x, 1], shape (n, K), with the stream's arithmetic
        (on the scale the oracle fits: see ``correction``)."""
        self._require_initialized("decision_function")
        rows, n = self._rows(X)
        R = np.empty((n, int(self.n_classes)))
        decision_rows(self.W_.T, rows, R)
        return R

    def predict(self, X) -> np.ndarray:
        """Greedy labels argmax_a r_hat(x, a) (ties to the smallest label); never changes state."""
        self._require_initialized()
        return np.argmax(self.decision_function(X), axis=1).astype(np.int64)
