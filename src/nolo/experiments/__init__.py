"""The experiment engine: the registry, the round loop (``play``), resumable sweeps, declarative specs, results,
reports.  It knows no paper: the papers are packages of their own (:mod:`nolo.papers`) found through an entry point.

See ``docs/experiments.md``.  A paper experiment is ``func(ctx)`` registered with :func:`experiment`;
it maps module-level tasks with ``ctx.map`` and each task plays learners on a stream with
:func:`play` (the bandit protocol in the compiled :func:`nolo.learners.bandit.run_stream`).
A spec (``nolo run``) is turned into the same ``play`` call by :mod:`nolo.experiments.runner`::

    from nolo.experiments import experiment, ExperimentResult, Claim, PaperRow, play, Stream, BanditStream
"""

from __future__ import annotations

from nolo._extras import check

check("experiments", "the experiment platform")  # one line naming the pip command, before any module's traceback

from nolo.experiments.context import Context  # noqa: E402
from nolo.experiments.play import BanditStream, PlayResult, Stream, play
from nolo.experiments.registry import (
    PAPERS,
    Experiment,
    Paper,
    experiment,
    get_experiment,
    get_experiments,
    load_experiment_modules,
    papers,
    register_experiment,
    register_paper,
)
from nolo.experiments.result import Claim, ExperimentResult, Figure, PaperRow

__all__ = [
    "BanditStream",
    "PAPERS",
    "Claim",
    "Context",
    "Experiment",
    "ExperimentResult",
    "Figure",
    "PaperRow",
    "PlayResult",
    "Stream",
    "experiment",
    "get_experiment",
    "get_experiments",
    "load_experiment_modules",
    "Paper",
    "papers",
    "register_experiment",
    "register_paper",
    "load_results",
    "play",
]


def load_results(directory, kind: str = "all", *, failed: bool = False):
    """Every run stored under ``directory`` (searched recursively; any nolo output directory) as one tidy
    pandas DataFrame, with an ``experiment`` column naming each run's directory.

    ``kind``: "all" (default), "run" (learner runs of specs) or "map" (experiment tasks); ``failed=True``
    lists the runs that failed (NumericalError) instead.  See :func:`nolo.experiments.store.load_results`.
    """
    from nolo.experiments.store import load_results as _load

    return _load(directory, kind=kind, failed=failed)
