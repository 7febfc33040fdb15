"""Missing values and read-only arrays at every array entry point: ``act``/``learn``/``predict``/
``decision_function`` of every registered learner (the noisy-input learners' oracle copies), ``fit``/``predict`` of
the scikit-learn estimators and ``run_stream``.

* ``pandas.NA`` in an object array, a nested list, a pandas nullable array or DataFrame, an object Series or column
  (``fuzz_harness.na_values``): refused with a ParameterError naming the argument, the receiver's state unchanged
  (``fuzz_harness.judge``);
* read-only arrays -- ``setflags(write=False)``, ``np.load(mmap_mode="r")`` and for a matrix a read-only
  Fortran-ordered copy (the validation layer's copy of a read-only array once dropped the layout, and with it the
  rounding of ``X @ w``); in the long profile also a read-only strided view and float32 copy
  (``fuzz_harness.readonly_values``): accepted, with exactly the
  result and the state the same array gives when writable, and the input untouched
  (``fuzz_harness.judge_readonly``).

The CI profile puts the NA in the middle of the array; ``NOLO_FUZZ_PROFILE=long`` also first and last, and counts
every verdict in the census instead of failing at the first bad one."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import fuzz_harness as H
from nolo.checks import registered_learners

D = 4  # features of the played learners (nolo.checks._Game)
TMP = tempfile.mkdtemp(prefix="nolo-fuzz-readonly-")


@dataclass
class Entry:
    """One entry point with its array argument ``param`` under attack and a valid value ``good`` for it."""

    name: str
    param: str | tuple[str, ...]
    make: Callable[[], Any]
    call: Callable[[Any, Any], Any]
    good: np.ndarray


def learner_entries(cls) -> list[Entry]:
    name = cls.__name__
    learner, game = H.played_learner(cls)
    make = lambda: H.played_learner(cls)[0]  # noqa: E731
    x, X = np.array(game.X[5]), np.array(game.X[:6])
    if cls.protocol == "matrix_cell":
        ri, ci = game.rows[:6].astype(np.int64), game.cols[:6].astype(np.int64)
        return [Entry(f"{name}.predict(rows)", "rows", make, lambda r, v: r.predict(v, ci), ri),
                Entry(f"{name}.predict(cols)", "cols", make, lambda r, v: r.predict(ri, v), ci)]
    out = []
    if cls.protocol == "bandit":
        out += [Entry(f"{name}.act(x)", "x", make, lambda r, v: r.act(v), x),
                Entry(f"{name}.learn(x)", "x", make, lambda r, v: r.learn(v, 0, 1), x)]
    elif cls.protocol == "noisy_input":
        m = int(getattr(cls, "copies_per_round", 1))
        y = game.target(5)

        def learn_copies(r, v):
            oracle = H.FakeOracle(v, D)
            out = r.learn(oracle, y)
            assert oracle.calls, "the receiver never queried the oracle: the case tests nothing"
            return out

        out.append(Entry(f"{name}.learn(oracle copies)", ("oracle", "copies"), lambda: H.querying_learner(cls)[0],
                         learn_copies, np.repeat(x[None, :], m, axis=0)))
    else:
        y = game.target(5)
        out.append(Entry(f"{name}.learn(x)", "x", make, lambda r, v: r.learn(v, y), x))
    out.append(Entry(f"{name}.predict(X)", "X", make, lambda r, v: r.predict(v), X))
    if callable(getattr(cls, "decision_function", None)):
        out.append(Entry(f"{name}.decision_function(X)", "X", make, lambda r, v: r.decision_function(v), X))
    return out


def estimator_entries() -> list[Entry]:
    out = []
    for name, _cls, make, Xc, Xm, y in H.fitted_estimators():
        out += [Entry(f"{name}.fit(X)", "X", make, lambda r, v, y=y: r.fit(v, y), Xm),
                Entry(f"{name}.fit(y)", "y", make, lambda r, v: r.fit(Xm, v), y),
                Entry(f"{name}.predict(X)", "X", make, lambda r, v: r.predict(v), Xc)]
    return out


def run_stream_entries() -> list[Entry]:
    from nolo.learners.bandit import Banditron, run_stream

    _, game = H.played_learner(Banditron)
    X12 = np.resize(game.X, (12, D))
    y = (np.arange(12) % 3).astype(np.int64)
    make = lambda: H.played_learner(Banditron)[0]  # noqa: E731
    return [Entry("run_stream(Banditron, X)", "X", make, lambda r, v: run_stream(r, v, y, 10, seed=1), X12),
            Entry("run_stream(Banditron, y)", "y", make, lambda r, v: run_stream(r, X12, v, 10, seed=1), y)]


ENTRIES = [e for cls in registered_learners() for e in learner_entries(cls)] + estimator_entries() + run_stream_entries()


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_pandas_na_is_refused_naming_the_argument(entry):
    for bad in H.na_values(entry.good):
        H.judge(f"{entry.name} [NA]", entry.make, entry.call, entry.param, bad)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_readonly_arrays_give_the_writable_result(entry):
    for bad in H.readonly_values(entry.good, TMP):
        H.judge_readonly(f"{entry.name} [read-only]", entry.make, entry.call, bad)


def test_generators():
    """Each NA container really holds a pandas.NA; each read-only value really is read-only (the memory map too)."""
    import pandas as pd

    for good in (np.ones(4), np.ones((3, 4)), np.ones((2, 3, 4))):
        bads = H.na_values(good)
        per_position = 4 if good.ndim < 3 else 2
        assert len(bads) == per_position * len(H._na_positions(good.size, H.CENSUS_MODE))
        assert all(b.must_reject for b in bads)
        for b in bads:
            flat = np.asarray(pd.DataFrame(b.value) if isinstance(b.value, list) and good.ndim == 2 else b.value,
                              dtype=object).ravel() if not isinstance(b.value, list) or good.ndim < 3 else None
            assert flat is None or any(v is pd.NA for v in flat), b.desc
        ro = H.readonly_values(good, TMP)
        assert [b.desc.split(" (")[0] for b in ro][:2] == ["read-only copy", "read-only memory map"]
        assert all(not b.value.flags.writeable and np.array_equal(b.value, good) for b in ro)
        assert isinstance(ro[1].value, np.memmap)
