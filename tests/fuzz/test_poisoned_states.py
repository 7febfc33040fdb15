"""Poisoned-but-finite model files: every float state array (and float scalar) of a saved model of every learner
class replaced by a finite value the learner cannot hold (zeros, negated, scaled by 1e300, 1e-300 or to the largest
float, one huge entry, a zero diagonal, an indefinite matrix with a positive diagonal, a negated eigenvalue; see
tests/fuzz/poisoned_states.py).  The generic checks of ``Learner.load`` pass them all; each must be refused with a
PersistenceError naming the array and the class, or load into a learner that then predicts, learns and predicts
again with finite outputs (the edit gave a state the learner can be in), or -- for the states a run can reach,
``poisoned_states.REACHABLE`` -- fail loudly with NumericalError.  Never a later update that fails for ever, a bare
ZeroDivisionError or inf/NaN scores.  Each class runs in a subprocess (the runner of test_hostile_files)."""

import pytest

import poisoned_states
from nolo.checks import registered_learners
from test_hostile_files import passed_corpus

OK = {"rejected", "accepted", "numerical"}


@pytest.mark.slow
@pytest.mark.parametrize("name", [c.__name__ for c in registered_learners()])
def test_poisoned_states(name):
    counts = passed_corpus(name, "poisoned")
    assert set(counts) <= OK and sum(counts.values()) >= 6, counts  # the corpus really ran
    reachable = {case for (cls, case) in poisoned_states.REACHABLE if cls == name}
    assert counts["numerical"] <= len(reachable)


def test_the_generator_covers_every_float_array():
    """Each float state array gets the edits its shape allows; edits that change nothing or overflow are skipped."""
    import numpy as np

    edits = dict(poisoned_states.array_edits(np.array([[2.0, 0.5], [0.5, 1.0]])))
    assert {"zeros", "negated", "scaled by 1e300", "scaled to the largest float", "scaled by 1e-300",
            "entry 0 = 1e+300", "entry 0 = 1e+200", "diagonal 0", "indefinite with a positive diagonal",
            "largest eigenvalue negated"} == set(edits)
    assert np.all(np.diagonal(edits["indefinite with a positive diagonal"]) > 0)
    assert np.linalg.eigvalsh(edits["indefinite with a positive diagonal"])[0] < 0
    assert np.linalg.eigvalsh(edits["largest eigenvalue negated"])[0] < 0
    assert set(dict(poisoned_states.array_edits(np.ones(3)))) == {
        "zeros", "negated", "scaled by 1e300", "scaled to the largest float", "scaled by 1e-300", "entry 0 = 1e+300",
        "entry 0 = 1e+200"}
    assert not list(poisoned_states.array_edits(np.zeros(3, dtype=np.int64)))
