"""Poisoned-but-finite model states for one learner class: every float state array (and float scalar) of a saved
learner replaced by a finite value it cannot hold -- all zeros, negated, scaled by 1e300 or 1e-300 or to 0.99 times
the largest float, one entry set to 1e300 or 1e200, and for square matrices (covariances, precisions, their inverses
and Cholesky factors) the diagonal set to 0, an indefinite matrix with a positive diagonal, and the largest
eigenvalue negated.

The generic checks of ``Learner.load`` (dtype, shape, layout, finiteness) pass all of these; what refuses them is a
learner's ``_check_state``.  Each case is saved, loaded, and the loaded learner predicts, plays a few rounds and
predicts again.  Outcomes (one JSON line per case, as tests/fuzz/hostile_files.py prints them):

* ``"rejected"`` -- ``Learner.load`` raised PersistenceError naming the edited entry and the learner class (good);
* ``"accepted"`` -- the file loaded, and predicting, learning and the decision scores stayed finite with no
  exception: the edit gave a state the learner can be in (acceptable);
* ``"numerical"`` -- the file loaded and using it raised NumericalError, for a state a run can reach
  (:data:`REACHABLE`: load must accept what a learner saves; using it may only fail loudly);
* ``"FAIL: ..."`` -- a *silent acceptance*: the file loaded, then an update or a prediction raised (any exception,
  a nolo one included: a learner that cannot learn from the state should have been refused at load) or returned a
  non-finite score, probability, prediction or stored value; or load raised something other than PersistenceError,
  or a PersistenceError that does not name the entry and the class.

Run as ``python tests/fuzz/poisoned_states.py ClassName [ClassName ...]`` (tests/fuzz/test_poisoned_states.py runs it
in a subprocess with the runner of test_hostile_files, so a segfault fails the class's test instead of killing the
suite).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from nolo.checks import _build, _Game, registered_learners, test_params
from nolo.exceptions import NumericalError, PersistenceError
from nolo.learners.base import Learner
from nolo.persistence import read_npz, write_npz_atomic

#: rounds a learner is played before it is saved, and after the poisoned file is loaded
SAVED_ROUNDS = 25
RESUMED_ROUNDS = 5

#: edited states a learner can reach by learning, so that load must accept them and use may answer NumericalError
#: (never a silent non-finite value): (class, case) -> how a run reaches it
REACHABLE = {
    (name, "W_: scaled to the largest float"): "learn(x) with x of ~1.7e308 adds x to W_ (accepted rows)"
    for name in ("Banditron", "Perceptron", "RCINE", "RCNBF")
}


def _square(a: np.ndarray) -> bool:
    return a.ndim >= 2 and a.shape[-1] == a.shape[-2] >= 2


def array_edits(a: np.ndarray):
    """(description, edited copy) of a float array: finite values a learner's state may not be able to hold
    (an edit that overflows is left out)."""
    if a.dtype.kind != "f" or not a.size:
        return
    for desc, b in _edits(a):
        if np.all(np.isfinite(b)):
            yield desc, b


def _edits(a: np.ndarray):
    with np.errstate(all="ignore"):
        big = float(np.max(np.abs(a)))
        yield "zeros", np.zeros_like(a)
        yield "negated", -a
        yield "scaled by 1e300", a * (1e300 if big <= 1.0 else 1e300 / big)
        if big:
            yield "scaled to the largest float", a / big * (0.99 * np.finfo(a.dtype).max)
        yield "scaled by 1e-300", a * 1e-300
        for v in (1e300, 1e200):
            b = a.copy()
            b.flat[0] = v
            yield f"entry 0 = {v:g}", b
        if _square(a):
            n = a.shape[-1]
            idx = np.arange(n)
            b = a.copy()
            b[..., idx, idx] = 0.0
            yield "diagonal 0", b
            b = a.copy()  # positive diagonal (a check of the diagonal alone passes it), indefinite
            b[..., idx, idx] = np.abs(b[..., idx, idx]) + 1.0
            off = 2.0 * np.sqrt(b[..., 0, 0] * b[..., 1, 1]) + 1.0
            b[..., 0, 1] = off
            b[..., 1, 0] = off
            yield "indefinite with a positive diagonal", b
            sym = (a + np.swapaxes(a, -1, -2)) / 2.0
            w, v = np.linalg.eigh(sym)
            w[..., -1] = -np.abs(w[..., -1]) - 1.0
            b = np.ascontiguousarray(np.einsum("...ij,...j,...kj->...ik", v, w, v)).astype(a.dtype)
            if a.flags.f_contiguous and not a.flags.c_contiguous:
                b = np.asfortranarray(b)
            yield "largest eigenvalue negated", b


def scalar_edits(v: float):
    yield "0", 0.0
    if v:
        yield "negated", -float(v)
    yield "1e300", 1e300
    yield "1e-300", 1e-300


def cases(header: dict, arrays: dict):
    """(name, state key, (header, arrays)) per poisoned state; edits that change nothing are skipped."""

    def edited(fn):
        h = json.loads(json.dumps(header))
        a = dict(arrays)
        fn(h, a)
        return h, a

    for key, entry in header["state"].items():
        kind = next(iter(entry)) if isinstance(entry, dict) and entry else None
        if kind == "array":
            names = [(key, entry["array"])]
        elif kind == "arrays":
            names = [(f"{key}[{i}]", n) for i, n in enumerate(entry["arrays"])]
        elif kind == "value" and isinstance(entry["value"], float):
            for desc, v in scalar_edits(entry["value"]):
                yield f"{key} = {desc}", key, edited(lambda h, a, k=key, v=v: h["state"].update({k: {"value": v}}))
            continue
        else:
            continue
        for label, name in names:
            orig = arrays[name]
            for desc, new in array_edits(orig):
                if np.array_equal(new, orig) and np.array_equal(np.signbit(new), np.signbit(orig)):
                    continue
                yield f"{label}: {desc}", key, edited(lambda h, a, n=name, v=new: a.update({n: v}))


def _nonfinite(v) -> bool:
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "fc" and not np.all(np.isfinite(v))
    if isinstance(v, (float, np.floating)):
        return not np.isfinite(v)
    if isinstance(v, (list, tuple)):
        return any(_nonfinite(x) for x in v)
    return False


def _outputs(learner, game) -> str:
    """"" or what is wrong with the loaded learner's predictions, scores and stored floats."""
    p = np.asarray(game.predict(learner))
    if _nonfinite(p):
        return "predict returned a non-finite value"
    if getattr(learner, "average_", None) is not None and _nonfinite(np.asarray(learner.predict(game.X, average=True))):
        return "predict(average=True) returned a non-finite value"
    if game.n_classes is not None and p.dtype.kind in "iu" and p.size and (p.min() < 0 or p.max() >= game.n_classes):
        return f"predict returned a label outside [0, {game.n_classes})"
    for method in ("decision_function", "action_probabilities"):
        if game.protocol != "matrix_cell" and callable(getattr(learner, method, None)):
            if _nonfinite(np.asarray(getattr(learner, method)(game.X))):
                return f"{method} returned a non-finite value"
    bad = sorted(k for k, v in vars(learner).items() if k.endswith("_") and _nonfinite(v))
    if bad:
        return f"stored state {bad} is not finite"
    return ""


def exercise(learner, game, reachable: bool = False) -> str:
    """Predict, play RESUMED_ROUNDS rounds, predict again; "" or the failure.  Every exception is a failure (the
    rounds are valid, so a learner that cannot take them was loaded from a state it cannot learn from), except a
    NumericalError from a state a run can reach (``reachable``: "numerical")."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if learner.is_initialized:
                problem = _outputs(learner, game)
                if problem:
                    return f"FAIL: {problem}"
            game.play(learner, SAVED_ROUNDS, SAVED_ROUNDS + RESUMED_ROUNDS)
            problem = _outputs(learner, game)
            if problem:
                return f"FAIL: after learning, {problem}"
    except NumericalError as exc:
        if reachable:
            return f"numerical: {str(exc)[:200]}"
        return f"FAIL: using the loaded learner raised NumericalError: {str(exc)[:200]}"
    except Exception as exc:  # noqa: BLE001 - the point is to report it
        return f"FAIL: using the loaded learner raised {type(exc).__name__}: {str(exc)[:200]}"
    return ""


def names_entry(msg: str, key: str, cls_name: str) -> bool:
    """A refusal names the state entry (``key``, or ``key[i]``) and the learner class."""
    return bool(re.search(rf"(?<![A-Za-z0-9_]){re.escape(key)}", msg)) and cls_name in msg


def outcome(path: Path, key: str, cls_name: str, n_rounds: int, reachable: bool = False) -> str:
    try:
        loaded = Learner.load(path)
    except PersistenceError as exc:
        if not names_entry(str(exc), key, cls_name):
            return f"FAIL: the refusal does not name both {key!r} and {cls_name}: {str(exc)[:200]}"
        return "rejected"
    except Exception as exc:  # noqa: BLE001
        return f"FAIL: load raised {type(exc).__name__}: {str(exc)[:200]}"
    return exercise(loaded, _Game(loaded, n_rounds=n_rounds), reachable) or "accepted"


def saved_state(cls):
    """(header, arrays) of a learner of ``cls`` (its first test parameters) played SAVED_ROUNDS rounds."""
    learner = _build(cls, test_params(cls)[0])
    _Game(learner, n_rounds=SAVED_ROUNDS + RESUMED_ROUNDS).play(learner, 0, SAVED_ROUNDS)
    with tempfile.TemporaryDirectory() as tmp:
        return read_npz(learner.save(Path(tmp) / "model.npz"))


def run_class(class_name: str, emit=print) -> None:
    cls = {c.__name__: c for c in registered_learners()}[class_name]
    header, arrays = saved_state(cls)
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, key, (h, a)) in enumerate(cases(header, arrays)):
            emit(json.dumps({"cls": class_name, "try": name}))
            f = write_npz_atomic(Path(tmp) / f"case{i}.npz", h, a)
            emit(json.dumps({"cls": class_name, "case": name,
                             "outcome": outcome(f, key, class_name, SAVED_ROUNDS + RESUMED_ROUNDS,
                                                (class_name, name) in REACHABLE)}))
            f.unlink()
    emit(json.dumps({"cls": class_name, "done": True}))


def main(argv: list[str]) -> int:
    """``poisoned_states.py CLASS [CLASS ...]``: the classes one after another in this process."""
    for name in [a for a in argv if not a.isdigit()]:
        run_class(name, lambda line: print(line, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
