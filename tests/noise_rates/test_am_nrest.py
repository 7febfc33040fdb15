"""NREst (AM Algorithm 3): estimates on synthetic logs, the percentile rule, pluggable classifiers, the CLI."""

from functools import partial

import json

import numpy as np
import pytest
from click.testing import CliRunner

from nolo import ParameterError
from nolo.cli.estimate_noise import estimate_noise
from nolo.noise_rates import NREst, percentile_extremes
from noise_logs import clustered_log  # tests/noise_rates/noise_logs.py


_log = partial(clustered_log, n=6000, K=4, d=10)  # well-separated clusters, half the plays right


@pytest.mark.parametrize("rho0,rho1", [(0.0, 0.0), (0.2, 0.1), (0.1, 0.3), (0.4, 0.4)])
@pytest.mark.parametrize("rule", ["pooled", "per_class"])
def test_estimates_close_to_truth(rho0, rho1, rule):
    """Measured (n=6000, 20 epochs): absolute errors <= 0.035 for both rules; bar 0.06."""
    X, played, fb = _log(rho0, rho1)
    est = NREst(hidden_layer_sizes=(32,), max_iter=20, rule=rule, random_state=0).fit(X, played, fb, n_classes=4)
    assert abs(est.rho0_ - rho0) < 0.06 and abs(est.rho1_ - rho1) < 0.06, (est.rho0_, est.rho1_)


def test_percentile_rule_is_robust_to_outliers():
    rng = np.random.default_rng(0)
    q = np.r_[0.2 + 0.01 * rng.random(500), 0.7 + 0.01 * rng.random(500), 0.0, 1.0]  # two outliers
    lo, hi = percentile_extremes(q, 89)
    assert 0.2 <= lo <= 0.21 and 0.7 <= hi <= 0.71
    # for distinct values: the largest value strictly below the "higher" percentile (authors' code)
    theta = np.percentile(q, 89, method="higher")
    assert hi == q[q < theta].max()
    assert percentile_extremes(np.r_[np.full(95, 0.2), np.full(95, 0.7)], 89) == (pytest.approx(0.2), 0.7)  # ties
    naive = (q.min(), q.max())
    assert naive == (0.0, 1.0)  # the plain argmax/argmin of eq. (6) would pick the outliers


def test_pluggable_classifier_and_warm_start():
    import warnings

    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    X, played, fb = _log(0.2, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MLPClassifier's convergence warning at 50 iterations
        est = NREst(classifier=MLPClassifier(hidden_layer_sizes=(32,), max_iter=50, random_state=0)).fit(X, played, fb)
    assert isinstance(est.classifier_, MLPClassifier)
    # measured 0.172 / 0.083: the plugged-in classifier's q, not the default network's, is read out
    assert abs(est.rho0_ - 0.2) < 0.06 and abs(est.rho1_ - 0.1) < 0.06, (est.rho0_, est.rho1_)
    # a classifier that cannot represent the x-by-label interaction (no hidden layer) cannot estimate the rates:
    # the estimate follows the classifier (measured 0.62 / 0.33), it is not a constant of the read-out
    linear = NREst(classifier=LogisticRegression(max_iter=200)).fit(X, played, fb)
    assert isinstance(linear.classifier_, LogisticRegression) and abs(linear.rho0_ - 0.2) > 0.2
    warm = NREst(hidden_layer_sizes=(32,), max_iter=20, warm_start=True, random_state=0).fit(X, played, fb)
    again = NREst(hidden_layer_sizes=(32,), max_iter=2, warm_start=True, random_state=1)
    again.fit(X, played, fb, init_weights=warm.weights_)
    assert abs(again.rho0_ - 0.2) < 0.06 and abs(again.rho1_ - 0.1) < 0.06
    cold = NREst(hidden_layer_sizes=(32,), max_iter=2, random_state=1).fit(X, played, fb)
    assert not np.allclose(cold.q_, again.q_)


def test_bad_inputs():
    X, played, fb = _log(0.1, 0.1, n=100)
    with pytest.raises(ParameterError, match="percentile"):
        NREst(percentile=30).fit(X, played, fb)
    with pytest.raises(ParameterError, match="feedback"):
        NREst().fit(X, played, fb * 2)
    with pytest.raises(ParameterError, match="played"):
        NREst().fit(X, played[:50], fb)
    with pytest.raises(ParameterError, match="classifier"):
        NREst(classifier=object()).fit(X, played, fb)
    const = NREst().fit(X, played, np.zeros(100, dtype=int))
    assert const.rho0_ == 0.0 and const.rho1_ == 1.0


def test_cli_csv_and_npz(tmp_path):
    X, played, fb = _log(0.2, 0.1, n=3000)
    csv = tmp_path / "log.csv"
    header = ",".join([f"x{j}" for j in range(X.shape[1])] + ["played", "feedback"])
    np.savetxt(csv, np.column_stack([X, played, fb]), delimiter=",", header=header, comments="", fmt="%.6g")
    runner = CliRunner()
    res = runner.invoke(estimate_noise, [str(csv), "--json", "--hidden", "32", "--epochs", "20", "--bootstrap", "4"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert abs(out["rho0_hat"] - 0.2) < 0.07 and abs(out["rho1_hat"] - 0.1) < 0.07
    npz = tmp_path / "log.npz"
    np.savez(npz, X=X, played=played, feedback=fb)
    res = runner.invoke(estimate_noise, [str(npz), "--epochs", "5", "--bootstrap", "3"])
    assert res.exit_code == 0 and "rho0_hat" in res.output
    res = runner.invoke(estimate_noise, [str(npz), "--json", "--hidden", "32", "--epochs", "200", "--patience", "3",
                                            "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["epochs"] < 200 and abs(out["rho0_hat"] - 0.2) < 0.1  # stopped early, still a sensible estimate
    res = runner.invoke(estimate_noise, [str(npz), "--patience", "0"])
    assert res.exit_code != 0 and "--patience" in res.output
    res = runner.invoke(estimate_noise, [str(tmp_path / "missing.csv")])
    assert res.exit_code != 0 and "does not exist" in res.output
