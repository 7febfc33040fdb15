"""The learner contract: parameters, validation leaving state unchanged, persistence format."""

import json

import numpy as np
import pytest

from nolo import ParameterError, PersistenceError
from nolo._config import Configurable
from nolo.learners.base import FullInformationLearner, Learner


class _Toy(FullInformationLearner):
    """A minimal full-information learner: w += eta * (y - <w,x>) x with a random jitter."""

    def __init__(self, eta=0.1, jitter=0.0, seed=None):
        self.eta = eta
        self.jitter = jitter
        self.seed = seed

    def _validate_params(self):
        if not (isinstance(self.eta, (int, float)) and self.eta > 0):
            raise ParameterError(f"eta must be a real number > 0, got {self.eta!r}")

    def _init_state(self, d):
        self.w_ = np.zeros(d)

    def learn(self, x, y):
        x = self._check_x(x)
        self._ensure_initialized(x.shape[0])
        self.w_ = self.w_ + self.eta * (y - self.w_ @ x) * x + self.jitter * self.rng_.standard_normal(x.shape[0])
        self.t_ += 1
        return self

    def predict(self, X):
        self._require_initialized()
        return self._check_X(X) @ self.w_


def test_params_roundtrip_and_rejection_keeps_old_value():
    m = _Toy(eta=0.5)
    assert m.get_params() == {"eta": 0.5, "jitter": 0.0, "seed": None}
    with pytest.raises(ValueError, match="eta"):
        m.set_params(eta=-1)
    assert m.eta == 0.5
    cfg = m.to_config()
    assert Configurable.from_config(json.loads(json.dumps(cfg))).get_params() == m.get_params()


def test_bad_input_leaves_state_unchanged():
    m = _Toy(seed=1).learn([1.0, 2.0], 1.0)
    w = m.w_.copy()
    for bad in ([1.0, np.nan], [1.0, 2.0, 3.0], "abc"):
        with pytest.raises(ValueError):
            m.learn(bad, 1.0)
    np.testing.assert_array_equal(m.w_, w)
    assert m.t_ == 1


def test_predict_before_learning_is_a_clear_error():
    with pytest.raises(ValueError, match="learn"):
        _Toy().predict([[1.0]])


def test_save_load_resume_equals_uninterrupted(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 3)), rng.standard_normal(40)
    a = _Toy(eta=0.05, jitter=0.01, seed=7)
    b = _Toy(eta=0.05, jitter=0.01, seed=7)
    for t in range(20):
        a.learn(X[t], y[t])
        b.learn(X[t], y[t])
    path = b.save(tmp_path / "toy")
    assert path.suffix == ".npz"
    c = Learner.load(path)
    assert type(c) is _Toy and c.get_params() == b.get_params()
    for t in range(20, 40):
        a.learn(X[t], y[t])
        c.learn(X[t], y[t])
    np.testing.assert_array_equal(a.predict(X), c.predict(X))


def test_load_rejects_foreign_files(tmp_path):
    p = tmp_path / "x.npz"
    np.savez(p, a=np.zeros(2))
    with pytest.raises(PersistenceError, match="not a nolo file"):
        Learner.load(p)
    with pytest.raises(PersistenceError, match="no saved learner"):
        Learner.load(tmp_path / "missing.npz")


# -- one validation hook: set_params re-checks every Configurable and rolls back -----------------------------
def _hook_cases():
    from nolo.kernels import GaussianKernel, GaussianSurrogateKernel, PolynomialKernel, RadialKernelApproximation
    from nolo.noise import GaussianNoise, UniformNoise
    from nolo.noise.feedback import FlipChannel
    from nolo.noise.schedules import PerRoundSchedule
    from nolo.oco import Box, ConstantStep, InverseSqrtStep, L2Ball, TheoryStep

    return [
        (PolynomialKernel(2), {"degree": 0}),
        (GaussianKernel(2.0), {"sigma2": -1.0}),
        (GaussianSurrogateKernel(width=2.0, noise_cov=0.1), {"noise_cov": 5.0}),
        (RadialKernelApproximation(c=2.0, noise_variance=0.1), {"c": -1.0}),
        (GaussianNoise(0.5), {"std": -1.0}),
        (UniformNoise(1.0), {"half_width": float("nan")}),
        (PerRoundSchedule([GaussianNoise(0.5)]), {"order": "sequential"}),
        (FlipChannel(0.1, 0.2), {"rho0": 0.9}),
        (ConstantStep(0.1), {"eta": 0.0}),
        (InverseSqrtStep(1.0), {"eta0": -2.0}),
        (TheoryStep(1.0, 1.0, 10), {"T": 0}),
        (L2Ball(1.0), {"radius": -1.0}),
        (Box(-1.0, 1.0), {"low": 2.0}),
    ]


@pytest.mark.parametrize("obj,bad", _hook_cases(), ids=lambda v: type(v).__name__ if not isinstance(v, dict) else "")
def test_set_params_rechecks_every_configurable_and_rolls_back(obj, bad):
    """Before the one hook, set_params on kernels, noise models, steps and projections accepted anything."""
    before = obj.get_params(deep=False)
    with pytest.raises(ParameterError, match=next(iter(bad))):
        obj.set_params(**bad)
    after = obj.get_params(deep=False)
    assert after.keys() == before.keys()
    for k in before:
        assert repr(after[k]) == repr(before[k])


def test_set_params_rollback_restores_private_caches():
    from nolo.learners.kernel import CleanKernelOGD

    m = CleanKernelOGD(kernel="polynomial", eta=0.1)
    m.learn([1.0, 0.5], 0.3)
    kernel_obj, state = m._kernel, {k: v for k, v in vars(m).items()}
    with pytest.raises(ParameterError, match="eta"):
        m.set_params(kernel="linear", eta=-1.0)
    assert m.kernel == "polynomial" and m._kernel is kernel_obj
    assert set(vars(m)) == set(state)


def test_set_params_rejects_nan_seed_and_truthy_flags():
    from nolo.learners import ProjectedOGD
    from nolo.learners.kernel import NoisyKernelLearner
    from nolo.learners.linear import TwoCopyLinearRegression
    from nolo.sklearn_api import NoisyKernelRegressor, TwoCopyRegressor

    for m in (ProjectedOGD(), TwoCopyLinearRegression(step=0.1), NoisyKernelLearner(), NoisyKernelRegressor(),
              TwoCopyRegressor()):
        with pytest.raises(ParameterError, match="seed"):
            m.set_params(seed=float("nan"))
        assert m.seed is None
    with pytest.raises(ParameterError, match="skip_zero_terms"):
        NoisyKernelLearner().set_params(skip_zero_terms="yes")
    with pytest.raises(ParameterError, match="combine_copies"):
        TwoCopyRegressor().set_params(combine_copies=1)
    with pytest.raises(ParameterError, match="shuffle"):
        NoisyKernelRegressor().set_params(shuffle="no")


# -- one registry helper ----------------------------------------------------------------------------------------
def test_registry_lists_allowed_names_and_refuses_duplicates():
    from nolo._registry import Registry

    r = Registry("widget")
    r.register("a", 1)

    @r.register("b")
    class B:
        pass

    r.register("bee", B, alias=True)
    assert r.get("b") is B and r.get("bee") is B
    assert r.names() == ("a", "b") and r.all_names() == ("a", "b", "bee") and "bee" in r
    with pytest.raises(ParameterError, match=r"widget must be one of 'a', 'b', got 'c'"):
        r.get("c")
    with pytest.raises(ParameterError, match="kind must be one of"):
        r.get(["unhashable"], "kind")
    with pytest.raises(ParameterError, match="already registered"):
        r.register("a", 2)
    r.register("a", 2, replace=True)
    assert r["a"] == 2


def test_losses_kernels_and_config_classes_use_the_registry():
    from nolo._config import CLASSES
    from nolo._registry import Registry
    from nolo.kernels import KERNELS, get_kernel
    from nolo.losses import LOSSES, get_loss

    assert isinstance(LOSSES, Registry) and isinstance(KERNELS, Registry) and isinstance(CLASSES, Registry)
    assert "smoothed_hinge" in LOSSES.names() and type(get_loss("logistic")).__name__ == "Logistic"
    assert type(get_kernel("rbf")).__name__ == "GaussianKernel"
    with pytest.raises(ParameterError, match="kernel must be one of 'linear'"):
        get_kernel("cosine")
    with pytest.raises(ParameterError, match="name must be one of 'squared'"):
        get_loss("huber")
    assert "nolo.learners.ogd.ProjectedOGD" in CLASSES


# -- every public learner of the core has a Parameters section and a runnable example -----------------------------
def _core_learners():
    from nolo.learners import ProjectedOGD
    from nolo.learners.kernel import (
        CleanKernelOGD,
        GaussianNoiseKernelRegression,
        KernelOGDRegression,
        NaiveKernelOGD,
        NoisyKernelLearner,
    )
    from nolo.learners.linear import KnownCovarianceLinearRegression, NaiveOGDRegression, TwoCopyLinearRegression
    from nolo.sklearn_api import (
        GaussianNoiseKernelRegressor,
        KnownCovarianceRegressor,
        NoisyKernelClassifier,
        NoisyKernelRegressor,
        TwoCopyRegressor,
    )

    return [ProjectedOGD, TwoCopyLinearRegression, KnownCovarianceLinearRegression, NaiveOGDRegression,
            NoisyKernelLearner, CleanKernelOGD, NaiveKernelOGD, GaussianNoiseKernelRegression, KernelOGDRegression,
            NoisyKernelRegressor, NoisyKernelClassifier, TwoCopyRegressor, KnownCovarianceRegressor,
            GaussianNoiseKernelRegressor]


@pytest.mark.parametrize("cls", _core_learners(), ids=lambda c: c.__name__)
def test_docstring_has_parameters_and_a_passing_example(cls):
    import doctest

    doc = cls.__doc__ or ""
    assert "Parameters\n    ----------" in doc and "Examples\n    --------" in doc and ">>> " in doc
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(cls, cls.__name__, globs={})
    assert tests and tests[0].examples
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {cls.__name__}'s docstring"


@pytest.mark.parametrize("module", ["nolo._registry", "nolo.oco.projected_step", "nolo.kernels.compiled"])
def test_module_examples_run(module):
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
