"""Declarative experiment specs: validated pydantic models, read from and written to YAML or TOML.

A spec (see ``docs/experiments.md``) describes an environment (a generator or a
dataset, a noise model for the noisy-input protocol, a feedback channel for the
bandit protocol), the number of rounds, the learners with their parameters,
the metrics, the seeds, and an optional ``grid`` of settings to sweep.  Loading
checks everything *before* anything runs -- structure and types (pydantic),
then the components themselves (each class exists, plays the right protocol,
and accepts its parameters) -- and reports every problem as
``<field path>: <what is wrong and what is allowed>`` in one
:class:`SpecError`.

Components (learners, noise models, feedback channels) are nolo
:class:`~nolo._config.Configurable` classes named by their path
(``nolo.noise.GaussianNoise``) or, for classes of the default modules, by
their bare class name (``GaussianNoise``); only Configurable classes can be
named, so a spec never imports or runs arbitrary code.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import itertools
import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from nolo._config import Configurable, registered_class
from nolo.exceptions import NoloError, ParameterError

__all__ = [
    "SpecError",
    "ComponentSpec",
    "LearnerSpec",
    "EnvironmentSpec",
    "RegretSpec",
    "ExperimentSpec",
    "load_spec",
    "METRICS",
    "PROTOCOLS",
]

PROTOCOLS = ("noisy_input", "full_information", "bandit")
#: metrics the runner can record; which apply depends on the protocol and the loss.
METRICS = ("clean_loss", "mistakes", "queries", "regret", "time")

#: limits of a spec file, checked before anything validates it: a spec is a page of text, and a few lines of YAML
#: aliases can stand for billions of values (each alias counts at its expanded size; no shipped spec uses one).
MAX_SPEC_BYTES = 2**20
MAX_SPEC_VALUES = 100_000
MAX_SPEC_DEPTH = 32

#: modules searched for a bare class name, per role.
DEFAULT_MODULES = {
    "learner": ("nolo.learners", "nolo.learners.linear", "nolo.learners.kernel", "nolo.learners.bandit"),
    "noise": ("nolo.noise",),
    "feedback": ("nolo.noise",),
    "component": ("nolo.oco", "nolo.losses", "nolo.noise", "nolo.kernels", "nolo.estimators"),
}


class SpecError(ParameterError):
    """An invalid spec: ``errors`` is a list of ``(field path, message)``."""

    def __init__(self, errors: list[tuple[str, str]], source: str | None = None):
        self.errors = list(errors)
        self.source = source
        where = f" in {source}" if source else ""
        lines = "\n".join(f"  {path}: {msg}" for path, msg in self.errors)
        super().__init__(f"invalid experiment spec{where}:\n{lines}")


def _path(loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "<spec>"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_assignment=False)


class ComponentSpec(_Model):
    """A Configurable object: ``class`` (dotted path or bare name) and ``params``."""

    cls: str = Field(alias="class", min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)


class LearnerSpec(ComponentSpec):
    """A learner and the name its runs are labelled with."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


class RegretSpec(_Model):
    """Regret against the best fixed linear predictor in the l2 ball of ``radius``, in hindsight on clean data."""

    radius: float = Field(gt=0)


class EnvironmentSpec(_Model):
    """Exactly one of ``generator`` / ``dataset``; ``params`` go to it.  ``noise`` corrupts the inputs
    (noisy-input protocol), ``target_noise`` the targets the learner sees, ``feedback`` flips bandit feedback."""

    generator: str | None = None
    dataset: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    noise: ComponentSpec | None = None
    target_noise: ComponentSpec | None = None
    feedback: ComponentSpec | None = None

    @model_validator(mode="after")
    def _one_source(self):
        if (self.generator is None) == (self.dataset is None):
            raise ValueError("exactly one of 'generator' (a registered generator name) or 'dataset' must be given")
        return self


class ExperimentSpec(_Model):
    """One declarative experiment (see the module docstring and ``docs/experiments.md``)."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    protocol: Literal["noisy_input", "full_information", "bandit"]
    rounds: int = Field(ge=1)
    record_every: int = Field(default=1, ge=1)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    loss: str | None = None
    regret: RegretSpec | None = None
    metrics: list[Literal["clean_loss", "mistakes", "queries", "regret", "time"]] | None = None
    environment: EnvironmentSpec
    learners: list[LearnerSpec] = Field(min_length=1)
    grid: dict[str, list[Any]] = Field(default_factory=dict)

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v):
        if any(s < 0 for s in v):
            raise ValueError("seeds must be non-negative integers")
        if len(set(v)) != len(v):
            raise ValueError("seeds must be distinct")
        return v

    @field_validator("grid")
    @classmethod
    def _grid(cls, v):
        for key, values in v.items():
            if not values:
                raise ValueError(f"grid entry {key!r} must list at least one value")
        return v

    @field_validator("learners")
    @classmethod
    def _unique_names(cls, v):
        names = [lr.name for lr in v]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"learner names must be unique, repeated: {', '.join(dup)}")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        if self.record_every > self.rounds:
            raise ValueError(f"record_every must be <= rounds ({self.rounds}), got {self.record_every}")
        return self

    # -- derived ---------------------------------------------------------------------------
    def effective_metrics(self) -> list[str]:
        """The metrics recorded: ``metrics`` if given, else every metric that applies."""
        if self.metrics is not None:
            return list(self.metrics)
        out = []
        if self.loss is not None and self.protocol != "bandit":
            out.append("clean_loss")
        out.append("mistakes")
        if self.protocol == "noisy_input":
            out.append("queries")
        if self.regret is not None:
            out.append("regret")
        out.append("time")
        return out

    # -- (de)serialisation -------------------------------------------------------------------
    def to_dict(self) -> dict:
        """JSON/YAML/TOML-ready dict (``class`` keys, no ``None`` entries); ``from_dict`` inverts it."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def canonical_json(self) -> str:
        """Deterministic JSON of the spec (sorted keys), the basis of run ids."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def digest(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()[:16]

    @classmethod
    def from_dict(cls, data: Any, *, source: str | None = None, check_components: bool = True) -> "ExperimentSpec":
        """Validate ``data`` (a dict) into a spec; raises :class:`SpecError` listing every bad field."""
        if not isinstance(data, dict):
            raise SpecError([("<spec>", f"a spec must be a mapping of fields, got {type(data).__name__}")], source)
        try:
            spec = cls.model_validate(data)
        except ValidationError as exc:
            raise SpecError([(_path(e["loc"]), _message(e)) for e in exc.errors()], source) from None
        if check_components:
            errors = spec.check()
            if errors:
                raise SpecError(errors, source)
        return spec

    @classmethod
    def from_file(cls, path: str | Path) -> "ExperimentSpec":
        """Read a ``.yaml``/``.yml`` or ``.toml`` spec file.

        The file is parsed within limits (:data:`MAX_SPEC_BYTES` of UTF-8 text, :data:`MAX_SPEC_VALUES` values
        counting YAML aliases at their expanded size, :data:`MAX_SPEC_DEPTH` levels of nesting) before anything
        validates or expands it; a file past them, or not text, or not parseable is one ``<file>`` error."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".yaml", ".yml", ".toml"):
            raise SpecError([("<file>", f"spec files must end in .yaml, .yml or .toml, got {path.name!r}")], str(path))
        try:
            with path.open("rb") as fh:
                raw = fh.read(MAX_SPEC_BYTES + 1)
        except OSError as exc:
            raise SpecError([("<file>", f"cannot read {path}: {exc.strerror}")], str(path)) from None
        try:
            if len(raw) > MAX_SPEC_BYTES:
                raise _SpecFileError(f"larger than {MAX_SPEC_BYTES} bytes")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _SpecFileError(f"not a text file: byte {exc.start} ({raw[exc.start]:#04x}) is not UTF-8") from None
            if suffix == ".toml":
                data = tomllib.loads(text)
                _check_extent(data, _data_children)
            else:
                data = _load_yaml(text)
        except _SpecFileError as exc:
            raise SpecError([("<file>", str(exc))], str(path)) from None
        except RecursionError:
            raise SpecError([("<file>", f"nested more than {MAX_SPEC_DEPTH} levels deep")], str(path)) from None
        except (yaml.YAMLError, tomllib.TOMLDecodeError, ValueError, TypeError, OverflowError) as exc:
            # ValueError and friends: values the parsers convert (a 5000-digit integer, a 30 February timestamp)
            what = "TOML" if suffix == ".toml" else "YAML"
            raise SpecError([("<file>", f"not valid {what}: {' '.join(str(exc).split())}")], str(path)) from None
        return cls.from_dict(data, source=str(path))

    def to_file(self, path: str | Path) -> Path:
        """Write the spec as YAML or TOML (by the suffix)."""
        path = Path(path)
        data = self.to_dict()
        suffix = path.suffix.lower()
        if suffix in (".yaml", ".yml"):
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        elif suffix == ".toml":
            text = dumps_toml(data)
        else:
            raise ParameterError(f"path must end in .yaml, .yml or .toml, got {path.name!r}")
        path.write_text(text)
        return path

    # -- components -----------------------------------------------------------------------------
    def check(self) -> list[tuple[str, str]]:
        """Check the components and the protocol rules; returns ``(path, message)`` problems."""
        errors: list[tuple[str, str]] = []
        env = self.environment
        if self.protocol == "noisy_input" and env.noise is None:
            errors.append(("environment.noise", "the noisy_input protocol needs a noise model"))
        if self.protocol != "noisy_input" and env.noise is not None:
            errors.append(("environment.noise", f"only the noisy_input protocol uses a noise model, "
                                                f"protocol is {self.protocol!r}"))
        if self.protocol == "bandit" and env.target_noise is not None:
            errors.append(("environment.target_noise", "the bandit protocol has labels, not real targets: "
                                                       "use a feedback channel to corrupt its feedback"))
        if self.protocol != "bandit" and env.feedback is not None:
            errors.append(("environment.feedback", "only the bandit protocol uses a feedback channel"))
        if self.protocol == "bandit" and self.regret is not None:
            errors.append(("regret", "regret against a fixed linear predictor is defined for the noisy_input "
                                     "and full_information protocols, not bandit"))
        metrics = self.effective_metrics()
        if "clean_loss" in metrics and (self.loss is None or self.protocol == "bandit"):
            errors.append(("metrics", "clean_loss needs a 'loss' and a non-bandit protocol"))
        if "regret" in metrics and (self.regret is None or self.loss is None):
            errors.append(("metrics", "regret needs 'loss' and 'regret: {radius: ...}'"))
        if "queries" in metrics and self.protocol != "noisy_input":
            errors.append(("metrics", "queries are counted only under the noisy_input protocol"))
        if self.loss is not None:
            try:
                from nolo.losses import get_loss

                get_loss(self.loss)
            except ImportError:
                errors.append(("loss", "nolo.losses is not available"))
            except (ParameterError, KeyError, ValueError) as exc:
                errors.append(("loss", _clean(exc)))
        if env.dataset is not None:
            from pathlib import Path

            from nolo.datasets import dataset_names
            from nolo.experiments.environments import DRAWS, is_dataset_path

            if is_dataset_path(env.dataset):
                if not Path(env.dataset).expanduser().is_file():
                    errors.append(("environment.dataset", f"no such file: {env.dataset!r} (a path must name a CSV "
                                                          "or LIBSVM file; relative paths start at the working directory)"))
            elif env.dataset not in dataset_names():
                errors.append(("environment.dataset",
                               f"must be one of {', '.join(map(repr, dataset_names()))} or the path of a .csv or "
                               f"LIBSVM file, got {env.dataset!r}"))
            if env.params.get("draw", "replace") not in DRAWS:
                errors.append(("environment.params.draw",
                               f"must be one of {', '.join(map(repr, DRAWS))}, got {env.params['draw']!r}"))
        if env.generator is not None:
            from nolo.experiments.environments import generator_parameters, get_generator

            try:
                get_generator(env.generator)
            except ParameterError as exc:
                errors.append(("environment.generator", _clean(exc)))
            else:
                allowed = generator_parameters(env.generator)
                for key in env.params:
                    if key not in allowed:
                        errors.append((f"environment.params.{key}",
                                       f"unknown parameter of generator {env.generator!r}; allowed: "
                                       f"{', '.join(allowed) or 'none'}"))
                if not any(p.startswith("environment.params") for p, _ in errors):
                    import numpy as np

                    try:
                        get_generator(env.generator)(2, np.random.default_rng(0), **env.params)
                    except ParameterError as exc:
                        errors.append((_param_path("environment.params", env.params, exc), _clean(exc)))
        for role, where, comp in (("noise", "environment.noise", env.noise),
                                  ("noise", "environment.target_noise", env.target_noise),
                                  ("feedback", "environment.feedback", env.feedback)):
            if comp is not None:
                errors.extend(_check_component(comp, role, where))
        for i, lr in enumerate(self.learners):
            errors.extend(_check_component(lr, "learner", f"learners[{i}]", protocol=self.protocol))
        for key, values in (self.grid.items() if not errors else ()):  # grid values only on a sound base
            for j, value in enumerate(values):
                try:
                    variant = _set_path(self.to_dict(), key, value)
                except ParameterError as exc:
                    errors.append((f"grid.{key}", _clean(exc)))
                    break
                variant.pop("grid", None)
                try:
                    type(self).from_dict(variant)
                except SpecError as exc:
                    for p, m in exc.errors:
                        errors.append((f"grid.{key}[{j}]", f"gives {p}: {m}"))
        return errors

    def build_component(self, comp: ComponentSpec, role: str) -> Configurable:
        return resolve_class(comp.cls, role)(**build_params(comp.params))

    def settings(self) -> list[tuple[str, "ExperimentSpec"]]:
        """The grid's cross product: ``(label, concrete spec without grid)``; one ``("default", spec)`` without grid."""
        base = self.to_dict()
        base.pop("grid", None)
        if not self.grid:
            return [("default", type(self).from_dict(base, check_components=False))]
        keys = list(self.grid)
        out = []
        for combo in itertools.product(*(self.grid[k] for k in keys)):
            data = copy.deepcopy(base)
            for k, v in zip(keys, combo):
                data = _set_path(data, k, v)
            label = ",".join(f"{k.rsplit('.', 1)[-1]}={_fmt(v)}" for k, v in zip(keys, combo))
            out.append((label, type(self).from_dict(data, check_components=False)))
        return out


class _SpecFileError(Exception):
    """A spec file past the limits of :meth:`ExperimentSpec.from_file`, or not text (reported as a ``<file>`` error)."""


def _check_extent(root, children) -> None:
    """Refuse a document of more than ``MAX_SPEC_VALUES`` values or ``MAX_SPEC_DEPTH`` levels, walked without
    recursion and counting shared (aliased) subtrees once per reference -- so at most MAX_SPEC_VALUES steps however
    far the aliases would expand, and a recursive alias is refused as too deep."""
    stack, count = [(root, 1)], 1
    while stack:
        node, depth = stack.pop()
        kids = list(children(node))
        if kids and depth >= MAX_SPEC_DEPTH:
            raise _SpecFileError(f"nested more than {MAX_SPEC_DEPTH} levels deep")
        count += len(kids)
        if count > MAX_SPEC_VALUES:
            raise _SpecFileError(f"more than {MAX_SPEC_VALUES} values (YAML aliases count at their expanded size)")
        stack.extend((k, depth + 1) for k in kids)


def _data_children(value) -> list:
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    return value if isinstance(value, list) else []


def _yaml_children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return node.value if isinstance(node, yaml.SequenceNode) else []


class _SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing nesting deeper than ``MAX_SPEC_DEPTH`` while it composes (recursively: a
    deeply nested flow sequence would otherwise end in RecursionError)."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_SPEC_DEPTH:
                raise _SpecFileError(f"nested more than {MAX_SPEC_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)`` within the spec limits: the node graph (where an alias is one node however much it
    stands for) is composed and measured before it is constructed -- constructing merge keys (``<<: *a``) already
    copies what aliases stand for."""
    loader = _SpecLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_extent(node, _yaml_children)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def load_spec(path_or_dict) -> ExperimentSpec:
    """A spec from a file path or a dict."""
    if isinstance(path_or_dict, ExperimentSpec):
        return path_or_dict
    if isinstance(path_or_dict, dict):
        return ExperimentSpec.from_dict(path_or_dict)
    return ExperimentSpec.from_file(path_or_dict)


# -- helpers ------------------------------------------------------------------------------------------
def _message(err: dict) -> str:
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        return "unknown field (not allowed here; check the spelling)"
    if err["type"] == "missing":
        return "field required"
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    inp = err.get("input")
    if err["type"] not in ("model_type",) and not isinstance(inp, (dict, list)):
        msg += f" (got {inp!r})"
    return msg


def _clean(exc: Exception) -> str:
    text = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
    return text.strip()


def _param_path(prefix: str, params: dict, exc: Exception) -> str:
    """``prefix.<param>`` when the error message starts with one of ``params``' names."""
    text = str(exc)
    for key in sorted(params, key=len, reverse=True):
        if re.match(rf"^{re.escape(key)}\b", text):
            return f"{prefix}.{key}"
    return prefix


def resolve_class(name: str, role: str) -> type:
    """The Configurable class a spec names (dotted path, or a bare name in the role's default modules)."""
    if "." in name:
        try:
            return registered_class(name)
        except NoloError as exc:
            module, _, attr = name.rpartition(".")
            obj = None
            if module == "nolo" or module.startswith("nolo."):  # a re-export, e.g. nolo.noise.GaussianNoise
                try:
                    obj = getattr(importlib.import_module(module), attr, None)
                except ImportError:
                    obj = None
            if isinstance(obj, type) and issubclass(obj, Configurable):
                return obj
            raise ParameterError(_clean(exc)) from None
    searched = []
    for module in DEFAULT_MODULES[role]:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is not None and module.startswith(exc.name):
                continue
            raise
        searched.append(module)
        obj = getattr(mod, name, None)
        if isinstance(obj, type) and issubclass(obj, Configurable):
            return obj
    raise ParameterError(
        f"unknown {role} class {name!r}: give a dotted path (e.g. 'nolo.noise.GaussianNoise') or a class of "
        f"{', '.join(searched) or 'the default modules'}"
    )


def _is_nested_component(value: Any) -> bool:
    return isinstance(value, dict) and "class" in value and set(value) <= {"class", "params"}


class NestedComponentError(ParameterError):
    """A nested component of a spec is invalid: ``path`` is its field path, ``message`` what is wrong."""

    def __init__(self, path: str, message: str):
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


def build_params(params: dict, where: str = "params") -> dict:
    """``params`` with every nested ``{"class": ..., "params": {...}}`` built into its Configurable object
    (recursively; in lists too).  Raises :class:`NestedComponentError` naming the nested field."""
    import inspect

    def build(value, path):
        if _is_nested_component(value):
            inner = value.get("params", {})
            if not isinstance(inner, dict):
                raise NestedComponentError(f"{path}.params", f"must be a mapping of parameters, got {inner!r}")
            try:
                cls = resolve_class(str(value["class"]), "component")
            except ParameterError as exc:
                raise NestedComponentError(f"{path}.class", _clean(exc)) from None
            allowed = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
            for key in inner:
                if key not in allowed:
                    raise NestedComponentError(f"{path}.params.{key}", f"unknown parameter of {cls.__name__}; "
                                                                       f"allowed: {', '.join(allowed) or 'none'}")
            try:
                obj = cls(**build_params(inner, f"{path}.params"))
                validate = getattr(obj, "validate", None)
                if callable(validate):
                    validate()
            except NestedComponentError:
                raise
            except (ParameterError, TypeError, ValueError) as exc:
                raise NestedComponentError(_param_path(f"{path}.params", inner, exc), _clean(exc)) from None
            return obj
        if isinstance(value, list):
            return [build(v, f"{path}[{i}]") for i, v in enumerate(value)]
        return value

    return {k: build(v, f"{where}.{k}") for k, v in params.items()}


def _check_component(comp: ComponentSpec, role: str, where: str, protocol: str | None = None):
    errors = []
    try:
        cls = resolve_class(comp.cls, role)
    except ParameterError as exc:
        return [(f"{where}.class", _clean(exc))]
    if role == "learner":
        from nolo.learners.base import Learner

        if not issubclass(cls, Learner):
            return [(f"{where}.class", f"{comp.cls} is not a nolo learner")]
        if getattr(cls, "protocol", None) != protocol:
            return [(f"{where}.class", f"{comp.cls} plays the {getattr(cls, 'protocol', '?')!r} protocol, "
                                      f"the spec's protocol is {protocol!r}")]
    if role == "feedback":
        from nolo.noise.feedback_laws import FeedbackLaw

        if not issubclass(cls, FeedbackLaw):
            return [(f"{where}.class", f"{comp.cls} is not a feedback law (nolo.noise.FeedbackLaw: FlipChannel, "
                                      "FlipMatrix, ContextFlips)")]
    import inspect

    try:
        sig = inspect.signature(cls.__init__)
        allowed = [p for p in sig.parameters if p != "self"]
        has_var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    except (TypeError, ValueError):
        allowed, has_var_kw = [], True
    for key in comp.params:
        if not has_var_kw and key not in allowed:
            errors.append((f"{where}.params.{key}",
                           f"unknown parameter of {cls.__name__}; allowed: {', '.join(allowed) or 'none'}"))
    if errors:
        return errors
    try:
        built = build_params(comp.params, f"{where}.params")
    except NestedComponentError as exc:
        return [(exc.path, exc.message)]
    try:
        obj = cls(**built)
        if role == "learner":
            obj._validate_params()
        elif hasattr(obj, "validate"):
            obj.validate()
    except (ParameterError, TypeError, ValueError) as exc:
        errors.append((_param_path(f"{where}.params", comp.params, exc), _clean(exc)))
    return errors


def _set_path(data: dict, dotted: str, value: Any) -> dict:
    """A copy of ``data`` with ``dotted`` (``a.b[0].c`` or ``a.b.0.c``) set to ``value``."""
    data = copy.deepcopy(data)
    parts = [int(p) if p.isdigit() else p for p in re.split(r"\.|\[(\d+)\]", dotted) if p]
    node: Any = data
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            if not isinstance(part, int) or part >= len(node):
                raise ParameterError(f"grid key {dotted!r}: {part!r} is not an index of a list of {len(node)}")
        elif isinstance(node, dict):
            if isinstance(part, int):
                raise ParameterError(f"grid key {dotted!r}: {part} indexes a mapping")
            if part not in node and not last:
                if i > 0 and parts[i - 1] == "params":
                    node[part] = {}
                else:
                    raise ParameterError(f"grid key {dotted!r}: no field {part!r} at this level; "
                                         f"fields: {', '.join(map(str, node))}")
        else:
            raise ParameterError(f"grid key {dotted!r}: {parts[i - 1]!r} is not a mapping or a list")
        if last:
            node[part] = value
        else:
            node = node[part]
    return data


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else str(v)


def dumps_toml(data: dict) -> str:
    """TOML text for nested dicts, lists and scalars (``None`` not allowed), written by ``tomli_w`` (the standard
    library reads TOML but does not write it)."""
    import tomli_w

    try:
        return tomli_w.dumps(data)
    except TypeError as exc:
        raise ParameterError(f"cannot write this spec to TOML: {exc}") from None
