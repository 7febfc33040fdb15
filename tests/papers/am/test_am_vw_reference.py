"""Vowpal Wabbit reference curve of the AM Figure 2 reproduction (skips when vowpalwabbit is absent)."""

import numpy as np
import pytest

from nolo.exceptions import ParameterError
from nolo.papers.am import _common as C
from nolo.papers.am import vw as V
from nolo.learners.bandit import Perceptron, run_stream


def test_stream_draws_are_the_environment_stream():
    X, y = C.load_stream("digits", True)
    r = run_stream(Perceptron(n_classes=10), X, y, 3_000, 0.2, 0.2, seed=1_005, log=True)
    idx, _ = V.stream_draws(X.shape[0], 3_000, 1_005)
    assert np.array_equal(idx, r.extra["log"]["index"])


def test_feature_lines_use_string_names():
    lines = V.feature_lines(np.array([[0.0, 0.5, 0.25], [0.0, 0.0, 0.0]]))
    assert lines == ["| f1:0.5 f2:0.25", "| "]


@pytest.mark.skipif(not V.available(), reason="optional package vowpalwabbit not installed")
def test_vw_learns_and_cb_explore_matches_cbify_without_noise():
    X, y = C.load("digits", True)
    cps = [1_000, 20_000]
    a = V.vw_progressive_error(X, y, 20_000, env_seed=3, seed=1, checkpoints=cps)
    b = V.vw_progressive_error(X, y, 20_000, env_seed=3, seed=1, checkpoints=cps, mode="cb_explore")
    assert a["mode"] == "cbify" and b["mode"] == "cb_explore"
    # chance is 0.9; both learn, and our driving of --cb_explore reproduces --cbify's error
    assert a["error_rate"][-1] < 0.3 and a["error_rate"][-1] < a["error_rate"][0]
    assert abs(a["error_rate"][-1] - b["error_rate"][-1]) < 0.03
    noisy = V.vw_progressive_error(X, y, 20_000, 0.4, 0.4, env_seed=3, seed=1, checkpoints=cps)
    assert noisy["mode"] == "cb_explore" and noisy["error_rate"][-1] > b["error_rate"][-1] + 0.1
    with pytest.raises(ParameterError, match="cbify"):
        V.vw_progressive_error(X, y, 100, 0.1, 0.1, mode="cbify")


@pytest.mark.skipif(not V.available(), reason="optional package vowpalwabbit not installed")
def test_native_calls_equal_vw_through_its_python_workspace():
    """vw_progressive_error calls VW's native parse/predict/learn (pylibvw) instead of Workspace.predict/learn: the
    same calls, so exactly the errors of the textbook loops below, which go through VW's Python wrappers."""
    import vowpalwabbit

    from nolo.noise import FlipChannel
    from nolo.noise.feedback_laws import flip_one

    X, y = C.load("iris", True)
    T, cps = 800, [100, 800]
    lines = V.feature_lines(X)
    idx, u_flip = V.stream_draws(len(lines), T, 4)
    ws = vowpalwabbit.Workspace("--cbify 3 --epsilon 0.05 --quiet --random_seed 2")
    errs = []
    for t in range(T):
        ws.learn(f"{y[idx[t]] + 1} {lines[idx[t]]}")
        if t + 1 in cps:
            errs.append(ws.get_sum_loss() / (t + 1))
    ws.finish()
    assert V.vw_progressive_error(X, y, T, env_seed=4, seed=2, checkpoints=cps)["error_rate"].tolist() == errs
    ws = vowpalwabbit.Workspace("--cb_explore 3 --epsilon 0.05 --quiet --random_seed 2")
    u_play, law = np.random.default_rng(2).random(T), FlipChannel(0.3, 0.1).record()
    mistakes, errs = 0, []
    for t in range(T):
        i = int(idx[t])
        pmf = ws.predict(lines[i])
        c = np.cumsum(pmf)
        a = int(min(np.searchsorted(c, u_play[t] * c[-1], side="right"), 2))
        mistakes += int(a != y[i])
        f_rho = flip_one(law, int(a == y[i]), u_flip[t], int(y[i]), a, i)
        ws.learn(f"{a + 1}:{1 - f_rho}:{pmf[a]} {lines[i]}")
        if t + 1 in cps:
            errs.append(mistakes / (t + 1))
    ws.finish()
    got = V.vw_progressive_error(X, y, T, 0.3, 0.1, env_seed=4, seed=2, checkpoints=cps)["error_rate"].tolist()
    assert got == errs


def test_draw_action_by_hand_and_as_numpy_draws():
    pmf = [0.2, 0.5, 0.3]
    assert [V.draw_action(pmf, u) for u in (0.0, 0.19, 0.2, 0.69, 0.71, 1.0)] == [0, 0, 1, 1, 2, 2]
    g = np.random.default_rng(11)
    for _ in range(2_000):
        p = g.dirichlet(np.ones(int(g.integers(1, 12)))).astype(np.float32).tolist()  # VW's pmf: float32 values
        u = float(g.random())
        c = np.cumsum(p)
        assert V.draw_action(p, u) == int(min(np.searchsorted(c, u * c[-1], side="right"), len(p) - 1))
