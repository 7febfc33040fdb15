"""Multiclass Perceptron (full information), the reference curve of AM Figure 2."""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from nolo._jit import njit
from nolo.exceptions import ParameterError
from nolo.learners.bandit._explore import greedy_act, greedy_probs
from nolo.learners.bandit._linear import LinearMulticlassMixin
from nolo.learners.base import FullInformationLearner

__all__ = ["Perceptron", "PerceptronState"]


@njit(cache=True, nogil=True, inline="always")
def update_perceptron(state, Wt, idx, val, lo, hi, s, y, yhat, played, feedback):
    """AM eq. (2): on a mistake (y != yhat) row y += x and row yhat -= x."""
    if y == yhat:
        return True
    for t in range(lo, hi):
        j = idx[t]
        v = val[t]
        Wt[j, y] += v
        Wt[j, yhat] -= v
    return True


class PerceptronState(NamedTuple):
    """The Perceptron's record: no state besides W; plays greedily, is told the true label."""

    act = greedy_act
    probs = greedy_probs
    update = update_perceptron


class Perceptron(LinearMulticlassMixin, FullInformationLearner):
    """Multiclass Perceptron, AM eq. (2) (Crammer & Singer 2003, the "max" ultraconservative update).

    Protocol: full information, ``learn(x, y)`` with the true label.  The
    prediction is yhat = argmax_r w_r . x (ties to the smallest label); on a
    mistake row y gets +x and row yhat gets -x, otherwise nothing changes (AM
    eq. (2) exactly; a tie won by y is not a mistake -- docs/baselines.md, section 1).
    No hyper-parameters; W starts at 0.  In a bandit stream
    (:func:`nolo.learners.bandit.run_stream`) it plays yhat and is told y.

    Parameters
    ----------
    n_classes : int >= 2
        Number of labels K.
    dtype : {"float64", "float32"}
        Precision of the weights (float32 rejects inputs above 3.4e38).
    seed : ignored
        The Perceptron draws nothing; kept for a uniform interface.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.learners.bandit import Perceptron
    >>> p = Perceptron(n_classes=3)
    >>> p.learn(np.array([1.0, 2.0]), 2).W_          # a mistake (yhat = 0): row 2 += x, row 0 -= x
    array([[-1., -2.],
           [ 0.,  0.],
           [ 1.,  2.]])
    >>> p.predict(np.array([[1.0, 2.0]]))
    array([2])
    """

    def __init__(self, n_classes=2, dtype="float64", seed=None):
        self.n_classes = n_classes
        self.dtype = dtype
        self.seed = seed

    def _validate_params(self) -> None:
        self._check_common()

    def _init_state(self, n_features: int) -> None:
        self._init_weights(n_features)

    def _state_record(self) -> PerceptronState:
        return PerceptronState()

    def learn(self, x, y) -> "Perceptron":
        """One full-information round on (x, y)."""
        x = self._check_x(x)
        if not self.is_initialized:
            self._validate_params()  # n_classes is read below
        K = int(self.n_classes)
        if isinstance(y, bool) or not isinstance(y, (numbers.Integral, np.integer)) or not 0 <= y < K:
            raise ParameterError(f"y must be an integer label in [0, {K - 1}], got {y!r}")
        self._ensure_initialized(x.shape[0])
        self._learn_round(x, int(y), -1, -1)
        self.t_ += 1
        return self
