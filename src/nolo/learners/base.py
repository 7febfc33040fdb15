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

import copy
import math
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from nolo._config import Configurable
from nolo._validation import check_array, check_seed
from nolo.exceptions import NumericalError, ParameterError, PersistenceError
from nolo.persistence import (
    FORMAT,
    FORMAT_VERSION,
    check_feature_count,
    check_state_names,
    compare_state,
    fresh_state_bound,
    decode_state,
    encode_state,
    generator_from_state,
    generator_state,
    read_npz,
    write_npz_atomic,
)
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

    @classmethod
    def _test_params(cls) -> list[dict[str, Any]]:
        """Parameter sets :func:`nolo.checks.check_learner` runs the contract with (default: the defaults).

        Override with a few small, fast configurations that exercise the class's branches (e.g. both dtypes).
        """
        return [{}]

    # -- parameters -----------------------------------------------------------------
    # (``set_params`` re-validates and keeps the old values on rejection: see Configurable.)
    def set_params(self, **params):
        """As :meth:`Configurable.set_params`; a ``seed`` is checked here for every learner (``nan``, floats,
        negative ints and strings are refused whether or not the class's own ``_validate_params`` looks at it)."""
        if "seed" in params:
            check_seed(params["seed"])
        return super().set_params(**params)

    def _init_state(self, n_features: int) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def is_initialized(self) -> bool:
        return getattr(self, "n_features_in_", None) is not None

    def initialize(self, n_features: int) -> "Learner":
        """Validate parameters and create fresh state for inputs of dimension ``n_features``."""
        self._validate_params()
        check_seed(getattr(self, "seed", None))
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
        return self._check_width(check_array(x, name, ndim=1), name)

    def _check_width(self, arr: np.ndarray, name: str = "x") -> np.ndarray:
        """``arr`` (one instance, checked) if it has the learner's number of features (any, before the first)."""
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
    #: state arrays whose listed axes may legitimately differ from a fresh instance's (buffers that grow while
    #: learning, e.g. ``{"points_": (0,), "coef_": (0,)}``).  A class that leaves it ``None`` lets any axis of length
    #: 0 in a fresh instance grow (a buffer filled lazily); a class that declares a dict lists every axis that may
    #: grow (``{}``: none), so that an array left empty by its configuration (a component switched off) must stay
    #: empty.  Every other axis of a loaded array must equal the fresh instance's (the checks of :meth:`load`).
    _growing_state: ClassVar[dict[str, tuple[int, ...]] | None] = None
    #: state keys a learner holds only in some phases, each checked on load like the key it names (its twin)
    _optional_state: ClassVar[dict[str, str]] = {}
    #: True when ``n_features_in_`` counts matrix cells (M N) rather than the length of an array axis
    _features_are_cells: ClassVar[bool] = False
    #: True when the state's per-feature arrays span the features and a bias (z = [x, 1]: n_features_in_ + 1 long)
    _bias_column: ClassVar[bool] = False
    #: False when a fresh state keeps no number per feature (its per-feature arrays are buffers of points filled
    #: while learning): only then may ``n_features_in_`` exceed the entries the saved arrays hold
    _state_per_feature: ClassVar[bool] = True
    #: integer state keys that may hold -1 ("not computed yet")
    _sentinel_state: ClassVar[tuple[str, ...]] = ()

    def _get_state(self) -> dict[str, Any]:
        """State to persist: every attribute ending with ``_``.  Override to convert exotic state."""
        return {k: v for k, v in vars(self).items() if k.endswith("_") and not k.startswith("__")}

    def _set_state(self, state: dict[str, Any]) -> None:
        """Inverse of :meth:`_get_state`."""
        for k, v in state.items():
            setattr(self, k, v)

    def _check_state(self) -> None:
        """Invariants between the state attributes of a loaded learner (raise on a violation).

        Called by :meth:`load` after the generic checks (same keys, dtypes, shapes, layout and finiteness as
        a fresh instance, counts >= 0).  Override when the state has cross-attribute invariants the compiled
        code relies on (e.g. a fill count <= a buffer's length), or when a finite state can still not be learned
        from (a covariance that is not positive definite, a scale of 0, a norm that overflows): the helpers
        :func:`check_state_range`, :func:`check_state_sqnorm`, :func:`check_state_column_sqnorms`,
        :func:`check_state_spd` and :func:`check_state_expansion` raise :class:`PersistenceError` naming the array
        (``load`` adds the class).
        The default checks nothing more.
        """

    def save(self, path: str | os.PathLike) -> Path:
        """Write parameters and state to ``path`` (``.npz``, see :mod:`nolo.persistence`); returns the path."""
        from nolo import __version__

        meta, arrays = encode_state(self._get_state())
        header = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "nolo_version": __version__,
            "config": self._persisted_config(),
            "state": meta,
        }
        return write_npz_atomic(path, header, arrays)

    def _persisted_config(self) -> dict:
        """``to_config()``, with Generator parameters stored as their bit-generator state (``{"generator": ...}``)."""
        params = self.get_params(deep=False)
        gens = {k: v for k, v in params.items() if isinstance(v, np.random.Generator)}
        if not gens:
            return self.to_config()
        try:
            for k in gens:  # encode the others with the usual encoder
                setattr(self, k, None)
            config = self.to_config()
        finally:
            for k, v in gens.items():
                setattr(self, k, v)
        rng = vars(self).get("rng_")
        for k, g in gens.items():
            entry = {"generator": generator_state(g)}
            if g is rng:
                entry["is"] = "rng_"  # the learner draws from the parameter itself: keep them one object
            config["params"][k] = entry
        return config

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Learner":
        """Read a learner written by :meth:`save`; ``cls`` may be ``Learner`` or the saved class.

        The file is checked, never trusted: the parameters are validated as ``set_params`` would, and the
        state must be exactly what a fresh instance of the class creates for the file's ``n_features_in_``
        -- the same attribute names, and for each array the same dtype, number of dimensions, shape
        (except the axes the class declares as growing, :attr:`_growing_state`) and memory layout;
        floats finite, counts non-negative.  The fresh instance is sized before it is built: parameters whose
        state would be much larger than the file's arrays are refused first
        (:func:`nolo.persistence.fresh_state_bound`).
        Any defect raises :class:`nolo.PersistenceError`.
        """
        header, arrays = read_npz(path)
        try:
            return cls._from_header(header, arrays)
        except PersistenceError as exc:
            raise PersistenceError(f"{path}: {exc}") from None
        except (Exception, MemoryError) as exc:  # a defect the checks did not name: still a bad file, never a crash
            raise PersistenceError(f"{path}: invalid saved learner ({type(exc).__name__}: {exc})") from None

    @classmethod
    def _from_header(cls, header: dict, arrays: dict[str, np.ndarray]) -> "Learner":
        config = header["config"]
        params = config.get("params", {})
        if not isinstance(params, dict):
            raise PersistenceError(f"the config's params must be a JSON object, got {type(params).__name__}")
        gens = {k: v for k, v in params.items() if isinstance(v, dict) and "generator" in v}
        if gens:
            config = dict(config, params={k: (None if k in gens else v) for k, v in params.items()})
        try:
            obj = Configurable.from_config(config)
        except PersistenceError:
            raise
        except Exception as exc:
            raise PersistenceError(f"bad configuration: {type(exc).__name__}: {exc}") from None
        if not isinstance(obj, Learner):
            raise PersistenceError(f"the file holds a {type(obj).__name__}, which is not a nolo learner")
        if not isinstance(obj, cls):
            raise PersistenceError(f"the file holds a {type(obj).__name__}, not a {cls.__name__}")
        for k, entry in gens.items():
            if set(entry) - {"generator", "is"} or entry.get("is", "rng_") != "rng_":
                raise PersistenceError(f"malformed generator parameter {k!r}")
            setattr(obj, k, generator_from_state(entry["generator"]))
        try:
            obj._validate_params()
            check_seed(getattr(obj, "seed", None))
        except ValueError as exc:
            raise PersistenceError(f"invalid parameter: {exc}") from None

        try:
            return cls._load_state(obj, header, arrays, gens)
        except PersistenceError as exc:  # name the class whose state the file holds
            msg, name = str(exc), type(obj).__name__
            raise PersistenceError(msg if name in msg else f"invalid {name} state: {msg}") from None

    @staticmethod
    def _load_state(obj: "Learner", header: dict, arrays: dict[str, np.ndarray], gens: dict) -> "Learner":
        """Decode the file's state into ``obj`` and check it: the generic checks, then ``obj._check_state()``."""
        state = decode_state(header["state"], arrays)
        check_state_names(state)
        reference = obj._fresh_state(state)
        obj._set_state(state)
        loaded = obj._get_state()
        compare_state(type(obj), loaded, reference)
        for k, entry in gens.items():
            if entry.get("is") == "rng_":
                if "rng_" not in loaded:
                    raise PersistenceError(f"parameter {k!r} is tied to rng_, which the file does not hold")
                if generator_state(loaded["rng_"]) != generator_state(getattr(obj, k)):
                    raise PersistenceError(f"parameter {k!r} and rng_ must hold the same generator state")
                setattr(obj, k, loaded["rng_"])
        obj._check_state()
        return obj

    def _fresh_state(self, state: dict[str, Any]) -> dict[str, Any]:
        """The state of a fresh copy of this (unfitted) learner initialised for the file's ``n_features_in_``."""
        n = check_feature_count(type(self), state)
        if n is None:
            return {}
        params = {k: copy.deepcopy(v) if isinstance(v, np.random.Generator) else v
                  for k, v in self.get_params(deep=False).items()}  # initialising must not advance a loaded generator
        fresh = type(self)(**params)
        try:
            with fresh_state_bound(state):  # sizes checked before anything is allocated
                fresh.initialize(n)
        except ParameterError as exc:
            raise PersistenceError(f"the parameters do not fit the saved arrays: {exc}") from None
        return fresh._get_state()


# -- invariants of a loaded state: the checks the ``_check_state`` overrides share ---------------------------------
def check_state_range(key: str, a: Any, low: float = -math.inf, high: float = math.inf, what: str = "") -> None:
    """Every entry of the state array (or number) ``key`` lies in ``[low, high]``; ``what`` says why."""
    v = np.asarray(a, dtype=np.float64)
    if v.size and not (v.min() >= low and v.max() <= high):
        bad = v[(v < low) | (v > high)].flat[0]
        raise PersistenceError(f"state {key!r} must lie in [{low:g}, {high:g}]{f' ({what})' if what else ''}, "
                               f"got {float(bad)!r}")


def _sqnorm(a: np.ndarray) -> float:
    """The squared Euclidean (Frobenius) norm of the float array ``a`` in its own precision; inf when it overflows."""
    flat = np.ravel(a)
    with np.errstate(over="ignore", invalid="ignore"):
        return float(flat @ flat) if flat.size else 0.0


def check_state_sqnorm(key: str, a: np.ndarray, what: str = "") -> None:
    """The squared norm of the state array ``key`` is finite in its precision (a float64 entry beyond about 1.3e154
    overflows it): the updates of a learner whose iterate, weights or inverse it is compute it, or products of
    that size."""
    if not math.isfinite(_sqnorm(a)):
        raise PersistenceError(f"state array {key!r} must have a finite squared norm{f' ({what})' if what else ''}, "
                               f"got entries up to {float(np.max(np.abs(a))):.3g} (it overflows float64)")


def check_state_column_sqnorms(norms_key: str, norms: np.ndarray, vectors_key: str, vectors: np.ndarray) -> None:
    """``norms[i]`` is the squared norm of column ``i`` of ``vectors`` (to 1e-9), and that is finite: a stored
    vector's squared norm that a kernel's squared distances ``||x||^2 + ||s||^2 - 2 x . s`` read instead of
    recomputing it."""
    with np.errstate(over="ignore", invalid="ignore"):
        sq = np.einsum("ij,ij->j", vectors, vectors)
        ok = np.all(np.isfinite(sq)) and np.all(np.abs(norms - sq) <= 1e-9 * sq)
    if not ok:
        raise PersistenceError(f"state array {norms_key!r} must hold the squared norms of the columns of "
                               f"{vectors_key!r}, each finite")


def check_state_spd(key: str, M: np.ndarray, what: str = "") -> None:
    """Each matrix of the state array ``key`` (shape ``(..., n, n)``) is symmetric (to 1e-8 of its largest entry),
    positive definite (its Cholesky factor exists) with a finite squared norm and a finite inverse: a covariance,
    a precision or an inverse Gram matrix the learner multiplies by, updates or inverts."""
    check_state_sqnorm(key, M, what)
    n = M.shape[-1]
    for i, A in enumerate(M.reshape(-1, n, n)):
        where = f"{key}[{i}]" if M.ndim > 2 else key
        scale = float(np.max(np.abs(A))) if A.size else 0.0
        if not np.all(np.abs(A - A.T) <= 1e-8 * scale):
            raise PersistenceError(f"state array {where!r} must be symmetric{f' ({what})' if what else ''}")
        try:
            L = np.linalg.cholesky((A + A.T) / 2.0)
        except np.linalg.LinAlgError:
            L = None
        with np.errstate(all="ignore"):
            ok = L is not None and bool(np.all(np.isfinite(L))) and bool(np.all(np.diagonal(L) > 0.0))
            ok = ok and bool(np.all(np.isfinite(np.linalg.inv(L)))) and math.isfinite(_sqnorm(np.linalg.inv(L)))
        if not ok:
            raise PersistenceError(f"state array {where!r} must be positive definite with a finite inverse"
                                   f"{f' ({what})' if what else ''}")


def check_state_expansion(points_key: str, coef_key: str, norm_key: str, coef: np.ndarray, self_kernels: np.ndarray,
                          evaluate, sqnorm: float, n_probe: int = 6) -> None:
    """A kernel expansion ``w = sum_i c_i k(s_i, .)`` agrees with its tracked squared norm ``sqnorm``.

    ``coef``: the ``c_i`` (any global scale folded in); ``self_kernels``: ``k(s_i, s_i)``, each finite and >= 0
    (else the stored points overflow the kernel); ``evaluate(idx)``: ``w(s_i)`` for the stored points ``idx``
    (may raise :class:`NumericalError`).  At the first and last point and the ``n_probe`` of largest
    ``|c_i| sqrt(k(s_i, s_i))``, ``w(s)`` must be finite with ``w(s)^2 <= ||w||^2 k(s, s)`` (Cauchy-Schwarz, with a
    factor 2 and 1e-12 for the rounding of the tracked norm): an expansion whose coefficients do not match its
    norm makes every later step overflow or project wrongly.  O((n_probe + 2) m) kernel values."""
    k = np.asarray(self_kernels, dtype=np.float64)
    c = np.asarray(coef, dtype=np.float64)
    if not (np.all(np.isfinite(k)) and np.all(k >= 0.0)):
        raise PersistenceError(f"state array {points_key!r}: the kernel of a stored point with itself must be a finite "
                               "number >= 0 (the points overflow the kernel)")
    if not c.size:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        weight = np.abs(c) * np.sqrt(k)
    idx = np.unique(np.r_[0, c.size - 1, np.argsort(-weight, kind="stable")[:n_probe]])
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            v = np.asarray(evaluate(idx), dtype=np.float64)
    except NumericalError:
        v = np.full(idx.size, np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        ok = np.all(np.isfinite(v)) and np.all(v * v <= k[idx] * (2.0 * float(sqnorm) + 1e-12))
    if not ok:
        raise PersistenceError(f"state arrays {coef_key!r} and {norm_key!r} disagree: the expansion's value at a "
                               f"stored point exceeds ||w|| sqrt(k(s, s)) with ||w||^2 = {norm_key} = {sqnorm!r}")


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

    @staticmethod
    def _check_oracle_query(oracle: Any) -> None:
        """Refuse, naming ``oracle``, anything without a callable ``query(n)`` (before any state is touched)."""
        if not callable(getattr(oracle, "query", None)):
            raise ParameterError(
                f"oracle must have a query(n) method (a nolo.noise Oracle or PoolOracle), got {oracle!r:.80}")

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
