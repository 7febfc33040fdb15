"""Configurable's scikit-learn parameter conventions, kept without deriving from scikit-learn's BaseEstimator:
get_params (deep, nested ``component__param``), set_params (nested, unknown names refused, rollback), repr of the
changed parameters only, clone, and pickling of an object with no attributes yet."""

import pickle

import numpy as np
import pytest

from nolo.exceptions import ParameterError
from nolo.learners import ProjectedOGD
from nolo.learners.bandit import FastCB
from nolo.losses import Squared
from nolo.oco.projections import L2Ball


def test_get_params_is_sorted_and_nests():
    m = ProjectedOGD(constraint=L2Ball(radius=2.0))
    shallow = m.get_params(deep=False)
    assert list(shallow) == ["constraint", "loss", "seed", "step"]
    deep = m.get_params(deep=True)
    assert deep["constraint"] is m.constraint and deep["constraint__radius"] == 2.0
    assert set(deep) == set(shallow) | {"constraint__radius"}


def test_nested_set_params_sets_and_rolls_back():
    m = ProjectedOGD(constraint=L2Ball(radius=2.0))
    assert m.set_params(constraint__radius=3.0).constraint.radius == 3.0
    with pytest.raises(ParameterError, match="radius"):
        m.set_params(seed=5, constraint__radius=-1.0)
    assert m.constraint.radius == 3.0 and m.seed is None


def test_set_params_refuses_unknown_names_and_keeps_state():
    m = FastCB(n_classes=3, seed=0)
    before = m.get_params(deep=False)
    with pytest.raises(ParameterError, match="invalid parameter 'nope'.*valid parameters are"):
        m.set_params(n_classes=5, nope=1)
    assert m.get_params(deep=False) == before
    assert m.set_params(n_classes=5) is m and m.n_classes == 5


def test_repr_shows_changed_parameters_only():
    assert repr(FastCB()) == "FastCB()"
    assert repr(FastCB(n_classes=4, seed=3)) == "FastCB(n_classes=4, seed=3)"


def test_sklearn_clone_takes_a_nolo_object():
    from sklearn.base import clone

    m = FastCB(n_classes=4, seed=3)
    m.act(np.ones(3))
    c = clone(m)
    assert type(c) is FastCB and c.get_params() == m.get_params() and not c.is_initialized


def test_an_object_without_attributes_pickles():
    loss = Squared()
    assert repr(pickle.loads(pickle.dumps(loss))) == repr(loss)
