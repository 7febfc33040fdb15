"""Inputs the fuzz harness never generates, refused by name before any work (or taken on the usual path):

* a pandas missing value (``pd.NA``) anywhere in ``run_stream``'s inputs and the bandit learners' calls: a
  ``ParameterError`` naming the parameter, not numpy's ``TypeError``;
* a first input so wide that the learner's state cannot fit (SquareCB with the FD-SON oracle, BiasCompensatedRLS,
  Banditron with 10^4 classes): a ``ParameterError`` naming the size and the parameters it comes from -- the check
  SquareCB's ridge oracle and KernelLabelTS make against ``max_bytes`` -- instead of a bare ``MemoryError`` that left
  the learner half-initialised;
* a read-only array: the same results through the loops already compiled for writeable arrays (numba compiled a
  second version of every loop for it, a minute or more).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from nolo._validation import check_array, check_choice, check_sparse, check_state_bytes, physical_memory
from nolo.exceptions import ParameterError
from nolo.learners.bandit import Banditron, SquareCB, run_stream
from nolo.learners.bandit.oracles import check_ridge_bytes
from nolo.learners.linear import BiasCompensatedRLS

RNG = np.random.default_rng(0)
X = RNG.normal(size=(30, 4))
Y = RNG.integers(0, 3, 30)

# -- pandas.NA ---------------------------------------------------------------------------------------------------


def _frame_with_na():
    df = pd.DataFrame(X).astype("Float64")
    df.iloc[3, 1] = pd.NA
    return df


NA_CASES = {
    "X list": ("X", lambda: run_stream(Banditron(n_classes=3), [[1.0, pd.NA, 2.0, 0.5]] * 30, Y, 10, seed=1)),
    "X frame": ("X", lambda: run_stream(Banditron(n_classes=3), _frame_with_na(), Y, 10, seed=1)),
    "y": ("y", lambda: run_stream(Banditron(n_classes=3), X, pd.array([0, 1, pd.NA] * 10, dtype="Int64"), 10,
                                  seed=1)),
    "n_rounds": ("n_rounds", lambda: run_stream(Banditron(n_classes=3), X, Y, pd.NA, seed=1)),
    "rho0": ("rho0", lambda: run_stream(Banditron(n_classes=3), X, Y, 10, rho0=pd.NA, seed=1)),
    "rho1": ("rho1", lambda: run_stream(Banditron(n_classes=3), X, Y, 10, rho1=pd.NA, seed=1)),
    "order": ("order", lambda: run_stream(Banditron(n_classes=3), X, Y, 10, order=pd.NA, seed=1)),
    "representation": ("representation",
                       lambda: run_stream(Banditron(n_classes=3), X, Y, 10, representation=pd.NA, seed=1)),
    "seed": ("seed", lambda: run_stream(Banditron(n_classes=3), X, Y, 10, seed=pd.NA)),
    "checkpoints": ("checkpoints", lambda: run_stream(Banditron(n_classes=3), X, Y, 10, seed=1,
                                                      checkpoints=pd.array([1, pd.NA, 10], dtype="Int64"))),
    "log": ("log", lambda: run_stream(Banditron(n_classes=3), X, Y, 10, seed=1, log=pd.NA)),
    "learner gamma": ("gamma", lambda: run_stream(Banditron(n_classes=3, gamma=pd.NA), X, Y, 10, seed=1)),
    "learn x": ("x", lambda: Banditron(n_classes=3).learn([1.0, pd.NA, 2.0, 0.5], 0, 1)),
    "learn played": ("played", lambda: Banditron(n_classes=3).learn(X[0], pd.NA, 1)),
    "learn feedback": ("feedback", lambda: Banditron(n_classes=3).learn(X[0], 0, pd.NA)),
    "learn_many X": ("X", lambda: SquareCB(n_classes=3).learn_many(_frame_with_na(), Y, Y == 0)),
    "learn_many feedback": ("feedback", lambda: SquareCB(n_classes=3).learn_many(
        X, Y, pd.array([0, 1, pd.NA] * 10, dtype="Int64"))),
    "predict X": ("X", lambda: Banditron(n_classes=3).initialize(4).predict(_frame_with_na())),
}


@pytest.mark.parametrize("case", list(NA_CASES))
def test_a_pandas_missing_value_is_a_parameter_error_naming_the_parameter(case):
    name, call = NA_CASES[case]
    with pytest.raises(ParameterError, match=f"^(learner\\.)?{name} must"):
        call()


def test_check_choice_and_check_array_name_a_missing_value():
    with pytest.raises(ParameterError, match="^order must be one of 'a', 'b', got <NA>"):
        check_choice(pd.NA, "order", ("a", "b"))
    with pytest.raises(ParameterError, match="^order must be one of"):
        check_choice(np.array([1, 2]), "order", ("a", "b"))  # an array: no truth value either
    for dtype in (np.float64, None):
        with pytest.raises(ParameterError, match=r"^X must hold numbers, got a missing value \(pandas.NA\)"):
            check_array([[1.0, pd.NA]], "X", dtype=dtype)
    with pytest.raises(ParameterError, match="^X must be convertible"):  # dtype=None: strings are not numbers
        check_array([["a", "b"]], "X", dtype=None)
    with pytest.raises(ParameterError, match="^X must be real"):  # nor complex values (numpy would drop the imag)
        check_array([[1.0, 1j]], "X", dtype=None)
    assert check_array(np.array([[1, 2]]), "X", dtype=None).dtype.kind == "i"  # numbers keep their dtype


# -- a state too large for the machine ---------------------------------------------------------------------------


def _wide_rows(d: int, n: int = 3) -> sp.csr_matrix:
    """``n`` sparse rows of dimension ``d`` with two non-zeros each (cheap however large ``d``)."""
    rows = np.repeat(np.arange(n), 2)
    cols = np.tile([0, d - 1], n)
    return sp.csr_matrix((np.ones(2 * n), (rows, cols)), shape=(n, d))


SIZE_CASES = {
    "SquareCB fdson": (lambda: SquareCB(n_classes=10**4, oracle="fdson"), 10**7,
                       r"SquareCB\(oracle='fdson'\).*n_classes=10000, n_features=10000000, sketch_size=20 needs "
                       r"[\d.]+ GiB, more than this machine's memory"),
    "SquareCB ogd": (lambda: SquareCB(n_classes=10**4, oracle="ogd"), 10**8,
                     r"SquareCB\(oracle='ogd'\).*n_classes=10000, n_features=100000000 needs"),
    "Banditron": (lambda: Banditron(n_classes=10**4), 10**7,
                  r"Banditron keeps an n_classes x n_features float64 weight matrix: n_classes=10000, "
                  r"n_features=10000000 needs 745.06 GiB, more than this machine's memory"),
}


@pytest.mark.parametrize("case", list(SIZE_CASES))
def test_a_first_input_too_wide_for_the_state_is_a_parameter_error_naming_the_size(case):
    make, d, message = SIZE_CASES[case]
    learner = make()
    assert physical_memory() is not None and physical_memory() < 2**39  # the sizes below exceed any test machine
    with pytest.raises(ParameterError, match=message):
        run_stream(learner, _wide_rows(d), np.array([0, 1, 2]), 5, seed=1)
    assert not learner.is_initialized  # nothing was allocated: the learner is as it was
    with pytest.raises(ParameterError, match=message):
        learner.initialize(d)
    assert not learner.is_initialized


def test_bias_compensated_rls_names_the_size_of_its_matrices():
    m = BiasCompensatedRLS()
    d = 10**5
    with pytest.raises(ParameterError, match=r"BiasCompensatedRLS keeps 12 p x p float64 matrices .*cv_folds=5.*"
                                             r"n_features=100000 needs [\d.]+ GiB, more than this machine's memory"):
        m.learn_stream(np.ones((1, 2, d)), np.ones(1))
    assert not m.is_initialized
    with pytest.raises(ParameterError, match="BiasCompensatedRLS keeps 2 p x p"):
        BiasCompensatedRLS(cv_folds=None).initialize(d)
    assert BiasCompensatedRLS().initialize(3).is_initialized  # small: as before


def test_the_size_checks_are_one_check():
    """SquareCB's ridge oracle and KernelLabelTS (against max_bytes) and the machine-memory checks word the size
    alike: they are one function."""
    with pytest.raises(ParameterError, match=r"^oracle='ridge' keeps .*K=10, d=100 needs 0.00 GiB, more than "
                                             r"max_bytes=0.00 GiB; use oracle='ogd'"):
        check_ridge_bytes(10, 100, 10_000)
    with pytest.raises(ParameterError, match=r"^a thing needs 1.00 GiB, more than max_bytes=0.50 GiB; shrink it$"):
        check_state_bytes(2**30, "a thing", max_bytes=2**29, hint="shrink it")
    check_state_bytes(2**20, "a small thing")  # fits: nothing raised


# -- read-only arrays --------------------------------------------------------------------------------------------


def _signatures() -> dict[str, int]:
    """Compiled versions per numba dispatcher of every loaded nolo module."""
    from numba.core.registry import CPUDispatcher

    out = {}
    for modname, mod in list(sys.modules.items()):
        if modname.startswith("nolo") and mod is not None:
            for k, v in list(vars(mod).items()):
                if isinstance(v, CPUDispatcher):
                    out[f"{modname}.{k}"] = len(v.signatures)
    return out


def _read_only(a):
    if sp.issparse(a):
        a = a.copy()
        for arr in (a.data, a.indices, a.indptr):
            arr.flags.writeable = False
        return a
    a = np.array(a)
    a.flags.writeable = False
    return a


def _play(X, Xs, y, x, played, bits):
    """Every bandit entry point that reaches compiled code, on Banditron and SquareCB: results to compare."""
    out = []
    for cls in (Banditron, SquareCB):
        out.append(run_stream(cls(n_classes=3, seed=0), X, y, 40, seed=1, representation="dense").played_mistakes)
        out.append(run_stream(cls(n_classes=3, seed=0), Xs, y, 40, seed=1, representation="csr").played_mistakes)
        m = cls(n_classes=3, seed=0)
        a = m.act(x)
        m.learn(x, a, 1)
        m.learn_many(X, played, bits)
        out += [m.W_.copy(), m.predict(X), m.predict(Xs), m.decision_function(X)]
    return out


def test_a_read_only_array_takes_the_compiled_path_already_there():
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    played, bits = Y.copy(), (Y == 0).astype(np.int64)
    writeable = _play(X, Xs, Y, X[0].copy(), played, bits)
    before = _signatures()
    read_only = _play(_read_only(X), _read_only(Xs), _read_only(Y), _read_only(X[0]), _read_only(played),
                      _read_only(bits))
    grown = {k: (before.get(k, 0), n) for k, n in _signatures().items() if n != before.get(k, 0)}
    assert not grown, f"read-only inputs compiled other versions of these loops: {grown}"
    assert all(np.array_equal(a, b) for a, b in zip(writeable, read_only))


def test_the_validation_layer_copies_only_read_only_arrays():
    a = X.copy()
    assert check_array(a, "X") is a  # writeable: not copied
    ro = _read_only(X)
    out = check_array(ro, "X")
    assert out.flags.writeable and out is not ro and np.array_equal(out, X)
    ros = _read_only(sp.csr_matrix(X))
    out = check_sparse(ros)
    assert all(arr.flags.writeable for arr in (out.data, out.indices, out.indptr))
    assert not ros.data.flags.writeable  # the caller's matrix is left as it was
