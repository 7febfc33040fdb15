"""Failures the long fuzz profile's census found after issue 14's first round of fixes, one test each (all fail on
the tree before the fix): unnamed rejections, a list accepted as one target, inf/NaN in the OCO learners' regret
statistics; later AutoCB's overflowing prediction and singular update, and the EIV sandwich's unannounced NaN."""

import numpy as np
import pytest

from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.linear import KnownCovarianceLinearRegression, NaiveOGDRegression, TwoCopyLinearRegression
from nolo.learners.convex import OnlineLasso, OnlineLinearSVM, OnlineRidgeRegression
from nolo.learners.ogd import ProjectedOGD
from nolo.checks import test_params


@pytest.mark.parametrize("cls", [OnlineLasso, OnlineLinearSVM, OnlineRidgeRegression, ProjectedOGD])
def test_unknown_loss_names_the_loss_parameter(cls):
    with pytest.raises(ParameterError, match=r"^loss must"):
        cls(**test_params(cls)[0]).set_params(loss="bogus")


@pytest.mark.parametrize("cls", [OnlineLasso, OnlineLinearSVM, OnlineRidgeRegression])
def test_ragged_x_names_x(cls):
    learner = cls(**test_params(cls)[0]).learn(np.ones(2), 1.0)
    with pytest.raises(ParameterError, match=r"^x must"):
        learner.learn([[1.0, 2.0], [3.0]], 1.0)


def test_projected_ogd_refuses_a_list_as_one_target():
    learner = ProjectedOGD(**test_params(ProjectedOGD)[0])
    with pytest.raises(ParameterError, match=r"^y must be a single target"):
        learner.learn(np.ones(3), [1.0])
    assert not learner.is_initialized


@pytest.mark.parametrize("x0", [-1e300, 1e200])
def test_svm_statistics_never_silently_non_finite(x0):
    """||x||^2 overflows: the hinge step is NaN/inf-free or refused, never inf/NaN in stats_ (the regret bound's
    sums) -- before the fix a round with a zero hinge slope wrote 0 * inf = NaN there."""
    svm = OnlineLinearSVM(**test_params(OnlineLinearSVM)[0]).learn(np.ones(3) * 0.1, 1.0)
    x = np.zeros(3)
    x[0] = x0
    for y in (1.0, -1.0):
        before = svm.stats_.copy(), svm.w_.copy(), svm.t_
        try:
            svm.learn(x, y)
        except NumericalError:
            assert np.array_equal(svm.stats_, before[0]) and np.array_equal(svm.w_, before[1]) and svm.t_ == before[2]
        assert np.all(np.isfinite(svm.stats_)) and np.all(np.isfinite(svm.w_))
    X = np.full((5, 3), 0.1)
    X[2, 0] = x0
    try:
        svm.learn_stream(X, np.ones(5))
    except NumericalError:
        pass
    assert np.all(np.isfinite(svm.stats_))


@pytest.mark.parametrize("cls", [KnownCovarianceLinearRegression, NaiveOGDRegression, TwoCopyLinearRegression])
def test_linear_stream_length_mismatch_names_copies_and_y(cls):
    learner = cls(**test_params(cls)[0])
    m = int(getattr(cls, "copies_per_round", 1))
    with pytest.raises(ParameterError, match=r"copies and y must have the same number of rows"):
        learner.learn_stream(np.zeros((0, m, 4)), np.zeros(6))


# -- found by the long profile's census after the NA / read-only family ---------------------------------------------

def _played_autocb():
    import fuzz_harness as H
    from nolo.learners.bandit import AutoCB

    return H.played_learner(AutoCB)


def test_autocb_decision_function_overflow_is_a_numerical_error():
    """A row holding 1.7e308: the champion's prediction overflowed and came back as inf / NaN."""
    learner, game = _played_autocb()
    X = game.X[:6].copy()
    X.flat[5] = 1.7e308
    with pytest.raises(NumericalError, match="overflows"):
        learner.decision_function(X)
    with pytest.raises(NumericalError):
        learner.predict(X)


def test_autocb_singular_update_is_a_numerical_error_and_undone():
    """Rows at an extreme scale: re-expressing the ridge state inverts a matrix singular to machine precision, and
    learn_many raised numpy's LinAlgError, which names no argument.  Which (value, position) pair makes the matrix
    singular depends on the LAPACK build (3.5e38 at flat index 6 with NumPy 1.26's, 1e150 at index 1 with NumPy
    2.4's), so the test plays a few: each either learns with a finite state or raises NumericalError with the state
    unchanged, never a bare LinAlgError, and at least one reaches the singular-matrix message."""
    import fuzz_harness as H

    messages = []
    for value, pos in ((3.5e38, 6), (1e150, 1), (1e150, 6), (1e60, 1), (1e100, 6)):
        learner, game = _played_autocb()
        X6 = np.resize(game.X, (6, game.X.shape[1]))
        X6.flat[pos] = value
        before = H.snapshot(learner)
        try:
            learner.learn_many(X6, np.arange(6) % game.n_classes, np.arange(6) % 2)
        except NumericalError as exc:
            assert H.snapshot(learner) == before, (value, pos)
            messages.append(str(exc))
        else:
            assert all(np.isfinite(v).all() for v in vars(learner).values()
                       if isinstance(v, np.ndarray) and v.dtype.kind == "f"), (value, pos)
    assert any("singular to machine precision" in m and "state unchanged" in m for m in messages), messages


def test_eiv_sandwich_not_defined_is_warned():
    """Readings with a constant feature: the fit stands (coef_ finite) and coef_cov_ / bse_ are NaN, the sandwich's
    documented 'not defined' value -- said by a warning, not silently."""
    import fuzz_harness as H
    from nolo.sklearn_api import EIVRegressor

    y = np.arange(10.0)
    with pytest.warns(RuntimeWarning, match="coef_cov_ and bse_ are NaN"):
        est = EIVRegressor(seed=0).fit(np.full((10, 3, 4), 0.5), y)
    assert np.all(np.isfinite(est.coef_)) and np.all(np.isnan(est.bse_))
    make = lambda: EIVRegressor(seed=0).fit(np.random.default_rng(0).normal(size=(10, 3, 3)), y)  # noqa: E731
    call = lambda r, v: r.fit(v, y)  # noqa: E731
    assert H.verdict(make, call, "X", H.Bad(np.full((10, 3, 4), 0.5), "constant", False))[0] == "warned_nonfinite"
    assert H.verdict(make, call, "X", H.Bad(np.full((10, 3, 4), 0.5), "constant", True))[0] == "silent_nonfinite"
