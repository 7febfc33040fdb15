"""Convex online learners: projected (or proximal) OGD on convex losses over convex sets, the OCO notes' worked
examples (Cornell CS 6783, lecture 14, section 2).

* :class:`OnlineLinearSVM` -- hinge (or logistic, squared, smoothed hinge, absolute) loss over an
  L2 ball (or L1 ball, box), projected OGD with the notes' step and regret bound;
* :class:`OnlineRidgeRegression`, :class:`OnlineLasso` (proximal soft-thresholding step),
  :class:`OnlineLassoL1Ball` (OGD on the L1 ball, exact projection) -- regularised linear prediction;
* :class:`TraceNormOGD`, :class:`MaxEntryOGD` -- online matrix prediction (collaborative filtering).

The math they use lives in :mod:`nolo.oco`: the sets and projections (``L1Ball``,
``project_trace_norm_ball``, ...) in :mod:`nolo.oco.projections`, the one compiled
step in :mod:`nolo.oco.projected_step`, the certified hindsight solvers
(``composite_hindsight``, ``trace_norm_hindsight``, ``max_entry_hindsight``) in
:mod:`nolo.oco.hindsight` and the notes' bound (``notes_regret_bound``) in :mod:`nolo.oco.regret`.
"""

from nolo.learners.convex.linear import OnlineLasso, OnlineLassoL1Ball, OnlineLinearSVM, OnlineRidgeRegression
from nolo.learners.convex.matrix import MaxEntryOGD, TraceNormOGD

__all__ = [
    "OnlineLinearSVM",
    "OnlineRidgeRegression",
    "OnlineLasso",
    "OnlineLassoL1Ball",
    "TraceNormOGD",
    "MaxEntryOGD",
]
