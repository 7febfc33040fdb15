"""RCINE: RCNBF with Implicit Noise-rate Estimation (AM Algorithm 2)."""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from nolo._jit import njit
from nolo._validation import check_int, check_scalar
from nolo.exceptions import ParameterError, PersistenceError
from nolo.learners.bandit._linear import ExploringBanditLearner
from nolo.learners.bandit.rcnbf import ExpHState, exp_h_record
from nolo.learners.base import check_state_sqnorm
from nolo.random import spawn

__all__ = ["RCINE", "DEFAULT_ESTIMATOR_PARAMS"]

#: RCINE's NREst when none is given: a small MLP, 5 epochs for the first fit, warm-started from the previous
#: block (and ``warm_refit_epochs`` epochs) afterwards; NREst's other defaults apply (``engine="numpy"``,
#: float32, one BLAS thread).
DEFAULT_ESTIMATOR_PARAMS = {"hidden_layer_sizes": (32,), "max_iter": 5, "warm_start": True}
#: upper bound of ``warm_refit_epochs`` (each epoch is a pass over the reservoir; 2**63 would never end)
MAX_WARM_REFIT_EPOCHS = 10_000


@njit(cache=True, nogil=True)
def reservoir_slot(count, capacity, rng):
    """Algorithm R: slot of the item number ``count`` (0-based) in a reservoir of ``capacity``, or -1."""
    if count < capacity:
        return count
    j = int(rng.random() * (count + 1))
    return j if j < capacity else -1


@njit(cache=True, nogil=True)
def reservoir_replay(log_index, log_played, log_feedback, count0, capacity, rng, slot_index, slot_played,
                     slot_feedback, touched):
    """Feed logged rounds through Algorithm R; record the surviving example index per touched slot."""
    for r in range(log_index.shape[0]):
        slot = reservoir_slot(count0 + r, capacity, rng)
        if slot >= 0:
            slot_index[slot] = log_index[r]
            slot_played[slot] = log_played[r]
            slot_feedback[slot] = log_feedback[r]
            touched[slot] = True


@njit(cache=True, nogil=True)
def copy_csr_rows(indptr, indices, data, rows, slots, out):
    """out[slots[k]] = dense row rows[k] of the canonical CSR matrix (indptr, indices, data), in place."""
    for k in range(rows.shape[0]):
        s = slots[k]
        r = rows[k]
        out[s, :] = 0.0
        for j in range(indptr[r], indptr[r + 1]):
            out[s, indices[j]] = data[j]


@njit(cache=True, nogil=True)
def copy_dense_rows(X, rows, slots, out):
    """out[slots[k]] = X[rows[k]], in place."""
    for k in range(rows.shape[0]):
        out[slots[k], :] = X[rows[k], :]


class RCINE(ExploringBanditLearner):
    """RCINE, AM Algorithm 2: RCNBF (AM eq. 5) whose rates are re-estimated by NREst every N_s rounds.

    Starts from rho0_hat = rho1_hat = 0 (so it begins as Banditron).  Every round's
    (x, played, feedback) enters the block log S; after every ``refit_every`` (N_s)
    rounds, (rho0_hat, rho1_hat) = NREst(S) (AM Algorithm 3,
    :class:`nolo.noise_rates.NREst`) and S is cleared; W is never reset.

    Bounded cost (our additions, documented): S is a uniform reservoir sample
    (Algorithm R, its own generator) of at most ``reservoir_size`` rounds of the
    block, so memory is O(reservoir_size * d) and each refit costs a fixed amount;
    with ``estimator.warm_start`` the network starts from the previous block's
    weights and, after the first fit, trains only ``warm_refit_epochs`` epochs
    (default 2; ``None`` keeps the estimator's ``max_iter``): an incremental refit.
    Default estimator: ``NREst(hidden_layer_sizes=(32,), max_iter=5, warm_start=True)``
    (``DEFAULT_ESTIMATOR_PARAMS``), reservoir 2,000 rounds -- cheap refits: on 784-d MNIST here
    about 0.03 s for the first and 0.013-0.015 s for later ones with NREst's default NumPy engine
    (0.04 s per later refit with scikit-learn's ``partial_fit`` loop, which computes the same
    weights).  The surviving rows of a segment are copied straight from the stream's CSR or
    dense data into the reservoir by compiled loops.  The estimates are clipped to
    [0, ``rho_max``] (default 0.49, so kappa >= 0.02): the paper omits this safeguard, without
    which h blows up when rho0_hat + rho1_hat >= 1 (docs/baselines.md, section 6.3).  ``nrest_seconds_``
    accumulates the time spent in NREst (a stream run reports its share).

    Parameters
    ----------
    n_classes : int >= 2
        Number of labels K.
    gamma : float in [0, 1) or {"cor4.1", "cor4.2", "cor4.3"}
        Exploration rate of AM eq. (3).
    refit_every : int >= 10
        N_s, rounds per block between two NREst refits.
    reservoir_size : int >= 10
        Rounds of a block kept (uniform reservoir sample) for the refit.
    estimator : nolo.noise_rates.NREst or None
        The rate estimator (AM Algorithm 3); None uses ``DEFAULT_ESTIMATOR_PARAMS``.  A warm-started estimator
        (``warm_start=True``) needs ``engine="numpy"`` (the default): the refits start from the previous block's
        saved weights, which ``engine="sklearn"`` cannot load (a ParameterError).
    warm_refit_epochs : int in [1, 10000] or None
        Epochs of each warm-started refit after the first (None: the estimator's ``max_iter``).
    rho_max : float in [0, 0.5)
        Cap of the estimated rates (so kappa >= 1 - 2 rho_max).
    horizon, complexity : for a corollary gamma (T and D).
    dtype : {"float64", "float32"}
        Precision of the weights.
    seed : int, numpy Generator or None
        The learner's generator (one uniform per played label; the reservoir's generator is spawned from it).

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.bandit import RCINE, run_stream
    >>> X = np.random.default_rng(0).normal(size=(200, 5)); y = (X[:, 0] > 0).astype(int)
    >>> m = RCINE(n_classes=2, gamma=0.1, refit_every=100, reservoir_size=50, seed=0)
    >>> r = run_stream(m, X, y, 300, rho0=0.1, rho1=0.1, seed=1)
    >>> m.t_, m.estimates_.shape   # 300 rounds, 3 blocks of N_s = 100 rounds, one refit each
    (300, (3, 2))
    """

    _logs_rounds = True
    #: the one state array that grows (a row of estimated rates per refit); the reservoir keeps the size the
    #: parameters give it
    _growing_state = {"estimates_": (0,)}

    def __init__(self, n_classes=2, gamma=0.05, refit_every=50_000, reservoir_size=2_000, estimator=None,
                 warm_refit_epochs=2, rho_max=0.49, horizon=None, complexity=1.0, dtype="float64", seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.refit_every = refit_every
        self.reservoir_size = reservoir_size
        self.estimator = estimator
        self.warm_refit_epochs = warm_refit_epochs
        self.rho_max = rho_max
        self.horizon = horizon
        self.complexity = complexity
        self.dtype = dtype
        self.seed = seed

    def _validate_params(self) -> None:
        super()._validate_params()
        check_int(self.refit_every, "refit_every", low=10)
        check_int(self.reservoir_size, "reservoir_size", low=10)
        if self.warm_refit_epochs is not None:
            check_int(self.warm_refit_epochs, "warm_refit_epochs", low=1, high=MAX_WARM_REFIT_EPOCHS)
        check_scalar(self.rho_max, "rho_max", low=0.0, high=0.5, high_inclusive=False)  # 0.5 + 0.5: kappa = 0
        from nolo.noise_rates import NREst

        if self.estimator is not None and not isinstance(self.estimator, NREst):
            raise ParameterError(f"estimator must be None or a nolo.noise_rates.NREst, got {self.estimator!r}")
        est = self.estimator
        if est is not None and est.warm_start and est.engine == "sklearn" and est.classifier is None:
            raise ParameterError("estimator: RCINE warm-starts each refit from the previous block's saved weights, "
                                 "which NREst(engine='sklearn') cannot load (scikit-learn has no public API for it); "
                                 "use engine='numpy' (the default, the same arithmetic) or warm_start=False")

    def _init_state(self, n_features: int) -> None:
        super()._init_state(n_features)
        m = min(int(self.reservoir_size), int(self.refit_every))
        self.rho0_hat_ = 0.0
        self.rho1_hat_ = 0.0
        self.block_count_ = 0
        self.res_X_ = np.zeros((m, n_features))
        self.res_played_ = np.zeros(m, dtype=np.int64)
        self.res_feedback_ = np.zeros(m, dtype=np.int64)
        self.res_rng_ = spawn(self.seed, 1)[0] if not isinstance(self.seed, np.random.Generator) else self.seed.spawn(1)[0]
        self.estimates_ = np.zeros((0, 2))
        self.nrest_weights_ = None
        self.nrest_seconds_ = 0.0

    def _check_state(self) -> None:
        """A loaded block must be one a learner can be in: ``block_count_ < refit_every`` (the refit resets it; a
        larger count would never refit again), reservoir labels in [0, K) and bits in {0, 1}, rate estimates in
        [0, rho_max] (the exploration distribution divides by ``1 - rho0_hat_ - rho1_hat_``), and the noise-rate
        network's warm-start weights of finite squared norm in their precision."""
        super()._check_state()
        if not self.is_initialized:  # an unfitted learner holds no state
            return
        if not 0 <= self.block_count_ < int(self.refit_every):
            raise PersistenceError(f"block_count_ must lie in [0, refit_every={self.refit_every}), got {self.block_count_}")
        K = int(self.n_classes)
        if self.res_played_.size and not (0 <= self.res_played_.min() and self.res_played_.max() < K):
            raise PersistenceError(f"res_played_ must hold labels in [0, {K})")
        if not np.all((self.res_feedback_ == 0) | (self.res_feedback_ == 1)):
            raise PersistenceError("res_feedback_ must hold bits (0 or 1)")
        for key in ("rho0_hat_", "rho1_hat_"):
            r = getattr(self, key)
            if not 0.0 <= r <= float(self.rho_max):
                raise PersistenceError(f"{key} must lie in [0, rho_max={self.rho_max}], got {r!r}")
        if not self.rho0_hat_ + self.rho1_hat_ < 1.0:
            raise PersistenceError("rho0_hat_ + rho1_hat_ must be < 1")
        weights = self.nrest_weights_ if isinstance(self.nrest_weights_, list) else [self.nrest_weights_]
        for i, w in enumerate(a for a in weights if a is not None):
            check_state_sqnorm(f"nrest_weights_[{i}]", w, "the noise-rate network's warm start")

    def _state_record(self) -> ExpHState:
        return exp_h_record(self.gamma_, self.rho0_hat_, 1.0 - self.rho0_hat_ - self.rho1_hat_, self.W_.shape[0])

    # -- the block log and the refits -------------------------------------------------------
    def _after_round(self, x: np.ndarray, played: int, feedback: int) -> None:
        slot = reservoir_slot(self.block_count_, self.res_X_.shape[0], self.res_rng_)
        if slot >= 0:
            self.res_X_[slot] = x
            self.res_played_[slot] = played
            self.res_feedback_[slot] = feedback
        self.block_count_ += 1
        if self.block_count_ == int(self.refit_every):
            self._refit()

    def _segment_length(self, remaining: int) -> int:
        """Rounds the compiled loop may run before the next refit (the stream runner initialises first)."""
        return min(remaining, int(self.refit_every) - self.block_count_)

    def _after_segment(self, X, log_index, log_played, log_feedback) -> None:
        m = self.res_X_.shape[0]
        slot_index = np.full(m, -1, dtype=np.int64)
        touched = np.zeros(m, dtype=np.bool_)
        reservoir_replay(log_index, log_played, log_feedback, self.block_count_, m, self.res_rng_, slot_index,
                         self.res_played_, self.res_feedback_, touched)
        slots = np.flatnonzero(touched)
        if slots.size:  # the surviving rows, copied straight into the reservoir (no temporaries)
            if sp.issparse(X):
                copy_csr_rows(X.indptr, X.indices, X.data, slot_index[slots], slots, self.res_X_)
            else:
                copy_dense_rows(X, slot_index[slots], slots, self.res_X_)
        self.block_count_ += int(log_index.shape[0])
        if self.block_count_ == int(self.refit_every):
            self._refit()

    def _refit(self) -> None:

        t0 = time.perf_counter()
        n = min(self.block_count_, self.res_X_.shape[0])
        from nolo.noise_rates import NREst

        est = NREst(**DEFAULT_ESTIMATOR_PARAMS) if self.estimator is None else type(self.estimator)(
            **self.estimator.get_params(deep=False))
        est.set_params(random_state=int(self.res_rng_.integers(2**31 - 1)))
        init = self.nrest_weights_ if est.warm_start else None
        if init is not None and self.warm_refit_epochs is not None and "max_iter" in est.get_params(deep=False):
            est.set_params(max_iter=int(self.warm_refit_epochs))  # incremental refit from the previous block
        est.fit(self.res_X_[:n], self.res_played_[:n], self.res_feedback_[:n], n_classes=int(self.n_classes),
                init_weights=init)
        if est.warm_start:
            self.nrest_weights_ = est.weights_
        cap = float(self.rho_max)
        self.rho0_hat_ = float(min(est.rho0_, cap))
        self.rho1_hat_ = float(min(est.rho1_, cap))
        self.estimates_ = np.vstack([self.estimates_, [[est.rho0_, est.rho1_]]])
        self.block_count_ = 0
        self.nrest_seconds_ += time.perf_counter() - t0

    def _run_extras(self) -> dict:
        return {"nrest_seconds": float(getattr(self, "nrest_seconds_", 0.0))}

    def _finish_extras(self, extra: dict, seconds: float) -> dict:
        if seconds > 0:
            extra["nrest_share"] = extra["nrest_seconds"] / seconds  # the share of the run spent in NREst
        return extra
