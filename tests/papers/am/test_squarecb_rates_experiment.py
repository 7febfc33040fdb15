"""oracle_noise_rates on logged data, and the vs-peers experiment's task functions (small)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits

from nolo.exceptions import ParameterError
from nolo.learners.bandit import oracle_noise_rates


@pytest.fixture(scope="module")
def log():
    X, y = load_digits(return_X_y=True)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    g = np.random.default_rng(3)
    n = 20_000
    idx = g.integers(0, len(y), n)
    played = g.integers(0, 10, n)
    f = (played == y[idx]).astype(int)
    u = g.random(n)
    f_rho = np.where(f == 1, (u >= 0.3).astype(int), (u < 0.15).astype(int))  # rho0 = 0.15, rho1 = 0.3
    return X[idx], played, f_rho


def test_oracle_noise_rates_on_a_uniform_log(log):
    X, played, f = log
    est = oracle_noise_rates(X, played, f, 10, propensity=np.full(len(f), 0.1))
    assert est["rule"] == "propensity"
    assert abs(est["rho0"] - 0.15) < 0.02 and abs(est["rho1"] - 0.3) < 0.08
    ogd = oracle_noise_rates(X, played, f, 10, propensity=np.full(len(f), 0.1), oracle="ogd")
    assert abs(ogd["rho0"] - 0.15) < 0.03
    import scipy.sparse as sp

    assert oracle_noise_rates(sp.csr_matrix(X), played, f, 10, propensity=np.full(len(f), 0.1)) == est


@pytest.mark.parametrize("kw, name", [(dict(oracle="mlp"), "oracle"), (dict(pct_top=0.0), "pct_top"),
                                      (dict(propensity=np.zeros(20)), "propensity"), (dict(passes=0), "passes")])
def test_oracle_noise_rates_validation(kw, name):
    X = np.ones((20, 3))
    with pytest.raises(ParameterError, match=name):
        oracle_noise_rates(X, np.zeros(20, dtype=int), np.zeros(20, dtype=int), 2, **kw)
    with pytest.raises(ParameterError, match="feedback"):
        oracle_noise_rates(X, np.zeros(20, dtype=int), np.full(20, 2), 2)


def test_vs_peers_task_runs_every_learner_on_one_stream():
    from nolo.papers.am import vs_peers as P

    out = pd.DataFrame(P.peers_task("iris", 0.2, 0.2, 0, True, 3_000))
    last = out[out.t == 3_000].set_index("learner")
    assert set(last.index) == set(P.AM_LEARNERS) | {P.DEFAULT, P.DEFAULT_EST} | set(P.QUICK_OTHERS)
    assert last.loc[P.DEFAULT, "error_rate"] < last.loc[list(P.AM_LEARNERS), "error_rate"].min()
    assert last.loc[P.DEFAULT, "champion"] in ("linear", "kernel", "memory")
    assert tuple(last.loc[P.DEFAULT, ["rho0_hat", "rho1_hat"]]) == (0.2, 0.2)  # given the true rates
    assert np.isfinite(last.loc[P.DEFAULT_EST, ["rho0_hat", "rho1_hat"]].astype(float)).all()
    assert 10_000 not in set(out.t)  # the horizons beyond the run are not recorded
    paper = pd.DataFrame(P.peers_task("iris", 0.2, 0.2, 0, False, 2_000, gammas={a: 0.05 for a in P.AM_LEARNERS}))
    runs_here = {n for n, kw in P.SQUARECB.items() if kw["oracle"] != "fdson" and not kw.get("rff")}
    assert set(paper.learner) == set(P.AM_LEARNERS) | set(P.CORRECTED) | {P.DEFAULT, P.DEFAULT_EST} | runs_here


def test_suite_rows_are_raw_and_shared_with_vw():
    from nolo.papers.am import vs_peers_data as D

    X, y = D.load_rows("breast-cancer", True)
    assert X.max() > 1_000 and X[X > 0].min() < 1e-3  # raw columns, not unit-norm rows
    Xs, ys = D.load_stream_rows("text", False)
    assert Xs.shape == (10_000, 20_000) and Xs.format == "csr" and np.array_equal(ys, D.load_rows("text", False)[1])
    assert D.is_suite("wine") and not D.is_suite("digits")
    assert set(D.SUITE_QUICK) <= set(D.SUITE_PAPER) and len(D.SUITE_PAPER) == 9


def test_vw_grid_modes_and_arguments():
    from nolo.papers.am import vs_peers as P
    from nolo.papers.am.vs_peers_vw import VW_GRID, grid_mode, mode_args

    assert len(VW_GRID) == 12 and grid_mode(0.5, 10.0) == "squarecb"  # VW's defaults are in the grid
    assert mode_args("squarecb-l2-g100") == "--cb_explore_adf --squarecb -q sa -l 2 --gamma_scale 100"
    with pytest.raises(ValueError):
        mode_args("squarecb-l7-g7")
    tasks = P.grid_tasks(["digits", "wine"], [0, 1], False)
    assert {t["dataset"] for t in tasks} == {"wine"} and len(tasks) == 6 * 2 * 11  # the suite only, no default
    assert all(t["rounds"] == 10_000 for t in tasks)


def test_vw_adf_driver_replays_the_stream():
    from nolo.papers.am import vw as V
    from nolo.papers.am.vs_peers_vw import _vw_adf

    if not V.available():
        pytest.skip("vowpalwabbit not installed")
    X, y = load_digits(return_X_y=True)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    r = _vw_adf(X, y, 300, 0.1, 0.1, env_seed=1, seed=0, args="--cb_explore_adf --squarecb -q sa",
                checkpoints=[100, 300])
    assert r["t"].tolist() == [100, 300] and np.all((r["error_rate"] >= 0) & (r["error_rate"] <= 1))


def test_vw_adf_driver_equals_vw_through_its_python_workspace():
    """The driver calls VW's native parse/predict/learn (``pylibvw``) instead of ``Workspace.predict``/``learn``:
    the same calls, so exactly the error of the textbook loop below, which goes through VW's Python wrappers."""
    from nolo.noise import FlipChannel
    from nolo.noise.feedback_laws import flip_one
    from nolo.papers.am import vw as V
    from nolo.papers.am.vs_peers_vw import _adf_shared, _vw_adf

    if not V.available():
        pytest.skip("vowpalwabbit not installed")
    import vowpalwabbit

    X, y = load_digits(return_X_y=True)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    T, args, cps = 600, "--cb_explore_adf --squarecb -q sa", [50, 200, 600]
    r = _vw_adf(X, y, T, 0.3, 0.2, env_seed=5, seed=2, args=args, checkpoints=cps)
    shared, acts = _adf_shared(X), [f"|a a{k}" for k in range(10)]
    idx, u_flip = V.stream_draws(len(shared), T, 5)
    u_play, law = np.random.default_rng(2).random(T), FlipChannel(0.3, 0.2).record()
    ws = vowpalwabbit.Workspace(f"{args} --quiet --random_seed 2")
    mistakes, errs = 0, []
    for t in range(T):
        i = int(idx[t])
        pmf = ws.predict([shared[i], *acts])
        c = np.cumsum(pmf)
        a = int(min(np.searchsorted(c, u_play[t] * c[-1], side="right"), 9))
        f = int(a == y[i])
        mistakes += 1 - f
        f_rho = flip_one(law, f, u_flip[t], int(y[i]), a, i)
        ws.learn([shared[i], *[(f"0:{1 - f_rho}:{pmf[k]} " if k == a else "") + acts[k] for k in range(10)]])
        if t + 1 in cps:
            errs.append(mistakes / (t + 1))
    ws.finish()
    assert r["error_rate"].tolist() == errs


def test_random_feature_candidates_run_on_image_data_only():
    """The RFF candidates (LinUCB, LinUCB-lam5, FastCB on random Fourier features, FD-SON sketch) run on the image
    data sets at paper scale only, to at most LINUCB_MAX_ROUNDS rounds; on digits noise-free (seed 100, not one of
    the experiment's) LinUCB on the features beats LinUCB on the pixels by a clear margin."""
    from nolo.papers.am import vs_peers as P

    assert P.runs_rff("digits", False) and not P.runs_rff("digits", True) and not P.runs_rff("synsep", False)
    assert (P.rff_rounds("digits", True), P.rff_rounds("digits", False)) == (0, P.LINUCB_MAX_ROUNDS)
    assert P.rff_rounds("synsep", True) == P.rff_rounds("iris", False) == P.rff_rounds("wine", False) == 0
    F = P.rff_rows("digits", False)
    assert F.shape == (1797, P.RFF_COMPONENTS) and np.allclose(np.linalg.norm(F, axis=1), 1.0)
    assert np.array_equal(F, P.rff_rows.__wrapped__("digits", False))  # one map per data set: same seed, same rows
    gammas = {a: 0.05 for a in P.AM_LEARNERS}
    out = pd.DataFrame(P.peers_task("digits", 0.0, 0.0, 100, False, 10_000, gammas=gammas))
    last = out[out.t == 10_000].set_index("learner")
    assert set(P.RFF) <= set(last.index)
    assert last.loc["LinUCB-rff", "error_rate"] < 0.8 * last.loc["LinUCB", "error_rate"]
    assert last.loc["LinUCB-rff", "error_rate"] < 0.06
    quick = pd.DataFrame(P.peers_task("digits", 0.0, 0.0, 0, True, 1_000, gammas=gammas))
    assert not set(P.RFF) & set(quick.learner)
