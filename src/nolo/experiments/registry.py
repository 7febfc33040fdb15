"""The experiment registry: what ``nolo reproduce`` knows how to run.

A paper module (``nolo.experiments.css10``, ``...css11``, ``...am``, and the
built-in ``nolo.experiments.demo``) registers each of its experiments with the
:func:`experiment` decorator::

    from nolo.experiments import experiment, ExperimentResult

    @experiment(paper="css10", id="fig1", title="Kernel learner vs noise level (CSS10 Fig. 1)")
    def fig1(ctx):
        ...
        return ExperimentResult(figures=..., claims=...)

``nolo reproduce`` imports the modules of :data:`EXPERIMENT_MODULES` in order;
a module that does not exist yet is skipped (only a ``ModuleNotFoundError``
naming exactly that module), any other import error propagates.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Callable

from nolo.exceptions import ParameterError

__all__ = [
    "PAPERS",
    "EXPERIMENT_MODULES",
    "Experiment",
    "experiment",
    "register_experiment",
    "get_experiments",
    "get_experiment",
    "load_experiment_modules",
    "clear_registry",
]

#: papers an experiment may belong to, in report order ("demo" is the built-in demonstration).  The one
#: list: the CLI's choices, the report order and the modules below derive from it, so that a new paper is
#: one word here (and its module ``nolo.experiments.<paper>``).
PAPERS: tuple[str, ...] = ("demo", "css10", "css11", "am", "oco", "practice")

#: modules imported by ``nolo reproduce``, in report order.
EXPERIMENT_MODULES: tuple[str, ...] = tuple(f"nolo.experiments.{p}" for p in PAPERS)

_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,47}$")


@dataclass(frozen=True)
class Experiment:
    """One registered experiment.

    ``func(ctx) -> ExperimentResult`` does the work; ``quick_seeds`` /
    ``full_seeds`` are the number of seeds the context hands it under
    ``--quick`` and at paper scale.
    """

    paper: str
    id: str
    title: str
    func: Callable
    quick_seeds: int = 3
    full_seeds: int = 10
    description: str = ""

    @property
    def key(self) -> str:
        return f"{self.paper}/{self.id}"


_REGISTRY: dict[str, Experiment] = {}


def register_experiment(
    func: Callable,
    *,
    paper: str,
    id: str,
    title: str,
    quick_seeds: int = 3,
    full_seeds: int = 10,
    description: str | None = None,
) -> Experiment:
    """Register ``func`` as experiment ``paper/id`` (the function form of :func:`experiment`)."""
    if paper not in PAPERS:
        raise ParameterError(f"paper must be one of {', '.join(map(repr, PAPERS))}, got {paper!r}")
    if not isinstance(id, str) or not _ID_RE.match(id):
        raise ParameterError(
            f"id must be a short id of lowercase letters, digits, '-' or '_' (at most 48 characters), got {id!r}"
        )
    if not isinstance(title, str) or not title.strip():
        raise ParameterError(f"title must be a non-empty string, got {title!r}")
    for name, n in (("quick_seeds", quick_seeds), ("full_seeds", full_seeds)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ParameterError(f"{name} must be an integer >= 1, got {n!r}")
    if not callable(func):
        raise ParameterError(f"the experiment function must be callable, got {func!r}")
    exp = Experiment(
        paper=paper,
        id=id,
        title=title,
        func=func,
        quick_seeds=quick_seeds,
        full_seeds=full_seeds,
        description=(description if description is not None else (func.__doc__ or "").strip()),
    )
    old = _REGISTRY.get(exp.key)
    if old is not None and (old.func.__module__, old.func.__qualname__) != (func.__module__, func.__qualname__):
        raise ParameterError(
            f"experiment {exp.key!r} is already registered by {old.func.__module__}.{old.func.__qualname__}"
        )
    _REGISTRY[exp.key] = exp
    return exp


def experiment(
    *, paper: str, id: str, title: str, quick_seeds: int = 3, full_seeds: int = 10, description: str | None = None
) -> Callable[[Callable], Callable]:
    """Decorator: register the decorated ``func(ctx) -> ExperimentResult``; returns ``func`` unchanged."""

    def deco(func: Callable) -> Callable:
        register_experiment(
            func,
            paper=paper,
            id=id,
            title=title,
            quick_seeds=quick_seeds,
            full_seeds=full_seeds,
            description=description,
        )
        return func

    return deco


def clear_registry() -> None:
    """Forget every registered experiment (for tests)."""
    _REGISTRY.clear()


def load_experiment_modules(modules: tuple[str, ...] = EXPERIMENT_MODULES) -> list[str]:
    """Import the experiment modules; returns the names of those that exist.

    A module is skipped only when importing it raises ``ModuleNotFoundError``
    whose ``.name`` is that very module (it has not been written yet); any
    other error -- a syntax error, a missing dependency inside it -- propagates.
    """
    loaded = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        loaded.append(name)
    return loaded


def get_experiments(paper: str = "all") -> list[Experiment]:
    """Registered experiments of ``paper`` ("all" for every paper), in paper order then registration order."""
    if paper != "all" and paper not in PAPERS:
        raise ParameterError(f"paper must be 'all' or one of {', '.join(map(repr, PAPERS))}, got {paper!r}")
    exps = list(_REGISTRY.values())
    if paper != "all":
        exps = [e for e in exps if e.paper == paper]
    order = {p: i for i, p in enumerate(PAPERS)}
    return sorted(exps, key=lambda e: order[e.paper])  # stable: registration order within a paper


def get_experiment(key: str) -> Experiment:
    """The experiment registered as ``"paper/id"``."""
    try:
        return _REGISTRY[key]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none registered"
        raise ParameterError(f"unknown experiment {key!r}; known: {known}") from None
