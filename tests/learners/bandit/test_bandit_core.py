"""The bandit core's contract (issue 10) and the bandit fixes of issue 14 (items 2, 9, 11, 12).

Each issue-14 test failed on revision 5a5dcd4 (before the fix): the reproduction is in its docstring.
"""

from __future__ import annotations

import doctest
import importlib
import json
from typing import NamedTuple

import numpy as np
import pytest
from numba import njit

from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.bandit import (BPA, RCINE, RCNBF, SOBA, Banditron, ClassificationBandit, Perceptron, _stream,
                                  run_stream)
from nolo.learners.bandit._linear import ExploringBanditLearner
from nolo.learners.bandit._pcg64 import uniform
from nolo.learners.bandit._simd import argmax_padded


def _state_bytes(m) -> bytes:
    out = []
    for k in sorted(vars(m)):
        if k.endswith("_") and k != "nrest_seconds_":
            v = getattr(m, k)
            if isinstance(v, np.random.Generator):
                out.append(json.dumps(v.bit_generator.state, sort_keys=True, default=lambda a: np.asarray(a).tolist()))
            elif isinstance(v, np.ndarray):
                out.append(v.tobytes())
            else:
                out.append(repr(v))
    return repr(out).encode()


def _data(n=60, d=4, K=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.argmax(X[:, :K], axis=1)


# ---------------------------------------------------------------------------------------------
# issue 14 item 2: no silent inf/NaN
# ---------------------------------------------------------------------------------------------


def test_banditron_huge_input_raises_before_a_silent_inf():
    """5a5dcd4: Banditron(...).learn(x = 1.7e308, ...) wrote inf into W_ without an error."""
    m = Banditron(n_classes=3, gamma=0.3, seed=0)
    m.learn(np.ones(4), 1, 1)
    before = _state_bytes(m)
    with pytest.raises(NumericalError, match="non-finite"):
        m.learn(np.full(4, 1.7e308), 2, 1)
    assert _state_bytes(m) == before
    assert np.all(np.isfinite(m.W_))


@pytest.mark.parametrize("cls", [Banditron, RCNBF, BPA, SOBA, Perceptron])
def test_float32_learners_reject_unrepresentable_input(cls):
    """5a5dcd4: float32 learners turned finite x > 3.4e38 into inf/NaN, per round and in run_stream."""
    m = cls(n_classes=3, dtype="float32", seed=0)
    x = np.array([1.0, 1e39, 0.0, 1.0])
    args = (x, 1) if cls is Perceptron else (x, 1, 1)
    with pytest.raises(ParameterError, match="x must hold values of magnitude"):
        m.learn(*args)
    X, y = _data()
    X[5, 1] = 1e39
    m = cls(n_classes=3, dtype="float32", seed=0)
    m.initialize(4)
    before = _state_bytes(m)
    with pytest.raises(ParameterError, match="X must hold values of magnitude"):
        run_stream(m, X, y, 100, seed=1)
    assert _state_bytes(m) == before
    with pytest.raises(ParameterError, match="X must hold values"):
        m.predict(X)


def test_soba_huge_input_raises_and_leaves_state_unchanged():
    """5a5dcd4: SOBA on x ~ 1e300 wrote NaN into W_ and inf into a_, then said "state unchanged" a round later."""
    m = SOBA(n_classes=3, gamma=0.2, seed=0)
    m.learn(np.ones(4), 1, 1)
    before = _state_bytes(m)
    with pytest.raises(NumericalError):
        m.learn(np.full(4, 1e300), 0, 1)
    assert _state_bytes(m) == before
    assert np.all(np.isfinite(m.W_)) and np.all(np.isfinite(m.a_))
    m.learn(np.ones(4), 0, 1)  # still usable
    assert np.all(np.isfinite(m.W_))


# ---------------------------------------------------------------------------------------------
# issue 14 item 12: run_stream is all or nothing
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [Banditron, RCNBF, SOBA])
@pytest.mark.parametrize("representation", ["dense", "csr"])
def test_run_stream_failure_rolls_back_learner_and_environment(cls, representation):
    """5a5dcd4: on NumericalError run_stream kept the rounds before the failing one and advanced rng_."""
    X, y = _data(n=40)
    X[17:30] = 1.7e308 if cls is not SOBA else 1e300  # two steps of -x on one row overflow
    m = cls(n_classes=3, seed=3)
    env = ClassificationBandit(X, y, seed=4, order="cycle", representation=representation)
    env.run(m, 10)  # rows 0..9: fine
    before, env_before = _state_bytes(m), json.dumps(env.rng.bit_generator.state, default=str)
    pos = env.pos.copy()
    with pytest.raises(NumericalError, match="undone"):
        env.run(m, 30)  # reaches row 17
    assert _state_bytes(m) == before and m.t_ == 10
    assert json.dumps(env.rng.bit_generator.state, default=str) == env_before
    np.testing.assert_array_equal(env.pos, pos)


def test_all_or_nothing_with_a_generator_shared_by_learner_and_environment():
    X, y = _data(n=40)
    X[17:30] = 1.7e308
    g = np.random.default_rng(5)
    m = Banditron(n_classes=3, seed=g)
    env = ClassificationBandit(X, y, seed=g, order="cycle")
    env.run(m, 10)
    st = json.dumps(g.bit_generator.state, default=str)
    with pytest.raises(NumericalError):
        env.run(m, 30)
    assert json.dumps(g.bit_generator.state, default=str) == st and m.rng_ is g


# ---------------------------------------------------------------------------------------------
# issue 14 items 9 and 11 (bandit parts)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [float("inf"), 1.5, "abc"])
def test_perceptron_bad_n_classes_is_named(bad):
    """5a5dcd4: n_classes=inf -> OverflowError, 1.5 -> a message about y, 'abc' -> a raw int() error."""
    with pytest.raises(ParameterError, match="n_classes"):
        Perceptron(n_classes=bad).learn(np.ones(3), 0)
    with pytest.raises(ParameterError, match="n_classes"):
        Banditron(n_classes=bad).learn(np.ones(3), 0, 1)


def test_float32_soba_rejects_a_that_underflows():
    """5a5dcd4: SOBA(dtype='float32', a=1e-100) was accepted; a became 0 in float32."""
    with pytest.raises(ParameterError, match=r"\ba must"):
        SOBA(dtype="float32", a=1e-100).initialize(3)
    SOBA(dtype="float32", a=1e-18).initialize(3)
    SOBA(dtype="float64", a=1e-100).initialize(3)


def test_rcine_huge_warm_refit_epochs_is_rejected():
    """5a5dcd4: RCINE(warm_refit_epochs=2**63) was accepted and hung at the first warm refit."""
    with pytest.raises(ParameterError, match="warm_refit_epochs"):
        RCINE(warm_refit_epochs=2**63).initialize(3)


@pytest.mark.parametrize("cps", [[1.5, 2.5], [0.5], [2, 1], [np.nan]])
def test_non_integer_checkpoints_are_rejected(cps):
    """5a5dcd4: run_stream(checkpoints=[1.5, 2.5]) silently truncated them to [1, 2]."""
    X, y = _data()
    m = Banditron(n_classes=3, seed=0)
    with pytest.raises(ParameterError, match="checkpoints"):
        run_stream(m, X, y, 5, checkpoints=cps)
    r = run_stream(m, X, y, 5, checkpoints=[1.0, 5.0])  # integral floats are fine
    assert r.checkpoints.tolist() == [1, 5]


# ---------------------------------------------------------------------------------------------
# the plug-in contract: a new learner in one file (the example of docs/bandit-core.md)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def igw_act(state, sp, K, rng):
    """Inverse gap weighting: p_k = 1/(K + gamma (s_best - s_k)) for k != best, the rest on best; one uniform."""
    best = argmax_padded(sp, K)
    u = uniform(rng)
    acc = 0.0
    for k in range(K):
        if k != best:
            acc += 1.0 / (K + state.gamma * (sp[best] - sp[k]))
            if u < acc:
                return best, k
    return best, best


@njit(cache=True, nogil=True, inline="always")
def square_loss_update(state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback):
    """One SGD step on (s_played - f)^2 / 2 for the played class's regressor."""
    c = state.lr * (feedback - s[played])
    ok = True
    for t in range(lo, hi):
        w = Wt[idx[t], played] + c * val[t]
        Wt[idx[t], played] = w
        ok &= np.isfinite(w)
    return ok


class IGWState(NamedTuple):
    gamma: float
    lr: float
    act = igw_act
    update = square_loss_update


class IGWRegressor(ExploringBanditLearner):
    """A toy SquareCB-style learner: per-class linear regressors, inverse-gap-weighted play."""

    def __init__(self, n_classes=2, gamma=10.0, lr=0.1, dtype="float64", seed=None):
        self.n_classes, self.gamma, self.lr, self.dtype, self.seed = n_classes, gamma, lr, dtype, seed

    def _check_gamma(self) -> None:
        if not (isinstance(self.gamma, (int, float)) and self.gamma > 0):
            raise ParameterError(f"gamma must be a positive number, got {self.gamma!r}")

    def _state_record(self) -> IGWState:
        return IGWState(float(self.gamma), float(self.lr))


def test_a_learner_defined_in_one_file_runs_compiled_and_per_round_with_the_same_bits():
    X, y = _data(n=200, d=6, K=4, seed=2)
    y = y % 4
    a = IGWRegressor(n_classes=4, gamma=20.0, seed=1)
    r = run_stream(a, X, y, 3000, rho0=0.1, rho1=0.1, seed=2, representation="csr")
    b = IGWRegressor(n_classes=4, gamma=20.0, seed=1)
    env = ClassificationBandit(X, y, rho0=0.1, rho1=0.1, seed=2)
    for _ in range(3000):
        x = env.next()
        p = b.act(x)
        b.learn(x, p, env.feedback(p))
    np.testing.assert_array_equal(a.W_, b.W_)
    assert a.t_ == b.t_ == 3000
    assert r.played_mistakes[-1] < 0.6 * 3000  # learns (uniform play would miss 3/4)


def test_a_record_without_an_update_does_not_compile():
    class NoRule(NamedTuple):
        gamma: float
        act = igw_act

    with pytest.raises(Exception, match="update"):
        _stream.learn_round(NoRule(1.0), np.zeros((3, 2)), np.zeros(3, np.int64), np.ones(3), 3, -1, 0, 1)


def test_environment_does_not_advance_t():
    """The learner advances its own round counter; the environment only hands it the stream."""
    import inspect

    from nolo.learners.bandit import simulator

    src = inspect.getsource(simulator)
    assert "t_ +=" not in src and "getattr(learner" not in src and "hasattr(learner" not in src


# ---------------------------------------------------------------------------------------------
# docstrings and layering
# ---------------------------------------------------------------------------------------------

MODULES = ["perceptron", "banditron", "rcnbf", "rcine", "bpa", "soba"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    mod = importlib.import_module(f"nolo.learners.bandit.{name}")
    cls = {"perceptron": Perceptron, "banditron": Banditron, "rcnbf": RCNBF, "rcine": RCINE, "bpa": BPA,
           "soba": SOBA}[name]
    assert "Parameters\n    ----------" in cls.__doc__ and "Examples\n    --------" in cls.__doc__
    res = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.attempted >= 2 and res.failed == 0


def test_no_upward_imports_from_the_bandit_package():
    import ast
    import pathlib

    import nolo.learners.bandit as pkg

    for f in pathlib.Path(pkg.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                for n in names:
                    assert not n.startswith(("nolo.experiments", "nolo.cli")), (f.name, n)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_float64_row_gets_the_same_verdicts_as_any_other_row(dtype):
    """A writeable float64 row takes act/learn's short validation path; a list, a read-only row or a float32 row take
    check_array's: the same rows are refused with the same message and the state is left as it was."""
    m = Banditron(n_classes=3, dtype=dtype, seed=0)
    m.learn(np.ones(4), 1, 1)
    before = _state_bytes(m)
    bad = {"nan": [1.0, np.nan, 0.0, 1.0], "inf": [1.0, -np.inf, 0.0, 1.0], "width": [1.0, 2.0, 3.0]}
    if dtype == "float32":
        bad["magnitude"] = [1.0, 1e39, 0.0, 1.0]
    for why, row in bad.items():
        ro = np.array(row)
        ro.setflags(write=False)
        msgs = set()
        for x in (np.array(row), ro, list(row)):
            for call in (lambda: m.act(x), lambda: m.learn(x, 0, 1)):
                with pytest.raises(ParameterError) as e:
                    call()
                msgs.add(str(e.value))
        assert len(msgs) == 1, (why, msgs)
        assert _state_bytes(m) == before
    x = np.array([0.5, -1.0, 2.0, 0.0])
    ro = x.copy()
    ro.setflags(write=False)
    assert m.act(x) == Banditron(n_classes=3, dtype=dtype, seed=0).learn(np.ones(4), 1, 1).act(ro)
