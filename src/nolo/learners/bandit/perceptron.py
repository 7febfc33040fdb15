"""Multiclass Perceptron (full information), the reference curve of AM Figure 2."""

from __future__ import annotations

import numbers

import numpy as np

from nolo.exceptions import ParameterError
from nolo.learners.bandit import _kernels as kern
from nolo.learners.bandit._linear import LinearMulticlassMixin
from nolo.learners.base import FullInformationLearner

__all__ = ["Perceptron"]


class Perceptron(LinearMulticlassMixin, FullInformationLearner):
    """Multiclass Perceptron, AM eq. (2) (Crammer & Singer 2003, the "max" ultraconservative update).

    Protocol: full information, ``learn(x, y)`` with the true label.  The
    prediction is yhat = argmax_r w_r . x (ties to the smallest label); on a
    mistake row y gets +x and row yhat gets -x, otherwise nothing changes (AM
    eq. (2) exactly; a tie won by y is not a mistake -- baselines.md section 1).
    No hyper-parameters; W starts at 0.  In a bandit stream
    (:func:`nolo.learners.bandit.run_stream`) it plays yhat and is told y.

    Parameters
    ----------
    n_classes : int >= 2
    dtype : "float64" or "float32"
    seed : unused (the Perceptron draws nothing); kept for a uniform interface.
    """

    _algo = kern.PERCEPTRON

    def __init__(self, n_classes=2, dtype="float64", seed=None):
        self.n_classes = n_classes
        self.dtype = dtype
        self.seed = seed

    def _validate_params(self) -> None:
        self._check_common()

    def _init_state(self, n_features: int) -> None:
        self._init_weights(n_features)

    def learn(self, x, y) -> "Perceptron":
        """One full-information round on (x, y)."""
        x = self._check_x(x)
        K = int(self.n_classes)
        if isinstance(y, bool) or not isinstance(y, (numbers.Integral, np.integer)) or not 0 <= y < K:
            raise ParameterError(f"y must be an integer label in [0, {K - 1}], got {y!r}")
        self._ensure_initialized(x.shape[0])
        idx, val, nnz, s, yhat = self._greedy(x)
        kern.update_perceptron(self.W_.T, idx, val, 0, nnz, int(y), yhat)
        self.t_ += 1
        return self
