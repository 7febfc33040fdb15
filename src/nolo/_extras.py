"""Optional packages: what the core install leaves out, and the one-line error that names the pip command adding it.

``pip install nolo`` installs the learners, estimators and data loaders (NumPy, SciPy, numba, scikit-learn, pandas).
The experiment platform, Dask, the command line, HDF5, Parquet and downloads are extras (``pyproject.toml``); a
feature that needs one calls :func:`require` (or :func:`check` for a whole package) where it imports it, so a
missing extra reads as one line, e.g. ``the experiment platform needs pydantic: pip install 'nolo[experiments]'``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

from nolo.exceptions import MissingExtraError

__all__ = ["EXTRAS", "check", "installed_versions", "missing", "missing_message", "require"]

#: extra -> the top-level modules it provides (the distributions are listed in ``pyproject.toml``)
EXTRAS: dict[str, tuple[str, ...]] = {
    "experiments": ("pydantic", "yaml", "jinja2", "docutils", "matplotlib", "pyarrow", "tqdm", "tomli_w"),
    "dask": ("dask", "distributed"),
    "cli": ("click", "rich", "tqdm"),
    "hdf5": ("h5py",),
    "parquet": ("pyarrow",),
    "fetch": ("pooch",),
}


def _message(what: str, modules, extra: str) -> str:
    return f"{what} needs {', '.join(modules)}, which the core install leaves out: pip install 'nolo[{extra}]'"


def _present(module: str) -> bool:
    if module in sys.modules:  # imported already, or blocked (None)
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing or blocked
        return False


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` (a key of :data:`EXTRAS`) that cannot be imported here, without importing any."""
    if extra not in EXTRAS:
        raise KeyError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    return [m for m in EXTRAS[extra] if not _present(m)]


def missing_message(extra: str, what: str) -> str | None:
    """The one-line message :func:`check` raises, or None when every module of ``extra`` is importable."""
    absent = missing(extra)
    return _message(what, absent, extra) if absent else None


def check(extra: str, what: str) -> None:
    """Raise :class:`~nolo.exceptions.MissingExtraError` naming ``pip install 'nolo[extra]'`` when any module of
    ``extra`` is absent (``what``: the feature that needs it, the message's subject).  Imports nothing."""
    message = missing_message(extra, what)
    if message is not None:
        raise MissingExtraError(message)


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module`` (dotted names allowed) and return it; when it is not installed, raise
    :class:`~nolo.exceptions.MissingExtraError` naming ``pip install 'nolo[extra]'``."""
    if extra not in EXTRAS:
        raise KeyError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        if exc.name is not None and exc.name.split(".")[0] not in (top, *EXTRAS[extra]):
            raise  # the package is there but one of its own dependencies is broken: show that error as it is
        raise MissingExtraError(_message(what, [top], extra)) from None


def installed_versions(names) -> list[tuple[str, str]]:
    """``[(name, version)]`` of the distributions ``names``, ``"absent"`` for one not installed (what a run or a
    measurement records of the peers it used).

    >>> installed_versions(["numpy", "no-such-distribution"])[1]
    ('no-such-distribution', 'absent')
    """
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in names:
        try:
            out.append((name, version(name)))
        except PackageNotFoundError:
            out.append((name, "absent"))
    return out
