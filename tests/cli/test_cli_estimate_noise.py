"""``nolo estimate-noise``: user errors name the option, the column and the row (0-based, and the CSV line)."""

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from nolo import ParameterError
from nolo.cli.estimate_noise import estimate_noise
from nolo.offpolicy.arrays import read_log_arrays as read_log


def _csv(tmp_path, rows, header="x0,x1,played,feedback"):
    path = tmp_path / "log.csv"
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def _good_rows(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return [f"{rng.normal():.3f},{rng.normal():.3f},{rng.integers(3)},{rng.integers(2)}" for _ in range(n)]


def _run(*args):
    return CliRunner().invoke(estimate_noise, [str(a) for a in args])


@pytest.mark.parametrize("option,value", [("--hidden", "abc"), ("--hidden", "64,x"), ("--hidden", "0"), ("--hidden", ""),
                                          ("--epochs", "abc"), ("--epochs", "0"), ("--n-classes", "1"),
                                          ("--percentile", "30"), ("--max-rows", "5"), ("--bootstrap", "-1"),
                                          ("--level", "1"), ("--seed", "-3"), ("--method", "oracles")])
def test_bad_option_names_the_option(tmp_path, option, value):
    res = _run(_csv(tmp_path, _good_rows()), option, value)
    assert res.exit_code == 2, res.output
    assert option in res.output and "Traceback" not in res.output and "invalid literal" not in res.output


@pytest.mark.parametrize("bad", ["0.5", "1.5", "-1", "two", ""])
def test_played_labels_are_not_truncated(tmp_path, bad):
    rows = _good_rows()
    rows[6] = f"0.1,0.2,{bad},1"
    path = _csv(tmp_path, rows)
    with pytest.raises(ParameterError, match=r"'played'.*row 6 \(line 8 of the file\)") as err:
        read_log(path)
    res = _run(path)
    assert res.exit_code == 2 and "row 6 (line 8" in res.output and "played" in res.output
    assert "np.float64" not in str(err.value)  # the value as the user wrote it, not numpy's repr
    if bad in ("0.5", "1.5", "-1"):
        assert f"holds {bad}" in str(err.value), str(err.value)


def test_integral_float_labels_are_accepted(tmp_path):
    rows = [r.rsplit(",", 2)[0] + f",{float(r.rsplit(',', 2)[1]):.1f}," + r.rsplit(",", 1)[1] for r in _good_rows()]
    X, played, fb = read_log(_csv(tmp_path, rows))
    assert played.dtype == np.int64 and X.shape == (40, 2)


@pytest.mark.parametrize("bad,what", [("abc", "'abc'"), ("", "empty cell"), ("inf", "inf")])
def test_text_in_a_feature_column_names_column_and_row(tmp_path, bad, what):
    rows = _good_rows()
    rows[11] = f"0.1,{bad},2,1"
    with pytest.raises(ParameterError) as err:
        read_log(_csv(tmp_path, rows))
    msg = str(err.value)
    assert "'x1'" in msg and "row 11" in msg and "line 13" in msg and what in msg, msg


def test_feedback_must_be_bits(tmp_path):
    rows = _good_rows()
    rows[2] = "0.1,0.2,1,2"
    with pytest.raises(ParameterError, match=r"'feedback'.*row 2 .*holds 2"):
        read_log(_csv(tmp_path, rows))


def test_npz_checks(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    played = rng.integers(3, size=30)
    fb = rng.integers(2, size=30)
    cases = {"played": dict(X=X, played=played + 0.5, feedback=fb), "feedback": dict(X=X, played=played, feedback=fb * 3),
             "real numbers": dict(X=X + 1j, played=played, feedback=fb), "rows": dict(X=X[:20], played=played, feedback=fb),
             "finite": dict(X=np.where(np.arange(90).reshape(30, 3) == 40, np.nan, X), played=played, feedback=fb),
             "missing": dict(X=X, played=played)}
    for match, arrays in cases.items():
        path = tmp_path / f"{match.replace(' ', '_')}.npz"
        np.savez(path, **arrays)
        with pytest.raises(ParameterError, match=match):
            read_log(path)
    (tmp_path / "junk.npz").write_bytes(b"not a zip file")
    with pytest.raises(ParameterError, match="readable"):
        read_log(tmp_path / "junk.npz")


def test_method_registry_and_pooled_warning_in_json(tmp_path):
    from nolo.noise_rates.methods import DEFAULT_METHOD, METHODS, make_estimator

    assert DEFAULT_METHOD == "nrest-anchors" and set(METHODS) >= {"nrest-anchors", "nrest-pooled", "nrest-per-class"}
    assert make_estimator("nrest-pooled", max_iter=3).rule == "pooled"
    with pytest.raises(ParameterError, match="method"):
        make_estimator("nope")
    # a uniform logger over 10 labels: the pooled rule's assumption fails and the output says so
    rng = np.random.default_rng(1)
    y = rng.integers(10, size=4000)
    X = np.eye(10)[y] + 0.1 * rng.standard_normal((4000, 10))
    played = rng.integers(10, size=4000)
    fb = (played == y).astype(int)
    path = tmp_path / "u.npz"
    np.savez(path, X=X, played=played, feedback=fb)
    out = json.loads(_run(path, "--json", "--method", "nrest-pooled", "--bootstrap", "0", "--hidden", "16").output)
    assert out["interval"] is None and out["method"] == "nrest-pooled"
    assert any("pooled 89th-percentile" in w for w in out["warnings"]), out["warnings"]
    res = _run(path, "--hidden", "16", "--bootstrap", "3")
    other = [line for line in res.output.splitlines() if line.startswith("warning") and "logged rounds" not in line]
    assert res.exit_code == 0 and "90 % interval" in res.output and not other, res.output


def test_numerical_trouble_is_a_message_not_a_traceback(tmp_path, monkeypatch):
    from nolo.exceptions import NumericalError
    from nolo.noise_rates import NREst

    def diverge(self, *a, **k):
        raise NumericalError("NREst: the network's weights became non-finite (lower learning_rate_init)")

    monkeypatch.setattr(NREst, "fit", diverge)
    res = _run(_csv(tmp_path, _good_rows()), "--bootstrap", "0")
    assert res.exit_code == 1 and "numerical trouble" in res.output and "Traceback" not in res.output


def _oracle_log(n=20_000, rho0=0.15, rho1=0.3, seed=3):
    """A uniform logger over digits' 10 labels (propensity 0.1), feedback flipped with known rates."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    g = np.random.default_rng(seed)
    idx = g.integers(0, len(y), n)
    played = g.integers(0, 10, n)
    f = (played == y[idx]).astype(int)
    u = g.random(n)
    fb = np.where(f == 1, (u >= rho1).astype(int), (u < rho0).astype(int))
    return X[idx], played, fb, np.full(n, 0.1)


def test_method_oracle_recovers_known_rates_from_a_logged_file(tmp_path):
    X, played, fb, prop = _oracle_log()
    path = tmp_path / "log.npz"
    np.savez(path, X=X, played=played, feedback=fb, propensity=prop)
    res = _run(path, "--method", "oracle", "--json", "--bootstrap", "4")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["method"] == "oracle" and out["n_rounds"] == 20_000
    assert abs(out["rho0_hat"] - 0.15) < 0.02 and abs(out["rho1_hat"] - 0.3) < 0.08, out
    lo, hi = out["interval"]["rho0"]
    assert lo <= out["rho0_hat"] <= hi and hi - lo < 0.05
    assert not any("propensity" in w for w in out["warnings"]), out["warnings"]
    # the same log as CSV: the propensity column is read as the propensity, not as a feature
    csv = tmp_path / "log.csv"
    cols = [f"x{j}" for j in range(X.shape[1])]
    import pandas as pd

    pd.DataFrame(np.column_stack([X[:3000], played[:3000], fb[:3000], prop[:3000]]),
                 columns=[*cols, "played", "feedback", "propensity"]).to_csv(csv, index=False)
    Xr, pr, fr, qr = read_log(csv, with_propensity=True)
    assert Xr.shape == (3000, 64) and np.array_equal(qr, prop[:3000]) and np.array_equal(pr, played[:3000])
    out = json.loads(_run(csv, "--method", "oracle", "--json", "--bootstrap", "0").output)
    assert abs(out["rho0_hat"] - 0.15) < 0.04, out
    # without propensities: the fallback rule, and the output says so
    np.savez(path, X=X, played=played, feedback=fb)
    out = json.loads(_run(path, "--method", "oracle", "--json", "--bootstrap", "0").output)
    assert any("no propensity column" in w for w in out["warnings"]), out["warnings"]


def test_method_oracle_matches_the_library_estimator():
    from nolo.learners.bandit.rate_oracle import OracleRates, oracle_noise_rates
    from nolo.noise_rates.methods import make_estimator

    X, played, fb, prop = _oracle_log(5000)
    est = make_estimator("oracle", hidden_layer_sizes=(16,), max_iter=3, percentile=89.0, random_state=0,
                         n_iter_no_change=None)
    assert isinstance(est, OracleRates)
    est.fit(X, played, fb, n_classes=10, propensity=prop)
    ref = oracle_noise_rates(X, played, fb, 10, propensity=prop)
    assert (est.rho0_, est.rho1_, est.rule_) == (ref["rho0"], ref["rho1"], ref["rule"])
    assert est.counterfactual_q(X[:5]).shape == (5, 10)


@pytest.mark.parametrize("what, match", [("one_label", "every round played label 2"),
                                         ("all_zero", "every feedback bit is 0"),
                                         ("all_one", "every feedback bit is 1"),
                                         ("bad_propensity", "propensity must hold probabilities in \\(0, 1\\]; row 4"),
                                         ("short", "at least 10 logged rounds")])
def test_method_oracle_refuses_unusable_logs_clearly(tmp_path, what, match):
    rng = np.random.default_rng(0)
    n = 5 if what == "short" else 200
    X = rng.normal(size=(n, 3))
    played = rng.integers(3, size=n)
    fb = rng.integers(2, size=n)
    prop = np.full(n, 1 / 3)
    if what == "one_label":
        played[:] = 2
    elif what == "all_zero":
        fb[:] = 0
    elif what == "all_one":
        fb[:] = 1
    elif what == "bad_propensity":
        prop[3] = 0.0
    path = tmp_path / "log.npz"
    np.savez(path, X=X, played=played, feedback=fb, propensity=prop)
    res = _run(path, "--method", "oracle", "--bootstrap", "0")
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert re.search(match, " ".join(res.output.split())), res.output
