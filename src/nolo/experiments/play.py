"""``play``: one learner against one stream under one protocol -- the round loop every experiment shares.

Every experiment is a set of tasks run through :meth:`nolo.experiments.Context.map`
(resumable, parallel, stored); a task builds its learner(s) and its stream and calls
:func:`play`, which owns the round loop and the metrics.  A declarative spec
(``nolo run``, :mod:`nolo.experiments.spec`) is turned into the same call by
:func:`nolo.experiments.runner.run_learner`.

Protocols:

* ``"noisy_input"`` (CSS10/CSS11): the learner is told ``learn(oracle, y_seen)``,
  where the oracle serves independent noisy copies ``x_t + Z`` of the hidden
  clean ``x_t`` (``stream.noise``, drawn from ``stream.rng``); with pre-drawn
  copies (``stream.copies``, shape ``(T, m, d)``) and noisy targets
  (``stream.seen_y``) a learner that has a compiled
  ``learn_stream(copies, y, clean=X)`` plays the whole stream in that compiled
  loop instead (no per-round Python);
* ``"full_information"``: ``learn(x_t, y_seen)`` (``x_t`` the first pre-drawn
  copy when the stream has copies; compiled ``learn_stream`` likewise);
* ``"bandit"`` (AM): delegated to the compiled
  :func:`nolo.learners.bandit.run_stream` on a :class:`BanditStream` (a dataset
  visited in the bandit environment's order, feedback flipped with rates
  ``rho0``/``rho1`` or by any feedback law, ``feedback``); a learner not built on
  the compiled core plays round by round through the same environment and the
  same law's per-round rule (same examples, same flips).

Before each update the learner's current predictor is scored on the clean
instance (``decision_function``, else ``predict``).  Rows are recorded at the
rounds ``record`` names (:func:`record_points`): every ``record`` rounds and at
``T`` for an int, ``"log"`` for about 60 log-spaced rounds, or an explicit
increasing sequence of rounds.  Columns (those that apply):

``t``; ``clean_loss`` (mean clean loss over the rounds since the previous row)
and ``avg_clean_loss`` (over rounds 1..t); ``regret`` (cumulative clean loss
minus that of the best fixed linear predictor in the l2 ball of
``regret_radius`` on rounds 1..t, :func:`nolo.oco.regret.regret_curve`);
``mistakes`` and ``error_rate`` (classification; bandit: of the played label);
``greedy_mistakes``/``greedy_error_rate`` (bandit: of argmax_r w_r . x);
``queries`` (cumulative oracle queries); ``time_per_round`` and ``elapsed``.
The per-round arrays (``losses``, ``wrong``, ``queries``) are kept on the
:class:`PlayResult` for statistics an experiment computes itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from nolo.exceptions import ParameterError

__all__ = ["Stream", "BanditStream", "PlayResult", "play", "record_points", "TIMING_COLUMNS", "PROTOCOLS"]

PROTOCOLS = ("noisy_input", "full_information", "bandit")
#: columns that depend on the machine, not on the learner and the stream.
TIMING_COLUMNS = ("time_per_round", "elapsed")


def record_points(rounds: int, every) -> np.ndarray:
    """Rounds (1-based) at which a row is recorded.

    ``every`` an int: every ``every`` rounds and always ``rounds``; ``"log"``: about 60 log-spaced
    rounds including ``rounds``; a sequence: those rounds (strictly increasing, in ``[1, rounds]``).
    """
    if isinstance(every, str):
        if every != "log":
            raise ParameterError(f"record must be an int, 'log' or a sequence of rounds, got {every!r}")
        from nolo.learners.bandit import log_checkpoints

        return log_checkpoints(rounds)
    if np.ndim(every) == 0:
        every = int(every)
        if every < 1:
            raise ParameterError(f"record must be >= 1 round, got {every}")
        pts = np.arange(every, rounds + 1, every)
        if pts.size == 0 or pts[-1] != rounds:
            pts = np.append(pts, rounds)
        return pts.astype(np.int64)
    pts = np.asarray(every, dtype=np.int64)
    if pts.ndim != 1 or pts.size == 0 or np.any(np.diff(pts) <= 0) or pts[0] < 1 or pts[-1] > rounds:
        raise ParameterError(f"record rounds must be strictly increasing round numbers in [1, {rounds}]")
    return pts


@dataclass
class Stream:
    """The rounds of a full-information or noisy-input run.

    ``X`` (T, d) clean instances and ``y`` (T,) clean targets or labels (what the learner is
    scored on).  ``noise`` + ``rng``: the oracle's input noise and its generator (noisy-input
    protocol); ``copies`` (T, m, d): pre-drawn noisy copies instead (the compiled path; under
    the full-information protocol the learner takes ``copies[:, 0]`` for the instance -- the naive
    learner that treats one noisy copy as clean).  The learner is told ``seen_y`` if given, else ``y`` corrupted by ``target_noise`` (drawn from
    ``target_rng``, :func:`nolo.noise.add_target_noise`) if given, else ``y``.
    """

    X: np.ndarray
    y: np.ndarray
    noise: Any = None
    rng: np.random.Generator | None = None
    copies: np.ndarray | None = None
    seen_y: np.ndarray | None = None
    target_noise: Any = None
    target_rng: np.random.Generator | None = None

    @property
    def rounds(self) -> int:
        return int(len(self.X))


@dataclass
class BanditStream:
    """A labelled dataset played for ``rounds`` rounds as AM's noisy bandit feedback stream.

    The arguments of :class:`nolo.learners.bandit.ClassificationBandit`: ``order`` ("replace",
    "permute" or "cycle"), flip rates ``rho0``/``rho1`` or a feedback law ``feedback``
    (:class:`nolo.noise.FeedbackLaw`: ``FlipChannel``, ``FlipMatrix``, ``ContextFlips`` bound to X; not
    together with non-zero rates), the environment's ``seed``.  ``log=True`` keeps the click log of
    every round (O(rounds) memory; compiled learners only).
    """

    X: Any
    y: np.ndarray
    rounds: int
    rho0: float = 0.0
    rho1: float = 0.0
    order: str = "replace"
    seed: Any = None
    representation: str = "auto"
    log: bool = False  # keep every round's (example index, played label, feedback) in PlayResult.extra["log"]
    feedback: Any = None  # a feedback law (nolo.noise.FeedbackLaw) instead of rho0/rho1


@dataclass
class PlayResult:
    """The recorded rows (``frame``), the wall-clock ``seconds``, and the per-round arrays kept."""

    frame: pd.DataFrame
    seconds: float
    losses: np.ndarray | None = None
    wrong: np.ndarray | None = None
    queries: np.ndarray | None = None
    extra: dict = field(default_factory=dict)


def _margin(learner, x: np.ndarray) -> float:
    f = getattr(learner, "decision_function", None) or learner.predict
    return float(np.asarray(f(x[None, :])).reshape(-1)[0])


def play(learner, stream, protocol: str, record_every: int | str | Sequence[int] | None = None, *, loss=None,
         regret_radius: float | None = None, progress=None) -> PlayResult:
    """Play ``learner`` on ``stream`` under ``protocol``, recording at ``record_every`` (see the module docstring).

    ``loss``: a loss name or object (:func:`nolo.losses.get_loss`) scoring the clean predictions
    (not for the bandit protocol); ``regret_radius``: also record the regret against the best fixed
    linear predictor in that l2 ball.  ``progress(total=T)``: an optional progress-bar factory.
    ``record_every`` None: ``"log"`` for the bandit protocol, every round otherwise.
    """
    if protocol not in PROTOCOLS:
        raise ParameterError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    learner_protocol = getattr(learner, "protocol", protocol)
    if protocol == "bandit":
        if not isinstance(stream, BanditStream):
            raise ParameterError("the bandit protocol plays a BanditStream (a dataset, rounds, a feedback law, seed)")
        if loss is not None or regret_radius is not None:
            raise ParameterError("loss and regret_radius apply to the noisy_input and full_information protocols")
        if _compiled_bandit(learner):  # the compiled stream loop (also runs the full-information Perceptron)
            return _play_bandit(learner, stream, record_every)
        if learner_protocol != "bandit":
            raise ParameterError(f"{type(learner).__name__} plays the {learner_protocol!r} protocol, not 'bandit'")
        if stream.log:
            raise ParameterError("BanditStream(log=True) is kept by the compiled loop only (learners built on the "
                                 "bandit core, docs/bandit-core.md)")
        return _play_bandit_rounds(learner, stream, record_every, progress)
    if learner_protocol != protocol:
        raise ParameterError(f"{type(learner).__name__} plays the {learner_protocol!r} protocol, not {protocol!r}")
    if not isinstance(stream, Stream):
        raise ParameterError(f"the {protocol} protocol plays a Stream of clean rounds")
    if isinstance(loss, str):
        from nolo.losses import get_loss

        loss = get_loss(loss)
    if regret_radius is not None and loss is None:
        raise ParameterError("regret_radius needs a loss")
    if protocol == "noisy_input" and stream.copies is None and stream.noise is None:
        raise ParameterError("the noisy_input protocol needs stream.noise (or pre-drawn stream.copies)")
    X = stream.X
    Y = np.asarray(stream.y)
    T = stream.rounds
    points = record_points(T, 1 if record_every is None else record_every)
    # full information on a stream with copies: the learner takes the first noisy copy for the instance
    inputs = stream.copies if protocol == "noisy_input" else (X if stream.copies is None else stream.copies[:, 0])
    compiled = (inputs is not None and stream.seen_y is not None and hasattr(learner, "learn_stream")
                and progress is None)
    start = time.perf_counter()
    if compiled:
        margins = np.asarray(learner.learn_stream(inputs, stream.seen_y, clean=X), dtype=float)
        seconds = time.perf_counter() - start
        clock = None  # the compiled loop keeps no clock per row
        losses = np.asarray(loss.loss(margins, Y), dtype=float) if loss is not None else None
        wrong, queries = None, None
        if loss is not None and loss.kind == "classification":
            wrong = np.where(margins != 0, np.sign(margins), 1.0) != Y
    else:
        losses, wrong, queries, clock, seconds = _loop(learner, stream, protocol, loss, points, progress)
    frame = {"t": points}
    idx = points - 1
    if losses is not None:
        cum = np.cumsum(losses)[idx]
        starts = np.concatenate([[0], points[:-1]])
        frame["clean_loss"] = np.add.reduceat(losses, starts) / (points - starts)
        frame["avg_clean_loss"] = cum / points
        if regret_radius is not None:
            from nolo.oco.projections import L2Ball
            from nolo.oco.regret import regret_curve

            frame["regret"] = np.asarray(regret_curve(losses, X, Y.astype(float), loss, L2Ball(regret_radius),
                                                      checkpoints=points), dtype=float)
    if wrong is not None:
        cm = np.cumsum(wrong)[idx]
        frame["mistakes"] = cm.astype(np.int64)
        frame["error_rate"] = cm / points
    if queries is not None:
        frame["queries"] = np.cumsum(queries)[idx]
    frame.update(_timing(points, clock, seconds))
    return PlayResult(pd.DataFrame(frame), seconds, losses, wrong, queries)


def _timing(points: np.ndarray, clock: np.ndarray | None, seconds: float) -> dict:
    """``time_per_round`` (since the previous row) and ``elapsed`` at each row; without a clock per row
    (compiled loops) the run's mean time per round and its total in the last row."""
    if clock is None:
        return {"time_per_round": np.full(points.size, seconds / max(int(points[-1]), 1)),
                "elapsed": np.where(points == points[-1], seconds, np.nan)}
    return {"time_per_round": np.diff(np.concatenate([[0.0], clock])) / np.diff(np.concatenate([[0], points])),
            "elapsed": clock}


def _timed_rounds(T: int, points: np.ndarray, clock: np.ndarray, progress):
    """Rounds 0..T-1 of a per-round loop: after each round, ``clock[k]`` gets the seconds since the first round
    when round t + 1 is the recorded round ``points[k]``, and the progress bar (if any) advances."""
    bar = progress(total=T) if progress is not None else None
    start = time.perf_counter()
    k = 0
    try:
        for t in range(T):
            yield t
            if k < len(points) and t + 1 == points[k]:
                clock[k] = time.perf_counter() - start
                k += 1
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()


def _loop(learner, stream: Stream, protocol: str, loss, points: np.ndarray, progress):
    """The per-round loop: score the clean instance, then update (one oracle per round)."""
    from nolo.noise import Oracle, ReplayOracle, add_target_noise

    X, Y = stream.X, np.asarray(stream.y)
    T = stream.rounds
    classification = (loss is not None and loss.kind == "classification") or (
        loss is None and np.issubdtype(Y.dtype, np.integer))
    binary = classification and loss is not None
    losses = np.empty(T) if loss is not None else None
    wrong = np.zeros(T, dtype=bool) if classification else None
    queries = np.zeros(T, dtype=np.int64) if protocol == "noisy_input" else None
    seen = stream.seen_y
    noisy = protocol == "noisy_input"
    copies = stream.copies
    clock = np.empty(len(points))
    if not learner.is_initialized:
        learner.initialize(X.shape[1])  # so that round 1 is scored with the learner's initial predictor
    start = time.perf_counter()
    for t in _timed_rounds(T, points, clock, progress):
        x, y = X[t], Y[t]
        m = _margin(learner, x)
        if losses is not None:
            losses[t] = float(loss.loss(m, y))
        if wrong is not None:
            wrong[t] = (np.sign(m) if m != 0 else 1.0) != y if binary else m != y
        if seen is not None:
            y_seen = seen[t]
        elif stream.target_noise is not None:
            y_seen = add_target_noise(float(y), stream.target_noise, stream.target_rng, round=t)
        else:
            y_seen = y
        if noisy:
            if copies is not None:  # the per-round twin of the compiled learn_stream: the round's copies in order
                oracle = ReplayOracle(copies[t], item=f"round {t}")
            else:
                oracle = Oracle(x, stream.noise, stream.rng, round=t)
            learner.learn(oracle, y_seen)
            queries[t] = oracle.queries
        else:
            learner.learn(x if copies is None else copies[t, 0], y_seen)
    return losses, wrong, queries, clock, time.perf_counter() - start


def _play_bandit(learner, stream: BanditStream, record_every) -> PlayResult:
    from nolo.learners.bandit import run_stream

    points = record_points(int(stream.rounds), "log" if record_every is None else record_every)
    r = run_stream(learner, stream.X, stream.y, int(stream.rounds), stream.rho0, stream.rho1, order=stream.order,
                   seed=stream.seed, checkpoints=points, log=stream.log, representation=stream.representation,
                   feedback=stream.feedback)
    frame = pd.DataFrame({
        "t": r.checkpoints,
        "mistakes": r.played_mistakes,
        "error_rate": r.error_rate,
        "greedy_mistakes": r.greedy_mistakes,
        "greedy_error_rate": r.greedy_error_rate,
        **_timing(r.checkpoints, None, r.seconds),
    })
    return PlayResult(frame, r.seconds, extra=dict(r.extra))


def _compiled_bandit(learner) -> bool:
    """True for a learner the compiled :func:`~nolo.learners.bandit.run_stream` plays: one built on the bandit core
    (:class:`~nolo.learners.bandit._linear.LinearMulticlassMixin`, a compiled record per algorithm), wherever its
    class is defined -- a learner written in a user's module as docs/bandit-core.md's one-file example is played
    compiled too (its loop compiled in memory once per process, not cached on disk)."""
    from nolo.learners.bandit._linear import LinearMulticlassMixin

    return isinstance(learner, LinearMulticlassMixin)


def _play_bandit_rounds(learner, stream: BanditStream, record_every, progress) -> PlayResult:
    """Any other bandit learner, round by round through the same environment (same examples, same flips: the
    law's per-round rule draws the uniform the compiled loop draws)."""
    from nolo.learners.bandit import ClassificationBandit
    from nolo.noise.feedback_laws import warn_if_correction_biased

    env = ClassificationBandit(stream.X, stream.y, stream.rho0, stream.rho1, order=stream.order, seed=stream.seed,
                               representation=stream.representation, feedback=stream.feedback)
    # the compiled loop's FeedbackLawWarning, for a learner here that corrects with fixed rates (it reads only the
    # learner's rho0/estimate_rates and the law)
    warn_if_correction_biased(learner, env.feedback_law, stacklevel=3)
    T = int(stream.rounds)
    points = record_points(T, "log" if record_every is None else record_every)
    wrong = np.zeros(T, dtype=bool)
    clock = np.empty(len(points))
    start = time.perf_counter()
    for t in _timed_rounds(T, points, clock, progress):
        x = env.next()
        label = learner.act(x)
        wrong[t] = int(label) != int(env.y[env.current_index])
        learner.learn(x, label, env.feedback(label))
    seconds = time.perf_counter() - start
    cm = np.cumsum(wrong)[points - 1]
    frame = pd.DataFrame({"t": points, "mistakes": cm.astype(np.int64), "error_rate": cm / points,
                          **_timing(points, clock, seconds)})
    return PlayResult(frame, seconds, wrong=wrong)
