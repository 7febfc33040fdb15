"""Failures the long fuzz profile's census found after issue 14's first round of fixes, one test each (all fail on
the tree before the fix): unnamed rejections, a list accepted as one target, inf/NaN in the OCO learners' regret
statistics."""

import numpy as np
import pytest

from nolo.exceptions import NumericalError, ParameterError
from nolo.learners.linear import KnownCovarianceLinearRegression, NaiveOGDRegression, TwoCopyLinearRegression
from nolo.learners.oco_examples import OnlineLasso, OnlineLinearSVM, OnlineRidgeRegression
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
