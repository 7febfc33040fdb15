"""Experiments: declarative specs, the runner, resumable sweeps, the results store, plots and reports.

See ``docs/experiments.md``.  The registry API the paper modules use::

    from nolo.experiments import experiment, ExperimentResult, Claim, PaperRow
"""

from __future__ import annotations

from nolo.experiments.context import Context
from nolo.experiments.registry import (
    EXPERIMENT_MODULES,
    PAPERS,
    Experiment,
    experiment,
    get_experiment,
    get_experiments,
    load_experiment_modules,
    register_experiment,
)
from nolo.experiments.result import Claim, ExperimentResult, Figure, PaperRow

__all__ = [
    "EXPERIMENT_MODULES",
    "PAPERS",
    "Claim",
    "Context",
    "Experiment",
    "ExperimentResult",
    "Figure",
    "PaperRow",
    "experiment",
    "get_experiment",
    "get_experiments",
    "load_experiment_modules",
    "register_experiment",
    "load_results",
]


def load_results(directory, kind: str = "all", *, failed: bool = False):
    """Every run stored under ``directory`` (searched recursively; any nolo output directory) as one tidy
    pandas DataFrame, with an ``experiment`` column naming each run's directory.

    ``kind``: "all" (default), "run" (learner runs of specs) or "map" (experiment tasks); ``failed=True``
    lists the runs that failed (NumericalError) instead.  See :func:`nolo.experiments.store.load_results`.
    """
    from nolo.experiments.store import load_results as _load

    return _load(directory, kind=kind, failed=failed)
