"""The linear special cases of CSS10: the two-copy estimator of footnote 2 and the naive one-copy learner.

For a linear kernel and the squared loss, CSS10 footnote 2 (and the slides)
estimate the gradient ``2(<w, x> - y) x`` without bias from exactly two
independent noisy copies: ``2(<w, x~> - y) x~'``.  Plugging one copy into
both places, ``2(<w, x~> - y) x~``, is biased by ``2 E[Z Z^T] w`` (the
attenuation of errors-in-variables regression) -- CSS10 Theorem 3 shows that
with one copy no learner can avoid such a bias in general.
"""

from __future__ import annotations

import math

import numpy as np

from nolo.exceptions import NumericalError
from nolo.learners.base import NoisyInputLearner
from nolo.learners.kernel._common import check_bound, check_label, check_oracle, resolve_loss, step_rule

__all__ = ["TwoCopyLinearRegressor", "NaiveLinearOGD"]


class _LinearOGD(NoisyInputLearner):
    def _validate_params(self) -> None:
        check_bound(self.B_w, "B_w")
        self._rule = step_rule(self.step, self.eta)

    def _init_state(self, d: int) -> None:
        self.w_ = np.zeros(d)
        self.shortfalls_ = 0
        self.queries_ = 0

    def _prepare(self, oracle, y):
        if not self.is_initialized or not hasattr(self, "_rule"):
            self._validate_params()
        d = check_oracle(oracle, self.n_features_in_ if self.is_initialized else None)
        yv = check_label(self._loss_obj(), y)
        self._ensure_initialized(d)
        return yv

    def _step(self, grad: np.ndarray) -> None:
        t = self.t_ + 1
        w = self.w_ - self._rule(t) * grad
        if self.B_w is not None:
            nrm2 = float(w @ w)
            if nrm2 > float(self.B_w):
                w = w * math.sqrt(float(self.B_w) / nrm2)
        if not np.all(np.isfinite(w)):
            raise NumericalError("the linear OGD step overflowed; lower eta")
        self.w_ = w
        self.t_ = t

    def decision_function(self, X) -> np.ndarray:
        self._require_initialized("decision_function")
        return self._check_X(X) @ self.w_

    def predict(self, X) -> np.ndarray:
        f = self.decision_function(X)
        if self._loss_obj().kind == "classification":
            return np.where(f >= 0, 1.0, -1.0)
        return f


class TwoCopyLinearRegressor(_LinearOGD):
    """CSS10 footnote 2: linear regression with squared loss from exactly two noisy copies per round.

    ``w <- P(w - eta_t 2(<w, x~> - y) x~')`` with ``x~, x~'`` independent copies
    of ``x_t``; unbiased for any zero-mean noise (also CSS11 Lemma 1,
    math-notes item 7).  ``P`` rescales onto ``||w||^2 <= B_w``.
    """

    def __init__(self, B_w=None, step="sqrt", eta: float = 0.05, seed=None):
        self.B_w = B_w
        self.step = step
        self.eta = eta
        self.seed = seed

    def _loss_obj(self):
        return resolve_loss("squared")

    def learn(self, oracle, y) -> "TwoCopyLinearRegressor":
        yv = self._prepare(oracle, y)
        copies = oracle.query(2)
        if copies is None:
            self.shortfalls_ += 1
            self.t_ += 1
            return self
        x1, x2 = np.asarray(copies, dtype=np.float64)
        self._step(2.0 * (float(self.w_ @ x1) - yv) * x2)
        self.queries_ += 2
        return self


class NaiveLinearOGD(_LinearOGD):
    """Linear OGD on ONE noisy copy per round, ``w <- P(w - eta_t dl/dmargin(<w, x~>, y) x~)`` (biased baseline).

    ``loss`` may be any loss (classification or regression).
    """

    def __init__(self, loss="squared", B_w=None, step="sqrt", eta: float = 0.05, seed=None):
        self.loss = loss
        self.B_w = B_w
        self.step = step
        self.eta = eta
        self.seed = seed

    def _validate_params(self) -> None:
        resolve_loss(self.loss)
        super()._validate_params()

    def _loss_obj(self):
        return resolve_loss(self.loss)

    def learn(self, oracle, y) -> "NaiveLinearOGD":
        yv = self._prepare(oracle, y)
        copies = oracle.query(1)
        if copies is None:
            self.shortfalls_ += 1
            self.t_ += 1
            return self
        x = np.asarray(copies, dtype=np.float64)[0]
        g = float(self._loss_obj().grad_margin(float(self.w_ @ x), yv))
        self._step(g * x)
        self.queries_ += 1
        return self
