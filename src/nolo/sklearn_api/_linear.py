"""The shared ``fit``/``partial_fit``/``predict`` of the linear estimators on repeated readings.

:class:`LinearReadingsRegressor` converts the input (:mod:`nolo.sklearn_api._inputs`), standardises it
(:mod:`nolo.sklearn_api._scaling`), plays up to ``max_iter`` passes of an online learner over the items in a
seeded order per pass (:func:`nolo.sklearn_api._base.run_passes`: ``ConvergenceWarning``, projection warning),
and maps the standardised coefficients back to ``coef_`` / ``intercept_``.  Everything is computed on copies and
committed at the end, so a call that raises leaves a fitted estimator as it was.  A subclass says how an item's
readings become what its learner plays (``_views``), which learner (``_make_learner``), how a pass is played
(``_play``) and where the learner keeps its standardised coefficients (``_coef_std``).
"""

from __future__ import annotations

import copy

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from nolo._config import Configurable
from nolo._validation import check_seed
from nolo.exceptions import ParameterError
from nolo.random import as_generator
from nolo.sklearn_api._base import check_n_features, check_pass_params, feature_names, prediction_inputs, run_passes
from nolo.sklearn_api._inputs import Readings, item_targets, target_vector, to_readings
from nolo.sklearn_api._scaling import Standardizer

__all__ = ["LinearReadingsRegressor"]


class LinearReadingsRegressor(RegressorMixin, Configurable, BaseEstimator):
    #: readings an item must have
    min_copies = 1
    #: True when the noise is pooled over the items with 2+ readings: single-reading items still count (unbalanced
    #: designs), and only a table where no item has two is refused
    pooled_copies = False

    def _validate_params(self) -> None:
        check_pass_params(self)
        check_seed(self.seed)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True  # the readings layout (n, m, d)
        return tags

    # -- hooks ---------------------------------------------------------------------------------------------
    def _views(self, R: Readings):  # pragma: no cover - overridden
        """``(V, k)``: what the learner plays per item (indexable by an index array) and readings per item."""
        raise NotImplementedError

    def _make_learner(self, V, ys, k, scaler, horizon):  # pragma: no cover - overridden
        """``(learner, noise schedule or None)``."""
        raise NotImplementedError

    def _play(self, learner, cov, V, ys, k, order) -> float:  # pragma: no cover - overridden
        """Play the items in ``order``; return the fraction of checkpoints at which a projection was active."""
        raise NotImplementedError

    def _coef_std(self, learner) -> tuple[np.ndarray, float]:  # pragma: no cover - overridden
        """The learner's standardised ``(w, b)``."""
        raise NotImplementedError

    def _diagnose(self, V, k, scaler, learner) -> None:
        """After ``fit``'s passes: warn about an ill-posed fit (default: nothing to check)."""

    def _needs_schedule(self, k, learner) -> bool:
        """partial_fit: True when the new items' reading counts need a noise schedule the fit did not make."""
        return False

    # -- fit -------------------------------------------------------------------------------------------------
    def _readings(self, X, groups) -> Readings:
        R = to_readings(X, groups)
        short, most = int(np.min(R.counts)), int(np.max(R.counts))
        needs_replicates = self.min_copies >= 2 or self.pooled_copies
        if needs_replicates and most < 2 and groups is None and np.ndim(X) == 2:
            raise ParameterError(
                f"X is a 2-D array without groups, so each row is read as an item with one reading, and "
                f"{type(self).__name__} estimates the noise from repeated readings: pass groups= (the item id of each "
                "row) for a long table, a 3-D array (n, m, d), or a list of (m_i, d) arrays")
        if self.pooled_copies and most < 2:
            raise ParameterError(
                f"{type(self).__name__} estimates the noise from the items with 2 or more readings; every item of X "
                "has one (give repeated readings, or the noise covariance)")
        if short < self.min_copies:
            raise ParameterError(
                f"X must hold at least {self.min_copies} readings per item for {type(self).__name__} (an item has "
                f"{short}); give repeated readings (n, m, d), a list of (m_i, d) arrays or a long table with groups"
                + ("; for a design where some items have one reading, EIVRegressor(noise='pooled') and "
                   "CorrectedLeastSquaresRegressor pool the noise over the replicated items" if self.min_copies >= 2
                   else "")
            )
        return R

    @staticmethod
    def _standardised(R: Readings, scaler: Standardizer) -> Readings:
        with np.errstate(over="ignore", invalid="ignore"):
            Rs = Readings(scaler.x(R.values), R.offsets, None if R.dense is None else scaler.x(R.dense), R.row_item)
        if not np.all(np.isfinite(Rs.values)):
            raise ParameterError("X holds readings too large for the standardisation (they overflow float64 once "
                                 "centred and scaled); rescale X")
        return Rs

    def fit(self, X, y, groups=None):
        """Fit on the readings ``X`` -- ``(n, m, d)``, a list of ``(m_i, d)`` arrays, or a long table ``(N, d)``
        with ``groups`` (item id per row) -- and targets ``y`` (one per item, or one per row of a long table).
        Plays up to ``max_iter`` passes; nothing changes if it raises."""
        self._validate_params()
        return self._fit(X, y, groups, int(self.max_iter))

    def _fit(self, X, y, groups, max_iter: int):
        self._validate_params()
        y = target_vector(y)
        R = self._readings(X, groups)
        yv = item_targets(y, R)
        scaler = Standardizer.fit(R.means(), yv, self.fit_intercept)
        V, k = self._views(self._standardised(R, scaler))
        ys = scaler.y(yv)
        n = R.n_items
        learner, cov = self._make_learner(V, ys, k, scaler, horizon=n * max_iter)
        rng = as_generator(self.seed)

        def play_pass(_):
            return self._play(learner, cov, V, ys, k, rng.permutation(n) if self.shuffle else np.arange(n))

        def coef():
            w, b = self._coef_std(learner)
            return np.append(w, b)

        n_iter, _, bound = run_passes(play_pass, coef, max_iter=max_iter, tol=float(self.tol),
                                      owner=type(self).__name__)
        self._diagnose(V, k, scaler, learner)
        feature_names(self, X, groups, reset=True)
        self._commit(learner=learner, cov=cov, scaler=scaler, d=R.n_features, n_iter=n_iter, bound=bound,
                     copies=int(np.max(R.counts)), items=n)
        return self

    def _commit(self, *, learner, cov, scaler, d, n_iter, bound, copies, items) -> None:
        w, b = self._coef_std(learner)
        coef, intercept = scaler.linear(w)
        for key, v in dict(learner_=learner, noise_schedule_=cov, scaler_=scaler, n_features_in_=d, n_iter_=n_iter,
                           projection_active_=bound, copies_per_item_=copies, n_items_seen_=items, coef_=coef,
                           intercept_=intercept + scaler.y_scale * float(b)).items():
            setattr(self, key, v)

    def partial_fit(self, X, y, groups=None):
        """One pass over more items (the first call fits the standardisation and plays one pass)."""
        if not hasattr(self, "learner_"):
            return self._fit(X, y, groups, 1)
        self._validate_params()
        y = target_vector(y)
        R = self._readings(X, groups)
        check_n_features(self, R.n_features)
        yv = item_targets(y, R)
        V, k = self._views(self._standardised(R, self.scaler_))
        learner, cov = copy.deepcopy((self.learner_, self.noise_schedule_))
        if cov is None and self._needs_schedule(k, learner):
            raise ParameterError(
                f"X must hold the same number of readings per item as in fit ({self.copies_per_item_}) for "
                f"{type(self).__name__}: the averaged readings' noise covariance depends on it"
            )
        order = as_generator(self.seed).permutation(R.n_items) if self.shuffle else np.arange(R.n_items)
        bound = self._play(learner, cov, V, self.scaler_.y(yv), k, order)
        self._commit(learner=learner, cov=cov, scaler=self.scaler_, d=R.n_features, n_iter=1, bound=bound,
                     copies=self.copies_per_item_, items=self.n_items_seen_ + R.n_items)
        return self

    def predict(self, X, groups=None) -> np.ndarray:
        """``X @ coef_ + intercept_`` at clean inputs ``(n, d)`` (or at the per-item means of readings)."""
        return prediction_inputs(self, X, groups, "coef_") @ self.coef_ + self.intercept_
