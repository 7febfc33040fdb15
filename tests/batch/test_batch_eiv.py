"""nolo.batch.eiv: Fuller's small-sample modification and ragged readings."""

import math

import numpy as np
import pytest
import scipy.linalg

from nolo.batch import CorrectedLeastSquares, corrected_least_squares
from nolo.batch.eiv import average_replicates, fuller_scale
from nolo.exceptions import NumericalError, ParameterError


def _same_readings(xbar):
    """Two identical readings per item: the means are ``xbar`` exactly (the noise covariance is given)."""
    xbar = np.asarray(xbar, dtype=float).reshape(-1, 1)
    return np.stack([xbar, xbar], axis=1)


def test_fuller_hand_worked_small_root():
    # d = 1, n = 4, 2 identical readings, Sigma = 1 -> S = 1/2; xbar = (1, 1, -1, -1), y = (2, 0, 0, -2):
    # M = 1, b = 1, m_yy = 2.  Fuller's root is that of the joint moments: |M - b^2/m_yy - lambda S| = 0 ->
    # lambda_hat = (1 - 1/2) / (1/2) = 1 < 1 + 1/n, so g = lambda_hat - (1 + alpha)/n = 1 - 2/4 = 1/2 (alpha = 1);
    # M - g S = 3/4 -> w = 4/3.  (The root of M alone, 2, would give g = 3/4 and w = 8/5; unmodified w = 2.)
    R = _same_readings([1.0, 1.0, -1.0, -1.0])
    y = np.array([2.0, 0.0, 0.0, -2.0])
    lam, g = fuller_scale(np.array([[1.0]]), np.array([[0.5]]), 4, 1.0, b=np.array([1.0]), m_yy=2.0)
    assert lam == pytest.approx(1.0) and g == pytest.approx(0.5)
    est = CorrectedLeastSquares(noise_cov=1.0, fuller_alpha=1.0, cv_folds=None).fit(R, y)
    assert est.coef_ == pytest.approx([4.0 / 3.0], rel=1e-12)
    assert est.lambda_hat_ == pytest.approx(1.0) and est.correction_scale_ == pytest.approx(0.5)
    assert corrected_least_squares(R, y, 1.0) == pytest.approx([2.0])
    # y exactly proportional to xbar: the joint root is 0 and g = -(1 + alpha)/n < 0 (more shrinkage than OLS)
    w = corrected_least_squares(_same_readings([0.5, -0.5, 0.5, -0.5]), np.array([1.0, -1.0, 1.0, -1.0]), 1.0,
                                fuller_alpha=0.5)
    assert w == pytest.approx([0.5 / (0.25 + 0.375 * 0.5)], rel=1e-12)  # M - g S = 1/4 + 3/16, b = 1/2


def test_fuller_hand_worked_large_root():
    # xbar = (2, 2, -2, -2), y = (3, 1, -1, -3): M = 4, b = 4, m_yy = 5; lambda_hat = (4 - 16/5) / (1/2) = 8/5
    # >= 1 + 1/n: g = 1 - alpha/n = 3/4; M - g S = 4 - 3/8 = 29/8 -> w = 32/29
    R = _same_readings([2.0, 2.0, -2.0, -2.0])
    y = np.array([3.0, 1.0, -1.0, -3.0])
    est = CorrectedLeastSquares(noise_cov=1.0, fuller_alpha=1.0, cv_folds=None).fit(R, y)
    assert est.coef_ == pytest.approx([32.0 / 29.0], rel=1e-12)
    assert est.lambda_hat_ == pytest.approx(1.6) and est.correction_scale_ == pytest.approx(0.75)
    assert corrected_least_squares(R, y, 1.0) == pytest.approx([4.0 / 3.5])  # the unmodified estimate


def test_fuller_hand_worked_with_intercept_uses_n_minus_1():
    # the same items shifted by 5 with an intercept: centred moments as above, nu = n - 1 = 3 degrees of freedom;
    # g = min((nu - alpha)/n, lambda_hat - (1 + alpha)/n) = min(2/4, 8/5 - 2/4) = 1/2 of S -> w = 4 / (4 - 1/4) = 16/15.
    # In the book's terms (moments on nu = 3 d.f.: m_xx = 16/3, lambda_F = (n/nu) lambda_hat = 32/15) the scale of
    # S is min(1 - alpha/nu, lambda_F - (1 + alpha)/nu) = 2/3, reported as the share of the consistent correction
    # c S = (3/4) S: 2/3 * 3/4 = 1/2, the same solved matrix
    R = _same_readings([7.0, 7.0, 3.0, 3.0])
    y = np.array([3.0, 1.0, -1.0, -3.0]) + 10.0
    est = CorrectedLeastSquares(noise_cov=1.0, fit_intercept=True, fuller_alpha=1.0, cv_folds=None).fit(R, y)
    assert est.lambda_hat_ == pytest.approx(1.6) and est.correction_scale_ == pytest.approx(2.0 / 3.0)
    assert est.coef_ == pytest.approx([16.0 / 15.0], rel=1e-12)
    assert est.intercept_ == pytest.approx(10.0 - 5.0 * 16.0 / 15.0, rel=1e-12)


def test_fuller_root_is_the_joint_generalised_root():
    rng = np.random.default_rng(3)
    n, d = 50, 3
    R = rng.normal(size=(n, 1, d)) + 2.0
    y = R[:, 0] @ np.array([1.0, -1.0, 0.5]) + 0.3 * rng.normal(size=n) + 4.0
    Sigma = np.diag([0.3, 0.5, 0.2]) + 0.05
    Ra = np.concatenate([R, np.ones((n, 1, 1))], axis=2)
    Sa = np.zeros((d + 1, d + 1))
    Sa[:d, :d] = Sigma
    Xb, Sb = average_replicates(Ra, Sa)
    lam, g = fuller_scale(Xb.T @ Xb / n, Sb, n, 1.0, b=Xb.T @ y / n, m_yy=y @ y / n, dof=n - 1)
    # |M_ZZ - lambda blockdiag(0, Sigma)| = 0 for Z = (y, x, 1), solved on the centred moments
    Zc = np.column_stack([y, R[:, 0]]) - np.column_stack([y, R[:, 0]]).mean(axis=0)
    Mzz = Zc.T @ Zc / n
    ref = scipy.linalg.eigh(Mzz[1:, 1:] - np.outer(Mzz[1:, 0], Mzz[0, 1:]) / Mzz[0, 0], Sigma, eigvals_only=True)[0]
    assert lam == pytest.approx(ref, rel=1e-10)
    assert g == pytest.approx(min((n - 2) / n, ref - 2 / n))
    # the root of M alone (no b): the centred generalised root of x, at least the joint one
    lam_x, _ = fuller_scale(Xb.T @ Xb / n, Sb, n, 1.0)
    Xc = R[:, 0] - R[:, 0].mean(axis=0)
    assert lam_x == pytest.approx(scipy.linalg.eigh(Xc.T @ Xc / n, Sigma, eigvals_only=True)[0], rel=1e-10)
    assert lam_x >= lam
    assert fuller_scale(np.eye(2), np.zeros((2, 2)), 10, 1.0) == (math.inf, 0.9)
    # a constant target adds nothing to the joint equation: the root of M alone
    assert fuller_scale(Xb.T @ Xb / n, Sb, n, 1.0, b=Xb.T @ np.full(n, 3.0) / n, m_yy=9.0)[0] == pytest.approx(lam_x)


def test_fuller_solved_matrix_positive_definite_where_unmodified_fails():
    # n = 200, d = 20, 2 readings of noise-to-signal 2: the corrected moment matrix is indefinite
    rng = np.random.default_rng([0, 2, 2000, 20, 200])
    n, d, m = 200, 20, 2
    X = rng.normal(size=(n, d))
    y = X @ (rng.normal(size=d) / math.sqrt(d))
    R = X[:, None, :] + math.sqrt(2.0) * rng.normal(size=(n, m, d))
    with pytest.raises(NumericalError):
        corrected_least_squares(R, y, "estimate")
    for alpha in (0.0, 1.0, 5.0):
        w = corrected_least_squares(R, y, "estimate", fuller_alpha=alpha)
        assert np.all(np.isfinite(w))
        Xb, S = average_replicates(R, "estimate")
        M, b = Xb.T @ Xb / n, Xb.T @ y / n
        lam, g = fuller_scale(M, S, n, alpha, b=b, m_yy=y @ y / n)
        assert lam < 1.0 and g == pytest.approx(lam - (1 + alpha) / n)
        # the joint matrix minus g S has smallest root (1 + alpha)/n; M - g S itself at least that
        root = scipy.linalg.eigh(M - np.outer(b, b) / (y @ y / n) - g * S, S, eigvals_only=True)[0]
        assert root == pytest.approx((1 + alpha) / n, rel=1e-8)
        assert scipy.linalg.eigh(M - g * S, S, eigvals_only=True)[0] >= root * (1 - 1e-10)


def test_fuller_monte_carlo_alpha1_nearly_unbiased_alpha4_smaller_mse():
    """Fuller's properties at n = 15 (d = 1, slope 1, x ~ N(0, 1), target noise sd 0.5, two readings of noise
    variance 0.5 each: reliability of the mean 0.8, known noise covariance), 2,000 fits with a fixed seed: alpha = 1
    has mean within 0.03 of the slope (measured 1.019, standard error 0.005); alpha = 4 a smaller mean squared error
    than alpha = 1 and than the unmodified estimate ``b / (M - S)`` (measured 0.043, 0.055, 0.38).  The earlier form,
    the root of ``M`` alone, measured mean 1.046 and mean squared error 0.134 at alpha = 1 on these draws."""
    rng = np.random.default_rng(2024)
    n, fits = 15, 2000
    est = {a: [] for a in (1.0, 4.0)}
    plain = []
    for _ in range(fits):
        x = rng.normal(size=n)
        y = x + 0.5 * rng.normal(size=n)
        R = x[:, None, None] + math.sqrt(0.5) * rng.normal(size=(n, 2, 1))
        for a in est:
            est[a].append(CorrectedLeastSquares(noise_cov=0.5, fuller_alpha=a, cv_folds=None).fit(R, y).coef_[0])
        xb = R.mean(axis=1)[:, 0]
        plain.append((xb @ y / n) / (xb @ xb / n - 0.25))
    mean1 = float(np.mean(est[1.0]))
    mse = {k: float(np.mean((np.asarray(v) - 1.0) ** 2)) for k, v in (("a1", est[1.0]), ("a4", est[4.0]),
                                                                          ("plain", plain))}
    assert abs(mean1 - 1.0) < 0.03, mean1
    assert mse["a4"] < mse["a1"] < mse["plain"], mse


def _cell(seed, m, nsr, n=200, d=20):
    rng = np.random.default_rng([seed, m, int(nsr * 1000), d, n, 7])
    w = rng.normal(size=d) / math.sqrt(d)
    X = rng.normal(size=(n, d))
    y = X @ w + math.sqrt(0.1 * float(w @ w)) * rng.normal(size=n)
    R = X[:, None, :] + math.sqrt(nsr) * rng.normal(size=(n, m, d))
    Xt = rng.normal(size=(2000, d))
    return R, y, Xt, Xt @ w


def _r2(t, p):
    return 1 - np.sum((t - p) ** 2) / np.sum((t - t.mean()) ** 2)


@pytest.mark.slow
def test_fuller_reduces_the_small_sample_loss_monte_carlo():
    """n = 200, d = 20, lambda = 2/3 (m = 2, r = 1; m = 4, r = 2): Fuller's alpha = 5 reduces the loss of the
    unmodified corrected least squares -- a higher clean-input R^2 in at least 11 of 12 seeds (a sign test: p < 0.004
    if it did not matter) and by a median of more than 0.01 (the paired differences are heavy-tailed)."""
    for m, r in ((2, 1.0), (4, 2.0)):
        diffs = []
        for seed in range(12):
            R, y, Xt, yt = _cell(seed, m, r)
            f = CorrectedLeastSquares(fit_intercept=True, fuller_alpha=5.0, cv_folds=None).fit(R, y)
            c = CorrectedLeastSquares(fit_intercept=True, cv_folds=None).fit(R, y)
            diffs.append(_r2(yt, f.predict(Xt)) - _r2(yt, c.predict(Xt)))
        diffs = np.array(diffs)
        assert np.sum(diffs > 0) >= 11 and np.median(diffs) > 0.01, (m, r, diffs)


def test_ragged_matches_direct_computation():
    rng = np.random.default_rng(5)
    d = 3
    counts = rng.integers(1, 6, size=40)
    counts[:2] = 3
    items = [rng.normal(size=d) + rng.normal(size=(k, d)) for k in counts]
    y = rng.normal(size=40)
    # direct: means, pooled within-item covariance, S = Sigma_hat mean(1/m_i)
    means = np.array([a.mean(axis=0) for a in items])
    within = sum((a - a.mean(axis=0)).T @ (a - a.mean(axis=0)) for a in items)
    Sig = within / float(np.sum(counts - 1))
    S = Sig * np.mean(1.0 / counts)
    ref = np.linalg.solve(means.T @ means / 40 - S, means.T @ y / 40)
    assert corrected_least_squares(items, y, "estimate") == pytest.approx(ref, rel=1e-10)
    K = np.diag([0.2, 0.4, 0.1])
    ref_k = np.linalg.solve(means.T @ means / 40 - K * np.mean(1.0 / counts), means.T @ y / 40)
    assert corrected_least_squares(items, y, K) == pytest.approx(ref_k, rel=1e-10)
    # with an intercept: a constant feature with no noise, and the centred moments' share (n - 1)/n of the noise
    est = CorrectedLeastSquares(noise_cov=K, fit_intercept=True, cv_folds=None).fit(items, y)
    Ma = np.c_[means, np.ones(40)]
    Ka = np.zeros((4, 4))
    Ka[:3, :3] = K * np.mean(1.0 / counts) * (39 / 40)
    wa = np.linalg.solve(Ma.T @ Ma / 40 - Ka, Ma.T @ y / 40)
    assert np.append(est.coef_, est.intercept_) == pytest.approx(wa, rel=1e-10)
    # = the slopes of the centred moments with divisor n - 1 minus S, the intercept through the means
    mc, yc = means - means.mean(axis=0), y - y.mean()
    slopes = np.linalg.solve(mc.T @ mc / 39 - K * np.mean(1.0 / counts), mc.T @ yc / 39)
    assert est.coef_ == pytest.approx(slopes, rel=1e-10)
    assert est.intercept_ == pytest.approx(y.mean() - means.mean(axis=0) @ slopes, rel=1e-10)


def test_ragged_equal_counts_is_the_dense_estimate():
    rng = np.random.default_rng(6)
    R = rng.normal(size=(30, 4, 2)) + rng.normal(size=(30, 1, 2))
    y = rng.normal(size=30)
    assert corrected_least_squares(list(R), y, "estimate") == pytest.approx(corrected_least_squares(R, y, "estimate"))


def test_bad_fuller_alpha_and_singletons():
    R = np.random.default_rng(0).normal(size=(10, 2, 2))
    with pytest.raises(ParameterError, match="fuller_alpha"):
        corrected_least_squares(R, np.zeros(10), 1.0, fuller_alpha=-1.0)
    with pytest.raises(ParameterError, match="fuller_alpha"):
        CorrectedLeastSquares(fuller_alpha="five").fit(R, np.zeros(10))
    with pytest.raises(ParameterError, match="m_i >= 2"):
        corrected_least_squares([np.ones((1, 2))] * 5, np.zeros(5), "estimate")


# -- cross-validated correction scale ------------------------------------------------------------------------
def test_cv_correction_scale_matches_a_direct_computation():
    from nolo.batch.eiv import CV_GRID, cv_correction_scale, one_se_scale

    rng = np.random.default_rng(11)
    n, m, d, K = 40, 3, 2, 4
    X = rng.normal(size=(n, d))
    R = X[:, None, :] + 0.8 * rng.normal(size=(n, m, d))
    y = X @ np.array([1.0, -0.5]) + 0.1 * rng.normal(size=n)
    g, risks = cv_correction_scale(R, y, "estimate", K)
    ref = np.zeros((K, len(CV_GRID)))
    for k in range(K):
        te = np.arange(n) % K == k
        tr = ~te

        def mom(idx):
            xb = R[idx].mean(axis=1)
            D = R[idx] - xb[:, None]
            S = np.einsum("nki,nkj->ij", D, D) / (idx.sum() * (m - 1)) / m
            return xb.T @ xb / idx.sum(), S, xb.T @ y[idx] / idx.sum()

        M, S, b = mom(tr)
        Mv, Sv, bv = mom(te)
        for j, gj in enumerate(CV_GRID):
            w = np.linalg.solve(M - gj * S, b)
            ref[k, j] = te.sum() * (w @ (Mv - Sv) @ w - 2 * bv @ w)
    np.testing.assert_allclose(risks, ref.sum(axis=0), rtol=1e-10)
    # the one-standard-error rule by hand: the largest scale within one paired standard error of the least risk
    tot = ref.sum(axis=0)
    best = np.argmin(tot)
    diff = ref - ref[:, [best]]
    se = np.sqrt(K * diff.var(axis=0, ddof=1))
    assert g == CV_GRID[np.flatnonzero(tot - tot[best] <= se).max()] == one_se_scale(ref, CV_GRID)
    est = CorrectedLeastSquares(cv_folds=K).fit(R, y)
    assert est.correction_scale_ == g
    xb = R.mean(axis=1)
    Xb, S = average_replicates(R, "estimate")
    np.testing.assert_allclose(est.coef_, np.linalg.solve(xb.T @ xb / n - g * S, xb.T @ y / n), rtol=1e-10)
    assert est.correction_scale_ == g


@pytest.mark.slow
def test_cv_correction_never_much_worse_than_ols_on_the_mean_monte_carlo():
    """The practice grid's failing cells (n = 200, d = 20, attenuation <= 0.8): the cross-validated correction
    is not worse than least squares on the mean readings by more than 0.01 R^2 on average over 6 seeds (it is
    better by 0.02-0.07 in a dry run), and at n = 2000, d = 3 it keeps nearly the full correction."""
    from sklearn.linear_model import LinearRegression

    for m, r in ((2, 0.5), (2, 1.0), (4, 2.0), (2, 2.0)):
        cv, ols = [], []
        for seed in range(6):
            R, y, Xt, yt = _cell(seed, m, r)
            cv.append(_r2(yt, CorrectedLeastSquares(fit_intercept=True, cv_folds=5).fit(R, y).predict(Xt)))
            ols.append(_r2(yt, LinearRegression().fit(R.mean(axis=1), y).predict(Xt)))
        assert np.mean(cv) >= np.mean(ols) - 0.01, (m, r, np.mean(cv), np.mean(ols))
    R, y, Xt, yt = _cell(0, 2, 2.0, n=2000, d=3)
    est = CorrectedLeastSquares(fit_intercept=True, cv_folds=5).fit(R, y)
    assert est.correction_scale_ >= 0.8
    assert _r2(yt, est.predict(Xt)) > _r2(yt, LinearRegression().fit(R.mean(axis=1), y).predict(Xt)) + 0.15


def test_cv_folds_validated():
    R = np.random.default_rng(0).normal(size=(10, 2, 2))
    with pytest.raises(ParameterError, match="cv_folds"):
        CorrectedLeastSquares(cv_folds=1).fit(R, np.zeros(10))
    with pytest.raises(ParameterError, match="cv_folds=6 needs at least 12 items"):
        corrected_least_squares(R, np.zeros(10), "estimate", cv_folds=6)


# -- the default guard: the one-standard-error rule ----------------------------------------------------------
def test_one_se_rule_hand_worked():
    from nolo.batch.eiv import one_se_scale

    grid = np.array([0.0, 0.5, 1.0])
    # well posed: the full correction is 0.1 above the least total risk (g = 0.5), its paired differences
    # (0.2, -0.1, 0) have standard deviation sqrt(0.07/3) -> SE of the sum sqrt(3 * 0.07/3) = 0.265 >= 0.1: keep g = 1
    well = np.array([[3.0, 1.0, 1.2], [3.0, 1.0, 0.9], [3.0, 1.0, 1.0]])
    assert one_se_scale(well, grid) == 1.0
    # ill posed: 3.1 above with the same spread of the differences (1, 1.2, 0.9): clearly worse, take g = 0.5
    ill = np.array([[3.0, 1.0, 2.0], [3.0, 1.0, 2.2], [3.0, 1.0, 1.9]])
    assert one_se_scale(ill, grid) == 0.5
    # a scale whose training system is not positive definite (inf) is never chosen; empty folds (rows of 0) ignored
    inf = np.array([[3.0, 1.0, np.inf], [3.0, 1.0, 0.9], [0.0, 0.0, 0.0]])
    assert one_se_scale(inf, grid) == 0.5
    assert math.isnan(one_se_scale(np.full((2, 3), np.inf), grid))


def _ols_r2(R, y, Xt, yt):
    from sklearn.linear_model import LinearRegression

    return _r2(yt, LinearRegression().fit(R.mean(axis=1), y).predict(Xt))


def test_default_guard_turns_the_correction_down_only_where_ill_posed():
    # ill-posed: n = 200, d = 20, 2 readings with noise-to-signal 2 (attenuation 1/2): the corrected moment
    # matrix is indefinite (the full correction has no solution), the guard picks a partial correction that beats
    # least squares on the means
    R, y, Xt, yt = _cell(0, 2, 2.0)
    with pytest.raises(NumericalError):
        CorrectedLeastSquares(fit_intercept=True, cv_folds=None).fit(R, y)
    est = CorrectedLeastSquares(fit_intercept=True).fit(R, y)
    assert 0.0 < est.correction_scale_ < 0.9
    assert _r2(yt, est.predict(Xt)) > _ols_r2(R, y, Xt, yt)
    # well-posed: n = 2000, d = 3, same noise: the guard keeps the full correction, bit for bit
    R, y, Xt, yt = _cell(0, 2, 2.0, n=2000, d=3)
    est = CorrectedLeastSquares(fit_intercept=True).fit(R, y)
    full = CorrectedLeastSquares(fit_intercept=True, cv_folds=None).fit(R, y)
    assert est.correction_scale_ == 1.0 and np.array_equal(est.coef_, full.coef_)
    assert _r2(yt, est.predict(Xt)) > _ols_r2(R, y, Xt, yt) + 0.2


def test_default_guard_needs_2k_items_else_full_correction():
    R = _same_readings([2.0, -2.0, 2.0, -1.0, 1.0, 0.5, -0.5, 1.5, -1.5])  # 9 items < 2 * 5
    y = np.arange(9.0)
    est = CorrectedLeastSquares(noise_cov=1.0).fit(R, y)
    assert est.correction_scale_ == 1.0
    assert est.coef_ == pytest.approx(corrected_least_squares(R, y, 1.0), rel=1e-12)


def test_cv_with_fuller_cap_keeps_the_cap_as_a_candidate():
    from nolo.batch.eiv import cv_correction_scale

    R, y, _, _ = _cell(1, 8, 0.5, n=400, d=3)  # well posed: the rule keeps the largest candidate, the cap
    g, risks = cv_correction_scale(R, y, "estimate", 5, g_max=0.987)
    assert g == 0.987 and risks.shape == (21,)  # 0, 0.05, ..., 0.95 and the cap


def test_intercept_hand_worked_centred_moments_on_n_minus_1():
    # d = 1, n = 3 items, unbalanced: readings (1, 3), (4), (5, 6, 7) -> means 2, 4, 6 (m = 2, 1, 3), y = (3, 4, 8).
    # Centred: x - 4 = (-2, 0, 2), y - 5 = (-2, -1, 3); S_xx = 8, S_xy = 4 + 0 + 6 = 10, on n - 1 = 2 d.f.:
    # s_xx = 4, s_xy = 5.  The noise of item i's mean is Sigma/m_i; their average is S = Sigma (1/2 + 1 + 1/3)/3
    # = Sigma 11/18, and E S_xx = (n - 1)(sigma_x^2 + S), so the corrected moment is s_xx - S.
    # Known Sigma = 1: S = 11/18, s_xx - S = 61/18, slope 5 / (61/18) = 90/61, intercept 5 - 4 * 90/61 = -55/61.
    # (Subtracting S from the divisor-n moments instead: (8/3 - 11/18) = 37/18, slope (10/3)/(37/18) = 60/37.)
    items = [np.array([[1.0], [3.0]]), np.array([[4.0]]), np.array([[5.0], [6.0], [7.0]])]
    y = np.array([3.0, 4.0, 8.0])
    est = CorrectedLeastSquares(noise_cov=1.0, fit_intercept=True, cv_folds=None).fit(items, y)
    assert est.coef_ == pytest.approx([90.0 / 61.0], rel=1e-12)
    assert est.intercept_ == pytest.approx(-55.0 / 61.0, rel=1e-12)
    assert est.correction_scale_ == 1.0
    # Estimated Sigma: pooled within-item scatter (1 + 1) + (1 + 0 + 1) = 4 on (1 + 0 + 2) = 3 d.f. -> 4/3;
    # S = (4/3)(11/18) = 22/27, s_xx - S = 86/27, slope 5 * 27/86 = 135/86, intercept 5 - 4 * 135/86 = -55/43.
    est = CorrectedLeastSquares(noise_cov="estimate", fit_intercept=True, cv_folds=None).fit(items, y)
    assert est.coef_ == pytest.approx([135.0 / 86.0], rel=1e-12)
    assert est.intercept_ == pytest.approx(-55.0 / 43.0, rel=1e-12)
    # the scikit-learn estimator (standardised internally, an intercept) gives the same line
    from nolo.sklearn_api import CorrectedLeastSquaresRegressor

    skl = CorrectedLeastSquaresRegressor(noise_cov=1.0, cv_folds=None).fit(items, y)
    assert skl.coef_ == pytest.approx([90.0 / 61.0], rel=1e-10)
    assert skl.intercept_ == pytest.approx(-55.0 / 61.0, rel=1e-10)
    # no intercept: the raw moments with divisor n, minus S (nothing is centred): M = (4 + 16 + 36)/3 = 56/3,
    # b = (6 + 16 + 48)/3 = 70/3, (56/3 - 11/18) w = 70/3 -> w = 420/325 = 84/65
    est = CorrectedLeastSquares(noise_cov=1.0, cv_folds=None).fit(items, y)
    assert est.coef_ == pytest.approx([84.0 / 65.0], rel=1e-12)


def test_intercept_small_n_slope_bias_monte_carlo():
    """n = 20 items, slope 1, intercept 2, x ~ N(0, 1), target noise sd 0.5, two readings of noise variance 0.25
    (S = 0.125), known noise covariance, 2,000 fits with a fixed seed.  The consistent form (centred moments on
    n - 1 d.f. minus S) against subtracting S from the divisor-n centred moments, which over-corrects by S/n: the
    slope of the latter is larger in every fit (``S_xy / (S_xx - n S)`` against ``S_xy / (S_xx - (n - 1) S)``), and
    its upward bias is larger.  Measured on these draws (4,000 fits, the same seed): bias 0.0185 (standard error
    0.0028) against 0.0266 (0.0029); the paired difference 0.0082 (0.0002).  What is left is the ratio's own
    O(1/n) bias (a random denominator), within a few standard errors of 0.02."""
    rng = np.random.default_rng(20)
    n, fits = 20, 2000
    new, old = np.empty(fits), np.empty(fits)
    for k in range(fits):
        x = rng.normal(size=n)
        y = 2.0 + x + 0.5 * rng.normal(size=n)
        R = x[:, None, None] + 0.5 * rng.normal(size=(n, 2, 1))
        new[k] = CorrectedLeastSquares(noise_cov=0.25, fit_intercept=True, cv_folds=None).fit(R, y).coef_[0]
        xc = R.mean(axis=1)[:, 0] - R.mean(axis=1)[:, 0].mean()
        old[k] = (xc @ (y - y.mean()) / n) / (xc @ xc / n - 0.125)
    se = lambda a: float(np.std(a, ddof=1)) / math.sqrt(fits)  # noqa: E731
    bias_new, bias_old = float(new.mean()) - 1.0, float(old.mean()) - 1.0
    assert np.all(old > new)
    assert abs(bias_new) <= abs(bias_old) - 10 * se(old - new), (bias_new, bias_old, se(old - new))
    assert abs(bias_new) < 0.02 + 3 * se(new), (bias_new, se(new))


def _fuller_book_form(xbar, y, S, alpha, intercept):
    """Fuller's modified estimator written independently in the book's notation (1987, section 2.5.1): moments
    about the mean on nu = n - 1 degrees of freedom with an intercept (raw moments on nu = n without),
    ``lambda_F`` the smallest root of ``|m_ZZ - lambda blockdiag(0, S)| = 0`` for ``Z = (y, x)`` (computed here as
    the reciprocal of the largest generalised eigenvalue of ``(blockdiag(0, S), m_ZZ)``), ``H = m_xx - S`` if
    ``lambda_F >= 1 + 1/nu`` else ``m_xx - (lambda_F - 1/nu) S``, and ``beta = (H + (alpha/nu) S)^{-1} m_xy``; the
    threshold, the shift and the degrees of freedom as lavaan's ``lav_sam_veta`` (R/lav_sam_utils.R) has them."""
    n = xbar.shape[0]
    Z = np.column_stack([y, xbar])
    if intercept:
        Z = Z - Z.mean(axis=0)
    nu = n - 1 if intercept else n
    m = Z.T @ Z / nu
    d = xbar.shape[1]
    B = np.zeros((d + 1, d + 1))
    B[1:, 1:] = S
    lam = 1.0 / scipy.linalg.eigh(B, m, eigvals_only=True)[-1]
    H = m[1:, 1:] - (S if lam >= 1 + 1 / nu else (lam - 1 / nu) * S)
    beta = np.linalg.solve(H + (alpha / nu) * S, m[1:, 0])
    return beta, lam, nu


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("alpha", [0.0, 1.0, 4.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fuller_equals_an_independent_book_form(intercept, alpha, seed):
    # small cases, both branches of the threshold: n = 12 items, d = 2, 2 readings, known Sigma; with seed 0 the
    # target is nearly a function of the readings (small lambda_F), with 1 and 2 a noisy target (large lambda_F)
    rng = np.random.default_rng([seed, 11])
    n, d = 12, 2
    X = rng.normal(size=(n, d)) + 3.0
    Sigma = np.array([[0.4, 0.1], [0.1, 0.3]])
    R = X[:, None, :] + rng.normal(size=(n, 2, d)) @ np.linalg.cholesky(Sigma).T
    xbar = R.mean(axis=1)
    y = xbar @ np.array([1.0, -0.5]) + 2.0 if seed == 0 else X @ np.array([1.0, -0.5]) + 2.0 + rng.normal(size=n)
    beta, lam_book, nu = _fuller_book_form(xbar, y, Sigma / 2, alpha, intercept)
    est = CorrectedLeastSquares(noise_cov=Sigma, fit_intercept=intercept, fuller_alpha=alpha, cv_folds=None).fit(R, y)
    assert est.coef_ == pytest.approx(beta, rel=1e-9)
    # nolo's root is on the divisor-n moments: lambda_F = (n / nu) lambda_hat_
    assert (n / nu) * est.lambda_hat_ == pytest.approx(lam_book, rel=1e-9)
    # the reported scale is the share of the consistent correction (nu/n) S of the divisor-n moments, which is
    # the book's multiple of S on nu degrees of freedom: min(1 - alpha/nu, lambda_F - (1 + alpha)/nu)
    assert est.correction_scale_ == pytest.approx(min(1 - alpha / nu, lam_book - (1 + alpha) / nu), rel=1e-9)
    if intercept:
        assert est.intercept_ == pytest.approx(y.mean() - xbar.mean(axis=0) @ beta, rel=1e-9)
    # which branch this case exercises (both occur over the seeds)
    assert (lam_book < 1 + 1 / nu) == (seed == 0)
