"""Learning a policy from a log of noisy bandit feedback, and when that is sound.

**The condition.**  Under class-conditional flips the logged bit satisfies E[f | x, a] = rho0 + kappa P(y = a | x)
(kappa = 1 - rho0 - rho1) whoever chose a: the logger decides which (context, label) pairs the log holds, not what
their bits mean.  A learner whose update is a regression of the bit, or of its flip-corrected value
(f - rho0) / kappa, on (context, label) -- FastCB, SquareCB, LinUCB, KernelLabelTS's likelihood, and
:func:`~nolo.learners.bandit.default_learner` -- therefore learns the same conditional mean from any logger that
gives every label a positive probability, with the rates known.  Exactly so for a well-specified model; for a
misspecified one the fit weighs each label where the logger played it often, and ``weighting="importance"`` restores
the uniform logger's emphasis.  Updates that divide by the probability the learner *itself* would have played the
label with (Banditron, Perceptron, BPA, SOBA, RCNBF, RCINE and their corrected forms), and learners estimating the
rates online through their own exploration, are unsound on another policy's log: :func:`learn_log` refuses them
(replaying a learner's own rounds, e.g. delayed feedback, is what their ``learn_many`` is for).

**Importance weighting by replication.**  Row i is learned N_i times, N_i = floor(w_i) + Bernoulli(w_i - floor(w_i))
with w_i = min(1 / (K p_i), max_weight): E[N_i] = w_i, and E[sum_i N_i] = n for any full-support logger
(E[1 / p(a | x)] = K under the logger), so a log costs about what it costs unweighted and the replicated log has, in
expectation, the composition of a uniform logger's log of the same length.  Replication needs no weighted update in
any oracle, so every sound learner takes it as it is.  ``max_weight`` bounds the variance a near-zero propensity
would bring (a clipped weight is the usual bias-for-variance trade, as in clipped IPS).
"""

from __future__ import annotations

import numpy as np

from nolo._validation import check_choice, check_scalar
from nolo.exceptions import ParameterError
from nolo.random import as_generator

__all__ = ["WEIGHTINGS", "check_learns_off_policy", "importance_counts", "learn_log"]

WEIGHTINGS = ("none", "importance")
#: the largest importance weight a row gets (1 / (K p) clipped here)
MAX_WEIGHT = 50.0


def check_learns_off_policy(learner) -> None:
    """Raise :class:`ParameterError` naming the learner unless its update is sound on another policy's log (module
    docstring)."""
    if not getattr(learner, "learns_off_policy", False):
        name = type(learner).__name__
        why = ("it estimates the flip rates online through its own exploration (give it the rates)"
               if getattr(learner, "estimate_rates", False) else
               "its update divides by the probability it would itself have played the label")
        raise ParameterError(f"{name} cannot learn soundly from another policy's log: {why}; learn from a log with "
                             "default_learner, FastCB, SquareCB, LinUCB or KernelLabelTS and known rates")


def importance_counts(propensity, n_classes: int, rng=None, max_weight: float = MAX_WEIGHT) -> np.ndarray:
    """N_i, how many times row i is learned under importance weighting (module docstring).

    >>> importance_counts([0.1, 0.5, 0.25], n_classes=4, rng=0).tolist()   # weights 2.5, 0.5, 1
    [3, 0, 1]
    """
    p = np.asarray(propensity, dtype=np.float64)
    if p.ndim != 1 or not np.all((p > 0) & (p <= 1)):
        bad = int(np.flatnonzero(~((p > 0) & (p <= 1)))[0]) if p.ndim == 1 else 0
        raise ParameterError(f"propensity must be 1-D probabilities in (0, 1]; row {bad} holds "
                             f"{p.ravel()[bad] if p.size else p!r}")
    max_weight = check_scalar(max_weight, "max_weight", low=1.0)
    w = np.minimum(1.0 / (int(n_classes) * p), max_weight)
    base = np.floor(w)
    return (base + (as_generator(rng, "rng").random(p.shape[0]) < (w - base))).astype(np.int64)


def learn_log(learner, X, played, bit, propensity=None, *, weighting: str = "none", seed=None,
              max_weight: float = MAX_WEIGHT):
    """Update ``learner`` on a log (rows in order) after checking that it learns soundly from another policy's log.

    ``weighting``: ``"none"`` (every row once) or ``"importance"`` (row i ``importance_counts`` times, consecutively;
    needs ``propensity``); ``seed``: the replication draws.  The learner continues online afterwards (warm start)
    with ``act``/``learn`` like any other.  All or nothing, as ``learn_many``.
    """
    check_learns_off_policy(learner)
    check_choice(weighting, "weighting", WEIGHTINGS)
    if weighting == "none":
        return learner.learn_many(X, played, bit)
    if propensity is None:
        raise ParameterError("weighting='importance' needs the logger's propensity of every row")
    counts = importance_counts(propensity, learner.n_classes, seed, max_weight)
    if counts.shape[0] != X.shape[0]:
        raise ParameterError(f"propensity must have one value per row of X ({X.shape[0]}), got {counts.shape[0]}")
    rows = np.repeat(np.arange(counts.shape[0]), counts)
    return learner.learn_many(X[rows], np.asarray(played)[rows], np.asarray(bit)[rows])
