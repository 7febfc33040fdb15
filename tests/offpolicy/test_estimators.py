"""Off-policy estimators under flipped bits: hand-worked values, unbiasedness and interval coverage by Monte Carlo
(uniform and non-uniform loggers), the bias of the uncorrected estimates, clear errors, and the logs a stream writes."""

import numpy as np
import pandas as pd
import pytest

from nolo.exceptions import ParameterError
from nolo.offpolicy import evaluate, flip_corrected, log_frame, policy_probabilities, read_log, write_log


def test_hand_worked_estimates():
    # K = 2, four rows; target plays label 1 always; rates (0.1, 0.2): h(1) = 0.9 / 0.7, h(0) = -0.1 / 0.7
    played = np.array([1, 0, 1, 1])
    prop = np.array([0.5, 0.5, 0.25, 0.8])
    bit = np.array([1, 1, 0, 1])
    target = np.array([1, 1, 1, 1])
    q = np.array([[0.3, 0.6], [0.5, 0.5], [0.2, 0.7], [0.1, 0.8]])  # the model's bit predictions
    e = evaluate(played, prop, bit, target, rewards=q, rho0=0.1, rho1=0.2)
    h = (bit - 0.1) / 0.7
    w = np.array([2.0, 0.0, 4.0, 1.25])
    assert e["ips"].value == pytest.approx(np.mean(w * h))
    assert e["snips"].value == pytest.approx(np.sum(w * h) / np.sum(w))
    qc = (q - 0.1) / 0.7
    dm = qc[:, 1]
    assert e["dm"].value == pytest.approx(dm.mean())
    dr = dm + w * (h - qc[np.arange(4), played])
    assert e["dr"].value == pytest.approx(dr.mean())
    assert e["ips"].se == pytest.approx(np.std(w * h, ddof=1) / 2)
    assert e["dr"].ci[0] < e["dr"].value < e["dr"].ci[1]
    # switch with tau = 3: the row of weight 4 keeps only the model's term
    s = evaluate(played, prop, bit, target, rewards=q, rho0=0.1, rho1=0.2, methods=("switch-dr",), tau=3.0)
    keep = w <= 3
    assert s["switch-dr"].value == pytest.approx(np.mean(dm + np.where(keep, w * (h - qc[np.arange(4), played]), 0)))
    raw = evaluate(played, prop, bit, target, correct=False, methods=("ips",))
    assert raw["ips"].value == pytest.approx(np.mean(w * bit))


def _world(rng, C=30, K=4):
    """Categorical contexts with P(y | x) known: a strong label per context, the rest spread."""
    P = rng.dirichlet(np.ones(K) * 0.3, size=C)
    return P


def _simulate(rng, P, n, logger, target, rho0, rho1):
    C, K = P.shape
    x = rng.integers(0, C, n)
    mu = logger[x]
    a = (rng.random(n)[:, None] > np.cumsum(mu, axis=1)).sum(axis=1)
    a = np.minimum(a, K - 1)
    y_right = rng.random(n) < P[x, a]          # 1[label a is right], P(y = a | x)
    u = rng.random(n)
    bit = np.where(y_right, u >= rho1, u < rho0).astype(int)
    return x, a, mu[np.arange(n), a], bit, target[x]


@pytest.mark.parametrize("logger_kind", ["uniform", "softmax"])
def test_corrected_estimates_are_unbiased_and_cover_at_95_percent(logger_kind):
    rng = np.random.default_rng(7)
    C, K, n, reps = 30, 4, 2000, 400
    P = _world(rng, C, K)
    if logger_kind == "uniform":
        logger = np.full((C, K), 1.0 / K)
    else:  # a softmax of a weak, noisy policy: propensities 0.02-0.9
        z = 3.0 * (P + rng.normal(0, 0.3, P.shape))
        logger = np.exp(z) / np.exp(z).sum(1, keepdims=True)
        logger = 0.95 * logger + 0.05 / K
    target = np.zeros((C, K))
    target[np.arange(C), P.argmax(1)] = 0.8
    target += 0.2 / K
    true = float(np.mean((target * P).sum(1)))  # contexts uniform
    q_model = 0.1 + 0.7 * np.clip(P + rng.normal(0, 0.1, P.shape), 0, 1)  # a biased reward model of the bit
    rho0, rho1 = 0.1, 0.2
    vals = {m: [] for m in ("ips", "snips", "dr", "switch-dr")}
    cover = {m: 0 for m in vals}
    raw = []
    for _ in range(reps):
        x, a, p, bit, tgt = _simulate(rng, P, n, logger, target, rho0, rho1)
        e = evaluate(a, p, bit, tgt, rewards=q_model[x], rho0=rho0, rho1=rho1, methods=tuple(vals))
        for m in vals:
            vals[m].append(e[m].value)
            cover[m] += e[m].covers(true)
        raw.append(evaluate(a, p, bit, tgt, correct=False, methods=("ips",))["ips"].value)
    for m in ("ips", "dr"):
        v = np.asarray(vals[m])
        assert abs(v.mean() - true) < 3 * v.std(ddof=1) / np.sqrt(reps), (m, v.mean(), true)
        assert 0.92 <= cover[m] / reps <= 0.98, (m, cover[m] / reps)
    for m in ("snips", "switch-dr"):  # consistent, small bias at n = 2000
        v = np.asarray(vals[m])
        assert abs(v.mean() - true) < 0.01, (m, v.mean(), true)
        assert cover[m] / reps >= 0.90, (m, cover[m] / reps)
    # the uncorrected estimate estimates E[bit] = rho0 + kappa V: biased by rho0 - (rho0 + rho1) V
    bias = np.mean(raw) - true
    assert bias == pytest.approx(rho0 - (rho0 + rho1) * true, abs=0.01)
    assert abs(bias) > 0.05


def test_rate_uncertainty_widens_the_interval():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 500)
    bit = rng.integers(0, 2, 500)
    p = np.full(500, 1 / 3)
    tgt = rng.integers(0, 3, 500)
    e0 = evaluate(a, p, bit, tgt, rho0=0.1, rho1=0.1, methods=("ips",))["ips"]
    e1 = evaluate(a, p, bit, tgt, rho0=0.1, rho1=0.1, methods=("ips",), rate_se=(0.02, 0.02))["ips"]
    assert e1.value == e0.value and e1.se > e0.se


@pytest.mark.parametrize("kw, match", [
    (dict(propensity=np.array([0.5, 0.0])), "propensity.*row 1"),
    (dict(propensity=np.array([0.5, 1.5])), "propensity.*row 1"),
    (dict(bit=np.array([1, 2])), "bit.*row 1"),
    (dict(played=np.array([0, 5])), "played"),
    (dict(target=np.array([[0.5, 0.6], [0.5, 0.5]])), "sum to 1"),
])
def test_bad_logs_are_named(kw, match):
    args = dict(played=np.array([0, 1]), propensity=np.array([0.5, 0.5]), bit=np.array([1, 0]),
                target=np.array([[0.5, 0.5], [0.5, 0.5]]))
    args.update(kw)
    with pytest.raises(ParameterError, match=match):
        evaluate(args["played"], args["propensity"], args["bit"], args["target"], methods=("ips",))
    with pytest.raises(ParameterError, match="rewards"):
        evaluate(np.array([0]), np.array([1.0]), np.array([1]), np.array([[1.0, 0.0]]), methods=("dr",))


def test_flip_correction_is_unbiased_for_the_clean_reward():
    rng = np.random.default_rng(0)
    r = rng.random(200_000) < 0.3
    u = rng.random(r.size)
    bit = np.where(r, u >= 0.25, u < 0.15)
    assert flip_corrected(bit, 0.15, 0.25).mean() == pytest.approx(0.3, abs=0.006)


def test_a_learners_stream_log_evaluates_another_policy(tmp_path):
    from sklearn.datasets import load_iris

    from nolo.learners.bandit import Banditron, FastCB, run_stream

    X, y = load_iris(return_X_y=True)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    target = FastCB(n_classes=3, rho0=0.1, rho1=0.2, seed=0)
    run_stream(target, X, y, 3_000, 0.1, 0.2, seed=1)
    logger = Banditron(n_classes=3, gamma=0.5, seed=2)   # half uniform: every label has propensity >= 1/6
    res = run_stream(logger, X, y, 20_000, 0.1, 0.2, seed=3, log=True)
    df = log_frame(res)
    assert list(df.columns) == ["round", "row", "played", "propensity", "bit"] and (df.propensity >= 1 / 6 - 1e-12).all()
    path = write_log(tmp_path / "log.parquet", df)
    back = read_log(path, n_classes=3)
    pd.testing.assert_frame_equal(back, df)
    Xl = X[back.row.to_numpy()]
    pi = policy_probabilities(target, Xl)
    est = evaluate(back.played, back.propensity, back.bit, pi, rho0=0.1, rho1=0.2, methods=("ips", "snips"))
    truth = float(np.mean(pi[np.arange(len(back)), y[back.row]]))  # the target's clean accuracy on those contexts
    for e in est.values():
        assert e.covers(truth) or abs(e.value - truth) < 2 * e.se, (e, truth)
    raw = evaluate(back.played, back.propensity, back.bit, pi, correct=False, methods=("ips",))["ips"]
    assert raw.value < truth - 0.1  # flips make the uncorrected estimate pessimistic here


def test_read_log_names_the_bad_row_and_column(tmp_path):
    df = pd.DataFrame({"played": [0, 1, 2], "propensity": [0.5, 1.2, 0.3], "bit": [1, 0, 1]})
    p = tmp_path / "log.csv"
    df.to_csv(p, index=False)
    with pytest.raises(ParameterError, match=r"'propensity' must hold probabilities in \(0, 1\]; row 1 \(line 3 of the file\) holds 1.2"):
        read_log(p)
    df.loc[1, "propensity"] = 0.5
    df.loc[2, "played"] = 7
    df.to_csv(p, index=False)
    with pytest.raises(ParameterError, match=r"'played' must hold integer labels in \[0, 2\].*row 2 .*holds 7"):
        read_log(p, n_classes=3)
    pd.DataFrame({"played": [0], "bit": [1]}).to_csv(p, index=False)
    with pytest.raises(ParameterError, match="propensity"):
        read_log(p)


def _random_log(rng, n=3000, K=4):
    a = rng.integers(0, K, n)
    p = rng.uniform(0.05, 1.0, n)
    bit = rng.integers(0, 2, n)
    pi = rng.dirichlet(np.ones(K), n)
    q = rng.random((n, K))
    return a, p, bit, pi, q


@pytest.mark.parametrize("tau", [None, 3.0])
def test_moments_merged_over_chunks_equal_one_pass(tau):
    from nolo.offpolicy import LogMoments

    rng = np.random.default_rng(11)
    a, p, bit, pi, q = _random_log(rng)
    one = LogMoments(4, with_model=True, tau=tau).update(a, p, bit, pi, q)
    parts = LogMoments(4, with_model=True, tau=tau)
    for lo, hi in ((0, 7), (7, 1000), (1000, 1001), (1001, 3000)):
        parts.update(a[lo:hi], p[lo:hi], bit[lo:hi], pi[lo:hi], q[lo:hi], row0=lo)
    shard = LogMoments(4, with_model=True, tau=tau).update(a[:1500], p[:1500], bit[:1500], pi[:1500], q[:1500])
    shard.merge(LogMoments(4, with_model=True, tau=tau).update(a[1500:], p[1500:], bit[1500:], pi[1500:], q[1500:]))
    for other in (parts, shard):
        e1, e2 = one.estimates(0.1, 0.2), other.estimates(0.1, 0.2)
        for m in e1:
            assert e2[m].value == pytest.approx(e1[m].value, rel=1e-12, abs=1e-12)
            assert e2[m].se == pytest.approx(e1[m].se, rel=1e-9)
            assert e2[m].tau == e1[m].tau or (np.isnan(e1[m].tau) and np.isnan(e2[m].tau))
    # the per-row terms the moments stand for, written out
    w = pi[np.arange(a.size), a] / p
    h = (bit - 0.1) / 0.7
    qc = (q - 0.1) / 0.7
    dr = (pi * qc).sum(1) + w * (h - qc[np.arange(a.size), a])
    e = one.estimates(0.1, 0.2)
    assert e["dr"].value == pytest.approx(dr.mean(), rel=1e-12)
    assert e["dr"].se == pytest.approx(dr.std(ddof=1) / np.sqrt(a.size), rel=1e-9)
    infl = w * (h - e["snips"].value) / w.mean()
    assert e["snips"].se == pytest.approx(infl.std(ddof=1) / np.sqrt(a.size), rel=1e-9)


def test_rate_sensitivity_is_the_derivative_of_the_estimate():
    rng = np.random.default_rng(12)
    a, p, bit, pi, q = _random_log(rng)
    eps = 1e-6
    for m in ("ips", "snips", "dm", "dr"):
        base = evaluate(a, p, bit, pi, rewards=q, rho0=0.1, rho1=0.2, methods=(m,))[m]
        g0 = (evaluate(a, p, bit, pi, rewards=q, rho0=0.1 + eps, rho1=0.2, methods=(m,))[m].value - base.value) / eps
        g1 = (evaluate(a, p, bit, pi, rewards=q, rho0=0.1, rho1=0.2 + eps, methods=(m,))[m].value - base.value) / eps
        wide = evaluate(a, p, bit, pi, rewards=q, rho0=0.1, rho1=0.2, methods=(m,), rate_se=(0.03, 0.01))[m]
        want = np.sqrt(base.se ** 2 + (g0 * 0.03) ** 2 + (g1 * 0.01) ** 2)
        assert wide.se == pytest.approx(want, rel=1e-4), m


def test_moments_name_the_bad_row_of_a_later_chunk():
    from nolo.offpolicy import LogMoments

    mom = LogMoments(2)
    with pytest.raises(ParameterError, match="row 1001"):
        mom.update(np.array([0, 1]), np.array([0.5, 0.0]), np.array([1, 0]), np.array([0, 1]), row0=1000)
    assert mom.n == 0


def test_uncorrected_estimates_equal_the_open_bandit_pipelines_definitions():
    """OBP (Saito et al. 2021; obp.ope.estimators) does not install on Python 3.11 (it requires < 3.11), so its
    published definitions are written out: IPW mean(w r), SNIPW mean(w r) / mean(w), DM mean(sum_a pi q) (its
    np.average over pi), DR mean(sum_a pi q + w (r - q(a))), with w = pi(a_t | x_t) / pscore_t and r the logged
    reward.  nolo's uncorrected estimates (the bit as the reward), chunked and merged, agree to 1e-9."""
    from nolo.offpolicy import LogMoments

    rng = np.random.default_rng(5)
    a, p, bit, pi, q = _random_log(rng, n=20_000, K=6)
    rows = np.arange(a.size)
    w = pi[rows, a] / p
    obp = {"ips": np.mean(w * bit), "snips": np.mean(w * bit) / np.mean(w),
           "dm": np.mean(np.average(q, weights=pi, axis=1)),
           "dr": np.mean(np.average(q, weights=pi, axis=1) + w * (bit - q[rows, a]))}
    mom = LogMoments(6, with_model=True)
    for lo in range(0, a.size, 4_096):
        hi = lo + 4_096
        mom.update(a[lo:hi], p[lo:hi], bit[lo:hi], pi[lo:hi], q[lo:hi], row0=lo)
    ests = mom.estimates(correct=False, methods=tuple(obp))
    for m, v in obp.items():
        assert abs(ests[m].value - v) < 1e-9, (m, ests[m].value, v)
