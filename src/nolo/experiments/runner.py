"""The runner: plays one learner against one environment for T rounds and records metrics.

Protocols (``spec.protocol``):

* ``noisy_input`` (CSS10/CSS11): each round the hidden clean ``(x_t, y_t)`` is
  drawn, the learner gets an :class:`nolo.noise.Oracle` of noisy copies of
  ``x_t`` (and ``y_t``, plus ``target_noise`` if given): ``learn(oracle, y)``;
* ``full_information``: ``learn(x_t, y_t)``;
* ``bandit`` (AM): ``label = act(x_t)``, the true bit ``[label == y_t]`` goes
  through the feedback channel (if any), then ``learn(x_t, label, bit)``.

Before each update the learner's current predictor is scored on the *clean*
instance.  Every ``record_every`` rounds (and at ``T``) one row is recorded:

``t``; ``clean_loss`` (mean clean loss over the rounds since the last row) and
``avg_clean_loss`` (over rounds 1..t); ``mistakes`` (cumulative) and
``error_rate`` (= mistakes / t); ``queries`` (cumulative oracle queries);
``regret`` (cumulative clean loss minus that of the best fixed predictor in the
l2 ball of ``regret.radius`` on rounds 1..t, by :func:`nolo.oco.regret.regret_curve`);
``time_per_round`` (mean wall seconds per round since the last row) and
``elapsed``.  Randomness: the data, the input noise, the target noise and the
feedback flips draw from independent streams spawned from the run's seed, and
a learner with a ``seed`` parameter left unset gets one derived from it -- so
two learners of a spec see the same data, and a run is a pure function of
``(spec, learner, seed)`` (except the timing columns).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nolo.exceptions import ParameterError
from nolo.experiments.environments import make_stream
from nolo.experiments.spec import ExperimentSpec, build_params, resolve_class
from nolo.random import spawn

__all__ = ["RunResult", "run_learner", "record_points", "TIMING_COLUMNS"]

#: columns that depend on the machine, not on (spec, learner, seed).
TIMING_COLUMNS = ("time_per_round", "elapsed")


@dataclass
class RunResult:
    """The recorded metrics (``frame``) and wall-clock seconds of one run."""

    frame: pd.DataFrame
    seconds: float


def record_points(rounds: int, every: int) -> np.ndarray:
    """Rounds (1-based) at which a row is recorded: every ``every`` rounds, and always ``rounds``."""
    pts = np.arange(every, rounds + 1, every)
    if pts.size == 0 or pts[-1] != rounds:
        pts = np.append(pts, rounds)
    return pts.astype(np.int64)


def _learner_seed(seed: int) -> int:
    return int(np.random.SeedSequence([int(seed), 7]).generate_state(1)[0])


def _build_learner(spec: ExperimentSpec, name: str, seed: int):
    matches = [lr for lr in spec.learners if lr.name == name]
    if not matches:
        raise ParameterError(f"learner must be one of {', '.join(lr.name for lr in spec.learners)}, got {name!r}")
    lr = matches[0]
    cls = resolve_class(lr.cls, "learner")
    params = build_params(lr.params)
    if "seed" in cls().get_params(deep=False) and params.get("seed") is None:
        params["seed"] = _learner_seed(seed)
    return cls(**params)


def _margin(learner, x: np.ndarray) -> float:
    f = getattr(learner, "decision_function", None) or learner.predict
    return float(np.asarray(f(x[None, :])).reshape(-1)[0])


def run_learner(spec: ExperimentSpec, learner: str, seed: int, *, progress=None) -> RunResult:
    """Play learner ``learner`` (its name in ``spec.learners``) of a concrete spec (no grid) with ``seed``."""
    if spec.grid:
        raise ParameterError("run_learner needs a concrete spec: expand spec.grid with spec.settings() first")
    T = spec.rounds
    metrics = spec.effective_metrics()
    data_rng, noise_rng, target_rng, feedback_rng = spawn(int(seed), 4)
    X, Y = make_stream(spec.environment, T, data_rng)
    model = _build_learner(spec, learner, seed)
    env = spec.environment
    noise = spec.build_component(env.noise, "noise") if env.noise is not None else None
    target_noise = spec.build_component(env.target_noise, "noise") if env.target_noise is not None else None
    channel = spec.build_component(env.feedback, "feedback") if env.feedback is not None else None
    loss = None
    if spec.loss is not None and spec.protocol != "bandit":
        from nolo.losses import get_loss

        loss = get_loss(spec.loss)
    want_margins = loss is not None
    classification = spec.protocol == "bandit" or (loss is not None and loss.kind == "classification") or (
        loss is None and np.issubdtype(np.asarray(Y).dtype, np.integer))
    from nolo.noise import Oracle, add_target_noise

    margins = np.empty(T) if want_margins else None
    wrong = np.zeros(T, dtype=bool)
    queries = np.zeros(T, dtype=np.int64)
    points = record_points(T, spec.record_every)
    clock = np.empty(len(points))
    is_binary = classification and loss is not None

    if not model.is_initialized:
        model.initialize(X.shape[1])  # so that round 1 is scored with the learner's initial predictor
    bar = progress(total=T) if progress is not None else None
    start = time.perf_counter()
    k = 0
    for t in range(T):
        x, y = X[t], Y[t]
        if spec.protocol == "bandit":
            label = model.act(x)
            correct = int(label == y)
            wrong[t] = not correct
            bit = channel.transmit(correct, feedback_rng) if channel is not None else correct
            model.learn(x, label, bit)
        else:
            m = _margin(model, x)
            if want_margins:
                margins[t] = m
            if classification:
                wrong[t] = (np.sign(m) if m != 0 else 1.0) != y if is_binary else m != y
            y_seen = y if target_noise is None else add_target_noise(float(y), target_noise, target_rng, round=t)
            if spec.protocol == "noisy_input":
                oracle = Oracle(x, noise, noise_rng, round=t)
                model.learn(oracle, y_seen)
                queries[t] = oracle.queries
            else:
                model.learn(x, y_seen)
        if t + 1 == points[k]:
            clock[k] = time.perf_counter() - start
            k += 1
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - start

    idx = points - 1
    frame = {"t": points}
    if "clean_loss" in metrics or "regret" in metrics:
        losses = np.asarray(loss.loss(margins, Y.astype(float)), dtype=float)
        cum = np.cumsum(losses)[idx]
        if "clean_loss" in metrics:
            prev = np.concatenate([[0.0], cum[:-1]])
            frame["clean_loss"] = (cum - prev) / np.diff(np.concatenate([[0], points]))
            frame["avg_clean_loss"] = cum / points
        if "regret" in metrics:
            from nolo.oco.projections import L2Ball
            from nolo.oco.regret import regret_curve

            frame["regret"] = np.asarray(
                regret_curve(losses, X, Y.astype(float), loss, L2Ball(spec.regret.radius), checkpoints=points),
                dtype=float)
    if "mistakes" in metrics:
        if classification:
            cm = np.cumsum(wrong)[idx]
            frame["mistakes"] = cm.astype(np.int64)
            frame["error_rate"] = cm / points
    if "queries" in metrics:
        frame["queries"] = np.cumsum(queries)[idx]
    if "time" in metrics:
        frame["time_per_round"] = np.diff(np.concatenate([[0.0], clock])) / np.diff(np.concatenate([[0], points]))
        frame["elapsed"] = clock
    return RunResult(pd.DataFrame(frame), seconds)
