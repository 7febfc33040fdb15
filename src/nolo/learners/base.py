"""The learner contract every nolo algorithm follows.

Three protocols, one per kind of feedback:

* :class:`NoisyInputLearner` -- CSS10/CSS11: each round the learner gets an
  *oracle* of noisy copies of a hidden instance and a (possibly noisy) target,
  ``learn(oracle, y)``;
* :class:`BanditLearner` -- AM: ``act(x) -> label`` then
  ``learn(x, played, feedback)`` with a (possibly flipped) bit;
* :class:`FullInformationLearner` -- ``learn(x, y)``.

All of them predict on clean inputs with ``predict(X)`` (never changing
state), follow scikit-learn's parameter conventions (the constructor only
stores its arguments; ``get_params``/``set_params``; fitted state in
attributes ending with ``_``), take their randomness from an explicit
``seed``, and persist with ``save(path)`` / ``Learner.load(path)``
(:mod:`nolo.persistence`): a learner saved mid-stream and loaded continues
exactly as one never interrupted.

Validation: every public method checks its inputs *before* touching state and
raises :class:`nolo.ParameterError` (a ``ValueError``) naming the parameter
and the allowed domain; a numerical failure inside an update raises
:class:`nolo.NumericalError` and the update is not committed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from nolo._config import Configurable
from nolo._validation import check_array
from nolo.exceptions import ParameterError, PersistenceError
from nolo.persistence import FORMAT, FORMAT_VERSION, decode_state, encode_state, read_npz, write_npz_atomic
from nolo.random import as_generator

__all__ = ["Learner", "NoisyInputLearner", "BanditLearner", "FullInformationLearner"]


class Learner(Configurable):
    """Base class: parameters, lazily initialised state, validation helpers and persistence.

    Subclasses implement ``_validate_params()`` (raise ParameterError on a bad
    parameter) and ``_init_state(n_features)`` (create the ``*_`` attributes),
    and their protocol's ``learn``.  State is created on the first ``learn``
    (when the input dimension becomes known) or by ``initialize(n_features)``.
    """

    protocol: ClassVar[str] = "abstract"

    # -- parameters -----------------------------------------------------------------
    # (``set_params`` re-validates and keeps the old values on rejection: see Configurable.)
    def _init_state(self, n_features: int) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def is_initialized(self) -> bool:
        return getattr(self, "n_features_in_", None) is not None

    def initialize(self, n_features: int) -> "Learner":
        """Validate parameters and create fresh state for inputs of dimension ``n_features``."""
        self._validate_params()
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) or n_features < 1:
            raise ParameterError(f"n_features must be a positive integer, got {n_features!r}")
        self.rng_ = as_generator(getattr(self, "seed", None))
        self.n_features_in_ = int(n_features)
        self.t_ = 0
        self._init_state(int(n_features))
        return self

    def reset(self) -> "Learner":
        """Forget everything learned (state is re-created on the next ``learn``)."""
        for key in list(vars(self)):
            if key.endswith("_") and not key.startswith("__"):
                delattr(self, key)
        return self

    # -- input checks ----------------------------------------------------------------
    def _check_x(self, x: Any, name: str = "x") -> np.ndarray:
        """One clean or noisy instance, shape (d,), finite; fixes d on first use."""
        arr = check_array(x, name, ndim=1)
        if self.is_initialized and arr.shape[0] != self.n_features_in_:
            raise ParameterError(f"{name} must have {self.n_features_in_} features, got {arr.shape[0]}")
        return arr

    def _check_X(self, X: Any, name: str = "X") -> np.ndarray:
        """A batch of clean instances, shape (n, d) (a single (d,) row is accepted)."""
        arr = check_array(X, name, ndim=(1, 2))
        if arr.ndim == 1:
            arr = arr[None, :]
        if self.is_initialized and arr.shape[1] != self.n_features_in_:
            raise ParameterError(f"{name} must have {self.n_features_in_} features per row, got {arr.shape[1]}")
        return arr

    def _ensure_initialized(self, n_features: int) -> None:
        if not self.is_initialized:
            self.initialize(n_features)

    def _require_initialized(self, what: str = "predict") -> None:
        if not self.is_initialized:
            raise ParameterError(
                f"{type(self).__name__}.{what} needs a learner that has seen data: call learn(...) or initialize(n_features) first"
            )

    # -- persistence -------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        """State to persist: every attribute ending with ``_``.  Override to convert exotic state."""
        return {k: v for k, v in vars(self).items() if k.endswith("_") and not k.startswith("__")}

    def _set_state(self, state: dict[str, Any]) -> None:
        """Inverse of :meth:`_get_state`."""
        for k, v in state.items():
            setattr(self, k, v)

    def save(self, path: str | os.PathLike) -> Path:
        """Write parameters and state to ``path`` (``.npz``, see :mod:`nolo.persistence`); returns the path."""
        from nolo import __version__

        meta, arrays = encode_state(self._get_state())
        header = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "nolo_version": __version__,
            "config": self.to_config(),
            "state": meta,
        }
        return write_npz_atomic(path, header, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Learner":
        """Read a learner written by :meth:`save`; ``cls`` may be ``Learner`` or the saved class."""
        header, arrays = read_npz(path)
        obj = Configurable.from_config(header["config"])
        if not isinstance(obj, cls):
            raise PersistenceError(f"{path} holds a {type(obj).__name__}, not a {cls.__name__}")
        obj._set_state(decode_state(header["state"], arrays))
        return obj


class FullInformationLearner(Learner):
    """Protocol: ``learn(x, y)`` with the clean instance and its target."""

    protocol: ClassVar[str] = "full_information"

    def learn(self, x, y) -> "FullInformationLearner":  # pragma: no cover - abstract
        raise NotImplementedError

    def predict(self, X) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class NoisyInputLearner(Learner):
    """Protocol: ``learn(oracle, y)``; the instance is seen only through ``oracle.query(n)``."""

    protocol: ClassVar[str] = "noisy_input"

    def learn(self, oracle, y) -> "NoisyInputLearner":  # pragma: no cover - abstract
        raise NotImplementedError

    def predict(self, X) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class BanditLearner(Learner):
    """Protocol: ``act(x) -> label`` then ``learn(x, played, feedback)`` with a 0/1 bit."""

    protocol: ClassVar[str] = "bandit"

    def act(self, x) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def learn(self, x, played, feedback) -> "BanditLearner":  # pragma: no cover - abstract
        raise NotImplementedError

    def predict(self, X) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError
