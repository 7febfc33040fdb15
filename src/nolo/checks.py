"""The learner contract, checked on a learner class: ``check_learner(cls)``.

Every nolo learner (a concrete subclass of :class:`nolo.learners.base.Learner`)
promises (see :mod:`nolo.learners.base`):

* a rejected parameter rolls back: ``set_params`` with a bad value raises a
  ``ValueError`` and leaves every parameter as it was;
* bad input leaves the state byte-identical: every state attribute (arrays
  byte for byte, dtype, shape and layout included), the generator's state and
  the parameters are the same after a rejected ``learn``/``act``/``predict``;
* ``predict`` never changes the state;
* same seed, same stream: two learners built alike and fed alike end
  byte-identical;
* save mid-stream -> load -> continue is bitwise identical to never stopping;
* the per-round API equals the compiled whole-stream path where the class has
  one (``learn_stream`` against per-round ``learn``; for multiclass bandit
  learners :meth:`ClassificationBandit.run` against ``act``/``learn`` on an
  identical environment, and the stream's logged propensities against
  ``act(x, return_probability=True)``'s, and ``act_many`` on a batch against
  ``act`` row by row); ``action_probabilities`` is pure and gives a
  distribution per row.

A class says how to exercise it through two hooks with defaults on the base
class, so a new learner is checked without registering anything:
``Learner._test_params()`` (the parameter sets to run, default the
constructor's defaults) and ``Learner.protocol`` (``"full_information"``,
``"noisy_input"``, ``"bandit"`` or ``"matrix_cell"``).  Targets are integer labels when the class
has an ``n_classes`` parameter and +-1 otherwise (valid for classification and
regression losses alike); noisy-input learners are served copies with
isotropic Gaussian noise of variance :data:`NOISE_VARIANCE`; matrix-cell learners
(the OCO notes' online matrix prediction: ``n_rows x n_cols`` matrix, round ``t``
reveals the cell ``x_t = (i, j)``, ``learn((i, j), y)``, ``predict(rows, cols)``,
``learn_stream(rows, cols, y)``) are played uniformly drawn cells of their matrix.

Examples
--------
>>> from nolo.checks import check_learner, registered_learners
>>> from nolo.learners.bandit import Banditron
>>> check_learner(Banditron)  # doctest: +ELLIPSIS
[...'params_rollback', ...]
>>> Banditron in registered_learners()
True
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import pkgutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = [
    "check_learner",
    "registered_learners",
    "state_dump",
    "test_params",
    "CHECKS",
    "NOISE_VARIANCE",
    "ContractViolation",
]

#: variance of the isotropic Gaussian noise the noisy-input learners are played with
NOISE_VARIANCE = 0.01
#: packages whose modules define learners (imported to register every subclass)
LEARNER_PACKAGES = ("nolo.learners", "nolo.oco")

_ABSTRACT_NAMES = {"Learner", "NoisyInputLearner", "BanditLearner", "FullInformationLearner"}


class ContractViolation(AssertionError):
    """A learner class breaks the contract (the message says which check and how)."""


# -- discovery ---------------------------------------------------------------------------------
def _import_learner_modules() -> None:
    for name in LEARNER_PACKAGES:
        try:
            pkg = importlib.import_module(name)
        except ImportError:  # pragma: no cover - a package moved away
            continue
        for info in pkgutil.walk_packages(getattr(pkg, "__path__", []), name + "."):
            importlib.import_module(info.name)


def _subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out.add(sub)
        out |= _subclasses(sub)
    return out


def is_concrete_learner(cls: type) -> bool:
    """A public learner class: not private, not a protocol base, with its own constructor somewhere below Learner."""
    from nolo.learners.base import Learner

    if not (isinstance(cls, type) and issubclass(cls, Learner)):
        return False
    if cls.__name__.startswith("_") or cls.__name__ in _ABSTRACT_NAMES or cls.__dict__.get("_abstract", False):
        return False
    if inspect.isabstract(cls) or getattr(cls, "protocol", "abstract") == "abstract":
        return False
    return cls.__init__ is not object.__init__


#: the protocols :class:`_Game` can play; a learner of another protocol is listed by :func:`unchecked_learners`
#: and must be covered by its own tests.
CHECKED_PROTOCOLS = ("full_information", "noisy_input", "bandit", "matrix_cell")


def unchecked_learners() -> list[type]:
    """Concrete learners whose protocol the shared checks cannot play yet (see ``CHECKED_PROTOCOLS``)."""
    return [c for c in _all_learners() if c.protocol not in CHECKED_PROTOCOLS]


def registered_learners() -> list[type]:
    """Every concrete learner class of nolo whose protocol the shared checks play, sorted by name."""
    return [c for c in _all_learners() if c.protocol in CHECKED_PROTOCOLS]


def _all_learners() -> list[type]:
    """Every concrete learner class of nolo (imports all learner modules first), sorted by name."""
    from nolo.learners.base import Learner

    _import_learner_modules()
    found = {
        c for c in _subclasses(Learner)
        if is_concrete_learner(c) and c.__module__.startswith("nolo.")  # not the toy learners of test files
        and not any(part.startswith("_") for part in c.__module__.split(".")[1:-1])
    }
    return sorted(found, key=lambda c: (c.__name__, c.__module__))


# -- test parameters ---------------------------------------------------------------------------
def _fallback_params(cls: type) -> list[dict] | None:
    """Test parameters for the classes written before ``_test_params`` existed (their owners should move
    these into the classes as ``_test_params`` classmethods)."""
    name = cls.__name__
    if name in ("TwoCopyLinearRegression", "NaiveOGDRegression"):
        return [{"radius": 2.0, "step": 0.05}, {"radius": 2.0, "x_bound": 2.0, "y_bound": 1.0, "horizon": 100}]
    if name == "KnownCovarianceLinearRegression":
        return [{"noise_cov": NOISE_VARIANCE, "radius": 2.0, "step": 0.05}]
    if name in ("GaussianNoiseKernelRegression", "KernelOGDRegression"):
        from nolo.kernels import GaussianSurrogateKernel

        return [{"kernel": GaussianSurrogateKernel(width=2.0, noise_cov=NOISE_VARIANCE), "W": 2.0, "step": 0.05}]
    if name == "RCINE":
        return [{"n_classes": 3, "refit_every": 10, "reservoir_size": 10}]
    if name in ("Banditron", "RCNBF", "BPA", "SOBA", "Perceptron"):
        extra = {"rho0": 0.1, "rho1": 0.2} if name == "RCNBF" else {}
        return [{"n_classes": 3, **extra}, {"n_classes": 3, "dtype": "float32", **extra}]
    if name == "NoisyKernelLearner":
        return [{"p": 3.0, "B_w": 4.0}, {"kernel": "gaussian", "p": 3.0}]
    return None


def test_params(cls: type) -> list[dict]:
    """The parameter sets ``check_learner`` runs ``cls`` with: its ``_test_params()`` (or a built-in fallback)."""
    from nolo.learners.base import Learner

    own = getattr(cls, "_test_params", None)
    overridden = own is not None and getattr(own, "__func__", None) is not getattr(Learner._test_params, "__func__", None)
    if not overridden:
        fb = _fallback_params(cls)
        if fb is not None:
            return [dict(p) for p in fb]
    return [dict(p) for p in cls._test_params()]


test_params.__test__ = False  # not a pytest test


# -- state dumps ---------------------------------------------------------------------------------
def _dump_value(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        layout = "C" if v.flags.c_contiguous else ("F" if v.flags.f_contiguous else "N")
        return ("ndarray", v.dtype.str, v.shape, layout, np.ascontiguousarray(v).tobytes())
    if isinstance(v, np.random.Generator):
        return ("generator", json.dumps(v.bit_generator.state, sort_keys=True, default=str))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_dump_value(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted((str(k), _dump_value(x)) for k, x in v.items())))
    if isinstance(v, float):
        return ("float", v.hex() if np.isfinite(v) else repr(v))
    if isinstance(v, (np.floating, np.integer, np.bool_)):
        return ("npscalar", np.asarray(v).dtype.str, np.asarray(v).tobytes())
    if hasattr(v, "get_params") and hasattr(v, "to_config"):
        try:
            return ("config", json.dumps(v.to_config(), sort_keys=True, default=repr))
        except Exception:  # pragma: no cover - unencodable nested parameter
            return ("object", type(v).__name__, repr(v))
    return (type(v).__name__, repr(v))


def _is_timing(name: str) -> bool:
    """Wall-clock diagnostics (``*seconds_``) are state but not reproducible; the byte comparisons skip them."""
    return name.endswith("seconds_")


def state_dump(learner) -> dict[str, Any]:
    """A byte-level snapshot of a learner: every ``*_`` attribute (arrays as dtype/shape/layout/bytes,
    generators as their bit-generator state; wall-clock ``*seconds_`` timings excepted) and every parameter."""
    out = {f"state:{k}": _dump_value(v) for k, v in sorted(vars(learner).items())
           if k.endswith("_") and not _is_timing(k)}
    for k, v in sorted(learner.get_params(deep=False).items()):
        out[f"param:{k}"] = _dump_value(v)
    return out


def _diff(a: dict, b: dict) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


# -- playing the protocols ---------------------------------------------------------------------------
class _Game:
    """A reproducible stream of rounds for one learner configuration."""

    def __init__(self, learner, n_features: int = 4, n_rounds: int = 30, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.protocol = type(learner).protocol
        self.n_classes = int(learner.n_classes) if "n_classes" in learner.get_params(deep=False) else None
        self.d = n_features
        self.T = n_rounds
        self.X = rng.standard_normal((n_rounds, n_features)) / np.sqrt(n_features)
        if self.n_classes is not None:
            self.y = rng.integers(0, self.n_classes, n_rounds)
        else:
            self.y = np.where(rng.random(n_rounds) < 0.5, -1.0, 1.0)
        self.noise_seed = seed + 1
        self.feedback_u = rng.random(n_rounds)
        if self.protocol == "matrix_cell":  # drawn after the vector stream, which stays as it was
            self.shape = (int(learner.n_rows), int(learner.n_cols))
            self.rows = rng.integers(0, self.shape[0], n_rounds)
            self.cols = rng.integers(0, self.shape[1], n_rounds)

    def predict(self, learner):
        """The learner's predictions on the game's inputs (its rows, or its cells for the matrix protocol)."""
        if self.protocol == "matrix_cell":
            return learner.predict(self.rows, self.cols)
        return learner.predict(self.X)

    def target(self, t: int):
        return int(self.y[t]) if self.n_classes is not None else float(self.y[t])

    def oracle(self, t: int):
        from nolo.noise import GaussianNoise, Oracle

        return Oracle(self.X[t], GaussianNoise(std=float(np.sqrt(NOISE_VARIANCE))), self.noise_seed * 100_003 + t,
                      round=t)

    def play(self, learner, start: int = 0, stop: int | None = None) -> None:
        for t in range(start, self.T if stop is None else stop):
            if self.protocol == "bandit":
                played = learner.act(self.X[t])
                learner.learn(self.X[t], played, int(played == self.y[t]))
            elif self.protocol == "noisy_input":
                learner.learn(self.oracle(t), self.target(t))
            elif self.protocol == "matrix_cell":
                learner.learn((int(self.rows[t]), int(self.cols[t])), self.target(t))
            else:
                learner.learn(self.X[t], self.target(t))

    def bad_rounds(self, learner) -> list[tuple[str, Callable[[], Any]]]:
        """(description, call) pairs that must each be rejected with a ValueError."""
        d = self.d
        x = self.X[0]
        nan_x = x.copy()
        nan_x[0] = np.nan
        bad_x = {"x with NaN": nan_x, "x of the wrong dimension": np.ones(d + 1), "x as a string": "abc",
                 "x 2-d": np.ones((2, d)), "x empty": np.zeros(0)}
        calls: list[tuple[str, Callable[[], Any]]] = []
        if self.protocol == "matrix_cell":
            return self._bad_cell_rounds(learner)
        if self.protocol == "bandit":
            for desc, bx in bad_x.items():
                calls.append((f"act({desc})", lambda bx=bx: learner.act(bx)))
                calls.append((f"learn({desc})", lambda bx=bx: learner.learn(bx, 0, 1)))
            K = self.n_classes or 2
            for desc, played, fb in (("played = K", K, 1), ("played = -1", -1, 0), ("played = 0.5", 0.5, 1),
                                     ("feedback = 2", 0, 2), ("feedback = NaN", 0, np.nan)):
                calls.append((f"learn({desc})", lambda p=played, f=fb: learner.learn(x, p, f)))
            if hasattr(learner, "act_many"):
                nan_X = np.tile(x, (3, 1))
                nan_X[1, 0] = np.nan
                for desc, bX in (("X with NaN", nan_X), ("X of the wrong dimension", np.ones((3, d + 1))),
                                 ("X as a string", "abc"), ("X 3-d", np.ones((2, 2, d)))):
                    calls.append((f"act_many({desc})", lambda bX=bX: learner.act_many(bX)))
                calls.append(("act_many(return_probability='yes')",
                              lambda: learner.act_many(self.X[:2], return_probability="yes")))
        elif self.protocol == "noisy_input":
            from nolo.noise import GaussianNoise, Oracle

            wrong_d = Oracle(np.ones(d + 1), GaussianNoise(std=0.1), 0)
            calls.append(("learn(object without query)", lambda: learner.learn(object(), self.target(0))))
            calls.append(("learn(oracle of the wrong dimension)", lambda: learner.learn(wrong_d, self.target(0))))
            calls.append(("learn(y = NaN)", lambda: learner.learn(self.oracle(0), np.nan)))
            calls.append(("learn(y = 'a')", lambda: learner.learn(self.oracle(0), "a")))
        else:
            for desc, bx in bad_x.items():
                calls.append((f"learn({desc})", lambda bx=bx: learner.learn(bx, self.target(0))))
            calls.append(("learn(y = NaN)", lambda: learner.learn(x, np.nan)))
            if self.n_classes is not None:
                calls.append(("learn(y = K)", lambda: learner.learn(x, self.n_classes)))
        calls.append(("predict(X of the wrong dimension)", lambda: learner.predict(np.ones((3, d + 1)))))
        calls.append(("predict(X with inf)", lambda: learner.predict(np.full((2, d), np.inf))))
        return calls

    def _bad_cell_rounds(self, learner) -> list[tuple[str, Callable[[], Any]]]:
        M, N = self.shape
        y = self.target(0)
        bad_cells = {"a cell past the last row": (M, 0), "a cell past the last column": (0, N),
                     "a negative row": (-1, 0), "a non-integer cell": (0.5, 1), "a NaN cell": (np.nan, 0),
                     "three indices": (0, 0, 0), "one index": (0,), "a string": "ab", "a scalar": 3}
        calls: list[tuple[str, Callable[[], Any]]] = [
            (f"learn({desc})", lambda c=c: learner.learn(c, y)) for desc, c in bad_cells.items()]
        calls += [("learn(y = NaN)", lambda: learner.learn((0, 0), np.nan)),
                  ("learn(y = 'a')", lambda: learner.learn((0, 0), "a")),
                  ("learn_stream(rows and cols of different lengths)",
                   lambda: learner.learn_stream([0, 1], [0], [y, y])),
                  ("learn_stream(a row out of range)", lambda: learner.learn_stream([0, M], [0, 0], [y, y])),
                  ("learn_stream(y with inf)", lambda: learner.learn_stream([0, 1], [0, 0], [y, np.inf])),
                  ("predict(a column out of range)", lambda: learner.predict([0, 1], [0, N])),
                  ("predict(rows and cols of different lengths)", lambda: learner.predict([0, 1], [0]))]
        return calls


def _build(cls: type, params: dict, seed: int | None = 3):
    p = dict(params)
    if seed is not None and "seed" in inspect.signature(cls).parameters and "seed" not in p:
        p["seed"] = seed
    return cls(**p)


# -- the checks ------------------------------------------------------------------------------------
def check_params_rollback(cls: type, params: dict) -> None:
    """``set_params`` with bad values raises ValueError and leaves the parameters unchanged."""
    base = _build(cls, params)
    before = state_dump(base)
    bad_values = [-1, 0, -1e300, 1e300, np.nan, np.inf, "bogus", 1.5, -0.5, 2]
    rejected = 0
    for name in base.get_params(deep=False):
        for bad in bad_values:
            learner = _build(cls, params)
            try:
                learner.set_params(**{name: bad})
            except ValueError:
                rejected += 1
                after = state_dump(learner)
                if after != before:
                    raise ContractViolation(
                        f"{cls.__name__}.set_params({name}={bad!r}) was rejected but changed {_diff(before, after)}"
                    ) from None
            except Exception as exc:
                raise ContractViolation(
                    f"{cls.__name__}.set_params({name}={bad!r}) raised {type(exc).__name__} (not a ValueError): {exc}"
                ) from None
    if rejected == 0:
        raise ContractViolation(f"{cls.__name__}: set_params accepted every bad value tried: nothing is validated")


def check_bad_input_keeps_state(cls: type, params: dict) -> None:
    """Each bad call raises ValueError and leaves the state (and generator) byte-identical."""
    learner = _build(cls, params)
    game = _Game(learner)
    game.play(learner, 0, 5)
    for desc, call in game.bad_rounds(learner):
        before = state_dump(learner)
        try:
            call()
        except ValueError:
            pass
        except Exception as exc:
            raise ContractViolation(f"{cls.__name__}: {desc} raised {type(exc).__name__}, not a ValueError: {exc}")
        else:
            raise ContractViolation(f"{cls.__name__}: {desc} was accepted")
        after = state_dump(learner)
        if after != before:
            raise ContractViolation(f"{cls.__name__}: the rejected {desc} changed {_diff(before, after)}")


def check_predict_is_pure(cls: type, params: dict) -> None:
    """``predict`` changes nothing and gives the same answer twice."""
    learner = _build(cls, params)
    game = _Game(learner)
    game.play(learner, 0, 10)
    before = state_dump(learner)
    p1 = np.asarray(game.predict(learner))
    p2 = np.asarray(game.predict(learner))
    after = state_dump(learner)
    if after != before:
        raise ContractViolation(f"{cls.__name__}.predict changed {_diff(before, after)}")
    if _has_probabilities(learner):  # the propensities too: pure, repeatable, a distribution per row
        q1, q2 = learner.action_probabilities(game.X), learner.action_probabilities(game.X)
        if state_dump(learner) != before:
            raise ContractViolation(f"{cls.__name__}.action_probabilities changed {_diff(before, state_dump(learner))}")
        if q1.tobytes() != q2.tobytes() or not (np.all(q1 >= 0) and np.allclose(q1.sum(axis=1), 1.0)):
            raise ContractViolation(f"{cls.__name__}.action_probabilities is not repeatable or not a distribution")
    if p1.shape[0] != game.T or p1.tobytes() != p2.tobytes():
        raise ContractViolation(f"{cls.__name__}.predict is not repeatable or has the wrong length")
    if p1.dtype.kind == "f" and not np.all(np.isfinite(p1)):
        raise ContractViolation(f"{cls.__name__}.predict returned non-finite values")


def check_same_seed_same_stream(cls: type, params: dict) -> None:
    """Two learners built alike and played alike end byte-identical (states and predictions)."""
    a, b = _build(cls, params), _build(cls, params)
    game = _Game(a)
    game.play(a)
    game.play(b)
    if state_dump(a) != state_dump(b):
        raise ContractViolation(f"{cls.__name__}: same seed, different state: {_diff(state_dump(a), state_dump(b))}")
    if np.asarray(game.predict(a)).tobytes() != np.asarray(game.predict(b)).tobytes():
        raise ContractViolation(f"{cls.__name__}: same seed, different predictions")


def check_save_load_resume(cls: type, params: dict) -> None:
    """Save mid-stream, load, continue: bitwise identical to a learner never interrupted."""
    from nolo.learners.base import Learner

    a, b = _build(cls, params), _build(cls, params)
    game = _Game(a)
    half = game.T // 2
    game.play(a, 0, half)
    game.play(b, 0, half)
    with tempfile.TemporaryDirectory() as tmp:
        path = b.save(Path(tmp) / "model")
        c = Learner.load(path)
        c2 = cls.load(path)
    if type(c) is not cls or state_dump(c) != state_dump(b) or state_dump(c2) != state_dump(b):
        raise ContractViolation(f"{cls.__name__}: load(save(learner)) differs: {_diff(state_dump(b), state_dump(c))}")
    game.play(a, half)
    game.play(c, half)
    if state_dump(a) != state_dump(c):
        raise ContractViolation(f"{cls.__name__}: resumed learner differs: {_diff(state_dump(a), state_dump(c))}")
    if np.asarray(game.predict(a)).tobytes() != np.asarray(game.predict(c)).tobytes():
        raise ContractViolation(f"{cls.__name__}: resumed learner predicts differently")
    # an unfitted learner round-trips too
    fresh = _build(cls, params)
    with tempfile.TemporaryDirectory() as tmp:
        d = Learner.load(fresh.save(Path(tmp) / "fresh"))
    if state_dump(d) != state_dump(fresh):
        raise ContractViolation(f"{cls.__name__}: an unfitted learner does not round-trip")


def _has_stream(cls: type) -> str | None:
    if callable(getattr(cls, "learn_stream", None)):
        return "learn_stream"
    if "n_classes" in inspect.signature(cls).parameters and cls.protocol in ("bandit", "full_information"):
        try:
            from nolo.learners.bandit import ClassificationBandit  # noqa: F401
        except ImportError:  # pragma: no cover
            return None
        if callable(getattr(cls, "_kernel_state", None)) or cls.protocol == "bandit":
            return "run_stream"
    return None


def _has_probabilities(learner) -> bool:
    """A bandit learner that states its propensities (``action_probabilities``, and ``act(x, return_probability=True)``)."""
    if getattr(type(learner), "protocol", None) != "bandit" or not callable(getattr(learner, "action_probabilities", None)):
        return False
    from nolo.learners.bandit import _stream

    return _stream.has_probs(learner._state_record())


def check_stream_equals_rounds(cls: type, params: dict) -> None:
    """The compiled whole-stream path gives the state the per-round API gives (and, for a bandit learner that states
    its propensities, the stream's log the per-round ``act(x, return_probability=True)``'s labels and probabilities;
    ``act_many`` on a batch the labels, probabilities and state of ``act`` row by row)."""
    kind = _has_stream(cls)
    if kind is None:
        return
    a, b = _build(cls, params), _build(cls, params)
    game = _Game(a, n_rounds=40)
    if kind == "run_stream":
        from nolo.learners.bandit import ClassificationBandit

        y = game.y.astype(np.int64)
        env_a = ClassificationBandit(game.X, y, rho0=0.1, rho1=0.2, order="permute", seed=11)
        env_b = ClassificationBandit(game.X, y, rho0=0.1, rho1=0.2, order="permute", seed=11)
        b.initialize(game.d)
        with_p = _has_probabilities(b)
        res = env_a.run(a, game.T, log=with_p)
        logged, rounds = [], []
        for _ in range(game.T):
            x = env_b.next()
            if cls.protocol == "bandit":
                if with_p:
                    played, p = b.act(x, return_probability=True)
                    logged.append((played, p))
                else:
                    played = b.act(x)
                bit = env_b.feedback(played)
                b.learn(x, played, bit)
                rounds.append((x, played, bit))
            else:
                played = int(b.predict(x[None, :])[0])
                env_b.feedback(played)  # the environment draws its flip as in the stream
                b.learn(x, int(env_b.y[env_b.current_index]))
    else:
        from nolo.noise import PoolOracle

        m = int(getattr(cls, "copies_per_round", 1))
        rng = np.random.default_rng(5)
        if cls.protocol == "noisy_input":
            copies = game.X[:, None, :] + np.sqrt(NOISE_VARIANCE) * rng.standard_normal((game.T, m, game.d))
            a.learn_stream(copies, game.y)
            for t in range(game.T):
                b.learn(PoolOracle(copies[t]), game.target(t))
        elif cls.protocol == "matrix_cell":
            a.learn_stream(game.rows, game.cols, game.y)
            game.play(b)
        else:
            a.learn_stream(game.X, game.y)
            for t in range(game.T):
                b.learn(game.X[t], game.target(t))
    da, db = state_dump(a), state_dump(b)
    if da != db:
        raise ContractViolation(f"{cls.__name__}: {kind} and per-round play differ in {_diff(da, db)}")
    if kind == "run_stream" and cls.protocol == "bandit" and hasattr(b, "learn_many"):
        # the rounds b played, replayed as a log through the compiled batch update: b's state, the generator aside
        c = _build(cls, params)
        c.learn_many(np.array([r[0] for r in rounds]), np.array([r[1] for r in rounds]),
                     np.array([r[2] for r in rounds]))
        c.rng_ = b.rng_
        dc = state_dump(c)
        if dc != db:
            raise ContractViolation(f"{cls.__name__}: learn_many on the played log and per-round learn differ in "
                                    f"{_diff(dc, db)}")
    if kind == "run_stream" and logged:
        lg = res.extra["log"]
        if (lg["played"].tolist() != [p for p, _ in logged]
                or np.asarray([q for _, q in logged]).tobytes() != lg["propensity"].tobytes()):
            raise ContractViolation(f"{cls.__name__}: the stream's logged propensities differ from the per-round "
                                    "act(x, return_probability=True)'s")
    if kind == "run_stream" and cls.protocol == "bandit" and hasattr(b, "act_many"):
        # a batch of contexts acted on in one compiled call: act's labels (and probabilities) row by row, and the
        # same state after (an act changes only the generator)
        e, f = copy.deepcopy(b), copy.deepcopy(b)
        rows = game.X[:12]
        got = e.act_many(rows, return_probability=with_p)
        want = [f.act(x, return_probability=with_p) for x in rows]
        labels, probs = (got if with_p else (got, None))
        same = labels.tolist() == [w[0] if with_p else w for w in want]
        if with_p:
            same = same and probs.tobytes() == np.asarray([w[1] for w in want]).tobytes()
        de, df = state_dump(e), state_dump(f)
        if not same or de != df:
            raise ContractViolation(f"{cls.__name__}: act_many and act row by row differ"
                                    + ("" if same else " in the labels or their probabilities")
                                    + ("" if de == df else f" in {_diff(de, df)}"))


#: the checks in the order ``check_learner`` runs them
CHECKS: dict[str, Callable[[type, dict], None]] = {
    "params_rollback": check_params_rollback,
    "bad_input_keeps_state": check_bad_input_keeps_state,
    "predict_is_pure": check_predict_is_pure,
    "same_seed_same_stream": check_same_seed_same_stream,
    "save_load_resume": check_save_load_resume,
    "stream_equals_rounds": check_stream_equals_rounds,
}


def check_learner(cls: type, checks: list[str] | None = None) -> list[str]:
    """Run the contract checks on learner class ``cls`` with each of its test parameter sets.

    Raises :class:`ContractViolation` (an AssertionError) naming the class, the parameters and the check
    on the first violation; returns the names of the checks run.
    """
    if not is_concrete_learner(cls):
        raise TypeError(f"{cls!r} is not a concrete nolo learner class")
    names = list(CHECKS) if checks is None else list(checks)
    for params in test_params(cls):
        for name in names:
            try:
                CHECKS[name](cls, params)
            except ContractViolation as exc:
                raise ContractViolation(f"[{name}] {cls.__name__}({params}): {exc}") from None
            except Exception as exc:
                raise ContractViolation(
                    f"[{name}] {cls.__name__}({params}) raised {type(exc).__name__}: {exc}"
                ) from exc
    return names
