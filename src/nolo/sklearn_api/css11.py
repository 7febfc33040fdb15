"""Scikit-learn-style estimators for CSS11: fit on repeated noisy measurements, predict on clean inputs.

A practitioner's data: ``n`` items, each measured ``m`` times (``X`` of shape
``(n, m, d)``), one noisy target per item.  The estimators play one online
pass of the CSS11 learner over the items (in a seeded random order) and keep
the online-to-batch average as ``coef_`` (linear) or the learned expansion
(kernel).  With ``combine_copies=True`` the ``m`` copies are not wasted:

* Setting 1 / Algorithm 2 need two *independent* copies per round: the
  copies are split into two halves and each half is averaged (two
  independent copies whose noise covariance is ``Sigma / k``, ``k = m // 2``);
* Setting 2 needs one copy: all ``m`` are averaged and the correction uses
  ``Sigma / m``.

``step=None`` uses the theory step of the paper with the moment bounds
replaced by their sample values (``B_x^2 = mean ||x~||^2``, ``B_y^2 =
mean y~^2``, ``T = n``).  ``predict`` takes clean ``(n, d)`` inputs (or
``(n, m, d)`` measurements, averaged per item).
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import RegressorMixin

from nolo._config import Configurable
from nolo._validation import check_array, check_bool, check_choice, check_scalar, check_seed
from nolo.exceptions import ParameterError
from nolo.kernels.radial import RadialKernelApproximation
from nolo.kernels.surrogate import GaussianSurrogateKernel, check_noise_covariance
from nolo.learners.css11_kernel import GaussianNoiseKernelRegression
from nolo.learners.linear import KnownCovarianceLinearRegression, TwoCopyLinearRegression
from nolo.oco.steps import check_step
from nolo.random import as_generator

__all__ = ["TwoCopyRegressor", "KnownCovarianceRegressor", "GaussianNoiseKernelRegressor"]


def _measurements(X, min_copies: int) -> np.ndarray:
    X = check_array(X, "X", ndim=(2, 3))
    if X.ndim == 2:
        X = X[:, None, :]
    if X.shape[1] < min_copies:
        raise ParameterError(
            f"X must hold at least {min_copies} noisy copies per item (shape (n, m, d) with m >= {min_copies}), got {X.shape}"
        )
    return X


def _two_views(X: np.ndarray, combine: bool) -> tuple[np.ndarray, int]:
    """Two independent views per item, shape (n, 2, d), and the number k of copies averaged in each."""
    if not combine:
        return X[:, :2, :], 1
    k = X.shape[1] // 2
    return np.stack([X[:, :k].mean(axis=1), X[:, k : 2 * k].mean(axis=1)], axis=1), k


def _clean_inputs(X) -> np.ndarray:
    X = check_array(X, "X", ndim=(2, 3))
    return X.mean(axis=1) if X.ndim == 3 else X


class _CSS11Regressor(RegressorMixin, Configurable):
    min_copies = 1
    #: True when the noise law the learner assumes depends on how many copies are averaged
    copies_fix_noise = False

    def _validate_params(self) -> None:
        check_bool(self.shuffle, "shuffle")
        check_bool(self.combine_copies, "combine_copies")
        check_seed(self.seed)
        for name in ("radius", "W"):
            if hasattr(self, name):
                check_scalar(getattr(self, name), name, low=0.0, low_inclusive=False)
        if self.step is not None:
            check_step(self.step)

    def _order(self, n: int) -> np.ndarray:
        return as_generator(self.seed).permutation(n) if self.shuffle else np.arange(n)

    def _views(self, X) -> tuple[np.ndarray, int]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _make_learner(self, V: np.ndarray, y: np.ndarray, k: int):  # pragma: no cover - overridden
        raise NotImplementedError

    def fit(self, X, y) -> "_CSS11Regressor":
        """One online pass over the items of ``X`` (``(n, m, d)``) with targets ``y`` (``(n,)``)."""
        self._validate_params()
        X = _measurements(X, self.min_copies)
        yv = check_array(y, "y", shape=(X.shape[0],))
        V, k = self._views(X)
        learner = self._make_learner(V, yv, k)
        order = self._order(X.shape[0])
        learner.learn_stream(V[order], yv[order])
        self.learner_ = learner
        self.n_features_in_ = X.shape[2]
        self.copies_per_item_ = X.shape[1]
        self._finish()
        return self

    def partial_fit(self, X, y) -> "_CSS11Regressor":
        """Continue the online pass with more items (the first call behaves like :meth:`fit`)."""
        if not hasattr(self, "learner_"):
            return self.fit(X, y)
        self._validate_params()
        X = _measurements(X, self.min_copies)
        yv = check_array(y, "y", shape=(X.shape[0],))
        if self.copies_fix_noise and self.combine_copies and X.shape[1] != self.copies_per_item_:
            raise ParameterError(
                f"partial_fit needs the same number of copies per item as fit ({self.copies_per_item_}), got "
                f"{X.shape[1]}: the averaged copies' noise covariance depends on it"
            )
        V, _ = self._views(X)
        self.learner_.learn_stream(V, yv)
        self._finish()
        return self

    def _finish(self) -> None:
        pass

    def _check_fitted(self):
        if not hasattr(self, "learner_"):
            raise ParameterError(f"{type(self).__name__} is not fitted: call fit(X, y) first")


class _LinearRegressorMixin:
    def _finish(self) -> None:
        self.coef_ = self.learner_.average_.copy()

    def _bounds(self, V: np.ndarray, y: np.ndarray) -> dict:
        if self.step is not None:
            return {"step": self.step}
        with np.errstate(over="ignore"):
            mx, my = float(np.mean(np.sum(V[:, 0] ** 2, axis=1))), float(np.mean(y**2))
        if not (math.isfinite(mx) and math.isfinite(my)):
            raise ParameterError(
                "X and y must be of moderate size for step=None: the sample second moments (the theory step's "
                "bounds) overflow float64; rescale the data or give an explicit step"
            )
        Bx = math.sqrt(max(mx, 1e-300))
        By = math.sqrt(my)
        return {"step": None, "x_bound": Bx, "y_bound": By, "horizon": int(V.shape[0])}

    def predict(self, X) -> np.ndarray:
        """``<coef_, x>`` on clean inputs ``(n, d)`` (or measurements ``(n, m, d)``, averaged)."""
        self._check_fitted()
        Xc = _clean_inputs(X)
        if Xc.shape[1] != self.coef_.shape[0]:
            raise ParameterError(f"X must have {self.coef_.shape[0]} features, got {Xc.shape[1]}")
        return Xc @ self.coef_


class TwoCopyRegressor(_LinearRegressorMixin, _CSS11Regressor):
    """CSS11 Setting 1 (Algorithm 1 left) as an estimator: needs ``m >= 2`` measurements per item, no noise model.

    Parameters
    ----------
    radius : float > 0
        ``B_w``, the bound on ``||w||``.
    step : float, StepRule or None
        ``None``: the theory step from the sample moments (``T = n``).
    combine_copies : bool
        Average each half of the ``m`` copies into one view (see the module docstring).
    shuffle : bool
        Visit the items in a seeded random order.
    seed : None, int, SeedSequence or Generator

    Fitted: ``coef_`` (online-to-batch average), ``learner_`` (:class:`TwoCopyLinearRegression`).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))                                 # the hidden clean items
    >>> y = X @ np.array([1.0, -0.5])
    >>> measurements = X[:, None, :] + 0.3 * rng.normal(size=(200, 4, 2))  # 4 noisy measurements each
    >>> from nolo.sklearn_api import TwoCopyRegressor
    >>> est = TwoCopyRegressor(radius=2.0, seed=0).fit(measurements, y)
    >>> est.coef_.round(2), round(est.score(X, y), 2)
    (array([ 0.82, -0.39]), 0.96)
    """

    min_copies = 2

    def __init__(self, radius=1.0, step=None, combine_copies=True, shuffle=True, seed=None):
        self.radius = radius
        self.step = step
        self.combine_copies = combine_copies
        self.shuffle = shuffle
        self.seed = seed

    def _views(self, X):
        return _two_views(X, self.combine_copies)

    def _make_learner(self, V, y, k):
        return TwoCopyLinearRegression(radius=self.radius, seed=self.seed, **self._bounds(V, y))


class KnownCovarianceRegressor(_LinearRegressorMixin, _CSS11Regressor):
    """CSS11 Setting 2 (Algorithm 1 right, correction ``-2 Sigma w``) as an estimator.

    Parameters
    ----------
    noise_cov : float, array (d,) or (d, d)
        Covariance of *one* measurement: a scalar variance, variances or a matrix.
    radius, step, shuffle, seed
        As for :class:`TwoCopyRegressor`.
    combine_copies : bool
        Average the ``m`` copies and use ``Sigma / m``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))                                 # the hidden clean items
    >>> y = X @ np.array([1.0, -0.5])
    >>> measurements = X[:, None, :] + 0.3 * rng.normal(size=(200, 4, 2))  # 4 noisy measurements each
    >>> from nolo.sklearn_api import KnownCovarianceRegressor
    >>> est = KnownCovarianceRegressor(noise_cov=0.09, radius=2.0, seed=0).fit(measurements, y)
    >>> est.coef_.round(2)
    array([ 0.72, -0.35])
    """

    copies_fix_noise = True

    def __init__(self, noise_cov=0.0, radius=1.0, step=None, combine_copies=True, shuffle=True, seed=None):
        self.noise_cov = noise_cov
        self.radius = radius
        self.step = step
        self.combine_copies = combine_copies
        self.shuffle = shuffle
        self.seed = seed

    def _views(self, X):
        if self.combine_copies:
            return X.mean(axis=1)[:, None, :], X.shape[1]
        return X[:, :1, :], 1

    def _make_learner(self, V, y, k):
        S = check_noise_covariance(self.noise_cov, V.shape[2]) / k
        return KnownCovarianceLinearRegression(noise_cov=S, radius=self.radius, seed=self.seed, **self._bounds(V, y))



class GaussianNoiseKernelRegressor(_CSS11Regressor):
    """CSS11 Algorithm 2 as an estimator: Gaussian noise ``N(0, Sigma)`` of known covariance, ``m >= 2`` copies.

    Parameters
    ----------
    kernel : "gaussian" or "radial"
        ``exp(-||x-x'||^2 / width)`` (eq. (5)) or the radial approximation of
        appendix E with parameter ``c`` (isotropic noise only).
    width, c : kernel parameters.
    noise_cov : covariance of one measurement (scalar, variances or matrix; a scalar variance for "radial").
    W : bound on the surrogate-RKHS norm.
    step : float or None (theory step with sample ``B_y`` and ``T = n``).
    combine_copies, shuffle, seed : see the module docstring.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))                                 # the hidden clean items
    >>> y = X @ np.array([1.0, -0.5])
    >>> measurements = X[:, None, :] + 0.3 * rng.normal(size=(200, 4, 2))  # 4 noisy measurements each
    >>> from nolo.sklearn_api import GaussianNoiseKernelRegressor
    >>> est = GaussianNoiseKernelRegressor(width=4.0, noise_cov=0.09, W=10.0, seed=0).fit(measurements, y)
    >>> round(est.score(X, y), 2)
    0.81
    """

    min_copies = 2
    copies_fix_noise = True

    def __init__(self, kernel="gaussian", width=1.0, c=2.0, noise_cov=0.0, W=10.0, step=None,
                 combine_copies=True, shuffle=True, seed=None):
        self.kernel = kernel
        self.width = width
        self.c = c
        self.noise_cov = noise_cov
        self.W = W
        self.step = step
        self.combine_copies = combine_copies
        self.shuffle = shuffle
        self.seed = seed

    def _views(self, X):
        return _two_views(X, self.combine_copies)

    def _pair(self, d: int, k: int):
        check_choice(self.kernel, "kernel", ("gaussian", "radial"))
        if self.kernel == "gaussian":
            arr = np.asarray(self.noise_cov, dtype=np.float64)
            return GaussianSurrogateKernel(width=self.width, noise_cov=arr / k)
        arr = np.asarray(self.noise_cov, dtype=np.float64)
        if arr.ndim != 0:
            raise ParameterError("kernel='radial' needs isotropic noise: noise_cov must be a scalar variance")
        return RadialKernelApproximation(c=self.c, noise_variance=float(arr) / k)

    def _make_learner(self, V, y, k):
        pair = self._pair(V.shape[2], k)
        if self.step is None:
            with np.errstate(over="ignore"):
                my = float(np.mean(y**2))
            if not math.isfinite(my):
                raise ParameterError("y must be of moderate size for step=None: its second moment overflows float64")
            return GaussianNoiseKernelRegression(kernel=pair, W=self.W, y_bound=math.sqrt(my),
                                                 horizon=int(V.shape[0]), seed=self.seed)
        return GaussianNoiseKernelRegression(kernel=pair, W=self.W, step=self.step, seed=self.seed)

    def predict(self, X) -> np.ndarray:
        """``sum_i alpha_i k(x~_i, x)`` on clean inputs ``(n, d)`` (or measurements, averaged)."""
        self._check_fitted()
        return self.learner_.predict(_clean_inputs(X))
