"""The OCO notes' worked examples as learners (Cornell CS 6783, lecture 14, section 2).

* :class:`OnlineLinearSVM` -- hinge (or logistic, squared, smoothed hinge, absolute) loss over an
  L2 ball (or L1 ball, box), projected OGD with the notes' step and regret bound;
* :class:`OnlineRidgeRegression`, :class:`OnlineLasso` (proximal soft-thresholding step),
  :class:`OnlineLassoL1Ball` (OGD on the L1 ball, exact projection) -- regularised linear prediction;
* :class:`TraceNormOGD`, :class:`MaxEntryOGD` -- online matrix prediction (collaborative filtering);
* :mod:`~nolo.learners.oco_examples.projections` -- L1-ball, simplex, trace-norm and max-entry projections;
* :mod:`~nolo.learners.oco_examples.hindsight` -- certified best-in-hindsight solvers for the examples
  that :mod:`nolo.oco.hindsight` does not cover (L1 ball, L1 penalty, trace-norm ball, max-entry box).
"""

from nolo.learners.oco_examples.linear import (
    OnlineLasso,
    OnlineLassoL1Ball,
    OnlineLinearSVM,
    OnlineRidgeRegression,
    notes_regret_bound,
)
from nolo.learners.oco_examples.matrix import MaxEntryOGD, TraceNormOGD
from nolo.learners.oco_examples.projections import (
    L1Ball,
    project_l1_ball,
    project_max_entry,
    project_simplex,
    project_trace_norm_ball,
    soft_threshold,
)

__all__ = [
    "OnlineLinearSVM",
    "OnlineRidgeRegression",
    "OnlineLasso",
    "OnlineLassoL1Ball",
    "notes_regret_bound",
    "TraceNormOGD",
    "MaxEntryOGD",
    "L1Ball",
    "project_l1_ball",
    "project_simplex",
    "soft_threshold",
    "project_trace_norm_ball",
    "project_max_entry",
]
