"""CSS11 Setting 2: linear regression from one noisy copy with a known noise covariance (Algorithm 1, right)."""

from __future__ import annotations

import numpy as np

from nolo._validation import check_scalar
from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.linear._loops import known_cov_diag_loop, known_cov_full_loop, mean_copies, rotate_rows
from nolo.learners.linear.base import NoisyLinearOGD
from nolo.learners.linear.covariance import CovarianceSchedule
from nolo.learners.linear.gradients import setting2_G

__all__ = ["KnownCovarianceLinearRegression"]


def _rotate_vector(Q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``Q @ v`` in the fixed summation order of :func:`rotate_rows` (bitwise reproducible)."""
    return rotate_rows(np.ascontiguousarray(v[None, :]), np.ascontiguousarray(Q.T))[0]


class KnownCovarianceLinearRegression(NoisyLinearOGD):
    """Algorithm 1 (right) of CSS11, "known covariance": one copy of x and y per round.

    Steps along ``grad~ = 2(<w_t, x~> - y~) x~ - 2 Sigma_t w_t`` (Lemma 2 with
    the correction of docs/math.md, item 6 / erratum E9: the paper prints
    ``- Sigma_t w_t``, which is biased by ``+Sigma_t w_t``), then projects on
    ``||w|| <= B_w``.  The noise need not be Gaussian; only its covariance is
    used.  With ``step=None`` the step is ``B_w / sqrt(G T)`` with the
    re-derived ``G = 16 B_w^2 B_x^4 + 16 B_y^2 B_x^2 + 8 B_Sigma^2 B_w^2``
    (E9), for which the expected regret is at most ``B_w sqrt(G T)``.

    Parameters
    ----------
    noise_cov : scalar, (d,), (d, d), (T, d), (T, d, d), callable or NoiseModel
        ``Sigma_t``: constant (scalar variance, variances, matrix), one per
        round (rows indexed by ``t = 1..T``), a callable ``t -> Sigma_t``, or a
        :class:`nolo.noise.NoiseModel` whose exact covariance is used.  Every
        ``Sigma_t`` is checked to be symmetric positive semidefinite of shape
        ``(d, d)``.  A callable cannot be saved with :meth:`save`.
    sigma_bound : float or None
        ``B_Sigma >= ||Sigma_t||`` (spectral norm) for the theory step;
        computed from a constant or a sequence when omitted.
    radius, step, x_bound, y_bound, horizon, seed
        As for :class:`nolo.learners.linear.TwoCopyLinearRegression`.
    copies : int >= 1 or "all"
        Copies per round.  ``1`` (default) is the paper, bit for bit.  ``k >= 2`` queries ``k`` copies and
        ``"all"`` takes every remaining copy of a finite pool (:class:`nolo.noise.PoolOracle`; in
        :meth:`learn_stream` every copy given): the step uses their mean ``xbar``, whose noise covariance is
        ``Sigma_t / k``, i.e. ``2(<w, xbar> - y~) xbar - 2 (Sigma_t / k) w`` (not in CSS11).  ``G``
        stays a valid bound (``E||xbar||^2 <= E||x~||^2``, ``||Sigma_t / k|| <= B_Sigma``).

    A constant full ``Sigma`` is played in its eigenframe (state
    ``frame_w_``, ``frame_average_``; ``w_`` is their rotation back), so a
    stream gives the same bits however it is split into calls.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.linear import KnownCovarianceLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3))
    >>> y = X @ np.array([0.5, -0.3, 0.2])
    >>> copies = X[:, None, :] + 0.7 * rng.normal(size=(5000, 2, 3))  # two noisy copies per round, variance 0.49
    >>> m = KnownCovarianceLinearRegression(noise_cov=0.49, radius=1.0, step=0.01)
    >>> m.learn_stream(copies[:, :1], y)
    >>> m.average_.round(2)  # the online-to-batch average
    array([ 0.5, -0.3,  0.2])
    """

    #: the eigenframe iterates exist only between calls with a constant full Sigma; a file may hold them
    #: (same dtype and shape as their rotations back, ``w_`` and ``average_``) or not
    _optional_state = {"frame_w_": "w_", "frame_average_": "average_"}

    copies_per_round = 1
    _G_params = ("radius", "x_bound", "y_bound", "sigma_bound")

    def __init__(
        self, noise_cov=0.0, radius=1.0, step=None, x_bound=None, y_bound=None, horizon=None, sigma_bound=None, seed=None,
        copies=1,
    ):
        self.noise_cov = noise_cov
        self.radius = radius
        self.step = step
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.horizon = horizon
        self.sigma_bound = sigma_bound
        self.seed = seed
        self.copies = copies

    def _validate_params(self) -> None:
        self._validate_common()
        if self.sigma_bound is not None:
            check_scalar(self.sigma_bound, "sigma_bound", low=0.0)
        if self.noise_cov is None:
            raise ParameterError("noise_cov must be given (the known noise covariance Sigma_t)")
        if self.is_initialized:
            self._schedule(self.n_features_in_)

    def _schedule(self, d: int) -> CovarianceSchedule:
        cache = getattr(self, "_cov_cache", None)
        if cache is not None and cache[0] is self.noise_cov and cache[1] == d:
            return cache[2]
        sched = CovarianceSchedule(self.noise_cov, d)
        self._cov_cache = (self.noise_cov, d, sched)
        return sched

    def _init_state(self, n_features: int) -> None:
        self._schedule(n_features)
        super()._init_state(n_features)

    def variance_constant(self) -> float:
        Bs = self.sigma_bound
        if Bs is None:
            if not self.is_initialized:
                arr = np.asarray(self.noise_cov) if not callable(self.noise_cov) else None
                if arr is None or arr.ndim > 1:
                    raise ParameterError("sigma_bound is needed (or call initialize(d) first) to compute G")
                Bs = float(np.max(arr)) if arr.size else 0.0
            else:
                Bs = self._schedule(self.n_features_in_).spectral_bound()
                if Bs is None:
                    raise ParameterError("sigma_bound must be given when noise_cov is a callable or a noise model")
        return setting2_G(self.radius, self.x_bound, self.y_bound, Bs)

    def covariance(self, t: int) -> np.ndarray:
        """The validated ``Sigma_t`` (``t`` 1-based) the learner uses at round ``t``."""
        self._require_initialized("covariance")
        return self._schedule(self.n_features_in_).at(t)

    def _eigenframe(self, S: np.ndarray):
        cache = getattr(self, "_eig_cache", None)
        if cache is not None and cache[0].shape == S.shape and np.array_equal(cache[0], S):
            return cache[1], cache[2]
        lam, Q = np.linalg.eigh(S)
        self._eig_cache = (S.copy(), np.maximum(lam, 0.0), Q)
        return self._eig_cache[1], self._eig_cache[2]

    def _frame_iterates(self, Q: np.ndarray, w: np.ndarray, avg: np.ndarray):
        """The iterates in the eigenframe of ``Q``: the kept ``frame_w_``/``frame_average_`` when they are the
        current iterates in this frame (``Q @ frame_w_ == w_`` bitwise), else ``Q^T w_`` and ``Q^T average_``."""
        fw, fa = getattr(self, "frame_w_", None), getattr(self, "frame_average_", None)
        if (
            fw is not None and fa is not None and fw.shape == w.shape and fa.shape == avg.shape
            and np.array_equal(_rotate_vector(Q, fw), w) and np.array_equal(_rotate_vector(Q, fa), avg)
        ):
            return fw.copy(), fa.copy()
        return _rotate_vector(Q.T, w), _rotate_vector(Q.T, avg)

    def _committed(self) -> None:
        pending, self._frame_pending = getattr(self, "_frame_pending", None), None
        if pending is not None:
            self.frame_w_, self.frame_average_ = pending
        elif hasattr(self, "frame_w_"):
            del self.frame_w_, self.frame_average_

    def _run_loop(self, copies, y, etas, w, avg, Xeval, pred):
        self._frame_pending = None
        kind, S = self._schedule(self.n_features_in_).block(int(self.t_), copies.shape[0])
        k = 1 if self._copies_option() == 1 else copies.shape[1]
        if k > 1:  # the mean of k copies, whose noise covariance is Sigma_t / k
            copies = mean_copies(copies)
            S = S / k
        if kind == "full" and S.shape[0] == 1:
            # constant full Sigma = Q diag(lam) Q^T: play in the eigenframe, where Sigma is diagonal (the
            # projection on the ball commutes with the rotation).  The iterates stay in the eigenframe between
            # calls (frame_w_, frame_average_; w_ = Q frame_w_) and every row is rotated in one fixed summation
            # order, so a stream gives the same bits however it is chunked, and per-round learn agrees with it.
            lam, Q = self._eigenframe(S[0])
            Cr = rotate_rows(np.ascontiguousarray(copies[:, 0, :]), Q)[:, None, :]
            Xr = rotate_rows(Xeval, Q) if Xeval.shape[0] else Xeval
            wr, ar = self._frame_iterates(Q, w, avg)
            status = known_cov_diag_loop(Cr, y, etas, float(self.radius), wr, ar, int(self.t_), lam[None, :], Xr, pred)
            if status < 0 and np.all(np.isfinite(copies[-status - 1])) and not np.all(np.isfinite(Cr[-status - 1])):
                raise NumericalError("rotating the copies to the noise eigenframe overflowed; rescale the inputs")
            w[:] = _rotate_vector(Q, wr)
            avg[:] = _rotate_vector(Q, ar)
            self._frame_pending = (wr, ar)
            return status
        loop = known_cov_diag_loop if kind == "diag" else known_cov_full_loop
        return loop(copies, y, etas, float(self.radius), w, avg, int(self.t_), np.ascontiguousarray(S), Xeval, pred)
