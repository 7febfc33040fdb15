"""`nolo learn LOG --out model.npz`: a policy trained from a logged file (chunked, through learn_many), warm-started with
--resume, evaluated with `nolo evaluate`; the rates are required and errors are one line."""

import json

import numpy as np
from click.testing import CliRunner
from sklearn.datasets import load_digits

from nolo.cli import main
from nolo.learners.base import Learner
from nolo.learners.bandit import Banditron, FastCB, run_stream
from nolo.offpolicy import log_frame, write_log


def _log(tmp_path, seed):
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    train = np.arange(len(y)) % 5 != 0
    logger = Banditron(n_classes=10, gamma=0.5, seed=seed)
    df = log_frame(run_stream(logger, X[train], y[train], 6_000, 0.1, 0.2, seed=seed + 1, log=True), X[train])
    path = write_log(tmp_path / f"log{seed}.parquet", df.drop(columns=["round", "row"]))
    return X, y, train, path, df


def _invoke(*args):
    return CliRunner().invoke(main, ["learn", *map(str, args)])


def test_learn_resume_and_evaluate(tmp_path):
    X, y, train, log_a, df_a = _log(tmp_path, 2)
    _, _, _, log_b, df_b = _log(tmp_path, 7)
    model = tmp_path / "m.npz"
    res = _invoke(log_a, "--out", model, "--learner", "fastcb", "--n-classes", 10, "--rho0", 0.1, "--rho1", 0.2,
                  "--quiet", "--json", "--chunk-rows", 1000)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["rows"] == 6_000 and out["learner"] == "FastCB"
    # the same as learn_many on the whole log in one call
    ref = FastCB(n_classes=10, rho0=0.1, rho1=0.2, seed=0)
    feats = [c for c in df_a.columns if c.startswith("x")]
    ref.learn_many(df_a[feats].to_numpy(), df_a.played.to_numpy(), df_a.bit.to_numpy())
    m = Learner.load(model)
    np.testing.assert_array_equal(m.predict(X), ref.predict(X))
    # warm start on a second log: 12,000 rounds, and as good or better on held-out rows
    res = _invoke(log_b, "--out", tmp_path / "m2.npz", "--resume", model, "--quiet", "--json")
    assert res.exit_code == 0, res.output
    m2 = Learner.load(tmp_path / "m2.npz")
    assert m2.t_ == 12_000
    test = ~train
    err1, err2 = (np.mean(k.predict(X[test]) != y[test]) for k in (m, m2))
    assert err2 < 0.25 and err2 <= err1 + 0.02, (err1, err2)
    # and nolo evaluate reads the model
    ev = CliRunner().invoke(main, ["evaluate", str(log_b), "--policy", str(tmp_path / "m2.npz"), "--rho0", "0.1",
                                   "--rho1", "0.2", "--quiet", "--json", "--methods", "ips,snips"])
    assert ev.exit_code == 0, ev.output
    assert json.loads(ev.stdout)["corrected"]["snips"]["error"] < 0.4


def test_rates_are_required_and_errors_are_one_line(tmp_path):
    _, _, _, log_a, _ = _log(tmp_path, 2)
    res = _invoke(log_a, "--out", tmp_path / "m.npz", "--n-classes", 10, "--quiet")
    assert res.exit_code == 2 and "flip rates are needed" in res.output and "Traceback" not in res.output
    res = _invoke(log_a, "--out", tmp_path / "m.npz", "--rho0", 0.1, "--rho1", 0.2, "--quiet")
    assert res.exit_code == 2 and "--n-classes" in res.output
    res = _invoke(log_a, "--out", tmp_path / "m.npz", "--n-classes", 3, "--rho0", 0.1, "--rho1", 0.2, "--quiet")
    assert res.exit_code == 2 and "'played' must hold integer labels" in res.output  # labels up to 9 with K = 3
    res = _invoke(log_a, "--out", tmp_path / "m.npz", "--learner", "banditron", "--n-classes", 10, "--quiet")
    assert res.exit_code == 2  # not a learner that learns soundly from another policy's log


def test_resume_refuses_a_learner_unsound_off_policy_and_importance_weighting_runs(tmp_path):
    X, y, train, log_a, _ = _log(tmp_path, 2)
    bandit = Banditron(n_classes=10, seed=0)
    bandit.learn(X[0], 1, 0)
    saved = bandit.save(tmp_path / "b.npz")
    res = _invoke(log_a, "--out", tmp_path / "m.npz", "--resume", saved, "--quiet")
    assert res.exit_code == 2 and "Banditron cannot learn soundly" in res.output
    res = _invoke(log_a, "--out", tmp_path / "w.npz", "--learner", "fastcb", "--n-classes", 10, "--rho0", 0.1,
                  "--rho1", 0.2, "--weighting", "importance", "--quiet", "--json")
    assert res.exit_code == 0, res.output
    m = Learner.load(tmp_path / "w.npz")
    # the Banditron logger plays its greedy label with probability ~0.5: its rare plays are learned ~ 1/(K p) times
    assert 3_000 < m.t_ < 9_000
    assert np.mean(m.predict(X[~train]) != y[~train]) < 0.3
