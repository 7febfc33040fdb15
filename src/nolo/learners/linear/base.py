"""Shared machinery of the CSS11 linear learners: projected OGD driven by a gradient *estimate*.

Algorithm 1 of CSS11 (both columns) is Zinkevich's projected online gradient
descent on the ball ``||w|| <= B_w`` (``B_w`` bounds the *norm* in CSS11,
unlike CSS10) where the clean gradient is replaced by an unbiased estimate
built from noisy copies.  A subclass says how many copies it needs per round,
how it turns them into a gradient (:mod:`nolo.learners.linear.gradients`),
its variance constant ``G`` (the theory step is ``eta = B_w / sqrt(G T)``,
regret ``<= B_w sqrt(G T)``) and which compiled loop plays a whole stream.

The projection on the ball is the shared compiled rule of
:mod:`nolo.oco.projected_step` and the step rules are those of
:mod:`nolo.oco.steps` (``TheoryStep(R=B_w, B=sqrt(G), T)`` is exactly
``B_w/sqrt(G T)``): the same projected OGD as
:class:`nolo.learners.ProjectedOGD`, only the gradient differs.  The
per-round :meth:`NoisyLinearOGD.learn` runs the compiled loop for one round,
so it gives the same bits as :meth:`NoisyLinearOGD.learn_stream`.
"""

from __future__ import annotations

import math

import numpy as np

from nolo._validation import check_array, check_int, check_scalar, check_seed, check_targets_for_rows
from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.base import NoisyInputLearner
from nolo.learners.ogd import AveragedLinearPredictor
from nolo.noise.pool import query_copies
from nolo.oco.steps import TheoryStep, check_step

__all__ = ["NoisyLinearOGD"]


class NoisyLinearOGD(AveragedLinearPredictor, NoisyInputLearner):
    """Base of the CSS11 linear learners (not an algorithm by itself).

    Common parameters
    -----------------
    radius : float
        ``B_w > 0``, the radius of the ball of predictors (a bound on ``||w||``).
    step : StepRule, float or None
        Step sizes; ``None`` uses the theory step ``B_w / sqrt(G T)`` from
        ``x_bound``, ``y_bound`` and ``horizon``.
    x_bound, y_bound : float or None
        ``B_x``, ``B_y``: bounds on the noisy instances' and targets' second
        moments (``E||x~||^2 <= B_x^2``, ``E y~^2 <= B_y^2``).
    horizon : int or None
        ``T``, the number of rounds the theory step is tuned for.
    seed : seed-like
        The learners are deterministic given the copies; kept for the contract.

    State: ``w_`` (iterate to play next), ``average_`` (mean of the played
    iterates: the online-to-batch predictor), ``t_`` (rounds played).
    """

    #: noisy copies of x per round
    copies_per_round: int = 1

    # -- parameters --------------------------------------------------------------------
    def _validate_common(self) -> None:
        check_scalar(self.radius, "radius", low=0.0, low_inclusive=False)
        if self.step is None:
            missing = [n for n in ("x_bound", "y_bound", "horizon") if getattr(self, n) is None]
            if missing:
                raise ParameterError(
                    f"step=None selects the theory step B_w/sqrt(G T), which needs {', '.join(missing)}; "
                    "give them or give an explicit step (a positive number or a nolo.oco step rule)"
                )
        else:
            check_step(self.step)
        if self.x_bound is not None:
            check_scalar(self.x_bound, "x_bound", low=0.0, low_inclusive=False)
        if self.y_bound is not None:
            check_scalar(self.y_bound, "y_bound", low=0.0)
        if self.horizon is not None:
            check_int(self.horizon, "horizon", low=1)
        check_seed(self.seed)
        self._check_copies_option()

    def _validate_params(self) -> None:
        self._validate_common()

    def variance_constant(self) -> float:  # pragma: no cover - overridden
        """``G`` with ``E||grad~||^2 <= G`` (the paper's lemma, corrected)."""
        raise NotImplementedError

    #: the user's parameters the variance constant G is computed from (named in error messages)
    _G_params: tuple[str, ...] = ("radius", "x_bound", "y_bound")

    def _theory_G(self) -> float:
        """``G`` checked to be a positive finite number (else a ParameterError naming the user's bounds)."""
        try:
            G = float(self.variance_constant())
        except OverflowError:
            G = math.inf
        if not (math.isfinite(G) and G > 0.0):
            given = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._G_params)
            raise ParameterError(
                f"step=None: the theory step radius / sqrt(G * horizon) needs a finite positive G, but {given} "
                f"give G = {G!r}; give bounds of moderate size or an explicit step"
            )
        return G

    def step_rule(self):
        """The step rule in force: the given one, or ``TheoryStep(R=B_w, B=sqrt(G), T)`` = ``B_w/sqrt(G T)``."""
        if self.step is None:
            return TheoryStep(R=float(self.radius), B=math.sqrt(self._theory_G()), T=int(self.horizon))
        return check_step(self.step)

    def regret_bound(self) -> float:
        """``B_w sqrt(G T)``: the expected-regret bound of Theorem 1 (Theorem 2 with known G) for ``T = horizon``."""
        if self.horizon is None:
            raise ParameterError("regret_bound needs horizon (T)")
        return float(self.radius) * math.sqrt(self._theory_G() * int(self.horizon))

    def _init_state(self, n_features: int) -> None:
        self.w_ = np.zeros(n_features)
        self.average_ = np.zeros(n_features)

    # -- one round ----------------------------------------------------------------------
    # -- how many copies a round uses (the ``copies`` option of Settings 1 and 2) --
    def _copies_option(self):
        """The ``copies`` parameter (``copies_per_round`` = the paper's estimate, an int ``k``, or ``"all"``)."""
        return getattr(self, "copies", self.copies_per_round)

    def _check_copies_option(self) -> None:
        c = self._copies_option()
        if isinstance(c, str):
            if c != "all":
                raise ParameterError(f"copies must be an integer >= {self.copies_per_round} or 'all', got {c!r}")
        else:
            check_int(c, "copies", low=self.copies_per_round)

    def _copies_wanted(self, oracle) -> int:
        """Copies to query this round: an integer ``copies``, or every remaining copy of a finite pool for ``"all"``."""
        c = self._copies_option()
        if not isinstance(c, str):
            return int(c)
        remaining = getattr(oracle, "remaining", None)
        if isinstance(remaining, bool) or not isinstance(remaining, (int, np.integer)):
            raise ParameterError(
                "copies='all' takes every remaining copy of a finite pool (a nolo.noise.PoolOracle, which has a "
                f"'remaining' count); {type(oracle).__name__} has none: give copies=<int> for a simulated oracle"
            )
        return max(int(remaining), self.copies_per_round)

    def _select_copies(self, arr: np.ndarray) -> np.ndarray:
        """The copies of a ``(T, m, d)`` stream the loop uses: all (``"all"``), or the first ``copies``."""
        c = self._copies_option()
        if isinstance(c, str) or int(c) == self.copies_per_round:
            return arr  # the paper's loops read copies 0 (and 1) only
        if arr.shape[1] < int(c):
            raise ParameterError(f"copies={int(c)}: the stream must hold at least {int(c)} copies per round, got m={arr.shape[1]}")
        return np.ascontiguousarray(arr[:, : int(c)])

    def _query(self, oracle) -> np.ndarray:
        self._check_oracle_query(oracle)
        return query_copies(oracle, self._copies_wanted(oracle), type(self).__name__)

    def learn(self, oracle, y) -> "NoisyLinearOGD":
        """One round of Algorithm 1: query the copies, estimate the gradient, take the projected step.

        The round runs through the same compiled loop as :meth:`learn_stream`
        (one round long), so ``T`` calls of ``learn`` and one ``learn_stream``
        of ``T`` rounds give the same bits.
        """
        self._validate_params()
        yv = check_scalar(y, "y")
        d = getattr(oracle, "d", None)
        if self.is_initialized and d is not None and d != self.n_features_in_:
            raise ParameterError(f"the oracle has d={d} but the learner was trained with {self.n_features_in_} features")
        copies = self._query(oracle)
        if self.is_initialized and copies.shape[1] != self.n_features_in_:
            raise ParameterError(f"copies must have {self.n_features_in_} features, got {copies.shape[1]}")
        self._ensure_initialized(copies.shape[1])
        self._play(np.ascontiguousarray(copies[None]), np.array([yv]), np.zeros((0, copies.shape[1])))
        return self

    # -- whole stream --------------------------------------------------------------------
    def _run_loop(self, copies: np.ndarray, y: np.ndarray, etas, w, avg, Xeval, pred) -> int:  # pragma: no cover
        raise NotImplementedError

    def learn_stream(self, copies, y, clean=None) -> np.ndarray | None:
        """Play ``T`` rounds at once in a compiled loop (no per-round Python).

        Parameters
        ----------
        copies : array of shape (T, m, d)
            Noisy copies per round, ``m >= copies_per_round``; the papers'
            estimates ignore extra copies, ``copies=k`` uses the first ``k`` and
            ``copies="all"`` every one; single-copy learners also accept ``(T, d)``.
        y : array of shape (T,)
            Noisy targets.
        clean : array of shape (T, d), optional
            If given, returns ``<w_t, clean[t]>`` for each played iterate (the
            predictions whose clean loss defines the regret of eq. (1)).

        Equivalent to ``T`` calls of :meth:`learn` with oracles serving these
        copies; nothing is committed if an iterate becomes non-finite.
        """
        self._validate_params()
        # finiteness of the (large) copies array is checked inside the compiled loop, see below
        arr = check_array(copies, "copies", ndim=(2, 3), finite=False)
        if arr.ndim == 2:
            if self.copies_per_round != 1:
                raise ParameterError(
                    f"{type(self).__name__} needs {self.copies_per_round} copies per round: copies must have shape (T, m, d)"
                )
            arr = arr[:, None, :]
        if arr.shape[1] < self.copies_per_round:
            raise ParameterError(
                f"copies must hold at least {self.copies_per_round} copies per round (shape (T, m, d)), got m={arr.shape[1]}"
            )
        arr = self._select_copies(arr)
        T = arr.shape[0]
        yv = check_targets_for_rows(y, T, "copies")
        if self.is_initialized and arr.shape[2] != self.n_features_in_:
            raise ParameterError(f"copies must have {self.n_features_in_} features, got {arr.shape[2]}")
        if clean is not None:
            Xeval = np.ascontiguousarray(check_array(clean, "clean", shape=(T, arr.shape[2])))
        else:
            Xeval = np.zeros((0, arr.shape[2]))
        self._ensure_initialized(arr.shape[2])
        pred = self._play(arr, yv, Xeval)
        return pred if clean is not None else None

    def _play(self, arr: np.ndarray, yv: np.ndarray, Xeval: np.ndarray) -> np.ndarray:
        """Run the compiled loop on validated inputs; commit ``w_``, ``average_``, ``t_`` only if every round is finite."""
        T = arr.shape[0]
        etas = np.ascontiguousarray(self.step_rule().schedule(self.t_ + 1, T), dtype=np.float64)
        w, avg = self.w_.copy(), self.average_.copy()
        pred = np.zeros(Xeval.shape[0])
        status = self._run_loop(arr, yv, etas, w, avg, Xeval, pred)
        if status < 0:
            i = -status - 1
            if not np.all(np.isfinite(arr[i])):
                raise ParameterError(f"copies must contain only finite values (no NaN or inf); row {i} does not")
            raise NumericalError(
                f"the OGD iterate became non-finite at round {self.t_ + i + 1}; "
                "no round of the stream was committed (lower the step size)"
            )
        self.w_, self.average_, self.t_ = w, avg, self.t_ + T
        self._committed()
        return pred

    def _committed(self) -> None:
        """Hook run after a successful commit (state a subclass keeps beside ``w_``/``average_``)."""

