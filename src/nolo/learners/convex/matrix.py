"""Online matrix prediction / collaborative filtering (OCO notes, lecture 14, section 2).

"Imagine we have a bunch of M users and a bunch of N products ... on round t
we are given x_t in [M] x [N] the position of the matrix we are required to
predict.  Learner then picks the predicted rating.  Finally the true rating
is revealed and learner suffers loss", with ``F`` a convex set of ``M x N``
matrices.  Both learners here play projected OGD (notes, section 3) on
``F``; the loss of round ``t`` depends on one entry, so its gradient
``phi'(W_t[x_t] - y_t) e_i e_j^T`` is rank one and the gradient step is O(1):

* :class:`TraceNormOGD` -- ``F = {W : ||W||_* <= tau}``; the projection is a
  thin SVD and the L1-ball projection of the singular values
  (:func:`~nolo.oco.projections.project_trace_norm_ball`),
  ``O(M N min(M, N))``.  ``projection_every = k`` projects every ``k``-th round
  (``k = 1`` is exact projected OGD; see the class for what ``k > 1`` keeps);
* :class:`MaxEntryOGD` -- the max-entry box ``F = {W : |W_ij| <= c}``, whose
  projection only clips the changed entry: O(1) per round, exact.
"""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_array, check_choice, check_int, check_scalar, check_state_bytes
from nolo.exceptions import NumericalError, ParameterError, PersistenceError
from nolo.learners.base import FullInformationLearner, check_state_sqnorm
from nolo.learners.convex._common import NotesOGDMixin, check_round_target
from nolo.learners.convex._loops import matrix_ogd_loop, undo_matrix_rounds
from nolo.oco.projections import project_trace_norm_ball

__all__ = ["TraceNormOGD", "MaxEntryOGD"]

MATRIX_LOSSES = ("squared", "absolute")


class _MatrixOGD(NotesOGDMixin, FullInformationLearner):
    """Shared machinery: cells, the compiled round loop, steps, the notes' bound, rollback.

    ``n_features_in_`` is the number of cells ``M N``.  State: ``W_`` (the
    ``M x N`` iterate to play next), ``t_``, ``stats_`` (cumulative loss,
    ``sum ||g_t||_F^2``, ``sum eta_t ||g_t||^2``, ``max ||g_t||^2``, drift since
    the last projection, its maximum), ``eta_last_``, ``pending_`` (rounds
    since the last projection), ``rank_`` (rank after the last projection,
    -1 before any), ``n_projections_``.
    """

    #: rounds reveal a cell (i, j) and its rating (nolo.checks plays it: learn((i, j), y), predict(rows, cols))
    protocol = "matrix_cell"
    _features_are_cells = True  # n_features_in_ = M N: the saved W_ is M x N
    _sentinel_state = ("rank_",)  # -1 until the first projection

    _clip_entries = False

    # -- parameters -------------------------------------------------------------------------
    def _validate_shape(self) -> tuple[int, int]:
        return check_int(self.n_rows, "n_rows", low=1), check_int(self.n_cols, "n_cols", low=1)

    def _validate_common(self) -> None:
        self._validate_shape()
        check_choice(self.loss, "loss", MATRIX_LOSSES)
        self._validate_step_params(self.loss, "2 (entry_bound + y_bound)")

    def comparator_radius(self, n_features=None) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def entry_bound(self) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def diameter(self) -> float:
        return 2.0 * self.comparator_radius()

    def gradient_bound(self, n_features=None) -> float:
        """``B >= |phi'| = ||phi' e_i e_j^T||_F``: 1 (absolute) or ``2 (entry_bound + y_bound)`` (squared)."""
        if self.loss == "absolute":
            return 1.0
        if self.y_bound is None:
            raise ParameterError("the squared loss's gradient bound needs y_bound")
        return 2.0 * (self.entry_bound() + float(self.y_bound))

    def _bound_diameter(self) -> float:
        """``D`` of the anytime bound.  Between projections the iterate may leave ``F``
        (``projection_every > 1``); the proof's telescoping still holds (those rounds are
        equalities), and with non-constant steps the distance to the comparator is bounded
        by ``D + max drift`` (the drift ``sum eta_t |phi'_t|`` since the last projection,
        tracked in ``stats_[5]``)."""
        return self.diameter() + float(self.stats_[5]) * (self._projection_every() > 1)

    def _projection_every(self) -> int:
        return 1

    # -- state ----------------------------------------------------------------------------------
    def _check_state(self) -> None:
        """A loaded projection schedule must be one the learner can be in: ``pending_ < projection_every`` (the
        stream's segment is ``k - pending_`` rounds; a larger count made it negative and the loop never ended) and
        ``rank_ <= min(M, N)``; ``||W_||_F^2`` finite (every round's loss and projection compute it)."""
        super()._check_state()
        if not self.is_initialized:
            return
        check_state_sqnorm("W_", self.W_, "the iterate")
        k = self._projection_every()
        if not self._clip_entries and not 0 <= self.pending_ < k:
            raise PersistenceError(f"pending_ (rounds since the last projection) must lie in [0, {k}), got {self.pending_}")
        if self.rank_ > min(self.W_.shape):
            raise PersistenceError(f"rank_ must be at most min(M, N) = {min(self.W_.shape)}, got {self.rank_}")

    def initialize(self, n_features=None) -> "_MatrixOGD":
        """Create fresh state (the shape comes from ``n_rows``, ``n_cols``; ``n_features`` is ignored)."""
        M, N = self._validate_shape()
        check_state_bytes(8 * M * N, f"{type(self).__name__} keeps an n_rows x n_cols float64 matrix: n_rows={M}, "
                          f"n_cols={N}")
        return super().initialize(M * N)

    def _init_state(self, n_features: int) -> None:
        M, N = self._validate_shape()
        self.W_ = np.zeros((M, N))
        self.stats_ = np.zeros(6)
        self.eta_last_ = 0.0
        self.pending_ = 0
        self.rank_ = -1
        self.n_projections_ = 0

    @property
    def cumulative_loss_(self) -> float:
        return float(self.stats_[0])

    # -- cells ----------------------------------------------------------------------------------
    def _check_cells(self, rows, cols, n=None):
        """``rows``, ``cols`` as int64 index arrays of the same length inside the matrix (floats must be whole)."""
        M, N = self._validate_shape()
        out = []
        for name, value, size in (("rows", rows, M), ("cols", cols, N)):
            try:
                arr = np.atleast_1d(np.asarray(value))
            except (TypeError, ValueError) as exc:
                raise ParameterError(f"{name} must be a 1-d sequence of integer indices: {exc}") from None
            if arr.ndim != 1:
                raise ParameterError(f"{name} must be a 1-d sequence of integer indices, got shape {arr.shape}")
            if arr.size:
                if arr.dtype.kind == "f":
                    if not (np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
                        raise ParameterError(f"{name} must be integer indices, got non-integer or non-finite values")
                elif arr.dtype.kind not in "iu":
                    raise ParameterError(f"{name} must be a 1-d sequence of integer indices, got dtype {arr.dtype}")
                if arr.min() < 0 or arr.max() >= size:
                    raise ParameterError(
                        f"{name} must be indices in [0, {size - 1}], got values in [{arr.min()}, {arr.max()}]")
            out.append(np.ascontiguousarray(arr, dtype=np.int64))
        r, c = out
        if r.shape != c.shape or (n is not None and r.shape[0] != n):
            raise ParameterError(f"rows and cols must have the same length (one cell per round), got {r.shape} and {c.shape}")
        return r, c

    # -- learning -------------------------------------------------------------------------------
    def _project(self, W: np.ndarray) -> np.ndarray:  # pragma: no cover - trace norm only
        return W

    def _run(self, rows, cols, y) -> np.ndarray:
        n = rows.shape[0]
        k = self._projection_every()
        etas = np.ascontiguousarray(self.step_rule().schedule(self.t_ + 1, n), dtype=np.float64)
        clip = float(self.entry_bound()) if self._clip_entries else 0.0
        absolute = self.loss == "absolute"
        played = np.empty(n)
        old = np.empty(n)
        acc = self.stats_.copy()
        W = self.W_
        crosses = (not self._clip_entries) and (self.pending_ + n >= k)
        backup = W.copy() if crosses else None
        pending, rank, nproj = int(self.pending_), int(self.rank_), int(self.n_projections_)
        i = 0
        try:
            while i < n:
                m = n - i if self._clip_entries else min(n - i, k - pending)
                status = matrix_ogd_loop(W, rows[i:i + m], cols[i:i + m], y[i:i + m], etas[i:i + m], absolute, clip,
                                         old[i:i + m], played[i:i + m], acc)
                if status < 0:
                    undo_matrix_rounds(W, rows[i:i + m], cols[i:i + m], old[i:i + m], -status - 1)
                    raise NumericalError(
                        f"a loss or the iterate became non-finite at round {self.t_ + i - status}; no round was "
                        "committed (lower the step size)"
                    )
                i += m
                pending += m
                if not self._clip_entries and pending == k:
                    W2, rank = self._project(W)
                    W[...] = W2
                    pending, nproj = 0, nproj + 1
                    acc[4] = 0.0
        except BaseException:
            if backup is not None:
                W[...] = backup
            else:
                undo_matrix_rounds(W, rows[:i], cols[:i], old[:i], i)
            raise
        self.stats_, self.pending_, self.rank_, self.n_projections_ = acc, pending, rank, nproj
        if n:
            self.eta_last_ = float(etas[-1])
        self.t_ += n
        return played

    def learn(self, x, y) -> "_MatrixOGD":
        """One round: ``x = (i, j)`` is the revealed cell, ``y`` its rating."""
        self._validate_params()
        if not isinstance(x, (tuple, list, np.ndarray)) or len(x) != 2:
            raise ParameterError(f"x must be a cell (i, j) of the {self.n_rows} x {self.n_cols} matrix, got {x!r}")
        rows, cols = self._check_cells([x[0]], [x[1]])
        yv = check_round_target(y, "regression")
        self._ensure_initialized(0)
        self._run(rows, cols, yv)
        return self

    def learn_stream(self, rows, cols, y) -> np.ndarray:
        """Play the rounds ``((rows[t], cols[t]), y[t])`` in order (compiled); returns the losses suffered.

        Bitwise the same state as calling :meth:`learn` round by round; on a
        numerical failure nothing is committed.
        """
        self._validate_params()
        rows, cols = self._check_cells(rows, cols)
        yv = check_array(y, "y", shape=(rows.shape[0],))
        self._ensure_initialized(0)
        return self._run(rows, cols, np.ascontiguousarray(yv))

    def predict(self, rows, cols) -> np.ndarray:
        """The current iterate's entries ``W_[rows, cols]`` (never changes state)."""
        self._require_initialized()
        r, c = self._check_cells(rows, cols)
        return self.W_[r, c]


class TraceNormOGD(_MatrixOGD):
    """Online matrix prediction by projected OGD over the trace-norm ball (OCO notes, lecture 14, sections 2-3).

    Plays ``W_t``, is shown the cell ``x_t = (i, j)``, suffers
    ``(W_t[i, j] - y_t)^2`` or ``|W_t[i, j] - y_t|`` (the notes' loss), and updates

        W_{t+1} = Pi_F(W_t - eta_t phi'(W_t[i, j] - y_t) e_i e_j^T),   F = {W : ||W||_* <= tau}.

    ``Pi_F`` is the SVD and the L1-ball projection of the singular values.
    ``sup_F ||W||_F = tau``, so Claim 1 gives regret ``<= tau B sqrt(n)`` with
    ``B`` bounding ``|phi'|`` (1 for the absolute loss; ``2(tau + y_bound)``
    for the squared loss, as ``|W_ij| <= ||W||_op <= ||W||_* <= tau``).

    Cost.  The gradient step is O(1); the projection is a full SVD.  On
    low-rank test streams the projected iterate stays full rank (the
    threshold ``theta`` is tiny next to the spread of the singular values), so
    neither a truncated nor an incremental SVD would be exact.  Hence
    ``projection_every = k``: the SVD runs every ``k``-th round only.  ``k = 1``
    is the notes' algorithm; for ``k > 1`` the iterate may leave ``F`` between
    projections, and the notes' proof still gives the bound (a round without a
    projection satisfies its first inequality with equality; see
    :meth:`regret_bound`).  Measured costs: ``docs/oco-examples.md``.

    Parameters
    ----------
    n_rows, n_cols : int
        ``M`` users and ``N`` items.
    radius : float > 0
        ``tau``, the trace-norm radius.
    loss : {"squared", "absolute"}
    step : StepRule, float or None
        None: the notes' ``tau/(B sqrt(horizon))`` (or ``tau/(B sqrt(t))``).
    y_bound : float or None
        ``|y_t| <= y_bound`` (squared loss, default step).
    horizon : int or None
    projection_every : int >= 1
        Project every this many rounds (1 = exact projected OGD).
    seed : seed-like
        Unused; kept for the learner contract.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.convex import TraceNormOGD
    >>> ogd = TraceNormOGD(n_rows=3, n_cols=3, radius=1.0, step=0.25)
    >>> losses = ogd.learn_stream([0, 0], [0, 1], [2.0, 2.0])
    >>> ogd.W_[0].round(6).tolist(), losses.round(6).tolist()
    ([0.707107, 0.707107, 0.0], [4.0, 4.0])
    >>> float(np.linalg.svd(ogd.W_, compute_uv=False).sum()) <= 1.0 + 1e-12
    True
    """

    def __init__(self, n_rows=1, n_cols=1, radius=1.0, loss="squared", step=None, y_bound=None, horizon=None,
                 projection_every=1, seed=None):
        self.n_rows = n_rows
        self.n_cols = n_cols
        self.radius = radius
        self.loss = loss
        self.step = step
        self.y_bound = y_bound
        self.horizon = horizon
        self.projection_every = projection_every
        self.seed = seed

    @classmethod
    def _test_params(cls) -> list[dict]:
        """The notes' step from the bounds, and an explicit step with the absolute loss and a periodic projection."""
        return [{"n_rows": 3, "n_cols": 4, "radius": 2.0, "y_bound": 1.0, "horizon": 30},
                {"n_rows": 3, "n_cols": 4, "radius": 2.0, "loss": "absolute", "step": 0.1, "projection_every": 4}]

    def _validate_params(self) -> None:
        check_scalar(self.radius, "radius", low=0.0, low_inclusive=False)
        check_int(self.projection_every, "projection_every", low=1)
        self._validate_common()

    def _projection_every(self) -> int:
        return int(self.projection_every)

    def comparator_radius(self, n_features=None) -> float:
        """``sup_{||W||_* <= tau} ||W||_F = tau``."""
        return float(self.radius)

    def entry_bound(self) -> float:
        return float(self.radius)

    def _project(self, W):
        return project_trace_norm_ball(W, float(self.radius), return_rank=True)


class MaxEntryOGD(_MatrixOGD):
    """Online matrix prediction by projected OGD over the max-entry box ``{W : |W_ij| <= c}`` (OCO notes, section 2).

    The projection of ``W_t - eta_t phi' e_i e_j^T`` onto the box clips the one
    changed entry, so a round is O(1) and exact.  The box decouples the cells:
    the learner is ``M N`` independent one-dimensional OGDs, so it never
    predicts an unseen cell (it stays 0) -- the trace-norm ball is what couples
    users and items.  ``sup_F ||W||_F = c sqrt(M N)``.

    Parameters
    ----------
    n_rows, n_cols : int
    bound : float > 0
        ``c``.
    loss, step, y_bound, horizon, seed :
        As in :class:`TraceNormOGD`.

    Examples
    --------
    >>> from nolo.learners.convex import MaxEntryOGD
    >>> ogd = MaxEntryOGD(n_rows=2, n_cols=2, bound=1.0, loss="absolute", step=0.75)
    >>> losses = ogd.learn_stream([1, 1], [0, 0], [3.0, 3.0])
    >>> ogd.W_.tolist(), losses.tolist()
    ([[0.0, 0.0], [1.0, 0.0]], [3.0, 2.25])
    """

    _clip_entries = True

    def __init__(self, n_rows=1, n_cols=1, bound=1.0, loss="squared", step=None, y_bound=None, horizon=None,
                 seed=None):
        self.n_rows = n_rows
        self.n_cols = n_cols
        self.bound = bound
        self.loss = loss
        self.step = step
        self.y_bound = y_bound
        self.horizon = horizon
        self.seed = seed

    @classmethod
    def _test_params(cls) -> list[dict]:
        """The notes' step from the bounds, and an explicit step with the absolute loss."""
        return [{"n_rows": 3, "n_cols": 4, "bound": 1.0, "y_bound": 1.0, "horizon": 30},
                {"n_rows": 3, "n_cols": 4, "bound": 0.5, "loss": "absolute", "step": 0.2}]

    def _validate_params(self) -> None:
        check_scalar(self.bound, "bound", low=0.0, low_inclusive=False)
        self._validate_common()

    def comparator_radius(self, n_features=None) -> float:
        """``sup_F ||W||_F = c sqrt(M N)``."""
        return float(self.bound) * math.sqrt(int(self.n_rows) * int(self.n_cols))

    def entry_bound(self) -> float:
        return float(self.bound)
