"""A reward model for the direct method and doubly robust estimates of a log too long to hold: per-label ridge
regressions of the logged bit on the features, fitted progressively.

Rows are predicted by the model of the last :meth:`~ProgressiveRidge.refit`, which saw only rows before them, and only
then added to it, so the prediction
q(x_i, a) of row i is fixed before its bit is seen: the doubly robust estimate stays unbiased whatever the model's
quality (the martingale argument behind Vowpal Wabbit's online ``--cb_type dr``), and one pass suffices.  The ridge
is scale-free: its penalty on feature j is ``lam`` times that feature's mean square among the label's rows, i.e. the
plain ridge on standardised features, so raw feature scales do not starve a direction (the lesson of
docs/default-learner.md).  The model predicts E[f | x, a] on the bit's own scale, clipped to [0, 1].

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(4000, 3)); a = rng.integers(0, 2, 4000)
>>> f = (rng.random(4000) < np.where(a == 1, 0.8, 0.2)).astype(float)
>>> m = ProgressiveRidge(n_classes=2, n_features=3)
>>> m.predict(X[:2]).round(2).tolist()          # nothing seen yet: 1/2 everywhere
[[0.5, 0.5], [0.5, 0.5]]
>>> m.update(X, a, f).refit().predict(np.zeros((1, 3))).round(1).tolist()
[[0.2, 0.8]]
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_int, check_scalar
from nolo.exceptions import ParameterError

__all__ = ["ProgressiveRidge", "MAX_FEATURES"]

#: above this many features the (d + 1)^2 per-label moments cost more than a log's chunk: no model
MAX_FEATURES = 2000


class ProgressiveRidge:
    """Per-label scale-free ridge regressions of the bit on ``[x, 1]`` (module docstring).

    Parameters
    ----------
    n_classes : int >= 2
    n_features : int in [1, MAX_FEATURES]
    lam : float > 0, the penalty in units of each feature's mean square (1: one pseudo-row's worth)
    """

    def __init__(self, n_classes: int, n_features: int, lam: float = 1.0):
        self.K = check_int(n_classes, "n_classes", low=2)
        self.d = check_int(n_features, "n_features", low=1)
        if self.d > MAX_FEATURES:
            raise ParameterError(f"n_features must be at most {MAX_FEATURES} for the ridge reward model, got "
                                 f"{self.d} (evaluate with IPS/SNIPS, which need no model)")
        self.lam = check_scalar(lam, "lam", low=0.0, low_inclusive=False)
        p = self.d + 1
        self.A = np.zeros((self.K, p, p))
        self.b = np.zeros((self.K, p))
        self.count = np.zeros(self.K, dtype=np.int64)
        self._coef = np.zeros((self.K, p))
        self._coef[:, -1] = 0.5

    def _design(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.d:
            raise ParameterError(f"X must have {self.d} feature columns, got shape {X.shape}")
        return np.hstack([X, np.ones((X.shape[0], 1))])

    def update(self, X, played, bit) -> "ProgressiveRidge":
        """Add rows (features, played label, bit)."""
        Z = self._design(X)
        a = np.asarray(played, dtype=np.int64)
        f = np.asarray(bit, dtype=np.float64)
        for k in np.unique(a):
            rows = a == k
            Zk = Z[rows]
            self.A[k] += Zk.T @ Zk
            self.b[k] += Zk.T @ f[rows]
            self.count[k] += int(rows.sum())
        return self

    def refit(self) -> "ProgressiveRidge":
        """Solve the ridges on every row added so far; :meth:`predict` uses this fit until the next refit (so the
        predictions do not depend on how the rows were chunked).  A label never played predicts the mean bit."""
        p = self.d + 1
        coef = np.zeros((self.K, p))
        total = self.count.sum()
        prior = self.b[:, -1].sum() / total if total else 0.5
        for k in range(self.K):
            if self.count[k] == 0:
                coef[k, -1] = prior
                continue
            diag = np.diag(self.A[k]).copy() / self.count[k]
            diag[-1] = 0.0  # the intercept is not shrunk
            reg = self.A[k] + np.diag(self.lam * np.maximum(diag, 1e-12))
            reg[-1, -1] += 1e-9
            coef[k] = np.linalg.solve(reg, self.b[k])
        self._coef = coef
        return self

    def coef(self) -> np.ndarray:
        """(K, d + 1) the last refit's solutions (intercept 1/2 before the first)."""
        return self._coef

    def predict(self, X) -> np.ndarray:
        """(n, K) predictions of E[bit | x, a] in [0, 1] by the last refit."""
        Z = self._design(X)
        return np.clip(Z @ self.coef().T, 0.0, 1.0)
