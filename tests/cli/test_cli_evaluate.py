"""`nolo evaluate LOG --policy MODEL`: one-pass off-policy estimates on a user's log file (Parquet, Parquet shards, CSV),
identical whatever the chunking, covering the target's true clean error, and one-line errors naming row and column."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.datasets import load_digits

from nolo.cli import main
from nolo.learners.bandit import Banditron, Perceptron, run_stream
from nolo.offpolicy import log_frame, write_log


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A digits log of 20,000 rounds by a half-uniform Banditron under flips (0.1, 0.2), a target trained elsewhere, and
    the target's true clean value (accuracy) on the logged contexts."""
    d = tmp_path_factory.mktemp("offpolicy")
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    target = Perceptron(n_classes=10, seed=0)   # full-information: a deterministic target erring about 10 %
    run_stream(target, X, y, 6_000, seed=1)
    target.save(d / "target.npz")
    logger = Banditron(n_classes=10, gamma=0.5, seed=2)
    df = log_frame(run_stream(logger, X, y, 20_000, 0.1, 0.2, seed=3, log=True), X)
    write_log(d / "log.parquet", df)
    df.to_csv(d / "log.csv", index=False)
    (d / "shards").mkdir()
    for i, lo in enumerate(range(0, 20_000, 6_000)):
        df.iloc[lo:lo + 6_000].to_parquet(d / "shards" / f"part-{i}.parquet", index=False)
    P = target.action_probabilities(X[df.row.to_numpy()])
    truth = float(np.mean(P[np.arange(len(df)), y[df.row]]))
    assert truth > 0.8
    return d, df, truth


def _run(*args):
    res = CliRunner().invoke(main, ["evaluate", *map(str, args)])
    return res


def _json(*args):
    res = _run(*args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_estimates_cover_the_true_error_and_correct_the_flip_bias(logged):
    d, _, truth = logged
    out = _json(d / "log.parquet", "--policy", d / "target.npz", "--rho0", 0.1, "--rho1", 0.2, "--quiet",
                "--methods", "ips,snips,dr,switch-dr")
    assert out["n_rows"] == 20_000
    for m, e in out["corrected"].items():
        assert abs(e["value"] - truth) < 3 * e["se"], (m, e, truth)  # coverage itself: tests/offpolicy
        # the uncorrected estimate is E[bit] = rho0 + (1 - rho0 - rho1) x value: biased by 0.1 - 0.3 x value
        raw = out["uncorrected"][m]
        assert abs(raw["value"] - (0.1 + 0.7 * truth)) < 4 * raw["se"], m
        assert not raw["ci"][0] <= truth <= raw["ci"][1]


def test_chunking_file_format_and_shards_give_the_same_estimate(logged):
    d, _, _ = logged
    args = ("--policy", d / "target.npz", "--rho0", 0.1, "--rho1", 0.2, "--quiet", "--methods", "ips,snips,dr,dm")
    a = _json(d / "log.parquet", *args)
    b = _json(d / "log.csv", *args, "--chunk-rows", 777)
    c = _json(d / "shards", *args, "--chunk-rows", 5_000)
    for other in (b, c):
        for m in a["corrected"]:
            assert other["corrected"][m]["value"] == pytest.approx(a["corrected"][m]["value"], rel=1e-10, abs=1e-12)
            assert other["corrected"][m]["se"] == pytest.approx(a["corrected"][m]["se"], rel=1e-8)


def test_estimated_rates_widen_the_interval(logged, tmp_path):
    d, _, _ = logged
    rates = tmp_path / "rates.json"
    rates.write_text(json.dumps({"rho0_hat": 0.1, "rho1_hat": 0.2,
                                 "interval": {"level": 0.9, "rho0": [0.08, 0.12], "rho1": [0.15, 0.25]}}))
    known = _json(d / "log.parquet", "--policy", d / "target.npz", "--rho0", 0.1, "--rho1", 0.2, "--quiet")
    est = _json(d / "log.parquet", "--policy", d / "target.npz", "--rates", rates, "--quiet")
    assert est["corrected"]["ips"]["value"] == pytest.approx(known["corrected"]["ips"]["value"])
    assert est["corrected"]["ips"]["se"] > 1.2 * known["corrected"]["ips"]["se"]


def test_without_rates_it_says_the_estimates_are_uncorrected(logged):
    d, _, _ = logged
    res = _run(d / "log.parquet", "--policy", "uniform", "--n-classes", 10, "--quiet")
    assert res.exit_code == 0, res.output
    assert "no flip rates given" in res.stderr
    # the uniform policy's uncorrected error is the logged mean of 1 - bit, reweighted: about 1 - (0.1 + 0.7 x 0.1)
    assert "ips" in res.stdout


@pytest.mark.parametrize("edit, message", [
    (lambda df: df.drop(columns=["propensity"]), "lacks column(s) propensity"),
    (lambda df: df.assign(propensity=df.propensity.where(df.index != 123, 1.5)), "'propensity' must hold probabilities in (0, 1]; row 123 (line 125"),
    (lambda df: df.assign(propensity=df.propensity.where(df.index != 124, np.nan)), "'propensity' must hold finite numbers; row 124 (line 126 of the file) holds an empty cell"),
    (lambda df: df.assign(played=df.played.where(df.index != 77, 10)), "'played' must hold integer labels in [0, 9] (labels are not rounded); row 77 (line 79 of the file) holds 10"),
    (lambda df: df.assign(bit=df.bit.where(df.index != 5, 3)), "'bit' must hold bits 0 or 1; row 5 (line 7 of the file) holds 3"),
    (lambda df: df.assign(x3=df.x3.where(df.index != 9, np.nan)), "'x3' must hold finite numbers; row 9 "),
    (lambda df: df.drop(columns=["x3"]), "expects 64 features"),
])
def test_bad_rows_are_named_in_one_line(logged, tmp_path, edit, message):
    d, df, _ = logged
    bad = tmp_path / "bad.csv"
    edit(df.iloc[:1000].copy()).to_csv(bad, index=False)
    res = _run(bad, "--policy", d / "target.npz", "--quiet", "--chunk-rows", 100)
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output


def test_policy_and_option_errors(logged, tmp_path):
    d, _, _ = logged
    res = _run(d / "log.parquet", "--policy", "uniform", "--quiet")
    assert res.exit_code == 2 and "n_classes" in res.output
    res = _run(d / "log.parquet", "--policy", tmp_path / "none.npz", "--quiet")
    assert res.exit_code == 2 and "does not exist" in res.output
    res = _run(d / "log.parquet", "--policy", d / "target.npz", "--rho0", 0.1, "--quiet")
    assert res.exit_code == 2 and "both" in res.output
    res = _run(tmp_path / "missing.parquet", "--policy", d / "target.npz", "--quiet")
    assert res.exit_code == 2 and "does not exist" in res.output
    pd.DataFrame({"a": [1]}).to_json(tmp_path / "log.json")
    res = _run(tmp_path / "log.json", "--policy", d / "target.npz", "--quiet")
    assert res.exit_code == 2 and ".parquet" in res.output


def test_shards_evaluated_apart_on_dask_give_the_local_estimate(logged):
    """--by-shard: one pass per shard (each its own reward model), moments merged; on a dask.distributed scheduler
    the same numbers to the last bit; IPS/SNIPS equal the one-pass estimate of the directory."""
    from dask.distributed import LocalCluster

    from nolo.offpolicy.file_eval import evaluate_log, evaluate_shards

    d, _, truth = logged
    args = dict(rho0=0.1, rho1=0.2, methods=("ips", "snips", "dr", "switch-dr"))
    local = evaluate_shards(d / "shards", str(d / "target.npz"), **args)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        remote = _json(d / "shards", "--policy", d / "target.npz", "--rho0", 0.1, "--rho1", 0.2, "--by-shard",
                       "--scheduler", cluster.scheduler_address, "--methods", "ips,snips,dr,switch-dr")
    whole = evaluate_log(d / "shards", str(d / "target.npz"), **args)
    assert local.n_rows == remote["n_rows"] == 20_000
    for m, e in local.corrected.items():
        assert remote["corrected"][m]["value"] == e.value and remote["corrected"][m]["se"] == e.se, m
        assert abs(e.value - truth) < 3 * e.se, (m, e.value, truth)
    for m in ("ips", "snips"):
        assert local.corrected[m].value == pytest.approx(whole.corrected[m].value, rel=1e-12)
    res = _run(d / "log.parquet", "--policy", d / "target.npz", "--scheduler", "tcp://x:1", "--quiet")
    assert res.exit_code == 2 and "--by-shard" in res.output
    res = _run(d / "log.parquet", "--policy", d / "target.npz", "--by-shard", "--quiet")
    assert res.exit_code == 2 and "not a directory" in res.output
