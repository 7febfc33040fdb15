"""Online-to-batch conversion (OCO notes, section 2.1).

Run an online learner once over an i.i.d. sample ``z_1, ..., z_n`` and return
the average of the iterates it *played*, ``w_bar = (1/n) sum_{t=1}^n w_t``.
By convexity of the risk and because ``w_t`` depends only on ``z_1..z_{t-1}``,

    E[L_D(w_bar)] - inf_{f in F} L_D(f)  <=  rate_n,

the online learner's (averaged) regret bound.
"""

from __future__ import annotations

import numpy as np

from nolo.exceptions import ParameterError

__all__ = ["online_to_batch", "average_of_iterates"]


def average_of_iterates(iterates) -> np.ndarray:
    """``(1/n) sum_t w_t`` of the rows of ``iterates`` (the played iterates ``w_1..w_n``)."""
    from nolo._validation import check_array

    W = check_array(iterates, "iterates", ndim=2)
    if W.shape[0] == 0:
        raise ParameterError("iterates must contain at least one iterate")
    return W.mean(axis=0)


def online_to_batch(learner, X, y) -> np.ndarray:
    """One pass of ``learner`` over ``(X, y)``; returns the average of the iterates it played.

    ``learner`` must keep that average as ``average_`` (e.g.
    :class:`nolo.learners.ProjectedOGD`); the learner is updated in place.
    """
    if not hasattr(learner, "learn_many") and not hasattr(learner, "learn"):
        raise ParameterError(f"learner must be a full-information learner with learn(x, y), got {learner!r}")
    if hasattr(learner, "learn_many"):
        learner.learn_many(X, y)
    else:
        for x_t, y_t in zip(np.asarray(X), np.asarray(y)):
            learner.learn(x_t, y_t)
    if not hasattr(learner, "average_"):
        raise ParameterError(f"learner {type(learner).__name__} does not keep the average of its iterates (average_)")
    return np.array(learner.average_, copy=True)
