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
import inspect
import sys
from typing import Any, ClassVar

import numpy as np

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


#: class -> its constructor's parameters and their defaults, names sorted (read once per class:
#: ``inspect.signature`` is slow); a parameter without a default maps to ``inspect.Parameter.empty``
_INIT_PARAMS: dict[type, dict[str, Any]] = {}


def _init_params(cls: type) -> dict[str, Any]:
    """``cls``'s constructor parameters (no ``*args``: a parameter must be named) -> defaults, sorted by name."""
    params = _INIT_PARAMS.get(cls)
    if params is None:
        init = cls.__init__
        found = [] if init is object.__init__ else [
            p for p in inspect.signature(init).parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD]
        if any(p.kind == p.VAR_POSITIONAL for p in found):
            raise TypeError(f"{cls.__name__}.__init__ takes *args: every parameter must be named")
        params = _INIT_PARAMS[cls] = {p.name: p.default for p in sorted(found, key=lambda p: p.name)}
    return params


def _same_value(a: Any, b: Any) -> bool:
    """Whether a parameter value equals its default, for the repr (arrays elementwise, NaN equal to NaN)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind == "f" and b.dtype.kind == "f"))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return False
    try:
        return bool(a == b)
    except Exception:  # pragma: no cover - a value whose comparison raises
        return repr(a) == repr(b)


class Configurable:
    """Base of every configurable nolo object (scikit-learn parameter conventions).

    ``get_params``/``set_params`` follow scikit-learn's ``BaseEstimator`` to the letter (parameters are the
    constructor's arguments, nested ones read ``component__param``), so :func:`sklearn.base.clone`, grid
    searches and pipelines take any nolo object; the class is its own so that importing a learner does not
    import scikit-learn (1-2.5 s of a new process, with the pandas and ``scipy.stats`` it imports).  The
    estimators of :mod:`nolo.sklearn_api` add scikit-learn's ``BaseEstimator`` after this class for its tags and
    HTML repr.
    """

    _abstract: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        CLASSES.register(_class_path(cls), cls, replace=True)

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """The constructor's parameter names, sorted (no ``*args``: a parameter must be named)."""
        return list(_init_params(cls))

    def get_params(self, deep: bool = True) -> dict:
        """The constructor parameters and their values; with ``deep``, also ``component__param`` of nested
        objects that have ``get_params``."""
        out = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def _assign_params(self, params: dict) -> None:
        """Assign parameters as scikit-learn's ``set_params`` does (no validation): top-level ones first, then
        each nested object's ``set_params`` with its ``component__`` keys.  An unknown name is a
        :class:`ParameterError` listing the valid ones."""
        valid = self.get_params(deep=True)
        nested: dict[str, dict] = {}
        for key, value in params.items():
            name, delim, sub = key.partition("__")
            if name not in valid:
                raise ParameterError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                     f"valid parameters are: {self._get_param_names()!r}")
            if delim:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
                valid[name] = value
        for name, sub_params in nested.items():
            valid[name].set_params(**sub_params)

    def __getstate__(self) -> dict:
        """The instance dict, copied (always a dict, also for an object with no attributes yet: subclasses that
        drop a cache before pickling edit it)."""
        return dict(self.__dict__)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        """``Class(param=value, ...)`` with the parameters that differ from their defaults, sorted by name."""
        try:
            defaults = _init_params(type(self))
            shown = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items()
                              if defaults[k] is inspect.Parameter.empty or not _same_value(v, defaults[k]))
        except Exception:  # pragma: no cover - a half-built object (repr must never raise)
            return f"<{type(self).__name__} object>"
        return f"{type(self).__name__}({shown})"

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
            self._assign_params(params)
            self._validate_params()
        except Exception:
            self.__dict__.clear()
            self.__dict__.update(snapshot)
            if nested_old:
                try:
                    self._assign_params(nested_old)
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
