"""An interval for noise-rate estimates by half-sampling: refit the estimator on random halves of the log.

Why halves and not the classic bootstrap (n rows drawn with replacement): a resample with replacement
repeats rows, the network fits a repeated row's own feedback bit, and a rule that reads the rates off the
feedback (``rule="anchors"``) is pulled towards the bits it memorised -- on a 30,000-round digits log the
with-replacement intervals sat below the full-log estimate and missed the true rates.  A half drawn
without replacement repeats nothing, and for a mean the spread of half-sample estimates equals the
spread of the full-sample estimate (sigma^2 (1/m - 1/n) = sigma^2/n at m = n/2: McCarthy's
half-sampling), so the interval is the full-log estimate plus the percentiles of the half-sample
estimates' deviations from their median.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nolo._validation import check_int, check_scalar
from nolo.exceptions import ParameterError

__all__ = ["RateInterval", "bootstrap_rates"]


@dataclass
class RateInterval:
    """Half-sampling intervals for (rho0, rho1) at ``level``, and the half-sample estimates themselves."""

    rho0: tuple[float, float]
    rho1: tuple[float, float]
    level: float
    samples: np.ndarray  # (n_boot, 2): rho0_hat, rho1_hat of each refit on a half

    def as_dict(self) -> dict:
        return {"rho0": list(self.rho0), "rho1": list(self.rho1), "level": self.level, "n_boot": int(self.samples.shape[0])}


def bootstrap_rates(est, X, played, feedback, n_classes=None, n_boot: int = 20, level: float = 0.9,
                    seed: int = 0, propensity=None) -> RateInterval:
    """Interval for (rho0_hat, rho1_hat) of the fitted ``est`` by half-sampling (module docstring):
    ``n_boot`` refits of a fresh copy of ``est`` (same parameters, a seed drawn per refit) on
    floor(n/2) rows drawn without replacement; interval = est's estimate + the (1 -+ level)/2
    percentiles of the refits' deviations from their median, clipped to [0, 1].

    Every refit trains its network from scratch, so the interval includes the network's variation
    (initialisation, minibatch order, epochs chosen), not only the read-out's.  It measures spread,
    not bias: a rule that is biased on this kind of log (docs/noise-rates.md) stays biased.
    Deterministic for a given ``seed``.  Cost: about ``n_boot`` / 2 fits of the full log.  ``propensity``
    (per round, for estimators whose ``fit`` takes it) is passed to every refit, restricted to its half.

    Examples
    --------
    >>> import numpy as np
    >>> from nolo.noise_rates import NREst
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(4, size=2000); X = np.eye(4)[y] + 0.1 * rng.standard_normal((2000, 4))
    >>> played = rng.integers(4, size=2000); u = rng.random(2000)
    >>> f = np.where(played == y, u >= 0.1, u < 0.2).astype(int)
    >>> est = NREst(hidden_layer_sizes=(8,), max_iter=10, rule="anchors", random_state=0)
    >>> est = est.fit(X, played, f)
    >>> ci = bootstrap_rates(est, X, played, f, n_boot=5, seed=1)
    >>> ci.rho0[0] < 0.2 < ci.rho0[1], ci.samples.shape
    (True, (5, 2))
    """
    n_boot = check_int(n_boot, "n_boot", low=2)
    check_scalar(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    seed = check_int(seed, "seed", low=0)
    X = np.asarray(X)
    played = np.asarray(played)
    feedback = np.asarray(feedback)
    n = X.shape[0]
    if not hasattr(est, "rho0_"):
        raise ParameterError("est must be fitted on the log first (its estimate is the interval's centre)")
    if n_classes is None:
        n_classes = getattr(est, "n_classes_", None)  # a half may miss the largest label
    m = n // 2
    if m < 10:
        raise ParameterError(f"the log needs at least 20 rounds for a half-sampling interval, got {n}")
    rng = np.random.default_rng(seed)
    params = est.get_params(deep=False)
    samples = np.empty((n_boot, 2))
    for b in range(n_boot):
        rows = np.sort(rng.choice(n, size=m, replace=False))
        params["random_state"] = int(rng.integers(2**31 - 1))
        kw = {} if propensity is None else {"propensity": np.asarray(propensity)[rows]}
        fit = type(est)(**params).fit(X[rows], played[rows], feedback[rows], n_classes=n_classes, **kw)
        samples[b] = fit.rho0_, fit.rho1_
    lo, hi = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    dev = np.percentile(samples - np.median(samples, axis=0), [lo, hi], axis=0)
    centre = np.array([est.rho0_, est.rho1_])
    bounds = np.clip(centre + dev, 0.0, 1.0)
    return RateInterval(rho0=(float(bounds[0, 0]), float(bounds[1, 0])), rho1=(float(bounds[0, 1]), float(bounds[1, 1])),
                        level=float(level), samples=samples)
