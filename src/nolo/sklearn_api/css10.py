"""Scikit-learn-style estimators for CSS10: fit on repeated noisy measurements with unknown noise.

A practitioner's data: ``n`` items, each measured a few times -- an array of
shape ``(n, m, d)``, or a list of per-item arrays ``(m_i, d)`` whose number of
copies varies -- with one target per item; or a list of oracles
(:class:`nolo.noise.Oracle`, :class:`nolo.noise.PoolOracle`).  The
estimators play one online pass of CSS10 Algorithm 1
(:class:`nolo.learners.kernel.NoisyKernelLearner`) over the items in a seeded
random order; each item's copies are served by a
:class:`nolo.noise.PoolOracle`, so no copy is ever used twice.

**When an item has fewer copies than an estimate asks for** (the degree is
random, ``P(N >= z) = p^-z``), the foundation's pool policy applies
(``on_exhausted``): ``"drop"`` (default) skips that item's update, ``"raise"``
raises :class:`nolo.CopiesExhausted`.  After ``fit``, ``pool_report_`` (a
:class:`nolo.noise.PoolReport`) says how often the pools ran short and
``shortfall_rate_`` is the fraction of items whose update was dropped.
Raising ``p`` lowers the copies needed (``p/(p-1)^2`` per item on average for
dot-product kernels).

Defaults: ``B_w = 10`` (a bounded norm keeps the margin copies, and so
the Lemma-1 estimates, of bounded variance -- the premise of Theorems 1-2;
with ``B_w=None`` a classifier's estimates can overflow, which raises
:class:`nolo.NumericalError`), ``eta = 0.01`` with the ``eta/sqrt(t)`` rule.

``predict`` takes clean inputs ``(n, d)``; given measurements ``(n, m, d)``
(or a list) it predicts at the per-item mean of the copies, which is only an
approximation for a nonlinear kernel.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from nolo._config import Configurable
import copy

from nolo._validation import check_array, check_bool, check_choice, check_seed
from nolo.exceptions import ParameterError
from nolo.learners.kernel import NoisyKernelLearner
from nolo.noise import RepeatedMeasurements
from nolo.random import as_generator

__all__ = ["NoisyKernelRegressor", "NoisyKernelClassifier"]


def _is_oracle_list(X) -> bool:
    return isinstance(X, (list, tuple)) and len(X) > 0 and all(callable(getattr(o, "query", None)) for o in X)


def _label_array(y, name: str) -> np.ndarray:
    """Labels as a 1-d array of real numbers, strings or booleans (no NaN, no complex, no objects)."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ParameterError(f"{name} must be 1-d, got shape {arr.shape}")
    if arr.dtype.kind not in "biufUS":
        raise ParameterError(f"{name} must hold numbers, strings or booleans, got dtype {arr.dtype}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} must contain only finite values (no NaN or inf)")
    return arr


def _clean_inputs(X) -> np.ndarray:
    if isinstance(X, (list, tuple)) and len(X) > 0 and np.ndim(X[0]) == 2:
        return np.stack([check_array(a, f"X[{i}]", ndim=2).mean(axis=0) for i, a in enumerate(X)])
    arr = check_array(X, "X", ndim=(2, 3))
    return arr.mean(axis=1) if arr.ndim == 3 else arr


class _CSS10Estimator(Configurable):
    default_loss = "squared"

    def __init__(self, kernel="polynomial", loss=None, p: float = 2.0, B_w=10.0, step="sqrt", eta: float = 0.01,
                 shuffle: bool = True, on_exhausted: str = "drop", seed=None):
        self.kernel = kernel
        self.loss = loss
        self.p = p
        self.B_w = B_w
        self.step = step
        self.eta = eta
        self.shuffle = shuffle
        self.on_exhausted = on_exhausted
        self.seed = seed

    def _validate_params(self) -> None:
        check_bool(self.shuffle, "shuffle")
        check_choice(self.on_exhausted, "on_exhausted", ("raise", "drop"))
        check_seed(self.seed)
        NoisyKernelLearner(**self._learner_params())._validate_params()  # no draw from a Generator seed

    def _learner_params(self) -> dict:
        return dict(kernel=self.kernel, loss=self.loss if self.loss is not None else self.default_loss, p=self.p,
                    B_w=self.B_w, step=self.step, eta=self.eta)

    def _make_learner(self) -> NoisyKernelLearner:
        learner = NoisyKernelLearner(**self._learner_params(), seed=as_generator(self.seed).integers(2**63))
        learner._validate_params()
        return learner

    def _oracles(self, X, n_targets: int):
        """(list of oracles, RepeatedMeasurements or None) for the items of ``X``."""
        check_choice(self.on_exhausted, "on_exhausted", ("raise", "drop"))
        if _is_oracle_list(X):
            oracles, rm = list(X), None
        else:
            rm = X if isinstance(X, RepeatedMeasurements) else RepeatedMeasurements(X, on_exhausted=self.on_exhausted)
            oracles = [rm.oracle(i) for i in range(len(rm))]
        if len(oracles) != n_targets:
            raise ParameterError(f"X holds {len(oracles)} items but y has {n_targets} targets")
        return oracles, rm

    def _order(self, n: int) -> np.ndarray:
        check_bool(self.shuffle, "shuffle")
        if not self.shuffle:
            return np.arange(n)
        return as_generator(self.seed).permutation(n) if self.seed is not None else np.random.default_rng().permutation(n)

    def _play(self, learner: NoisyKernelLearner, X, y_pm: np.ndarray, items_before: int, **extra) -> None:
        """Play the items of ``X`` on ``learner`` (a fresh one or a copy of ``learner_``), then commit.

        Every check and every round runs before anything of ``self`` changes: a
        rejected call (bad input, a failing round) leaves the fitted estimator as it was.
        """
        oracles, rm = self._oracles(X, y_pm.shape[0])
        if len(oracles) == 0:
            raise ParameterError("X must hold at least one item")
        before = learner.shortfalls_ if learner.is_initialized else 0
        for i in self._order(len(oracles)):
            learner.learn(oracles[i], y_pm[i])
        commit = dict(extra)
        commit.update(
            learner_=learner,
            n_features_in_=learner.n_features_in_,
            pool_report_=rm.report() if rm is not None else None,
            shortfall_rate_=(learner.shortfalls_ - before) / max(1, len(oracles)),
            n_items_seen_=items_before + len(oracles),
        )
        for k, v in commit.items():
            setattr(self, k, v)

    def _continued_learner(self) -> NoisyKernelLearner:
        """A copy of the fitted learner to continue on (committed only if the whole call succeeds)."""
        return copy.deepcopy(self.learner_)

    def _check_fitted(self) -> None:
        if not hasattr(self, "learner_"):
            raise ParameterError(f"{type(self).__name__} is not fitted: call fit(X, y) first")

    def decision_function(self, X) -> np.ndarray:
        """``<w, Psi(x)>`` at clean inputs (or at the per-item mean of measurements)."""
        self._check_fitted()
        return self.learner_.decision_function(_clean_inputs(X))


class NoisyKernelRegressor(RegressorMixin, _CSS10Estimator):
    """Kernel regression from repeated noisy measurements with unknown noise (CSS10 Algorithm 1; see the module docstring).

    Parameters
    ----------
    kernel : str or kernel object
        Name (``"linear"``, ``"polynomial"``, ``"gaussian"``, ...) or a :mod:`nolo.kernels` object.
    loss : str, Loss or None
        Default ``"squared"``; any analytic regression loss (e.g. ``"smoothed_absolute"``).
    p, B_w, step, eta
        As for :class:`nolo.learners.kernel.NoisyKernelLearner`.
    shuffle : bool
        Visit the items in a seeded random order.
    on_exhausted : "drop" or "raise"
        What to do when an item has fewer measurements than an estimate asks for.
    seed : None, int, SeedSequence or Generator
        The order and the learner's randomness.

    A call that raises (bad input, an exhausted pool with ``"raise"``) leaves
    the fitted estimator unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))                                 # the hidden clean items
    >>> y = X @ np.array([1.0, -0.5])
    >>> measurements = X[:, None, :] + 0.3 * rng.normal(size=(200, 4, 2))  # 4 noisy measurements each
    >>> from nolo.sklearn_api import NoisyKernelRegressor
    >>> est = NoisyKernelRegressor(kernel="linear", seed=0).fit(measurements, y)
    >>> est.n_items_seen_, est.shortfall_rate_
    (200, 0.0)
    >>> round(est.score(X, y), 2)  # R^2 on the clean items
    0.55
    """

    default_loss = "squared"

    def fit(self, X, y) -> "NoisyKernelRegressor":
        """One online pass over the items of ``X`` ((n, m, d) array, list of (m_i, d) arrays, or oracles)."""
        yv = check_array(y, "y", ndim=1)
        learner = self._make_learner()
        if learner._loss.kind != "regression":
            raise ParameterError(f"loss must be a regression loss for {type(self).__name__}, got {learner._loss.name!r}")
        self._play(learner, X, yv, 0)
        return self

    def partial_fit(self, X, y) -> "NoisyKernelRegressor":
        """Continue the online pass with more items (the first call behaves like :meth:`fit`)."""
        if not hasattr(self, "learner_"):
            return self.fit(X, y)
        yv = check_array(y, "y", ndim=1)
        self._play(self._continued_learner(), X, yv, self.n_items_seen_)
        return self

    def predict(self, X) -> np.ndarray:
        return self.decision_function(X)


class NoisyKernelClassifier(ClassifierMixin, _CSS10Estimator):
    """Binary kernel classification from repeated noisy measurements (CSS10 Algorithm 1; see the module docstring).

    ``loss`` defaults to ``"smoothed_hinge"`` (any analytic classification
    loss: ``"exponential"``, ``"logistic"``, ...).  Labels may be any two
    values; ``classes_[1]`` is the positive class.  ``partial_fit(X, y,
    classes=[a, b])`` accepts a first batch holding one class (scikit-learn's contract).

    Parameters
    ----------
    kernel, loss, p, B_w, step, eta, shuffle, on_exhausted, seed
        As for :class:`NoisyKernelRegressor` (``loss`` defaults to ``"smoothed_hinge"``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))                                 # the hidden clean items
    >>> y = X @ np.array([1.0, -0.5])
    >>> measurements = X[:, None, :] + 0.3 * rng.normal(size=(200, 4, 2))  # 4 noisy measurements each
    >>> from nolo.sklearn_api import NoisyKernelClassifier
    >>> labels = np.where(y > 0, "up", "down")
    >>> clf = NoisyKernelClassifier(kernel="linear", seed=0).fit(measurements, labels)
    >>> [str(c) for c in clf.classes_], round(clf.score(X, labels), 2)
    (['down', 'up'], 0.95)
    """

    default_loss = "smoothed_hinge"

    @staticmethod
    def _labels(y, classes) -> np.ndarray:
        y = _label_array(y, "y")
        bad = ~np.isin(y, classes)
        if np.any(bad):
            raise ParameterError(f"y must contain only the classes {list(classes)}, got {y[bad][0]!r}")
        return np.where(y == classes[1], 1.0, -1.0)

    def _fit_new(self, X, y, classes) -> "NoisyKernelClassifier":
        if classes.shape[0] != 2:
            raise ParameterError(f"y must hold exactly two classes, got {classes.shape[0]}: {list(classes)[:5]}")
        learner = self._make_learner()
        if learner._loss.kind != "classification":
            raise ParameterError(f"loss must be a classification loss for {type(self).__name__}, got {learner._loss.name!r}")
        self._play(learner, X, self._labels(y, classes), 0, classes_=classes)
        return self

    def fit(self, X, y) -> "NoisyKernelClassifier":
        """One online pass over the items of ``X``; ``y`` must hold exactly two classes."""
        return self._fit_new(X, y, np.unique(_label_array(y, "y")))

    def partial_fit(self, X, y, classes=None) -> "NoisyKernelClassifier":
        """Continue the online pass; on the first call, ``classes`` (both labels) may stand in for ``y``'s.

        As in scikit-learn, a first batch holding one class is accepted when
        ``classes`` names the two; later calls ignore ``classes``.
        """
        if not hasattr(self, "learner_"):
            if classes is None:
                return self.fit(X, y)
            cls = np.unique(_label_array(classes, "classes"))
            return self._fit_new(X, y, cls)
        labels = self._labels(y, self.classes_)
        self._play(self._continued_learner(), X, labels, self.n_items_seen_)
        return self

    def predict(self, X) -> np.ndarray:
        f = self.decision_function(X)
        return np.where(f >= 0, self.classes_[1], self.classes_[0])
