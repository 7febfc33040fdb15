"""Configurable objects: parameters in, JSON-able configuration out, and back.

Every object that a user configures (a loss, a kernel, a noise model, a step
rule, a learner) derives from :class:`Configurable`.  It follows the
scikit-learn contract -- the constructor stores its arguments under the same
names and does nothing else, ``get_params``/``set_params`` work -- and adds

* ``to_config()`` -> ``{"class": "nolo.losses.SmoothedHinge", "params": {...}}``,
  recursively for nested configurables, numbers, strings, lists and arrays;
* ``Configurable.from_config(cfg)``, which rebuilds the object.  Only classes
  that derive from :class:`Configurable` (and so are in the registry) can be
  named: loading a configuration never imports or runs arbitrary code.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from nolo._registry import Registry
from nolo.exceptions import ParameterError, PersistenceError

__all__ = ["Configurable", "encode_value", "decode_value", "registered_class", "moved_path", "MOVED_MODULES"]

#: "module.QualName" -> Configurable subclass, filled by ``Configurable.__init_subclass__``
CLASSES = Registry("configurable class", error=PersistenceError)


def _class_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


#: modules that moved (named by method, learners grouped by family): old dotted prefix -> new.
#: A configuration or model file stores its classes as "module.QualName"; one saved under an old module path
#: still loads (:func:`registered_class` reads it through :func:`moved_path`).  The old import paths are gone.
MOVED_MODULES: dict[str, str] = {
    "nolo.learners.kernel.algorithm1": "nolo.learners.kernel.noisy_kernel",
    "nolo.learners.css11_kernel": "nolo.learners.kernel.gaussian_noise",
    "nolo.learners.oco_examples": "nolo.learners.convex",
    "nolo.sklearn_api.css10": "nolo.sklearn_api.noisy_kernel",
    "nolo.sklearn_api.css11": "nolo.sklearn_api.known_noise",
    "nolo.learners.bandit.environment": "nolo.learners.bandit.simulator",
    # the papers, out of the experiment engine (a paper's own classes, e.g. CSS10's two-point noise)
    **{f"nolo.experiments.{p}": f"nolo.papers.{p}" for p in ("demo", "css10", "css11", "am", "oco", "practice")},
}


def moved_path(path: str) -> str:
    """``path`` ("module.QualName") with a moved module's old prefix (:data:`MOVED_MODULES`) replaced by the new
    one; any other path unchanged.  Prefixes match whole dotted components only."""
    for old, new in MOVED_MODULES.items():
        if path.startswith(old + "."):
            return new + path[len(old):]
    return path


def _import_nolo_module(path: str) -> None:
    """Import the deepest ``nolo`` module that ``path`` ("module.QualName") names, registering its classes."""
    module = path.rsplit(".", 1)[0]
    while module.startswith("nolo"):
        try:
            importlib.import_module(module)
            break
        except ImportError:
            module = module.rsplit(".", 1)[0]


def registered_class(path: str) -> type:
    """The Configurable class registered under ``path`` ("module.QualName").

    Classes of nolo's own modules are imported on demand (only modules under
    ``nolo.``); any other class must have been imported by the caller.  A path
    under a module that has moved (:data:`MOVED_MODULES`) is read at the new
    module: there it may also name the package's re-export of a class
    (``nolo.learners.oco_examples.OnlineLinearSVM``, as an old spec wrote it).
    """
    asked = path
    if isinstance(path, str) and path not in CLASSES and moved_path(path) != path:
        new = moved_path(path)
        if new not in CLASSES:
            _import_nolo_module(new)
        if new not in CLASSES:  # a re-export: the class its package exports under that name
            module, _, attr = new.rpartition(".")
            obj = getattr(sys.modules.get(module), attr, None)  # imported above when it exists
            if isinstance(obj, type) and _class_path(obj) in CLASSES and CLASSES.get(_class_path(obj)) is obj:
                return obj
        path = new
    if path not in CLASSES and isinstance(path, str) and path.startswith("nolo."):
        _import_nolo_module(path)
    if path not in CLASSES:
        raise PersistenceError(
            f"unknown class {asked!r}: not a nolo Configurable (import the module that defines it first)"
        )
    return CLASSES.get(path)


def encode_value(value: Any) -> Any:
    """Encode a parameter value as JSON-compatible data."""
    if isinstance(value, Configurable):
        return value.to_config()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if np.isfinite(v):
            return v
        return {"float": repr(v)}
    if isinstance(value, np.ndarray):
        return {"ndarray": value.tolist(), "dtype": value.dtype.str}
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        return {"dict": {str(k): encode_value(v) for k, v in value.items()}}
    raise PersistenceError(
        f"cannot encode parameter value of type {type(value).__name__}; "
        "parameters must be numbers, strings, lists, arrays or nolo Configurable objects"
    )


def decode_value(data: Any) -> Any:
    """Inverse of :func:`encode_value`."""
    if isinstance(data, list):
        return [decode_value(v) for v in data]
    if isinstance(data, dict):
        if "class" in data and "params" in data:
            return Configurable.from_config(data)
        if "ndarray" in data:
            return np.asarray(data["ndarray"], dtype=np.dtype(data["dtype"]))
        if "float" in data:
            return float(data["float"])
        if "dict" in data:
            return {k: decode_value(v) for k, v in data["dict"].items()}
        raise PersistenceError(f"malformed encoded value {data!r}")
    return data


class Configurable(BaseEstimator):
    """Base of every configurable nolo object (scikit-learn parameter conventions)."""

    _abstract: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        CLASSES.register(_class_path(cls), cls, replace=True)

    def _validate_params(self) -> None:
        """Check every constructor parameter; raise ParameterError naming the bad one (default: nothing).

        This is nolo's one validation hook: every Configurable runs it on first
        use (a learner's first ``learn``, a kernel's first evaluation, a noise
        model's ``sampler``, a step rule's ``schedule``...) and :meth:`set_params`
        runs it after every change.  Hooks that can also check a dimension take
        it as an optional argument (``_validate_params(d=None)``); ``set_params``
        calls them without one.
        """

    def set_params(self, **params):
        """Set parameters, then run ``_validate_params``; if it (or the setting) fails, nothing changes.

        The rollback restores every attribute of the object (parameters and any
        cache or state) and, for nested ``component__param`` keys, the nested
        objects' parameters.
        """
        if not params:
            return self
        snapshot = dict(vars(self))
        try:
            deep = self.get_params(deep=True)
        except Exception:  # pragma: no cover - get_params of a broken object
            deep = {}
        nested_old = {k: deep[k] for k in params if "__" in k and k in deep}
        try:
            super().set_params(**params)
            self._validate_params()
        except Exception:
            self.__dict__.clear()
            self.__dict__.update(snapshot)
            if nested_old:
                try:
                    BaseEstimator.set_params(self, **nested_old)
                except Exception:  # pragma: no cover - restoring values that were valid before
                    pass
            raise
        return self

    def to_config(self) -> dict:
        """JSON-compatible description: class path and (encoded) parameters."""
        return {
            "class": _class_path(type(self)),
            "params": {k: encode_value(v) for k, v in self.get_params(deep=False).items()},
        }

    @staticmethod
    def from_config(config: dict) -> "Configurable":
        """Rebuild an object from :meth:`to_config` output."""
        if not isinstance(config, dict) or "class" not in config:
            raise PersistenceError(f"a configuration must be a dict with 'class' and 'params', got {config!r}")
        cls = registered_class(config["class"])
        params = {k: decode_value(v) for k, v in config.get("params", {}).items()}
        try:
            return cls(**params)
        except TypeError as exc:
            raise ParameterError(f"bad parameters for {config['class']}: {exc}") from None
