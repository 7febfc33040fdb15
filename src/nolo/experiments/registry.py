"""The experiment registry: what ``nolo reproduce`` knows how to run.

The engine knows no paper.  A paper package registers itself with :func:`register_paper` (its name and the
plain-language paragraphs of the report) and each of its experiments with the :func:`experiment` decorator::

    from nolo.experiments import experiment, register_paper, ExperimentResult

    register_paper("mypaper", name="Me et al., My Paper (2026)", reproduced="...")

    @experiment(paper="mypaper", id="fig1", title="Kernel learner vs noise level (Fig. 1)")
    def fig1(ctx):
        ...
        return ExperimentResult(figures=..., claims=...)

An experiment that has a horizon in rounds declares ``takes_rounds=True`` and reads it with
``ctx.horizon(quick, paper)`` / ``ctx.horizons(quick_list, paper_list)``, so that ``nolo reproduce
--rounds N`` overrides it; ``nolo reproduce`` refuses ``--rounds`` for the others (their sizes are
estimator draws or samples, not rounds).

The experiments live in :data:`EXPERIMENTS`, a :class:`nolo._registry.Registry` keyed ``"paper/id"``
(the one name -> object mechanism of nolo), the papers in :data:`PAPERS`.

Which packages hold papers is found, not known: :func:`load_experiment_modules` calls every entry point of the
group ``nolo.papers``.  The distribution ``nolo`` declares ``nolo.papers:register``, which imports the
demo, CSS10, CSS11, AM, the OCO notes and the practice experiments; another distribution adds its papers the same
way, in its own ``pyproject.toml``::

    [project.entry-points."nolo.papers"]
    mypaper = "mypackage.experiments:register"
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Callable

from nolo._registry import Registry
from nolo.exceptions import ParameterError

__all__ = [
    "PAPERS",
    "EXPERIMENTS",
    "ENTRY_POINT_GROUP",
    "Paper",
    "register_paper",
    "papers",
    "check_paper",
    "Experiment",
    "experiment",
    "register_experiment",
    "get_experiments",
    "get_experiment",
    "load_experiment_modules",
    "clear_registry",
]

#: the entry-point group whose callables register the installed papers (see :func:`load_experiment_modules`)
ENTRY_POINT_GROUP = "nolo.papers"


@dataclass(frozen=True)
class Paper:
    """A paper (or a collection of experiments, such as the demo) and the report's paragraphs about it.

    ``rank`` orders the papers in reports and listings (then registration order); ``reproduced``,
    ``not_reproduced`` and ``adds`` are the plain-language paragraph at the top of its part of the report."""

    id: str
    name: str
    reproduced: str = ""
    not_reproduced: str = ""
    adds: str = ""
    rank: int = 1_000


#: paper id -> :class:`Paper`
PAPERS = Registry("paper")

_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,47}$")


def register_paper(id: str, *, name: str, reproduced: str = "", not_reproduced: str = "", adds: str = "",
                   rank: int = 1_000) -> Paper:
    """Register paper ``id`` (re-registering the same id replaces it: a package imported again)."""
    if not isinstance(id, str) or not _ID_RE.match(id) or id == "all":
        raise ParameterError(f"paper id must be a short id of lowercase letters, digits, '-' or '_' (not 'all'), "
                             f"got {id!r}")
    for field, value in (("name", name), ("reproduced", reproduced), ("not_reproduced", not_reproduced),
                         ("adds", adds)):
        if not isinstance(value, str):
            raise ParameterError(f"{field} must be a string, got {type(value).__name__}")
    if isinstance(rank, bool) or not isinstance(rank, int):
        raise ParameterError(f"rank must be an integer, got {rank!r}")
    return PAPERS.register(id, Paper(id, name or id, reproduced, not_reproduced, adds, rank), replace=True)


def papers() -> tuple[str, ...]:
    """The registered papers' ids, in report order (``rank``, then registration order)."""
    names = list(PAPERS.names())
    return tuple(sorted(names, key=lambda p: (PAPERS[p].rank, names.index(p))))


def check_paper(paper: str, allow_all: bool = True) -> str:
    """``paper`` if it is a registered paper (or ``"all"`` where allowed); else ParameterError naming them."""
    if not papers():
        raise ParameterError(f"no papers are registered, so paper {paper!r} cannot be run: the installed papers register "
                             f"through the entry-point group {ENTRY_POINT_GROUP!r} of their package's metadata "
                             "(nolo's own: pip install nolo, or pip install -e . in a checkout), or call "
                             "register_paper before registering experiments")
    allowed = (("all",) if allow_all else ()) + papers()
    if paper not in allowed:
        raise ParameterError(f"paper must be one of {', '.join(map(repr, allowed))}, got {paper!r}")
    return paper


@dataclass(frozen=True)
class Experiment:
    """One registered experiment.

    ``func(ctx) -> ExperimentResult`` does the work; ``quick_seeds`` /
    ``full_seeds`` are the number of seeds the context hands it under
    ``--quick`` and at paper scale; ``takes_rounds``: whether its size is a
    horizon in rounds that ``--rounds N`` may override (read through
    :meth:`Context.horizon` / :meth:`Context.horizons`).
    """

    paper: str
    id: str
    title: str
    func: Callable
    quick_seeds: int = 3
    full_seeds: int = 10
    description: str = ""
    takes_rounds: bool = False

    @property
    def key(self) -> str:
        return f"{self.paper}/{self.id}"


#: ``"paper/id"`` -> :class:`Experiment`
EXPERIMENTS = Registry("experiment")


def register_experiment(
    func: Callable,
    *,
    paper: str,
    id: str,
    title: str,
    quick_seeds: int = 3,
    full_seeds: int = 10,
    description: str | None = None,
    takes_rounds: bool = False,
) -> Experiment:
    """Register ``func`` as experiment ``paper/id`` (the function form of :func:`experiment`)."""
    if paper not in PAPERS:
        raise ParameterError(f"paper {paper!r} is not registered: call register_paper({paper!r}, name=...) before "
                             f"registering its experiments (registered: {', '.join(papers()) or 'none'})")
    if not isinstance(id, str) or not _ID_RE.match(id):
        raise ParameterError(
            f"id must be a short id of lowercase letters, digits, '-' or '_' (at most 48 characters), got {id!r}"
        )
    if not isinstance(title, str) or not title.strip():
        raise ParameterError(f"title must be a non-empty string, got {title!r}")
    for name, n in (("quick_seeds", quick_seeds), ("full_seeds", full_seeds)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ParameterError(f"{name} must be an integer >= 1, got {n!r}")
    if not isinstance(takes_rounds, bool):
        raise ParameterError(f"takes_rounds must be True or False, got {takes_rounds!r}")
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
        takes_rounds=takes_rounds,
    )
    old = EXPERIMENTS[exp.key] if exp.key in EXPERIMENTS else None
    if old is not None and (old.func.__module__, old.func.__qualname__) != (func.__module__, func.__qualname__):
        raise ParameterError(
            f"experiment {exp.key!r} is already registered by {old.func.__module__}.{old.func.__qualname__}"
        )
    return EXPERIMENTS.register(exp.key, exp, replace=True)  # the same function re-imported replaces itself


def experiment(
    *, paper: str, id: str, title: str, quick_seeds: int = 3, full_seeds: int = 10, description: str | None = None,
    takes_rounds: bool = False,
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
            takes_rounds=takes_rounds,
        )
        return func

    return deco


def clear_registry() -> None:
    """Forget every registered experiment and paper (for tests)."""
    EXPERIMENTS.clear()
    PAPERS.clear()


def load_experiment_modules(modules: tuple[str, ...] | None = None) -> list[str]:
    """Register the installed papers; returns the names of what was loaded.

    Without ``modules``, call every entry point of the group :data:`ENTRY_POINT_GROUP` (``nolo``'s own
    first, then the others by name) and return their names.

    With ``modules`` (dotted module names), import those instead: each registers its paper and experiments on
    import.  A module is skipped only when importing it raises ``ModuleNotFoundError`` whose ``.name`` is
    that very module; any other error -- a syntax error, a missing dependency inside it -- propagates.
    """
    if modules is None:
        eps = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name != "nolo", ep.name))
        for ep in eps:
            ep.load()()
        return [ep.name for ep in eps]
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
    check_paper(paper)
    exps = [e for _, e in EXPERIMENTS.items()]
    if paper != "all":
        exps = [e for e in exps if e.paper == paper]
    order = {p: i for i, p in enumerate(papers())}
    return sorted(exps, key=lambda e: order[e.paper])  # stable: registration order within a paper


def get_experiment(key: str) -> Experiment:
    """The experiment registered as ``"paper/id"``."""
    return EXPERIMENTS.get(key)
