"""Every registered learner through the contract of :mod:`nolo.checks` (River's test_estimators.py pattern),
and every public learner's docstring examples executed."""

import doctest
import importlib
import inspect

import pytest

from nolo.checks import CHECKS, check_learner, is_concrete_learner, registered_learners

LEARNERS = registered_learners()

#: known contract violations in files other helpers own (strict: the test fails once one is fixed, so the
#: marker must go with the fix)
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


def _cases():
    for cls in LEARNERS:
        for name in CHECKS:
            marks = []
            reason = KNOWN_FAILURES.get((cls.__name__, name))
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            yield pytest.param(cls, name, id=f"{cls.__name__}-{name}", marks=marks)


def test_every_learner_is_registered():
    names = {c.__name__ for c in LEARNERS}
    # the 15 learners of the tree this check was written against; new ones are picked up automatically
    assert {"Perceptron", "Banditron", "RCNBF", "RCINE", "BPA", "SOBA", "NoisyKernelLearner", "CleanKernelOGD",
            "NaiveKernelOGD", "TwoCopyLinearRegression", "KnownCovarianceLinearRegression", "NaiveOGDRegression",
            "GaussianNoiseKernelRegression", "KernelOGDRegression", "ProjectedOGD"} <= names
    assert not any(n in names for n in ("Learner", "BanditLearner", "ExploringBanditLearner", "NoisyLinearOGD"))


@pytest.mark.parametrize("cls, check", list(_cases()))
def test_contract(cls, check):
    check_learner(cls, [check])


def test_check_learner_catches_a_violation():
    """Negative control: a learner whose predict mutates state, and one whose set_params does not roll back."""
    import numpy as np

    from nolo.checks import ContractViolation
    from nolo.exceptions import ParameterError
    from nolo.learners.base import FullInformationLearner

    class LeakyPredict(FullInformationLearner):
        def __init__(self, eta=0.1, seed=None):
            self.eta = eta
            self.seed = seed

        def _validate_params(self):
            if not (isinstance(self.eta, (int, float)) and 0 < self.eta < 1):
                raise ParameterError(f"eta must be in (0, 1), got {self.eta!r}")

        def _init_state(self, d):
            self.w_ = np.zeros(d)

        def learn(self, x, y):
            x = self._check_x(x)
            self._ensure_initialized(x.shape[0])
            if not np.isfinite(y):
                raise ParameterError("y must be finite")
            self.w_ = self.w_ + self.eta * (y - self.w_ @ x) * x
            self.t_ += 1
            return self

        def predict(self, X):
            self._require_initialized()
            X = self._check_X(X)
            self.t_ += 0 if getattr(self, "_pure", False) else 1  # the violation
            return X @ self.w_

    assert is_concrete_learner(LeakyPredict)
    with pytest.raises(ContractViolation, match="predict changed"):
        check_learner(LeakyPredict, ["predict_is_pure"])

    class NoRollback(LeakyPredict):
        _pure = True

        def set_params(self, **params):
            for k, v in params.items():
                setattr(self, k, v)
            self._validate_params()
            return self

    with pytest.raises(ContractViolation, match="rejected but changed"):
        check_learner(NoRollback, ["params_rollback"])
    check_learner(NoRollback, ["predict_is_pure", "same_seed_same_stream", "save_load_resume"])


# -- docstrings ----------------------------------------------------------------------------------------
def _public_learners():
    return [c for c in LEARNERS if not c.__module__.split(".")[-1].startswith("_")]


def _examples(cls):
    finder = doctest.DocTestFinder(recurse=False)
    module = importlib.import_module(cls.__module__)
    return [t for t in finder.find(cls, cls.__name__, module=module) if t.examples]


def _lacking(cls):
    doc = inspect.getdoc(cls) or ""
    return [s for s in ("Parameters", "Examples") if f"\n{s}\n---" not in f"\n{doc}"]


@pytest.mark.parametrize("cls", _public_learners(), ids=lambda c: c.__name__)
def test_docstring_examples_run(cls):
    """Every ``>>>`` example in a learner's docstring runs and prints what it shows."""
    tests = _examples(cls)
    assert tests, f"{cls.__name__}'s docstring has no >>> example (issue 10: every public learner has one)"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {cls.__name__}'s docstring"


@pytest.mark.parametrize("cls", _public_learners(), ids=lambda c: c.__name__)
def test_docstring_has_parameters_and_examples(cls):
    missing = _lacking(cls)
    assert not missing, f"{cls.__name__} docstring lacks {', '.join(missing)} (issue 10)"


def test_nolo_checks_module_doctest():
    import nolo.checks

    result = doctest.testmod(nolo.checks, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_every_learner_is_played_by_the_shared_checks():
    """No learner escapes the shared checks: the matrix learners' cell protocol is played too."""
    from nolo.checks import unchecked_learners
    from nolo.learners.convex import MaxEntryOGD, TraceNormOGD

    assert unchecked_learners() == []
    assert {MaxEntryOGD, TraceNormOGD} <= set(LEARNERS)


def test_cell_protocol_checks_catch_broken_matrix_learners():
    """Negative controls: a matrix learner that accepts a cell outside its matrix, whose predict moves the
    iterate, or whose stream path differs from its per-round path, is caught."""
    from nolo.checks import ContractViolation
    from nolo.learners.convex import MaxEntryOGD

    class Wrapping(MaxEntryOGD):  # wraps out-of-range cells instead of rejecting them
        def learn(self, x, y):
            if isinstance(x, tuple) and len(x) == 2 and all(isinstance(v, int) for v in x):
                x = (x[0] % self.n_rows, x[1] % self.n_cols)
            return super().learn(x, y)

    class Drifting(MaxEntryOGD):  # predict changes the state
        def predict(self, rows, cols):
            out = super().predict(rows, cols)
            self.W_ = self.W_ * 0.5
            return out

    class Skipping(MaxEntryOGD):  # learn_stream drops the last round
        def learn_stream(self, rows, cols, y):
            return super().learn_stream(rows[:-1], cols[:-1], y[:-1])

    params = MaxEntryOGD._test_params()[0]
    for cls, check in ((Wrapping, "bad_input_keeps_state"), (Drifting, "predict_is_pure"),
                       (Skipping, "stream_equals_rounds")):
        with pytest.raises(ContractViolation):
            CHECKS[check](cls, params)
        CHECKS[check](MaxEntryOGD, params)  # the real class passes the same check
