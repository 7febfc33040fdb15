"""LinUCB with disjoint linear models (Li, Chu, Langford & Schapire, WWW 2010, Algorithm 1), flip-aware: optimism in
the face of the ridge oracle's own uncertainty instead of SquareCB's fixed exploration schedule.

:class:`LinUCB` is :class:`~nolo.learners.bandit.SquareCB` on its ridge oracle (same per-class recursive least
squares on z = [x, 1], same flip-aware targets, same compiled update and persistence; or the FD-SON oracle, whose
sketch gives the widths for large d) with another rule for the played label: each round it plays

    a_t = argmax_a  r_hat(x, a) + beta * sigma * sqrt(z^T P_a z),    P_a = (lam I + Z_a^T Z_a)^{-1},

the greedy prediction plus a confidence width (Li et al. 2010, Algorithm 1, line 8, with alpha = beta * sigma).
Its record :class:`LinUCBState` names ``adjust`` = :func:`linucb_adjust` (the oracle's bias added to the core's
scores, and each class's width from the row, into the record's scratch ``width``) and ``act`` =
:func:`linucb_act` (the greedy label and the optimistic one); ``update`` is SquareCB's.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import overload

from nolo._jit import njit
from nolo._validation import check_choice, check_scalar
from nolo.exceptions import ParameterError
from nolo.learners.bandit import oracles as O
from nolo.learners.bandit import squarecb as S
from nolo.learners.bandit._simd import argmax_padded
from nolo.learners.bandit.sketch_oracle import sketch_solve

__all__ = ["LinUCB", "LinUCBState", "fdson_width2", "noise_scale", "LINUCB_CORRECTIONS", "LINUCB_ORACLES"]

#: the flip corrections LinUCB offers (SquareCB's "gap" rescales the inverse-gap weight, which LinUCB has not)
LINUCB_CORRECTIONS = ("none", "target")
#: the oracles that keep the inverse the widths need (the OGD oracle keeps none)
LINUCB_ORACLES = ("ridge", "fdson")


@njit(cache=True, nogil=True, inline="always")
def fdson_width2(o, a, idx, val, lo, hi):
    """z^T A_a^{-1} z for the FD-SON oracle's A_a = alpha_a I + S_a^T S_a (Woodbury: A^{-1} = (I - S^T M S) / alpha,
    M = (alpha I + S S^T)^{-1} on the L_a rows in use): (z.z - b^T M b) / alpha_a with b = S_a z
    (:func:`~nolo.learners.bandit.sketch_oracle.sketch_solve`, in the oracle's own scratch, free before its step).
    O(L nnz + L^2) (Kuzborskij, Cella & Cesa-Bianchi, AISTATS 2019: OFUL's confidence widths from a Frequent
    Directions sketch).  Exactly the ridge oracle's width until the class's sketch first shrinks."""
    zz, bMb = sketch_solve(o, a, idx, val, lo, hi, o.buf[0], o.buf[1])
    return (zz - bMb) / o.sketch_alpha[a]


def oracle_width2(o, a, idx, val, lo, hi, buf):
    """z^T A_a^{-1} z of class ``a`` under the oracle record ``o`` (compiled code only; dispatches on its type): the
    ridge oracle's z^T P_a z (:func:`~nolo.learners.bandit.oracles.ridge_pz`, P_a z in ``buf``) or the sketch's."""
    raise NotImplementedError("compiled code only")


@overload(oracle_width2, inline="always")
def _ov_width2(o, a, idx, val, lo, hi, buf):
    kind = getattr(o, "instance_class", None)
    if kind is O.RidgeOracle:
        return lambda o, a, idx, val, lo, hi, buf: O.ridge_pz(o.P[a], idx, val, lo, hi, buf)
    if kind is O.FDSONOracle:
        return lambda o, a, idx, val, lo, hi, buf: fdson_width2(o, a, idx, val, lo, hi)
    return None


@njit(cache=True, nogil=True, inline="always")
def noise_scale(state):
    """sigma, the half-range of the fitted target: 1 / (2 kappa) for AM's h(f) = (f - rho0) / kappa (correction
    "target"), 1/2 for the raw bit ("none"); LinUCB has no other correction, so any other ``mode`` raises
    ValueError."""
    if state.mode == S.MODE_TARGET:
        return 0.5 / (1.0 - state.rho0 - state.rho1)
    if state.mode == S.MODE_NONE:
        return 0.5
    raise ValueError("unknown LinUCB correction mode: must be MODE_NONE or MODE_TARGET (nolo.learners.bandit.squarecb)")


# not inline="always": numba 0.68 then dropped this function's writes to ``state.width`` inside the compiled stream
# loop (``act`` read zeros; the per-round path was right) -- as it did FD-SON's writes to its sketch (sketch_oracle.py).
# tests/learners/bandit/test_linucb.py checks the stream against the per-round API and a NumPy reference.
@njit(cache=True, nogil=True)
def linucb_adjust(state, Wt, idx, val, lo, hi, s, K):
    """The core's ``adjust``: the oracle's bias added to the scores (:func:`~nolo.learners.bandit.squarecb.add_bias`),
    and ``state.width[k]`` = beta sigma sqrt(z^T P_k z) for every class k (O(K nnz d))."""
    S.add_bias(state, Wt, idx, val, lo, hi, s, K)
    c = state.beta * noise_scale(state)
    for k in range(K):
        w2 = oracle_width2(state.oracle, k, idx, val, lo, hi, state.zbuf)
        state.width[k] = c * math.sqrt(w2) if w2 > 0.0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def linucb_act(state, sp, K, rng):
    """(greedy label, played label): argmax of the predictions, and of the predictions plus the widths (ties to the
    smallest label).  No random draw."""
    ahat = argmax_padded(sp, K)
    played = ahat
    best = sp[ahat] + state.width[ahat]
    for k in range(K):
        u = sp[k] + state.width[k]
        if u > best or (u == best and k < played):
            best = u
            played = k
    return ahat, played


@njit(cache=True, nogil=True, inline="always")
def linucb_probs(state, sp, K, out):
    """:func:`linucb_act`'s distribution: it draws nothing, so all mass on the optimistic label."""
    _, played = linucb_act(state, sp, K, None)
    for k in range(K):
        out[k] = 0.0
    out[played] = 1.0


class LinUCBState(NamedTuple("LinUCBFields", [*S.SquareCBState.__annotations__.items(), ("beta", float),
                                                ("width", np.ndarray), ("zbuf", np.ndarray)])):
    """LinUCB's record: :class:`~nolo.learners.bandit.squarecb.SquareCBState`'s fields (its oracle the ridge
    oracle's or the FD-SON oracle's), then ``beta``, the scratch ``width`` (K,) that ``adjust`` fills and ``act`` reads,
    and ``zbuf`` (d + 1,), the scratch of P_k z (the FD-SON oracle has its own)."""

    __slots__ = ()
    act = linucb_act
    probs = linucb_probs
    update = S.squarecb_update
    adjust = linucb_adjust


class LinUCB(S.SquareCB):
    """LinUCB with disjoint linear models: Li, Chu, Langford & Schapire, "A Contextual-Bandit Approach to
    Personalized News Article Recommendation", WWW 2010, Algorithm 1, on SquareCB's ridge oracle with flip-aware
    targets.

    Each round, for every class a, the ridge oracle's prediction r_hat(x, a) = theta_a . z (z = [x, 1]) and its
    width w_a = sqrt(z^T P_a z), P_a = (lam I + sum_s z_s z_s^T)^{-1} over the rounds s where a was played; LinUCB
    plays argmax_a r_hat(x, a) + beta sigma w_a (Algorithm 1, line 8: alpha = beta sigma) and updates the played
    class's ridge regression on the (corrected) feedback bit.  Exploration is where the oracle is uncertain, and
    ends there when the data pin the prediction down; SquareCB and FastCB explore by a fixed schedule g_t of the
    predicted gaps instead.

    Flipped feedback (AM section 3; see :class:`~nolo.learners.bandit.SquareCB` for the affine-flip argument):
    ``correction="target"`` (default) fits AM's unbiased h(f_rho) = (f_rho - rho0) / kappa, whose range is
    1 / kappa, so the width's scale sigma is 1 / (2 kappa), the half-range of the target (a bounded target is
    sigma-sub-Gaussian with sigma its half-range): under heavy noise the learner explores longer, as it must.
    ``"none"`` fits the raw bit with sigma = 1/2.  Since the raw bit's gaps are kappa times the clean ones and its
    sigma kappa times h's, the two rank the labels alike but for the ridge prior (lam acts on the target's scale).

    Where nolo differs from the paper (say so when citing): the paper's alpha = 1 + sqrt(ln(2 / delta) / 2) is
    Theorem 1's confidence level for rewards in [0, 1]; nolo writes it as beta sigma so that one beta serves every
    noise level, and tunes beta and lam (below).  The oracle has a bias feature (the paper's features include a
    constant).

    Tuned on scikit-learn digits at 10^4 rounds on stream seeds 100-119 (not the vs-peers experiment's 0-4), AM's
    noise settings (docs/squarecb.md#linucb), against FastCB's 0.095 / 0.202 / 0.226 / 0.500 under (0, 0) /
    (0.25, 0.25) / (0.2, 0.4) / (0.4, 0.4): lam = 1, beta = 2 (the defaults) err 0.067 / 0.156 / 0.208 / 0.485;
    under the heaviest noise a stronger prior wins, lam = 3, beta = 2: 0.455 (lam = 3 costs 0.035 noise-free).
    At 10^5 rounds FastCB explores less once confident and wins noise-free (digits: 0.019 vs 0.026).

    Oracles: ``"ridge"`` (default) -- the widths read every class's P_a: O(K nnz d) per round on top of the ridge
    step, about K times the ridge oracle's; memory K (d + 1)^2 float64 (refused above ``max_bytes``).  ``"fdson"`` --
    for large d: A_a = alpha_a I + S_a^T S_a of the Frequent Directions sketch (:mod:`.sketch_oracle`) in place of
    lam I + Z_a^T Z_a, its width (z.z - b^T M_a b) / alpha_a with b = S_a z by Woodbury, O(K m (nnz + m)) per round
    (sketched OFUL: Kuzborskij, Cella & Cesa-Bianchi, "Efficient Linear Bandits through Matrix Sketching", AISTATS
    2019); equal to the ridge oracle's until a class's sketch first shrinks (after 2 ``sketch_size`` updates).  The
    widths are not kept (scratch).

    Feedback laws: the flip correction assumes class-conditional flips with known constant rates
    (:class:`nolo.noise.FlipChannel` with this learner's ``rho0``/``rho1``) and is unbiased only there;
    under :class:`nolo.noise.FlipMatrix` or :class:`nolo.noise.ContextFlips` it is biased, and
    ``run_stream``/``ClassificationBandit.run`` warn (:class:`nolo.exceptions.FeedbackLawWarning`).

    Parameters
    ----------
    n_classes : int >= 2
    oracle : "ridge" (default) or "fdson" (see above; "ogd" keeps no inverse and is refused)
    beta : float >= 0, default 2 -- the width's multiple (0: greedy on the ridge oracle)
    lam : float > 0, default 1 -- ridge regularisation (P_a starts at I / lam); 3 under flips with kappa <= 0.2
    rho0, rho1 : known flip rates (rho0 + rho1 < 1), default 0
    correction : "target" (default) or "none" (see above)
    max_bytes : largest ridge state accepted, default 2 GiB
    sketch_size, sketch_robust : the "fdson" oracle's sketch size m (2m rows per class), default 20, and its robust
        shrink, default True (as :class:`~nolo.learners.bandit.SquareCB`)
    seed : seed of the learner's generator (LinUCB draws nothing; kept for the API)

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.bandit import LinUCB
    >>> m = LinUCB(n_classes=3, beta=1.0, lam=1.0).initialize(2)
    >>> x = np.array([1.0, 0.0])
    >>> m.act(x)  # all predictions 0, all widths sigma sqrt(z^T z / lam) = 0.5 sqrt(2): the smallest label
    0
    >>> _ = m.learn(x, 0, 0)  # label 0 was wrong: its prediction stays 0, its width shrinks to 0.5 sqrt(2/3)
    >>> m.act(x)
    1
    >>> from sklearn.datasets import load_digits
    >>> from nolo.learners.bandit import run_stream
    >>> X, y = load_digits(return_X_y=True); X = X / np.linalg.norm(X, axis=1, keepdims=True)
    >>> m = LinUCB(n_classes=10, rho0=0.2, rho1=0.2, seed=0)
    >>> res = run_stream(m, X, y, 20_000, rho0=0.2, rho1=0.2, seed=1)
    >>> bool(res.error_rate[-1] < 0.15), bool(np.mean(m.predict(X) == y) > 0.9)
    (True, True)
    """

    # SquareCB's settings that LinUCB fixes (class attributes, not parameters): no schedule, known rates (the online
    # rate estimate needs the played label's probability, which an argmax rule has not)
    gamma_scale = 0.0
    gamma_exponent = 0.0
    estimate_rates = False
    rate_every = 5_000
    pct_top = S.RO.DEFAULT_PCT_TOP
    rho_max = 0.49
    eta = 0.5

    def __init__(self, n_classes=2, oracle="ridge", beta=2.0, lam=1.0, rho0=0.0, rho1=0.0, correction="target",
                 max_bytes=S.O.RIDGE_MAX_BYTES, sketch_size=20, sketch_robust=True, seed=None):
        self.n_classes = n_classes
        self.oracle = oracle
        self.beta = beta
        self.lam = lam
        self.rho0 = rho0
        self.rho1 = rho1
        self.correction = correction
        self.max_bytes = max_bytes
        self.sketch_size = sketch_size
        self.sketch_robust = sketch_robust
        self.seed = seed

    @classmethod
    def _test_params(cls) -> list[dict]:
        """The flip-aware target, the raw bit, and the sketched widths."""
        return [{"n_classes": 3, "rho0": 0.1, "rho1": 0.2},
                {"n_classes": 3, "correction": "none", "beta": 1.0, "lam": 1.0},
                {"n_classes": 3, "oracle": "fdson", "sketch_size": 2, "rho0": 0.1, "rho1": 0.2}]

    def _scale_reference(self):
        """SquareCB's, two-sided: far larger rows leave the prior, the unit bias feature and the widths out of
        proportion (measured: twice the error on unit-norm digits scaled by 1e6)."""
        ref, what, _ = super()._scale_reference()
        return ref, what, True

    def _validate_params(self) -> None:
        check_choice(self.correction, "correction", LINUCB_CORRECTIONS)
        if self.oracle == "ogd":
            raise ParameterError("LinUCB's widths need the oracle's inverse: oracle must be 'ridge' or 'fdson', got "
                                 "'ogd' (which keeps none)")
        check_choice(self.oracle, "oracle", LINUCB_ORACLES)
        super()._validate_params()
        check_scalar(self.beta, "beta", low=0.0)

    def _state_record(self) -> LinUCBState:
        return LinUCBState(*super()._state_record(), float(self.beta), np.zeros(int(self.n_classes)),
                           np.zeros(self.W_.shape[1]))
