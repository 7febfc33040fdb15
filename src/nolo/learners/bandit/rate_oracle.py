"""Flip rates read off a regression oracle's own predictions and the played labels' propensities (no neural network).

With class-conditional flips (AM section 3: rho0 = P(f_rho = 1 | f = 0), rho1 = P(f_rho = 0 | f = 1))
the regression function of the raw bit is affine in the clean one (the identity behind AM Theorem 5):

    E[f_rho | x, a] = rho0 + kappa P(y = a | x),   kappa = 1 - rho0 - rho1,

so it ranges over [rho0, 1 - rho1].  Two read-outs, both online and O(1) per round:

* 1 - rho1: on examples the model is sure about, the top class's fitted value is 1 - rho1 -- NREst's
  "perfect examples" (AM Algorithm 3 with its percentile rule), read here from the oracle that
  :class:`nolo.learners.bandit.SquareCB` fits anyway: 1 - rho1_hat = the ``pct_top``-th percentile
  (default the median) of the top predictions of the last block of rounds (a histogram, cleared after
  each block: the block's model is the most recent one);
* rho0: summing the identity over the K labels, sum_a E[f_rho | x, a] = (K - 1) rho0 + 1 - rho1 for
  EVERY x, and f_rho / p(a_t) (p = the probability the learner played a_t with) is an unbiased estimate
  of that sum whatever the policy (inverse propensity): rho0_hat = (mean_t f_rho,t / p_t(a_t) -
  (1 - rho1_hat)) / (K - 1), the mean over all rounds so far.

Why not rho0 from the other classes' predictions (the "robust min" of NREst)?  A per-class regressor
trained on the rounds its class was played sees mostly that class's examples and extrapolates on
the rest: on digits their median was 0.36 for a true rho0 of 0 (docs/squarecb.md) -- while the top
predictions' median was within 0.01 of 1 - rho1 in every setting.

Both estimates are clipped to [0, rho_max] as RCINE clips NREst's (so kappa_hat >= 1 - 2 rho_max).
Histogram: HIST_BINS bins over [HIST_LO, HIST_HI) (values outside go to the end bins), read at the
bin centre: resolution 0.0025.

:class:`OracleRates` (and :func:`oracle_noise_rates`) applies the same read-out to a logged data set (x, played, noisy bit,
and the propensities when known) -- the oracle counterpart of :class:`nolo.noise_rates.NREst`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from nolo._config import Configurable
from nolo._jit import njit
from nolo._validation import check_array, check_choice, check_int, check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.noise_rates.methods import register_method

__all__ = ["HIST_BINS", "HIST_LO", "HIST_HI", "record_round", "refresh_rates", "hist_percentile",
           "oracle_noise_rates", "OracleRates", "DEFAULT_PCT_TOP", "LOGGED_PCT_TOP"]

HIST_BINS = 600
HIST_LO, HIST_HI = -0.25, 1.25
#: percentile of the top predictions read as 1 - rho1 (the median: on scikit-learn digits and SynSep within 0.01
#: of 1 - rho1 in every AM setting, docs/squarecb.md)
DEFAULT_PCT_TOP = 50.0
#: the same percentile for a logged data set (:func:`oracle_noise_rates`): a model fit once on a log of a
#: spread-out policy is less sharp than SquareCB's online one, whose data concentrate on the top label; on
#: digits with a uniform logging policy and (rho0, rho1) = (0.1, 0.2) the 50th/75th/90th/95th percentiles read
#: rho1 as 0.43/0.35/0.28/0.24
LOGGED_PCT_TOP = 95.0
# est (float64 array): 0 rho0_hat, 1 rho1_hat, 2 rounds in the current block, 3 sum of f / p(a), 4 rounds counted
EST_SIZE = 5


@njit(cache=True, nogil=True, inline="always")
def _bin(v):
    b = int((v - HIST_LO) * (HIST_BINS / (HIST_HI - HIST_LO)))
    if b < 0 or v != v:
        b = 0
    if b >= HIST_BINS:
        b = HIST_BINS - 1
    return b


@njit(cache=True, nogil=True)
def record_round(hist, est, top, fb, p_played):
    """Add one round: the top prediction ``top`` to the histogram, f / p(a) to the propensity sum."""
    hist[_bin(top)] += 1.0
    est[3] += fb / p_played
    est[4] += 1.0


@njit(cache=True, nogil=True)
def hist_percentile(h, pct):
    """The ``pct``-th percentile of the histogram ``h`` (bin centre), NaN when it is empty."""
    tot = 0.0
    for b in range(h.shape[0]):
        tot += h[b]
    if tot <= 0.0:
        return np.nan
    need = pct / 100.0 * tot
    acc = 0.0
    width = (HIST_HI - HIST_LO) / HIST_BINS
    for b in range(h.shape[0]):
        acc += h[b]
        if acc >= need:
            return HIST_LO + (b + 0.5) * width
    return HIST_HI - 0.5 * width


@njit(cache=True, nogil=True)
def refresh_rates(hist, est, pct_top, rho_max, K):
    """est[0], est[1] = (rho0_hat, rho1_hat), clipped to [0, rho_max]; clears the histogram (see the module doc)."""
    top = hist_percentile(hist, pct_top)
    if top == top and est[4] > 0.0:
        r1 = min(max(1.0 - top, 0.0), rho_max)
        r0 = (est[3] / est[4] - (1.0 - r1)) / (K - 1)
        est[0] = min(max(r0, 0.0), rho_max)
        est[1] = r1
    hist[:] = 0.0


class OracleRates(Configurable):
    """Flip rates (rho0, rho1) of a logged bandit data set read off a per-class regression oracle (no network).

    The logged-data counterpart of SquareCB's online estimate (module docstring; docs/squarecb.md) and of
    :class:`nolo.noise_rates.NREst`, offered as ``nolo estimate-noise --method oracle``.  ``fit`` runs
    ``passes`` passes of the oracle (``"ridge"`` or ``"ogd"``, :mod:`nolo.learners.bandit.oracles`)
    of the raw bit on (x_n, played_n) in log order, then reads

    * 1 - rho1 as the ``pct_top``-th percentile (default 95, ``LOGGED_PCT_TOP``) of the top predictions
      max_a r_hat(x_n, a) over the logged x (the "perfect examples" of AM Theorem 5 on the oracle's model);
    * rho0, with ``propensity`` (the probability the logger played each logged label), from the
      inverse-propensity identity sum_a E[f_rho | x, a] = (K - 1) rho0 + 1 - rho1 (``rule_ = "propensity"``);
      without it, the ``pct_rest``-th percentile of the other labels' predictions (``rule_ = "rest-percentile"``:
      biased when the log explored little, the per-label regressors extrapolate there).

    Both are clipped to [0, ``rho_max``].  A log that cannot identify the rates is refused with a
    ParameterError naming why: fewer than 10 rounds, a single played label, or feedback that is all 0 or
    all 1.  Deterministic (no randomness: ``random_state`` is accepted for the CLI's half-sampling
    interval and ignored).

    Parameters
    ----------
    oracle : "ridge" (default) or "ogd"
    lam : ridge regularisation, > 0, default 1
    eta : the OGD oracle's learning rate, > 0, default 0.5
    passes : passes over the log, >= 1, default 1
    pct_top : percentile of the top predictions read as 1 - rho1, in (0, 100], default 95
    pct_rest : percentile of the other labels' predictions read as rho0 (no propensities), default 50
    rho_max : cap of the estimates, in [0, 0.5), default 0.49
    random_state : ignored (the fit is deterministic)

    Attributes
    ----------
    rho0_, rho1_ : the estimates; rule_ : "propensity" or "rest-percentile"; n_classes_; W_ (d + 1, K): the
    oracle's weights on [x, 1]; n_epochs_ (= passes) and fit_seconds_.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from nolo.learners.bandit.rate_oracle import OracleRates
    >>> X, y = load_digits(return_X_y=True); X = X / np.linalg.norm(X, axis=1, keepdims=True)
    >>> g = np.random.default_rng(0); idx = g.integers(0, len(y), 20000); played = g.integers(0, 10, 20000)
    >>> f = (played == y[idx]).astype(int); u = g.random(20000)
    >>> f_rho = np.where(f == 1, (u >= 0.2).astype(int), (u < 0.1).astype(int))  # rho0 = 0.1, rho1 = 0.2
    >>> est = OracleRates().fit(X[idx], played, f_rho, 10, propensity=np.full(20000, 0.1))
    >>> round(est.rho0_, 3), round(est.rho1_, 3), est.rule_
    (0.105, 0.239, 'propensity')
    """

    def __init__(self, oracle="ridge", lam=1.0, eta=0.5, passes=1, pct_top=LOGGED_PCT_TOP, pct_rest=50.0,
                 rho_max=0.49, random_state=None):
        self.oracle = oracle
        self.lam = lam
        self.eta = eta
        self.passes = passes
        self.pct_top = pct_top
        self.pct_rest = pct_rest
        self.rho_max = rho_max
        self.random_state = random_state

    @property
    def rule(self) -> str:
        """The read-out used for rho0 (``rule_``; :func:`nolo.noise_rates.diagnose` reads ``rule``)."""
        return getattr(self, "rule_", "propensity")

    def _validate_params(self) -> None:
        from nolo.learners.bandit import oracles as O

        check_choice(self.oracle, "oracle", O.ORACLES)
        check_int(self.passes, "passes", low=1)
        check_scalar(self.pct_top, "pct_top", low=0.0, high=100.0, low_inclusive=False)
        check_scalar(self.pct_rest, "pct_rest", low=0.0, high=100.0, low_inclusive=False)
        check_scalar(self.rho_max, "rho_max", low=0.0, high=0.5, high_inclusive=False)
        check_scalar(self.lam, "lam", low=0.0, low_inclusive=False)
        check_scalar(self.eta, "eta", low=0.0, low_inclusive=False)

    @staticmethod
    def _rows(X):
        from nolo.learners.bandit._stream import csr_rows, dense_rows

        if sp.issparse(X):
            from nolo.learners.bandit.simulator import canonical_csr

            X = canonical_csr(X, np.float64)
            if not np.all(np.isfinite(X.data)):
                raise ParameterError("X must contain only finite values (no NaN or inf)")
            return X, csr_rows(X)
        X = np.ascontiguousarray(check_array(X, "X", ndim=2), dtype=np.float64)
        return X, dense_rows(X)

    def fit(self, X, played, feedback, n_classes: int | None = None, propensity=None) -> "OracleRates":
        """Fit the oracle on the log (X (n, d), played (n,) labels, feedback (n,) bits, optional propensity (n,))
        and read the rates; sets ``rho0_``, ``rho1_``, ``rule_``."""
        import time

        from nolo.learners.bandit import oracles as O

        self._validate_params()
        X, src = self._rows(X)
        n, d = X.shape
        played = np.asarray(played)
        feedback = np.asarray(feedback)
        if played.shape != (n,) or feedback.shape != (n,):
            raise ParameterError(f"played and feedback must have shape ({n},), got {played.shape} and {feedback.shape}")
        if n < 10:
            raise ParameterError(f"the oracle rate estimate needs at least 10 logged rounds, got {n}")
        if not np.issubdtype(played.dtype, np.integer) or played.min() < 0:
            raise ParameterError("played must hold non-negative integer labels")
        if not np.all((feedback == 0) | (feedback == 1)):
            raise ParameterError("feedback must hold 0/1 bits")
        K = int(played.max()) + 1 if n_classes is None else check_int(n_classes, "n_classes", low=2)
        if played.max() >= K:
            raise ParameterError(f"played labels must be < n_classes={K}")
        if propensity is not None:
            propensity = np.asarray(propensity, dtype=np.float64)
            if propensity.shape != (n,) or not np.all((propensity > 0) & (propensity <= 1)):
                raise ParameterError(f"propensity must hold ({n},) probabilities in (0, 1]")
        if np.unique(played).size < 2:
            raise ParameterError(f"unusable log for the oracle rate estimate: every round played label {int(played[0])}; "
                                 "the rates need plays of at least two labels (a log with exploration)")
        if feedback.min() == feedback.max():
            raise ParameterError(f"unusable log for the oracle rate estimate: every feedback bit is {int(feedback[0])}, "
                                 "so the flip rates are not identified (no round tells a right play from a wrong one)")
        t0 = time.perf_counter()
        if self.oracle == "ridge":
            st = O.ridge_oracle(K, d, float(self.lam))
        else:
            st = O.ogd_oracle(K, d, float(self.eta))
        Wt = np.zeros((d + 1, K))  # weights on [x, 1]
        played = played.astype(np.int64)
        target = feedback.astype(np.float64)
        for _ in range(int(self.passes)):
            if not O.fit_rows(st, Wt, src, played, target):
                raise NumericalError("oracle rate estimate: a non-finite oracle update")
        self.W_, self.n_classes_ = Wt, K
        R = self._predict(src, n)
        top = R.max(axis=1)
        hist = np.zeros(HIST_BINS)
        for v in top:
            hist[_bin(float(v))] += 1.0
        rho_max = float(self.rho_max)
        r1 = min(max(1.0 - float(hist_percentile(hist, float(self.pct_top))), 0.0), rho_max)
        if propensity is not None:
            r0 = (float(np.mean(feedback / propensity)) - (1.0 - r1)) / (K - 1)
            self.rule_ = "propensity"
        else:
            rest = R.copy()
            rest[np.arange(n), R.argmax(axis=1)] = np.nan
            r0 = float(np.nanpercentile(rest, float(self.pct_rest)))
            self.rule_ = "rest-percentile"
        self.rho0_, self.rho1_ = float(min(max(r0, 0.0), rho_max)), float(r1)
        self.n_rounds_, self.n_epochs_, self.identified_ = n, int(self.passes), True
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _predict(self, src, n) -> np.ndarray:
        from nolo.learners.bandit._predict import decision_rows

        R = np.empty((n, self.n_classes_))
        decision_rows(self.W_, src, R)
        return R

    def counterfactual_q(self, X) -> np.ndarray:
        """The oracle's fitted E[feedback | x, played j] for every row and label j, shape (n, K)."""
        if not hasattr(self, "rho0_"):
            raise ParameterError("OracleRates is not fitted: call fit first")
        X, src = self._rows(X)
        if X.shape[1] != self.W_.shape[0] - 1:
            raise ParameterError(f"X must have {self.W_.shape[0] - 1} features per row, got {X.shape[1]}")
        return self._predict(src, X.shape[0])


def oracle_noise_rates(X, played, feedback, n_classes: int | None = None, *, propensity=None, oracle: str = "ridge",
                       lam: float = 1.0, eta: float = 0.5, passes: int = 1, pct_top: float = LOGGED_PCT_TOP,
                       pct_rest: float = 50.0, rho_max: float = 0.49) -> dict:
    """(rho0_hat, rho1_hat) of a logged bandit data set from a per-class regression oracle: :class:`OracleRates`
    as a function.  Returns ``{"rho0", "rho1", "n", "rule"}``.

    Examples
    --------
    Four labels, one-hot contexts, a uniform logger (propensity 1/4), (rho0, rho1) = (0.2, 0.1):

    >>> import numpy as np
    >>> from nolo.learners.bandit.rate_oracle import oracle_noise_rates
    >>> g = np.random.default_rng(1); y = g.integers(0, 4, 8000); X = np.eye(4)[y]
    >>> played = g.integers(0, 4, 8000); u = g.random(8000)
    >>> fb = np.where(played == y, u >= 0.1, u < 0.2).astype(int)
    >>> est = oracle_noise_rates(X, played, fb, 4, propensity=np.full(8000, 0.25))
    >>> round(est["rho0"], 2), round(est["rho1"], 2), est["rule"]
    (0.21, 0.09, 'propensity')
    """
    est = OracleRates(oracle=oracle, lam=lam, eta=eta, passes=passes, pct_top=pct_top, pct_rest=pct_rest,
                      rho_max=rho_max).fit(X, played, feedback, n_classes, propensity=propensity)
    return {"rho0": est.rho0_, "rho1": est.rho1_, "n": est.n_rounds_, "rule": est.rule_}


def _oracle_method(random_state=None, **network_options) -> OracleRates:
    """``nolo estimate-noise --method oracle``: OracleRates with its defaults; the network options (hidden sizes,
    epochs, percentile, patience) do not apply to it."""
    return OracleRates(random_state=random_state)


register_method(
    "oracle",
    "per-class ridge regression of the raw bit, no network (SquareCB's own estimate): 1 - rho1 from its confident "
    "top predictions, rho0 from the logged propensities (a 'propensity' column) or else the other labels' "
    "predictions; the network options do not apply",
    _oracle_method,
)
