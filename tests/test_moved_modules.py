"""Files saved before a module moved still load (modules named by method, learners grouped by family, the papers
out of the experiment engine).  A model file, a configuration or a spec names its classes "module.QualName"; one written under an old
module path is read through ``nolo._config.MOVED_MODULES``.  The old import paths themselves are gone."""

import importlib
import json

import numpy as np
import pytest

from nolo import PersistenceError
from nolo._config import MOVED_MODULES, Configurable, moved_path, registered_class
from nolo.learners.base import Learner
from nolo.persistence import read_npz, write_npz_atomic

OLD_TO_NEW = {
    "nolo.learners.kernel.algorithm1": "nolo.learners.kernel.noisy_kernel",
    "nolo.learners.css11_kernel": "nolo.learners.kernel.gaussian_noise",
    "nolo.learners.oco_examples": "nolo.learners.convex",
    "nolo.sklearn_api.css10": "nolo.sklearn_api.noisy_kernel",
    "nolo.sklearn_api.css11": "nolo.sklearn_api.known_noise",
    "nolo.learners.bandit.environment": "nolo.learners.bandit.simulator",
    **{f"nolo.experiments.{p}": f"nolo.papers.{p}" for p in ("demo", "css10", "css11", "am", "oco", "practice")},
}


def test_the_table_holds_every_move_and_only_the_new_modules_import():
    assert MOVED_MODULES == OLD_TO_NEW
    for old, new in OLD_TO_NEW.items():
        importlib.import_module(new)
        with pytest.raises(ModuleNotFoundError):  # no shims at the old paths
            importlib.import_module(old)


def test_moved_path_matches_whole_components_only():
    assert (moved_path("nolo.learners.oco_examples.linear.OnlineLinearSVM")
            == "nolo.learners.convex.linear.OnlineLinearSVM")
    assert moved_path("nolo.sklearn_api.css11.TwoCopyRegressor") == "nolo.sklearn_api.known_noise.TwoCopyRegressor"
    for unchanged in ("nolo.sklearn_api.css110.X", "nolo.learners.css11_kernels.X", "nolo.learners.ogd.ProjectedOGD",
                      "nolo.learners.convex.linear.OnlineLinearSVM", "nolo.sklearn_api.css10"):
        assert moved_path(unchanged) == unchanged


def test_a_papers_own_class_loads_from_its_old_path():
    """The papers left the experiment engine: a config naming CSS10's two-point noise at its old module loads."""
    from nolo.papers.css10.one_copy import TwoPointNoise

    assert registered_class("nolo.experiments.css10.one_copy.TwoPointNoise") is TwoPointNoise


def _old_path(cls):
    path = f"{cls.__module__}.{cls.__qualname__}"
    (old,) = [o for o, n in OLD_TO_NEW.items() if path.startswith(n + ".")]
    return old + path[len(OLD_TO_NEW[old]):]


def _gaussian_noise(rng):
    from nolo.kernels import GaussianSurrogateKernel
    from nolo.learners.kernel import GaussianNoiseKernelRegression

    X = rng.uniform(-1, 1, size=(30, 2))
    A = GaussianNoiseKernelRegression(kernel=GaussianSurrogateKernel(width=2.0, noise_cov=0.09), W=3.0, step=0.05)
    A.learn_stream(X[:, None, :] + 0.3 * rng.normal(size=(30, 2, 2)), X[:, 0])
    return A, X


def _kernel_ogd(rng):
    from nolo.kernels import GaussianSurrogateKernel
    from nolo.learners.kernel import KernelOGDRegression

    X = rng.uniform(-1, 1, size=(30, 2))
    B = KernelOGDRegression(kernel=GaussianSurrogateKernel(width=2.0), W=3.0, step=0.05)
    B.learn_stream(X, X[:, 0])
    return B, X


def _noisy_kernel(rng):
    from nolo.kernels import PolynomialKernel
    from nolo.learners.kernel import NoisyKernelLearner
    from nolo.noise import GaussianNoise, Oracle

    X = rng.normal(size=(20, 2)) / 2
    L = NoisyKernelLearner(PolynomialKernel(2), "squared", p=2.0, eta=0.05, seed=0)
    for x_t in X:
        L = L.learn(Oracle(x_t, GaussianNoise(0.1), rng), x_t[0])
    return L, X


def _svm(rng):
    from nolo.learners.convex import OnlineLinearSVM

    X = rng.standard_normal((50, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    svm = OnlineLinearSVM(horizon=50)
    svm.learn_stream(X, np.where(X[:, 0] > 0, 1.0, -1.0))
    return svm, X


@pytest.mark.parametrize("make", [_gaussian_noise, _kernel_ogd, _noisy_kernel, _svm],
                         ids=["GaussianNoiseKernelRegression", "KernelOGDRegression", "NoisyKernelLearner",
                              "OnlineLinearSVM"])
def test_model_file_saved_under_the_old_module_path_loads(tmp_path, make):
    learner, X = make(np.random.default_rng(0))
    path = learner.save(tmp_path / "m.npz")
    header, arrays = read_npz(path)
    old = _old_path(type(learner))
    header["config"]["class"] = old
    write_npz_atomic(path, header, arrays)
    assert json.dumps(read_npz(path)[0]).count(old) == 1  # the file now names the old module

    for cls in (Learner, type(learner)):
        loaded = cls.load(path)
        assert type(loaded) is type(learner) and loaded.get_params().keys() == learner.get_params().keys()
        np.testing.assert_array_equal(loaded.predict(X), learner.predict(X))
        assert loaded.to_config()["class"] == f"{type(learner).__module__}.{type(learner).__qualname__}"


def test_matrix_learner_file_with_the_old_path_loads(tmp_path):
    from nolo.learners.convex import TraceNormOGD

    ogd = TraceNormOGD(n_rows=3, n_cols=3, radius=1.0, step=0.25)
    ogd.learn_stream([0, 0], [0, 1], [2.0, 2.0])
    path = ogd.save(tmp_path / "t.npz")
    header, arrays = read_npz(path)
    header["config"]["class"] = "nolo.learners.oco_examples.matrix.TraceNormOGD"
    write_npz_atomic(path, header, arrays)
    np.testing.assert_array_equal(Learner.load(path).W_, ogd.W_)


def test_sklearn_configs_with_the_old_paths_load():
    from nolo.sklearn_api import (
        GaussianNoiseKernelRegressor,
        KnownCovarianceRegressor,
        NoisyKernelClassifier,
        NoisyKernelRegressor,
        TwoCopyRegressor,
    )

    for est in (NoisyKernelRegressor(kernel="linear", seed=3), NoisyKernelClassifier(seed=1),
                TwoCopyRegressor(seed=2), KnownCovarianceRegressor(noise_cov=0.09, seed=0),
                GaussianNoiseKernelRegressor(width=4.0, noise_cov=0.09, W=10.0, seed=0)):
        cfg = json.loads(json.dumps(est.to_config()))
        cfg["class"] = _old_path(type(est))
        back = Configurable.from_config(cfg)
        assert type(back) is type(est) and back.get_params() == est.get_params()


def test_old_spec_class_names_resolve():
    """Specs named re-exports (``nolo.learners.oco_examples.OnlineLinearSVM``) as well as defining modules."""
    from nolo.experiments.spec import load_spec, resolve_class
    from nolo.learners.convex import OnlineLinearSVM

    assert registered_class("nolo.learners.oco_examples.OnlineLinearSVM") is OnlineLinearSVM
    assert resolve_class("nolo.learners.oco_examples.OnlineLinearSVM", "learner") is OnlineLinearSVM
    assert resolve_class("nolo.learners.oco_examples.linear.OnlineLinearSVM", "learner") is OnlineLinearSVM
    spec = load_spec({
        "name": "old-paths", "protocol": "full_information", "rounds": 20, "loss": "hinge",
        "environment": {"generator": "linear_classification", "params": {"d": 3}},
        "learners": [{"name": "svm", "class": "nolo.learners.oco_examples.OnlineLinearSVM",
                      "params": {"constraint": {"class": "L2Ball", "params": {"radius": 1.0}}, "step": 0.1}}],
    })
    assert spec.learners[0].cls == "nolo.learners.oco_examples.OnlineLinearSVM"


def test_unknown_names_under_an_old_path_still_fail_clearly():
    with pytest.raises(PersistenceError, match="unknown class 'nolo.learners.oco_examples.Nope'"):
        registered_class("nolo.learners.oco_examples.Nope")
    with pytest.raises(PersistenceError, match="unknown class"):  # a module-level function, not a class
        registered_class("nolo.learners.kernel.algorithm1.theory_step_size")
