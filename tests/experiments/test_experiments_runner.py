"""The runner's metrics on tiny hand-checkable streams, for the three protocols."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

from nolo.exceptions import ParameterError
from nolo.experiments.environments import register_generator
from nolo.experiments.runner import TIMING_COLUMNS, record_points, run_learner
from nolo.experiments.spec import ExperimentSpec
from nolo.learners.base import BanditLearner, FullInformationLearner
from nolo.random import spawn


@register_generator("test_runner_fixed")
def _fixed(rounds, rng, *, x=(1.0,), y=(0.5,)):
    """The rows x[i % len(x)] (1-d) with targets y[i % len(y)]; ignores rng."""
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y)
    i = np.arange(rounds)
    return xs[i % len(xs)][:, None], ys[i % len(ys)]


class ConstantPredictor(FullInformationLearner):
    """Plays the fixed linear predictor ``w`` and never updates (a test double)."""

    def __init__(self, w=1.0, seed=None):
        self.w = w
        self.seed = seed

    def _validate_params(self):
        pass

    def _init_state(self, n_features):
        self.targets_ = []

    def learn(self, x, y):
        self._ensure_initialized(np.asarray(x).shape[0])
        self.targets_.append(float(y))
        return self

    def predict(self, X):
        return self._check_X(X) @ np.full(self.n_features_in_, float(self.w))


class AlwaysZero(BanditLearner):
    """Always plays label 0 and keeps every feedback bit it got (a test double)."""

    def __init__(self, seed=None):
        self.seed = seed

    def _validate_params(self):
        pass

    def _init_state(self, n_features):
        self.bits_ = []

    def act(self, x):
        self._ensure_initialized(np.asarray(x).shape[0])
        return 0

    def learn(self, x, played, feedback):
        self.bits_.append(int(feedback))
        return self

    def predict(self, X):
        return np.zeros(len(np.atleast_2d(X)), dtype=np.int64)


def _run_keeping_learner(spec, name, seed):
    """run_learner, also returning the learner object it played."""
    import nolo.experiments.runner as runner_mod

    seen = []
    orig = runner_mod._build_learner

    def spy(spec, name, seed):
        seen.append(orig(spec, name, seed))
        return seen[-1]

    runner_mod._build_learner = spy
    try:
        frame = run_learner(spec, name, seed).frame
    finally:
        runner_mod._build_learner = orig
    return frame, seen[0]


def _spec(**kw):
    base = {"name": "tiny", "rounds": 6, "record_every": 2, "seeds": [0]}
    base.update(kw)
    return ExperimentSpec.from_dict(base)


def test_record_points():
    assert record_points(6, 2).tolist() == [2, 4, 6]
    assert record_points(7, 3).tolist() == [3, 6, 7]
    assert record_points(5, 5).tolist() == [5]


def test_noisy_input_metrics_by_hand():
    # x = 1, y = 0.5, no noise.  Two-copy OGD with eta_1 = 0.5: round 1 plays w = 0 (loss 0.25),
    # gradient 2 (0 - 0.5) * 1 = -1, so w = 0.5 and every later round has loss 0.  The best fixed
    # predictor (w = 0.5) has loss 0, so the regret stays 0.25; two queries per round.
    spec = _spec(protocol="noisy_input", loss="squared", regret={"radius": 1.0},
                 environment={"generator": "test_runner_fixed", "params": {"x": [1.0], "y": [0.5]},
                              "noise": {"class": "nolo.noise.ZeroNoise", "params": {}}},
                 learners=[{"name": "u", "class": "nolo.learners.linear.TwoCopyLinearRegression",
                            "params": {"radius": 1.0, "step": {"class": "nolo.oco.InverseSqrtStep", "params": {"eta0": 0.5}}}}])
    f = run_learner(spec, "u", 0).frame
    assert f["t"].tolist() == [2, 4, 6]
    np.testing.assert_allclose(f["clean_loss"], [0.125, 0.0, 0.0])
    np.testing.assert_allclose(f["avg_clean_loss"], [0.125, 0.0625, 0.25 / 6])
    np.testing.assert_allclose(f["regret"], [0.25, 0.25, 0.25], atol=1e-9)
    assert f["queries"].tolist() == [4, 8, 12]
    assert "mistakes" not in f  # regression: no mistakes column
    assert (f["time_per_round"] > 0).all() and np.all(np.diff(f["elapsed"]) >= 0)


def test_full_information_classification_metrics_by_hand():
    # w = 1 on x = 1, -1, 2, -2 with y = +1, +1, -1, -1: margins y*m = 1, -1, -2, 2 -> hinge losses
    # 0, 2, 3, 0 and mistakes at rounds 2 and 3.  In the ball |w| <= 1 the best fixed hinge loss is
    # 2 on the first two rounds and 4 on all four (attained at w = 0), so the regret is 0 then 1.
    spec = _spec(protocol="full_information", rounds=4, loss="hinge", regret={"radius": 1.0},
                 environment={"generator": "test_runner_fixed",
                              "params": {"x": [1.0, -1.0, 2.0, -2.0], "y": [1, 1, -1, -1]}},
                 learners=[{"name": "c", "class": "test_experiments_runner.ConstantPredictor",
                            "params": {"w": 1.0}}])
    f = run_learner(spec, "c", 0).frame
    assert f["t"].tolist() == [2, 4]
    np.testing.assert_allclose(f["clean_loss"], [1.0, 1.5])
    assert f["mistakes"].tolist() == [1, 2]
    np.testing.assert_allclose(f["error_rate"], [0.5, 0.5])
    np.testing.assert_allclose(f["regret"], [0.0, 1.0], atol=1e-6)
    assert "queries" not in f


def test_bandit_mistakes_and_feedback_channel():
    env = {"generator": "test_runner_fixed", "params": {"x": [1.0], "y": [0, 1, 0, 2]}}
    clean = _spec(protocol="bandit", rounds=4, record_every=1, environment=env,
                  learners=[{"name": "z", "class": "test_experiments_runner.AlwaysZero"}])
    f = run_learner(clean, "z", 3).frame
    assert f["mistakes"].tolist() == [0, 1, 1, 2]
    np.testing.assert_allclose(f["error_rate"], [0, 0.5, 1 / 3, 0.5])
    assert "clean_loss" not in f and "regret" not in f

    # with a flipping channel the learner sees FlipChannel.transmit of the true bits, drawn from the
    # run's feedback stream (the 4th generator spawned from the seed)
    from nolo.noise import FlipChannel

    noisy = _spec(protocol="bandit", rounds=400, record_every=400,
                  environment={**env, "feedback": {"class": "FlipChannel", "params": {"rho0": 0.3, "rho1": 0.2}}},
                  learners=[{"name": "z", "class": "test_experiments_runner.AlwaysZero"}])
    f, model = _run_keeping_learner(noisy, "z", 5)
    truth = np.tile([1, 0, 1, 0], 100)
    rng = spawn(5, 4)[3]
    ch = FlipChannel(0.3, 0.2)
    expected = [ch.transmit(int(b), rng) for b in truth]
    assert model.bits_ == expected
    assert f["mistakes"].tolist() == [200]


def test_a_run_is_a_pure_function_of_spec_learner_and_seed():
    from nolo.papers.demo import demo_spec

    spec = demo_spec(rounds=300, record_every=50)
    a = run_learner(spec, "unbiased", 1).frame.drop(columns=list(TIMING_COLUMNS))
    b = run_learner(spec, "unbiased", 1).frame.drop(columns=list(TIMING_COLUMNS))
    c = run_learner(spec, "unbiased", 2).frame.drop(columns=list(TIMING_COLUMNS))
    assert a.equals(b)
    assert not a.equals(c)


def test_run_learner_rejects_a_grid_and_an_unknown_learner():
    from nolo.exceptions import ParameterError
    from nolo.papers.demo import demo_spec

    spec = demo_spec(rounds=20, record_every=10)
    with pytest.raises(ParameterError, match="learner must be one of unbiased, known-cov, naive"):
        run_learner(spec, "other", 0)
    gridded = ExperimentSpec.from_dict({**spec.to_dict(), "grid": {"rounds": [10, 20]}})
    with pytest.raises(ParameterError, match="concrete spec"):
        run_learner(gridded, "unbiased", 0)


def test_target_noise_reaches_the_learner_but_not_the_clean_loss():
    # full information, constant predictor w = 0 on x = 1, y = 0.5: the clean loss is 0.25 every round,
    # while the learner is told y + n_t with n_t drawn from the run's target-noise stream.
    from nolo.noise import GaussianNoise, add_target_noise

    spec = _spec(protocol="full_information", rounds=50, record_every=50, loss="squared",
                 environment={"generator": "test_runner_fixed", "params": {"x": [1.0], "y": [0.5]},
                              "target_noise": {"class": "GaussianNoise", "params": {"std": 1.0}}},
                 learners=[{"name": "c", "class": "test_experiments_runner.ConstantPredictor",
                            "params": {"w": 0.0}}])
    f, model = _run_keeping_learner(spec, "c", 0)
    np.testing.assert_allclose(f["avg_clean_loss"], [0.25])
    rng = spawn(0, 4)[2]
    expected = [add_target_noise(0.5, GaussianNoise(std=1.0), rng, round=t) for t in range(50)]
    np.testing.assert_allclose(model.targets_, expected)
    assert np.std(model.targets_) > 0.5


def test_progress_bars_only_on_a_terminal_and_never_under_ci(monkeypatch):
    import sys

    from nolo.experiments.context import progress, progress_enabled

    class Tty:
        def isatty(self):
            return True

        def write(self, s):
            return len(s)

        def flush(self):
            pass

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys, "stderr", Tty())
    assert progress_enabled()
    assert not progress(total=3).disable
    monkeypatch.setenv("CI", "true")
    assert not progress_enabled()
    assert progress(total=3).disable
    monkeypatch.delenv("CI")
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not progress_enabled()


# -- every feedback law in a spec (issue 30) ---------------------------------------------------------------------

class RoundsBandit(BanditLearner):
    """A Banditron or an RCNBF played round by round (act/learn only, not on the compiled core): play() sends it
    through the per-round environment, the twin of the compiled loop the learner itself is played in."""

    def __init__(self, n_classes=2, gamma=0.05, rho0=None, rho1=None, seed=None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.rho0 = rho0
        self.rho1 = rho1
        self.seed = seed

    def _validate_params(self):
        pass

    def _inner_learner(self):
        from nolo.learners.bandit import RCNBF, Banditron

        if self.rho0 is None:
            return Banditron(n_classes=self.n_classes, gamma=self.gamma, seed=self.seed)
        return RCNBF(n_classes=self.n_classes, gamma=self.gamma, rho0=self.rho0, rho1=self.rho1, seed=self.seed)

    def _init_state(self, n_features):
        self.inner_ = self._inner_learner()

    def act(self, x):
        self._ensure_initialized(np.asarray(x).shape[0])
        return self.inner_.act(x)

    def learn(self, x, played, feedback):
        self.inner_.learn(x, played, feedback)
        return self

    def predict(self, X):
        return self.inner_.predict(X)


_Q3 = [[0.1, 0.2, 0.05], [0.3, 0.0, 0.1], [0.25, 0.15, 0.2]]
_COLUMN_RULES = {"rho0": {"class": "ColumnRates", "params": {"column": 0, "low": 0.05, "high": 0.35}},
                 "rho1": {"class": "ColumnRates", "params": {"column": 1, "low": 0.3, "high": 0.0}}}


def _law_spec(feedback, environment=None, **kw):
    env = environment or {"generator": "multiclass_linear", "params": {"d": 4, "n_classes": 3}}
    learners = [{"name": "compiled", "class": "Banditron", "params": {"n_classes": 3, "gamma": 0.1}},
                {"name": "rounds", "class": "test_experiments_runner.RoundsBandit", "params": {"n_classes": 3,
                                                                                             "gamma": 0.1}}]
    return _spec(protocol="bandit", rounds=kw.pop("rounds", 1500), record_every=250,
                 environment={**env, "feedback": feedback}, learners=kw.pop("learners", learners), **kw)


@pytest.mark.parametrize("feedback", [
    {"class": "FlipMatrix", "params": {"Q": _Q3}},
    {"class": "nolo.noise.ContextFlips", "params": _COLUMN_RULES},
], ids=["FlipMatrix", "ContextFlips"])
@pytest.mark.parametrize("source", ["generator", "dataset"])
def test_a_spec_plays_any_feedback_law_compiled_and_round_by_round_alike(feedback, source, tmp_path):
    env = None
    if source == "dataset":  # a file of 200 rows drawn with replacement: the per-row rates follow its rows
        rng = np.random.default_rng(0)
        X = rng.standard_normal((200, 4))
        y = np.argmax(X[:, :3], axis=1)
        path = tmp_path / "data.csv"
        np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%.6f")
        env = {"dataset": str(path), "params": {"draw": "replace"}}
    spec = _law_spec(feedback, env)
    compiled, model = _run_keeping_learner(spec, "compiled", 3)
    rounds, twin = _run_keeping_learner(spec, "rounds", 3)
    assert model.seed == twin.seed
    for col in ("t", "mistakes", "error_rate"):
        assert compiled[col].tolist() == rounds[col].tolist()
    np.testing.assert_array_equal(model.W_, twin.inner_.W_)
    # the law is played: a FlipChannel with no flips gives other mistakes
    clean = run_learner(_law_spec({"class": "FlipChannel", "params": {}}, env), "compiled", 3).frame
    assert clean["mistakes"].tolist() != compiled["mistakes"].tolist()


def test_a_spec_flip_matrix_with_equal_cells_is_the_flip_channel():
    # a FlipMatrix holding rho1 on the diagonal and rho0 elsewhere draws the FlipChannel's stream bit for bit, so the
    # spec's FlipChannel results (pinned elsewhere) are those of the law path
    r0, r1 = 0.2, 0.1
    Q = np.full((3, 3), r0)
    np.fill_diagonal(Q, r1)
    a = run_learner(_law_spec({"class": "FlipChannel", "params": {"rho0": r0, "rho1": r1}}), "compiled", 1).frame
    b = run_learner(_law_spec({"class": "FlipMatrix", "params": {"Q": Q.tolist()}}), "compiled", 1).frame
    assert a["mistakes"].tolist() == b["mistakes"].tolist()
    assert a["greedy_mistakes"].tolist() == b["greedy_mistakes"].tolist()


@pytest.mark.parametrize("path", ["compiled", "rounds"])
def test_a_spec_law_the_correction_does_not_assume_warns(path):
    from nolo.exceptions import FeedbackLawWarning

    cls = "RCNBF" if path == "compiled" else "test_experiments_runner.RoundsBandit"
    learners = [{"name": path, "class": cls, "params": {"n_classes": 3, "gamma": 0.1, "rho0": 0.1, "rho1": 0.1}}]
    with pytest.warns(FeedbackLawWarning, match="FlipMatrix"):
        run_learner(_law_spec({"class": "FlipMatrix", "params": {"Q": _Q3}}, rounds=300, learners=learners), path, 0)
    with pytest.warns(FeedbackLawWarning, match="ContextFlips"):
        run_learner(_law_spec({"class": "ContextFlips", "params": _COLUMN_RULES}, rounds=300, learners=learners),
                    path, 0)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", FeedbackLawWarning)  # the law the correction assumes: no warning
        run_learner(_law_spec({"class": "FlipChannel", "params": {"rho0": 0.1, "rho1": 0.1}}, rounds=300,
                              learners=learners), path, 0)


def test_a_spec_with_explicit_per_row_rates_needs_one_per_row():
    # a generator shows `rounds` rows: explicit lists must have that length
    ok = _law_spec({"class": "ContextFlips", "params": {"rho0": [0.1] * 300, "rho1": [0.2] * 300}}, rounds=300)
    run_learner(ok, "compiled", 0)
    bad = _law_spec({"class": "ContextFlips", "params": {"rho0": [0.1] * 299, "rho1": [0.2] * 299}}, rounds=300)
    with pytest.raises(ParameterError, match=r"environment\.feedback\.params\.rho0: .*one entry per row of X \(300\)"):
        run_learner(bad, "compiled", 0)


@pytest.mark.parametrize("feedback, field, message", [
    ({"class": "FlipMatrix", "params": {"Q": [[0.5, 0.6], [0.1, 0.1]]}}, "environment.feedback.params.Q",
     r"Q\[y, y\] \+ Q\[y, a\] must be < 1"),
    ({"class": "FlipMatrix", "params": {"Q": [[0.1, 0.2, 0.3]]}}, "environment.feedback.params.Q", "square"),
    ({"class": "ContextFlips", "params": {"rho0": [0.1, 1.5], "rho1": [0.1, 0.1]}},
     "environment.feedback.params.rho0", r"rho0\[1\] = 1.5"),
    ({"class": "ContextFlips", "params": {**_COLUMN_RULES, "rho1": {"class": "ColumnRates",
                                                                   "params": {"high": 1.2}}}},
     "environment.feedback.params.rho1.params.high", "high"),
    ({"class": "GaussianNoise", "params": {}}, "environment.feedback.class", "not a feedback law"),
])
def test_an_invalid_feedback_law_is_a_spec_error_naming_the_field(feedback, field, message):
    from nolo.experiments.spec import SpecError

    with pytest.raises(SpecError) as info:
        _law_spec(feedback)
    assert any(p == field and re.search(message, m) for p, m in info.value.errors), info.value.errors
    assert isinstance(info.value, ParameterError)


@pytest.mark.parametrize("feedback, match", [
    ({"class": "FlipMatrix", "params": {"Q": [[0.1, 0.2], [0.2, 0.1]]}},
     r"environment\.feedback\.params\.Q: Q must be at least \(3, 3\)"),
    ({"class": "ContextFlips", "params": {"rho0": {"class": "ColumnRates", "params": {"column": 9, "high": 0.2}},
                                          "rho1": [0.1] * 1500}},
     r"environment\.feedback\.params\.rho0: rho0 \(ColumnRates\): column must be a feature index in \[0, 4\)"),
    ({"class": "ContextFlips", "params": {"rho0": {"class": "ColumnRates", "params": {"column": 0, "high": 0.6}},
                                          "rho1": {"class": "ColumnRates", "params": {"column": 0, "high": 0.6}}}},
     r"environment\.feedback\.params\.rho0: rho0 \+ rho1 must be < 1 in every row"),
])
def test_a_law_that_does_not_fit_the_data_names_the_field(feedback, match):
    with pytest.raises(ParameterError, match=match):
        run_learner(_law_spec(feedback), "compiled", 0)
