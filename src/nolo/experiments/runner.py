"""A declarative spec's run: build the learner and the stream a spec describes and :func:`~nolo.experiments.play.play` them.

This is what ``nolo run`` (through :func:`nolo.experiments.sweep.run_sweep`) calls for each
(concrete spec, learner, seed); the round loop and the metrics are :mod:`nolo.experiments.play`'s.

Randomness: the data, the input noise, the target noise and the feedback flips draw from
independent streams spawned from the run's seed, and a learner with a ``seed`` parameter left
unset gets one derived from it -- so two learners of a spec see the same data, and a run is a
pure function of ``(spec, learner, seed)`` (except the timing columns).

The bandit protocol runs in the compiled :func:`nolo.learners.bandit.run_stream` (nolo's
multiclass learners; any other bandit learner round by round through the same environment) with
the feedback law of ``environment.feedback`` (any :class:`nolo.noise.FeedbackLaw`: ``FlipChannel``,
``FlipMatrix``, ``ContextFlips``; a ``ContextFlips`` given per-row rules is bound to the rows the
environment shows); a generator's rows are visited in order, a dataset's in the bandit
environment's order (``environment.params.draw``: ``replace``, ``permute`` or ``cycle``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nolo.exceptions import ParameterError
from nolo.experiments.environments import load_environment_dataset, make_stream
from nolo.experiments.play import TIMING_COLUMNS, BanditStream, Stream, play, record_points
from nolo.experiments.spec import ExperimentSpec, _param_path, build_params, resolve_class
from nolo.random import spawn

__all__ = ["RunResult", "run_learner", "record_points", "TIMING_COLUMNS"]

_METRIC_COLUMNS = {
    "clean_loss": ("clean_loss", "avg_clean_loss"),
    "mistakes": ("mistakes", "error_rate", "greedy_mistakes", "greedy_error_rate"),
    "queries": ("queries",),
    "regret": ("regret",),
    "time": TIMING_COLUMNS,
}


@dataclass
class RunResult:
    """The recorded metrics (``frame``) and wall-clock seconds of one run."""

    frame: pd.DataFrame
    seconds: float


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


def _feedback_law(spec: ExperimentSpec, X, Y):
    """The feedback law of ``environment.feedback`` for the data ``X``, ``Y`` (None without one): built, bound to X
    (a ContextFlips with per-row rules) and checked against the data, a ParameterError naming the spec's field."""
    comp = spec.environment.feedback
    if comp is None:
        return None
    from nolo.noise.feedback_laws import FeedbackLaw

    law = spec.build_component(comp, "feedback")
    if not isinstance(law, FeedbackLaw):
        raise ParameterError(f"environment.feedback.class: {comp.cls} is not a feedback law (nolo.noise.FeedbackLaw: "
                             "FlipChannel, FlipMatrix, ContextFlips)")
    try:
        law = law.bind(X)
        law.check_environment(X.shape[0], int(np.max(Y)) + 1)
    except ParameterError as exc:
        where = _param_path("environment.feedback.params", comp.params, exc)
        raise ParameterError(f"{where}: {exc} (the data has {X.shape[0]} rows, labels 0..{int(np.max(Y))})") from None
    return law


def _check_classes(spec: ExperimentSpec, name: str, model, y) -> None:
    n = getattr(model, "n_classes", None)
    K = int(np.max(y)) + 1
    if n is not None and int(n) < K:
        i = [lr.name for lr in spec.learners].index(name)
        src = spec.environment.dataset or spec.environment.generator
        raise ParameterError(f"learners[{i}].params.n_classes: {name!r} has n_classes={n}, but the labels of "
                             f"{src!r} run 0..{K - 1} ({K} classes); set n_classes >= {K}")


def _check_law_labels(spec: ExperimentSpec, name: str, model, law) -> None:
    """The law covers the labels the learner plays (a FlipMatrix's Q at least n_classes wide), before the run."""
    n = getattr(model, "n_classes", None)
    if law is None or n is None:
        return
    i = [lr.name for lr in spec.learners].index(name)
    try:
        law.check_labels(int(n), f"learners[{i}].params.n_classes={n}")
    except ParameterError as exc:
        where = _param_path("environment.feedback.params", spec.environment.feedback.params, exc)
        raise ParameterError(f"{where}: {exc}") from None


def run_learner(spec: ExperimentSpec, learner: str, seed: int, *, progress=None) -> RunResult:
    """Play learner ``learner`` (its name in ``spec.learners``) of a concrete spec (no grid) with ``seed``."""
    if spec.grid:
        raise ParameterError("run_learner needs a concrete spec: expand spec.grid with spec.settings() first")
    T = spec.rounds
    data_rng, noise_rng, target_rng, feedback_rng = spawn(int(seed), 4)
    env = spec.environment
    model = _build_learner(spec, learner, seed)
    if spec.protocol == "bandit":
        if env.dataset is not None:
            X, Y, order = load_environment_dataset(env)
            stream = BanditStream(X, Y, T, order=order, seed=data_rng, feedback=_feedback_law(spec, X, Y))
        else:
            X, Y = make_stream(env, T, data_rng)
            stream = BanditStream(X, Y, T, order="cycle", seed=feedback_rng, feedback=_feedback_law(spec, X, Y))
        _check_classes(spec, learner, model, Y)
        _check_law_labels(spec, learner, model, stream.feedback)
        res = play(model, stream, "bandit", spec.record_every, progress=progress)
    else:
        X, Y = make_stream(env, T, data_rng)
        noise = spec.build_component(env.noise, "noise") if env.noise is not None else None
        target_noise = spec.build_component(env.target_noise, "noise") if env.target_noise is not None else None
        stream = Stream(X, Y, noise=noise, rng=noise_rng, target_noise=target_noise, target_rng=target_rng)
        res = play(model, stream, spec.protocol, spec.record_every, loss=spec.loss,
                   regret_radius=spec.regret.radius if spec.regret is not None else None, progress=progress)
    keep = ["t"] + [c for m in spec.effective_metrics() for c in _METRIC_COLUMNS[m]]
    frame = res.frame[[c for c in res.frame.columns if c in keep]]
    return RunResult(frame.reset_index(drop=True), res.seconds)
