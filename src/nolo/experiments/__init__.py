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


def load_results(directory, kind: str = "run"):
    """All runs stored under ``directory`` (searched recursively) as one pandas DataFrame.

    ``kind``: "run" (learner runs), "map" (``Context.map`` tasks) or "all".
    """
    from nolo.experiments.store import load_results as _load

    return _load(directory, kind=kind)
