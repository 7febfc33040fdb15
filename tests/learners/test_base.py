"""nolo.learners.base: checks every learner inherits (issue 14 items 3 and 11)."""

import numpy as np
import pytest

from nolo.checks import registered_learners, test_params
from nolo.exceptions import ParameterError

LEARNERS = registered_learners()
SEEDED = [c for c in LEARNERS if "seed" in c().get_params(deep=False)]
NOISY = [c for c in LEARNERS if c.protocol == "noisy_input"]


@pytest.mark.parametrize("cls", SEEDED, ids=lambda c: c.__name__)
@pytest.mark.parametrize("seed", [np.nan, np.inf, 1.5, -1, "s", 1 + 1j, [1]])
def test_bad_seed_refused_by_set_params_and_learn(cls, seed):
    learner = cls(**test_params(cls)[0])
    before = learner.get_params(deep=False)["seed"]
    with pytest.raises(ParameterError, match="seed"):
        learner.set_params(seed=seed)
    assert learner.get_params(deep=False)["seed"] is before
    with pytest.raises(ParameterError, match="seed"):
        cls(**{**test_params(cls)[0], "seed": seed}).initialize(4)


@pytest.mark.parametrize("cls", NOISY, ids=lambda c: c.__name__)
@pytest.mark.parametrize("oracle", [object(), None, "abc", np.ones((2, 4))], ids=["object", "None", "str", "array"])
def test_oracle_without_query_is_a_parameter_error(cls, oracle):
    """Not an AttributeError: a ParameterError naming ``oracle`` (CSS11's linear and kernel learners raised
    AttributeError on ``oracle.query``)."""
    with pytest.raises(ParameterError, match="oracle"):
        cls(**test_params(cls)[0]).learn(oracle, 1.0)
