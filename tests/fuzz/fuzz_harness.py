"""The fuzz harness of issue 14: generated bad inputs for every public entry point, one verdict per case.

A *target* is one public entry point (``Banditron.learn``, ``TwoCopyRegressor.fit``, ``load_dataset``, the model
loader, ...) with one argument singled out as the *user's parameter* under attack; every other argument is valid.
Each case builds a fresh receiver (a learner played for a few rounds, a fitted estimator), snapshots its state
byte for byte, calls the entry point with the generated value and classifies the result:

========================  =====================================================================================
``rejected_named``        a ValueError/TypeError subclass whose message names the parameter; state unchanged (ok)
``numerical``             :class:`nolo.NumericalError` (a clear error for numerical trouble), state unchanged (ok)
``accepted``              the call succeeded, every returned and stored float is finite, and the value was not one
                          that must be refused (ok)
``warned_nonfinite``      the call succeeded with finite results, and every stored attribute holding NaN/inf is
                          named by a warning the call gave (a documented "not defined" value, e.g. the sandwich
                          covariance ``coef_cov_`` of a fit with a constant feature), for a value that need not be
                          refused (ok)
``rejected_unnamed``      a ValueError/TypeError whose message does not name the parameter (failure)
``state_changed``         rejected, but the state differs from the snapshot (failure)
``silent_nonfinite``      accepted, but a returned or stored float is NaN/inf (failure)
``lenient``               accepted a value that must be refused: NaN/inf, complex, wrong shape, empty, not a
                          number, out-of-range label or rate (failure)
``crash``                 any other exception (failure)
``readonly_differs``      a read-only copy of a valid input (``setflags(write=False)``, a read-only memory map)
                          gave another result or state than the writable array, or was refused (failure)
``input_mutated``         the call wrote into its read-only input (failure)
========================  =====================================================================================

Under ``NOLO_FUZZ_PROFILE=long`` every verdict is counted (tests/fuzz/conftest.py writes the census) instead of
failing the test at the first bad one.
"""

from __future__ import annotations

import collections
import copy
import os
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

from nolo.checks import _build, _Game, state_dump, test_params
from nolo.exceptions import CopiesExhausted, NoloError, NumericalError

PROFILE = os.environ.get("NOLO_FUZZ_PROFILE", "ci")
CENSUS_MODE = PROFILE == "long"
OK = {"rejected_named", "numerical", "accepted", "warned_nonfinite"}
FAILURES = ("rejected_unnamed", "state_changed", "silent_nonfinite", "lenient", "crash", "readonly_differs",
            "input_mutated")
CENSUS: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
EXAMPLES: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Bad:
    """A generated value; ``must_reject`` when no correct implementation may accept it."""

    value: Any
    desc: str
    must_reject: bool

    def __repr__(self) -> str:
        return f"<{self.desc}>"


# -- strategies --------------------------------------------------------------------------------------
def _arr(shape, fill=0.5, dtype=np.float64):
    return np.full(shape, fill, dtype=dtype)


@st.composite
def bad_arrays(draw, shape: tuple[int, ...], good: np.ndarray | None = None, batch: bool = False):
    """Bad versions of an array argument of the given (valid) shape; ``batch``: a batch of rows to predict on,
    which may be empty or a scipy sparse matrix."""
    base = np.array(good, dtype=np.float64, copy=True) if good is not None else _arr(shape)
    kind = draw(st.sampled_from([
        "nan", "inf", "-inf", "huge", "1e300", "f32max", "complex", "complex0", "wrong_len", "extra_dim", "scalar",
        "empty", "string", "none", "object", "dict", "bool", "int", "noncontig", "sparse", "list", "nested_ragged",
        "tiny",
    ]))
    pos = draw(st.integers(0, max(base.size - 1, 0)))
    if kind in ("nan", "inf", "-inf"):
        a = base.copy()
        a.flat[pos] = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}[kind]
        return Bad(a, f"{kind} at {pos}", True)
    if kind in ("huge", "1e300"):
        a = base.copy()
        a.flat[pos] = draw(st.sampled_from([1e300, -1e300, 1.7e308, 1e200])) if kind == "huge" else 1e300
        return Bad(a, f"{a.flat[pos]:g} at {pos}", False)
    if kind == "f32max":
        a = base.copy()
        a.flat[pos] = 3.5e38
        return Bad(a, "3.5e38 (not float32) at {pos}", False)
    if kind == "tiny":
        return Bad(base * 1e-300, "1e-300 scale", False)
    if kind == "complex":
        return Bad(base.astype(np.complex128) + 1j, "complex", True)
    if kind == "complex0":
        return Bad(base.astype(np.complex128), "complex with zero imaginary part", True)
    if kind == "wrong_len":
        extra = draw(st.sampled_from([1, -1, 5]))
        new = list(shape)
        new[-1] = max(new[-1] + extra, 0)
        if new[-1] == shape[-1]:
            new[-1] += 1
        return Bad(_arr(tuple(new)), f"shape {tuple(new)}", True)
    if kind == "extra_dim":
        return Bad(base[None, ...][None, ...], f"shape {(1, 1) + base.shape}", True)
    if kind == "scalar":
        return Bad(draw(st.sampled_from([1.0, 0, np.float64(2.0)])), "a scalar", True)
    if kind == "empty":
        new = (0,) + tuple(shape[1:]) if len(shape) > 1 else (0,)
        return Bad(np.zeros(new), f"empty {new}", not batch)
    if kind == "string":
        return Bad(draw(st.sampled_from(["abc", "1,2,3", ""])), "a string", True)
    if kind == "none":
        return Bad(None, "None", True)
    if kind == "object":
        a = base.astype(object)
        a.flat[pos] = "x"
        return Bad(a, "object array holding a string", True)
    if kind == "dict":
        return Bad({"a": 1}, "a dict", True)
    if kind == "bool":
        return Bad(base > 0.4, "bool array", False)
    if kind == "int":
        return Bad(np.round(base * 3).astype(np.int64), "int array", False)
    if kind == "noncontig":
        big = np.repeat(base[..., None], 2, axis=-1)
        return Bad(big[..., 0], "non-contiguous view", False)
    if kind == "sparse":
        m = base if base.ndim == 2 else base.reshape(1, -1)
        # a (1, d) sparse row is one context the bandit learners' act/learn take; others may refuse it
        return Bad(sp.csr_matrix(m), "scipy CSR", False)
    if kind == "list":
        return Bad(base.tolist(), "nested list", False)
    return Bad([[1.0, 2.0], [3.0]], "ragged list", True)


def bad_scalars(kind: str = "real", *, low: float | None = None, high: float | None = None,
                n_labels: int | None = None):
    """Bad scalar arguments: labels (``n_labels``), bits, reals, rates in [low, high]."""
    vals = [Bad(np.nan, "NaN", True), Bad(np.inf, "inf", True), Bad(-np.inf, "-inf", True),
            Bad("a", "a string", True), Bad(None, "None", True), Bad([1], "a list", True),
            Bad(1 + 2j, "complex", True), Bad(np.array([1.0, 2.0]), "an array", True)]
    if n_labels is not None:
        vals += [Bad(n_labels, "label K", True), Bad(-1, "label -1", True), Bad(0.5, "label 0.5", True),
                 Bad(2**70, "label 2**70", True), Bad(True, "label True", False), Bad(1.0, "label 1.0", False),
                 Bad(np.int8(1), "np.int8 label", False)]
    elif kind == "bit":
        vals += [Bad(2, "2", True), Bad(-1, "-1", True), Bad(0.5, "0.5", True), Bad(True, "True", False)]
    else:
        vals += [Bad(1e300, "1e300", False), Bad(-1e300, "-1e300", False), Bad(True, "True", False)]
        if low is not None:
            vals += [Bad(low - 1.0, f"{low - 1.0}", True), Bad(low - 1e-9, f"{low} - 1e-9", True)]
        if high is not None:
            vals += [Bad(high + 1.0, f"{high + 1.0}", True), Bad(high + 1e-9, f"{high} + 1e-9", True)]
    return st.sampled_from(vals)


BAD_PARAM_VALUES = [Bad(v, d, m) for v, d, m in [
    (-1, "-1", False), (0, "0", False), (1e300, "1e300", False), (-1e300, "-1e300", False), (np.nan, "NaN", True),
    (np.inf, "inf", True), ("bogus", "'bogus'", False), (None, "None", False), (2**70, "2**70", False),
    (1.5, "1.5", False), ([], "[]", False), ({}, "{}", False), (True, "True", False), (1 + 1j, "complex", True),
]]


# -- missing values and read-only arrays --------------------------------------------------------------------
def _na_positions(size: int, full: bool) -> list[int]:
    return sorted({0, size // 2, size - 1}) if full else [size // 2]


def na_values(good: np.ndarray, full: bool = CENSUS_MODE) -> list[Bad]:
    """A valid array argument with one entry replaced by ``pandas.NA``, in the containers a user passes one in: an
    object array, a nested list, a pandas nullable ``Float64`` array (1-D) or DataFrame (2-D), an object Series or
    DataFrame column.  Every one must be refused (a ParameterError naming the argument); ``full`` (the long profile)
    puts the NA first, in the middle and last instead of in the middle only."""
    import pandas as pd

    good = np.asarray(good, dtype=np.float64)
    out = []
    for pos in _na_positions(good.size, full):
        obj = good.astype(object)
        obj.flat[pos] = pd.NA
        out += [Bad(obj, f"object array with pandas.NA at {pos}", True),
                Bad(obj.tolist(), f"nested list with pandas.NA at {pos}", True)]
        if good.ndim == 1:
            nullable = pd.array(good, dtype="Float64")
            nullable[pos] = pd.NA
            out += [Bad(nullable, f"pandas Float64 array with NA at {pos}", True),
                    Bad(pd.Series(obj), f"object Series with pandas.NA at {pos}", True)]
        elif good.ndim == 2:
            i, j = divmod(pos, good.shape[1])
            frame = pd.DataFrame(good).astype("Float64")
            frame.iat[i, j] = pd.NA
            column = pd.DataFrame(good)
            column[j] = column[j].astype(object)
            column.iat[i, j] = pd.NA
            out += [Bad(frame, f"Float64 DataFrame with NA at ({i}, {j})", True),
                    Bad(column, f"DataFrame with an object column holding pandas.NA at ({i}, {j})", True)]
    return out


def readonly_values(good: np.ndarray, tmp_dir, full: bool = CENSUS_MODE) -> list[Bad]:
    """Read-only versions of a valid array argument: a copy with ``setflags(write=False)`` and a memory map opened
    with ``np.load(mmap_mode="r")`` (a file written under ``tmp_dir``), for a matrix also a read-only Fortran-ordered
    copy; ``full`` (the long profile) adds a read-only strided view and a read-only float32 copy.  Each must be accepted
    and give exactly what the same array, writable, gives (``readonly_verdict``)."""
    from pathlib import Path

    good = np.asarray(good)
    frozen = good.copy()
    frozen.setflags(write=False)
    path = Path(tmp_dir) / f"readonly-{good.dtype}-{'x'.join(map(str, good.shape))}-{abs(hash(good.tobytes()))}.npy"
    if not path.exists():
        np.save(path, good)
    out = [Bad(frozen, "read-only copy (setflags(write=False))", False),
           Bad(np.load(path, mmap_mode="r"), "read-only memory map (np.load(mmap_mode='r'))", False)]
    if good.ndim >= 2:  # the layout sets the rounding of the products: a copy must keep it
        fortran = np.asfortranarray(good)
        fortran.setflags(write=False)
        out.append(Bad(fortran, "read-only Fortran-ordered copy", False))
    if full:
        strided = np.repeat(good[..., None], 2, axis=-1)[..., 0]
        strided.setflags(write=False)
        single = good.astype(np.float32) if good.dtype.kind == "f" else good.copy()
        single.setflags(write=False)
        out += [Bad(strided, "read-only strided view", False), Bad(single, f"read-only {single.dtype} copy", False)]
    return out


def _same(a, b, depth: int = 0) -> bool:
    """Two results of the same call are identical: arrays bit for bit (NaN equal to NaN), containers item by item;
    a learner returned by its own method compares by its snapshot (the caller compares those)."""
    if depth > 3 or hasattr(a, "get_params"):
        return True
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b)
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return type(a) is type(b) and _same(vars(a), vars(b), depth + 1)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k], depth + 1) for k in a)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def readonly_verdict(make: Callable[[], Any], call: Callable[[Any, Any], Any], bad: Bad) -> tuple[str, str]:
    """Call on two fresh receivers, one with a writable copy of ``bad.value`` (same dtype and layout) and one with
    the read-only array itself: the same result and the same state after, the read-only input unchanged.  Where
    they differ, a second writable call is the control: what differs between two writable calls too (a generator
    seeded from the operating system that the computation never draws from) is not the read-only input's doing."""
    value = bad.value
    before = np.array(value, copy=True)

    def run(arg):
        receiver = make()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = call(receiver, arg)
            return "ok", result, snapshot(receiver)
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc).__name__, str(exc)[:200], snapshot(receiver)

    kind_w, res_w, snap_w = run(np.array(value, copy=True, order="K"))
    kind_r, res_r, snap_r = run(value)
    if not np.array_equal(np.asarray(value), before, equal_nan=True) or np.asarray(value).flags.writeable:
        return "input_mutated", "the read-only input changed (or was made writable)"
    if kind_w != "ok":
        return "crash", f"the writable input itself failed: {kind_w}: {res_w}"
    if kind_r != "ok":
        return "readonly_differs", f"refused the read-only input: {kind_r}: {res_r}"
    changed = sorted(k for k in set(snap_w) | set(snap_r) if snap_w.get(k) != snap_r.get(k))
    same_result = _same(res_w, res_r)
    if changed or not same_result:
        _, res_c, snap_c = run(np.array(value, copy=True, order="K"))
        changed = [k for k in changed if snap_w.get(k) == snap_c.get(k)]
        same_result = same_result or not _same(res_w, res_c)
    if changed:
        return "readonly_differs", f"the state differs from the writable call's: {changed[:5]}"
    if not same_result:
        return "readonly_differs", "the result differs from the writable call's"
    return "accepted", ""


def judge_readonly(target: str, make, call, bad: Bad) -> None:
    """As :func:`judge`, for a read-only input (:func:`readonly_verdict`)."""
    outcome, detail = readonly_verdict(make, call, bad)
    CENSUS[target][outcome] += 1
    if outcome not in OK:
        EXAMPLES.setdefault((target, outcome), f"{bad.desc}: {detail}")
    if not CENSUS_MODE:
        assert outcome in OK, f"{target} [{bad.desc}] -> {outcome}: {detail}"


# -- hostile documents ------------------------------------------------------------------------------------
def yaml_alias_bomb(levels: int = 9, width: int = 10) -> str:
    """A YAML flow mapping whose last key stands for width**levels values: each level lists the previous one
    ``width`` times through an alias (the billion laughs for the defaults), a few hundred bytes of text."""
    parts = [f"l0: &l0 [{', '.join(['0.25'] * width)}]"]
    parts += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "{" + ", ".join(parts) + "}"


def yaml_merge_bomb(levels: int = 7, width: int = 10) -> str:
    """Merge keys listing the previous level ``width`` times: PyYAML's construction copies width**(levels - 1)
    key-value pairs into the last mapping (before dropping the duplicate keys)."""
    parts = ["m0: &m0 {a: 1}"]
    parts += [f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * width)}], k{i}: 1}}" for i in range(1, levels)]
    return "{" + ", ".join(parts) + "}"


def hostile_yaml_specs(valid: str, line: str = "noise_cov: 0.25") -> list[Bad]:
    """Spec files a YAML spec loader must refuse: bombs and a recursive alias as the value of a learner parameter
    (``line`` of ``valid``, whose value they replace: component parameters are checked last), nesting 5000 deep,
    random bytes."""
    assert line in valid, line
    key = line.split(":")[0]
    inside = lambda v: valid.replace(line, f"{key}: {v}").encode()  # noqa: E731
    return [Bad(inside(yaml_alias_bomb()), "YAML alias bomb", True),
            Bad(inside(yaml_merge_bomb()), "YAML merge-key bomb", True),
            Bad(inside("&r [1, *r]"), "recursive YAML alias", True),
            Bad(b"a: " + b"[" * 5000 + b"]" * 5000, "nested 5000 deep", True),
            Bad(bytes(np.random.default_rng(0).integers(128, 256, 512, dtype=np.uint8)), "512 non-UTF-8 bytes", True)]


# -- snapshots and verdicts -----------------------------------------------------------------------------
def snapshot(obj) -> dict:
    if obj is None:
        return {}
    if hasattr(obj, "get_params"):
        out = state_dump(obj)
    else:
        out = {}
    for k, v in sorted(vars(obj).items()):
        if hasattr(v, "get_params") and hasattr(v, "_get_state"):
            out.update({f"{k}.{kk}": vv for kk, vv in state_dump(v).items()})
    return out


def _nonfinite(v, depth: int = 0) -> bool:
    if depth > 3:
        return False
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "fc" and not np.all(np.isfinite(v))
    if isinstance(v, (float, np.floating, complex)):
        return not np.isfinite(v)
    if isinstance(v, (list, tuple)):
        return any(_nonfinite(x, depth + 1) for x in v)
    if sp.issparse(v):
        return not np.all(np.isfinite(v.data))
    if hasattr(v, "__dict__") and depth < 2 and not isinstance(v, type):
        return any(_nonfinite(x, depth + 1) for k, x in vars(v).items() if k.endswith("_"))
    return False


def _names(msg: str, name: str) -> bool:
    alts = [name] + ([name.lower(), name.upper()] if len(name) == 1 else [])
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(a)}(?![A-Za-z0-9_])", msg) for a in alts)


def verdict(make: Callable[[], Any], call: Callable[[Any, Any], Any], param: str | tuple[str, ...],
            bad: Bad) -> tuple[str, str]:
    """Build the receiver, snapshot it, call, classify.  Returns (outcome, detail)."""
    receiver = make()
    before = snapshot(receiver)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call(receiver, bad.value)
    except NumericalError as exc:
        after = snapshot(receiver)
        if after != before:
            return "state_changed", f"NumericalError but changed {sorted(k for k in before if before[k] != after.get(k))[:5]}"
        return "numerical", str(exc)[:200]
    except (ValueError, TypeError, CopiesExhausted, NoloError) as exc:  # nolo's own errors are rejections too
        after = snapshot(receiver)
        if after != before:
            changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
            return "state_changed", f"{type(exc).__name__}: {str(exc)[:150]}; changed {changed[:5]}"
        if not any(_names(str(exc), p) for p in ((param,) if isinstance(param, str) else param)):
            return "rejected_unnamed", f"{type(exc).__name__}: {str(exc)[:200]}"
        return "rejected_named", ""
    except Exception as exc:  # noqa: BLE001 - classified
        return "crash", f"{type(exc).__name__}: {str(exc)[:200]}"
    if _nonfinite(result) or _nonfinite(receiver):
        if not bad.must_reject and _warned(result, receiver, caught):
            return "warned_nonfinite", ""
        return "silent_nonfinite", "a returned or stored float is not finite"
    if bad.must_reject:
        return "lenient", "accepted"
    return "accepted", ""


def _warned(result, receiver, caught) -> bool:
    """True when ``result`` is finite (or is ``receiver``: ``fit`` returns the estimator) and every stored attribute
    of ``receiver`` holding a non-finite float is named by one of the ``caught`` warnings (not silent: the call said
    which value is not defined)."""
    if receiver is None or not hasattr(receiver, "__dict__") or (result is not receiver and _nonfinite(result)):
        return False
    bad = [k for k, v in vars(receiver).items() if k.endswith("_") and _nonfinite(v, 1)]
    messages = [str(w.message) for w in caught]
    return bool(bad) and all(any(_names(m, k) for m in messages) for k in bad)


def judge(target: str, make, call, param: str | tuple[str, ...], bad: Bad) -> None:
    outcome, detail = verdict(make, call, param, bad)
    CENSUS[target][outcome] += 1
    if outcome not in OK:
        EXAMPLES.setdefault((target, outcome), f"{bad.desc}: {detail}")
    if not CENSUS_MODE:
        assert outcome in OK, f"{target} [{param} = {bad.desc}] -> {outcome}: {detail}"


# -- receivers -------------------------------------------------------------------------------------------
_PLAYED: dict[tuple, Any] = {}


def played_learner(cls, rounds: int = 5):
    """A learner of ``cls`` (first test parameter set) played ``rounds`` rounds; a deep copy per call."""
    key = (cls, rounds)
    if key not in _PLAYED:
        learner = _build(cls, test_params(cls)[0])
        game = _Game(learner)
        game.play(learner, 0, rounds)
        _PLAYED[key] = (learner, game)
    learner, game = _PLAYED[key]
    return copy.deepcopy(learner), game


def querying_learner(cls, rounds: int = 5, tries: int = 40):
    """Like :func:`played_learner`, played just long enough that its next ``learn`` queries the oracle.

    CSS10 Algorithm 1 draws its degree N at random and may ask for no copy in a round (N = 0 with
    ``skip_zero_terms``); a receiver that asks for nothing cannot see, hence cannot refuse, a bad copy.  Every
    case of a target starts from a deep copy of one receiver (same generator state, same draws), so picking one
    that queries makes every case of the target meaningful."""
    key = ("querying", cls, rounds)
    if key not in _PLAYED:
        m = int(getattr(cls, "copies_per_round", 1))
        for r in range(rounds, rounds + tries):
            learner, game = played_learner(cls, r)
            probe = FakeOracle(np.repeat(game.X[5][None, :], m, axis=0), game.X.shape[1])  # the targets' x, y
            copy.deepcopy(learner).learn(probe, game.target(5))
            if probe.calls:
                _PLAYED[key] = (learner, game)
                break
        else:  # pragma: no cover - a learner that never queries
            raise AssertionError(f"{cls.__name__} asked its oracle for nothing in {tries} rounds")
    learner, game = _PLAYED[key]
    return copy.deepcopy(learner), game


class FakeOracle:
    """An oracle serving whatever it is given (a user's oracle: the learner must validate what it returns)."""

    def __init__(self, copies, d):
        self.copies = copies
        self.d = d
        self.queries = 0
        self.calls = 0

    def query(self, n=1):
        self.queries += n
        self.calls += 1
        c = self.copies
        if isinstance(c, np.ndarray) and c.ndim == 2 and c.shape[0] >= 1 and n != c.shape[0]:
            return np.repeat(c[:1], n, axis=0)
        return c


def fitted_estimators():
    """``(name, cls, make, Xc, Xm, y)`` for every estimator of :mod:`nolo.sklearn_api` on one small readings problem
    (10 items, 3 readings of 3 features; ``Xc`` the clean rows, ``Xm`` the readings, ``y`` the target, +-1 for a
    classifier): ``make()`` returns a copy of an instance fitted once on ``(Xm, y)``."""
    import copy

    import nolo.sklearn_api as api

    rng = np.random.default_rng(0)
    n, m, d = 10, 3, 3
    Xc = rng.standard_normal((n, d)) / np.sqrt(d)
    Xm = Xc[:, None, :] + 0.1 * rng.standard_normal((n, m, d))
    out = []
    for name in api.__all__:
        cls = getattr(api, name)
        classifier = "Classifier" in name
        y = np.where(Xc[:, 0] > 0, 1.0, -1.0) if classifier else Xc @ np.ones(d) * 0.5
        if classifier:
            y[:2] = [1.0, -1.0]
        cache: dict = {}

        def make(cls=cls, y=y, cache=cache):
            if "fitted" not in cache:
                cache["fitted"] = cls(**({"seed": 0} if "seed" in cls().get_params() else {})).fit(Xm, y)
            return copy.deepcopy(cache["fitted"])

        out.append((name, cls, make, Xc, Xm, y))
    return out
