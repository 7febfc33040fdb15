"""BiasCompensatedRLS: exact hand-worked updates, convergence to CorrectedLeastSquares, the PD safeguard,
per-item == stream, validation with rollback."""

import numpy as np
import pytest

from nolo.batch import CorrectedLeastSquares
from nolo.batch.eiv import average_replicates
from nolo.checks import state_dump
from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.linear import BiasCompensatedRLS
from nolo.noise import PoolOracle


def _data(n=2000, m=4, d=3, noise_var=0.5, seed=0, intercept=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = np.linspace(1.0, -1.0, d)
    y = X @ w + intercept + 0.1 * rng.normal(size=n)
    R = X[:, None, :] + np.sqrt(noise_var) * rng.normal(size=(n, m, d))
    return X, y, R, w


# -- exact hand-worked cases ----------------------------------------------------------------------------
def test_hand_worked_repeated_d1():
    # items (readings 1, 3; y 2) and (2, 4; y 5): U-statistics 1*3 = 3 and 2*4 = 8, G = 11,
    # b = 2*2 + 3*5 = 19 -> w = 19/11 (A = 4 + 9 = 13, C = (4-3) + (9-8) = 2: rho = 2/13, contracting)
    m = BiasCompensatedRLS(noise="repeated", fit_intercept=False, alpha=1e-300, sweeps=200)
    m.learn_stream(np.array([[[1.0], [3.0]], [[2.0], [4.0]]]), np.array([2.0, 5.0]))
    assert m.coef_[0] == pytest.approx(19 / 11, rel=1e-14)
    assert m.correction_[0, 0] == pytest.approx(2.0, rel=1e-15)
    assert m.chol_[0, 0] ** 2 == pytest.approx(13.0, rel=1e-15)
    assert m.rho_ == pytest.approx(2 / 13, rel=1e-14) and m.gamma_ == 1.0


def test_hand_worked_known_d1():
    # same readings, Sigma = 0.5 per reading: C = 2 * 0.5/2 = 0.5, G = 13 - 0.5 = 12.5, w = 19/12.5
    m = BiasCompensatedRLS(noise="known", noise_cov=0.5, fit_intercept=False, alpha=1e-300, sweeps=200)
    m.learn_stream(np.array([[[1.0], [3.0]], [[2.0], [4.0]]]), np.array([2.0, 5.0]))
    assert m.coef_[0] == pytest.approx(19 / 12.5, rel=1e-14)


def test_an_unknown_noise_mode_code_is_refused(monkeypatch):
    """The compiled loop raises for a mode code outside its table instead of running the replicates' correction."""
    from nolo.learners.linear import bias_compensated_rls as brls

    monkeypatch.setitem(brls._MODE, "known", 5)
    m = BiasCompensatedRLS(noise="known", noise_cov=0.5, fit_intercept=False, alpha=1e-300, sweeps=200)
    with pytest.raises(ValueError, match="unknown noise mode"):
        m.learn_stream(np.array([[[1.0], [3.0]], [[2.0], [4.0]]]), np.array([2.0, 5.0]))


def test_hand_worked_intercept_d1():
    # the constant feature has zero noise.  Items (0, 2; y 1), (4, 6; y 9), (2, 4; y 5), (1, 3; y 3): means 1, 5,
    # 3, 2, each item's correction (2 - 0)^2/4 = 1; A = [[39, 11], [11, 4]], C = [[4, 0], [0, 0]] -> rho = 4 (A^-1)_11
    # = 16/35.  With the intercept the centred moments hold (n - 1)/n = 3/4 of C: G = A - (3/4) C = [[36, 11],
    # [11, 4]], b = [67, 18] -> slope (4 * 67 - 11 * 18)/23 = 70/23, intercept (36 * 18 - 11 * 67)/23 = -89/23; the
    # slope is the centred one, (17.5/3) / (8.75/3 - 1) (S_xy = 17.5, S_xx = 8.75 on n - 1 = 3 d.f., noise of a mean
    # 1).  (alpha -> 0: 1e-12 here, since A = alpha I + xbar xbar^T is singular after the first item; the first
    # 2p = 4 items are the warm-up, the last one's 400 sweeps converge to the corrected solution.)
    m = BiasCompensatedRLS(noise="repeated", fit_intercept=True, alpha=1e-12, sweeps=400)
    R = np.array([[[0.0], [2.0]], [[4.0], [6.0]], [[2.0], [4.0]], [[1.0], [3.0]]])
    m.learn_stream(R, np.array([1.0, 9.0, 5.0, 3.0]))
    assert m.gamma_ == 1.0 and m.rho_ == pytest.approx(16 / 35, rel=1e-9)
    assert m.coef_[0] == pytest.approx(70 / 23, rel=1e-9) and m.intercept_ == pytest.approx(-89 / 23, rel=1e-9)
    assert 70 / 23 == pytest.approx((17.5 / 3) / (8.75 / 3 - 1.0), rel=1e-12)


def test_warm_up_is_ridge_least_squares():
    """For the first 2p items gamma = 0: the coefficients are the ridge solution on the means."""
    _, y, R, _ = _data(n=7, m=3, d=3)
    m = BiasCompensatedRLS(fit_intercept=False, alpha=1e-3, sweeps=5)
    m.learn_stream(R[:5], y[:5])
    Xb = R[:5].mean(axis=1)
    ridge = np.linalg.solve(Xb.T @ Xb + 1e-3 * np.eye(3), Xb.T @ y[:5])
    assert m.gamma_ == 0.0 and np.allclose(m.coef_, ridge, rtol=1e-9)


def test_two_copy_uses_first_two_readings():
    _, y, R, _ = _data(n=50, m=3)
    a = BiasCompensatedRLS(noise="two_copy")
    a.learn_stream(R, y)
    b = BiasCompensatedRLS(noise="repeated")
    b.learn_stream(R[:, :2], y)
    assert np.array_equal(a.theta_, b.theta_) and a.readings_ == 100


# -- convergence to the batch solution ------------------------------------------------------------------
@pytest.mark.parametrize("noise", ["repeated", "known", "two_copy"])
def test_one_pass_matches_corrected_least_squares(noise):
    X, y, R, w = _data(n=2000, m=4, noise_var=1.0)
    kw = {"noise_cov": 1.0} if noise == "known" else {}
    m = BiasCompensatedRLS(noise=noise, fit_intercept=False, **kw)
    m.learn_stream(R, y)
    Rb = R[:, :2] if noise == "two_copy" else R
    ref = CorrectedLeastSquares(noise_cov=1.0 if noise == "known" else "estimate").fit(Rb, y).coef_
    assert np.max(np.abs(m.coef_ - ref)) < 1e-3 * np.max(np.abs(ref))
    # and the correction matters: least squares on the means is attenuated by ~ 1/(1 + 1/4)
    ols = np.linalg.lstsq(R.mean(axis=1), y, rcond=None)[0]
    assert np.max(np.abs(ols - w)) > 0.1 > np.max(np.abs(m.coef_ - w))


def test_intercept_matches_corrected_least_squares_on_augmented_features():
    X, y, R, w = _data(n=2000, m=3, noise_var=0.5, intercept=4.0)
    m = BiasCompensatedRLS(noise="repeated", sweeps=3)
    m.learn_stream(R, y)
    Ra = np.concatenate([R, np.ones(R.shape[:2] + (1,))], axis=2)  # constant feature, zero within-item spread
    # with an intercept the centred moments hold (n - 1)/n of the noise: the augmented solve with that share of S
    Xb, S = average_replicates(Ra, "estimate")
    ref = np.linalg.solve(Xb.T @ Xb / 2000 - (1999 / 2000) * S, Xb.T @ y / 2000)
    fit = CorrectedLeastSquares(fit_intercept=True, cv_folds=None).fit(R, y)
    assert np.append(fit.coef_, fit.intercept_) == pytest.approx(ref, rel=1e-10)
    assert np.allclose(m.coef_, ref[:3], atol=1e-6) and m.intercept_ == pytest.approx(ref[3], abs=1e-6)
    assert m.intercept_ == pytest.approx(4.0, abs=0.1)


def test_ragged_readings_match_per_item_pools():
    rng = np.random.default_rng(3)
    items = [rng.normal(size=(int(k), 2)) + 1.0 for k in rng.integers(2, 6, size=40)]
    y = rng.normal(size=40)
    a = BiasCompensatedRLS(seed=0)
    a.learn_stream(items, y)
    b = BiasCompensatedRLS(seed=0)
    for it, yi in zip(items, y):
        b.learn(PoolOracle(it), yi)  # n_readings=None: every reading of the pool
    assert state_dump(a) == state_dump(b)
    assert a.readings_ == sum(len(i) for i in items)


# -- the PD safeguard -------------------------------------------------------------------------------------
def test_safeguard_scales_the_correction_while_the_gram_is_indefinite():
    X, y, R, _ = _data(n=400, m=2, d=5, noise_var=4.0, seed=1)  # attenuation 1/3: rho -> 2/3
    m = BiasCompensatedRLS(noise="repeated", fit_intercept=False, max_correction=0.9, cv_folds=None)
    gammas = []
    for t in range(R.shape[0]):
        m.learn(PoolOracle(R[t]), y[t])
        gammas.append(m.gamma_)
        # the solved matrix A - gamma C is positive definite once the power estimate has converged
    assert min(gammas[:5]) < 1e-3  # first items: G_t is indefinite (rank < d), the correction is scaled away
    assert gammas[-1] == 1.0
    A = m.chol_.T @ m.chol_
    lam = np.linalg.eigvals(np.linalg.solve(A, m.correction_)).real.max()
    # the power estimate is a lower estimate (isotropic noise: the top eigenvalues are close, it converges slowly)
    assert 0.95 * lam <= m.rho_ <= lam * (1 + 1e-9)
    assert np.all(np.isfinite(m.coef_))


def test_safeguard_keeps_heavy_noise_finite_and_close_to_batch():
    X, y, R, _ = _data(n=3000, m=2, d=4, noise_var=8.0, seed=2)  # attenuation 1/5: rho -> 0.8
    m = BiasCompensatedRLS(noise="repeated", fit_intercept=False, sweeps=4)
    m.learn_stream(R, y)
    ref = CorrectedLeastSquares(noise_cov="estimate").fit(R, y).coef_
    assert m.gamma_ == 1.0
    assert np.max(np.abs(m.coef_ - ref)) < 3e-3 * np.max(np.abs(ref))  # tracking lag: contraction 0.8 per sweep


# -- contract details -------------------------------------------------------------------------------------
def test_stream_equals_per_item_learn_known_mode():
    _, y, R, _ = _data(n=60, m=3, d=3)
    a = BiasCompensatedRLS(noise="known", noise_cov=[0.5, 0.5, 0.2], seed=0)
    a.learn_stream(R[:30], y[:30])
    a.learn_stream(R[30:], y[30:])
    b = BiasCompensatedRLS(noise="known", noise_cov=[0.5, 0.5, 0.2], seed=0)
    for t in range(60):
        b.learn(PoolOracle(R[t]), y[t])
    assert state_dump(a) == state_dump(b)


@pytest.mark.parametrize("params, match", [
    ({"noise": "bogus"}, "noise"),
    ({"noise": "known"}, "noise_cov"),
    ({"noise_cov": 1.0}, "noise_cov"),
    ({"n_readings": 1}, "n_readings"),
    ({"noise": "two_copy", "n_readings": 3}, "n_readings"),
    ({"alpha": 0.0}, "alpha"),
    ({"max_correction": 1.0}, "max_correction"),
    ({"sweeps": 0}, "sweeps"),
    ({"fit_intercept": 1}, "fit_intercept"),
])
def test_bad_parameters_are_named(params, match):
    with pytest.raises(ParameterError, match=match):
        BiasCompensatedRLS(**params).initialize(3)


def test_rejections_leave_state_unchanged():
    _, y, R, _ = _data(n=20, m=2)
    m = BiasCompensatedRLS()
    m.learn_stream(R[:10], y[:10])
    before = state_dump(m)
    with pytest.raises(ParameterError, match="fit_intercept"):
        m.set_params(fit_intercept=False)
    with pytest.raises(ParameterError, match="readings"):
        m.learn_stream(R[10:, :1], y[10:])
    with pytest.raises(ParameterError, match="y"):
        m.learn_stream(R[10:], y[10:15])
    bad = R[10:].copy()
    bad[3, 1, 0] = np.nan
    with pytest.raises(ParameterError, match="copies"):
        m.learn_stream(bad, y[10:])
    with pytest.raises(NumericalError):
        m.learn_stream(R[10:] * 1e200, y[10:])
    assert state_dump(m) == before


def test_save_load_continues(tmp_path):
    _, y, R, _ = _data(n=40, m=3)
    a = BiasCompensatedRLS(noise="known", noise_cov=0.5)
    a.learn_stream(R[:20], y[:20])
    b = BiasCompensatedRLS.load(a.save(tmp_path / "m"))
    a.learn_stream(R[20:], y[20:])
    b.learn_stream(R[20:], y[20:])
    assert state_dump(a) == state_dump(b)


# -- scale and the practitioner's comparison --------------------------------------------------------------
def test_scale_equivariance():
    """Multiplying y by 100 multiplies the coefficients by 100; rescaling x by c divides them by c (alpha is tiny)."""
    _, y, R, _ = _data(n=500, m=3, intercept=2.0)
    a, b, c = (BiasCompensatedRLS(alpha=1e-10) for _ in range(3))
    a.learn_stream(R, y)
    b.learn_stream(R, 100 * y)
    c.learn_stream(R * 1e-2, y)
    assert np.allclose(b.theta_, 100 * a.theta_, rtol=1e-10, atol=0)
    # (not exact: alpha is absolute, so it weighs 1e4 times more against the rescaled Gram)
    assert np.max(np.abs(c.coef_ - 1e2 * a.coef_)) < 1e-6 * np.linalg.norm(1e2 * a.coef_)
    assert c.intercept_ == pytest.approx(a.intercept_, rel=1e-6)


def test_beats_least_squares_on_the_mean_where_attenuation_is_strong():
    """Clean-input R^2: 2 readings of noise variance 2 per item (attenuation 0.5 on the mean)."""
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score

    rng = np.random.default_rng(11)
    n, d = 2000, 3
    X = rng.normal(size=(n, d))
    y = X @ np.array([1.0, -1.0, 0.5]) + 1.0 + 0.1 * rng.normal(size=n)
    R = X[:, None, :] + np.sqrt(2.0) * rng.normal(size=(n, 2, d))
    Xt = rng.normal(size=(2000, d))
    yt = Xt @ np.array([1.0, -1.0, 0.5]) + 1.0
    m = BiasCompensatedRLS()
    m.learn_stream(R, y)
    ols = LinearRegression().fit(R.mean(axis=1), y)
    r2_bc, r2_ols = r2_score(yt, m.predict(Xt)), r2_score(yt, ols.predict(Xt))
    assert r2_bc > 0.97 and r2_bc > r2_ols + 0.1


def test_save_load_during_warm_up(tmp_path):
    _, y, R, _ = _data(n=12, m=2)
    a = BiasCompensatedRLS(seed=1)
    a.learn_stream(R[:3], y[:3])
    assert a.gamma_ == 0.0
    b = BiasCompensatedRLS.load(a.save(tmp_path / "w"))
    a.learn_stream(R[3:], y[3:])
    b.learn_stream(R[3:], y[3:])
    assert state_dump(a) == state_dump(b)


def test_loaded_state_is_checked(tmp_path):
    from nolo.exceptions import PersistenceError

    _, y, R, _ = _data(n=12, m=2)
    a = BiasCompensatedRLS(seed=1)
    a.learn_stream(R, y)
    a.chol_[1, 0] = 1.0  # not upper triangular
    with pytest.raises(PersistenceError, match="chol_"):
        BiasCompensatedRLS.load(a.save(tmp_path / "bad"))


@pytest.mark.parametrize("noise, kw", [("repeated", {}), ("known", {"noise_cov": [[0.5, 0.1, 0.0], [0.1, 0.4, 0.0], [0.0, 0.0, 0.2]]})])
def test_correction_is_bitwise_symmetric(noise, kw, tmp_path):
    """load() checks correction_ == correction_.T exactly, so a learned state must satisfy it."""
    _, y, R, _ = _data(n=200, m=3)
    m = BiasCompensatedRLS(noise=noise, **kw)
    m.learn_stream(R, y)
    assert np.array_equal(m.correction_, m.correction_.T)
    BiasCompensatedRLS.load(m.save(tmp_path / "s"))


@pytest.mark.parametrize("noise_cov", ["estimate", 0.5])
def test_corrected_least_squares_intercept_is_the_limit(noise_cov):
    """CorrectedLeastSquares(fit_intercept=True) = the augmented solve with the centred share (n - 1)/n of the
    noise = where BiasCompensatedRLS converges."""
    from nolo.batch.eiv import with_constant_feature

    X, y, R, _ = _data(n=1500, m=3, noise_var=0.5, intercept=-2.0)
    est = CorrectedLeastSquares(noise_cov=noise_cov, fit_intercept=True).fit(R, y)
    Ra, S = with_constant_feature(R, noise_cov)
    Xb, Sb = average_replicates(Ra, S)
    full = np.linalg.solve(Xb.T @ Xb / 1500 - est.correction_scale_ * (1499 / 1500) * Sb, Xb.T @ y / 1500)
    assert est.coef_ == pytest.approx(full[:3], rel=1e-10) and est.intercept_ == pytest.approx(full[3], rel=1e-10)
    assert np.allclose(est.predict(X), X @ full[:3] + full[3])
    kw = {"noise": "repeated"} if noise_cov == "estimate" else {"noise": "known", "noise_cov": noise_cov}
    m = BiasCompensatedRLS(sweeps=3, **kw)
    m.learn_stream(R, y)
    assert np.allclose(m.coef_, est.coef_, atol=1e-5) and m.intercept_ == pytest.approx(est.intercept_, abs=1e-5)
    assert CorrectedLeastSquares(noise_cov=noise_cov).fit(R, y).intercept_ == 0.0
    with pytest.raises(ParameterError, match="fit_intercept"):
        CorrectedLeastSquares(fit_intercept="yes").fit(R, y)


# -- Fuller's small-sample guard -----------------------------------------------------------------------------
def _fuller_cell(seed=0, n=200, d=20, m=2, r=1.0):
    rng = np.random.default_rng([seed, m, int(r * 1000), d, n])
    w = rng.normal(size=d) / np.sqrt(d)
    X = rng.normal(size=(n, d))
    y = X @ w + np.sqrt(0.1 * float(w @ w)) * rng.normal(size=n)
    return X[:, None, :] + np.sqrt(r) * rng.normal(size=(n, m, d)), y


def test_fuller_guard_caps_gamma_by_the_formula_each_item():
    R, y = _fuller_cell(n=120, d=5, m=2, r=2.0)
    m = BiasCompensatedRLS(fuller_alpha=5.0, max_correction=0.99, cv_folds=None)
    for t in range(R.shape[0]):
        m.learn_stream(R[t:t + 1], y[t:t + 1])
        if t + 1 < 2 * 6:
            assert m.gamma_ == 0.0  # warm-up
            continue
        k = t + 1
        assert m.rho_joint_ >= m.rho_  # the joint root is the smaller one: its tracked estimate never below rho_
        # gamma_ is the share of the consistent correction c C, c = (k - 1)/k with the intercept (nu = k - 1)
        c = (k - 1) / k
        fuller = min((k - 1 - 5.0) / k, 1 / m.rho_joint_ - 6.0 / k) / c
        expect = min(1.0 if c * m.rho_ <= 0.99 else 0.99 / (c * m.rho_), max(fuller, 0.0))
        assert m.gamma_ == pytest.approx(expect, rel=1e-12, abs=1e-15)
        assert m.yy_ == pytest.approx(float(y[:k] @ y[:k]), rel=1e-12)


def test_fuller_guard_tracks_the_batch_modification():
    from nolo.batch import CorrectedLeastSquares

    R, y = _fuller_cell()
    online = BiasCompensatedRLS(fuller_alpha=5.0, max_correction=0.99, sweeps=60, cv_folds=None)
    online.learn_stream(R, y)
    batch = CorrectedLeastSquares(fit_intercept=True, fuller_alpha=5.0, cv_folds=None).fit(R, y)
    assert 0.9 < batch.lambda_hat_ < 1.0  # the regime: g = lambda_hat - (1 + alpha)/n (the joint root)
    assert online.gamma_ == pytest.approx(batch.correction_scale_, rel=1e-7)
    assert 1 / online.rho_joint_ == pytest.approx(batch.lambda_hat_, rel=1e-7)
    assert 1 / online.rho_ > 1.3  # the root of the x moments alone is larger
    np.testing.assert_allclose(online.coef_, batch.coef_, rtol=0, atol=2e-3 * np.linalg.norm(batch.coef_))
    plain = BiasCompensatedRLS(max_correction=0.99, sweeps=60, cv_folds=None)
    plain.learn_stream(R, y)
    assert np.linalg.norm(online.coef_ - plain.coef_) > 1e-2 * np.linalg.norm(plain.coef_)  # the guard acts


def test_fuller_alpha_validated_state_unchanged():
    m = BiasCompensatedRLS()
    R, y = _fuller_cell(n=10, d=2)
    m.learn_stream(R, y)
    before = m.theta_.copy()
    m.fuller_alpha = -1.0
    with pytest.raises(ParameterError, match="fuller_alpha"):
        m.learn_stream(R, y)
    assert np.array_equal(m.theta_, before)


def test_fuller_hand_worked_d1():
    # 4 items of 2 readings, means 2, 3, -2, -3: A = 26, C = 4 (each item's spread 2 / (2 * 1)), y = (1, 4, -1, -4):
    # b = 28, sum y^2 = 34.  Joint root: (26 - 28^2/34) / 4 = 25/34 < 1 + 1/t; alpha_F = 1, t = nu = 4 (no
    # intercept): gamma = 25/34 - 2/4 = 4/17 -> (26 - 16/17) w = 28, w = 238/213 -- the batch fit's value
    R = np.array([[[1.0], [3.0]], [[2.0], [4.0]], [[-1.0], [-3.0]], [[-2.0], [-4.0]]])
    y = np.array([1.0, 4.0, -1.0, -4.0])
    m = BiasCompensatedRLS(noise="repeated", fit_intercept=False, alpha=1e-300, sweeps=200, fuller_alpha=1.0,
                           cv_folds=None)
    m.learn_stream(R, y)
    assert 1 / m.rho_joint_ == pytest.approx(25 / 34, rel=1e-13) and m.yy_ == 34.0
    assert m.gamma_ == pytest.approx(4 / 17, rel=1e-12)
    assert m.coef_[0] == pytest.approx(238 / 213, rel=1e-12)
    batch = CorrectedLeastSquares(fuller_alpha=1.0, cv_folds=None).fit(R, y)
    assert batch.coef_[0] == pytest.approx(238 / 213, rel=1e-12) and batch.lambda_hat_ == pytest.approx(25 / 34)
    # the items of test_hand_worked_repeated_d1 (y nearly proportional to the means): joint root 8/29, Fuller's
    # g = 8/29 - 1 < 0, floored at 0 online: ridge least squares on the means, 13 w = 19
    m = BiasCompensatedRLS(noise="repeated", fit_intercept=False, alpha=1e-300, sweeps=200, fuller_alpha=1.0)
    m.learn_stream(np.array([[[1.0], [3.0]], [[2.0], [4.0]]]), np.array([2.0, 5.0]))
    assert 1 / m.rho_joint_ == pytest.approx(8 / 29, rel=1e-13) and m.gamma_ == 0.0
    assert m.coef_[0] == pytest.approx(19 / 13, rel=1e-13)


# -- cross-validated correction scale ------------------------------------------------------------------------
def _schedule(K, p, upto):
    t, out = max(4 * K, 2 * p), []
    while t <= upto:
        out.append(t)
        t = max(t + 1, int(np.ceil(1.25 * t)))
    return out


def test_cv_scale_is_the_batch_cross_validated_scale_at_a_schedule_point():
    K, d = 4, 3
    n = _schedule(K, d + 1, 400)[-1]
    R, y = _fuller_cell(n=n, d=d, m=3, r=1.5)
    online = BiasCompensatedRLS(cv_folds=K)
    online.learn_stream(R, y)
    batch = CorrectedLeastSquares(fit_intercept=True, cv_folds=K).fit(R, y)
    assert online.cv_scale_ == batch.correction_scale_
    # the fold sums are the direct ones (item t in fold t mod K)
    xbar = np.c_[R.mean(axis=1), np.ones(n)]
    for k in range(K):
        idx = np.arange(n) % K == k
        np.testing.assert_allclose(online.fold_gram_[k], xbar[idx].T @ xbar[idx], rtol=1e-10)
        np.testing.assert_allclose(online.fold_xy_[k], xbar[idx].T @ y[idx], rtol=1e-10, atol=1e-9)
        D = R[idx] - R[idx].mean(axis=1, keepdims=True)
        np.testing.assert_allclose(online.fold_correction_[k][:d, :d], np.einsum("nki,nkj->ij", D, D) / 6, rtol=1e-10)
    assert online.fold_count_.sum() == n and online.cv_next_ > n


def test_cv_per_item_equals_stream_bitwise():
    R, y = _fuller_cell(n=90, d=4, m=2, r=2.0)
    a = BiasCompensatedRLS(cv_folds=3)
    a.learn_stream(R, y)
    b = BiasCompensatedRLS(cv_folds=3)
    for t in range(90):
        b.learn_stream(R[t:t + 1], y[t:t + 1])
    for name in ("theta_", "chol_", "fold_gram_", "fold_correction_", "fold_xy_", "fold_count_"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.cv_scale_ == b.cv_scale_ and a.cv_next_ == b.cv_next_ and a.gamma_ == b.gamma_


@pytest.mark.slow
def test_cv_online_never_much_worse_than_ols_on_the_mean_monte_carlo():
    """n = 200, d = 20, attenuation <= 0.8 (the practice grid's failing cells): one pass of BiasCompensatedRLS with
    cv_folds=5 is within 0.01 R^2 of least squares on the mean readings or better, on average over 6 seeds."""
    from sklearn.linear_model import LinearRegression

    for m, r in ((2, 0.5), (2, 1.0), (4, 2.0), (2, 2.0)):
        cv, ols = [], []
        for seed in range(6):
            R, y = _fuller_cell(seed=seed + 100, m=m, r=r)
            rng = np.random.default_rng([seed + 100, m, int(r * 1000), 20, 200])
            w = rng.normal(size=20) / np.sqrt(20)  # the cell's coefficients (the same stream as _fuller_cell)
            Xt = np.random.default_rng(seed).normal(size=(2000, 20))
            yt = Xt @ w
            est = BiasCompensatedRLS(cv_folds=5)
            est.learn_stream(R, y)
            ols_fit = LinearRegression().fit(R.mean(axis=1), y)
            r2 = lambda p: 1 - np.sum((yt - p) ** 2) / np.sum((yt - yt.mean()) ** 2)  # noqa: E731
            cv.append(r2(est.predict(Xt)))
            ols.append(r2(ols_fit.predict(Xt)))
        assert np.mean(cv) >= np.mean(ols) - 0.01, (m, r, np.mean(cv), np.mean(ols))


def test_cv_folds_fixed_once_learning_started():
    R, y = _fuller_cell(n=20, d=2)
    m = BiasCompensatedRLS(cv_folds=3)
    m.learn_stream(R, y)
    m.cv_folds = 4
    with pytest.raises(ParameterError, match="cv_folds"):
        m.learn_stream(R, y)
    m.cv_folds = 1
    with pytest.raises(ParameterError, match="cv_folds"):
        m.learn_stream(R, y)


# -- the default guard (cv_folds=5, the one-standard-error rule) ----------------------------------------------
def _guard_cell(n, d, seed=0, m=2, r=2.0):
    """The practice grid's generator with seeds 100+ (not the experiment's): readings, y, clean test inputs and
    their noiseless targets."""
    from nolo.papers.practice.eiv import synthetic_cell

    R, y, Xt, w = synthetic_cell(m, r, d, n, 100 + seed)
    return R, y, Xt, Xt @ w


def _r2(t, p):
    return 1 - np.sum((t - p) ** 2) / np.sum((t - t.mean()) ** 2)


def test_default_guard_online_decisions_ill_and_well_posed():
    from sklearn.linear_model import LinearRegression

    # ill-posed (n = 200, d = 20, attenuation 1/2; 4 seeds): the full correction (cv_folds=None) is erratic (R^2
    # 0.72, 0.70, -5.3, -0.67 against 0.68-0.70 for least squares on the means: worse on average); the default caps
    # the correction (0.4-0.45) and beats least squares on the means in every seed (by 0.09-0.11 in a dry run)
    full_r2, ols_r2 = [], []
    for seed in range(4):
        R, y, Xt, yt = _guard_cell(200, 20, seed=seed)
        ols = _r2(yt, LinearRegression().fit(R.mean(axis=1), y).predict(Xt))
        full = BiasCompensatedRLS(cv_folds=None)
        full.learn_stream(R, y)
        guard = BiasCompensatedRLS()
        guard.learn_stream(R, y)
        assert guard.cv_folds == 5 and guard.cv_scale_ < 0.9 and guard.gamma_ <= guard.cv_scale_
        assert _r2(yt, guard.predict(Xt)) > ols + 0.05
        full_r2.append(_r2(yt, full.predict(Xt)))
        ols_r2.append(ols)
    assert np.mean(full_r2) < np.mean(ols_r2)
    # well-posed (n = 2000, d = 3): the cap stays at 1 and the estimate is the full correction's (to rounding: the
    # fold-keeping loop sums an item's correction before adding it)
    R, y, Xt, yt = _guard_cell(2000, 3)
    full = BiasCompensatedRLS(cv_folds=None)
    full.learn_stream(R, y)
    guard = BiasCompensatedRLS()
    guard.learn_stream(R, y)
    assert guard.cv_scale_ == 1.0 and guard.gamma_ == full.gamma_
    np.testing.assert_allclose(guard.theta_, full.theta_, rtol=1e-10)


def test_default_guard_online_equals_batch_default_at_a_schedule_point():
    # at a schedule point n the default learner's re-chosen cap is the default batch estimator's correction scale
    # on the same items; the coefficients (60 sweeps) are the corrected solution at the cap in force for the last
    # item (the re-choice at n applies from item n + 1)
    from nolo.batch.eiv import average_replicates, with_constant_feature

    n = _schedule(5, 21, 400)[-1]
    R, y, _, _ = _guard_cell(n, 20, seed=1)
    online = BiasCompensatedRLS(max_correction=0.99, sweeps=60)
    online.learn_stream(R, y)
    batch = CorrectedLeastSquares(fit_intercept=True).fit(R, y)
    assert online.cv_scale_ == batch.correction_scale_ < 1.0
    Xb, S = average_replicates(*with_constant_feature(R, "estimate"))
    w = np.linalg.solve(Xb.T @ Xb / n - online.gamma_ * ((n - 1) / n) * S, Xb.T @ y / n)
    assert online.gamma_ < 1.0
    np.testing.assert_allclose(online.theta_, w, rtol=0, atol=1e-3 * np.linalg.norm(w))


def test_freeze_correction_scale_stops_re_choosing():
    R, y, _, _ = _guard_cell(300, 5, seed=2)
    m = BiasCompensatedRLS()
    m.learn_stream(R[:150], y[:150])
    before = m.cv_scale_
    m.freeze_correction_scale()
    from nolo.batch.eiv import choose_correction_scale

    assert m.cv_scale_ == choose_correction_scale(m.fold_gram_, m.fold_correction_, m.fold_xy_, m.fold_count_,
                                                  centred=True)
    frozen = m.cv_scale_
    m.learn_stream(R[150:], y[150:])
    assert m.cv_scale_ == frozen and m.cv_next_ > 10**18 and isinstance(before, float)
    off = BiasCompensatedRLS(cv_folds=None)
    assert off.freeze_correction_scale() is off  # nothing to freeze
