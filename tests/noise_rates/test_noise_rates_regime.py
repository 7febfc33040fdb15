"""Noise-rate estimation on logs where few plays are right (issue 13): a uniform logger over the 10 digits.

The pooled 89th-percentile rule of AM (NREst's default, kept for the AM reproduction) needs well over 11 %
of the plays right; a uniform logger over K = 10 labels has 10 %.  Measured at the issue's size (30,000
rounds, true rates 0.2 / 0.1): pooled 0.130 / 0.503, clean feedback 0.000 / 0.978.  The anchors rule
(``rule="anchors"``, the CLI's default ``--method nrest-anchors``) reads the rates off the feedback of
per-class anchors, each row sorted by a network that did not train on it: 0.199 / 0.111 and 0.000 / 0.000
on the same logs.
"""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.datasets import load_digits

from nolo import ParameterError
from nolo.cli.estimate_noise import estimate_noise
from nolo.noise_rates import NREst, bootstrap_rates, diagnose
from noise_logs import clustered_log  # tests/noise_rates/noise_logs.py


def _digits_log(rho0, rho1, n=30_000, seed=0):
    """A uniform logger on sklearn digits: x drawn with replacement, played label uniform over 10, flipped bits."""
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    idx = rng.integers(len(y), size=n)
    played = rng.integers(10, size=n)
    u = rng.random(n)
    fb = np.where(played == y[idx], u >= rho1, u < rho0).astype(np.int64)
    return X[idx], played, fb


_clustered_log = clustered_log  # the AM regime, as tests/noise_rates/test_am_nrest.py


@pytest.fixture(scope="module")
def digits_noisy():
    return _digits_log(0.2, 0.1)


def test_cli_default_is_right_on_a_uniform_digits_log(tmp_path, digits_noisy):
    """Issue 13's reproduction through the CLI's default path: before the fix 0.130 / 0.503 (pooled)."""
    X, played, fb = digits_noisy
    path = tmp_path / "log.npz"
    np.savez(path, X=X, played=played, feedback=fb)
    res = CliRunner().invoke(estimate_noise, [str(path), "--json", "--bootstrap", "6"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert abs(out["rho0_hat"] - 0.2) < 0.03 and abs(out["rho1_hat"] - 0.1) < 0.03, out  # measured 0.199 / 0.111
    assert out["method"] == "nrest-anchors" and _but_rounds(out["warnings"]) == []
    assert out["regime"]["correct_share"] == pytest.approx(0.1, abs=0.01)
    assert out["regime"]["positive_share"] == pytest.approx(fb.mean())
    lo, hi = out["interval"]["rho1"]
    assert lo <= out["rho1_hat"] <= hi and hi - lo < 0.1 and out["interval"]["n_boot"] == 6


def _but_rounds(warnings):
    """The warnings other than "only N logged rounds" (these logs are small to keep the tests fast)."""
    return [w for w in warnings if "logged rounds" not in w]


def test_few_rounds_and_the_oracle_read_out_are_flagged():
    from nolo.learners.bandit.rate_oracle import OracleRates
    from nolo.noise_rates.regime import MIN_ROUNDS

    X, played, fb = _clustered_log(0.2, 0.1, right=0.5, n=3000)
    est = NREst(hidden_layer_sizes=(16,), max_iter=10, rule="anchors", random_state=0).fit(X, played, fb)
    assert any("only 3000 logged rounds" in w for w in diagnose(est, X, played, fb).warnings)
    X, played, fb = _clustered_log(0.2, 0.1, right=0.5, n=MIN_ROUNDS)
    est = NREst(hidden_layer_sizes=(16,), max_iter=10, rule="anchors", random_state=0).fit(X, played, fb)
    assert not any("logged rounds" in w for w in diagnose(est, X, played, fb).warnings)
    oracle = OracleRates().fit(X, played, fb, n_classes=4)
    assert any("regression-oracle read-out" in w for w in diagnose(oracle, X, played, fb).warnings)


def test_pooled_rule_fails_on_the_uniform_log_and_says_so(digits_noisy):
    """The pooled rule stays as it was (the AM reproduction's); on this log it is wrong, and diagnose warns."""
    X, played, fb = digits_noisy
    pooled = NREst(hidden_layer_sizes=(64,), max_iter=30, random_state=0).fit(X, played, fb, n_classes=10)
    assert pooled.rho1_ > 0.4  # measured 0.503: the 89th percentile falls among the wrong plays
    regime = diagnose(pooled, X, played, fb)
    assert any("pooled 89th-percentile rule" in w and "nrest-anchors" in w for w in regime.warnings), regime.warnings
    anchors = NREst(hidden_layer_sizes=(64,), max_iter=30, rule="anchors", random_state=0).fit(X, played, fb, n_classes=10)
    assert _but_rounds(diagnose(anchors, X, played, fb).warnings) == []
    assert anchors.n_anchors_[0] > 1000 and anchors.n_anchors_[1] > 1000


def test_anchors_on_clean_uniform_feedback():
    """Issue 13: clean feedback gave 0.000 / 0.910 (pooled); the anchors rule gives 0 / 0."""
    X, played, fb = _digits_log(0.0, 0.0, n=10_000, seed=1)
    est = NREst(hidden_layer_sizes=(64,), max_iter=30, rule="anchors", random_state=0).fit(X, played, fb)
    assert est.rho0_ < 0.01 and est.rho1_ < 0.02, (est.rho0_, est.rho1_)
    assert est.correct_share_ == pytest.approx(0.1, abs=0.01)


@pytest.mark.parametrize("rho0,rho1", [(0.2, 0.1), (0.1, 0.3), (0.4, 0.2)])
@pytest.mark.parametrize("right", [0.0, 0.5])
def test_anchors_across_regimes(rho0, rho1, right):
    """A share of right plays of 0.25 (uniform over 4 labels) or ~0.63: within 0.03 of the truth (measured <= 0.02)."""
    X, played, fb = _clustered_log(rho0, rho1, right=right)
    est = NREst(hidden_layer_sizes=(32,), max_iter=20, rule="anchors", random_state=0).fit(X, played, fb, n_classes=4)
    assert abs(est.rho0_ - rho0) < 0.03 and abs(est.rho1_ - rho1) < 0.03, (est.rho0_, est.rho1_)
    y = _clustered_log(rho0, rho1, right=right, labels=True)
    share = np.mean(played == np.argmax(est.counterfactual_q(X), axis=1))  # the full-log network's argmax
    assert est.correct_share_ == pytest.approx(np.mean(played == y), abs=0.01)  # cross-fitted networks' argmax
    assert share == pytest.approx(np.mean(played == y), abs=0.01)


@pytest.mark.parametrize("rho0,rho1", [(0.2, 0.1), (0.1, 0.3)])
def test_anchors_when_nearly_every_play_is_right(rho0, rho1):
    """~93 % right plays: rho0 rests on ~400 wrong plays and comes out low (measured 0.166 for 0.2, 0.055 for
    0.1 -- docs/noise-rates.md); the pooled rule is far off (0.80, 0.60: its 11th percentile is a right play)."""
    X, played, fb = _clustered_log(rho0, rho1, right=0.9)
    kw = dict(hidden_layer_sizes=(32,), max_iter=20, random_state=0)
    est = NREst(rule="anchors", **kw).fit(X, played, fb, n_classes=4)
    assert abs(est.rho0_ - rho0) < 0.06 and abs(est.rho1_ - rho1) < 0.03, (est.rho0_, est.rho1_)
    pooled = NREst(**kw).fit(X, played, fb, n_classes=4)
    assert pooled.rho0_ > rho0 + 0.3
    assert any("wrong" in w for w in diagnose(pooled, X, played, fb).warnings)


def test_cross_fitting_removes_the_memorisation_bias():
    """A classifier that fits each row's own bit (gradient boosting) pulls both rates to 0 without cross-fitting
    (measured 0.026 / 0.036 for 0.2 / 0.1); with the default 2 folds, 0.202 / 0.097."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, played, fb = _clustered_log(0.2, 0.1)
    hgb = HistGradientBoostingClassifier(random_state=0)
    # the fold split is seeded (random_state=None draws fresh folds: the test was order-dependent, 0.237 once)
    one = NREst(rule="anchors", classifier=hgb, n_folds=1, random_state=0).fit(X, played, fb)
    two = NREst(rule="anchors", classifier=hgb, random_state=0).fit(X, played, fb)  # measured 0.204 / 0.103
    assert one.rho0_ < 0.1 and one.rho1_ < 0.06, (one.rho0_, one.rho1_)
    assert abs(two.rho0_ - 0.2) < 0.03 and abs(two.rho1_ - 0.1) < 0.03, (two.rho0_, two.rho1_)


def test_pooled_not_flagged_in_the_am_regime():
    X, played, fb = _clustered_log(0.2, 0.1, right=0.5)
    est = NREst(hidden_layer_sizes=(32,), max_iter=20, random_state=0).fit(X, played, fb, n_classes=4)
    assert _but_rounds(diagnose(est, X, played, fb).warnings) == []


def test_weak_signal_and_unidentified_rate_are_flagged():
    X, played, fb = _clustered_log(0.45, 0.45, right=0.5, n=3000)
    est = NREst(hidden_layer_sizes=(16,), max_iter=10, rule="anchors", random_state=0).fit(X, played, fb)
    assert any("weak signal" in w for w in diagnose(est, X, played, fb).warnings)
    X, played, fb = _clustered_log(0.2, 0.1, right=1.0, n=3000)  # every play right: rho0 is not identified
    est = NREst(hidden_layer_sizes=(16,), max_iter=10, rule="anchors", random_state=0).fit(X, played, fb)
    assert diagnose(est, X, played, fb).warnings  # measured: signal -0.01 (never-played labels are guesses)
    played0, ones = np.zeros(100, dtype=int), np.ones(100, dtype=int)  # one label, constant feedback: all "right"
    est = NREst(rule="anchors").fit(X[:100], played0, ones, n_classes=2)
    warns = diagnose(est, X[:100], played0, ones).warnings
    assert est.identified_ is False and any("not identified" in w for w in warns), warns


def test_half_sampling_interval_is_seeded_and_brackets_the_estimate():
    X, played, fb = _clustered_log(0.2, 0.1, right=0.0, n=4000)
    est = NREst(hidden_layer_sizes=(16,), max_iter=10, rule="anchors", random_state=0).fit(X, played, fb)
    a = bootstrap_rates(est, X, played, fb, n_boot=6, seed=3)
    b = bootstrap_rates(est, X, played, fb, n_boot=6, seed=3)
    c = bootstrap_rates(est, X, played, fb, n_boot=6, seed=4)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert not np.array_equal(a.samples, c.samples)
    assert a.rho0[0] <= est.rho0_ <= a.rho0[1] and a.rho1[0] <= est.rho1_ <= a.rho1[1]
    assert 0 < a.rho0[1] - a.rho0[0] < 0.1 and a.level == 0.9
    with pytest.raises(ParameterError, match="fitted"):
        bootstrap_rates(NREst(), X, played, fb)
    with pytest.raises(ParameterError, match="n_boot"):
        bootstrap_rates(est, X, played, fb, n_boot=1)
    with pytest.raises(ParameterError, match="level"):
        bootstrap_rates(est, X, played, fb, level=1.5)


def test_anchor_fraction_is_validated():
    X, played, fb = _clustered_log(0.2, 0.1, n=200)
    for bad in (0.0, 1.5, "half"):
        with pytest.raises(ParameterError, match="anchor_fraction"):
            NREst(rule="anchors", anchor_fraction=bad).fit(X, played, fb)
    for bad in (0, 11, 2.5):
        with pytest.raises(ParameterError, match="n_folds"):
            NREst(rule="anchors", n_folds=bad).fit(X, played, fb)
    with pytest.raises(ParameterError, match="rule"):
        NREst(rule="argmax").fit(X, played, fb)
    with pytest.raises(ParameterError, match="not fitted"):
        NREst().counterfactual_q(X)


def test_fit_rejects_complex_input_and_non_bool_flags():
    X, played, fb = _clustered_log(0.2, 0.1, n=200)
    for kw, name in ((dict(X=X + 1j), "X"), (dict(played=played + 0j), "played"), (dict(feedback=fb + 0j), "feedback")):
        args = {**dict(X=X, played=played, feedback=fb), **kw}
        with pytest.raises(ParameterError, match=name):
            NREst(max_iter=1).fit(args["X"], args["played"], args["feedback"])
    for flag in ("normalize", "warm_start"):
        with pytest.raises(ParameterError, match=flag):
            NREst(max_iter=1, **{flag: "yes"}).fit(X, played, fb)
