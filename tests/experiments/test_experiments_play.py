"""play(): the one round loop of the experiments -- its paths agree, its metrics are the hand-worked ones,
and every visiting order is the bandit environment's."""

from __future__ import annotations

import numpy as np
import pytest

from nolo.exceptions import CopiesExhausted, ParameterError
from nolo.experiments.environments import visit_order
from nolo.experiments.play import BanditStream, Stream, play, record_points
from nolo.learners.bandit import Banditron, ClassificationBandit, run_stream
from nolo.learners.linear import NaiveOGDRegression, TwoCopyLinearRegression
from nolo.noise import GaussianNoise


class PyBanditron:
    """A bandit learner not built on the compiled core (it only has ``act``/``learn``, here a Banditron's):
    play() runs it round by round through the environment."""

    protocol = "bandit"

    def __init__(self, **params):
        self._inner = Banditron(**params)

    def act(self, x):
        return self._inner.act(x)

    def learn(self, x, played, feedback):
        self._inner.learn(x, played, feedback)
        return self

    @property
    def W_(self):
        return self._inner.W_


class UserBanditron(Banditron):
    """Banditron subclassed outside nolo: built on the core, so play() hands it to the compiled loop."""


def _digits_like(n=300, d=8, K=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.argmax(X[:, :K], axis=1).astype(np.int64)
    return X, y


def test_record_points():
    assert record_points(6, 2).tolist() == [2, 4, 6]
    assert record_points(7, 3).tolist() == [3, 6, 7]
    assert record_points(10, [3, 10]).tolist() == [3, 10]
    assert record_points(1000, "log")[-1] == 1000
    for bad in ([3, 3], [0, 5], [5, 11], "every", 0):
        with pytest.raises(ParameterError):
            record_points(10, bad)


def test_bandit_play_is_run_stream():
    X, y = _digits_like()
    a = play(Banditron(n_classes=4, gamma=0.1, seed=3), BanditStream(X, y, 2_000, 0.2, 0.1, seed=7), "bandit", 100)
    r = run_stream(Banditron(n_classes=4, gamma=0.1, seed=3), X, y, 2_000, 0.2, 0.1, seed=7,
                   checkpoints=record_points(2_000, 100))
    assert a.frame.t.tolist() == r.checkpoints.tolist()
    assert a.frame.mistakes.tolist() == r.played_mistakes.tolist()
    assert a.frame.greedy_mistakes.tolist() == r.greedy_mistakes.tolist()


@pytest.mark.parametrize("order", ["replace", "permute", "cycle"])
def test_per_round_bandit_path_equals_the_compiled_one(order):
    # a learner play() cannot hand to the compiled loop goes through the same environment round by round:
    # same examples, same flips, same exploration draws -> the same mistakes and the same weights
    X, y = _digits_like()
    stream = BanditStream(X, y, 1_500, 0.25, 0.15, order=order, seed=11)
    fast = Banditron(n_classes=4, gamma=0.1, seed=5)
    slow = PyBanditron(n_classes=4, gamma=0.1, seed=5)
    a = play(fast, stream, "bandit", 250)
    b = play(slow, stream, "bandit", 250)
    assert b.wrong is not None and a.wrong is None  # b went round by round
    assert a.frame.mistakes.tolist() == b.frame.mistakes.tolist()
    np.testing.assert_array_equal(fast.W_, slow.W_)


def test_a_core_learner_defined_outside_nolo_is_played_compiled():
    # the compiled path is chosen by what a learner is (a record on the bandit core), not by the module it lives in:
    # the one-file example of docs/bandit-core.md, defined in a test module, and a subclass defined here
    from tests.learners.bandit.test_bandit_core import IGWRegressor

    X, y = _digits_like()
    stream = BanditStream(X, y, 1_200, 0.1, 0.1, seed=4, log=True)  # the log is kept by the compiled loop only
    for make in (lambda: IGWRegressor(n_classes=4, gamma=20.0, seed=1),
                 lambda: UserBanditron(n_classes=4, gamma=0.1, seed=3)):
        a = play(make(), stream, "bandit", 300)
        assert a.wrong is None and "log" in a.extra
        r = run_stream(make(), X, y, 1_200, 0.1, 0.1, seed=4, checkpoints=record_points(1_200, 300))
        assert a.frame.mistakes.tolist() == r.played_mistakes.tolist()


def test_compiled_copies_path_equals_the_round_loop():
    # pre-drawn copies: the linear learners' compiled learn_stream and the per-round loop (forced by a
    # progress bar) give the same clean losses
    rng = np.random.default_rng(0)
    T, d = 400, 3
    X = rng.standard_normal((T, d)) / np.sqrt(d)
    y = X @ np.array([0.5, -0.4, 0.2])
    C = X[:, None, :] + 0.3 * rng.standard_normal((T, 2, d))
    yn = y + 0.05 * rng.standard_normal(T)

    class Bar:
        def __init__(self, total):
            pass

        def update(self, n):
            pass

        def close(self):
            pass

    for cls in (TwoCopyLinearRegression, NaiveOGDRegression):
        stream = Stream(X, y, copies=C, seen_y=yn)
        a = play(cls(radius=1.0, step=0.05), stream, "noisy_input", 100, loss="squared")
        b = play(cls(radius=1.0, step=0.05), stream, "noisy_input", 100, loss="squared", progress=Bar)
        assert a.queries is None and b.queries is not None  # a compiled, b round by round
        np.testing.assert_allclose(a.losses, b.losses, rtol=1e-12, atol=1e-15)
        assert b.queries.min() >= 1


def test_too_few_pre_drawn_copies_name_the_round():
    # one pre-drawn copy per round where the two-copy learner needs two: the round's replay refuses, naming it
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    C = X[:, None, :] + 0.1 * rng.standard_normal((20, 1, 3))
    learner = TwoCopyLinearRegression(radius=1.0, step=0.05)
    with pytest.raises(CopiesExhausted, match=r"round 0 has 1 copy: asked for 2 but only 1 remains"):
        play(learner, Stream(X, X @ np.ones(3), copies=C), "noisy_input", 5, loss="squared")
    assert learner.t_ == 0


def test_noisy_input_metrics_by_hand():
    # x = 1, y = 0.5, noise N(0, 0): two-copy OGD with eta_1 = 0.5 plays w = 0 (loss 0.25), then w = 0.5 (loss 0)
    stream = Stream(np.ones((4, 1)), np.full(4, 0.5), noise=GaussianNoise(0.0), rng=np.random.default_rng(0))
    r = play(TwoCopyLinearRegression(radius=1.0, step=0.5), stream, "noisy_input", 2, loss="squared",
             regret_radius=1.0)
    assert r.losses.tolist() == [0.25, 0.0, 0.0, 0.0]
    assert r.frame.clean_loss.tolist() == [0.125, 0.0]
    assert r.frame.avg_clean_loss.tolist() == [0.125, 0.0625]
    assert r.frame.queries.tolist() == [4, 8]
    np.testing.assert_allclose(r.frame.regret, [0.25, 0.25], atol=1e-9)


def test_play_rejects_a_protocol_mismatch_and_a_missing_noise():
    X, y = _digits_like()
    with pytest.raises(ParameterError, match="noisy_input"):
        play(TwoCopyLinearRegression(), Stream(X, y.astype(float), noise=GaussianNoise(0.1)), "full_information")
    with pytest.raises(ParameterError, match="stream.noise"):
        play(TwoCopyLinearRegression(), Stream(X, y.astype(float)), "noisy_input")
    with pytest.raises(ParameterError, match="BanditStream"):
        play(Banditron(n_classes=4), Stream(X, y), "bandit")
    with pytest.raises(ParameterError, match="protocol must be one of"):
        play(Banditron(n_classes=4), Stream(X, y), "semi_bandit")


def test_visit_order_is_the_bandit_environments():
    rng_seed = 4
    assert visit_order(5, 12, "cycle", rng_seed).tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]
    perm = visit_order(7, 21, "permute", rng_seed)
    for k in range(3):
        assert sorted(perm[7 * k:7 * k + 7].tolist()) == list(range(7))
    env = ClassificationBandit(np.zeros((9, 1)), np.zeros(9, dtype=np.int64), order="replace", seed=rng_seed)
    expected = []
    for _ in range(50):
        env.next()
        expected.append(env.current_index)
    assert visit_order(9, 50, "replace", rng_seed).tolist() == expected


@pytest.mark.parametrize("law", ["matrix", "context"])
def test_a_bandit_stream_carries_any_feedback_law_to_both_paths(law):
    # BanditStream(feedback=law): the compiled loop and the round-by-round environment apply the law's one rule to
    # the same uniforms -> the same mistakes and weights; the law is not FlipChannel's (other mistakes)
    from nolo.noise import ContextFlips, FlipMatrix

    X, y = _digits_like()
    rng = np.random.default_rng(2)
    feedback = (FlipMatrix(rng.uniform(0.0, 0.45, size=(4, 4))) if law == "matrix"
                else ContextFlips(rng.uniform(0.0, 0.4, size=len(X)), rng.uniform(0.0, 0.4, size=len(X))))
    stream = BanditStream(X, y, 1_500, order="permute", seed=11, feedback=feedback)
    fast, slow = Banditron(n_classes=4, gamma=0.1, seed=5), PyBanditron(n_classes=4, gamma=0.1, seed=5)
    a = play(fast, stream, "bandit", 250)
    b = play(slow, stream, "bandit", 250)
    assert b.wrong is not None and a.wrong is None
    assert a.frame.mistakes.tolist() == b.frame.mistakes.tolist()
    np.testing.assert_array_equal(fast.W_, slow.W_)
    r = run_stream(Banditron(n_classes=4, gamma=0.1, seed=5), X, y, 1_500, order="permute", seed=11,
                   feedback=feedback, checkpoints=record_points(1_500, 250))
    assert a.frame.mistakes.tolist() == r.played_mistakes.tolist()
    c = play(Banditron(n_classes=4, gamma=0.1, seed=5), BanditStream(X, y, 1_500, order="permute", seed=11),
             "bandit", 250)
    assert c.frame.mistakes.tolist() != a.frame.mistakes.tolist()
