"""Where the clean stream of (x_t, y_t) of an experiment comes from.

A *generator* is a function ``gen(rounds, rng, **params) -> (X, y)`` registered
under a name with :func:`register_generator`; specs name it in
``environment.generator``.  A *dataset* (``environment.dataset``) is a registered
name (:func:`nolo.datasets.load_dataset`) or the path of your own file: ``.csv``/
``.tsv``/``.txt`` (:func:`nolo.datasets.load_csv`) or LIBSVM/SVMlight (any other
suffix, :func:`nolo.datasets.load_svmlight`), rows scaled to unit norm unless
``normalize: null``.  Its rounds visit the examples in the order of the bandit
environment (:class:`nolo.learners.bandit.ClassificationBandit`, the one
implementation of a visiting order): ``draw: replace`` (uniformly with
replacement, AM's protocol; the default), ``permute`` (a fresh permutation per
pass) or ``cycle`` (the file's order, repeated).

Built-in generators:

* ``linear_regression`` -- x uniform on the sphere of radius ``x_radius`` in
  R^d, y = <w*, x> + target noise, w* uniform on the sphere of radius
  ``w_radius``;
* ``linear_classification`` -- the same x, y = sign(<w*, x>) in {-1, +1},
  rounds with |<w*, x>| < ``margin`` resampled;
* ``multiclass_linear`` -- x as above, y = argmax_k <W_k, x> over ``n_classes``
  random unit directions (for the bandit protocol).
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from nolo._registry import Registry
from nolo._validation import check_int, check_scalar
from nolo.exceptions import ParameterError

__all__ = ["register_generator", "get_generator", "generator_names", "make_stream", "load_environment_dataset",
           "load_dataset_arrays", "visit_order", "DRAWS"]

#: the stream generators by name (one registry mechanism: nolo._registry.Registry)
GENERATORS = Registry("generator")


def register_generator(name: str) -> Callable[[Callable], Callable]:
    """Decorator: register ``gen(rounds, rng, **params) -> (X, y)`` under ``name``."""

    def deco(func: Callable) -> Callable:
        old = GENERATORS.get(name) if name in GENERATORS else None
        if old is not None and (old.__module__, old.__qualname__) != (func.__module__, func.__qualname__):
            raise ParameterError(f"generator {name!r} is already registered by {old.__module__}.{old.__qualname__}")
        GENERATORS.register(name, func, replace=True)  # the same function again (a module reload) replaces it
        return func

    return deco


def generator_names() -> list[str]:
    return sorted(GENERATORS.names())


def get_generator(name: str) -> Callable:
    if name not in GENERATORS:
        from nolo.experiments.registry import load_experiment_modules

        load_experiment_modules()  # paper modules may register their own generators
    return GENERATORS.get(name, param="generator")


def generator_parameters(name: str) -> list[str]:
    """Names of the keyword parameters a generator accepts."""
    sig = inspect.signature(get_generator(name))
    return [p for p in list(sig.parameters)[2:] if sig.parameters[p].kind is inspect.Parameter.KEYWORD_ONLY
            or sig.parameters[p].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]


def _sphere(rng: np.random.Generator, n: int, d: int, radius: float) -> np.ndarray:
    z = rng.standard_normal((n, d))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    return radius * z


@register_generator("linear_regression")
def linear_regression(rounds, rng, *, d=5, x_radius=1.0, w_radius=1.0, target_std=0.0):
    """y = <w*, x> + N(0, target_std^2), x and w* uniform on spheres."""
    d = check_int(d, "d", low=1)
    x_radius = check_scalar(x_radius, "x_radius", low=0.0, low_inclusive=False)
    w_radius = check_scalar(w_radius, "w_radius", low=0.0)
    target_std = check_scalar(target_std, "target_std", low=0.0)
    w = _sphere(rng, 1, d, w_radius)[0]
    X = _sphere(rng, rounds, d, x_radius)
    y = X @ w + target_std * rng.standard_normal(rounds)
    return X, y


@register_generator("linear_classification")
def linear_classification(rounds, rng, *, d=5, x_radius=1.0, margin=0.0, label_flip=0.0):
    """y = sign(<w*, x>) with |<w*, x>| >= margin (resampled), flipped with probability ``label_flip``."""
    d = check_int(d, "d", low=1)
    x_radius = check_scalar(x_radius, "x_radius", low=0.0, low_inclusive=False)
    margin = check_scalar(margin, "margin", low=0.0, high=x_radius, high_inclusive=False)
    label_flip = check_scalar(label_flip, "label_flip", low=0.0, high=0.5)
    w = _sphere(rng, 1, d, 1.0)[0]
    X = np.empty((rounds, d))
    filled = 0
    while filled < rounds:
        cand = _sphere(rng, max(2 * (rounds - filled), 16), d, x_radius)
        cand = cand[np.abs(cand @ w) >= margin][: rounds - filled]
        X[filled : filled + len(cand)] = cand
        filled += len(cand)
    y = np.where(X @ w >= 0, 1.0, -1.0)
    flip = rng.random(rounds) < label_flip
    y[flip] = -y[flip]
    return X, y


@register_generator("multiclass_linear")
def multiclass_linear(rounds, rng, *, d=5, n_classes=3, x_radius=1.0):
    """y = argmax_k <W_k, x> with W's rows uniform unit directions; labels 0..n_classes-1."""
    d = check_int(d, "d", low=1)
    n_classes = check_int(n_classes, "n_classes", low=2)
    x_radius = check_scalar(x_radius, "x_radius", low=0.0, low_inclusive=False)
    W = _sphere(rng, n_classes, d, 1.0)
    X = _sphere(rng, rounds, d, x_radius)
    return X, np.argmax(X @ W.T, axis=1).astype(np.int64)


DRAWS = ("replace", "permute", "cycle")
#: suffixes read as delimited text; any other file is read as LIBSVM/SVMlight
CSV_SUFFIXES = (".csv", ".tsv", ".txt")


def is_dataset_path(name: str) -> bool:
    """True when ``environment.dataset`` names a file rather than a registered dataset."""
    import os

    return os.sep in name or "/" in name or name.lower().endswith((*CSV_SUFFIXES, ".svm", ".libsvm", ".svmlight"))


def load_dataset_arrays(name: str, params: dict) -> tuple:
    """``(X, y)`` of a registered dataset or of a CSV / LIBSVM file (``params``: the loader's options,
    plus ``normalize`` -- ``"unit"`` (default) or None -- for files)."""
    from pathlib import Path

    from nolo.datasets import load_csv, load_dataset, load_svmlight, normalize_rows

    params = dict(params)
    if not is_dataset_path(name):
        return load_dataset(name, **params)[:2]
    normalize = params.pop("normalize", "unit")
    path = Path(name).expanduser()
    if path.suffix.lower() in CSV_SUFFIXES:
        if path.suffix.lower() == ".tsv":
            params.setdefault("delimiter", "\t")
        X, y = load_csv(path, **params)
    else:
        X, y = load_svmlight(path, **params)
    return normalize_rows(X, normalize, copy=False), y


def load_environment_dataset(env) -> tuple[np.ndarray, np.ndarray, str]:
    """``(X, y, draw)`` of an environment with a dataset: the examples and the visiting order."""
    params = dict(env.params)
    draw = params.pop("draw", "replace")
    if draw not in DRAWS:
        raise ParameterError(f"environment.params.draw must be one of {', '.join(map(repr, DRAWS))}, got {draw!r}")
    X, y = load_dataset_arrays(env.dataset, params)
    X = np.asarray(X, dtype=float).reshape(len(X), -1)
    return X, np.asarray(y), draw


def visit_order(n_examples: int, rounds: int, draw: str, rng) -> np.ndarray:
    """The example index of each of ``rounds`` rounds, drawn by the bandit environment's visiting order."""
    from nolo.learners.bandit import ClassificationBandit

    env = ClassificationBandit(np.zeros((int(n_examples), 1)), np.zeros(int(n_examples), dtype=np.int64),
                               order=draw, seed=rng)
    idx = np.empty(int(rounds), dtype=np.int64)
    for t in range(int(rounds)):
        env.next()
        idx[t] = env.current_index
    return idx


def _dataset_stream(env, rounds, rng):
    X, y, draw = load_environment_dataset(env)
    idx = visit_order(len(X), rounds, draw, rng)
    return X[idx], y[idx]


def make_stream(env, rounds: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The clean (X, y) stream of ``rounds`` rounds of environment spec ``env``."""
    if env.generator is not None:
        X, y = get_generator(env.generator)(rounds, rng, **env.params)
    else:
        X, y = _dataset_stream(env, rounds, rng)
    X = np.ascontiguousarray(X, dtype=float)
    if X.shape[0] != rounds or not np.all(np.isfinite(X)):
        raise ParameterError(f"the environment must give {rounds} finite rows, got shape {X.shape}")
    return X, np.asarray(y)
